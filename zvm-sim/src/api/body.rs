//! A request's body must arrive in whole within a deadline ([`crate::Options::body_deadline`]).
//!
//! A client that sends headers and then part of a body, or none, would otherwise hold its
//! connection, and the task serving it, for as long as it likes; past the deadline the answer is
//! 408 and the request has no effect. Bodies here are small JSON documents, so reading one whole
//! before the handler runs costs nothing that matters.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::http::{ApiError, SiteCtx};

/// The largest body read: that of the largest route (a saved state, `/_sim/state`); each route's
/// own limit still applies after.
const BODY_MAX: usize = crate::decisions::MAX_STATE_BYTES;

/// Reads the whole body within the deadline, then passes the request on with it.
pub(crate) async fn within_deadline(
    State(ctx): State<SiteCtx>,
    request: Request,
    next: Next,
) -> Response {
    let deadline = ctx.shared.body_deadline;
    let (parts, body) = request.into_parts();
    let bytes = match tokio::time::timeout(deadline, axum::body::to_bytes(body, BODY_MAX)).await {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(e)) => {
            return ApiError::PayloadTooLarge(format!(
                "the request body could not be read ({e}); send at most {BODY_MAX} bytes"
            ))
            .into_response();
        }
        Err(_) => {
            return ApiError::RequestTimeout(format!(
                "the request body did not arrive in whole within {} s; send it whole, and at once",
                deadline.as_secs_f64()
            ))
            .into_response();
        }
    };
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}
