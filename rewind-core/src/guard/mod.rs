//! The guard: pin a tagged checkpoint in every protecting VPG of one VM before it is changed.
//!
//! For each protecting VPG, in parallel across VPGs:
//! 1. take the VPG's place in this process's queue (a VPG's lock is held from the insert until its task
//!    is terminal, so two guards of VMs that share a VPG never insert at once);
//! 2. if another insert is running at the VPG (another client's, or one this process left running
//!    when an earlier guard's deadline came), wait for it first;
//! 3. `POST /v1/vpgs/{id}/checkpoints` and read the task until it is terminal; refuse unless it
//!    Completed. If it failed because another client's insert was running (the back-to-back rule), wait
//!    for that insert and try again, a bounded number of times, and say so;
//! 4. if the insert's outcome is unknown (no answer came, or one that could not be read, or a 5xx), look
//!    for the tag among the VPG's checkpoints and recent insert tasks before deciding to insert again:
//!    never two checkpoints for one guard;
//! 5. release the VPG, then wait until the checkpoint is listed.
//!
//! One deadline bounds the whole guard; when it comes, the task ids still running are returned, never
//! dropped. The verdict is `guarded` only when at least one VPG is protecting and every protecting VPG
//! was tagged.

use std::collections::HashMap;
use std::sync::{Arc, Mutex as StdMutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};

mod attempt;

use crate::codes::{Code, STATE_COMPLETED, STATE_IN_PROGRESS};
use crate::config::GuardSettings;
use crate::error::{ErrorKind, RewindError};
use crate::journal::change_lock::{ChangeLock, ChangeLockError};
use crate::journal::{GuardIntent, Journal, JournalError, JournalRecord};
use crate::progress::{ProgressSink, Stage, elapsed_text};
use crate::protection::{self, Protection, VmRef, VpgProtection};
use crate::zvm::ZvmClient;
use crate::zvm::task::{TaskWait, Watch, wait_listed, wait_task};
use crate::zvm::wire::{INSERT_TASK_TYPE, Task};
use attempt::{AttemptLog, Earlier};

/// The longest agent name in a tag.
pub const MAX_AGENT: usize = 30;
/// The longest action in a tag.
pub const MAX_ACTION: usize = 60;
/// The longest VM name in a tag (vSphere's own limit).
pub const MAX_VM: usize = 80;
/// The longest change id in a tag.
pub const MAX_CHANGE_ID: usize = 40;

/// What a guard is asked to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GuardRequest {
    /// The VM: name, host name, IP address or vmIdentifier.
    pub vm: String,
    /// Who is about to change it, e.g. `claude-code`.
    pub agent: String,
    /// What it is about to do, e.g. `upgrade nginx`.
    pub action: String,
    /// The change id that ties the tags of this change together.
    pub change_id: String,
}

/// The parts of a tag, as built or as read back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct TagParts {
    /// The agent.
    pub agent: String,
    /// The action.
    pub action: String,
    /// The VM's name.
    pub vm: String,
    /// The change id.
    pub change_id: String,
    /// When the guard began (UTC), as written in the tag.
    pub time: String,
}

/// Checks one part of a tag: not empty, no `|`, no control character, bounded length.
pub fn check_part<'a>(
    field: &'static str,
    value: &'a str,
    max: usize,
) -> Result<&'a str, RewindError> {
    let v = value.trim();
    let problem = if v.is_empty() {
        Some("it is empty".to_string())
    } else if v.contains('|') {
        Some("it contains `|`, which separates the parts of a tag; leave it out or use another character".to_string())
    } else if v.chars().any(char::is_control) {
        Some(
            "it contains a control character (such as a newline or tab); give it on one line"
                .to_string(),
        )
    } else if v.chars().count() > max {
        Some(format!(
            "it is {} characters long and a tag allows {max}; shorten it",
            v.chars().count()
        ))
    } else {
        None
    };
    match problem {
        Some(problem) => Err(RewindError::InvalidInput { field, problem }),
        None => Ok(v),
    }
}

/// Builds the tag `ai:<agent> | <action> | vm=<vm> | change=<id> | <utc>` after checking every part.
pub fn build_tag(
    agent: &str,
    action: &str,
    vm: &str,
    change_id: &str,
    at: DateTime<Utc>,
) -> Result<String, RewindError> {
    let agent = check_part("agent", agent, MAX_AGENT)?;
    let action = check_part("action", action, MAX_ACTION)?;
    let vm = check_part("vm", vm, MAX_VM)?;
    let change_id = check_part("change_id", change_id, MAX_CHANGE_ID)?;
    Ok(format!(
        "ai:{agent} | {action} | vm={vm} | change={change_id} | {}",
        at.to_rfc3339_opts(SecondsFormat::Secs, true)
    ))
}

/// Reads a tag written by [`build_tag`]; `None` for any other tag.
pub fn parse_tag(tag: &str) -> Option<TagParts> {
    let parts: Vec<&str> = tag.split(" | ").collect();
    let [agent, action, vm, change, time] = parts.as_slice() else {
        return None;
    };
    Some(TagParts {
        agent: agent.strip_prefix("ai:")?.to_string(),
        action: action.to_string(),
        vm: vm.strip_prefix("vm=")?.to_string(),
        change_id: change.strip_prefix("change=")?.to_string(),
        time: time.to_string(),
    })
}

/// The verdict of a guard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// At least one VPG is protecting and every protecting VPG was tagged: the change may go ahead.
    Guarded,
    /// Some protecting VPG was not tagged, or none is protecting: do not rely on Zerto for this change.
    NotGuarded,
    /// The deadline came with tasks still running; their ids are in the report.
    StillRunning,
}

/// What happened at one VPG.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// The tagged checkpoint exists: its task Completed and it is listed.
    Tagged {
        /// The insert task (unknown only when an insert of unknown outcome was reconciled without
        /// finding its task).
        task_id: Option<String>,
        /// The task's state, Completed.
        task_state: Option<Code>,
        /// The checkpoint.
        checkpoint_id: String,
        /// The checkpoint's time (the ZVM's clock).
        timestamp: Option<DateTime<Utc>>,
    },
    /// The VPG is not protecting, so it was not tagged.
    Skipped {
        /// Why.
        reason: String,
    },
    /// The insert task ended Failed or Stopped: there is no checkpoint.
    Failed {
        /// The task.
        task_id: String,
        /// Its terminal state.
        task_state: Code,
        /// Its `CompleteReason`.
        complete_reason: String,
    },
    /// The deadline came first; the task was not stopped.
    StillRunning {
        /// The task still running (or Completed but not yet listed).
        task_id: String,
        /// Its last known state.
        task_state: Option<Code>,
        /// `running` (the task) or `listing` (Completed, not yet listed).
        stage: Stage,
    },
    /// Something went wrong around the insert; `task_id` is kept when there was one.
    Error {
        /// The task, if one was started.
        task_id: Option<String>,
        /// The class of what went wrong, as [`RewindError::kind`] gives it: a ZVM that refused the
        /// insert is `refused`, one that could not be reached or followed is `connection`.
        kind: ErrorKind,
        /// What went wrong and what to do.
        message: String,
    },
}

