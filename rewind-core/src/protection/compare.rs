//! A VM's VPGs now compared with its newest guard's: a difference is journaled once and said as a
//! note.

use super::model::VpgProtection;
use super::note::ProtectionNote;

/// What `journal` says of `vm`, now in `vpgs`, against its newest guard: the note of a
/// difference, journaled (`protection_changed`, by `agent` for `person`) the first time it is seen;
/// `None` when there is none.
pub(crate) fn compared_with_guard(
    journal: &crate::audit_journal::AuditJournal,
    vm: &crate::audit_journal::JournalVm,
    vpgs: &[VpgProtection],
    agent: &str,
    person: Option<&crate::audit_journal::Person>,
) -> Option<ProtectionNote> {
    let now: Vec<crate::audit_journal::VpgNow> = vpgs
        .iter()
        .map(|v| crate::audit_journal::VpgNow {
            id: v.vpg_id.clone(),
            name: v.vpg_name.clone(),
        })
        .collect();
    match journal.note_protection(vm, &now, agent, person, chrono::Utc::now()) {
        Ok(record) => record.map(|r| ProtectionNote::ProtectionChanged {
            said: r.notes.join("; "),
        }),
        Err(e) => Some(ProtectionNote::NotCompared {
            error: e.to_string(),
        }),
    }
}
