//! Progress of Zerto tasks as rewind waits for them, for the CLI's progress line and MCP progress
//! notifications.

use std::time::Duration;

use serde::Serialize;

use crate::codes::Code;

/// What rewind is doing for one VPG.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Waiting for this process's earlier insert into the same VPG, or another client's.
    Queued,
    /// Sending the insert.
    Inserting,
    /// Waiting for the Zerto task to end.
    Running,
    /// The task Completed; waiting until the checkpoint is listed.
    Listing,
    /// Finished, one way or the other.
    Done,
}

/// One progress update of one VPG's work.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TaskProgress {
    /// The configured site whose ZVM runs the task.
    pub site: String,
    /// The VPG.
    pub vpg_id: String,
    /// The VPG's name.
    pub vpg_name: String,
    /// The Zerto task, once there is one.
    pub task_id: Option<String>,
    /// The task's type, e.g. `InsertTaggedCP`.
    pub task_type: String,
    /// What rewind is doing.
    pub stage: Stage,
    /// The task's last known state.
    pub state: Option<Code>,
    /// The task's last known progress, 0..100.
    pub progress: Option<u8>,
    /// Time since this VPG's work began.
    #[serde(rename = "elapsed_ms", serialize_with = "as_millis")]
    pub elapsed: Duration,
}

fn as_millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(d.as_millis() as u64)
}

/// A duration in milliseconds for people: `850 ms`, `2.4 s`.
pub fn elapsed_text(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else {
        format!("{:.1} s", ms as f64 / 1000.0)
    }
}

/// An exchange with a ZVM that has not ended yet: what a person watching is waiting for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiting {
    /// The configured site.
    pub site: String,
    /// What is asked: `signing in`, `GET /v1/vms`.
    pub what: String,
    /// For how long.
    pub since: Duration,
}

impl std::fmt::Display for Waiting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} ({})",
            self.site,
            self.what,
            elapsed_text(self.since.as_millis() as u64)
        )
    }
}

/// Receives progress updates. Called from the waiting code between polls; keep it quick.
pub trait ProgressSink: Send + Sync {
    /// One update.
    fn update(&self, progress: &TaskProgress);
}

/// A sink that ignores every update.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl ProgressSink for NoProgress {
    fn update(&self, _progress: &TaskProgress) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(elapsed_text(850), "850 ms");
        assert_eq!(elapsed_text(2400), "2.4 s");
    }
}
