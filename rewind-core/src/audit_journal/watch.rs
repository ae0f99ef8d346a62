//! Watching the ways back: the open changes (guarded, not yet said done) whose way back ends within a
//! window, and a person's word that a change is done, which closes it so it is no longer watched.
//!
//! Read from the journal alone, from the recoverable-until each guard said: a cron job asks without
//! a ZVM, and a VM need not be named.

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

use super::record::{JournalRecord, JournalVm, Person, RecordKind};
use super::verdict::JournalVerdict;

/// The longest a tag can live in a journal (30 days): older guards have no way back left to watch.
const LONGEST_HISTORY_DAYS: i64 = 30;

/// One open change whose way back ends within the window.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ExpiringChange {
    /// The change id.
    pub change_id: String,
    /// The VM.
    pub vm: JournalVm,
    /// The agent that guarded it.
    pub agent: String,
    /// The person it guarded for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub person: Option<Person>,
    /// When it was guarded.
    pub guarded_at: DateTime<Utc>,
    /// The end of its shortest way back, as said at guard.
    pub recoverable_until: DateTime<Utc>,
    /// Whether that was an estimate.
    pub estimate: bool,
    /// The VPG whose way back ends first.
    pub vpg_name: String,
}

/// The open changes whose way back ends within a window, soonest first.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Expiring {
    /// The window, in minutes from `now`.
    pub within_minutes: i64,
    /// When it was asked.
    pub now: DateTime<Utc>,
    /// The changes.
    pub changes: Vec<ExpiringChange>,
}

/// What `rewind done` closed.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Closed {
    /// The change id.
    pub change_id: String,
    /// The VMs it was guarded on, each now closed.
    pub vms: Vec<JournalVm>,
    /// Those already closed before.
    pub already: Vec<JournalVm>,
}

/// The open changes of `records` (those since [`history_start`]) whose shortest way back ends
/// after `now` and within `within` of it: the newest `guarded` verdict of each VM and change, unless
/// a person said the change is done after it.
pub(super) fn expiring(
    records: &[JournalRecord],
    within: Duration,
    now: DateTime<Utc>,
) -> Expiring {
    let mut changes: Vec<ExpiringChange> = open_guards(records)
        .into_iter()
        .filter_map(expiring_of)
        .filter(|c| c.recoverable_until > now && c.recoverable_until <= now + within)
        .collect();
    changes.sort_by_key(|c| c.recoverable_until);
    Expiring {
        within_minutes: within.num_minutes(),
        now,
        changes,
    }
}

/// What closing `change_id` on a person's word takes, from `records` (those since
/// [`history_start`]): one `done` record for each VM it was guarded on that is not closed yet, and
/// what to answer. `None` when no guard of it is among them.
pub(super) fn closing(
    records: &[JournalRecord],
    change_id: &str,
    person: Option<&Person>,
    now: DateTime<Utc>,
) -> Option<(Closed, Vec<JournalRecord>)> {
    let records: Vec<JournalRecord> = records
        .iter()
        .filter(|r| r.change_id == change_id)
        .cloned()
        .collect();
    let mut vms: Vec<JournalVm> = Vec::new();
    for r in records.iter().filter(|r| r.kind == RecordKind::Guard) {
        if !vms.iter().any(|v| v.id == r.vm.id) {
            vms.push(r.vm.clone());
        }
    }
    if vms.is_empty() {
        return None;
    }
    let (already, open): (Vec<JournalVm>, Vec<JournalVm>) =
        vms.into_iter().partition(|vm| is_closed(&records, &vm.id));
    let done = open
        .iter()
        .map(|vm| done_record(change_id, vm, person, now))
        .collect();
    let closed = Closed {
        change_id: change_id.to_string(),
        vms: open,
        already,
    };
    Some((closed, done))
}

/// The start of what the watch reads: the longest a tag can live in a journal before `now`.
pub(super) fn history_start(now: DateTime<Utc>) -> DateTime<Utc> {
    now - Duration::days(LONGEST_HISTORY_DAYS)
}

/// The newest guard record of each VM and change, when it is `guarded` and no later `done` record
/// closed the change on that VM.
fn open_guards(records: &[JournalRecord]) -> Vec<&JournalRecord> {
    let mut newest: Vec<&JournalRecord> = Vec::new();
    for r in records.iter().filter(|r| r.kind == RecordKind::Guard) {
        newest.retain(|n| !(n.vm.id == r.vm.id && n.change_id == r.change_id));
        newest.push(r);
    }
    newest
        .into_iter()
        .filter(|r| r.verdict == JournalVerdict::Guarded)
        .filter(|r| {
            !records.iter().any(|d| {
                d.kind == RecordKind::Done
                    && d.vm.id == r.vm.id
                    && d.change_id == r.change_id
                    && d.time >= r.time
            })
        })
        .collect()
}

