//! What the world keeps of each FLR session ([`FlrSession`]): where it is in its life, what it
//! mounted, and the downloads asked of it. Mounting, browsing and downloading are `flr.rs`.

use serde::{Deserialize, Serialize};

use super::clock::SimTime;
use super::ids::SiteRole;
use super::journal::Checkpoint;
use super::tasks::TaskKey;

/// Where a session is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all_fields = "PascalCase")]
pub enum FlrState {
    /// The mount task runs.
    Mounting,
    /// Browse and download work.
    Mounted,
    /// The mount task failed; only an unmount is possible.
    MountFailed,
    /// The unmount task runs; the session disappears when it ends.
    Unmounting,
}

impl FlrState {
    /// `FlrSessionStatus`.
    pub fn wire(self) -> &'static str {
        match self {
            FlrState::Mounting => "MountInProgress",
            FlrState::Mounted => "MountCompletedSuccessfully",
            FlrState::MountFailed => "MountFailed",
            FlrState::Unmounting => "UnmountInProgress",
        }
    }
}

/// A download a client asked for: the URL names it, the paths say what it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct FlrDownload {
    /// The last segment of the download URL (lowercase hex).
    pub id: String,
    /// The guest paths, as the client gave them.
    pub paths: Vec<String>,
}

/// One FLR session.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct FlrSession {
    /// `FlrSessionIdentifier`: `<guid>.<siteGuid>`.
    pub id: String,
    /// The site that mounted it (the VPG's recovery site).
    pub site: SiteRole,
    /// The VPG whose journal is mounted.
    pub vpg: usize,
    /// The VM whose disks are mounted.
    pub vm: usize,
    /// The checkpoint mounted; for a retention set, the checkpoint it was copied from (whose
    /// moment is the set's point in time).
    pub checkpoint: Checkpoint,
    /// The retention set mounted (a `Bflr` session); `None` for a journal checkpoint (`Jflr`).
    #[serde(default)]
    pub retention_set: Option<String>,
    /// `InitialDownloadPath`, shown as `SelectedPath`.
    pub selected_path: Option<String>,
    /// Where it is in its life.
    pub state: FlrState,
    /// The `FlrJournalMount` task.
    pub mount_task: TaskKey,
    /// The `FlrJournalUnmount` task, once asked for.
    pub unmount_task: Option<TaskKey>,
    /// `MountTime`: when the mount completed.
    pub mounted_at: Option<SimTime>,
    /// The downloads asked for.
    pub downloads: Vec<FlrDownload>,
}
