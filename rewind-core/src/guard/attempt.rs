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
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use super::insert::Inserted;
use super::{GuardContext, GuardNote, GuardReport, Outcome, Verdict, VpgGuard};
use crate::audit_journal::{
    Attempt, AuditJournal, JournalRecord, JournalVm, JournalVpg, OUTCOME_PENDING, Phase, RecordKind,
};
use crate::codes::{Code, STATE_COMPLETED};
use crate::error::RewindError;
use crate::protection::VpgProtection;
use crate::zvm::ZvmClient;
use crate::zvm::task::{ListedFrom, TaskWait, Watch, wait_listed, wait_task};

/// What an earlier attempt of this VM and change left at one VPG, from the journal.
#[derive(Debug, Clone)]
pub(crate) struct Earlier {
    /// The earlier attempt's id, or how its record names it.
    pub(crate) attempt: String,
    /// When its last line was written (this machine's clock).
    pub(crate) at: DateTime<Utc>,
    /// Its outcome at this VPG (`tagged`, `failed`, `pending`, `sent`, ...).
    pub(crate) outcome: String,
    /// The insert task it learnt at this VPG.
    pub(crate) task_id: Option<String>,
}

impl Earlier {
    /// What `record` left at the VPG `vpg_id`; `None` when it did not insert there.
    pub(crate) fn at_vpg(record: &JournalRecord, vpg_id: &str) -> Option<Earlier> {
        let line = record
            .vpgs
            .iter()
            .find(|v| v.vpg_id.eq_ignore_ascii_case(vpg_id) && v.tag.is_some())?;
        Some(Earlier {
            attempt: attempt_name(record),
            at: record.time,
            outcome: line.outcome.clone(),
            task_id: line.task_id.clone(),
        })
    }

    /// The instant (this process's clock) at which its last line was written.
    fn written(&self) -> Instant {
        let age = (Utc::now() - self.at).to_std().unwrap_or_default();
        Instant::now().checked_sub(age).unwrap_or_else(Instant::now)
    }
}

/// How a note names the attempt of `record`.
pub(crate) fn attempt_name(record: &JournalRecord) -> String {
    match &record.attempt {
        Some(a) => format!("attempt {}", a.id),
        None => format!("the guard journaled at {}", record.time.to_rfc3339()),
    }
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
    // The journal holds each note as its sentence: records written by older versions hold sentences
    // only, and reading any of them back must not depend on this version's variants.
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
        verdict: verdict_word(report.verdict),
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
    }
}

/// The journal line of one VPG of a guard's report, whose tag is `tag`.
fn vpg_line(v: &VpgGuard, tag: &str) -> JournalVpg {
    let mut line = JournalVpg::new(&v.vpg_id, &v.vpg_name, "");
    let tag = Some(tag.to_string());
    match &v.outcome {
        Outcome::Tagged {
            task_id,
            task_state,
            checkpoint_id,
            ..
        } => {
            line.outcome = "tagged".into();
            line.tag = tag;
            line.task_id = task_id.clone();
            line.task_state = task_state.as_ref().map(ToString::to_string);
            line.checkpoint_id = Some(checkpoint_id.clone());
        }
        Outcome::Skipped { reason } => {
            line.outcome = "skipped".into();
            line.detail = Some(reason.clone());
        }
        Outcome::Failed {
            task_id,
            task_state,
            complete_reason,
        } => {
            line.outcome = "failed".into();
            line.tag = tag;
            line.task_id = Some(task_id.clone());
            line.task_state = Some(task_state.to_string());
            line.detail = Some(complete_reason.clone());
        }
        Outcome::StillRunning {
            task_id,
            task_state,
            ..
        } => {
            line.outcome = "still_running".into();
            line.tag = tag;
            line.task_id = Some(task_id.clone());
            line.task_state = task_state.as_ref().map(ToString::to_string);
        }
        Outcome::Error {
            task_id, message, ..
        } => {
            line.outcome = "error".into();
            line.tag = tag;
            line.task_id = task_id.clone();
            line.detail = Some(message.clone());
        }
    }
    line
}