/// Whether the change of `records` is closed on VM `vm_id`: a `done` record after its newest guard.
fn is_closed(records: &[JournalRecord], vm_id: &str) -> bool {
    let of_vm = || records.iter().filter(|r| r.vm.id == vm_id);
    let guarded = of_vm()
        .filter(|r| r.kind == RecordKind::Guard)
        .map(|r| r.time)
        .max();
    let done = of_vm()
        .filter(|r| r.kind == RecordKind::Done)
        .map(|r| r.time)
        .max();
    matches!((guarded, done), (Some(g), Some(d)) if d >= g)
}

/// The shortest way back of a guard record, as it said.
fn expiring_of(r: &JournalRecord) -> Option<ExpiringChange> {
    let (vpg, way_back) = r
        .vpgs
        .iter()
        .filter_map(|v| Some((v, v.way_back.as_ref()?)))
        .min_by_key(|(_, w)| w.recoverable_until)?;
    Some(ExpiringChange {
        change_id: r.change_id.clone(),
        vm: r.vm.clone(),
        agent: r.agent.clone(),
        person: r.person.clone(),
        guarded_at: r.time,
        recoverable_until: way_back.recoverable_until,
        estimate: way_back.estimate,
        vpg_name: vpg.vpg_name.clone(),
    })
}

/// The record of a person's word that `change_id` is done on `vm`.
fn done_record(
    change_id: &str,
    vm: &JournalVm,
    person: Option<&Person>,
    now: DateTime<Utc>,
) -> JournalRecord {
    JournalRecord {
        time: now,
        kind: RecordKind::Done,
        agent: "rewind".into(),
        person: person.cloned(),
        action: "done: the change is good, its way back no longer watched".into(),
        change_id: change_id.to_string(),
        vm: vm.clone(),
        verdict: JournalVerdict::Closed,
        vpgs: Vec::new(),
        notes: Vec::new(),
        details: None,
        attempt: None,
        sites: None,
        approved_by: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit_journal::{AuditJournal, JournalOutcome, JournalVpg};
    use crate::way_back::WayBack;

    fn guarded(vm: &str, change: &str, at: DateTime<Utc>, lasts_min: i64) -> JournalRecord {
        let way_back = WayBack {
            tagged_at: at,
            recoverable_until: at + Duration::minutes(lasts_min),
            estimate: false,
            configured_history_minutes: lasts_min,
            actual_history_minutes: Some(lasts_min),
            estimate_because: None,
        };
        JournalRecord {
            time: at,
            vpgs: vec![JournalVpg {
                way_back: Some(way_back),
                ..JournalVpg::new("v1", "web-local", JournalOutcome::Tagged)
            }],
            ..crate::audit_journal::tests::record(vm, change)
        }
    }

    #[test]
    fn open_changes_ending_within_the_window_are_listed_soonest_first_and_done_ones_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let j = AuditJournal::new(dir.path().join("journal.jsonl"));
        let now = Utc::now();
        j.append(&guarded("web-01", "soon", now - Duration::minutes(50), 60))
            .unwrap();
        j.append(&guarded("db-01", "sooner", now - Duration::minutes(55), 60))
            .unwrap();
        j.append(&guarded("app-01", "later", now, 600)).unwrap();
        j.append(&guarded("old-01", "gone", now - Duration::minutes(90), 60))
            .unwrap();
        let found = j.expiring(Duration::hours(2), now).unwrap();
        let ids: Vec<&str> = found.changes.iter().map(|c| c.change_id.as_str()).collect();
        assert_eq!(ids, ["sooner", "soon"]);

        let closed = j.close("soon", None, now).unwrap().unwrap();
        assert_eq!(closed.vms.len(), 1);
        let found = j.expiring(Duration::hours(2), now).unwrap();
        let ids: Vec<&str> = found.changes.iter().map(|c| c.change_id.as_str()).collect();
        assert_eq!(ids, ["sooner"]);
        let again = j.close("soon", None, now).unwrap().unwrap();
        assert!(again.vms.is_empty() && again.already.len() == 1);
        assert!(j.close("never-guarded", None, now).unwrap().is_none());
    }

    #[test]
    fn a_guard_after_done_opens_the_change_again() {
        let dir = tempfile::tempdir().unwrap();
        let j = AuditJournal::new(dir.path().join("journal.jsonl"));
        let now = Utc::now();
        j.append(&guarded("web-01", "c", now - Duration::minutes(30), 60))
            .unwrap();
        j.close("c", None, now - Duration::minutes(20)).unwrap();
        j.append(&guarded("web-01", "c", now - Duration::minutes(10), 60))
            .unwrap();
        let found = j.expiring(Duration::hours(1), now).unwrap();
        assert_eq!(found.changes.len(), 1);
    }
}