/// One VPG's part of a guard.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct VpgGuard {
    /// The VPG.
    pub vpg_id: String,
    /// Its name.
    pub vpg_name: String,
    /// The configured site whose ZVM was called.
    pub site: String,
    /// What happened.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// Retries, waits and reconciliations, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl VpgGuard {
    /// What went wrong at this VPG, in one line naming it: a failed task with its reason, an error,
    /// or a task still running. `None` when it was tagged or skipped.
    pub fn problem(&self) -> Option<String> {
        let name = &self.vpg_name;
        match &self.outcome {
            Outcome::Failed {
                task_id,
                task_state,
                complete_reason,
            } => Some(format!(
                "VPG {name}: task {task_id} ended {task_state}: {complete_reason}"
            )),
            Outcome::Error { message, .. } => Some(format!("VPG {name}: {message}")),
            Outcome::StillRunning { task_id, .. } => Some(format!(
                "VPG {name}: task {task_id} is still running (not stopped)"
            )),
            Outcome::Tagged { .. } | Outcome::Skipped { .. } => None,
        }
    }
}

/// The result of a guard.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct GuardReport {
    /// The verdict.
    pub verdict: Verdict,
    /// The tag written into every protecting VPG.
    pub tag: String,
    /// The VM.
    pub vm: VmRef,
    /// The agent.
    pub agent: String,
    /// The action.
    pub action: String,
    /// The change id.
    pub change_id: String,
    /// Every VPG of the VM, tagged or not.
    pub vpgs: Vec<VpgGuard>,
    /// How long the guard took.
    pub elapsed_ms: u64,
    /// Notes about the guard as a whole.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// This attempt's id in the audit journal.
    pub attempt_id: String,
    /// The earlier attempt of this VM and change that this guard took over, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub takes_over: Option<String>,
    /// Why the verdict could not be written to the audit journal. The guard is then
    /// `not_guarded` whatever Zerto holds, since the hook decides from the journal: each VPG's outcome
    /// still says what is in Zerto.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub journal_error: Option<String>,
}

impl GuardReport {
    /// Marks the report as not journaled: the verdict could not be written, so a guarded change is
    /// not guarded (the hook will deny it), and the error says where and what to do.
    pub(crate) fn not_journaled(&mut self, e: &JournalError) {
        let tagged = self
            .vpgs
            .iter()
            .any(|v| matches!(v.outcome, Outcome::Tagged { .. }));
        let what = if tagged {
            "the tagged checkpoints listed here exist in Zerto, but"
        } else {
            "what this guard did is listed here, but"
        };
        self.journal_error = Some(format!(
            "{what} its verdict could not be written to the audit journal ({e}); the hook denies changes to {} until a guarded record is there: free space or fix the journal, then guard again with change id {} (what was inserted is adopted, not inserted twice)",
            self.vm.name, self.change_id
        ));
        if self.verdict == Verdict::Guarded {
            self.verdict = Verdict::NotGuarded;
        }
    }

    /// One line for humans: the verdict, the VM, the change, how many protecting VPGs were tagged, and
    /// how long it took.
    pub fn headline(&self) -> String {
        let verdict = match self.verdict {
            Verdict::Guarded => "GUARDED",
            Verdict::NotGuarded => "NOT GUARDED",
            Verdict::StillRunning => "STILL RUNNING",
        };
        let protecting = self
            .vpgs
            .iter()
            .filter(|v| !matches!(v.outcome, Outcome::Skipped { .. }))
            .count();
        let tagged = self
            .vpgs
            .iter()
            .filter(|v| matches!(v.outcome, Outcome::Tagged { .. }))
            .count();
        let mut what = if protecting == 0 {
            "no VPG of it is protecting, so nothing was tagged".to_string()
        } else {
            format!("{tagged} of {protecting} protecting VPG(s) tagged")
        };
        if self.journal_error.is_some() {
            what.push_str(", but not journaled");
        }
        format!(
            "{verdict}: {} ({}) for change {}: {what}, in {}",
            self.vm.name,
            self.vm.id,
            self.change_id,
            elapsed_text(self.elapsed_ms)
        )
    }

    /// The headline, the tag, then one line per VPG with its notes.
    pub fn summary(&self) -> String {
        let mut out = format!("{}\n  tag: {}", self.headline(), self.tag);
        for v in &self.vpgs {
            let what = match &v.outcome {
                Outcome::Tagged {
                    task_id,
                    checkpoint_id,
                    ..
                } => format!(
                    "tagged, checkpoint {checkpoint_id} (task {})",
                    task_id.as_deref().unwrap_or("unknown")
                ),
                Outcome::Skipped { reason } => format!("skipped: {reason}"),
                Outcome::Failed {
                    task_id,
                    task_state,
                    complete_reason,
                } => format!("FAILED: task {task_id} ended {task_state}: {complete_reason}"),
                Outcome::StillRunning { task_id, stage, .. } => format!(
                    "still running: task {task_id} ({})",
                    if *stage == Stage::Listing {
                        "Completed, not yet listed"
                    } else {
                        "in progress"
                    }
                ),
                Outcome::Error {
                    task_id, message, ..
                } => match task_id {
                    Some(t) => format!("ERROR (task {t}): {message}"),
                    None => format!("ERROR: {message}"),
                },
            };
            out.push_str(&format!("\n  {}: {what}", v.vpg_name));
            for n in &v.notes {
                out.push_str(&format!("\n    note: {n}"));
            }
        }
        for n in &self.notes {
            out.push_str(&format!("\n  note: {n}"));
        }
        out
    }

    /// The class of a guard that is not `guarded`, for exit codes and error results; `None` when it
    /// is. A verdict that could not be journaled makes it `internal`; a failed insert task makes it
    /// `task_failed`; otherwise an error around an insert gives its
    /// own kind (the first such VPG's: a ZVM that refused the insert is `refused`, one that could not be
    /// reached is `connection`); tasks still running when the deadline came make it `still_running` (they
    /// were not stopped and have not failed); a VM with no protecting VPG is `refused` by the rule that
    /// only protecting VPGs are tagged.
    pub fn error_kind(&self) -> Option<ErrorKind> {
        let outcomes = || self.vpgs.iter().map(|v| &v.outcome);
        if self.journal_error.is_some() {
            return Some(ErrorKind::Internal);
        }
        match self.verdict {
            Verdict::Guarded => None,
            Verdict::StillRunning => Some(ErrorKind::StillRunning),
            Verdict::NotGuarded => {
                if outcomes().any(|o| matches!(o, Outcome::Failed { .. })) {
                    return Some(ErrorKind::TaskFailed);
                }
                let error = outcomes().find_map(|o| match o {
                    Outcome::Error { kind, .. } => Some(*kind),
                    _ => None,
                });
                Some(error.unwrap_or(ErrorKind::Refused))
            }
        }
    }

    /// What went wrong, one line per VPG that is neither tagged nor skipped
    /// ([`VpgGuard::problem`]); empty when the guard is `guarded` or no VPG is protecting.
    pub fn problems(&self) -> Vec<String> {
        self.vpgs.iter().filter_map(VpgGuard::problem).collect()
    }

    /// The task ids still running, for a caller that wants to follow them.
    pub fn running_task_ids(&self) -> Vec<&str> {
        self.vpgs
            .iter()
            .filter_map(|v| match &v.outcome {
                Outcome::StillRunning { task_id, .. } => Some(task_id.as_str()),
                _ => None,
            })
            .collect()
    }
}

