//! `/_sim`: the control API that no real ZVM has. It is served by both sites, answers only to
//! loopback clients, needs no token, and speaks PascalCase JSON (keys matched case-insensitively).
//! Its calls are not in the call log, which records what a ZVM client did.
//!
//! VPGs and VMs are named by identifier or, for convenience, by name (a VM name only when exactly
//! one VM has it).
//!
//! - this module: reset, saved state, clock, timings, VPGs, resync, status, journals and their
//!   bursts, calls, tasks, retention sets, guest files;
//! - [`faults`]: the fault rules;
//! - [`realm`]: the Keycloak realm's keys and OpenID configuration.

mod faults;
mod realm;
mod ui;

use std::net::SocketAddr;

use axum::body::Bytes;
use axum::extract::{ConnectInfo, DefaultBodyLimit, Path, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};

use crate::api::{ApiError, JsonBody, Params, SiteCtx};
use crate::decisions::{
    DEFAULT_RESYNC_SECONDS, DEFAULT_RESYNC_SUBSTATUS, MAX_BURST_MINUTES, RESYNC_SUBSTATUSES,
};
use crate::wire::{
    self, CallView, ClockView, FileView, JournalStateView, ResetView, SimTaskView, TimingView,
    VpgStateView,
};
use crate::world::World;
use crate::world::clock::SimTime;
use crate::world::enums::{VPG_STATUS, VPG_SUBSTATUS};
use crate::world::files::PathError;

/// Guest files up to this size can be written through `PUT /_sim/vms/{id}/files`.
const MAX_FILE_BYTES: usize = 64 * 1024 * 1024;

/// A saved state up to this size can be restored through `PUT /_sim/state` (a generated world of
/// 10,000 VMs saves to about 20 MB).
pub(crate) const MAX_STATE_BYTES: usize = 1024 * 1024 * 1024;

/// The `/_sim` routes (nested under `/_sim` by the site router).
pub(crate) fn router() -> Router<SiteCtx> {
    Router::new()
        .route("/reset", post(reset))
        .route("/clock", get(clock))
        .route("/clock/advance", post(advance))
        .route("/clock/scale", post(scale))
        .route("/timing", get(timing).post(set_timing))
        .route("/vpgs", get(vpgs))
        .route("/vpgs/{vpg}/resync", post(resync))
        .route("/vpgs/{vpg}/status", post(pin_status))
        .route("/vpgs/{vpg}/journal", get(journal))
        .route("/vpgs/{vpg}/journal-burst", post(journal_burst))
        .route("/calls", get(calls).delete(clear_calls))
        .route("/tasks", get(tasks))
        .route("/retention-sets", get(retention_sets))
        .route(
            "/faults",
            get(faults::list).post(faults::add).delete(faults::clear),
        )
        .route("/faults/{id}", axum::routing::delete(faults::remove))
        .route("/realm", get(realm::show))
        .route("/realm/keys", post(realm::rotate))
        .route("/realm/keys/{kid}", axum::routing::delete(realm::withdraw))
        .route("/realm/discovery", axum::routing::put(realm::discovery))
        .route(
            "/state",
            get(save_state)
                .put(load_state)
                .layer(DefaultBodyLimit::max(MAX_STATE_BYTES)),
        )
        .route(
            "/vms/{vm}/files",
            get(read_files)
                .put(write_file)
                .delete(delete_file)
                .layer(DefaultBodyLimit::max(MAX_FILE_BYTES)),
        )
        .merge(ui::router())
        .route_layer(middleware::from_fn(loopback_only))
}

/// The control API can reset the world and rewrite guest files: it answers loopback clients only.
/// A router used without a listener (in-process `oneshot` tests) has no peer address and is let
/// through. A site listening on `[::]` sees an IPv4 client as `::ffff:127.0.0.1`, which is
/// loopback too once made canonical.
async fn loopback_only(request: Request, next: Next) -> Response {
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(addr)| *addr);
    match peer {
        Some(addr) if !addr.ip().to_canonical().is_loopback() => ApiError::Forbidden(format!(
            "The /_sim control API answers loopback clients only; {} is not one.",
            addr.ip()
        ))
        .into_response(),
        _ => next.run(request).await,
    }
}

fn clock_view(world: &World) -> ClockView {
    ClockView {
        now: world.clock.now(),
        scale: world.clock.scale(),
    }
}

