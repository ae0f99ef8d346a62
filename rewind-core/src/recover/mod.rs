//! Bounded recover: file-level recovery (FLR), failover test and offsite clone, each from a tagged
//! checkpoint. They leave the production VM running. Failover Live and Move are never rewind tools: no
//! code path of this crate calls them.
//!
//! Every recovery starts the same way:
//! 1. the request is checked before anything is sent;
//! 2. the VM is resolved ([`crate::Rewind::find_protection`]) and its tagged checkpoints read
//!    ([`crate::Rewind::list_tags`]); [`recovery_points`] keeps, per VPG, the newest checkpoint of the
//!    change (its change id, or its exact tag);
//! 3. one VPG is picked: a locally replicated one first (its recovery site is the VM's own site),
//!    otherwise one whose recovery site's ZVM is configured. FLR runs at the recovery site, so when no
//!    VPG with the tag has its recovery site configured, FLR is refused before anything is sent, naming
//!    the site and showing the `[sites.<name>]` block that would make it work. A failover test or a clone
//!    goes to the recovery site's ZVM when it is configured, else to the protected site's (every ZVM of
//!    a VPG's two sites can run them).
//!
//! Then each runs its Zerto tasks and reads each until it is terminal: only `Status.State` says what
//! happened. A task that ends Failed or Stopped is an error of kind `task_failed` carrying its
//! `CompleteReason`. Every recovery that sent anything is appended to the audit journal as one record of
//! kind `recovery`, linked to the guard by the change id; its `agent` is the user or client the ZVM saw.
//!
//! - `flr`: mount, wait, browse, download, unmount (always, also after an error).
//! - `destination`: guest paths, and writing into the destination folder without ever leaving it.
//! - `vpg_task`: failover test start / stop and clone start / abort.
//! - `keep`: an Extended Journal Copy of each VPG's tagged checkpoint, so a file-level recovery can
//!   use the tag once the journal no longer holds it.
//!
//! Waiting: each recovery task is waited for up to [`crate::RecoverSettings::wait`]: the guard
//! deadline, but never less than the configuration's `[recover] wait_floor_secs` (ten minutes by
//! default: a mount or a test takes longer than a tag). A task still running then is not dropped: a
//! failover test or clone reports it `still_running` with its task id; an FLR that cannot finish its
//! mount in that time is an error, and the session is unmounted.

mod destination;
mod diff;
mod flr;
mod keep;
mod note;
mod plan;
mod restore;
mod session;
mod vpg_task;
pub use keep::{KeepOutcome, KeepReport, KeptVpg};

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::audit_journal::{
    AuditJournal, JournalOutcome, JournalRecord, JournalVerdict, JournalVm, JournalVpg, Person,
    RecordKind,
};
use crate::codes::{Code, STATE_COMPLETED, STATE_WAITING_FOR_USER_INPUT};
use crate::config::Config;
use crate::error::{RecoveryRefusal, RewindError};
use crate::progress::{ProgressSink, Stage, elapsed_text};
use crate::protection::{FlrAvailability, Protection, SiteRef, VmRef};
use crate::tagged_checkpoint::TagList;
use crate::way_back::TagState;
use crate::zvm::task::{MIN_POLL, Pace, TaskWait, Watch, wait_task_until};
use crate::zvm::wire::Task;
use crate::zvm::{Site, ZvmClient};

pub use destination::{GuestPath, MAX_GUEST_PATH, RecoveredFile, parse_paths};
pub use diff::{
    Content, DiffCounts, DiffEntry, DiffKind, DiffReport, DiffRequest, FileState, LaterPoint,
    SessionEnd, WalkStop, time_text,
};
pub use note::RecoveryNote;
pub use plan::{PlannedFile, RecoveryPlan};
pub use restore::{MAX_RESTORED_NAME, RestoreRequest, RestoreStatus, WaitingRestore};
pub use session::FlrCalls;

/// What a recovery needs of the facade, and nothing more: the configuration, the sites' clients,
/// the journal, and who acts and from which VPG. [`crate::Rewind`] builds one for each call, as it
/// builds a guard's [`crate::guard::GuardContext`], so recover never sees the facade it serves.
#[derive(Debug)]
pub(crate) struct RecoverContext<'a> {
    /// The configuration: whether any site is configured, and how long a recovery task is waited
    /// for.
    pub(crate) config: &'a Config,
    /// Every configured site's client: a recovery's task goes to the site its VPG names, whether
    /// or not the VM was looked up there.
    pub(crate) configured: &'a [Arc<Site>],
    /// The sites the VM is looked up at ([`crate::Rewind::only_sites`]).
    pub(crate) sites: &'a [Arc<Site>],
    /// The configured sites left out of the lookup.
    pub(crate) left_out: &'a [String],
    /// Where each recovery is journaled.
    pub(crate) journal: &'a AuditJournal,
    /// Who acts ([`crate::Rewind::as_agent`]); without it, the ZVM account.
    pub(crate) agent: Option<&'a str>,
    /// The signed-in person the agent acts for, journaled beside it.
    pub(crate) person: Option<&'a Person>,
    /// The one VPG to recover from ([`crate::Rewind::only_vpg`]), when one was chosen.
    pub(crate) vpg: Option<&'a str>,
}

