//! VPG actions, each answered with a task id (a JSON string): `FailoverTest`,
//! `FailoverTestStop`, `CloneStart`, `CloneAbort`, `Failover`, `Move` and `forcesync` under
//! `POST /v1/vpgs/{vpgIdentifier}/...`. Bodies are optional and their keys matched
//! case-insensitively; unknown keys are ignored, as ASP.NET ignores them. The rules are in
//! `world::recovery`.

use axum::Json;
use axum::extract::{Extension, Path, State};

use crate::api::call_log::StartedTask;
use crate::api::{ApiError, JsonBody, SiteCtx};
use crate::world::auth::Principal;
use crate::world::enums::{COMMIT_POLICY, SHUTDOWN_POLICY};
use crate::world::recovery::{CloneRequest, FailoverRequest};
use crate::world::{Refusal, World};

/// Commit policy when a request gives none: Rollback after the commit-policy timeout is the
/// ZVM's default; the simulator commits every failover and move at its task's end whatever the
/// policy, and records it.
const DEFAULT_COMMIT_POLICY: u8 = 0;

/// The answer to an action: the task id as a JSON string, and the task for the call log.
pub(crate) type Started = (Extension<StartedTask>, Json<String>);

/// Runs `f` on the VPG `id` visible from this site; answers the task it started (a tagged insert
/// and every VPG action).
pub(crate) fn act(
    ctx: &SiteCtx,
    id: &str,
    f: impl FnOnce(&mut World, usize, crate::world::clock::SimTime) -> Result<String, Refusal>,
) -> Result<Started, ApiError> {
    let task = ctx.with_world(|world, now| {
        let vpg = world.visible_vpg(ctx.site, id)?;
        f(world, vpg, now)
    })?;
    Ok((Extension(StartedTask(task.clone())), Json(task)))
}

/// `POST /v1/vpgs/{id}/FailoverTest` `{"CheckpointIdentifier"?, "VmIdentifiers"?}`: the latest
/// checkpoint when none is given; every VM when `VmIdentifiers` is absent or empty.
pub(crate) async fn failover_test(
    State(ctx): State<SiteCtx>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
    body: Option<JsonBody>,
) -> Result<Started, ApiError> {
    let body = body.unwrap_or_default();
    let checkpoint = body.identifier("CheckpointIdentifier")?;
    let vms = body.string_list("VmIdentifiers")?;
    act(&ctx, &id, |world, vpg, now| {
        world.start_failover_test(
            ctx.site,
            vpg,
            checkpoint.as_deref(),
            vms.as_deref(),
            &caller,
            now,
        )
    })
}

/// `POST /v1/vpgs/{id}/FailoverTestStop` `{"FailoverTestSuccess"?: true, "FailoverTestSummary"?}`.
pub(crate) async fn failover_test_stop(
    State(ctx): State<SiteCtx>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
    body: Option<JsonBody>,
) -> Result<Started, ApiError> {
    let body = body.unwrap_or_default();
    let success = body.boolean("FailoverTestSuccess")?.unwrap_or(true);
    let summary = body
        .text("FailoverTestSummary")?
        .unwrap_or_default()
        .to_owned();
    act(&ctx, &id, |world, vpg, now| {
        world.stop_failover_test(ctx.site, vpg, success, summary, &caller, now)
    })
}

/// `POST /v1/vpgs/{id}/CloneStart` `{"CheckpointId"?, "DatastoreIdentifier"?, "VmIdentifiers"?}`.
/// Note `CheckpointId`, not `CheckpointIdentifier` (SW10 spells it so): a body that says
/// `CheckpointIdentifier` clones the latest checkpoint, the key being ignored as unknown.
pub(crate) async fn clone_start(
    State(ctx): State<SiteCtx>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
    body: Option<JsonBody>,
) -> Result<Started, ApiError> {
    let body = body.unwrap_or_default();
    let request = CloneRequest {
        checkpoint: body.identifier("CheckpointId")?,
        datastore: body.identifier("DatastoreIdentifier")?,
        vms: body.string_list("VmIdentifiers")?,
    };
    act(&ctx, &id, |world, vpg, now| {
        world.start_clone(ctx.site, vpg, &request, &caller, now)
    })
}

/// `POST /v1/vpgs/{id}/CloneAbort` (no body): the running clone's task ends Stopped; the answer
/// is that task's id.
pub(crate) async fn clone_abort(
    State(ctx): State<SiteCtx>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Started, ApiError> {
    act(&ctx, &id, |world, vpg, now| {
        world.abort_clone(vpg, &caller, now)
    })
}

/// `POST /v1/vpgs/{id}/Failover` `{"CheckpointIdentifier"?, "CommitPolicy"?, "ShutdownPolicy"?,
/// "TimeToWaitBeforeShutdownInSec"?, "IsReverseProtection"?, "VmIdentifiers"?}`.
pub(crate) async fn failover(
    State(ctx): State<SiteCtx>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
    body: Option<JsonBody>,
) -> Result<Started, ApiError> {
    let body = body.unwrap_or_default();
    // Checked so a malformed request is refused as a ZVM would; the simulator's failover does not
    // shut anything down or reverse protection.
    body.enumeration("ShutdownPolicy", &SHUTDOWN_POLICY)?;
    body.number("TimeToWaitBeforeShutdownInSec")?;
    body.boolean("IsReverseProtection")?;
    let request = FailoverRequest {
        checkpoint: body.identifier("CheckpointIdentifier")?,
        vms: body.string_list("VmIdentifiers")?,
        commit_policy: body
            .enumeration("CommitPolicy", &COMMIT_POLICY)?
            .unwrap_or(DEFAULT_COMMIT_POLICY),
    };
    act(&ctx, &id, |world, vpg, now| {
        world.failover(ctx.site, vpg, &request, &caller, now)
    })
}

/// `POST /v1/vpgs/{id}/Move` `{"CommitPolicy"?, ...}`.
pub(crate) async fn move_vpg(
    State(ctx): State<SiteCtx>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
    body: Option<JsonBody>,
) -> Result<Started, ApiError> {
    let body = body.unwrap_or_default();
    let commit_policy = body
        .enumeration("CommitPolicy", &COMMIT_POLICY)?
        .unwrap_or(DEFAULT_COMMIT_POLICY);
    act(&ctx, &id, |world, vpg, now| {
        world.move_vpg(ctx.site, vpg, commit_policy, &caller, now)
    })
}

/// `POST /v1/vpgs/{id}/forcesync` (no body).
pub(crate) async fn force_sync(
    State(ctx): State<SiteCtx>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Started, ApiError> {
    act(&ctx, &id, |world, vpg, now| {
        world.force_sync(ctx.site, vpg, &caller, now)
    })
}