/// `POST /_sim/reset`: the initial world of this seed, as if just started.
async fn reset(State(ctx): State<SiteCtx>) -> Result<Json<ResetView>, ApiError> {
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
async fn save_state(State(ctx): State<SiteCtx>) -> Result<Response, ApiError> {
    let bytes = ctx.shared.save_json().map_err(|e| {
        ApiError::Internal(format!("The state could not be written ({e}); try again."))
    })?;
    Ok(([(header::CONTENT_TYPE, "application/json")], bytes).into_response())
}

/// `PUT /_sim/state` with a document `GET /_sim/state` wrote: replaces the whole world. A document
/// that is refused leaves the running world as it was.
async fn load_state(State(ctx): State<SiteCtx>, body: Bytes) -> Result<Json<ResetView>, ApiError> {
    ctx.shared
        .load_json(&body)
        .map_err(|e| ApiError::BadRequest(e.to_string()))?;
    Ok(Json(ctx.with_world(|_, now| ResetView {
        seed: ctx.shared.seed(),
        now,
    })))
}

/// `GET /_sim/clock`.
async fn clock(State(ctx): State<SiteCtx>) -> Json<ClockView> {
    Json(ctx.with_world(|world, _| clock_view(world)))
}

/// The most one `/_sim/clock/advance` moves the clock: 100 years.
const MAX_ADVANCE_SECONDS: f64 = 100.0 * 365.25 * 24.0 * 3600.0;

/// `POST /_sim/clock/advance {"Seconds": N}`: moves simulated time forward and processes what
/// fell due on the way (tasks ending, resyncs ending), in time order.
async fn advance(State(ctx): State<SiteCtx>, body: JsonBody) -> Result<Json<ClockView>, ApiError> {
    let seconds = required_non_negative(&body, "Seconds", "{\"Seconds\": 30}", |got| {
        format!("Seconds must be 0 or more (got {got}): simulated time only moves forward.")
    })?;
    advance_by(&ctx, seconds).map(Json)
}

/// Moves the clock on `seconds` (0 or more) and the world with it: `POST /_sim/clock/advance` and
/// the page's form.
pub(crate) fn advance_by(ctx: &SiteCtx, seconds: f64) -> Result<ClockView, ApiError> {
    if !seconds.is_finite() || seconds < 0.0 {
        return Err(ApiError::BadRequest(format!(
            "Seconds must be 0 or more (got {seconds}): simulated time only moves forward."
        )));
    }
    if seconds > MAX_ADVANCE_SECONDS {
        return Err(ApiError::BadRequest(format!(
            "Seconds must be at most {MAX_ADVANCE_SECONDS} (100 years) in one call (got {seconds})."
        )));
    }
    let millis = (seconds * 1000.0).round() as i64;
    ctx.with_world(|world, _| {
        let now = world.clock.now();
        // Calls of 100 years each add up: past the year 9999 the clock cannot be written, so the
        // move is refused rather than clamped (a test asked for a time that cannot be shown).
        if now.millis().saturating_add(millis) > SimTime::LATEST.millis() {
            return Err(ApiError::BadRequest(format!(
                "the clock shows {} and cannot move past {}: {seconds} s more is too far; reset the simulator (POST /_sim/reset) to start again",
                now.to_wire(),
                SimTime::LATEST.to_wire()
            )));
        }
        world.clock.advance(millis);
        let now = world.clock.now();
        world.advance(now);
        Ok(clock_view(world))
    })
}

/// The number under `key`, which must be given (400 with `example` otherwise) and be finite and 0
/// or more (400 with the message `refusal` makes of the value otherwise).
fn required_non_negative(
    body: &JsonBody,
    key: &str,
    example: &str,
    refusal: impl FnOnce(f64) -> String,
) -> Result<f64, ApiError> {
    let value = body
        .number(key)?
        .ok_or_else(|| ApiError::BadRequest(format!("{key} is required: send {example}.")))?;
    if !value.is_finite() || value < 0.0 {
        return Err(ApiError::BadRequest(refusal(value)));
    }
    Ok(value)
}

/// `POST /_sim/clock/scale {"Scale": X}`: simulated seconds per real second from now on.
async fn scale(State(ctx): State<SiteCtx>, body: JsonBody) -> Result<Json<ClockView>, ApiError> {
    let example = "{\"Scale\": 0} to freeze time";
    let scale = required_non_negative(&body, "Scale", example, |got| {
        format!("Scale must be a finite number, 0 (frozen) or more (got {got}).")
    })?;
    Ok(Json(ctx.with_world(|world, _| {
        world.clock.set_scale(scale);
        clock_view(world)
    })))
}

fn timing_view(world: &World) -> TimingView {
    TimingView {
        task_duration_ms: world.timings.task_duration_ms,
        listing_lag_ms: world.timings.listing_lag_ms,
    }
}

/// `GET /_sim/timing`.
async fn timing(State(ctx): State<SiteCtx>) -> Json<TimingView> {
    Json(ctx.with_world(|world, _| timing_view(world)))
}

/// `POST /_sim/timing {"TaskDurationMs"?: n, "ListingLagMs"?: n}`: applies to tasks started from
/// now on.
async fn set_timing(
    State(ctx): State<SiteCtx>,
    body: JsonBody,
) -> Result<Json<TimingView>, ApiError> {
    let millis = |key: &str| -> Result<Option<i64>, ApiError> {
        body.number(key)?
            .map(|n| {
                if n.is_finite() && n >= 0.0 {
                    Ok(n.round() as i64)
                } else {
                    Err(ApiError::BadRequest(format!(
                        "{key} must be 0 or more milliseconds (got {n})."
                    )))
                }
            })
            .transpose()
    };
    let duration = millis("TaskDurationMs")?;
    let lag = millis("ListingLagMs")?;
    Ok(Json(ctx.with_world(|world, _| {
        if let Some(d) = duration {
            world.timings.task_duration_ms = d;
        }
        if let Some(l) = lag {
            world.timings.listing_lag_ms = l;
        }
        timing_view(world)
    })))
}

fn find_vpg(world: &World, key: &str) -> Result<usize, ApiError> {
    world.vpg_by_id_or_name(key).ok_or_else(|| {
        ApiError::NotFound(format!(
            "There is no VPG with the identifier or name '{key}'."
        ))
    })
}

fn vpg_state(world: &World, vpg: usize) -> VpgStateView {
    let v = &world.vpgs[vpg];
    VpgStateView {
        vpg_identifier: v.id.clone(),
        vpg_name: v.name.clone(),
        status: world.shown_status(vpg, world.clock.now()),
        sub_status: v.sub_status,
        resync_until: v.resync.map(|r| r.until),
    }
}

/// `GET /_sim/vpgs`: every VPG of both sites with its identifier, name, status and substatus, so a
/// test or script can name a VPG without a token.
async fn vpgs(State(ctx): State<SiteCtx>) -> Json<Vec<VpgStateView>> {
    Json(ctx.with_world(|world, _| {
        (0..world.vpgs.len())
            .filter(|&vpg| !world.vpgs[vpg].deleted)
            .map(|vpg| vpg_state(world, vpg))
            .collect()
    }))
}

/// `POST /_sim/vpgs/{id}/resync {"Seconds"?: n, "SubStatus"?: "FullSync"}`: removes every
/// checkpoint of the VPG (tags included), shows NotMeetingSLA with the sync substatus for the
/// duration, then MeetingSLA / None; checkpoints are written again from its end.
async fn resync(
    State(ctx): State<SiteCtx>,
    Path(key): Path<String>,
    body: Option<JsonBody>,
) -> Result<Json<VpgStateView>, ApiError> {
    let body = body.unwrap_or_default();
    let seconds = body.number("Seconds")?.unwrap_or(DEFAULT_RESYNC_SECONDS);
    if !seconds.is_finite() || seconds < 0.0 {
        return Err(ApiError::BadRequest(format!(
            "Seconds must be 0 or more (got {seconds})."
        )));
    }
    let sub_status = body
        .enumeration("SubStatus", &VPG_SUBSTATUS)?
        .unwrap_or(DEFAULT_RESYNC_SUBSTATUS);
    if !RESYNC_SUBSTATUSES.contains(&sub_status) {
        let allowed: Vec<&str> = RESYNC_SUBSTATUSES
            .iter()
            .map(|&s| VPG_SUBSTATUS.name(s))
            .collect();
        return Err(ApiError::BadRequest(format!(
            "SubStatus {} is not a resync substatus; use one of {}.",
            VPG_SUBSTATUS.name(sub_status),
            allowed.join(", ")
        )));
    }
    ctx.with_world(|world, now| {
        let vpg = find_vpg(world, &key)?;
        world.resync(vpg, seconds, sub_status, now);
        Ok(Json(vpg_state(world, vpg)))
    })
}

/// `POST /_sim/vpgs/{id}/status {"Status": n, "SubStatus"?: n}`: pins the VPG's status until it
/// is changed again (numbers or names).
async fn pin_status(
    State(ctx): State<SiteCtx>,
    Path(key): Path<String>,
    body: JsonBody,
) -> Result<Json<VpgStateView>, ApiError> {
    let status = body.enumeration("Status", &VPG_STATUS)?.ok_or_else(|| {
        ApiError::BadRequest(
            "Status is required: send {\"Status\": \"MeetingSLA\", \"SubStatus\": \"None\"}."
                .to_owned(),
        )
    })?;
    let sub_status = body.enumeration("SubStatus", &VPG_SUBSTATUS)?.unwrap_or(0);
    ctx.with_world(|world, now| {
        let vpg = find_vpg(world, &key)?;
        world.pin_status(vpg, status, sub_status, now);
        Ok(Json(vpg_state(world, vpg)))
    })
}

fn journal_state(world: &World, vpg: usize, now: SimTime) -> JournalStateView {
    let v = &world.vpgs[vpg];
    let journal = &v.journal;
    JournalStateView {
        vpg_identifier: v.id.clone(),
        vpg_name: v.name.clone(),
        status: world.shown_status(vpg, now),
        configured_history_in_minutes: journal.history_minutes(),
        actual_history_in_minutes: world.actual_history_minutes(vpg, now),
        limit_in_minutes: journal.room_minutes(),
        burst_minutes: journal.burst_ms(now) as f64 / 60_000.0,
        full: journal.judged(now).is_some_and(|held| held.full),
        earliest_checkpoint: journal.earliest(now).map(Into::into),
    }
}

/// `GET /_sim/vpgs/{id}/journal`: the history the VPG's journal holds, its limit and its bursts.
async fn journal(
    State(ctx): State<SiteCtx>,
    Path(key): Path<String>,
) -> Result<Json<JournalStateView>, ApiError> {
    ctx.with_world(|world, now| {
        let vpg = find_vpg(world, &key)?;
        Ok(Json(journal_state(world, vpg, now)))
    })
}

/// `POST /_sim/vpgs/{id}/journal-burst {"Minutes": n}`: a burst of writes at the VPG now, as much
/// as `n` minutes of its usual writing (an agent rewriting a database). When the journal can no
/// longer hold its history window, its oldest checkpoints go early. 409 for a VPG that writes no
/// checkpoints.
async fn journal_burst(
    State(ctx): State<SiteCtx>,
    Path(key): Path<String>,
    body: JsonBody,
) -> Result<Json<JournalStateView>, ApiError> {
    let example = "{\"Minutes\": 90}";
    let most = f64::from(MAX_BURST_MINUTES);
    let minutes = required_non_negative(&body, "Minutes", example, |got| {
        format!("Minutes must be more than 0 and at most {most} (got {got}).")
    })?;
    if minutes <= 0.0 || minutes > most {
        return Err(ApiError::BadRequest(format!(
            "Minutes must be more than 0 and at most {most} (got {minutes})."
        )));
    }
    ctx.with_world(|world, now| {
        let vpg = find_vpg(world, &key)?;
        world.journal_burst(vpg, minutes, now)?;
        Ok(Json(journal_state(world, vpg, now)))
    })
}

/// `GET /_sim/calls`: every recorded call of both sites, in order.
async fn calls(State(ctx): State<SiteCtx>) -> Json<Vec<CallView>> {
    Json(ctx.shared.lock().calls.iter().map(CallView::from).collect())
}

/// `DELETE /_sim/calls`: empties the call log (numbering starts again at 1).
async fn clear_calls(State(ctx): State<SiteCtx>) -> StatusCode {
    ctx.shared.lock().calls.clear();
    StatusCode::NO_CONTENT
}

/// `GET /_sim/tasks`: every task of both sites that a ZVM still lists (see `World::age_out_tasks`),
/// oldest first.
async fn tasks(State(ctx): State<SiteCtx>) -> Json<Vec<SimTaskView>> {
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
async fn retention_sets(State(ctx): State<SiteCtx>) -> Json<Vec<wire::SimRetentionSetView>> {
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

fn find_vm(world: &World, key: &str) -> Result<usize, ApiError> {
    if let Some(vm) = world.vm_by_id(key) {
        return Ok(vm);
    }
    let named: Vec<usize> = world
        .vms
        .iter()
        .enumerate()
        .filter(|(_, vm)| !vm.removed && vm.name.eq_ignore_ascii_case(key))
        .map(|(index, _)| index)
        .collect();
    match named.as_slice() {
        [only] => Ok(*only),
        [] => Err(ApiError::NotFound(format!(
            "There is no VM with the identifier or name '{key}'."
        ))),
        several => {
            let choices: Vec<String> = several
                .iter()
                .map(|&vm| {
                    format!(
                        "{} at {}",
                        world.vms[vm].id,
                        world.site(world.vms[vm].site).name
                    )
                })
                .collect();
            Err(ApiError::Conflict(format!(
                "{} VMs are named '{key}' ({}); name one by its identifier.",
                several.len(),
                choices.join(", ")
            )))
        }
    }
}

fn path_error(error: PathError) -> ApiError {
    ApiError::BadRequest(error.to_string())
}

fn required_path(params: &Params) -> Result<String, ApiError> {
    params.text("path").map(str::to_owned).ok_or_else(|| {
        ApiError::BadRequest(
            "path is required: add ?path=sda1/etc/app/app.conf (a partition-rooted guest path)."
                .to_owned(),
        )
    })
}

/// `GET /_sim/vms/{id}/files?path=...`: the file's bytes now. Without `path`: every file now,
/// as `[{"Path", "Size", "LastWriteTime"}]`.
async fn read_files(
    State(ctx): State<SiteCtx>,
    Path(key): Path<String>,
    params: Params,
) -> Result<Response, ApiError> {
    let path = params.text("path").map(str::to_owned);
    ctx.with_world(|world, now| {
        let vm = &world.vms[find_vm(world, &key)?];
        let Some(path) = path else {
            let files: Vec<FileView> = vm
                .files
                .list_at(now)
                .into_iter()
                .map(|f| FileView {
                    path: f.path,
                    size: f.content.len(),
                    last_write_time: f.written,
                })
                .collect();
            return Ok(Json(files).into_response());
        };
        match vm.files.read_at(&path, now).map_err(path_error)? {
            Some(file) => Ok((
                [(header::CONTENT_TYPE, "application/octet-stream")],
                file.content,
            )
                .into_response()),
            None => Err(ApiError::NotFound(format!(
                "VM '{}' has no file '{path}'.",
                vm.name
            ))),
        }
    })
}

/// `PUT /_sim/vms/{id}/files?path=...` with the raw bytes as the body: writes the file now (a new
/// version; earlier checkpoints keep the earlier one).
async fn write_file(
    State(ctx): State<SiteCtx>,
    Path(key): Path<String>,
    params: Params,
    content: Bytes,
) -> Result<Json<FileView>, ApiError> {
    let path = required_path(&params)?;
    ctx.with_world(|world, now| {
        let vm = find_vm(world, &key)?;
        let size = content.len();
        world.vms[vm]
            .files
            .write(&path, content, now)
            .map_err(path_error)?;
        Ok(Json(FileView {
            path,
            size,
            last_write_time: now,
        }))
    })
}

/// `DELETE /_sim/vms/{id}/files?path=...`: deletes the file now (earlier checkpoints keep it).
async fn delete_file(
    State(ctx): State<SiteCtx>,
    Path(key): Path<String>,
    params: Params,
) -> Result<StatusCode, ApiError> {
    let path = required_path(&params)?;
    ctx.with_world(|world, now| {
        let vm = find_vm(world, &key)?;
        let existed = world.vms[vm].files.delete(&path, now).map_err(path_error)?;
        if existed {
            Ok(StatusCode::NO_CONTENT)
        } else {
            Err(ApiError::NotFound(format!(
                "VM '{}' has no file '{path}'.",
                world.vms[vm].name
            )))
        }
    })
}
