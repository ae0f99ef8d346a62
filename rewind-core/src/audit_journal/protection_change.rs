//! A VM's protection changing under its guard: Zerto's VPGs are edited by people and automation
//! while an agent works, so the VPGs a VM is in now may not be those its newest guard tagged. A VPG
//! added since holds nothing of the guard (the VM's change there cannot be rewound), and a VPG
//! removed since took the guard's tag with it.
//!
//! Whatever reads a VM's VPGs (`find`, `tags`, the team server's pages) compares them with the
//! newest guard of the VM and journals a `protection_changed` record when they differ, once per
//! difference. The hook, which asks no ZVM, reads that record: a VPG added after the guard makes
//! the VM unguarded until it is guarded again.

use chrono::{DateTime, Utc};

use super::record::{JournalRecord, JournalVm, JournalVpg, Person, RecordKind};
use super::verdict::{JournalOutcome, JournalVerdict};

/// One VPG a VM is in, as a lookup found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VpgNow {
    /// `VpgIdentifier`.
    pub id: String,
    /// `VpgName`.
    pub name: String,
}

/// Whether `r` is a `protection_changed` record naming a VPG added after the guard.
pub(super) fn adds_a_vpg(r: &JournalRecord) -> bool {
    r.kind == RecordKind::ProtectionChanged
        && r.vpgs.iter().any(|v| v.outcome == JournalOutcome::Added)
}

/// Whether the `protection_changed` record `r` leaves the VM unguarded by `guard`: a VPG was added
/// that holds no tag of it, or every VPG the guard tagged is gone, so no way back is left.
pub(super) fn unguards(r: &JournalRecord, guard: &JournalRecord) -> bool {
    if r.kind != RecordKind::ProtectionChanged || r.vm.id != guard.vm.id {
        return false;
    }
    let removed = |id: &str| {
        r.vpgs
            .iter()
            .any(|v| v.outcome == JournalOutcome::Removed && v.vpg_id == id)
    };
    let mut tagged = guard
        .vpgs
        .iter()
        .filter(|v| v.outcome == JournalOutcome::Tagged);
    adds_a_vpg(r) || tagged.all(|v| removed(&v.vpg_id))
}

/// What a `protection_changed` record for `vm`, now in `vpgs`, says, given the VM's records: the
/// change id of its newest ended guard, a line for each VPG added or removed since, and whether a
/// record since already says this very difference. `None` when the VM was never guarded or its
/// VPGs are those the guard saw.
pub(super) fn change_of(
    records: &[JournalRecord],
    vm: &JournalVm,
    vpgs: &[VpgNow],
) -> Option<(String, Vec<JournalVpg>, bool)> {
    let guard = records
        .iter()
        .filter(|r| r.kind == RecordKind::Guard && r.vm.id == vm.id && has_ended(&r.verdict))
        .max_by_key(|r| r.time)?;
    let added = vpgs
        .iter()
        .filter(|now| !guard.vpgs.iter().any(|v| v.vpg_id == now.id))
        .map(|now| JournalVpg::new(&now.id, &now.name, JournalOutcome::Added));
    let removed = guard
        .vpgs
        .iter()
        .filter(|then| !vpgs.iter().any(|now| now.id == then.vpg_id))
        .map(|then| JournalVpg::new(&then.vpg_id, &then.vpg_name, JournalOutcome::Removed));
    let lines: Vec<JournalVpg> = added.chain(removed).collect();
    let said = records.iter().any(|r| {
        r.kind == RecordKind::ProtectionChanged
            && r.vm.id == vm.id
            && r.time >= guard.time
            && r.vpgs == lines
    });
    (!lines.is_empty()).then(|| (guard.change_id.clone(), lines, said))
}

fn has_ended(verdict: &JournalVerdict) -> bool {
    !matches!(verdict, JournalVerdict::Started | JournalVerdict::Running)
}

/// The names of the VPGs of `vpgs` with `outcome`.
pub fn named(vpgs: &[JournalVpg], outcome: JournalOutcome) -> Vec<String> {
    vpgs.iter()
        .filter(|v| v.outcome == outcome)
        .map(|v| v.vpg_name.clone())
        .collect()
}

