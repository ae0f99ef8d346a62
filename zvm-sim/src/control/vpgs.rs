//! The VPGs as a test drives them: `/_sim/vpgs` (list), a resync, a pinned status, and the
//! journal with its bursts of writes.

use axum::Json;
use axum::extract::{Path, State};

use super::clock::required_non_negative;
use crate::decisions::{
    DEFAULT_RESYNC_SECONDS, DEFAULT_RESYNC_SUBSTATUS, MAX_BURST_MINUTES, RESYNC_SUBSTATUSES,
};
use crate::enums::{VPG_STATUS, VPG_SUBSTATUS};
use crate::http::{ApiError, JsonBody, SiteCtx, required};
use crate::wire::{JournalStateView, VpgStateView};
use crate::world::World;
use crate::world::clock::SimTime;

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
pub(super) async fn vpgs(State(ctx): State<SiteCtx>) -> Json<Vec<VpgStateView>> {
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
pub(super) async fn resync(
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
pub(super) async fn pin_status(
    State(ctx): State<SiteCtx>,
    Path(key): Path<String>,
    body: JsonBody,
) -> Result<Json<VpgStateView>, ApiError> {
    let status = required(
        body.enumeration("Status", &VPG_STATUS)?,
        "Status",
        "send {\"Status\": \"MeetingSLA\", \"SubStatus\": \"None\"}",
    )?;
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
pub(super) async fn journal(
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
pub(super) async fn journal_burst(
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
