//! Tasks: `GET /v1/tasks`, `GET /v1/tasks/{taskIdentifier}`, `GET /v1/tasks/types`. Each ZVM lists
//! the tasks it ran.

use axum::Json;
use axum::extract::Path;

use crate::enums::{TASK_STATE, TASK_TYPE};
use crate::http::{ApiError, Params, ViewCtx};
use crate::wire::TaskView;

/// `GET /v1/tasks`, filtered by `startedBeforeDate`, `startedAfterDate`, `completedBeforeDate`,
/// `completedAfterDate` (bounds included; a completed filter leaves out running tasks), `type` and
/// `status`. Oldest first.
pub(crate) async fn list(ctx: ViewCtx, params: Params) -> Result<Json<Vec<TaskView>>, ApiError> {
    let started_before = params.date("startedBeforeDate")?;
    let started_after = params.date("startedAfterDate")?;
    let completed_before = params.date("completedBeforeDate")?;
    let completed_after = params.date("completedAfterDate")?;
    let kind = params
        .enumeration("type", &TASK_TYPE)?
        .map(|k| TASK_TYPE.name(k));
    let state = params.enumeration("status", &TASK_STATE)?;
    Ok(Json(ctx.view(|view| {
        view.world
            .tasks
            .iter()
            .filter(|task| {
                let completed = task.ended.as_ref().map(|e| e.at);
                task.site == ctx.site
                    && started_before.is_none_or(|d| task.started <= d)
                    && started_after.is_none_or(|d| task.started >= d)
                    && completed_before.is_none_or(|d| completed.is_some_and(|c| c <= d))
                    && completed_after.is_none_or(|d| completed.is_some_and(|c| c >= d))
                    && kind.is_none_or(|k| k == task.kind())
                    && state.is_none_or(|s| s == task.status_at(view.now).0)
            })
            .map(|task| view.task(task))
            .collect()
    })))
}

/// `GET /v1/tasks/{taskIdentifier}`.
pub(crate) async fn one(ctx: ViewCtx, Path(id): Path<String>) -> Result<Json<TaskView>, ApiError> {
    ctx.view(|view| {
        view.world
            .task_by_id(&id)
            .filter(|task| task.site == ctx.site)
            .map(|task| Json(view.task(task)))
            .ok_or_else(|| {
                ApiError::NotFound(format!(
                    "There is no task '{id}' at site {}: a ZVM lists the tasks it ran (GET /v1/tasks).",
                    view.world.site(ctx.site).name
                ))
            })
    })
}

/// `GET /v1/tasks/types`.
pub(crate) async fn types() -> Json<&'static [&'static str]> {
    Json(TASK_TYPE.names)
}