/// The per-VPG queue of this process: one async lock per VPG. Tokio's mutex is fair, so guards wait in
/// the order they arrived.
#[derive(Debug, Default)]
pub(crate) struct VpgQueue {
    locks: StdMutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl VpgQueue {
    fn slot(&self, vpg_id: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut locks = self.locks.lock().unwrap_or_else(|p| p.into_inner());
        locks.entry(vpg_id.to_lowercase()).or_default().clone()
    }
}

/// The insert tasks this process started, per VPG: they are never mistaken for another client's, and
/// the newest one's start bounds how far back an insert of unknown outcome can be.
#[derive(Debug, Default)]
pub(crate) struct OwnTasks {
    by_vpg: StdMutex<HashMap<String, Vec<OwnTask>>>,
}

/// One insert task of this process.
#[derive(Debug)]
struct OwnTask {
    id: String,
    /// Its start (the ZVM's clock), once known.
    started: Option<DateTime<Utc>>,
    /// Seen terminal. A task left running when its guard's deadline came is not, and the next guard
    /// of its VPG waits for it as for another client's.
    ended: bool,
}

impl OwnTasks {
    fn record(&self, vpg_id: &str, task_id: &str, started: Option<DateTime<Utc>>, ended: bool) {
        let mut m = self.by_vpg.lock().unwrap_or_else(|p| p.into_inner());
        let list = m.entry(vpg_id.to_lowercase()).or_default();
        match list.iter_mut().find(|t| t.id == task_id) {
            Some(t) => {
                t.started = started.or(t.started);
                t.ended |= ended;
            }
            None => list.push(OwnTask {
                id: task_id.to_string(),
                started,
                ended,
            }),
        }
        // Only the recent past matters; keep the memory small.
        if list.len() > 64 {
            list.remove(0);
        }
    }

    fn contains(&self, vpg_id: &str, task_id: &str) -> bool {
        self.ended(vpg_id, task_id).is_some()
    }

    /// Whether this process's task was seen terminal; `None` when it is not this process's.
    fn ended(&self, vpg_id: &str, task_id: &str) -> Option<bool> {
        let m = self.by_vpg.lock().unwrap_or_else(|p| p.into_inner());
        m.get(&vpg_id.to_lowercase())
            .and_then(|l| l.iter().find(|t| t.id == task_id))
            .map(|t| t.ended)
    }

    fn newest_start(&self, vpg_id: &str) -> Option<DateTime<Utc>> {
        let m = self.by_vpg.lock().unwrap_or_else(|p| p.into_inner());
        m.get(&vpg_id.to_lowercase())
            .and_then(|l| l.iter().filter_map(|t| t.started).max())
    }
}

/// What a guard needs from the facade.
pub(crate) struct GuardContext<'a> {
    pub(crate) clients: &'a [Arc<ZvmClient>],
    pub(crate) queue: &'a VpgQueue,
    pub(crate) own: &'a OwnTasks,
    pub(crate) settings: &'a GuardSettings,
    /// The audit journal: the intent, the task ids and the verdict go there, and an earlier attempt
    /// of the same VM and change is read from it.
    pub(crate) journal: &'a Journal,
    /// The hook's window: an earlier attempt younger than this is taken over.
    pub(crate) window: Duration,
}

impl GuardContext<'_> {
    fn client(&self, site: &str) -> Option<&Arc<ZvmClient>> {
        self.clients.iter().find(|c| c.name() == site)
    }
}

/// Runs a guard: checks, finds the VM, takes its change lock, takes over an earlier attempt of the
/// same change if there is one, journals its intent, tags every protecting VPG, and journals its
/// verdict.
pub(crate) async fn guard(
    ctx: &GuardContext<'_>,
    req: &GuardRequest,
    sink: &dyn ProgressSink,
) -> Result<GuardReport, RewindError> {
    let began = Instant::now();
    let deadline = began + ctx.settings.deadline;
    let at = Utc::now();
    // Every part is checked before anything is sent, the VM query included (the tag carries the name
    // the query resolves to, checked again below).
    check_part("agent", &req.agent, MAX_AGENT)?;
    check_part("action", &req.action, MAX_ACTION)?;
    let change_id = check_part("change_id", &req.change_id, MAX_CHANGE_ID)?;
    check_part("vm", &req.vm, 255)?;
    let protection = tokio::time::timeout_at(
        deadline.into(),
        protection::find_protection(ctx.clients, &req.vm),
    )
    .await
    .map_err(|_| RewindError::Deadline {
        what: format!(
            "looking up {:?} at the ZVMs, before anything was inserted",
            req.vm.trim()
        ),
        waited_secs: ctx.settings.deadline.as_secs_f64(),
    })??;
    let fresh_tag = build_tag(&req.agent, &req.action, &protection.vm.name, change_id, at)?;
    let lock = change_lock(ctx, &protection.vm, change_id, deadline).await?;
    // Read here, not on a blocking thread: the look takes no lock and reads what the journal's
    // writer appended since the last look, and a hand-off to tokio's blocking pool would cost more
    // (with 64 guards at once on two cores, 7 ms at the median) than the look itself (0.1 ms).
    let earlier = ctx
        .journal
        .earlier_attempt(
            &protection.vm.id,
            change_id,
            ctx.window,
            ctx.settings.deadline + LOCK_SLACK,
        )
        .map_err(|source| RewindError::NotJournaled { source })?;
    let mut notes = protection.notes.clone();
    let tag = match earlier.as_ref().and_then(JournalRecord::tag) {
        Some(tag) => {
            let e = earlier
                .as_ref()
                .map(attempt::attempt_name)
                .unwrap_or_default();
            notes.push(format!(
                "took over {e} of change {change_id} (verdict {}): its tag is kept, and what it inserted is adopted rather than inserted again; to pin a new checkpoint, guard with a new change id",
                earlier.as_ref().map(|r| r.verdict.as_str()).unwrap_or_default()
            ));
            tag.to_string()
        }
        None => fresh_tag,
    };
    let attempt_id = attempt::new_attempt_id();
    let takes_over = earlier
        .as_ref()
        .and_then(|r| r.attempt.as_ref())
        .map(|a| a.id.clone());
    let intent = JournalRecord::intent(&GuardIntent {
        attempt_id: &attempt_id,
        takes_over: takes_over.as_deref(),
        agent: req.agent.trim(),
        action: req.action.trim(),
        change_id,
        vm: &protection.vm,
        tag: &tag,
        vpgs: protection
            .protecting()
            .map(|v| (v.vpg_id.as_str(), v.vpg_name.as_str()))
            .collect(),
    });
    if protection.protecting().next().is_some() {
        ctx.journal
            .append_off_runtime(intent.clone())
            .await
            .map_err(|source| RewindError::NotJournaled { source })?;
    }
    let log = AttemptLog {
        journal: ctx.journal,
        intent,
        failures: StdMutex::new(Vec::new()),
    };

    let vpgs = futures::future::join_all(protection.vpgs.iter().map(|v| async {
        if !v.protecting {
            return VpgGuard {
                vpg_id: v.vpg_id.clone(),
                vpg_name: v.vpg_name.clone(),
                site: v.zvm_site.clone(),
                outcome: Outcome::Skipped {
                    reason: v.reason.clone().unwrap_or_default(),
                },
                notes: Vec::new(),
            };
        }
        let earlier = earlier
            .as_ref()
            .and_then(|r| attempt::Earlier::at_vpg(r, &v.vpg_id));
        guard_vpg(ctx, v, &tag, earlier.as_ref(), &log, deadline, sink).await
    }))
    .await;

    notes.extend(log.failures.into_inner().unwrap_or_else(|p| p.into_inner()));
    if protection.protecting().next().is_none() {
        notes.push(format!(
            "no VPG of {} is protecting, so nothing was tagged and Zerto cannot rewind this change",
            protection.vm.name
        ));
    }
    let mut report = GuardReport {
        verdict: verdict(&vpgs),
        tag,
        vm: protection.vm.clone(),
        agent: req.agent.trim().to_string(),
        action: req.action.trim().to_string(),
        change_id: change_id.to_string(),
        vpgs,
        elapsed_ms: 0,
        notes,
        attempt_id,
        takes_over,
        journal_error: None,
    };
    report.elapsed_ms = began.elapsed().as_millis() as u64;
    if let Err(e) = ctx
        .journal
        .append_off_runtime(attempt::verdict_line(&report))
        .await
    {
        report.not_journaled(&e);
    }
    drop(lock);
    Ok(report)
}

