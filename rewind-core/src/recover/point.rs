//! Choosing where to recover from: each VPG's newest checkpoint of the change, the VM resolved and
//! its tags read, the VPG picked (for FLR, one whose recovery site is configured).

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::context::RecoverContext;
use crate::error::{RecoveryRefusal, RewindError};
use crate::protection::{FlrAvailability, Protection, SiteRef, VmRef};
use crate::tagged_checkpoint::TagList;
use crate::way_back::TagState;

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
pub(super) fn preference(points: &[RecoveryPoint]) -> Vec<&RecoveryPoint> {
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
pub(super) fn task_site(p: &RecoveryPoint) -> String {
    p.recovery_site
        .configured_as
        .clone()
        .or_else(|| p.protected_site.configured_as.clone())
        .unwrap_or_else(|| p.listed_by.clone())
}
