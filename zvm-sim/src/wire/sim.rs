//! The views of the `/_sim` control API, which no ZVM has: the clock, timings, reset, the call log,
//! the tasks and retention sets of both sites, VPG and journal states, guest files. Kept apart
//! from the ZVM's views so that nothing a ZVM client reads depends on them.

use serde::Serialize;

use super::zvm::CheckpointView;
use crate::world::Call;
use crate::world::clock::SimTime;

/// `GET /_sim/clock`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ClockView {
    pub now: SimTime,
    pub scale: f64,
}

/// `GET|POST /_sim/timing`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct TimingView {
    pub task_duration_ms: i64,
    pub listing_lag_ms: i64,
}

/// `POST /_sim/reset`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ResetView {
    pub seed: u64,
    pub now: SimTime,
}

/// `GET /_sim/calls`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct CallView {
    pub seq: u64,
    pub site: String,
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    pub status: u16,
    pub task_id: Option<String>,
    /// The fault rules that fired: `[{"Rule": 1, "Action": "LoseResponse"}]`.
    pub faults: Vec<FaultNoteView>,
    /// No route matched it.
    pub unmatched: bool,
}

/// A fault rule that fired on a call.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct FaultNoteView {
    pub rule: u64,
    pub action: &'static str,
}

impl From<&Call> for CallView {
    fn from(c: &Call) -> Self {
        CallView {
            seq: c.seq,
            site: c.site.clone(),
            method: c.method.clone(),
            path: c.path.clone(),
            query: c.query.clone(),
            status: c.status,
            task_id: c.task_id.clone(),
            faults: c
                .faults
                .iter()
                .map(|note| FaultNoteView {
                    rule: note.rule,
                    action: note.action.name(),
                })
                .collect(),
            unmatched: c.unmatched,
        }
    }
}

/// `GET /_sim/tasks`: every task of both sites.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct SimTaskView {
    pub site: String,
    pub task_identifier: String,
    #[serde(rename = "Type")]
    pub kind: &'static str,
    pub vpg_identifier: String,
    pub vpg_name: String,
    pub checkpoint_name: String,
    pub state: u8,
    pub progress: u8,
    pub complete_reason: String,
    pub started: SimTime,
    pub completed: Option<SimTime>,
    /// What the task was asked to do, per type: `CheckpointIdentifier` and `VmIdentifiers` of a
    /// failover test, clone or failover; `FlrSessionIdentifier` of an FLR task;
    /// `FailoverTestSuccess` and `FailoverTestSummary` of a test's stop; `CommitPolicy`.
    pub details: serde_json::Value,
}

/// `GET /_sim/vpgs`, and the answer of `POST /_sim/vpgs/{id}/resync` and `/status`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct VpgStateView {
    pub vpg_identifier: String,
    pub vpg_name: String,
    pub status: u8,
    pub sub_status: u8,
    pub resync_until: Option<SimTime>,
}

/// `GET /_sim/vpgs/{id}/journal`, and the answer of `POST /_sim/vpgs/{id}/journal-burst`: how
/// much history the journal holds against its configured history and its hard limit.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct JournalStateView {
    pub vpg_identifier: String,
    pub vpg_name: String,
    /// The status the VPG shows (HistoryNotMeetingSLA once its mature journal falls short).
    pub status: u8,
    pub configured_history_in_minutes: i64,
    /// `ActualHistoryInMinutes`, as `GET /v1/vpgs/{id}` shows it.
    pub actual_history_in_minutes: i64,
    /// The journal's hard limit, in minutes of the VPG's usual writing.
    pub limit_in_minutes: i64,
    /// The bursts of writes the journal holds now, in minutes of usual writing.
    pub burst_minutes: f64,
    /// Whether the journal is at its hard limit (judged once it has written for its history).
    pub full: bool,
    pub earliest_checkpoint: Option<CheckpointView>,
}

/// `GET /_sim/retention-sets`: a retention set of either site, as the simulator keeps it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct SimRetentionSetView {
    pub retention_set_identifier: String,
    pub vpg_identifier: String,
    pub vpg_name: String,
    pub repository_identifier: String,
    pub repository_name: String,
    /// The repository's site.
    pub site: String,
    /// The checkpoint it was copied from, and its tag.
    pub checkpoint_identifier: String,
    pub tag: Option<String>,
    pub point_in_time: SimTime,
    /// When its run ended.
    pub written: SimTime,
    pub expiry_date: SimTime,
    pub vm_identifiers: Vec<String>,
    pub initiated_by: String,
}

/// `GET /_sim/vms/{id}/files` without a path, and the answer to `PUT`/`DELETE`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct FileView {
    pub path: String,
    pub size: usize,
    pub last_write_time: SimTime,
}