impl RecoverContext<'_> {
    /// The VM `query` means and every VPG it is in, at the sites this recovery asks.
    async fn find_protection(&self, query: &str) -> Result<Protection, RewindError> {
        self.config.require_sites()?;
        crate::protection::find_protection(self.sites, self.left_out, query).await
    }
}

/// How long each recovery task of `ctx` is waited for: its configuration's
/// [`crate::RecoverSettings::wait`].
pub(crate) fn recovery_wait(ctx: &RecoverContext<'_>) -> Duration {
    ctx.config.recover.wait(&ctx.config.guard)
}

/// The longest change id or tag accepted.
pub const MAX_CHANGE: usize = 255;

/// What [`crate::Rewind::recover_file`] is asked to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RecoverFileRequest {
    /// The VM: name, host name, IP address or vmIdentifier.
    pub vm: String,
    /// The change id of the guard (the newest tag of that change is used), or a tag exactly.
    pub change: String,
    /// Guest paths, partition-rooted and `/`-separated (`sda1/etc/app/app.conf`,
    /// `C:/ProgramData/App/app.ini`). A folder is recovered whole: it downloads as a zip archive that
    /// is unpacked under the same rules as a single file.
    pub paths: Vec<String>,
    /// The local folder to write into (created when the first file is written). Each file lands
    /// under its guest path:
    /// `<destination>/sda1/etc/app/app.conf`, `<destination>/C/ProgramData/App/app.ini`.
    pub destination: PathBuf,
    /// Replace files that already exist in the destination (never a symbolic link or a folder).
    #[serde(default)]
    pub overwrite: bool,
    /// The plan id a preview printed: the recovery runs only while its files are as the preview
    /// found them ([`crate::Rewind::preview_recover_file`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
}

/// What [`crate::Rewind::failover_test`] is asked to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum FailoverTestAction {
    /// Start a failover test of the VM at the tagged checkpoint.
    Start,
    /// Stop the failover test running for the VM, recording its result.
    Stop {
        /// Whether the test succeeded.
        success: bool,
        /// What the tester found (may be empty).
        #[serde(default)]
        summary: String,
    },
}

/// What [`crate::Rewind::offsite_clone`] is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CloneAction {
    /// Start an offsite clone of the VM at the tagged checkpoint.
    Start,
    /// Abort the clone running for the VM.
    Abort,
}

/// The tagged checkpoint of one VPG that a recovery for one change starts from.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RecoveryPoint {
    /// The VPG.
    pub vpg_id: String,
    /// Its name.
    pub vpg_name: String,
    /// The newest tagged checkpoint of the change in this VPG.
    pub checkpoint_id: String,
    /// Its time (the ZVM's clock).
    pub timestamp: Option<DateTime<Utc>>,
    /// Its tag.
    pub tag: String,
    /// The change id the tag names (the tag itself when rewind did not write it).
    pub change_id: String,
    /// Where the VM runs.
    pub protected_site: SiteRef,
    /// Where the journal is and recovery happens.
    pub recovery_site: SiteRef,
    /// Protected site and recovery site are the same.
    pub locally_replicated: bool,
    /// Whether FLR can run for it, and through which configured site.
    pub flr: FlrAvailability,
    /// The configured site whose ZVM listed the checkpoint.
    pub listed_by: String,
    /// The retention set to recover from, when the VPG's journal no longer holds the tag and a keep
    /// copied it into one (only FLR can mount it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retention_set: Option<crate::way_back::KeptSet>,
}

