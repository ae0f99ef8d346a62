//! The index of the VMs the journal names, kept beside it (`journal.vms`): a line each time a VM is
//! named otherwise than its last line says (a new VM, a new name, new addresses), and
//! `journal.vms.end`, how much of the journal the index covers. It is what keeps two VMs answering to
//! one name ambiguous whatever the age of their records, without reading the journal: the hook reads
//! it on every mutating call, and its cost does not grow with the number of guards.
//!
//! The journal's writer appends to it, with the journal's lock held, after each write. A reader
//! that finds the journal longer than the index covers (a journal copied in or restored, a crash
//! between a write and its index) brings the index up to the journal's end when it can take the
//! journal's lock at once, so that the next reader does not read that rest again; when a writer
//! holds the lock, it reads only the rest. An index that is missing, or covers more than the
//! journal holds (a journal replaced or cut), is made again from the journal under its lock.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::error::{JournalError, read_error, write_error};
use super::file::{Wanted, WholeLines};
use super::record::JournalVm;
use crate::local_state::{LOCK_WAIT, LockMode, lock, open_private};

/// One way the journal named a VM, from when.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Naming {
    /// The time of the first record that named it so (since its last other naming).
    #[serde(rename = "t")]
    pub time: DateTime<Utc>,
    /// The VM as that record names it.
    pub vm: JournalVm,
}

/// The index of `journal`.
fn index_path(journal: &Path) -> PathBuf {
    journal.with_extension("vms")
}

/// Where the index says how far it covers the journal.
fn end_path(journal: &Path) -> PathBuf {
    journal.with_extension("vms.end")
}

/// The journal writer's side: the last naming of each VM, to append only what changed.
#[derive(Debug, Default)]
pub(super) struct Writer {
    last: Option<HashMap<String, JournalVm>>,
}

impl Writer {
    /// After a write, from offset `began` to `end`, of records naming `vms` (in order): appends the
    /// namings that changed and says the index covers `end`. Called with the journal's lock held; a
    /// failure is left for a reader to mend from the journal.
    pub(super) fn written(
        &mut self,
        journal: &Path,
        vms: &[(DateTime<Utc>, &JournalVm)],
        began: u64,
        end: u64,
    ) {
        if let Err(e) = self.write(journal, vms, began, end) {
            // The next reader finds the index behind (or gone) and mends it.
            self.last = None;
            let _ = std::fs::remove_file(end_path(journal));
            tracing::debug!("the VM index of {} was not written: {e}", journal.display());
        }
    }

    fn write(
        &mut self,
        journal: &Path,
        vms: &[(DateTime<Utc>, &JournalVm)],
        began: u64,
        end: u64,
    ) -> Result<(), JournalError> {
        let covered = match read_end(journal)? {
            Some(covered) if covered <= began && index_path(journal).exists() => covered,
            // Missing or stale: made again from the whole journal, this write included.
            _ => {
                self.last = Some(last_of(&made_from_journal(journal)?));
                return Ok(());
            }
        };
        if self.last.is_none() {
            self.last = Some(last_of(&read_index(journal)?.unwrap_or_default()));
        }
        let last = self.last.get_or_insert_with(HashMap::new);
        let mut changed = Vec::new();
        // Lines the index was not told of (their process stopped before it could tell it, or could
        // not write it) are indexed first.
        if covered < began {
            vms_in_journal(journal, covered, Some(began), |time, vm| {
                changed.extend(renamed(last, time, vm));
            })?;
        }
        for (time, vm) in vms {
            changed.extend(renamed(last, *time, (*vm).clone()));
        }
        append_namings(journal, &changed)?;
        write_end(journal, end)
    }
}

/// Appends `namings` to the index of `journal` (the caller holds the journal's lock).
fn append_namings(journal: &Path, namings: &[Naming]) -> Result<(), JournalError> {
    if namings.is_empty() {
        return Ok(());
    }
    let lines = encoded(namings)?;
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    open_private(&index_path(journal), &mut options, true)
        .and_then(|mut f| f.write_all(&lines))
        .map_err(|e| write_error(&index_path(journal), e))
}

/// `namings` as index lines.
fn encoded(namings: &[Naming]) -> Result<Vec<u8>, JournalError> {
    let mut lines = Vec::new();
    for naming in namings {
        serde_json::to_writer(&mut lines, naming)
            .map_err(|e| JournalError::Encode(e.to_string()))?;
        lines.push(b'\n');
    }
    Ok(lines)
}

/// The newest naming of each VM.
fn last_of(namings: &[Naming]) -> HashMap<String, JournalVm> {
    namings
        .iter()
        .map(|n| (n.vm.id.to_lowercase(), n.vm.clone()))
        .collect()
}