/// How much longer than its deadline an attempt's lines may span: its verdict is written after the
/// deadline's last wait, under a journal lock waited for at most `LOCK_WAIT`.
const LOCK_SLACK: Duration = Duration::from_secs(15);

/// Takes the change lock of `vm` and `change_id`, waiting until the deadline for another guard of
/// them on this machine.
async fn change_lock(
    ctx: &GuardContext<'_>,
    vm: &VmRef,
    change_id: &str,
    deadline: Instant,
) -> Result<ChangeLock, RewindError> {
    ChangeLock::acquire(&ctx.journal.locks_dir(), &vm.id, change_id, deadline)
        .await
        .map_err(|e| match e {
            ChangeLockError::Busy { path } => RewindError::Deadline {
                what: format!(
                    "another guard of {} for change {change_id} ran on this machine (it holds {}), before anything was inserted; when it ends, guard again: its checkpoints are adopted",
                    vm.name,
                    path.display()
                ),
                waited_secs: ctx.settings.deadline.as_secs_f64(),
            },
            ChangeLockError::Io { path, source } => RewindError::NotJournaled {
                source: JournalError::Write {
                    path: ctx.journal.path().to_path_buf(),
                    source: std::io::Error::new(
                        source.kind(),
                        format!("its change lock {} cannot be made: {source}", path.display()),
                    ),
                },
            },
        })
}

/// `guarded` only when at least one VPG is protecting and every protecting VPG was tagged; any failure or
/// error makes it `not_guarded`; otherwise work still running makes it `still_running`.
pub fn verdict(vpgs: &[VpgGuard]) -> Verdict {
    let protecting: Vec<&Outcome> = vpgs
        .iter()
        .map(|v| &v.outcome)
        .filter(|o| !matches!(o, Outcome::Skipped { .. }))
        .collect();
    if protecting.is_empty() {
        return Verdict::NotGuarded;
    }
    if protecting
        .iter()
        .all(|o| matches!(o, Outcome::Tagged { .. }))
    {
        return Verdict::Guarded;
    }
    if protecting
        .iter()
        .any(|o| matches!(o, Outcome::Failed { .. } | Outcome::Error { .. }))
    {
        return Verdict::NotGuarded;
    }
    Verdict::StillRunning
}

/// How the locked part of one VPG's guard ended.
enum Inserted {
    /// The insert Completed; the checkpoint is still to be seen listed.
    Completed {
        task: Task,
        task_id: String,
        at: Instant,
    },
    /// An insert of unknown outcome was reconciled and the checkpoint was found.
    Found {
        task_id: Option<String>,
        checkpoint_id: String,
        timestamp: Option<DateTime<Utc>>,
    },
    /// Anything else.
    Done(Outcome),
}

/// One VPG's guard.
async fn guard_vpg(
    ctx: &GuardContext<'_>,
    vpg: &VpgProtection,
    tag: &str,
    earlier: Option<&Earlier>,
    log: &AttemptLog<'_>,
    deadline: Instant,
    sink: &dyn ProgressSink,
) -> VpgGuard {
    let mut notes = Vec::new();
    let outcome = match ctx.client(&vpg.zvm_site) {
        None => Outcome::Error {
            task_id: None,
            kind: ErrorKind::Usage,
            message: format!(
                "no configured site reaches the ZVM {} of this VPG",
                vpg.zvm_site
            ),
        },
        Some(client) => {
            let watch = Watch {
                sink,
                site: client.name(),
                vpg_id: &vpg.vpg_id,
                vpg_name: &vpg.vpg_name,
                task_type: INSERT_TASK_TYPE,
                began: Instant::now(),
            };
            let run = Insert {
                ctx,
                client,
                vpg,
                tag,
                log,
                deadline,
                watch: &watch,
            };
            let outcome = tag_vpg(&run, earlier, &mut notes).await;
            watch.report(Stage::Done, task_id_of(&outcome), None);
            outcome
        }
    };
    VpgGuard {
        vpg_id: vpg.vpg_id.clone(),
        vpg_name: vpg.vpg_name.clone(),
        site: vpg.zvm_site.clone(),
        outcome,
        notes,
    }
}

/// What the insert into one VPG works with.
struct Insert<'a> {
    ctx: &'a GuardContext<'a>,
    client: &'a ZvmClient,
    vpg: &'a VpgProtection,
    tag: &'a str,
    log: &'a AttemptLog<'a>,
    deadline: Instant,
    watch: &'a Watch<'a>,
}

/// How long a task ran by the ZVM's own clock, when it says. The client learns insert durations from
/// this rather than from how long it took to see the task end: that includes the client's own lateness,
/// and under load late polls would teach it to place the next first poll later still (with 256
/// concurrent guards, a task's end was seen 41 ms late at the median; learning the ZVM's duration, 13 ms).
fn zvm_duration(task: &Task) -> Option<Duration> {
    (task.completed? - task.started?).to_std().ok()
}

fn task_id_of(o: &Outcome) -> Option<&str> {
    match o {
        Outcome::Tagged { task_id, .. } | Outcome::Error { task_id, .. } => task_id.as_deref(),
        Outcome::Failed { task_id, .. } | Outcome::StillRunning { task_id, .. } => Some(task_id),
        Outcome::Skipped { .. } => None,
    }
}

async fn tag_vpg(run: &Insert<'_>, earlier: Option<&Earlier>, notes: &mut Vec<String>) -> Outcome {
    let Insert {
        ctx,
        client,
        vpg,
        tag,
        deadline,
        watch,
        ..
    } = *run;
    watch.report(Stage::Queued, None, None);
    let slot = ctx.queue.slot(&vpg.vpg_id);
    let Ok(held) = tokio::time::timeout_at(deadline.into(), slot.lock_owned()).await else {
        return Outcome::Error {
            task_id: None,
            // A deadline is classed as a slow ZVM is, as `RewindError::Deadline` is.
            kind: ErrorKind::Connection,
            message: format!(
                "the deadline came while this VPG was busy with an earlier guard of this process; nothing was inserted into {}; guard again",
                vpg.vpg_name
            ),
        };
    };
    let inserted = insert_locked(run, earlier, notes).await;
    // The VPG is free for the next insert as soon as this one's task is terminal.
    drop(held);
    match inserted {
        Inserted::Done(outcome) => outcome,
        Inserted::Found {
            task_id,
            checkpoint_id,
            timestamp,
        } => Outcome::Tagged {
            task_id,
            task_state: Some(Code::task_state(STATE_COMPLETED)),
            checkpoint_id,
            timestamp,
        },
        Inserted::Completed { task, task_id, at } => {
            watch.report(Stage::Listing, Some(&task_id), Some(&task));
            let since = task.started.map(|t| t - chrono::Duration::seconds(60));
            let (_, lag) = client.learnt();
            match wait_listed(client, &vpg.vpg_id, tag, since, at, deadline, lag).await {
                Ok(Some((cp, lag))) => {
                    client.observe_listing(lag);
                    Outcome::Tagged {
                        task_id: Some(task_id),
                        task_state: task.state().map(Code::task_state),
                        checkpoint_id: cp.checkpoint_identifier.unwrap_or_default(),
                        timestamp: cp.time_stamp,
                    }
                }
                Ok(None) => {
                    notes.push(format!(
                        "task {task_id} Completed but the checkpoint was not listed yet when the deadline came; list the tags of this VM later to see it"
                    ));
                    Outcome::StillRunning {
                        task_id,
                        task_state: task.state().map(Code::task_state),
                        stage: Stage::Listing,
                    }
                }
                Err(e) => Outcome::Error {
                    task_id: Some(task_id),
                    kind: e.kind(),
                    message: format!(
                        "the insert Completed, but its checkpoint could not be looked for: {e}; list the tags of this VM to check"
                    ),
                },
            }
        }
    }
}