/// For each VPG of `protection`, the newest checkpoint in `tags` whose tag names `change` as its
/// change id, or is `change` exactly. VPGs without such a checkpoint are left out.
pub fn recovery_points(
    protection: &Protection,
    tags: &TagList,
    change: &str,
) -> Vec<RecoveryPoint> {
    protection
        .vpgs
        .iter()
        .filter_map(|vpg| {
            let listed = tags.vpgs.iter().find(|t| t.vpg_id == vpg.vpg_id)?;
            let of_change = || listed.tags.iter().filter(|t| t.is_of_change(change));
            // The journal first; a retention set only where the journal no longer holds the tag.
            let in_journal = of_change()
                .filter(|t| matches!(t.state, TagState::Listed { .. }))
                .max_by_key(|t| t.timestamp);
            let newest = in_journal.or_else(|| {
                of_change()
                    .filter(|t| t.state.is_recoverable())
                    .max_by_key(|t| t.timestamp)
            })?;
            let retention_set = match newest.state {
                TagState::Kept { .. } => newest.kept.clone(),
                _ => None,
            };
            Some(RecoveryPoint {
                vpg_id: vpg.vpg_id.clone(),
                vpg_name: vpg.vpg_name.clone(),
                checkpoint_id: newest.checkpoint_id.clone(),
                timestamp: newest.timestamp,
                tag: newest.tag.clone(),
                change_id: newest
                    .parts
                    .as_ref()
                    .map(|p| p.change_id.clone())
                    .unwrap_or_else(|| newest.tag.clone()),
                protected_site: vpg.protected_site.clone(),
                recovery_site: vpg.recovery_site.clone(),
                locally_replicated: vpg.locally_replicated,
                flr: vpg.flr.clone(),
                listed_by: listed.site.clone(),
                retention_set,
            })
        })
        .collect()
}

impl RecoveryPoint {
    /// The `Type` of the task that mounts it for FLR: a checkpoint's, or a retention set's.
    pub(crate) fn mount_task_type(&self) -> &'static str {
        match self.retention_set {
            Some(_) => crate::zvm::wire::FLR_BACKUP_MOUNT_TASK_TYPE,
            None => crate::zvm::wire::FLR_MOUNT_TASK_TYPE,
        }
    }

    /// The `Type` of the task that unmounts it.
    pub(crate) fn unmount_task_type(&self) -> &'static str {
        match self.retention_set {
            Some(_) => crate::zvm::wire::FLR_BACKUP_UNMOUNT_TASK_TYPE,
            None => crate::zvm::wire::FLR_UNMOUNT_TASK_TYPE,
        }
    }

    /// Refuses a failover test or clone of a point only a retention set holds.
    pub(crate) fn in_journal(&self) -> Result<(), RewindError> {
        match &self.retention_set {
            None => Ok(()),
            Some(set) => Err(RewindError::NotPossible {
                reason: RecoveryRefusal::OnlyInRetentionSet {
                    vpg: self.vpg_name.clone(),
                    change: self.change_id.clone(),
                    retention_set: set.retention_set_id.clone(),
                },
            }),
        }
    }
}

/// A Zerto task a recovery started, as it ended (or stood when waiting stopped).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RecoveryTask {
    /// The configured site whose ZVM runs it.
    pub site: String,
    /// The task.
    pub task_id: String,
    /// Its type, e.g. `FlrJournalMount`.
    pub task_type: String,
    /// Its last known state.
    pub state: Option<Code>,
    /// Its last known progress, 0..100.
    pub progress: Option<u8>,
    /// Its `CompleteReason`, when it gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub complete_reason: Option<String>,
}

impl RecoveryTask {
    fn new(site: &str, task_id: &str, task_type: &str, task: Option<&Task>) -> RecoveryTask {
        RecoveryTask {
            site: site.to_string(),
            task_id: task_id.to_string(),
            // The ZVM's own name for the task when it gives one.
            task_type: task
                .and_then(|t| t.kind.clone())
                .filter(|k| !k.is_empty())
                .unwrap_or_else(|| task_type.to_string()),
            state: task.and_then(Task::state).map(Code::task_state),
            progress: task.and_then(Task::progress),
            complete_reason: task
                .and_then(|t| t.complete_reason.clone())
                .filter(|r| !r.is_empty()),
        }
    }

    fn state_text(&self) -> String {
        self.state
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_else(|| "unknown".into())
    }
}

/// What happened to an FLR session at the end.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Unmount {
    /// The session is known to be unmounted (its unmount task Completed).
    pub unmounted: bool,
    /// The unmount task, once there was one.
    pub task: Option<RecoveryTask>,
    /// Why the unmount failed or could not be confirmed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Unmount {
    fn sentence(&self, session_id: &str, site: &str) -> String {
        match (&self.error, &self.task) {
            (None, Some(t)) => format!(
                "the FLR session {session_id} at site {site} was unmounted (task {} {})",
                t.task_id,
                t.state_text()
            ),
            (None, None) => format!("the FLR session {session_id} at site {site} was unmounted"),
            (Some(e), _) => format!(
                "the FLR session {session_id} at site {site} could NOT be unmounted: {e}; unmount it in the ZVM (File Restore sessions), or it stays mounted"
            ),
        }
    }
}

