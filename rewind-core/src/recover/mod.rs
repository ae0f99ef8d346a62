//! Bounded recover: file-level recovery (FLR), failover test and offsite clone, each from a tagged
//! checkpoint. Failover Live and Move are never rewind tools and have no code path here.
//!
//! This module is where issue 5 builds the three recoveries. What is here now is the step all three
//! begin with: finding, for a VM and a change id, the tagged checkpoint of each VPG to recover from and
//! the configured site that can run the recovery (FLR runs at the VPG's recovery site).

use serde::Serialize;

use crate::guard::TagList;
use crate::protection::{FlrAvailability, Protection};

/// The checkpoint of one VPG that a recovery for one change would start from.
#[derive(Debug, Clone, Serialize)]
pub struct RecoveryPoint {
    /// The VPG.
    pub vpg_id: String,
    /// Its name.
    pub vpg_name: String,
    /// The newest tagged checkpoint of the change in this VPG.
    pub checkpoint_id: String,
    /// Its tag.
    pub tag: String,
    /// Whether FLR can run for it, and through which configured site.
    pub flr: FlrAvailability,
}

/// For each VPG of `protection`, the newest checkpoint in `tags` whose tag names `change_id`. VPGs
/// without such a checkpoint are left out.
pub fn recovery_points(
    protection: &Protection,
    tags: &TagList,
    change_id: &str,
) -> Vec<RecoveryPoint> {
    let change_id = change_id.trim();
    protection
        .vpgs
        .iter()
        .filter_map(|vpg| {
            let listed = tags.vpgs.iter().find(|t| t.vpg_id == vpg.vpg_id)?;
            let newest = listed
                .tags
                .iter()
                .filter(|t| t.parts.as_ref().is_some_and(|p| p.change_id == change_id))
                .max_by_key(|t| t.timestamp)?;
            Some(RecoveryPoint {
                vpg_id: vpg.vpg_id.clone(),
                vpg_name: vpg.vpg_name.clone(),
                checkpoint_id: newest.checkpoint_id.clone(),
                tag: newest.tag.clone(),
                flr: vpg.flr.clone(),
            })
        })
        .collect()
}