/// Inserts (holding the VPG's lock) until the task is terminal. What an earlier attempt of this
/// change inserted is followed or adopted first; an insert running at the VPG is waited for before
/// each insert; a back-to-back failure is retried after a jittered pause, until the deadline; an
/// insert of unknown outcome is reconciled. Whenever a checkpoint with this tag may already exist (an
/// earlier attempt's, or one of this guard whose answer was lost), it is looked for before any
/// insert: never two checkpoints of one tag in one VPG.
async fn insert_locked(
    run: &Insert<'_>,
    earlier: Option<&Earlier>,
    notes: &mut Vec<String>,
) -> Inserted {
    let Insert {
        ctx,
        client,
        vpg,
        tag,
        log,
        deadline,
        watch,
    } = *run;
    let vpg_id = vpg.vpg_id.as_str();
    if let Some(e) = earlier
        && let Some(settled) =
            attempt::follow_earlier_task(ctx, client, vpg, e, deadline, watch, notes).await
    {
        return settled;
    }
    // Until when a checkpoint with this tag, if there is one, may still be on its way to being
    // listed; `None` while none can exist.
    let mut may_exist: Option<Instant> = earlier.map(|e| attempt::earlier_look_until(client, e));
    let since = Some(
        match earlier {
            Some(e) => e.at - chrono::Duration::from_std(ctx.settings.deadline).unwrap_or_default(),
            None => Utc::now(),
        } - chrono::Duration::minutes(10),
    );
    let mut back_to_back = 0;
    let mut resent = 0;
    loop {
        if Instant::now() >= deadline {
            return Inserted::Done(Outcome::Error {
                task_id: None,
                kind: ErrorKind::Connection,
                message: "the deadline came before the insert could be sent; nothing was inserted; guard again".into(),
            });
        }
        let waited = match wait_for_running(run, may_exist.is_some(), notes).await {
            Ok(waited) => waited,
            Err(done) => return done,
        };
        if waited {
            // Every guard that waited for the same insert (other processes', other machines')
            // wakes when it ends: a random pause spreads them out, so that the first to insert is
            // seen running by the others (which then wait for it) instead of all inserting at
            // once and all but one failing. This process's own guards of one VPG take turns in
            // its queue and never wait here for each other.
            let (learnt, _) = client.learnt();
            let typical = learnt
                .unwrap_or(Duration::from_millis(500))
                .clamp(Duration::from_millis(20), Duration::from_secs(2));
            let pause = typical.mul_f64(rand::random::<f64>() * 0.5);
            tokio::time::sleep(pause.min(deadline.saturating_duration_since(Instant::now()))).await;
            if let Ok(running) = client.insert_tasks(vpg_id, true).await
                && running
                    .iter()
                    .filter_map(|t| t.task_identifier.as_deref())
                    .any(|id| ctx.own.ended(vpg_id, id) != Some(true))
            {
                continue;
            }
        }
        if let Some(until) = may_exist {
            let until = if waited {
                Instant::now() + attempt::listing_grace(client)
            } else {
                until
            };
            match attempt::look_for_tag(client, vpg, tag, since, until.min(deadline), notes).await {
                Ok(Some(found)) => return found,
                Ok(None) => may_exist = Some(Instant::now()),
                Err(e) => {
                    return Inserted::Done(Outcome::Error {
                        task_id: None,
                        kind: e.kind(),
                        message: format!(
                            "a checkpoint with the tag {tag:?} may already exist in VPG {}, and looking for it failed: {e}; nothing more was inserted, so that the tag is not inserted twice; guard again",
                            vpg.vpg_name
                        ),
                    });
                }
            }
        }
        watch.report(Stage::Inserting, None, None);
        let sent = Instant::now();
        let request = format!("POST /v1/vpgs/{vpg_id}/checkpoints");
        let task_id = match client.insert_tagged_checkpoint(vpg_id, tag).await {
            Ok(id) => id,
            Err(e) if e.outcome_unknown() => {
                let what = e.what_happened_to("the insert");
                notes.push(format!(
                    "{what}; looked for the tag before any second insert"
                ));
                match reconcile(ctx, client, vpg, tag, deadline, watch, notes).await {
                    Ok(Reconciled::Found(found)) => return found,
                    Ok(Reconciled::StillRunning(task_id, task)) => {
                        return Inserted::Done(Outcome::StillRunning {
                            task_id,
                            task_state: task.state().map(Code::task_state),
                            stage: Stage::Running,
                        });
                    }
                    Ok(Reconciled::Unfollowed(task_id, e)) => {
                        return Inserted::Done(Outcome::Error {
                            task_id: Some(task_id.clone()),
                            kind: e.kind(),
                            message: format!(
                                "{what}, and insert task {task_id}, which may be ours, could not be followed: {e}; look at the task, and for the tag {tag:?} in VPG {}, before guarding again",
                                vpg.vpg_name
                            ),
                        });
                    }
                    Ok(Reconciled::NotInserted) if resent < ctx.settings.lost_response_retries => {
                        resent += 1;
                        notes.push(format!(
                            "no checkpoint with the tag and no insert task that could be ours was found, so the insert did not happen; inserting again ({resent} of {})",
                            ctx.settings.lost_response_retries
                        ));
                        // A ZVM may still be working on the lost request: look once more first.
                        may_exist = Some(Instant::now());
                        continue;
                    }
                    Ok(Reconciled::NotInserted) => {
                        return Inserted::Done(Outcome::Error {
                            task_id: None,
                            kind: ErrorKind::Connection,
                            message: format!(
                                "the insert was sent {} times and each time its outcome was unknown, the last time because {what}; no checkpoint with the tag exists; check the network to the ZVM of {} and guard again",
                                resent + 1,
                                client.name()
                            ),
                        });
                    }
                    Err(e) => {
                        return Inserted::Done(Outcome::Error {
                            task_id: None,
                            kind: e.kind(),
                            message: format!(
                                "{what}, and looking for the tag failed: {e}; look for the tag {tag:?} in VPG {} before guarding again",
                                vpg.vpg_name
                            ),
                        });
                    }
                }
            }
            Err(e) => {
                let e = e.at(client, &request);
                return Inserted::Done(Outcome::Error {
                    task_id: None,
                    kind: e.kind(),
                    message: e.to_string(),
                });
            }
        };
        ctx.own.record(vpg_id, &task_id, None, false);
        let (learnt, _) = client.learnt();
        // The task id is journaled while the task is followed: the intent, synced before the
        // insert, already accounts for it, and the task line only saves a later attempt a look.
        let (_, waited) = tokio::join!(
            log.sent(vpg_id, &task_id),
            wait_task(client, &task_id, sent, deadline, learnt, watch)
        );
        let task = match waited {
            Ok(TaskWait::Terminal(task)) => task,
            Ok(TaskWait::StillRunning(last)) => {
                return Inserted::Done(Outcome::StillRunning {
                    task_id,
                    task_state: last.as_ref().and_then(Task::state).map(Code::task_state),
                    stage: Stage::Running,
                });
            }
            Err(e) => {
                return Inserted::Done(Outcome::Error {
                    task_id: Some(task_id.clone()),
                    kind: e.kind(),
                    message: format!(
                        "insert task {task_id} was started but could not be followed: {e}; the insert may still complete, look at the task in the ZVM"
                    ),
                });
            }
        };
        ctx.own.record(vpg_id, &task_id, task.started, true);
        let state = task.state().unwrap_or(-1);
        if state == STATE_COMPLETED {
            client.observe_insert(zvm_duration(&task).unwrap_or_else(|| sent.elapsed()));
            return Inserted::Completed {
                task,
                task_id,
                at: Instant::now(),
            };
        }
        let reason = task.complete_reason.clone().unwrap_or_default();
        let retry_allowed = ctx
            .settings
            .back_to_back_retries
            .is_none_or(|cap| back_to_back < cap);
        if retry_allowed
            && let Some(culprit) = back_to_back_culprit(client, vpg_id, &task_id, &task).await
        {
            back_to_back += 1;
            let by = match &culprit {
                Culprit::Task(other) => format!(
                    "insert task {} of another client ({})",
                    other.task_identifier.as_deref().unwrap_or_default(),
                    other.initiated_by.as_deref().unwrap_or("unknown")
                ),
                Culprit::Unnamed => "another insert".to_string(),
            };
            notes.push(format!(
                "insert task {task_id} ended {} because {by} was running at this VPG ({reason}); waited for it and inserted again (retry {back_to_back})",
                Code::task_state(state)
            ));
            if matches!(culprit, Culprit::Unnamed) {
                // No task to wait for: the insert that ran is waited out for about its length.
                let pause = learnt.unwrap_or(Duration::from_millis(500));
                tokio::time::sleep(pause.min(deadline.saturating_duration_since(Instant::now())))
                    .await;
            }
            continue;
        }
        return Inserted::Done(Outcome::Failed {
            task_id,
            task_state: Code::task_state(state),
            complete_reason: reason,
        });
    }
}

