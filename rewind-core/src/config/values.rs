//! How a settings value is read: a duration in the unit its key names (`*_secs`, `*_ms`, hours,
//! days), bounded, and a count of 1 or more; each refusal says the range to give.

use std::time::Duration;

use serde::{Deserialize, Deserializer};

/// A count of 1 or more.
pub(super) fn count<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    match usize::deserialize(d)? {
        0 => Err(serde::de::Error::custom(
            "is 0; give a whole number of 1 or more",
        )),
        n => Ok(n),
    }
}

/// The most any duration setting may be: 10,000,000 seconds, about 115 days.
const MAX_SECS: f64 = 1.0e7;

/// `N` seconds, a default of a duration setting.
pub(super) fn seconds<const N: u64>() -> Duration {
    Duration::from_secs(N)
}

/// A `*_secs` key: a number of seconds above 0 and below [`MAX_SECS`].
pub(super) fn secs<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let v = f64::deserialize(d)?;
    within(
        v,
        v > 0.0,
        "is not a number of seconds above 0 and below 10,000,000",
    )
}

/// `inventory_max_age_secs`, where 0 is allowed: read every time.
pub(super) fn secs_or_zero<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let v = f64::deserialize(d)?;
    within(
        v,
        v >= 0.0,
        "is not a number of seconds from 0 to below 10,000,000",
    )
}

/// `poll_floor_ms`: whole milliseconds from 2 to 1,000.
pub(super) fn poll_floor<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let v = u64::deserialize(d)?;
    match (2..=1_000).contains(&v) {
        true => Ok(Duration::from_millis(v)),
        false => Err(serde::de::Error::custom(
            "is not a number of milliseconds from 2 to 1,000; give one in that range",
        )),
    }
}

/// `min_way_back_hours`: hours from 0 (no note) to a year.
pub(super) fn hours<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let v = f64::deserialize(d)? * 3600.0;
    within(
        v,
        v >= 0.0,
        "is not a number of hours from 0 to below about 2,700 (10,000,000 seconds)",
    )
}

/// `change_id_horizon`, written in days.
pub(super) fn days<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let v = f64::deserialize(d)? * 86_400.0;
    let above = "is not a number of days above 0 and below about 115 (10,000,000 seconds)";
    within(v, v > 0.0, above)
}

/// `secs` as a duration when it is finite, `above_floor` and below [`MAX_SECS`]; else `refusal`.
fn within<E: serde::de::Error>(secs: f64, above_floor: bool, refusal: &str) -> Result<Duration, E> {
    match secs.is_finite() && above_floor && secs < MAX_SECS {
        true => Ok(Duration::from_secs_f64(secs)),
        false => Err(E::custom(format!("{refusal}; give one in that range"))),
    }
}