fn verdict_word(v: Verdict) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// How long a checkpoint that may be this guard's can take to show after its insert: four times the
/// listing lag learnt, within 2 to 30 s.
pub(crate) fn listing_grace(client: &ZvmClient) -> Duration {
    let (_, lag) = client.learnt();
    lag.map(|l| l * 4)
        .unwrap_or_default()
        .clamp(Duration::from_secs(2), Duration::from_secs(30))
}

/// Follows the insert task an earlier attempt learnt at this VPG. `Some` when that settles the VPG:
/// the task Completed (its checkpoint is adopted and still to be seen listed), or it still runs at the
/// deadline. `None` when an insert is still needed: it failed, or it could not be read (then the tag
/// is looked for before any insert).
pub(crate) async fn follow_earlier_task(
    ctx: &GuardContext<'_>,
    client: &ZvmClient,
    vpg: &VpgProtection,
    earlier: &Earlier,
    deadline: Instant,
    watch: &Watch<'_>,
    notes: &mut Vec<GuardNote>,
) -> Option<Inserted> {
    let id = earlier.task_id.as_deref()?;
    let (attempt, task_id) = (earlier.attempt.clone(), id.to_string());
    let (learnt, _) = client.learnt();
    match wait_task(client, id, Instant::now(), deadline, learnt, watch).await {
        Ok(TaskWait::Terminal(task)) => {
            ctx.own.record(&vpg.vpg_id, id, task.started, true);
            if task.state() == Some(STATE_COMPLETED) {
                notes.push(GuardNote::EarlierInsertCompleted { attempt, task_id });
                return Some(Inserted::Completed {
                    task,
                    task_id: id.to_string(),
                    at: Instant::now(),
                });
            }
            notes.push(GuardNote::EarlierInsertEnded {
                attempt,
                task_id,
                state: task.state().map(Code::task_state),
                reason: task.complete_reason.clone().unwrap_or_default(),
            });
            None
        }
        Ok(TaskWait::StillRunning(last)) => {
            notes.push(GuardNote::EarlierInsertStillRunning { attempt, task_id });
            Some(Inserted::Done(super::Outcome::StillRunning {
                task_id: id.to_string(),
                task_state: last.as_ref().and_then(|t| t.state()).map(Code::task_state),
                stage: crate::progress::Stage::Running,
            }))
        }
        Err(e) => {
            notes.push(GuardNote::EarlierInsertUnreadable {
                attempt,
                task_id,
                error: e.to_string(),
            });
            None
        }
    }
}

/// Looks for `tag` among the VPG's checkpoints, until `until` (at least once): a checkpoint found
/// is adopted. `since_earlier` bounds the listing for a tag an earlier attempt wrote.
pub(crate) async fn look_for_tag(
    client: &ZvmClient,
    vpg: &VpgProtection,
    tag: &str,
    since: Option<DateTime<Utc>>,
    until: Instant,
    notes: &mut Vec<GuardNote>,
) -> Result<Option<Inserted>, RewindError> {
    let found = wait_listed(client, &vpg.vpg_id, tag, since, ListedFrom::Now, until).await?;
    Ok(found.map(|(cp, _)| {
        notes.push(GuardNote::TagAlreadyListed {
            checkpoint_id: cp.checkpoint_identifier.clone(),
        });
        Inserted::Found {
            task_id: None,
            checkpoint_id: cp.checkpoint_identifier.unwrap_or_default(),
            timestamp: cp.time_stamp,
        }
    }))
}

/// Until when a look for an earlier attempt's tag waits: a grace after its last line, when that is
/// recent (its insert may still be on its way to being listed); else one look.
pub(crate) fn earlier_look_until(client: &ZvmClient, earlier: &Earlier) -> Instant {
    let grace = if earlier.outcome == OUTCOME_PENDING {
        // The insert may have been sent just before the process died, so it may still run.
        listing_grace(client) + client.learnt().0.unwrap_or_default()
    } else {
        listing_grace(client)
    };
    earlier.written() + grace
}
