//! Checkpoints: `GET|POST /v1/vpgs/{vpgIdentifier}/checkpoints` and `.../checkpoints/stats`.

use axum::Json;
use axum::extract::{Path, State};

use crate::api::actions::{Started, VpgCall};
use crate::http::extract::DateWindow;
use crate::http::{ApiError, JsonBody, SiteCtx};
use crate::wire::{CheckpointStatsView, CheckpointView};

/// `GET /v1/vpgs/{id}/checkpoints?startDate=&endDate=`: the listed checkpoints in the history
/// window, oldest first, automatic ones with `Tag: null`.
pub(crate) async fn list(
    State(ctx): State<SiteCtx>,
    Path(id): Path<String>,
    window: DateWindow,
) -> Result<Json<Vec<CheckpointView>>, ApiError> {
    ctx.with_world(|world, now| {
        let vpg = world.visible_vpg(ctx.site, &id)?;
        Ok(Json(
            world.vpgs[vpg]
                .journal
                .list(now, window.from, window.to)
                .into_iter()
                .map(CheckpointView::from)
                .collect(),
        ))
    })
}

/// `GET /v1/vpgs/{id}/checkpoints/stats`: `{Earliest, Latest}`, both `null` when the journal is
/// empty.
pub(crate) async fn stats(
    State(ctx): State<SiteCtx>,
    Path(id): Path<String>,
) -> Result<Json<CheckpointStatsView>, ApiError> {
    ctx.with_world(|world, now| {
        let vpg = world.visible_vpg(ctx.site, &id)?;
        let journal = &world.vpgs[vpg].journal;
        Ok(Json(CheckpointStatsView {
            earliest: journal.earliest(now).map(CheckpointView::from),
            latest: journal.latest(now).map(CheckpointView::from),
        }))
    })
}

/// `POST /v1/vpgs/{id}/checkpoints` `{"CheckpointName": "..."}`: 200 with the task identifier as a
/// JSON string. Only the task says whether the tagged checkpoint was inserted.
pub(crate) async fn insert(call: VpgCall, body: JsonBody) -> Result<Started, ApiError> {
    let name = body.required_text("CheckpointName")?;
    call.act(|world, vpg, now| {
        Ok(world.insert_tagged_checkpoint(call.site(), vpg, name, &call.caller, now))
    })
}
