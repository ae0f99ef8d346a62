//! What an operation carries to its task's end (`tasks.rs`'s `Operation`): a VPG's removal
//! ([`Removal`]), the change a settings commit applies ([`VpgChange`]) and a VRA's settings
//! ([`VraSettings`]). They live low, apart from the files that act on them, so that the tasks and
//! those files do not depend on one another.

use serde::{Deserialize, Serialize};

use super::ids::SiteRole;

/// `DELETE /v1/vpgs/{id}`'s body (SW10's `VpgDeleteDataApi`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Removal {
    /// `KeepRecoveryVolumes`: keep the replica disks at the recovery site.
    pub keep_recovery_volumes: bool,
    /// `Force`: remove it even while an operation runs on it (the operation is stopped).
    pub force: bool,
}

/// What a commit applies to a VPG.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct VpgChange {
    /// `VpgName`.
    pub name: String,
    /// Where its VMs run.
    pub protected: SiteRole,
    /// Where its journal is.
    pub recovery: SiteRole,
    /// Its VMs (positions in `World::vms`).
    pub vms: Vec<usize>,
    /// `ConfiguredRpoSeconds`.
    pub rpo_seconds: u32,
    /// The journal history, in hours.
    pub history_hours: i64,
    /// `Priority`.
    pub priority: u8,
}

/// What a VRA is configured with (`VraCreateDataApi`, `VraEditDataApi`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct VraSettings {
    /// `MemoryInGB`.
    pub memory_gb: u32,
    /// `NumOfCpus`.
    pub cpus: u32,
    /// `VraGroup`.
    pub group: String,
}

impl Default for VraSettings {
    fn default() -> Self {
        VraSettings {
            memory_gb: 3,
            cpus: 1,
            group: "default_group".to_owned(),
        }
    }
}
