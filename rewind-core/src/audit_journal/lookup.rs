//! The hook's question of the journal: what the records say of a VM reference (one VM guarded
//! within the window, none, several that answer to it, or a guard its protection outgrew).

use chrono::{DateTime, Utc};

use super::filter::window_start;
use super::protection_change;
use super::record::{JournalRecord, JournalVm, RecordKind};
use super::verdict::JournalVerdict;
use crate::vm::VmQuery;

/// What the journal says of a VM reference: [`AuditJournal::last_guarded`].
#[derive(Debug, Clone, PartialEq)]
pub enum GuardLookup {
    /// The reference names one VM, guarded within the window: its newest `guarded` record.
    Guarded(Box<JournalRecord>),
    /// The reference names no VM of the journal, or one without a `guarded` record within the window.
    NotGuarded,
    /// The reference matches records of more than one VM (each listed once, as its newest record
    /// names it), so the journal cannot tell which one is meant.
    Ambiguous(Vec<JournalVm>),
    /// The VM was guarded within the window, but its VPGs changed after that guard so that it no
    /// longer covers the VM: a VPG was added (holding no tag of it), or every VPG the guard tagged
    /// is gone. The `protection_changed` record saying so, newer than the guard.
    ProtectionChanged(Box<JournalRecord>),
}

/// Whether `r` is a `guarded` guard record written at or after `since`.
fn is_guarded(r: &JournalRecord, since: DateTime<Utc>) -> bool {
    r.kind == RecordKind::Guard && r.verdict == JournalVerdict::Guarded && r.time >= since
}

impl GuardLookup {
    /// What `records` say of the VM reference `vm` for the hook, as [`AuditJournal::last_guarded`]
    /// tells it from one journal: records of more than one VM answering to `vm` are
    /// [`GuardLookup::Ambiguous`], whatever their verdicts and ages; else the newest `guarded` record
    /// written less than `within` ago, if any. `records` may come from several journals (this
    /// machine's and a team server's).
    pub fn among(
        records: impl IntoIterator<Item = JournalRecord>,
        vm: &str,
        within: std::time::Duration,
    ) -> GuardLookup {
        GuardLookup::judged(std::iter::empty(), records, vm, within)
    }

    /// [`GuardLookup::among`] with more ways VMs were named than `records` hold (`namings`: when,
    /// and the VM as named then; a journal's VM index): two VMs answering to `vm` in either are
    /// ambiguous; the newest `guarded` record of the one VM, among `records`, decides.
    pub fn judged(
        namings: impl IntoIterator<Item = (DateTime<Utc>, JournalVm)>,
        records: impl IntoIterator<Item = JournalRecord>,
        vm: &str,
        within: std::time::Duration,
    ) -> GuardLookup {
        GuardLookup::judged_since(namings, records, vm, window_start(within))
    }

    /// [`GuardLookup::judged`] for a window that began at `since`: what the hook's judgement, which
    /// is told the time, asks.
    pub fn judged_since(
        namings: impl IntoIterator<Item = (DateTime<Utc>, JournalVm)>,
        records: impl IntoIterator<Item = JournalRecord>,
        vm: &str,
        since: DateTime<Utc>,
    ) -> GuardLookup {
        let query = VmQuery::new(vm);
        let records: Vec<JournalRecord> = records
            .into_iter()
            .filter(|r| r.vm.answers_to(&query))
            .collect();
        let mut named: Vec<(DateTime<Utc>, JournalVm)> = namings
            .into_iter()
            .filter(|(_, v)| v.answers_to(&query))
            .chain(records.iter().map(|r| (r.time, r.vm.clone())))
            .collect();
        named.sort_by_key(|(time, _)| *time);
        let mut vms: Vec<JournalVm> = Vec::new();
        for (_, vm) in named {
            match vms.iter_mut().find(|v| v.id == vm.id) {
                // The newest naming of a VM names it as it is now.
                Some(known) => *known = vm,
                None => vms.push(vm),
            }
        }
        if vms.len() > 1 {
            return GuardLookup::Ambiguous(vms);
        }
        let Some(guard) = records
            .iter()
            .filter(|r| is_guarded(r, since))
            .max_by_key(|r| r.time)
        else {
            return GuardLookup::NotGuarded;
        };
        let changed_since = records
            .iter()
            .filter(|r| r.time > guard.time && protection_change::unguards(r, guard))
            .max_by_key(|r| r.time);
        match changed_since {
            Some(change) => GuardLookup::ProtectionChanged(Box::new(change.clone())),
            None => GuardLookup::Guarded(Box::new(guard.clone())),
        }
    }

    /// The guarded record, when the reference names one VM guarded within the window.
    pub fn guarded(&self) -> Option<&JournalRecord> {
        match self {
            GuardLookup::Guarded(r) => Some(r),
            _ => None,
        }
    }
}