/// The result of [`crate::Rewind::recover_file`].
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RecoverFileReport {
    /// The VM.
    pub vm: VmRef,
    /// The change id.
    pub change_id: String,
    /// The tagged checkpoint recovered from.
    pub from: RecoveryPoint,
    /// The configured site whose ZVM ran the FLR (the VPG's recovery site).
    pub site: String,
    /// The FLR session.
    pub session_id: String,
    /// The mount task.
    pub mount: Option<RecoveryTask>,
    /// The destination folder, resolved.
    pub destination: PathBuf,
    /// Every file written, in the order asked for (a folder's files in its archive's order).
    pub files: Vec<RecoveredFile>,
    /// The unmount.
    pub unmount: Unmount,
    /// How long the whole recovery took.
    pub elapsed_ms: u64,
    /// Things worth knowing: a task not listed, a size that differs from the listing, the journal.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<RecoveryNote>,
}

impl RecoverFileReport {
    /// One line for humans: how many files of which VM came back where, from which checkpoint, and,
    /// when it could not be unmounted, the FLR session left mounted.
    pub fn headline(&self) -> String {
        let mut line = format!(
            "RECOVERED {} file(s) of {} ({}) for change {} into {}, from VPG {} checkpoint {} via FLR at site {}, in {}",
            self.files.len(),
            self.vm.name,
            self.vm.id,
            self.change_id,
            self.destination.display(),
            self.from.vpg_name,
            self.from.checkpoint_id,
            self.site,
            elapsed_text(self.elapsed_ms)
        );
        if !self.unmount.unmounted {
            line.push_str(&format!(
                "; the FLR session {} at site {} could NOT be confirmed unmounted",
                self.session_id, self.site
            ));
        }
        line
    }

    /// The headline, the checkpoint's time and tag, each file, the unmount and the notes.
    pub fn summary(&self) -> String {
        let mut out = format!(
            "{}\n  checkpoint time: {}\n  tag: {}",
            self.headline(),
            self.from
                .timestamp
                .map(|t| t.to_rfc3339())
                .unwrap_or_else(|| "unknown".into()),
            self.from.tag,
        );
        for f in &self.files {
            out.push_str(&format!(
                "\n  {} -> {} ({} bytes, sha256 {}){}",
                f.guest_path,
                f.path.display(),
                f.size,
                f.sha256,
                if f.replaced { ", replaced" } else { "" }
            ));
        }
        out.push_str(&format!(
            "\n  {}",
            self.unmount.sentence(&self.session_id, &self.site)
        ));
        for n in &self.notes {
            out.push_str(&format!("\n  note: {n}"));
        }
        out
    }
}

/// A recovery that runs as one Zerto task on a VPG.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(tag = "operation", rename_all = "snake_case")]
pub enum RecoveryOperation {
    /// `POST /v1/vpgs/{id}/FailoverTest`.
    FailoverTestStart,
    /// `POST /v1/vpgs/{id}/FailoverTestStop`.
    FailoverTestStop {
        /// Whether the test succeeded.
        success: bool,
        /// What the tester found.
        summary: String,
    },
    /// `POST /v1/vpgs/{id}/CloneStart`.
    CloneStart,
    /// `POST /v1/vpgs/{id}/CloneAbort`.
    CloneAbort,
    /// `POST /v1/vms/{id}/Restore`: the VM rewound to the tag, in place or beside it.
    RestoreVm {
        /// Where the restored VM is.
        target: RestoreTarget,
    },
    /// `POST /v1/vms/{id}/RestoreCommit`: a person keeps what the restore restored.
    RestoreCommit,
    /// `POST /v1/vms/{id}/RestoreRollback`: a person undoes it.
    RestoreRollback,
}

/// Where a journal VM restore puts the VM as it was at the tag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "how", rename_all = "snake_case")]
pub enum RestoreTarget {
    /// A new VM of this name beside the VM, which keeps running as it is.
    Alongside {
        /// The new VM's name.
        name: String,
    },
    /// The VM itself: its disks go back to the tag, and every write after the tag is lost once
    /// committed.
    InPlace,
}

impl RecoveryOperation {
    /// A short name: `failover test start`, `clone abort`, ...
    pub fn name(&self) -> &'static str {
        match self {
            RecoveryOperation::FailoverTestStart => "failover test start",
            RecoveryOperation::FailoverTestStop { .. } => "failover test stop",
            RecoveryOperation::CloneStart => "clone start",
            RecoveryOperation::CloneAbort => "clone abort",
            RecoveryOperation::RestoreVm { .. } => "restore",
            RecoveryOperation::RestoreCommit => "restore commit",
            RecoveryOperation::RestoreRollback => "restore rollback",
        }
    }
}

