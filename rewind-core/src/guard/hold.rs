//! The locks a guard holds across a team server's replicas while it inserts: the VPG's lease,
//! taken with the VPG's place in this process's queue, and whether the change's and the VPG's
//! leases are still this process's to act on. On a journal file there is no VPG lease, and a
//! change lock is held until dropped.

use std::time::Instant;

use super::problem::VpgProblem;
use crate::audit_journal::change_lock::ChangeLockError;
use crate::audit_journal::{AuditJournal, ChangeHold, Fence};
use crate::protection::VpgProtection;

/// The VPG's lease of a journal shared by replicas (`None` on a file), waited for until the
/// deadline.
pub(super) async fn vpg_lease(
    journal: &AuditJournal,
    vpg: &VpgProtection,
    deadline: Instant,
) -> Result<Option<ChangeHold>, VpgProblem> {
    let name = || vpg.vpg_name.clone();
    match journal.lock_vpg(&vpg.vpg_id, deadline).await {
        Ok(leased) => Ok(leased),
        Err(ChangeLockError::Busy { .. }) => Err(VpgProblem::BusyElsewhere { vpg: name() }),
        Err(ChangeLockError::Io { lock, source }) => Err(VpgProblem::LockLost {
            vpg: name(),
            lock: format!("{lock} ({source})"),
        }),
    }
}

/// The problem of a lock the guard of `vpg` can no longer count on (its change's lease, behind
/// `fence`, or `leased`, the VPG's), if any.
pub(super) fn lost(
    journal: &AuditJournal,
    fence: &Fence,
    leased: Option<&ChangeHold>,
    vpg: &VpgProtection,
) -> Option<VpgProblem> {
    let place = journal.place();
    let lock = if !fence.holds() {
        format!("its change's lease in {place}")
    } else if leased.is_some_and(|l| !l.holds()) {
        format!("the VPG's lease in {place}")
    } else {
        return None;
    };
    let vpg = vpg.vpg_name.clone();
    Some(VpgProblem::LockLost { vpg, lock })
}