/// Waits for every insert running at the VPG (another client's, or one this process left running
/// when an earlier guard's deadline came) before an insert, since ours would fail while it runs.
/// `Ok(true)` when one was waited for; `Err` with the outcome when the deadline came first.
/// `maybe_ours` says that a running insert may be an earlier attempt of this change whose answer
/// was lost with its process.
async fn wait_for_running(
    run: &Insert<'_>,
    maybe_ours: bool,
    notes: &mut Vec<String>,
) -> Result<bool, Inserted> {
    let Insert {
        ctx,
        client,
        vpg,
        deadline,
        watch,
        ..
    } = *run;
    let vpg_id = vpg.vpg_id.as_str();
    let running = match client.insert_tasks(vpg_id, true).await {
        Ok(running) => running,
        Err(e) => {
            notes.push(format!(
                "could not check for other clients' running inserts at this VPG ({e}); inserting anyway"
            ));
            return Ok(false);
        }
    };
    let mut waited = false;
    for other in running {
        let Some(other_id) = other.task_identifier.clone() else {
            continue;
        };
        // One this process saw end is listed only by a read sent before it ended: passed over.
        let whose = match ctx.own.ended(vpg_id, &other_id) {
            Some(true) => continue,
            Some(false) => {
                "an earlier guard of this process, whose deadline came while it ran".to_string()
            }
            None if maybe_ours => format!(
                "another client ({}), or an earlier attempt of this change",
                other.initiated_by.as_deref().unwrap_or("unknown")
            ),
            None => format!(
                "another client ({})",
                other.initiated_by.as_deref().unwrap_or("unknown")
            ),
        };
        notes.push(format!(
            "insert task {other_id} of {whose} was running at this VPG; waited for it before inserting"
        ));
        watch.report(Stage::Queued, Some(&other_id), Some(&other));
        let (learnt, _) = client.learnt();
        match wait_task(client, &other_id, Instant::now(), deadline, learnt, watch).await {
            Ok(TaskWait::Terminal(t)) => {
                waited = true;
                if ctx.own.contains(vpg_id, &other_id) {
                    ctx.own.record(vpg_id, &other_id, t.started, true);
                }
            }
            Ok(TaskWait::StillRunning(_)) => {
                return Err(Inserted::Done(Outcome::Error {
                    task_id: None,
                    kind: ErrorKind::Connection,
                    message: format!(
                        "the deadline came while waiting for insert task {other_id} of {whose} at this VPG; nothing more was inserted; guard again"
                    ),
                }));
            }
            Err(e) => notes.push(format!("could not follow task {other_id}: {e}")),
        }
    }
    Ok(waited)
}

/// The other insert that made ours fail.
enum Culprit {
    /// Seen in the VPG's insert tasks.
    Task(Task),
    /// Only the failure's reason says another insert was running.
    Unnamed,
}

/// Finds the insert that was running at the VPG while ours ran (the back-to-back rule): another insert
/// task of the VPG that started no later than ours and had not ended when ours started. Falls back to
/// the reason's words when the ZVM does not relate tasks to VPGs.
async fn back_to_back_culprit(
    client: &ZvmClient,
    vpg_id: &str,
    ours: &str,
    task: &Task,
) -> Option<Culprit> {
    if let Ok(tasks) = client.insert_tasks(vpg_id, false).await {
        let overlapping = tasks.into_iter().filter(|t| {
            t.task_identifier.as_deref() != Some(ours)
                && match (t.started, task.started) {
                    (Some(theirs), Some(mine)) => {
                        theirs <= mine && t.completed.is_none_or(|c| c >= mine)
                    }
                    _ => t.state() == Some(STATE_IN_PROGRESS),
                }
        });
        let mut overlapping: Vec<Task> = overlapping.collect();
        overlapping.sort_by_key(|t| {
            (
                t.state() != Some(STATE_IN_PROGRESS),
                std::cmp::Reverse(t.started),
            )
        });
        if let Some(t) = overlapping.into_iter().next() {
            return Some(Culprit::Task(t));
        }
    }
    let reason = task
        .complete_reason
        .as_deref()
        .unwrap_or_default()
        .to_lowercase();
    let says_so = (reason.contains("another")
        || reason.contains("already")
        || reason.contains("in progress"))
        && (reason.contains("checkpoint") || reason.contains("insert"));
    says_so.then_some(Culprit::Unnamed)
}

/// What a reconciliation of an insert of unknown outcome found.
enum Reconciled {
    /// The tag is listed: the insert happened.
    Found(Inserted),
    /// An insert that may be ours is still running at the deadline.
    StillRunning(String, Task),
    /// An insert that may be ours was found, but following it failed: its id is kept in the outcome.
    Unfollowed(String, RewindError),
    /// No trace of the insert: it did not happen.
    NotInserted,
}