/// How a failover test or clone operation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryVerdict {
    /// Its task Completed.
    Completed,
    /// Its task was still running when waiting stopped; it was not stopped: follow it by its id.
    StillRunning,
    /// A journal VM restore: restored, its task waiting for a person's commit or rollback.
    Waiting,
}

/// The result of [`crate::Rewind::failover_test`] and [`crate::Rewind::offsite_clone`].
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RecoveryTaskReport {
    /// What was done.
    #[serde(flatten)]
    pub operation: RecoveryOperation,
    /// How it ended.
    pub verdict: RecoveryVerdict,
    /// The VM.
    pub vm: VmRef,
    /// The change id.
    pub change_id: String,
    /// The tagged checkpoint of the VPG acted on.
    pub from: RecoveryPoint,
    /// The configured site whose ZVM was called.
    pub site: String,
    /// The Zerto task.
    pub task: RecoveryTask,
    /// How long it took.
    pub elapsed_ms: u64,
    /// The VM an offsite clone made, once its task Completed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clone_vm: Option<CloneVm>,
    /// A restore waiting for a commit: when Zerto rolls it back by itself if nobody commits it
    /// (about: from when rewind saw it waiting).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rolls_back_at: Option<DateTime<Utc>>,
    /// Things worth knowing.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<RecoveryNote>,
}

/// The VM an offsite clone made: Zerto names it after the VM with `-clone`, at the VPG's recovery
/// site.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct CloneVm {
    /// Its name.
    pub name: String,
    /// Its identifier, when the recovery site's inventory lists it.
    pub vm_id: Option<String>,
    /// The site it runs at.
    pub site: String,
}

/// The result of [`crate::Rewind::failover_test`].
pub type FailoverTestReport = RecoveryTaskReport;
/// The result of [`crate::Rewind::offsite_clone`].
pub type CloneReport = RecoveryTaskReport;

impl RecoveryTaskReport {
    /// One line for humans: the verdict, what was done to which VM for which change, and its Zerto
    /// task.
    pub fn headline(&self) -> String {
        let (verdict, ended) = match self.verdict {
            RecoveryVerdict::Completed => ("COMPLETED", "Completed"),
            RecoveryVerdict::StillRunning => {
                ("STILL RUNNING", "is still running and was not stopped")
            }
            RecoveryVerdict::Waiting => (
                "RESTORED, WAITING FOR A COMMIT",
                "waits for a person's commit or rollback",
            ),
        };
        format!(
            "{verdict}: {} of {} ({}) for change {}: task {} at site {} {ended}, in {}",
            self.operation.name(),
            self.vm.name,
            self.vm.id,
            self.change_id,
            self.task.task_id,
            self.site,
            elapsed_text(self.elapsed_ms)
        )
    }

    /// The headline, the checkpoint, the tag, the task's type and state, and the notes.
    pub fn summary(&self) -> String {
        let mut out = format!(
            "{}\n  VPG {} checkpoint {} at site {}\n  tag: {}\n  task {} ({}) {}",
            self.headline(),
            self.from.vpg_name,
            self.from.checkpoint_id,
            self.site,
            self.from.tag,
            self.task.task_id,
            self.task.task_type,
            self.task.state_text(),
        );
        if let RecoveryOperation::FailoverTestStop { success, summary } = &self.operation {
            out.push_str(&format!(
                "\n  recorded as {}{}",
                if *success { "successful" } else { "failed" },
                if summary.is_empty() {
                    String::new()
                } else {
                    format!(": {summary}")
                }
            ));
        }
        if let Some(clone) = &self.clone_vm {
            out.push_str(&format!("\n  {clone}"));
        }
        if let RecoveryOperation::RestoreVm { target } = &self.operation {
            out.push_str(&match target {
                RestoreTarget::Alongside { name } => {
                    format!("\n  restored as the new VM {name}; {} keeps running as it is", self.vm.name)
                }
                RestoreTarget::InPlace => format!(
                    "\n  {} was restored in place: its writes after the tag are gone once committed",
                    self.vm.name
                ),
            });
        }
        if let Some(at) = self.rolls_back_at {
            out.push_str(&format!(
                "\n  waits for `rewind restore commit {vm}` or `rewind restore rollback {vm}`; Zerto rolls it back by itself at about {} if nobody commits it",
                at.format("%Y-%m-%d %H:%M UTC"),
                vm = self.vm.name
            ));
        }
        for n in &self.notes {
            out.push_str(&format!("\n  note: {n}"));
        }
        out
    }
}

impl std::fmt::Display for CloneVm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the clone is VM {} at site {}", self.name, self.site)?;
        match &self.vm_id {
            Some(id) => write!(f, " ({id})"),
            None => f.write_str(" (not yet in the site's inventory)"),
        }
    }
}

