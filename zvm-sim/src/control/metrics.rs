//! `GET /metrics`: the simulator's metrics (`crate::metrics`), read from the world when scraped,
//! in the Prometheus text format (OpenMetrics).

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::http::SiteCtx;

/// `GET /metrics`.
pub(crate) async fn metrics(State(ctx): State<SiteCtx>) -> Response {
    let metrics = ctx.shared.metrics.clone();
    ctx.with_world(|world, now| metrics.read(world, now));
    let Some(text) = metrics.encode() else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        text,
    )
        .into_response()
}
