//! What Extended Journal Copy keeps: the world's repositories and retention sets ([`Ltr`]) and each
//! VPG's copy state ([`VpgLtr`]). Its runs are `retention.rs`; its repositories' writes,
//! `repositories.rs`.

use serde::{Deserialize, Serialize};

use super::clock::SimTime;
use super::ids::SiteRole;
use super::journal::Checkpoint;
use super::tasks::TaskKey;

/// A repository of retention sets, at a site.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Repository {
    /// `RepositoryIdentifier`, a GUID.
    pub id: String,
    /// `RepositoryName`.
    pub name: String,
    /// The site whose ZVM manages it.
    pub site: SiteRole,
    /// Keep For of the sets written to it, in days.
    pub keep_days: u32,
    /// `TotalCapacityGB`.
    pub capacity_gb: u64,
    /// Deleted through the API: it keeps its position (retention sets hold it) but is not listed.
    #[serde(default)]
    pub deleted: bool,
}

/// A full retention set: a VPG's VMs as they were at a checkpoint, kept in a repository.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RetentionSet {
    /// `RetentionSetIdentifier`.
    pub id: String,
    /// The VPG it was written for.
    pub vpg: usize,
    /// The repository it is kept in (a position in `Ltr::repositories`).
    pub repository: usize,
    /// The checkpoint it was copied from: its moment is the set's `PointInTime`.
    pub checkpoint: Checkpoint,
    /// The VMs it holds.
    pub vms: Vec<usize>,
    /// When it was written (its run ended).
    pub written: SimTime,
    /// `ExpiryDate`: it is gone from this moment on.
    pub expires: SimTime,
    /// `SizeInKB`.
    pub size_kb: u64,
    /// Who ran it.
    pub initiated_by: String,
}

impl RetentionSet {
    /// Whether it is still kept at `now`.
    pub fn kept_at(&self, now: SimTime) -> bool {
        now < self.expires
    }
}

/// The world's repositories and retention sets.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Ltr {
    /// Every repository, in the world file's order.
    pub repositories: Vec<Repository>,
    /// The retention sets written and not yet forgotten, oldest first (an expired one is
    /// forgotten when the world next trims).
    pub sets: Vec<RetentionSet>,
    /// How many set identifiers were handed out.
    pub issued: u64,
}

/// A VPG's Extended Journal Copy: its repository and its runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct VpgLtr {
    /// Its repository (a position in `Ltr::repositories`), if it has one.
    pub repository: Option<usize>,
    /// The `ManualRetention` task running, if any.
    pub running: Option<TaskKey>,
    /// Runs asked for (`SuccessRate.ExpectedRetentionSets`).
    pub runs: u32,
    /// Runs that wrote a set (`SuccessRate.ActualSuccessfulRetentionSets`).
    pub successes: u32,
    /// When the last run was asked for.
    pub last_run: Option<SimTime>,
    /// When the last run that wrote a set ended.
    pub last_success: Option<SimTime>,
    /// Whether the last run that ended failed.
    pub last_failed: bool,
}