/// After an insert of unknown outcome: wait for any insert at this VPG that could be ours, then look for the tag
/// (waiting out the listing lag when such an insert Completed). Only when neither exists did the insert
/// not happen.
async fn reconcile(
    ctx: &GuardContext<'_>,
    client: &ZvmClient,
    vpg: &VpgProtection,
    tag: &str,
    deadline: Instant,
    watch: &Watch<'_>,
    notes: &mut Vec<String>,
) -> Result<Reconciled, RewindError> {
    let vpg_id = vpg.vpg_id.as_str();
    let tasks = client.insert_tasks(vpg_id, false).await?;
    // Only the ZVM's own clock orders its tasks: an insert of ours cannot have started before the newest
    // insert this process saw end at this VPG, nor long before the newest insert the ZVM lists.
    let newest = tasks.iter().filter_map(|t| t.started).max();
    let floor = ctx.own.newest_start(vpg_id);
    let mut candidates: Vec<Task> = tasks
        .into_iter()
        .filter(|t| {
            let Some(id) = t.task_identifier.as_deref() else {
                return false;
            };
            if ctx.own.contains(vpg_id, id) {
                return false;
            }
            if t.state() == Some(STATE_IN_PROGRESS) {
                return true;
            }
            match t.started {
                Some(s) => {
                    floor.is_none_or(|f| s >= f)
                        && newest.is_none_or(|n| s >= n - chrono::Duration::minutes(5))
                }
                None => false,
            }
        })
        .collect();
    let (learnt, lag) = client.learnt();
    for c in candidates.iter_mut() {
        if c.state() != Some(STATE_IN_PROGRESS) {
            continue;
        }
        let id = c.task_identifier.clone().unwrap_or_default();
        let waited = match wait_task(client, &id, Instant::now(), deadline, learnt, watch).await {
            Ok(waited) => waited,
            Err(e) => return Ok(Reconciled::Unfollowed(id, e)),
        };
        match waited {
            TaskWait::Terminal(t) => *c = t,
            TaskWait::StillRunning(last) => {
                notes.push(format!(
                    "insert task {id}, which may be ours, was still running at the deadline"
                ));
                return Ok(Reconciled::StillRunning(
                    id,
                    last.unwrap_or_else(|| c.clone()),
                ));
            }
        }
    }
    let mut completed: Vec<&Task> = candidates
        .iter()
        .filter(|t| t.state() == Some(STATE_COMPLETED))
        .collect();
    completed.sort_by_key(|t| std::cmp::Reverse(t.started));
    let since = candidates
        .iter()
        .filter_map(|t| t.started)
        .min()
        .or(newest)
        .map(|t| t - chrono::Duration::seconds(60));
    // Give a checkpoint that may be ours the time to be listed, whether or not an insert task could be
    // tied to this VPG (a ZVM that leaves RelatedEntities empty ties none): this path is rare, and
    // waiting here is what keeps a second insert from doubling the first.
    let grace = lag
        .map(|l| l * 4)
        .unwrap_or_default()
        .clamp(Duration::from_secs(2), Duration::from_secs(30));
    let until = deadline.min(Instant::now() + grace);
    // The lag this wait saw is not learnt: it does not start at a completion.
    let found = wait_listed(client, vpg_id, tag, since, Instant::now(), until, lag).await?;
    let Some((cp, _)) = found else {
        return Ok(Reconciled::NotInserted);
    };
    let task_id = completed.first().and_then(|t| t.task_identifier.clone());
    if let Some(id) = &task_id {
        ctx.own.record(vpg_id, id, completed[0].started, true);
    }
    notes.push(match &task_id {
        Some(id) => format!(
            "found the tagged checkpoint {} and its insert task {id}: the insert had happened, so it was not sent again",
            cp.checkpoint_identifier.as_deref().unwrap_or("?")
        ),
        None => format!(
            "found the tagged checkpoint {}: the insert had happened, so it was not sent again",
            cp.checkpoint_identifier.as_deref().unwrap_or("?")
        ),
    });
    Ok(Reconciled::Found(Inserted::Found {
        task_id,
        checkpoint_id: cp.checkpoint_identifier.unwrap_or_default(),
        timestamp: cp.time_stamp,
    }))
}

/// One tagged checkpoint of a VPG.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TaggedCheckpoint {
    /// The checkpoint.
    pub checkpoint_id: String,
    /// Its time (the ZVM's clock).
    pub timestamp: Option<DateTime<Utc>>,
    /// Its tag.
    pub tag: String,
    /// The tag's parts when rewind wrote it.
    pub parts: Option<TagParts>,
}

impl TaggedCheckpoint {
    /// Whether this checkpoint belongs to `change`: a change id its tag names, or the tag exactly (a
    /// tag that rewind did not write has no change id, so the whole tag is how a human names it).
    pub fn is_of_change(&self, change: &str) -> bool {
        let wanted = change.trim();
        self.tag.trim() == wanted || self.parts.as_ref().is_some_and(|p| p.change_id == wanted)
    }
}

/// The tagged checkpoints of one VPG.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct VpgTags {
    /// The VPG.
    pub vpg_id: String,
    /// Its name.
    pub vpg_name: String,
    /// The configured site whose ZVM was asked.
    pub site: String,
    /// Its tagged checkpoints, oldest first.
    pub tags: Vec<TaggedCheckpoint>,
    /// Why the VPG's checkpoints could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The tagged checkpoints of a VM across all its VPGs.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TagList {
    /// The VM.
    pub vm: VmRef,
    /// The change id asked for, if any.
    pub change_id: Option<String>,
    /// Every VPG of the VM.
    pub vpgs: Vec<VpgTags>,
}

impl TagList {
    /// One line for humans: how many tagged checkpoints (of the change, when one was asked for) in how
    /// many of the VM's VPGs, and which VPGs could not be read.
    pub fn headline(&self) -> String {
        let count: usize = self.vpgs.iter().map(|v| v.tags.len()).sum();
        let with = self.vpgs.iter().filter(|v| !v.tags.is_empty()).count();
        let of = self
            .change_id
            .as_deref()
            .map(|c| format!(" of change {c}"))
            .unwrap_or_default();
        let mut line = format!(
            "{} ({}): {count} tagged checkpoint(s){of} in {with} of {} VPG(s)",
            self.vm.name,
            self.vm.id,
            self.vpgs.len()
        );
        let unread: Vec<&str> = self
            .vpgs
            .iter()
            .filter(|v| v.error.is_some())
            .map(|v| v.vpg_name.as_str())
            .collect();
        if !unread.is_empty() {
            line.push_str(&format!("; could not read {}", unread.join(", ")));
        }
        line
    }

    /// The headline, then each VPG with its tagged checkpoints.
    pub fn summary(&self) -> String {
        let mut out = self.headline();
        for v in &self.vpgs {
            out.push_str(&format!("\n  {} ({} tag(s))", v.vpg_name, v.tags.len()));
            if let Some(e) = &v.error {
                out.push_str(&format!(": ERROR {e}"));
            }
            for t in &v.tags {
                let when = t.timestamp.map(|t| t.to_rfc3339()).unwrap_or_default();
                out.push_str(&format!("\n    {} {} {}", t.checkpoint_id, when, t.tag));
            }
        }
        out
    }
}

