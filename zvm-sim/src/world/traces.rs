//! What the world keeps of what happened ([`Traces`]: events, recovery reports, dismissed alerts),
//! the alerts it raises with the rules that raise them, and each VPG's history-alert watch
//! ([`HistoryWatch`]). How they are recorded is `recorder.rs`; the history alerts' moments,
//! `history.rs`.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::clock::SimTime;
use super::ids::stable_guid;
use crate::decisions::{self, EVENTS_KEPT};

/// The world's events, recovery reports and dismissed alerts.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Traces {
    /// Recorded events, oldest first; at most [`EVENTS_KEPT`].
    pub events: Vec<Trace>,
    /// Recovery reports, oldest first; at most [`decisions::REPORTS_KEPT`].
    pub reports: Vec<RecoveryReport>,
    /// The identifiers of the alerts a user dismissed.
    pub dismissed: BTreeSet<String>,
    /// How many identifiers were handed out.
    pub issued: u64,
}

/// One event (`EventApi`), about a VPG.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Trace {
    pub id: String,
    pub at: SimTime,
    /// `EventTypeApi`.
    pub kind: u8,
    pub vpg: usize,
    pub description: String,
    pub succeeded: bool,
    pub user: String,
    /// The alert an `AlertTurnedOn` / `AlertTurnedOff` event is about.
    pub alert: Option<String>,
    /// The FLR session an FLR event is about.
    pub flr: Option<String>,
}

/// A recovery operation's report (`RecoveryReportApi`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RecoveryReport {
    pub id: String,
    pub vpg: usize,
    /// `FailoverTest`, `Failover` or `Move`.
    pub kind: String,
    pub started: SimTime,
    pub ended: SimTime,
    /// The checkpoint's moment, when the operation recovered to one.
    pub point_in_time: Option<SimTime>,
    pub succeeded: bool,
    pub initiated_by: String,
    pub notes: String,
    pub vms: Vec<usize>,
}

/// An alert of a VPG (`AlertApi`): on from `on`, off from `off` once it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alert {
    pub id: String,
    pub vpg: usize,
    pub rule: &'static AlertRule,
    pub on: SimTime,
    pub off: Option<SimTime>,
}

/// What raises an alert.
#[derive(Debug, PartialEq, Eq)]
pub enum Trigger {
    /// The VPG's RPO is past `factor` times its target.
    Rpo { factor: i64 },
    /// The VPG's journal holds less than `percent` % of its configured history.
    LowHistory { percent: i64 },
    /// The VPG's journal is at its hard limit.
    JournalFull,
}

/// An alert the simulator raises: its help identifier, level and entity, and what raises it.
#[derive(Debug, PartialEq, Eq)]
pub struct AlertRule {
    pub help: &'static str,
    pub level: &'static str,
    pub entity: &'static str,
    pub trigger: Trigger,
}

/// The RPO alerts, mildest first: a warning past the target, which gives way to an error past
/// twice the target ([`decisions::RPO_ERROR_FACTOR`]).
pub const RPO_RULES: [AlertRule; 2] = [
    AlertRule {
        help: "VPG0009",
        level: "Warning",
        entity: "Vpg",
        trigger: Trigger::Rpo { factor: 1 },
    },
    AlertRule {
        help: "VPG0010",
        level: "Error",
        entity: "Vpg",
        trigger: Trigger::Rpo {
            factor: decisions::RPO_ERROR_FACTOR,
        },
    },
];

/// The low-history alerts ("VPG has low journal history"), mildest first: a warning below 85 % of
/// the configured history, which gives way to an error below 75 %.
pub const HISTORY_RULES: [AlertRule; 2] = [
    AlertRule {
        help: "VPG0003",
        level: "Warning",
        entity: "Vpg",
        trigger: Trigger::LowHistory {
            percent: decisions::HISTORY_WARNING_PERCENT,
        },
    },
    AlertRule {
        help: "VPG0004",
        level: "Error",
        entity: "Vpg",
        trigger: Trigger::LowHistory {
            percent: decisions::HISTORY_ERROR_PERCENT,
        },
    },
];

/// "Journal reached configured limit", raised by the VRA that keeps the journal.
pub const JOURNAL_FULL: AlertRule = AlertRule {
    help: "VRA0039",
    level: "Error",
    entity: "Vra",
    trigger: Trigger::JournalFull,
};

/// Every alert the simulator raises (`GET /v1/alerts/helpidentifiers`).
pub fn alert_rules() -> impl Iterator<Item = &'static AlertRule> {
    RPO_RULES
        .iter()
        .chain(HISTORY_RULES.iter())
        .chain(std::iter::once(&JOURNAL_FULL))
}

impl AlertRule {
    /// The factor of the target RPO an RPO alert is raised past (1 for other alerts).
    pub(super) fn rpo_factor(&self) -> i64 {
        match self.trigger {
            Trigger::Rpo { factor } => factor,
            _ => 1,
        }
    }
}

impl Traces {
    pub(super) fn next_id(&mut self, kind: &str) -> String {
        self.issued += 1;
        stable_guid(kind, self.issued)
    }

    pub(super) fn push_event(&mut self, event: Trace) {
        if self.events.len() >= EVENTS_KEPT {
            self.events.drain(..EVENTS_KEPT / 10);
        }
        self.events.push(event);
    }
}

/// What a VPG's history alerts are, and up to when that is known.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct HistoryWatch {
    /// The moment the alerts below are known up to.
    pub settled_at: Option<SimTime>,
    /// The low-history alert on, if any.
    pub low: Option<AlertOn>,
    /// Since when the journal-full alert is on, if it is.
    pub full: Option<SimTime>,
}

/// A low-history alert that is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct AlertOn {
    /// Its position in [`HISTORY_RULES`] (0 the warning, 1 the error).
    pub rule: usize,
    /// When it turned on.
    pub since: SimTime,
}