/// Every naming of every VM the journal at `journal` names, oldest first; of the index, only the
/// lines `wanted` takes are parsed (what the journal holds beyond the index, all of it).
pub(super) fn namings(journal: &Path, wanted: &Wanted) -> Result<Vec<Naming>, JournalError> {
    let len = match std::fs::metadata(journal) {
        Ok(m) => m.len(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(read_error(journal, e)),
    };
    let mut covered = read_end(journal)?;
    if covered.is_some_and(|c| c < len) && caught_up(journal) {
        covered = read_end(journal)?;
    }
    match (covered, read_index_taking(journal, wanted)?) {
        (Some(covered), Some(mut namings)) if covered <= len => {
            if covered < len {
                let mut last = last_of(&namings);
                vms_in_journal(journal, covered, None, |time, vm| {
                    if let Some(naming) = renamed(&mut last, time, vm) {
                        namings.push(naming);
                    }
                })?;
            }
            Ok(namings)
        }
        _ => rebuild(journal),
    }
}

/// Brings the index up to the journal's end (the caller holds the journal's lock): what it does not
/// cover yet is appended, or it is made again when missing or stale. Returns how much of the
/// journal it covers.
pub(super) fn bring_up_to_date(journal: &Path) -> Result<u64, JournalError> {
    let len = std::fs::metadata(journal)
        .map_err(|e| read_error(journal, e))?
        .len();
    match (read_end(journal)?, read_index(journal)?) {
        (Some(covered), Some(namings)) if covered <= len => {
            let mut last = last_of(&namings);
            let mut changed = Vec::new();
            let end = vms_in_journal(journal, covered, None, |time, vm| {
                changed.extend(renamed(&mut last, time, vm));
            })?;
            append_namings(journal, &changed)?;
            write_end(journal, end)?;
        }
        _ => {
            made_from_journal(journal)?;
        }
    }
    Ok(read_end(journal)?.unwrap_or(0))
}

/// Brings the index up to the journal's end if the journal's lock can be taken at once: whether
/// it was. A reader that cannot write the index (another user's journal) leaves it as it is.
fn caught_up(journal: &Path) -> bool {
    let Ok(file) = open_private(journal, OpenOptions::new().read(true), false) else {
        return false;
    };
    if lock(
        &file,
        journal,
        LockMode::Exclusive,
        std::time::Duration::ZERO,
    )
    .is_err()
    {
        return false;
    }
    let brought = bring_up_to_date(journal);
    let _ = file.unlock();
    if let Err(e) = &brought {
        tracing::debug!("the VM index of {} was left behind: {e}", journal.display());
    }
    brought.is_ok()
}

/// After the journal's first `cut` bytes were moved to an archive, with the index covering
/// `covered` bytes of the journal as it was: the index keeps every naming and covers what is left.
pub(super) fn journal_cut(journal: &Path, covered: u64, cut: u64) -> Result<(), JournalError> {
    write_end(journal, covered.saturating_sub(cut))
}

/// Makes the index again from the whole journal, under the journal's lock (its writer appends to
/// the index under the same lock, and must not append to a file being replaced).
fn rebuild(journal: &Path) -> Result<Vec<Naming>, JournalError> {
    let file = open_private(journal, OpenOptions::new().read(true), false)
        .map_err(|e| read_error(journal, e))?;
    lock(&file, journal, LockMode::Exclusive, LOCK_WAIT)
        .map_err(|e| JournalError::locking(journal, e, true))?;
    let made = made_from_journal(journal);
    let _ = file.unlock();
    made
}

/// The index made from the whole journal, written in place (the caller holds the journal's lock).
fn made_from_journal(journal: &Path) -> Result<Vec<Naming>, JournalError> {
    let mut last: HashMap<String, JournalVm> = HashMap::new();
    let mut namings = Vec::new();
    let end = vms_in_journal(journal, 0, None, |time, vm| {
        if let Some(naming) = renamed(&mut last, time, vm) {
            namings.push(naming);
        }
    })?;
    replace(&index_path(journal), &encoded(&namings)?)?;
    write_end(journal, end)?;
    Ok(namings)
}

/// The naming of `vm` at `time` when it differs from its `last`, which it then becomes.
fn renamed(
    last: &mut HashMap<String, JournalVm>,
    time: DateTime<Utc>,
    vm: JournalVm,
) -> Option<Naming> {
    let key = vm.id.to_lowercase();
    if last.get(&key) == Some(&vm) {
        return None;
    }
    last.insert(key, vm.clone());
    Some(Naming { time, vm })
}

/// Every naming of the index, oldest first; `None` when there is none.
fn read_index(journal: &Path) -> Result<Option<Vec<Naming>>, JournalError> {
    read_index_taking(journal, &Wanted::default())
}

/// The namings of the index on the lines `wanted` takes, oldest first; `None` when there is none.
fn read_index_taking(journal: &Path, wanted: &Wanted) -> Result<Option<Vec<Naming>>, JournalError> {
    let path = index_path(journal);
    let file = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(read_error(&path, e)),
    };
    let mut namings = Vec::new();
    for line in BufReader::new(file).split(b'\n') {
        let line = line.map_err(|e| read_error(&path, e))?;
        if !wanted.takes(&line) {
            continue;
        }
        if let Ok(naming) = serde_json::from_slice(&line) {
            namings.push(naming);
        }
    }
    Ok(Some(namings))
}

