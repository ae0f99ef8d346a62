//! Simulated time: `now = epoch + real elapsed × scale + advanced offset`.
//!
//! The clock is rebased whenever its scale changes or it is advanced, so each change applies from
//! that moment on and simulated time never runs backwards.

use std::time::Instant;

use chrono::{DateTime, SecondsFormat, TimeZone, Utc};

/// A moment on the simulated clock, in milliseconds since the Unix epoch (UTC).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(i64);

impl SimTime {
    /// The latest moment the clock shows: `decisions::LATEST_TIME_RFC3339`, 9999-12-31T23:59:59.999Z.
    pub const LATEST: SimTime = SimTime(253_402_300_799_999);

    /// The moment `millis` milliseconds after the Unix epoch.
    pub const fn from_millis(millis: i64) -> Self {
        Self(millis)
    }

    /// Milliseconds since the Unix epoch.
    pub const fn millis(self) -> i64 {
        self.0
    }

    /// The moment of a UTC date and time (to the millisecond).
    pub fn from_datetime(at: DateTime<Utc>) -> Self {
        Self(at.timestamp_millis())
    }

    /// This moment as a UTC date and time.
    pub fn to_datetime(self) -> DateTime<Utc> {
        Utc.timestamp_millis_opt(self.0)
            .single()
            .unwrap_or_default()
    }

    /// ISO 8601 UTC with milliseconds, as the ZVM writes it: `2026-01-01T00:00:05.000Z`.
    pub fn to_wire(self) -> String {
        self.to_datetime()
            .to_rfc3339_opts(SecondsFormat::Millis, true)
    }

    /// This moment plus `millis` (which may be negative), never past [`SimTime::LATEST`]: time
    /// stops there rather than wrapping around.
    pub const fn plus_millis(self, millis: i64) -> Self {
        let sum = self.0.saturating_add(millis);
        if sum > Self::LATEST.0 {
            Self::LATEST
        } else {
            Self(sum)
        }
    }

    /// Milliseconds from `earlier` to this moment.
    pub const fn millis_since(self, earlier: SimTime) -> i64 {
        self.0.saturating_sub(earlier.0)
    }
}

impl serde::Serialize for SimTime {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_wire())
    }
}

/// Read back from the wire form (RFC 3339), as saved state holds it.
impl<'de> serde::Deserialize<'de> for SimTime {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        DateTime::parse_from_rfc3339(&text)
            .map(|at| SimTime::from_datetime(at.to_utc()))
            .map_err(|e| serde::de::Error::custom(format!("'{text}' is not an RFC 3339 time: {e}")))
    }
}

/// The simulated clock.
#[derive(Debug, Clone)]
pub struct Clock {
    /// Simulated time at `base_real`.
    base_sim: SimTime,
    /// The real instant of the last rebase.
    base_real: Instant,
    /// Simulated seconds per real second; 0 freezes the clock.
    scale: f64,
}

impl Clock {
    /// A clock that shows `start` now and runs at `scale`.
    pub fn new(start: SimTime, scale: f64) -> Self {
        Self {
            base_sim: start,
            base_real: Instant::now(),
            scale,
        }
    }

    /// The simulated time now.
    pub fn now(&self) -> SimTime {
        if self.scale == 0.0 {
            return self.base_sim;
        }
        let elapsed_ms = self.base_real.elapsed().as_secs_f64() * 1000.0 * self.scale;
        // The cast saturates; a simulated run of more than 292 million years is not a concern.
        self.base_sim.plus_millis(elapsed_ms.floor() as i64)
    }

    /// Simulated seconds per real second.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// Changes the scale from now on.
    pub fn set_scale(&mut self, scale: f64) {
        self.rebase(0);
        self.scale = scale;
    }

    /// Moves simulated time forward by `millis`.
    pub fn advance(&mut self, millis: i64) {
        self.rebase(millis.max(0));
    }

    fn rebase(&mut self, extra_millis: i64) {
        let now = self.now();
        self.base_real = Instant::now();
        self.base_sim = now.plus_millis(extra_millis);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frozen_clock_moves_only_when_advanced() {
        let start = SimTime::from_millis(1_000);
        let mut clock = Clock::new(start, 0.0);
        assert_eq!(clock.now(), start);
        clock.advance(5_000);
        assert_eq!(clock.now(), SimTime::from_millis(6_000));
    }

    #[test]
    fn the_clock_stops_at_the_end_of_9999_rather_than_wrapping() {
        assert_eq!(
            SimTime::LATEST.to_wire(),
            crate::decisions::LATEST_TIME_RFC3339
        );
        let mut clock = Clock::new(SimTime::LATEST.plus_millis(-1_000), 0.0);
        clock.advance(i64::MAX);
        assert_eq!(clock.now(), SimTime::LATEST);
        let fast = Clock::new(SimTime::LATEST.plus_millis(-1), f64::MAX);
        assert_eq!(fast.now(), SimTime::LATEST);
    }

    #[test]
    fn wire_format_is_utc_with_milliseconds() {
        let at = SimTime::from_datetime(
            DateTime::parse_from_rfc3339("2026-01-01T00:00:05Z")
                .unwrap()
                .to_utc(),
        );
        assert_eq!(at.to_wire(), "2026-01-01T00:00:05.000Z");
    }

    #[test]
    fn changing_the_scale_keeps_simulated_time_continuous() {
        let mut clock = Clock::new(SimTime::from_millis(0), 1000.0);
        let before = clock.now();
        clock.set_scale(0.0);
        let frozen = clock.now();
        assert!(frozen >= before);
        assert_eq!(clock.now(), frozen);
    }
}
