//! The world as a whole: `POST /_sim/reset` (the initial world of the seed again) and the saved
//! state (`GET` and `PUT /_sim/state`).

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};

use crate::http::{ApiError, SiteCtx};
use crate::wire::ResetView;

/// `POST /_sim/reset`: the initial world of this seed, as if just started.
pub(super) async fn reset(State(ctx): State<SiteCtx>) -> Result<Json<ResetView>, ApiError> {
    reset_world(&ctx).map(Json)
}

/// The initial world of this seed, as if just started: `POST /_sim/reset` and the page's form.
pub(crate) fn reset_world(ctx: &SiteCtx) -> Result<ResetView, ApiError> {
    ctx.shared.reset().map_err(|e| {
        ApiError::Internal(format!(
            "The world could not be rebuilt ({e}); restart the simulator."
        ))
    })?;
    Ok(ctx.with_world(|_, now| ResetView {
        seed: ctx.shared.seed(),
        now,
    }))
}

/// `GET /_sim/state`: the whole world as JSON (see `world::state`).
pub(super) async fn save_state(State(ctx): State<SiteCtx>) -> Result<Response, ApiError> {
    let bytes = ctx.shared.save_json().map_err(|e| {
        ApiError::Internal(format!("The state could not be written ({e}); try again."))
    })?;
    Ok(([(header::CONTENT_TYPE, "application/json")], bytes).into_response())
}

/// `PUT /_sim/state` with a document `GET /_sim/state` wrote: replaces the whole world. A document
/// that is refused leaves the running world as it was.
pub(super) async fn load_state(
    State(ctx): State<SiteCtx>,
    body: Bytes,
) -> Result<Json<ResetView>, ApiError> {
    ctx.shared
        .load_json(&body)
        .map_err(|e| ApiError::BadRequest(e.to_string()))?;
    Ok(Json(ctx.with_world(|_, now| ResetView {
        seed: ctx.shared.seed(),
        now,
    })))
}
