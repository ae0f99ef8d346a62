//! VPG actions, each answered with a task id (a JSON string): `FailoverTest`,
//! `FailoverTestStop`, `CloneStart`, `CloneAbort`, `Failover`, `Move` and `forcesync` under
//! `POST /v1/vpgs/{vpgIdentifier}/...`. Bodies are optional and their keys matched
//! case-insensitively; unknown keys are ignored, as ASP.NET ignores them. The rules are in
//! `world::recovery`.

use axum::Json;
use axum::extract::{Extension, FromRequestParts, Path};
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};

use crate::enums::{COMMIT_POLICY, SHUTDOWN_POLICY};
use crate::http::{ApiError, JsonBody, SiteCtx, StartedTask};
use crate::world::auth::Principal;
use crate::world::clock::SimTime;
use crate::world::live::LiveEnd;
use crate::world::payloads::Removal;
use crate::world::recovery::{CloneRequest, FailoverRequest, Replication};
use crate::world::{Refusal, SiteRole, World};

/// Commit policy when a request gives none: Rollback after the commit-policy timeout is the
/// ZVM's default.
const DEFAULT_COMMIT_POLICY: u8 = 0;

/// The answer to an action: the task id as a JSON string, and the task for the call log.
pub(crate) type Started = (Extension<StartedTask>, Json<String>);

/// What an action handler answers: the task it started, or why not.
pub(crate) type ActionResult = Result<Started, ApiError>;

/// What every action on a VPG starts from (a tagged insert and every recovery operation): the
/// site it reached, the caller, and the VPG its path names (`POST /v1/vpgs/{id}/...`).
pub(crate) struct VpgCall {
    ctx: SiteCtx,
    /// Who asked, as the bearer check found them.
    pub caller: Principal,
    vpg: String,
}

impl FromRequestParts<SiteCtx> for VpgCall {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, ctx: &SiteCtx) -> Result<Self, Response> {
        // Taken in the order the handlers once took them one by one, so a request is refused as
        // before.
        let Extension(caller) = Extension::<Principal>::from_request_parts(parts, ctx)
            .await
            .map_err(IntoResponse::into_response)?;
        let Path(vpg) = Path::<String>::from_request_parts(parts, ctx)
            .await
            .map_err(IntoResponse::into_response)?;
        Ok(VpgCall {
            ctx: ctx.clone(),
            caller,
            vpg,
        })
    }
}

impl VpgCall {
    /// The site the call reached.
    pub(crate) fn site(&self) -> SiteRole {
        self.ctx.site
    }

    /// Runs `f` on the VPG, if visible from this site; answers the task it started.
    pub(crate) fn act(
        &self,
        f: impl FnOnce(&mut World, usize, SimTime) -> Result<String, Refusal>,
    ) -> ActionResult {
        let task = self.ctx.with_world(|world, now| {
            let vpg = world.visible_vpg(self.site(), &self.vpg)?;
            f(world, vpg, now)
        })?;
        Ok((Extension(StartedTask(task.clone())), Json(task)))
    }
}

/// `POST /v1/vpgs/{id}/FailoverTest` `{"CheckpointIdentifier"?, "VmIdentifiers"?}`: the latest
/// checkpoint when none is given; every VM when `VmIdentifiers` is absent or empty.
pub(crate) async fn failover_test(call: VpgCall, body: Option<JsonBody>) -> ActionResult {
    let body = body.unwrap_or_default();
    let checkpoint = body.identifier("CheckpointIdentifier")?;
    let vms = body.string_list("VmIdentifiers")?;
    call.act(|world, vpg, now| {
        let (checkpoint, vms) = (checkpoint.as_deref(), vms.as_deref());
        world.start_failover_test(call.site(), vpg, checkpoint, vms, &call.caller, now)
    })
}

/// `POST /v1/vpgs/{id}/FailoverTestStop` `{"FailoverTestSuccess"?: true, "FailoverTestSummary"?}`.
pub(crate) async fn failover_test_stop(call: VpgCall, body: Option<JsonBody>) -> ActionResult {
    let body = body.unwrap_or_default();
    let success = body.boolean("FailoverTestSuccess")?.unwrap_or(true);
    let summary = body
        .text("FailoverTestSummary")?
        .unwrap_or_default()
        .to_owned();
    call.act(|world, vpg, now| {
        world.stop_failover_test(call.site(), vpg, success, summary, &call.caller, now)
    })
}

/// `POST /v1/vpgs/{id}/CloneStart` `{"CheckpointId"?, "DatastoreIdentifier"?, "VmIdentifiers"?}`.
/// Note `CheckpointId`, not `CheckpointIdentifier` (SW10 spells it so): a body that says
/// `CheckpointIdentifier` clones the latest checkpoint, the key being ignored as unknown.
pub(crate) async fn clone_start(call: VpgCall, body: Option<JsonBody>) -> ActionResult {
    let body = body.unwrap_or_default();
    let request = CloneRequest {
        checkpoint: body.identifier("CheckpointId")?,
        datastore: body.identifier("DatastoreIdentifier")?,
        vms: body.string_list("VmIdentifiers")?,
    };
    call.act(|world, vpg, now| world.start_clone(call.site(), vpg, &request, &call.caller, now))
}

