//! How much history one VPG's journal keeps, as its ZVM says, and why it may hold less than
//! configured.

use chrono::{DateTime, Duration, Utc};

/// VPG status NotMeetingSLA: neither the RPO nor the history is met.
const NOT_MEETING_SLA: i64 = 2;
/// VPG status HistoryNotMeetingSLA: the RPO is met, the history is not.
const HISTORY_NOT_MEETING_SLA: i64 = 4;

/// The alerts that say a VPG's journal holds, or soon will hold, less history than configured:
/// low journal history (warning below 85 % of it, error below 75 %) and a journal at its hard limit.
pub const JOURNAL_ALERTS: [&str; 3] = ["VPG0003", "VPG0004", "VRA0039"];

/// How much history one VPG's journal keeps, read from its ZVM ([`crate::ZvmClient::vpg_history`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VpgHistory {
    /// The VPG's status.
    pub status: Option<i64>,
    /// `ConfiguredHistoryInMinutes`.
    pub configured_minutes: Option<i64>,
    /// `ActualHistoryInMinutes`.
    pub actual_minutes: Option<i64>,
    /// The time of the oldest checkpoint the journal holds.
    pub earliest: Option<DateTime<Utc>>,
    /// The journal alerts on for it (`VPG0004`, ...).
    pub alerts: Vec<String>,
}

impl VpgHistory {
    /// The ZVM's time when this was read: its journal's earliest checkpoint plus the history it
    /// holds. Times the ZVM gives are compared with this rather than with this machine's clock.
    pub fn zvm_now(&self) -> Option<DateTime<Utc>> {
        Some(self.earliest? + Duration::minutes(self.actual_minutes?))
    }

    /// Why the journal holds less than its configured history, when it does and is not merely young.
    pub fn short_because(&self) -> Option<String> {
        let status = match self.status {
            Some(HISTORY_NOT_MEETING_SLA) => Some("its status is HistoryNotMeetingSLA"),
            Some(NOT_MEETING_SLA) => Some("its status is NotMeetingSLA"),
            _ => None,
        };
        let alerts =
            (!self.alerts.is_empty()).then(|| format!("alert {} is on", self.alerts.join(", ")));
        match (status, alerts) {
            (Some(s), Some(a)) => Some(format!("{s} and {a}")),
            (Some(s), None) => Some(s.to_string()),
            (None, Some(a)) => Some(a),
            (None, None) => None,
        }
    }
}
