//! What a recovery reports: a file recovery's files, a task's operation and verdict, the VM a
//! clone made, an unmount.

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::destination::RecoveredFile;
use super::note::RecoveryNote;
use super::point::RecoveryPoint;
use super::task::RecoveryTask;
use crate::progress::elapsed_text;
use crate::protection::VmRef;

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
    pub(super) fn sentence(&self, session_id: &str, site: &str) -> String {
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

/// The journal's words for a restore: `restore vm as NAME`, `restore vm in place`.
pub(super) fn action_of(target: &RestoreTarget) -> String {
    match target {
        RestoreTarget::Alongside { name } => format!("restore vm as {}", name.trim()),
        RestoreTarget::InPlace => "restore vm in place".to_string(),
    }
}