/// The sentence a `protection_changed` record's lines say.
pub fn describe(vm: &str, change_id: &str, vpgs: &[JournalVpg]) -> String {
    let mut parts = Vec::new();
    let added = named(vpgs, JournalOutcome::Added);
    if !added.is_empty() {
        parts.push(format!(
            "{} began protecting {vm} after the guard of change {change_id} and holds no tag of it: \
             mutating calls on {vm} are denied until it is guarded again",
            added.join(", ")
        ));
    }
    let removed = named(vpgs, JournalOutcome::Removed);
    if !removed.is_empty() {
        parts.push(format!(
            "{} no longer holds {vm} (deleted, or the VM taken out of it): the tag of change \
             {change_id} there cannot be recovered from",
            removed.join(", ")
        ));
    }
    parts.join("; ")
}

/// The `protection_changed` record `vm`'s `records` (those since [`super::watch::history_start`]) call for, with
/// the VPGs it is in now (`vpgs`), and whether a record since already says it; `None` when its VPGs
/// do not differ from its newest guard's (or it was never guarded).
pub(super) fn change_record(
    records: &[JournalRecord],
    vm: &JournalVm,
    vpgs: &[VpgNow],
    agent: &str,
    person: Option<&Person>,
    now: DateTime<Utc>,
) -> Option<(JournalRecord, bool)> {
    let (change_id, lines, said) = change_of(records, vm, vpgs)?;
    let record = JournalRecord {
        time: now,
        kind: RecordKind::ProtectionChanged,
        agent: agent.to_owned(),
        person: person.cloned(),
        action: "protection changed".to_owned(),
        notes: vec![describe(&vm.name, &change_id, &lines)],
        change_id,
        vm: vm.clone(),
        verdict: JournalVerdict::ProtectionChanged,
        vpgs: lines,
        details: None,
        attempt: None,
        sites: None,
        approved_by: None,
    };
    Some((record, said))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit_journal::{AuditJournal, JournalFilter};
    use chrono::TimeZone;

    fn vm() -> JournalVm {
        JournalVm {
            id: "s1.vm-2".into(),
            name: "db-01".into(),
            ip_addresses: Vec::new(),
            site: "Boston".into(),
        }
    }

    fn at(minute: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 5, 10, minute, 0).unwrap()
    }

    fn record(
        kind: RecordKind,
        verdict: JournalVerdict,
        minute: u32,
        vpgs: &[(&str, JournalOutcome)],
    ) -> JournalRecord {
        JournalRecord {
            time: at(minute),
            kind,
            agent: "claude-code".into(),
            person: None,
            action: "migrate".into(),
            change_id: "mig-1".into(),
            vm: vm(),
            verdict,
            vpgs: vpgs
                .iter()
                .map(|(v, o)| JournalVpg::new(&format!("id-{v}"), v, o.clone()))
                .collect(),
            notes: Vec::new(),
            details: None,
            attempt: None,
            sites: None,
            approved_by: None,
        }
    }

    fn guard(verdict: JournalVerdict, vpgs: &[&str]) -> JournalRecord {
        let lines: Vec<_> = vpgs.iter().map(|v| (*v, JournalOutcome::Tagged)).collect();
        record(RecordKind::Guard, verdict, 0, &lines)
    }

    fn now(vpgs: &[&str]) -> Vec<VpgNow> {
        vpgs.iter()
            .map(|v| VpgNow {
                id: format!("id-{v}"),
                name: v.to_string(),
            })
            .collect()
    }

    /// The (VPG, outcome) pairs of what `change_of` says, and whether it is said already.
    fn said(
        records: &[JournalRecord],
        vpgs: &[&str],
    ) -> Option<(Vec<(String, JournalOutcome)>, bool)> {
        change_of(records, &vm(), &now(vpgs)).map(|(change, lines, said)| {
            assert_eq!(change, "mig-1");
            (
                lines.into_iter().map(|l| (l.vpg_name, l.outcome)).collect(),
                said,
            )
        })
    }

    #[test]
    fn vpgs_added_and_removed_since_the_newest_ended_guard_are_said_once() {
        use JournalOutcome::{Added, Removed};
        let guarded = || guard(JournalVerdict::Guarded, &["web-dr"]);
        assert_eq!(said(&[guarded()], &["web-dr"]), None, "nothing changed");
        assert_eq!(said(&[], &["web-dr", "app-tier"]), None, "never guarded");
        assert_eq!(
            said(&[guarded()], &["web-dr", "app-tier"]),
            Some((vec![("app-tier".into(), Added)], false))
        );
        assert_eq!(
            said(&[guarded()], &["app-tier"]),
            Some((
                vec![("app-tier".into(), Added), ("web-dr".into(), Removed)],
                false
            ))
        );
        // Once journaled, the same difference is not journaled again; another one is.
        let journaled = record(
            RecordKind::ProtectionChanged,
            JournalVerdict::ProtectionChanged,
            5,
            &[("app-tier", Added)],
        );
        let records = [guarded(), journaled];
        assert_eq!(
            said(&records, &["web-dr", "app-tier"]),
            Some((vec![("app-tier".into(), Added)], true))
        );
        assert_eq!(
            said(&records, &["web-dr", "app-tier", "sql-local"]),
            Some((
                vec![("app-tier".into(), Added), ("sql-local".into(), Added)],
                false
            ))
        );
        // A guard still running is not what the VM was guarded with yet.
        assert_eq!(
            said(
                &[guard(JournalVerdict::Started, &["web-dr"])],
                &["app-tier"]
            ),
            None
        );
    }

    #[test]
    fn a_change_unguards_when_a_vpg_is_added_or_every_tagged_vpg_is_gone() {
        use JournalOutcome::{Added, Removed};
        let change = |lines: &[(&str, JournalOutcome)]| {
            record(
                RecordKind::ProtectionChanged,
                JournalVerdict::ProtectionChanged,
                5,
                lines,
            )
        };
        let two = guard(JournalVerdict::Guarded, &["web-dr", "web-local"]);
        assert!(unguards(&change(&[("app-tier", Added)]), &two));
        assert!(!unguards(&change(&[("web-dr", Removed)]), &two));
        assert!(unguards(
            &change(&[("web-dr", Removed), ("web-local", Removed)]),
            &two
        ));
        assert!(
            !unguards(&guard(JournalVerdict::Guarded, &["web-dr"]), &two),
            "a guard is no change"
        );
    }

    #[test]
    fn a_vpg_added_after_a_guard_is_journaled_once_and_read_alike_here_and_by_a_team_servers_hook()
    {
        use crate::audit_journal::GuardLookup;
        let dir = tempfile::tempdir().unwrap();
        let j = AuditJournal::new(dir.path().join("journal.jsonl"));
        let window = std::time::Duration::from_secs(600);
        let mut guard = crate::audit_journal::tests::record("db-01", "mig-1");
        guard.time = Utc::now() - chrono::Duration::minutes(2);
        guard.vpgs = vec![JournalVpg::new(
            "id-web-dr",
            "web-dr",
            JournalOutcome::Tagged,
        )];
        j.append(&guard).unwrap();
        assert!(matches!(
            j.last_guarded("db-01", window).unwrap(),
            GuardLookup::Guarded(_)
        ));

        let vm = guard.vm.clone();
        let first = j.note_protection(
            &vm,
            &now(&["web-dr", "app-tier"]),
            "rewind",
            None,
            Utc::now(),
        );
        let first = first.unwrap().expect("a difference");
        let again = j.note_protection(
            &vm,
            &now(&["web-dr", "app-tier"]),
            "rewind",
            None,
            Utc::now(),
        );
        assert_eq!(again.unwrap().expect("still a difference").vpgs, first.vpgs);
        let all = j.read(&JournalFilter::default()).unwrap().records;
        let changes: Vec<_> = all
            .iter()
            .filter(|r| r.kind == RecordKind::ProtectionChanged)
            .collect();
        assert_eq!(changes.len(), 1, "said once: {all:#?}");
        assert_eq!(changes[0].change_id, "mig-1");
        assert!(
            changes[0].notes[0].contains("app-tier began protecting db-01"),
            "{:?}",
            changes[0].notes
        );

        let here = j.last_guarded("db-01", window).unwrap();
        assert!(
            matches!(here, GuardLookup::ProtectionChanged(_)),
            "{here:?}"
        );
        let there = GuardLookup::among(j.guards_view(window).unwrap(), "db-01", window);
        assert_eq!(there, here);
        // Unchanged VPGs say nothing.
        assert!(
            j.note_protection(&vm, &now(&["web-dr"]), "rewind", None, Utc::now())
                .unwrap()
                .is_none()
        );
    }
}
