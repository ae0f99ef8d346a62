//! What the world is built from ([`Setup`]) and the timings of its tasks ([`Timings`]), which a
//! test may change while it runs.

use serde::{Deserialize, Serialize};

use super::auth::Lifetimes;
use super::clock::SimTime;
use super::spec::WorldSpec;

/// Task and listing timings, changeable at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Timings {
    /// Nominal task duration before jitter, ms.
    pub task_duration_ms: i64,
    /// Completed insert → checkpoint listed, ms.
    pub listing_lag_ms: i64,
}

/// Everything needed to build the initial world, and to build it again on reset.
#[derive(Debug, Clone)]
pub struct Setup {
    /// The world.
    pub spec: WorldSpec,
    /// The seed of every random choice.
    pub seed: u64,
    /// Simulated time at start.
    pub epoch: SimTime,
    /// Simulated seconds per real second at start.
    pub time_scale: f64,
    /// Timings at start.
    pub timings: Timings,
    /// The jitter on task durations, a fraction (see `Options::task_jitter`).
    pub task_jitter: f64,
    /// Token lifetimes and session limit.
    pub lifetimes: Lifetimes,
}