/// Checks a change id or tag before anything is sent.
pub fn check_change(change: &str) -> Result<&str, RewindError> {
    let c = change.trim();
    let problem = if c.is_empty() {
        Some("it is empty; give the change id of the guard, or a tag exactly".to_string())
    } else if c.chars().any(char::is_control) {
        Some("it contains a control character; give it on one line".to_string())
    } else if c.chars().count() > MAX_CHANGE {
        Some(format!("it is longer than {MAX_CHANGE} characters"))
    } else {
        None
    };
    match problem {
        Some(problem) => Err(RewindError::InvalidInput {
            field: "change",
            problem,
        }),
        None => Ok(c),
    }
}

/// The VM, its protection and the change's recovery points, or a refusal that lists the tags found.
pub(crate) async fn resolve(
    ctx: &RecoverContext<'_>,
    vm: &str,
    change: &str,
) -> Result<(Protection, Vec<RecoveryPoint>), RewindError> {
    let protection = ctx.find_protection(vm).await?;
    let journaled = ctx.journal.journaled_tags(&protection.vm.id)?;
    let tags = crate::tagged_checkpoint::list_tags(ctx.sites, &protection, None, &journaled).await;
    let points = recovery_points(&protection, &tags, change);
    if let Some(vpg) = ctx.vpg
        && !points.is_empty()
    {
        return only_in(points, &tags, vpg, change).map(|points| (protection, points));
    }
    if points.is_empty()
        && let Some(gone) = not_recoverable(&protection, &tags, change)
    {
        return Err(gone);
    }
    if points.is_empty() {
        let found = tags
            .vpgs
            .iter()
            .map(|v| match &v.error {
                Some(e) => format!("{}: cannot be read ({e})", v.vpg_name),
                None if v.tags.is_empty() => format!("{}: none", v.vpg_name),
                None => format!(
                    "{}: {}",
                    v.vpg_name,
                    v.tags
                        .iter()
                        .rev()
                        .take(5)
                        .map(|t| format!("{:?}", t.tag))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            })
            .collect::<Vec<_>>()
            .join("; ");
        return Err(RewindError::NoTaggedCheckpoint {
            vm: protection.vm.name.clone(),
            change: change.to_string(),
            found: if found.is_empty() {
                "none".into()
            } else {
                found
            },
        });
    }
    Ok((protection, points))
}

/// The refusal of a change whose tags guards pinned but no VPG can recover from any more: what
/// became of each, and what is left. `None` when no tag of the change was ever seen.
fn not_recoverable(protection: &Protection, tags: &TagList, change: &str) -> Option<RewindError> {
    let states: Vec<String> = tags
        .vpgs
        .iter()
        .flat_map(|v| {
            v.tags
                .iter()
                .filter(|t| t.is_of_change(change))
                .map(move |t| format!("VPG {}: {}", v.vpg_name, t.state.describe(v.read_at)))
        })
        .collect();
    if states.is_empty() {
        return None;
    }
    let earliest: Vec<String> = tags
        .vpgs
        .iter()
        .filter_map(|v| {
            let t = v.journal_reaches_back_to?;
            Some(format!("{} {}", v.vpg_name, t.format("%Y-%m-%d %H:%M UTC")))
        })
        .collect();
    let alternatives = if earliest.is_empty() {
        "no earlier point is listed: a failover test or clone needs a checkpoint in the journal"
            .to_string()
    } else {
        format!(
            "the earliest checkpoints left are {} (a failover test or clone can use one, on the human's word); next time, run `rewind keep` after a guard to keep its tags past the journal",
            earliest.join(", ")
        )
    };
    Some(RewindError::TagNotRecoverable {
        vm: protection.vm.name.clone(),
        change: change.to_string(),
        states: states.join("; "),
        alternatives,
    })
}

/// The recovery point of VPG `vpg` (name or identifier) among `points`, or a refusal naming the VPGs
/// that hold the change's tag.
fn only_in(
    points: Vec<RecoveryPoint>,
    tags: &TagList,
    vpg: &str,
    change: &str,
) -> Result<Vec<RecoveryPoint>, RewindError> {
    let named = |p: &RecoveryPoint| {
        p.vpg_name.eq_ignore_ascii_case(vpg) || p.vpg_id.eq_ignore_ascii_case(vpg)
    };
    if points.iter().any(named) {
        return Ok(points.into_iter().filter(named).collect());
    }
    let holding: Vec<&str> = points.iter().map(|p| p.vpg_name.as_str()).collect();
    // What became of the tag in the VPG named, when a guard journaled one there.
    let became = tags
        .vpgs
        .iter()
        .filter(|v| v.vpg_name.eq_ignore_ascii_case(vpg) || v.vpg_id.eq_ignore_ascii_case(vpg))
        .flat_map(|v| {
            v.tags
                .iter()
                .filter(|t| t.is_of_change(change))
                .map(move |t| format!(" (its tag is {})", t.state.describe(v.read_at)))
        })
        .next()
        .unwrap_or_default();
    Err(RewindError::InvalidInput {
        field: "vpg",
        problem: format!(
            "VPG {vpg:?} holds no tagged checkpoint of change {change:?} to recover from{became}; the VPGs that hold one are {}: give one of them",
            holding.join(", ")
        ),
    })
}

/// Locally replicated VPGs first, then the others in name order (the order find_protection gives).
fn preference(points: &[RecoveryPoint]) -> Vec<&RecoveryPoint> {
    let mut ordered: Vec<&RecoveryPoint> = points.iter().collect();
    ordered.sort_by_key(|p| !p.locally_replicated);
    ordered
}

/// The configuration table a site would be added as: `sites.<its name, lowercased>`.
pub fn site_table(site: &SiteRef) -> String {
    let name: String = site
        .name
        .to_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let name = if name.trim_matches('-').is_empty() {
        "recovery".to_string()
    } else {
        name
    };
    format!("sites.{name}")
}

/// The VPG to run FLR from, and the configured site that runs it; refused (before anything is sent)
/// when no VPG with the tag has its recovery site's ZVM configured.
pub(crate) fn pick_for_flr<'a>(
    vm: &VmRef,
    points: &'a [RecoveryPoint],
) -> Result<(&'a RecoveryPoint, String), RewindError> {
    for p in preference(points) {
        if let FlrAvailability::Available { site } = &p.flr {
            return Ok((p, site.clone()));
        }
    }
    let vpgs = points
        .iter()
        .map(|p| format!("{} (recovery site {})", p.vpg_name, p.recovery_site))
        .collect::<Vec<_>>()
        .join(", ");
    if let Some(p) = points
        .iter()
        .find(|p| p.recovery_site.configured_as.is_none())
    {
        return Err(RewindError::RecoverySiteNotConfigured {
            vm: vm.name.clone(),
            change: p.change_id.clone(),
            vpgs,
            site: p.recovery_site.to_string(),
            table: site_table(&p.recovery_site),
        });
    }
    let reasons = points
        .iter()
        .map(|p| match &p.flr {
            FlrAvailability::Unavailable { reason } => format!("{}: {reason}", p.vpg_name),
            FlrAvailability::Available { site } => format!("{}: available at {site}", p.vpg_name),
        })
        .collect();
    Err(RewindError::NotPossible {
        reason: RecoveryRefusal::FlrUnavailable {
            vm: vm.name.clone(),
            reasons,
        },
    })
}

