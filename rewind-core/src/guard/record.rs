//! A guard's attempt in the audit journal, and what it takes over from an earlier attempt of the
//! same VM and change.
//!
//! The attempt journals its intent before the first insert, each insert task's id as it is learnt,
//! and its verdict (see [`crate::audit_journal`]). An earlier attempt of the same VM and change that is
//! still within the hook's window, whatever its verdict (guarded, failed, still running, or
//! interrupted by a killed process), is taken over: its tag is kept, and at each VPG what it
//! inserted is followed or adopted instead of inserted again. So one change ends with at most one
//! tagged checkpoint per VPG, however often it is guarded.

use std::sync::Mutex as StdMutex;
use std::time::Instant;

use chrono::{DateTime, Utc};

use super::note::GuardNote;
use super::report::{GuardReport, Outcome, Verdict, VpgGuard};
use crate::audit_journal::{
    Attempt, AuditJournal, JournalOutcome, JournalRecord, JournalVerdict, JournalVm, JournalVpg,
    Phase, RecordKind,
};

/// What an earlier attempt of this VM and change left at one VPG, from the journal.
#[derive(Debug, Clone)]
pub(crate) struct Earlier {
    /// How a note names the earlier attempt.
    pub(crate) attempt: String,
    /// When its last line was written (this machine's clock).
    pub(crate) at: DateTime<Utc>,
    /// Its outcome at this VPG.
    pub(crate) outcome: JournalOutcome,
    /// The insert task it learnt at this VPG.
    pub(crate) task_id: Option<String>,
}

impl Earlier {
    /// What the attempt of `record` left at the VPG `vpg_id`; `None` when it did not insert there.
    pub(crate) fn at_vpg(record: &JournalRecord, vpg_id: &str) -> Option<Earlier> {
        let attempt = record.attempt.as_ref()?;
        let line = record
            .vpgs
            .iter()
            .find(|v| v.vpg_id.eq_ignore_ascii_case(vpg_id) && v.tag.is_some())?;
        Some(Earlier {
            attempt: attempt_name(attempt),
            at: record.time,
            outcome: line.outcome.clone(),
            task_id: line.task_id.clone(),
        })
    }

    /// The instant (this process's clock) at which its last line was written.
    pub(super) fn written(&self) -> Instant {
        let age = (Utc::now() - self.at).to_std().unwrap_or_default();
        Instant::now().checked_sub(age).unwrap_or_else(Instant::now)
    }
}

/// How a note names `attempt`.
pub(crate) fn attempt_name(attempt: &Attempt) -> String {
    format!("attempt {}", attempt.id)
}

/// A new attempt id: 16 hexadecimal digits.
pub(crate) fn new_attempt_id() -> String {
    format!("{:016x}", rand::random::<u64>())
}

/// The journal lines of one attempt after its intent.
pub(crate) struct AttemptLog<'a> {
    pub(crate) journal: &'a AuditJournal,
    pub(crate) intent: JournalRecord,
    /// Task lines that could not be written, for the verdict's notes.
    pub(crate) failures: StdMutex<Vec<GuardNote>>,
    /// Whether the change lock is still this attempt's: no insert is sent once it is not.
    pub(crate) fence: crate::audit_journal::Fence,
}

impl AttemptLog<'_> {
    /// Journals the task id of an insert at `vpg_id`, so a process killed from then on leaves its
    /// task id for the next attempt to follow. A line that cannot be written is remembered for the
    /// verdict (the intent already accounts for the insert).
    pub(crate) async fn sent(&self, vpg_id: &str, task_id: &str) {
        let line = JournalRecord::sent(&self.intent, vpg_id, task_id);
        if let Err(e) = self.journal.append_unsynced(line).await {
            let mut failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
            failures.push(GuardNote::TaskIdNotJournaled {
                task_id: task_id.to_string(),
                error: e.to_string(),
            });
        }
    }
}

/// The verdict line of a guard in the audit journal.
pub(crate) fn verdict_line(report: &GuardReport) -> JournalRecord {
    let vpgs = report
        .vpgs
        .iter()
        .map(|v| vpg_line(v, &report.tag))
        .collect();
    // The journal holds each note as its sentence, as the report's JSON does: a later version reads
    // it back without this version's variants.
    let mut notes: Vec<String> = report.notes.iter().map(ToString::to_string).collect();
    for v in &report.vpgs {
        notes.extend(v.notes.iter().map(|n| format!("{}: {n}", v.vpg_name)));
    }
    JournalRecord {
        time: Utc::now(),
        kind: RecordKind::Guard,
        agent: report.agent.clone(),
        person: report.person.clone(),
        action: report.action.clone(),
        change_id: report.change_id.clone(),
        vm: JournalVm::from(&report.vm),
        verdict: report.verdict.into(),
        vpgs,
        notes,
        details: None,
        sites: report.sites.clone(),
        attempt: Some(Attempt {
            id: report.attempt_id.clone(),
            phase: Phase::Verdict,
            takes_over: report.takes_over.clone(),
            taken_over_by: None,
        }),
        approved_by: None,
    }
}

/// The journal line of one VPG of a guard's report, whose tag is `tag`.
fn vpg_line(v: &VpgGuard, tag: &str) -> JournalVpg {
    let line = |outcome| JournalVpg::new(&v.vpg_id, &v.vpg_name, outcome);
    let tag = Some(tag.to_string());
    match &v.outcome {
        Outcome::Tagged {
            task_id,
            task_state,
            checkpoint_id,
            timestamp,
        } => JournalVpg {
            tag,
            task_id: task_id.clone(),
            task_state: task_state.as_ref().map(ToString::to_string),
            checkpoint_id: Some(checkpoint_id.clone()),
            checkpoint_time: *timestamp,
            way_back: v.way_back.clone(),
            ..line(JournalOutcome::Tagged)
        },
        Outcome::Skipped { reason } => JournalVpg {
            detail: Some(reason.clone()),
            ..line(JournalOutcome::Skipped)
        },
        Outcome::Failed {
            task_id,
            task_state,
            complete_reason,
        } => JournalVpg {
            tag,
            task_id: Some(task_id.clone()),
            task_state: Some(task_state.to_string()),
            detail: Some(complete_reason.clone()),
            ..line(JournalOutcome::Failed)
        },
        Outcome::StillRunning {
            task_id,
            task_state,
            ..
        } => JournalVpg {
            tag,
            task_id: Some(task_id.clone()),
            task_state: task_state.as_ref().map(ToString::to_string),
            ..line(JournalOutcome::StillRunning)
        },
        Outcome::Error { problem } => JournalVpg {
            tag,
            task_id: problem.task_id().map(str::to_string),
            detail: Some(problem.to_string()),
            ..line(JournalOutcome::Error)
        },
    }
}

impl From<Verdict> for JournalVerdict {
    fn from(v: Verdict) -> JournalVerdict {
        match v {
            Verdict::Guarded => JournalVerdict::Guarded,
            Verdict::NotGuarded => JournalVerdict::NotGuarded,
            Verdict::StillRunning => JournalVerdict::StillRunning,
        }
    }
}
