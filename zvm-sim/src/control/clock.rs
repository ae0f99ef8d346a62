//! Simulated time and the timings of tasks: `/_sim/clock` (read, advance, scale) and
//! `/_sim/timing`.

use axum::Json;
use axum::extract::State;

use crate::http::{ApiError, JsonBody, SiteCtx, required};
use crate::wire::{ClockView, TimingView};
use crate::world::World;
use crate::world::clock::SimTime;

fn clock_view(world: &World) -> ClockView {
    ClockView {
        now: world.clock.now(),
        scale: world.clock.scale(),
    }
}

/// `GET /_sim/clock`.
pub(super) async fn clock(State(ctx): State<SiteCtx>) -> Json<ClockView> {
    Json(ctx.with_world(|world, _| clock_view(world)))
}

/// The most one `/_sim/clock/advance` moves the clock: 100 years.
const MAX_ADVANCE_SECONDS: f64 = 100.0 * 365.25 * 24.0 * 3600.0;

/// `POST /_sim/clock/advance {"Seconds": N}`: moves simulated time forward and processes what
/// fell due on the way (tasks ending, resyncs ending), in time order.
pub(super) async fn advance(
    State(ctx): State<SiteCtx>,
    body: JsonBody,
) -> Result<Json<ClockView>, ApiError> {
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
pub(super) fn required_non_negative(
    body: &JsonBody,
    key: &str,
    example: &str,
    refusal: impl FnOnce(f64) -> String,
) -> Result<f64, ApiError> {
    let value = required(body.number(key)?, key, &format!("send {example}"))?;
    if !value.is_finite() || value < 0.0 {
        return Err(ApiError::BadRequest(refusal(value)));
    }
    Ok(value)
}

/// `POST /_sim/clock/scale {"Scale": X}`: simulated seconds per real second from now on.
pub(super) async fn scale(
    State(ctx): State<SiteCtx>,
    body: JsonBody,
) -> Result<Json<ClockView>, ApiError> {
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
pub(super) async fn timing(State(ctx): State<SiteCtx>) -> Json<TimingView> {
    Json(ctx.with_world(|world, _| timing_view(world)))
}

/// `POST /_sim/timing {"TaskDurationMs"?: n, "ListingLagMs"?: n}`: applies to tasks started from
/// now on.
pub(super) async fn set_timing(
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
