//! Watching the ways back on a team server: `GET /v1/expiring?within=2h` answers the open changes of
//! its journal whose way back ends within the span (as `rewind tags --expiring` does on a machine),
//! and a watcher logs each open change once when its way back comes within `[guard]
//! min_way_back_hours` of its end, so the server's log says it before the tags are gone.

use std::collections::HashSet;
use std::time::Duration;

use axum::extract::{Query, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use rewind_core::CancellationToken;
use rewind_core::Rewind;
use rewind_core::way_back::{parse_span, span};
use serde::Deserialize;

/// The path the open changes are read at.
pub const EXPIRING_PATH: &str = "/v1/expiring";

/// How often the watcher reads the journal.
const WATCH_EVERY: Duration = Duration::from_secs(60);

/// The query: the span, as `rewind tags --expiring` takes it (`30m`, `2h`, `1d`).
#[derive(Debug, Deserialize)]
pub struct ExpiringQuery {
    within: String,
}

/// `GET /v1/expiring?within=2h`: needs the read role when the server signs callers in.
pub async fn expiring(
    State(rewind): State<Rewind>,
    Query(query): Query<ExpiringQuery>,
    request: Request,
) -> Response {
    if let Some(refused) = crate::guards::refusal(&rewind, request.extensions().get()) {
        return refused;
    }
    let within = match parse_span(&query.within) {
        Ok(within) => within,
        Err(e) => return crate::guards::error(StatusCode::BAD_REQUEST, format!("within: {e}")),
    };
    let found = crate::on_files(&rewind, move |r| r.journal().expiring(within, Utc::now())).await;
    match found {
        Ok(found) => axum::Json(found).into_response(),
        Err(e) => crate::guards::error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

/// Reads the journal every minute until `stop`, logging each open change once as its way back
/// comes within `[guard] min_way_back_hours` of its end (nothing when that is 0).
pub async fn watch(rewind: Rewind, stop: CancellationToken) {
    let Ok(within) = chrono::Duration::from_std(rewind.config().guard.min_way_back) else {
        return;
    };
    if within <= chrono::Duration::zero() {
        return;
    }
    let mut said: HashSet<(String, String)> = HashSet::new();
    loop {
        let found =
            crate::on_files(&rewind, move |r| r.journal().expiring(within, Utc::now())).await;
        match found {
            Ok(found) => {
                for c in found.changes {
                    if said.insert((c.vm.id.clone(), c.change_id.clone())) {
                        tracing::warn!(
                            change = %c.change_id,
                            vm = %c.vm,
                            agent = %c.agent,
                            vpg = %c.vpg_name,
                            until = %c.recoverable_until,
                            "the way back of change {} ends within {} ({}); keep its tags or say it is done",
                            c.change_id,
                            span(within),
                            c.recoverable_until.format("%Y-%m-%d %H:%M UTC")
                        );
                    }
                }
            }
            Err(e) => tracing::warn!("the journal could not be read to watch the ways back: {e}"),
        }
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(WATCH_EVERY) => {}
        }
    }
}
