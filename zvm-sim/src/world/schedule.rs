//! The world's schedule: what falls due at a moment of simulated time ([`Event`]), in the order
//! [`crate::world::World::advance`] processes it ([`Scheduled`]).

use serde::{Deserialize, Serialize};

use super::clock::SimTime;
use super::tasks::TaskKey;

/// Something that falls due: a task's end, a resync's end, a commit-policy wait passing.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all_fields = "PascalCase")]
pub(super) enum Event {
    TaskEnds(TaskKey),
    ResyncEnds {
        vpg: usize,
        generation: u64,
    },
    /// A journal VM restore's commit-policy wait passed.
    RestoreTimeout {
        vpg: usize,
        task: TaskKey,
    },
    /// A failover's or move's commit-policy wait passed.
    LiveTimeout {
        vpg: usize,
        task: TaskKey,
    },
}

/// An event at its moment; `seq` keeps events of one moment in the order they were scheduled.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct Scheduled {
    pub(super) at: SimTime,
    pub(super) seq: u64,
    pub(super) event: Event,
}