/// Lists the tagged checkpoints of the VM of `protection`, keeping only those of `change_id` (a change
/// id or a tag exactly) when given.
pub(crate) async fn list_tags(
    clients: &[Arc<ZvmClient>],
    protection: &Protection,
    change_id: Option<&str>,
) -> TagList {
    let vpgs = futures::future::join_all(protection.vpgs.iter().map(|v| async move {
        let mut out = VpgTags {
            vpg_id: v.vpg_id.clone(),
            vpg_name: v.vpg_name.clone(),
            site: v.zvm_site.clone(),
            tags: Vec::new(),
            error: None,
        };
        let Some(client) = clients.iter().find(|c| c.name() == v.zvm_site) else {
            out.error = Some(format!("the site {} is not configured", v.zvm_site));
            return out;
        };
        match client.checkpoints(&v.vpg_id, None).await {
            Ok(cps) => {
                let mut tags: Vec<TaggedCheckpoint> = cps
                    .into_iter()
                    .filter_map(|c| {
                        let tag = c.tag.filter(|t| !t.is_empty())?;
                        let parts = parse_tag(&tag);
                        Some(TaggedCheckpoint {
                            checkpoint_id: c.checkpoint_identifier.unwrap_or_default(),
                            timestamp: c.time_stamp,
                            tag,
                            parts,
                        })
                    })
                    .filter(|t| change_id.is_none_or(|id| t.is_of_change(id)))
                    .collect();
                tags.sort_by_key(|t| t.timestamp);
                out.tags = tags;
            }
            Err(e) => out.error = Some(e.to_string()),
        }
        out
    }))
    .await;
    TagList {
        vm: protection.vm.clone(),
        change_id: change_id.map(|c| c.trim().to_string()),
        vpgs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 29, 12, 34, 56).unwrap()
    }

    #[test]
    fn tag_has_the_documented_shape_and_parses_back() {
        let tag = build_tag("claude-code", "upgrade nginx", "web-01", "chg-42", at()).unwrap();
        assert_eq!(
            tag,
            "ai:claude-code | upgrade nginx | vm=web-01 | change=chg-42 | 2026-11-29T12:34:56Z"
        );
        let p = parse_tag(&tag).unwrap();
        assert_eq!(p.agent, "claude-code");
        assert_eq!(p.action, "upgrade nginx");
        assert_eq!(p.vm, "web-01");
        assert_eq!(p.change_id, "chg-42");
        assert_eq!(p.time, "2026-11-29T12:34:56Z");
        assert!(parse_tag("nightly before patch").is_none());
    }

    #[test]
    fn a_pipe_in_any_part_is_rejected_naming_the_field() {
        for (field, args) in [
            ("agent", ["a|b", "x", "vm", "c"]),
            ("action", ["a", "x | y", "vm", "c"]),
            ("vm", ["a", "x", "v|m", "c"]),
            ("change_id", ["a", "x", "vm", "c|d"]),
        ] {
            let err = build_tag(args[0], args[1], args[2], args[3], at()).unwrap_err();
            match &err {
                RewindError::InvalidInput { field: f, problem } => {
                    assert_eq!(*f, field);
                    assert!(problem.contains('|'), "{problem}");
                }
                other => panic!("unexpected {other:?}"),
            }
            assert!(err.to_string().contains(field));
        }
    }

    #[test]
    fn control_characters_empty_parts_and_long_parts_are_rejected() {
        assert!(matches!(
            build_tag("a", "line\nbreak", "vm", "c", at()),
            Err(RewindError::InvalidInput {
                field: "action",
                ..
            })
        ));
        assert!(matches!(
            build_tag("a", "x", "vm", "\t", at()),
            Err(RewindError::InvalidInput {
                field: "change_id",
                ..
            })
        ));
        assert!(matches!(
            build_tag(" ", "x", "vm", "c", at()),
            Err(RewindError::InvalidInput { field: "agent", .. })
        ));
        let long = "x".repeat(MAX_ACTION + 1);
        let err = build_tag("a", &long, "vm", "c", at()).unwrap_err();
        assert!(
            err.to_string().contains(&format!("{}", MAX_ACTION)),
            "{err}"
        );
        let longest = build_tag(
            &"a".repeat(MAX_AGENT),
            &"b".repeat(MAX_ACTION),
            &"c".repeat(MAX_VM),
            &"d".repeat(MAX_CHANGE_ID),
            at(),
        )
        .unwrap();
        assert!(longest.chars().count() <= 255, "{}", longest.len());
    }

    fn vg(outcome: Outcome) -> VpgGuard {
        VpgGuard {
            vpg_id: "id".into(),
            vpg_name: "n".into(),
            site: "s".into(),
            outcome,
            notes: vec![],
        }
    }

    fn tagged() -> Outcome {
        Outcome::Tagged {
            task_id: Some("t".into()),
            task_state: Some(Code::task_state(6)),
            checkpoint_id: "1".into(),
            timestamp: None,
        }
    }

    #[test]
    fn verdict_is_guarded_only_when_every_protecting_vpg_was_tagged() {
        let skipped = || Outcome::Skipped {
            reason: "syncing".into(),
        };
        let running = || Outcome::StillRunning {
            task_id: "t".into(),
            task_state: None,
            stage: Stage::Running,
        };
        let failed = || Outcome::Failed {
            task_id: "t".into(),
            task_state: Code::task_state(4),
            complete_reason: "x".into(),
        };
        assert_eq!(verdict(&[vg(tagged()), vg(skipped())]), Verdict::Guarded);
        assert_eq!(verdict(&[vg(skipped())]), Verdict::NotGuarded);
        assert_eq!(verdict(&[]), Verdict::NotGuarded);
        assert_eq!(
            verdict(&[vg(tagged()), vg(running())]),
            Verdict::StillRunning
        );
        assert_eq!(verdict(&[vg(failed()), vg(running())]), Verdict::NotGuarded);
        assert_eq!(
            verdict(&[
                vg(tagged()),
                vg(Outcome::Error {
                    task_id: None,
                    kind: ErrorKind::Connection,
                    message: "x".into()
                })
            ]),
            Verdict::NotGuarded
        );
    }

    #[test]
    fn each_vpg_neither_tagged_nor_skipped_is_a_problem_naming_it() {
        let named = |name: &str, outcome| VpgGuard {
            vpg_name: name.into(),
            ..vg(outcome)
        };
        let vpgs = [
            named("web-local", tagged()),
            named(
                "files-dr",
                Outcome::Skipped {
                    reason: "syncing".into(),
                },
            ),
            named(
                "web-dr",
                Outcome::Failed {
                    task_id: "t-4".into(),
                    task_state: Code::task_state(4),
                    complete_reason: "another insert ran".into(),
                },
            ),
            named(
                "web-archive",
                Outcome::Error {
                    task_id: None,
                    kind: ErrorKind::Refused,
                    message: "HTTP 403".into(),
                },
            ),
            named(
                "sql-local",
                Outcome::StillRunning {
                    task_id: "t-9".into(),
                    task_state: None,
                    stage: Stage::Running,
                },
            ),
        ];
        let problems: Vec<Option<String>> = vpgs.iter().map(VpgGuard::problem).collect();
        assert_eq!(problems[0], None);
        assert_eq!(problems[1], None);
        assert_eq!(
            problems[2].as_deref(),
            Some("VPG web-dr: task t-4 ended Failed (4): another insert ran")
        );
        assert_eq!(problems[3].as_deref(), Some("VPG web-archive: HTTP 403"));
        assert_eq!(
            problems[4].as_deref(),
            Some("VPG sql-local: task t-9 is still running (not stopped)")
        );
    }

    #[test]
    fn an_insert_is_learnt_by_the_zvms_clock_not_by_when_the_client_saw_it_end() {
        let task = |started: &str, completed: Option<&str>| Task {
            started: crate::zvm::wire::parse_time(started),
            completed: completed.and_then(crate::zvm::wire::parse_time),
            ..Task::default()
        };
        assert_eq!(
            zvm_duration(&task(
                "2026-01-01T00:00:00.000Z",
                Some("2026-01-01T00:00:00.047Z")
            )),
            Some(Duration::from_millis(47))
        );
        assert_eq!(zvm_duration(&task("2026-01-01T00:00:00.000Z", None)), None);
        assert_eq!(
            zvm_duration(&task(
                "2026-01-01T00:00:01.000Z",
                Some("2026-01-01T00:00:00.000Z")
            )),
            None,
            "a completion before the start is not learnt"
        );
    }

    #[test]
    fn report_json_is_snake_case_with_a_flat_outcome() {
        let v = serde_json::to_value(vg(tagged())).unwrap();
        assert_eq!(v["outcome"], "tagged");
        assert_eq!(v["task_state"]["name"], "Completed");
        assert_eq!(v["checkpoint_id"], "1");
    }
}