/// How much of the journal the index covers; `None` when that is not known.
fn read_end(journal: &Path) -> Result<Option<u64>, JournalError> {
    let path = end_path(journal);
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(text.trim().parse().ok()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(read_error(&path, e)),
    }
}

/// Says the index covers the journal's first `end` bytes, replacing the file whole.
fn write_end(journal: &Path, end: u64) -> Result<(), JournalError> {
    replace(&end_path(journal), format!("{end}\n").as_bytes())
}

/// Writes `bytes` to `path` through a temporary file moved into place.
fn replace(path: &Path, bytes: &[u8]) -> Result<(), JournalError> {
    let folder = path.parent().unwrap_or(Path::new("."));
    let mut temporary =
        tempfile::NamedTempFile::new_in(folder).map_err(|e| write_error(path, e))?;
    temporary
        .write_all(bytes)
        .map_err(|e| write_error(path, e))?;
    temporary
        .persist(path)
        .map_err(|e| write_error(path, e.error))?;
    Ok(())
}

/// What the index reads of a record: its time and its VM, nothing else parsed.
#[derive(Deserialize)]
struct Named {
    time: DateTime<Utc>,
    vm: JournalVm,
}

/// Gives `each` the VM (with its time) of every whole record of the journal from offset `from` (to
/// `to`, when given), one at a time so that a journal of years is never held; returns where the
/// last whole line read ends.
fn vms_in_journal(
    journal: &Path,
    from: u64,
    to: Option<u64>,
    mut each: impl FnMut(DateTime<Utc>, JournalVm),
) -> Result<u64, JournalError> {
    let err = |e| read_error(journal, e);
    let file = File::open(journal).map_err(err)?;
    let mut lines = WholeLines::from(file, from).map_err(err)?;
    let mut at = from;
    while let Some((line, _, end)) = lines.next_line().map_err(err)? {
        if to.is_some_and(|to| end > to) {
            break;
        }
        at = end;
        if let Ok(record) = serde_json::from_slice::<Named>(line) {
            each(record.time, record.vm);
        }
    }
    Ok(at)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::audit_journal::AuditJournal;
    use crate::audit_journal::tests::record;

    #[test]
    fn a_reader_that_finds_the_index_behind_a_journal_grown_without_it_brings_it_up_to_date() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let journal = AuditJournal::new(&path);
        journal.append(&record("web-01", "c1")).unwrap();
        // Lines that came without their index: a journal copied in, or a crash after a write.
        let mut grown = OpenOptions::new().append(true).open(&path).unwrap();
        for i in 0..50 {
            let line = serde_json::to_string(&record(&format!("db-{i:02}"), "c2")).unwrap();
            writeln!(grown, "{line}").unwrap();
        }
        let len = std::fs::metadata(&path).unwrap().len();
        assert!(read_end(&path).unwrap().unwrap() < len);

        let named = journal.namings_of(Some("db-49")).unwrap();
        assert!(named.iter().any(|(_, vm)| vm.name == "db-49"), "{named:?}");
        assert_eq!(
            read_end(&path).unwrap(),
            Some(len),
            "the index covers the journal now: the next reader reads none of it"
        );
        let index = std::fs::read_to_string(index_path(&path)).unwrap();
        assert_eq!(index.lines().count(), 51, "{index}");
    }

    #[test]
    fn a_reader_that_cannot_take_the_lock_reads_the_rest_and_leaves_the_index() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let journal = AuditJournal::new(&path);
        journal.append(&record("web-01", "c1")).unwrap();
        let line = serde_json::to_string(&record("db-01", "c2")).unwrap();
        let mut grown = OpenOptions::new().append(true).open(&path).unwrap();
        writeln!(grown, "{line}").unwrap();
        let covered = read_end(&path).unwrap();
        let writer = File::open(&path).unwrap();
        writer.lock().unwrap();
        let named = journal.namings_of(Some("db-01")).unwrap();
        assert!(named.iter().any(|(_, vm)| vm.name == "db-01"), "{named:?}");
        assert_eq!(
            read_end(&path).unwrap(),
            covered,
            "left for a reader that can lock"
        );
        writer.unlock().unwrap();
    }
}
