//! What the sites recorded, as a test reads it: the call log, the tasks a ZVM still lists and the
//! retention sets still kept.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;

use crate::http::SiteCtx;
use crate::wire::{self, CallView, SimTaskView};

/// `GET /_sim/calls`: every recorded call of both sites, in order.
pub(super) async fn calls(State(ctx): State<SiteCtx>) -> Json<Vec<CallView>> {
    Json(ctx.shared.lock().calls.iter().map(CallView::from).collect())
}

/// `DELETE /_sim/calls`: empties the call log (numbering starts again at 1).
pub(super) async fn clear_calls(State(ctx): State<SiteCtx>) -> StatusCode {
    ctx.shared.lock().calls.clear();
    StatusCode::NO_CONTENT
}

/// `GET /_sim/tasks`: every task of both sites that a ZVM still lists (see `World::age_out_tasks`),
/// oldest first.
pub(super) async fn tasks(State(ctx): State<SiteCtx>) -> Json<Vec<SimTaskView>> {
    Json(ctx.with_world(|world, now| {
        world
            .tasks
            .iter()
            .map(|task| wire::sim_task(world, task, now))
            .collect()
    }))
}

/// `GET /_sim/retention-sets`: every retention set of both sites still kept (not expired), oldest
/// first, with the checkpoint (and tag) it was copied from.
pub(super) async fn retention_sets(
    State(ctx): State<SiteCtx>,
) -> Json<Vec<wire::SimRetentionSetView>> {
    Json(ctx.with_world(|world, now| {
        world
            .ltr
            .sets
            .iter()
            .filter(|set| set.kept_at(now))
            .map(|set| wire::sim_retention_set(world, set))
            .collect()
    }))
}
