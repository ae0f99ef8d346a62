//! Journal VM restore: `POST /v1/vms/{vmIdentifier}/Restore` (`JournalVMRestoreDataApi`), then
//! `RestoreCommit` or `RestoreRollback` with the VPG's identifier as a JSON string; each answers
//! with a task identifier. The rules are in `world::restore`.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Extension, Path, State};

use crate::api::actions::ActionResult;
use crate::enums::{COMMIT_POLICY, SHUTDOWN_POLICY};
use crate::http::{ApiError, JsonBody, SiteCtx, StartedTask, required};
use crate::world::auth::Principal;
use crate::world::restore::{RestoreRequest, commit_policy};

/// `POST /v1/vms/{vmIdentifier}/Restore` `{"vpgIdentifier", "checkpointIdentifier",
/// "restoredVmName"?, "commitPolicy"?, "shutdownPolicy"?, "timeToWaitBeforeContinueInSeconds"?,
/// "journalVMRestoreSettings"?}`: keys in any case. Without `restoredVmName` the VM is restored in
/// place. The settings (datastore, NICs, volumes) are checked as an object and not modelled.
pub(crate) async fn restore(
    State(ctx): State<SiteCtx>,
    Extension(caller): Extension<Principal>,
    Path(vm): Path<String>,
    body: JsonBody,
) -> ActionResult {
    body.enumeration("shutdownPolicy", &SHUTDOWN_POLICY)?;
    body.object("journalVMRestoreSettings")?;
    let checkpoint = required(
        body.identifier("checkpointIdentifier")?,
        "checkpointIdentifier",
        "choose one from GET /v1/vpgs/{id}/checkpoints",
    )?;
    let wait = body.whole_number("timeToWaitBeforeContinueInSeconds", 0, 2_147_483_647.0)?;
    let request = RestoreRequest {
        vpg: body.required_text("vpgIdentifier")?.to_owned(),
        checkpoint,
        restored_vm_name: body.text("restoredVmName")?.map(str::to_owned),
        commit_policy: body
            .enumeration("commitPolicy", &COMMIT_POLICY)?
            .unwrap_or(commit_policy::ROLLBACK),
        wait_secs: wait.map(|w| i64::try_from(w).unwrap_or(i64::MAX)),
    };
    let task =
        ctx.with_world(|world, now| world.start_restore(ctx.site, &vm, &request, &caller, now))?;
    Ok((Extension(StartedTask(task.clone())), Json(task)))
}

/// `POST /v1/vms/{vmIdentifier}/RestoreCommit` `"<vpgIdentifier>"`.
pub(crate) async fn commit(
    State(ctx): State<SiteCtx>,
    Extension(caller): Extension<Principal>,
    Path(vm): Path<String>,
    body: Bytes,
) -> ActionResult {
    end(ctx, caller, vm, body, true)
}

/// `POST /v1/vms/{vmIdentifier}/RestoreRollback` `"<vpgIdentifier>"`.
pub(crate) async fn rollback(
    State(ctx): State<SiteCtx>,
    Extension(caller): Extension<Principal>,
    Path(vm): Path<String>,
    body: Bytes,
) -> ActionResult {
    end(ctx, caller, vm, body, false)
}

fn end(ctx: SiteCtx, caller: Principal, vm: String, body: Bytes, commit: bool) -> ActionResult {
    let vpg = vpg_of(&body)?;
    let task = ctx.with_world(|world, now| {
        world.end_restore(ctx.site, &vm, vpg.as_deref(), commit, &caller, now)
    })?;
    Ok((Extension(StartedTask(task.clone())), Json(task)))
}

/// The body of a commit or a rollback: the VPG's identifier as a JSON string (SW10's shape), or
/// nothing (the VM's restore, whatever its VPG).
fn vpg_of(body: &[u8]) -> Result<Option<String>, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(serde_json::Value::String(id)) => Ok(Some(id)),
        Ok(serde_json::Value::Null) => Ok(None),
        _ => Err(ApiError::BadRequest(
            "the body is the VPG's identifier as a JSON string, e.g. \"<vpgIdentifier>\"."
                .to_owned(),
        )),
    }
}