/// The configured site whose ZVM runs a failover test or clone of this VPG: the recovery site's when
/// configured, else the protected site's.
fn task_site(p: &RecoveryPoint) -> String {
    p.recovery_site
        .configured_as
        .clone()
        .or_else(|| p.protected_site.configured_as.clone())
        .unwrap_or_else(|| p.listed_by.clone())
}

/// The progress watcher of one task of a recovery.
fn watch<'a>(
    sink: &'a dyn ProgressSink,
    site: &'a str,
    point: &'a RecoveryPoint,
    task_type: &'a str,
) -> Watch<'a> {
    Watch {
        sink,
        site,
        vpg_id: &point.vpg_id,
        vpg_name: &point.vpg_name,
        task_type,
        began: Instant::now(),
    }
}

/// How a recovery task ended.
pub(crate) enum Ended {
    /// Completed.
    Completed(RecoveryTask),
    /// Still running when waiting stopped.
    StillRunning(RecoveryTask),
    /// Failed or Stopped ([`RecoveryTask::failed`] is the error to give).
    Failed(RecoveryTask),
    /// WaitingForUserInput: a journal VM restore done, waiting for a commit or a rollback.
    Waiting(RecoveryTask),
}

impl RecoveryTask {
    /// The `TaskFailed` error of a task that ended Failed or Stopped, with its `CompleteReason`.
    pub(crate) fn failed(&self) -> RewindError {
        RewindError::TaskFailed {
            site: self.site.clone(),
            task_id: self.task_id.clone(),
            task_type: self.task_type.clone(),
            state: self.state_text(),
            reason: self
                .complete_reason
                .clone()
                .unwrap_or_else(|| "the ZVM gave no reason".into()),
        }
    }
}

