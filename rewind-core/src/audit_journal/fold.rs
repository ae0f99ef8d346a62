//! Folding the lines of each guard attempt into one record.
//!
//! An attempt's intent line opens it, each task line adds the task id of one VPG, and its verdict
//! line replaces it whole. An attempt left without a verdict is `running` while the process of the
//! newest attempt of its VM and change still holds the change lock, and `interrupted` otherwise.

use super::change_lock::LocksNow;
use super::record::{JournalRecord, Phase, RecordKind};
use super::verdict::JournalVerdict;
use std::collections::{HashMap, HashSet};

/// The note of an interrupted attempt.
pub(super) const INTERRUPTED_NOTE: &str = "interrupted: its process ended before the verdict was written; each VPG line says what it may have inserted (pending: the insert may have been sent, its answer unknown; sent: its task id); the next guard of this VM and change takes it over and adopts what it inserted";

/// `records` in file order, each attempt's lines folded into the record at the place of its first
/// line; records of no attempt stand as they are.
pub(super) fn fold(records: Vec<JournalRecord>, locks: &LocksNow) -> Vec<JournalRecord> {
    let mut out: Vec<JournalRecord> = Vec::with_capacity(records.len());
    let mut at: HashMap<String, usize> = HashMap::new();
    for r in records {
        let Some(attempt) = r.attempt.clone() else {
            out.push(r);
            continue;
        };
        if let Some(prev) = attempt.takes_over.as_deref()
            && let Some(&i) = at.get(prev)
            && let Some(a) = out[i].attempt.as_mut()
        {
            a.taken_over_by = Some(attempt.id.clone());
        }
        match at.get(&attempt.id) {
            None => {
                at.insert(attempt.id.clone(), out.len());
                out.push(r);
            }
            Some(&i) => merge(&mut out[i], r),
        }
    }
    mark_open(&mut out, locks);
    out
}

/// The newest attempt of the VM `vm_id` among `records` (of one change) written at or after
/// `since` that inserted (or was about to insert) a tag, folded.
pub(super) fn newest_attempt(
    records: Vec<JournalRecord>,
    locks: &LocksNow,
    vm_id: &str,
    since: chrono::DateTime<chrono::Utc>,
) -> Option<JournalRecord> {
    let guards = records.into_iter().filter(|r| r.kind == RecordKind::Guard);
    fold(guards.collect(), locks)
        .into_iter()
        .filter(|r| {
            r.attempt.is_some()
                && r.vm.id.eq_ignore_ascii_case(vm_id)
                && r.time >= since
                && r.tag().is_some()
        })
        .max_by_key(|r| r.time)
}

/// Adds a later line of an attempt to the record folded so far.
fn merge(folded: &mut JournalRecord, line: JournalRecord) {
    let ended = folded
        .attempt
        .as_ref()
        .is_some_and(|a| a.phase == Phase::Verdict);
    let Some(phase) = line.attempt.as_ref().map(|a| a.phase.clone()) else {
        return;
    };
    match phase {
        Phase::Verdict => {
            let taken_over_by = folded.attempt.as_mut().and_then(|a| a.taken_over_by.take());
            *folded = line;
            if let Some(a) = folded.attempt.as_mut() {
                a.taken_over_by = a.taken_over_by.take().or(taken_over_by);
            }
        }
        // A verdict says everything; a task line after it (none is written so) adds nothing.
        Phase::Intent | Phase::Sent | Phase::Other(_) if ended => {}
        Phase::Intent | Phase::Sent | Phase::Other(_) => {
            for v in line.vpgs {
                match folded.vpgs.iter_mut().find(|f| f.vpg_id == v.vpg_id) {
                    Some(f) => *f = v,
                    None => folded.vpgs.push(v),
                }
            }
            folded.time = line.time;
            if let Some(a) = folded.attempt.as_mut()
                && later(&phase, &a.phase)
            {
                a.phase = phase;
            }
        }
    }
}

/// Whether the phase of a line, `line`, says more of its attempt than `folded`, the phase folded so
/// far: a later known phase does; a newer version's phase only stands in for none known.
fn later(line: &Phase, folded: &Phase) -> bool {
    let rank = |p: &Phase| match p {
        Phase::Other(_) => 0,
        Phase::Intent => 1,
        Phase::Sent => 2,
        Phase::Verdict => 3,
    };
    rank(line) > rank(folded)
}

/// Gives each attempt without a verdict its verdict word: only the newest attempt of a VM and change
/// can be the one whose process holds the lock.
fn mark_open(out: &mut [JournalRecord], locks: &LocksNow) {
    let open = |r: &JournalRecord| {
        r.attempt
            .as_ref()
            .is_some_and(|a| a.phase != Phase::Verdict)
    };
    let mut newest_seen: HashSet<(String, String)> = HashSet::new();
    for r in out.iter_mut().rev() {
        if r.kind != RecordKind::Guard {
            continue;
        }
        let key = (r.vm.id.to_lowercase(), r.change_id.clone());
        let newest = newest_seen.insert(key);
        if !open(r) {
            continue;
        }
        if newest && locks.held(&r.vm.id, &r.change_id) {
            r.verdict = JournalVerdict::Running;
        } else {
            r.verdict = JournalVerdict::Interrupted;
            r.notes.push(INTERRUPTED_NOTE.to_string());
        }
    }
}