/// `POST /v1/vpgs/{id}/CloneAbort` (no body): the running clone's task ends Stopped; the answer
/// is that task's id.
pub(crate) async fn clone_abort(call: VpgCall) -> ActionResult {
    call.act(|world, vpg, now| world.abort_clone(vpg, &call.caller, now))
}

/// `POST /v1/vpgs/{id}/Failover` `{"CheckpointIdentifier"?, "CommitPolicy"?, "ShutdownPolicy"?,
/// "TimeToWaitBeforeShutdownInSec"?, "IsReverseProtection"?, "VmIdentifiers"?}`.
pub(crate) async fn failover(call: VpgCall, body: Option<JsonBody>) -> ActionResult {
    let body = body.unwrap_or_default();
    // Checked so a malformed request is refused as a ZVM would; the simulator's failover does not
    // shut anything down or reverse protection.
    body.enumeration("ShutdownPolicy", &SHUTDOWN_POLICY)?;
    body.number("TimeToWaitBeforeShutdownInSec")?;
    body.boolean("IsReverseProtection")?;
    let request = FailoverRequest {
        checkpoint: body.identifier("CheckpointIdentifier")?,
        vms: body.string_list("VmIdentifiers")?,
        commit_policy: commit_policy(&body)?,
    };
    call.act(|world, vpg, now| world.failover(call.site(), vpg, &request, &call.caller, now))
}

/// `POST /v1/vpgs/{id}/Move` `{"CommitPolicy"?, ...}`.
pub(crate) async fn move_vpg(call: VpgCall, body: Option<JsonBody>) -> ActionResult {
    let commit_policy = commit_policy(&body.unwrap_or_default())?;
    call.act(|world, vpg, now| world.move_vpg(call.site(), vpg, commit_policy, &call.caller, now))
}

/// `POST /v1/vpgs/{id}/FailoverCommit` `{"IsReverseProtection"?}` (checked, not modelled).
pub(crate) async fn failover_commit(call: VpgCall, body: Option<JsonBody>) -> ActionResult {
    body.unwrap_or_default().boolean("IsReverseProtection")?;
    end_live(&call, true, LiveEnd::Commit)
}

/// `POST /v1/vpgs/{id}/FailoverRollback` (no body).
pub(crate) async fn failover_rollback(call: VpgCall) -> ActionResult {
    end_live(&call, true, LiveEnd::Rollback)
}

/// `POST /v1/vpgs/{id}/MoveCommit` `{"ReverseProtection"?, "KeepSourceVms"?}` (checked, not
/// modelled).
pub(crate) async fn move_commit(call: VpgCall, body: Option<JsonBody>) -> ActionResult {
    let body = body.unwrap_or_default();
    body.boolean("ReverseProtection")?;
    body.boolean("KeepSourceVms")?;
    end_live(&call, false, LiveEnd::Commit)
}

/// `POST /v1/vpgs/{id}/moveRollback` (no body).
pub(crate) async fn move_rollback(call: VpgCall) -> ActionResult {
    end_live(&call, false, LiveEnd::Rollback)
}

fn end_live(call: &VpgCall, failover: bool, end: LiveEnd) -> ActionResult {
    call.act(|world, vpg, now| world.end_live(call.site(), vpg, failover, end, &call.caller, now))
}

/// `POST /v1/vpgs/{id}/forcesync` (no body).
pub(crate) async fn force_sync(call: VpgCall) -> ActionResult {
    change_replication(&call, Replication::ForceSync)
}

/// `POST /v1/vpgs/{id}/pause` (no body).
pub(crate) async fn pause(call: VpgCall) -> ActionResult {
    change_replication(&call, Replication::Pause)
}

/// `POST /v1/vpgs/{id}/resume` (no body).
pub(crate) async fn resume(call: VpgCall) -> ActionResult {
    change_replication(&call, Replication::Resume)
}

fn change_replication(call: &VpgCall, change: Replication) -> ActionResult {
    call.act(|world, vpg, now| {
        world.change_replication(call.site(), vpg, change, &call.caller, now)
    })
}

/// `DELETE /v1/vpgs/{id}` `{"KeepRecoveryVolumes"?, "Force"?}`: starts the VPG's removal.
pub(crate) async fn delete_vpg(call: VpgCall, body: Option<JsonBody>) -> ActionResult {
    let body = body.unwrap_or_default();
    let removal = Removal {
        keep_recovery_volumes: body.boolean("KeepRecoveryVolumes")?.unwrap_or(false),
        force: body.boolean("Force")?.unwrap_or(false),
    };
    call.act(|world, vpg, now| world.delete_vpg(call.site(), vpg, removal, &call.caller, now))
}

/// The `CommitPolicy` of a failover or a move, the ZVM's default when absent.
fn commit_policy(body: &JsonBody) -> Result<u8, ApiError> {
    let policy = body.enumeration("CommitPolicy", &COMMIT_POLICY)?;
    Ok(policy.unwrap_or(DEFAULT_COMMIT_POLICY))
}