/// Waits for a recovery task until it is terminal or `deadline`. An error is only a failure to read
/// the task; how the task itself ended is in the answer.
pub(crate) async fn await_task(
    client: &ZvmClient,
    task_id: &str,
    sent: Instant,
    deadline: Instant,
    watch: &Watch<'_>,
) -> Result<Ended, RewindError> {
    await_task_until(
        client,
        task_id,
        sent,
        deadline,
        watch,
        crate::codes::is_terminal,
    )
    .await
}

/// [`await_task`], ending at the first state `ends` takes: a journal VM restore's ends waiting.
pub(crate) async fn await_task_until(
    client: &ZvmClient,
    task_id: &str,
    sent: Instant,
    deadline: Instant,
    watch: &Watch<'_>,
    ends: fn(i64) -> bool,
) -> Result<Ended, RewindError> {
    watch.report(Stage::Running, Some(task_id), None);
    // A recovery's task (a mount, a failover test) runs for seconds to minutes: the floor is
    // the least, as its first poll is the only one it paces.
    let pace = Pace {
        learnt: None,
        floor: MIN_POLL,
    };
    let waited = wait_task_until(client, task_id, sent, deadline, pace, watch, ends).await;
    let waited = match waited {
        Ok(w) => w,
        Err(e) => {
            watch.report(Stage::Done, Some(task_id), None);
            return Err(e);
        }
    };
    match waited {
        TaskWait::Terminal(task) => {
            watch.report(Stage::Done, Some(task_id), Some(&task));
            let ended = RecoveryTask::new(client.name(), task_id, watch.task_type, Some(&task));
            match task.state() {
                Some(STATE_COMPLETED) => Ok(Ended::Completed(ended)),
                Some(STATE_WAITING_FOR_USER_INPUT) => Ok(Ended::Waiting(ended)),
                _ => Ok(Ended::Failed(ended)),
            }
        }
        TaskWait::StillRunning(last) => Ok(Ended::StillRunning(RecoveryTask::new(
            client.name(),
            task_id,
            watch.task_type,
            last.as_ref(),
        ))),
    }
}

/// The client of a configured site.
fn client_of(ctx: &RecoverContext<'_>, site: &str) -> Result<Arc<ZvmClient>, RewindError> {
    crate::protection::site_client(ctx.configured, site).cloned()
}

/// One journal record of a recovery.
pub(crate) struct RecoveryRecord<'a> {
    pub(crate) client: &'a ZvmClient,
    pub(crate) action: String,
    pub(crate) vm: &'a VmRef,
    pub(crate) point: &'a RecoveryPoint,
    pub(crate) verdict: JournalVerdict,
    pub(crate) task: Option<&'a RecoveryTask>,
    pub(crate) detail: Option<String>,
    pub(crate) notes: &'a [RecoveryNote],
    pub(crate) details: serde_json::Value,
}

impl RecoveryRecord<'_> {
    /// Appends the record; a journal that cannot be written is returned as a note (the recovery
    /// itself stands).
    pub(crate) async fn append(self, ctx: &RecoverContext<'_>) -> Option<RecoveryNote> {
        let record = JournalRecord {
            time: Utc::now(),
            kind: RecordKind::Recovery,
            agent: ctx.agent.unwrap_or(self.client.principal()).to_string(),
            person: ctx.person.cloned(),
            action: self.action,
            change_id: self.point.change_id.clone(),
            vm: JournalVm::from(self.vm),
            verdict: self.verdict.clone(),
            vpgs: vec![JournalVpg {
                tag: Some(self.point.tag.clone()),
                task_id: self.task.map(|t| t.task_id.clone()),
                task_state: self.task.map(RecoveryTask::state_text),
                checkpoint_id: Some(self.point.checkpoint_id.clone()),
                detail: self.detail,
                ..JournalVpg::new(
                    &self.point.vpg_id,
                    &self.point.vpg_name,
                    JournalOutcome::of_recovery(&self.verdict),
                )
            }],
            // The journal holds each note as its sentence, as the report's JSON does.
            notes: self.notes.iter().map(ToString::to_string).collect(),
            details: Some(self.details),
            attempt: None,
            sites: None,
        };
        match ctx.journal.append_off_runtime(record).await {
            Ok(()) => None,
            Err(e) => {
                // The report's notes carry it to the front; a log line would say it twice.
                tracing::debug!("{e}");
                Some(RecoveryNote::NotJournaled {
                    error: e.to_string(),
                })
            }
        }
    }
}

pub(crate) use diff::diff;
pub(crate) use flr::recover_file;
pub(crate) use keep::keep;
pub(crate) use plan::{check_plan, preview};
pub(crate) use restore::{declined as restore_declined, end_restore, restore_status, restore_vm};
pub(crate) use vpg_task::{clone, failover_test};
