//! Moving a journal's old records to an archive file (`rewind journal archive`), so that a journal
//! that grows for years stays small without an administrator learning how rewind locks it.
//!
//! Under the journal's lock (writers wait), the lines before the cut are appended to the archive
//! and synced, the lines from the cut on are written to a new file that is moved over the journal,
//! and the indexes beside it are brought along: the VM index keeps every naming, the archived ones
//! too (two VMs answering to one name stay ambiguous whatever their ages), and the change index is
//! made again from what stays. A writer that was waiting for the lock finds the journal replaced and
//! appends to the new one ([`super::file`]).
//!
//! The cut is the first line written at or after `before`, moved back to the first line of any
//! change with lines on both sides (a guard's intent, task and verdict lines stay together). What
//! the guard and the hook still read never moves: the caller keeps the change-id horizon and the
//! hook window ([`Retention`]).

use std::collections::{HashSet, VecDeque};
use std::fs::{File, OpenOptions};
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::error::{JournalError, read_error, write_error};
use super::file::WholeLines;
use super::{changes, vms};
use crate::local_state::{LOCK_WAIT, LockMode, lock, open_private};

/// How far apart the lines of one change can be: a guard's attempt, from its intent to its
/// verdict, is bounded by its timeout, far below this.
const CHANGE_SPAN: chrono::Duration = chrono::Duration::hours(6);

/// What must stay in the journal, and why: the records the guard and the hook still read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Records written since this time stay.
    pub keep_since: DateTime<Utc>,
}

/// What an archive did.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Archived {
    /// The journal.
    pub journal: PathBuf,
    /// The archive the old lines were appended to.
    pub archive: PathBuf,
    /// Lines were moved if written before this time.
    pub before: DateTime<Utc>,
    /// Lines moved to the archive.
    pub lines_moved: u64,
    /// Bytes moved.
    pub bytes_moved: u64,
    /// Lines left in the journal.
    pub lines_kept: u64,
    /// The time of the oldest line left, when any is.
    pub oldest_kept: Option<DateTime<Utc>>,
}

/// Why an archive was refused or failed. Nothing was moved unless the error says so.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    /// `before` would move records the guard or the hook still read.
    #[error(
        "records written since {} stay in the journal (the guard's change-id horizon and the hook's window read them); give a time before that, such as {suggest}",
        keep_since.format("%Y-%m-%d %H:%M UTC")
    )]
    TooRecent {
        /// The earliest time records must stay from.
        keep_since: DateTime<Utc>,
        /// A day that would do.
        suggest: String,
    },
    /// The archive named is the journal or a file rewind keeps beside it.
    #[error(
        "{0} is the journal or a file rewind keeps beside it; name a file of its own, such as journal-2025.jsonl"
    )]
    NotAnArchive(PathBuf),
    /// The journal could not be read, locked or replaced.
    #[error(transparent)]
    Journal(#[from] JournalError),
}

/// Moves the lines of `journal` written before `before` to the end of `archive` (created 0600 when
/// missing), keeping what `retention` says must stay.
pub(super) fn archive(
    journal: &Path,
    archive: &Path,
    before: DateTime<Utc>,
    retention: Retention,
) -> Result<Archived, ArchiveError> {
    refused(before, retention)?;
    if is_beside(journal, archive) {
        return Err(ArchiveError::NotAnArchive(archive.to_path_buf()));
    }
    let file = match open_private(journal, OpenOptions::new().read(true), false) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(nothing_moved(journal, archive, before));
        }
        Err(e) => return Err(read_error(journal, e).into()),
    };
    lock(&file, journal, LockMode::Exclusive, LOCK_WAIT)
        .map_err(|e| JournalError::locking(journal, e, true))?;
    let moved = move_under_lock(&file, journal, archive, before);
    let _ = file.unlock();
    moved
}

/// Refuses a `before` that would move records the guard or the hook still read.
pub(super) fn refused(before: DateTime<Utc>, retention: Retention) -> Result<(), ArchiveError> {
    if before > retention.keep_since {
        let day = retention.keep_since.date_naive();
        return Err(ArchiveError::TooRecent {
            keep_since: retention.keep_since,
            suggest: day.format("%Y-%m-%d").to_string(),
        });
    }
    Ok(())
}

/// Whether `archive` is the journal or one of the files kept beside it (its indexes, its locks).
fn is_beside(journal: &Path, archive: &Path) -> bool {
    let canonical = |p: &Path| {
        let parent = p.parent().filter(|d| !d.as_os_str().is_empty());
        let dir = parent.unwrap_or(Path::new(".")).canonicalize().ok();
        dir.zip(p.file_name()).map(|(d, n)| d.join(n))
    };
    let (Some(j), Some(a)) = (canonical(journal), canonical(archive)) else {
        return false;
    };
    let stem = j.file_stem().map(|s| s.to_string_lossy().into_owned());
    let name = a.file_name().map(|s| s.to_string_lossy().into_owned());
    a == j
        || (a.parent() == j.parent()
            && stem
                .zip(name)
                .is_some_and(|(stem, name)| name.starts_with(&format!("{stem}."))))
}

fn nothing_moved(journal: &Path, archive: &Path, before: DateTime<Utc>) -> Archived {
    Archived {
        journal: journal.to_path_buf(),
        archive: archive.to_path_buf(),
        before,
        lines_moved: 0,
        bytes_moved: 0,
        lines_kept: 0,
        oldest_kept: None,
    }
}

/// The archive itself, with the journal's lock held through `file`.
fn move_under_lock(
    file: &File,
    journal: &Path,
    archive: &Path,
    before: DateTime<Utc>,
) -> Result<Archived, ArchiveError> {
    let len = file.metadata().map_err(|e| read_error(journal, e))?.len();
    let cut = cut_of(file, journal, before, len)?;
    if cut.offset == 0 {
        return Ok(Archived {
            lines_kept: cut.lines_kept,
            oldest_kept: cut.oldest_kept,
            ..nothing_moved(journal, archive, before)
        });
    }
    // Every naming stays known, the archived ones too: the index is brought up to the journal's
    // end before the journal is cut.
    let covered = vms::bring_up_to_date(journal)?;
    append_range(file, journal, 0, cut.offset, archive)?;
    replace_with_range(file, journal, cut.offset, len)?;
    vms::journal_cut(journal, covered, cut.offset)?;
    changes::rebuild(journal, &changes::index_path(journal))?;
    Ok(Archived {
        journal: journal.to_path_buf(),
        archive: archive.to_path_buf(),
        before,
        lines_moved: cut.lines_moved,
        bytes_moved: cut.offset,
        lines_kept: cut.lines_kept,
        oldest_kept: cut.oldest_kept,
    })
}

/// Where the journal is cut, and what that leaves.
#[derive(Debug, Default)]
struct Cut {
    offset: u64,
    lines_moved: u64,
    lines_kept: u64,
    oldest_kept: Option<DateTime<Utc>>,
}

/// What the cut reads of a line.
#[derive(Deserialize)]
struct Line {
    time: DateTime<Utc>,
    #[serde(default)]
    change_id: String,
}

/// A line's place, time and change.
struct Placed {
    offset: u64,
    time: DateTime<Utc>,
    change_id: String,
}

/// The first line written at or after `before`, moved back to the first line of any change that
/// has lines on both sides of it. Only the lines within [`CHANGE_SPAN`] of that line are held.
fn cut_of(
    file: &File,
    journal: &Path,
    before: DateTime<Utc>,
    len: u64,
) -> Result<Cut, ArchiveError> {
    let err = |e| read_error(journal, e);
    let mut lines = WholeLines::from(file, 0).map_err(err)?;
    let mut window: VecDeque<Placed> = VecDeque::new();
    let mut first_after: Option<usize> = None;
    while let Some((line, offset, _)) = lines.next_line().map_err(err)? {
        // An unreadable line goes with the lines around it.
        let Ok(Line { time, change_id }) = serde_json::from_slice::<Line>(line) else {
            continue;
        };
        let placed = Placed {
            offset,
            time,
            change_id,
        };
        match first_after {
            None => {
                while window
                    .front()
                    .is_some_and(|p| p.time < placed.time - CHANGE_SPAN)
                {
                    window.pop_front();
                }
                let is_after = placed.time >= before;
                window.push_back(placed);
                if is_after {
                    first_after = Some(window.len() - 1);
                }
            }
            Some(i) if placed.time >= window[i].time + CHANGE_SPAN => break,
            Some(_) => window.push_back(placed),
        }
    }
    let offset = match first_after {
        // Every whole line is older than `before`.
        None => lines.end(),
        Some(i) => {
            let after: HashSet<&str> = window.range(i..).map(|p| p.change_id.as_str()).collect();
            window
                .range(..i)
                .find(|p| after.contains(p.change_id.as_str()))
                .map_or(window[i].offset, |p| p.offset)
        }
    };
    let lines_moved = count_lines(file, journal, offset)?;
    let total = count_lines(file, journal, len)?;
    let oldest_kept = window
        .iter()
        .filter(|p| p.offset >= offset)
        .map(|p| p.time)
        .min();
    Ok(Cut {
        offset,
        lines_moved,
        lines_kept: total - lines_moved,
        oldest_kept,
    })
}

/// How many lines the journal's first `end` bytes hold.
fn count_lines(file: &File, journal: &Path, end: u64) -> Result<u64, ArchiveError> {
    let mut reader = BufReader::new(file);
    reader
        .seek(SeekFrom::Start(0))
        .map_err(|e| read_error(journal, e))?;
    let mut count = 0;
    let mut buf = vec![0u8; 64 * 1024];
    let mut left = end;
    while left > 0 {
        let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let n = reader
            .read(&mut buf[..want])
            .map_err(|e| read_error(journal, e))?;
        if n == 0 {
            break;
        }
        count += buf[..n].iter().filter(|b| **b == b'\n').count() as u64;
        left -= n as u64;
    }
    Ok(count)
}

/// Appends the journal's bytes `from..to` to `archive`, synced.
fn append_range(
    file: &File,
    journal: &Path,
    from: u64,
    to: u64,
    archive: &Path,
) -> Result<(), ArchiveError> {
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    let mut out = open_private(archive, &mut options, true).map_err(|e| write_error(archive, e))?;
    copy_range(file, journal, from, to, &mut out, archive)?;
    out.sync_all().map_err(|e| write_error(archive, e))?;
    Ok(())
}

/// Moves a file holding the journal's bytes `from..to` over the journal, synced before and after.
fn replace_with_range(file: &File, journal: &Path, from: u64, to: u64) -> Result<(), ArchiveError> {
    let folder = journal.parent().filter(|d| !d.as_os_str().is_empty());
    let folder = folder.unwrap_or(Path::new("."));
    let mut kept = tempfile::Builder::new()
        .prefix(".journal-kept")
        .tempfile_in(folder)
        .map_err(|e| write_error(journal, e))?;
    copy_range(file, journal, from, to, kept.as_file_mut(), journal)?;
    kept.as_file()
        .sync_all()
        .map_err(|e| write_error(journal, e))?;
    kept.persist(journal)
        .map_err(|e| write_error(journal, e.error))?;
    let _ = File::open(folder).and_then(|d| d.sync_all());
    Ok(())
}

/// Copies the journal's bytes `from..to` to `out`.
fn copy_range(
    file: &File,
    journal: &Path,
    from: u64,
    to: u64,
    out: &mut File,
    out_path: &Path,
) -> Result<(), ArchiveError> {
    let mut reader = file;
    reader
        .seek(SeekFrom::Start(from))
        .map_err(|e| read_error(journal, e))?;
    let mut range = reader.take(to - from);
    std::io::copy(&mut range, out).map_err(|e| write_error(out_path, e))?;
    out.flush().map_err(|e| write_error(out_path, e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::tests::intent_days_ago as guard;
    use super::super::{AuditJournal, JournalFilter, JournalRecord};
    use super::*;

    fn days_ago(days: i64) -> DateTime<Utc> {
        Utc::now() - chrono::Duration::days(days)
    }

    /// Records are kept for the last 30 days, as with the default change-id horizon.
    const KEEP_30_DAYS: fn() -> Retention = || Retention {
        keep_since: days_ago(30),
    };

    fn changes(journal: &AuditJournal) -> Vec<String> {
        let read = journal.read(&JournalFilter::default()).unwrap();
        read.records.into_iter().map(|r| r.change_id).collect()
    }

    #[test]
    fn old_records_move_to_the_archive_and_the_rest_stay_with_their_indexes() {
        let dir = tempfile::tempdir().unwrap();
        let journal = AuditJournal::new(dir.path().join("journal.jsonl"));
        for (vm, change, days) in [
            ("old-01", "c1", 100),
            ("old-02", "c2", 50),
            ("web-01", "c3", 40),
            ("web-01", "c4", 1),
            ("db-01", "c5", 0),
        ] {
            journal.append(&guard(vm, change, days)).unwrap();
        }
        let to = dir.path().join("journal-2026.jsonl");
        let archived = journal.archive(days_ago(35), &to, KEEP_30_DAYS()).unwrap();
        assert_eq!((archived.lines_moved, archived.lines_kept), (3, 2));
        assert_eq!(changes(&journal), ["c4", "c5"]);
        assert_eq!(changes(&AuditJournal::new(&to)), ["c1", "c2", "c3"]);
        // The VMs named only by archived records are still known, so a name they share with a
        // VM of the journal stays ambiguous.
        let named: Vec<String> = journal
            .namings()
            .unwrap()
            .into_iter()
            .map(|(_, vm)| vm.name)
            .collect();
        assert_eq!(named, ["old-01", "old-02", "web-01", "db-01"]);
        assert!(journal.change_uses("c3", days_ago(60)).unwrap().is_empty());
        assert_eq!(journal.change_uses("c4", days_ago(60)).unwrap().len(), 1);
        // The journal goes on; a second archive appends to the first.
        journal.append(&guard("app-01", "c6", 0)).unwrap();
        assert_eq!(changes(&journal), ["c4", "c5", "c6"]);
        let archived = journal.archive(days_ago(31), &to, KEEP_30_DAYS()).unwrap();
        assert_eq!(archived.lines_moved, 0);
        assert_eq!(changes(&AuditJournal::new(&to)), ["c1", "c2", "c3"]);
    }

    #[test]
    fn records_the_guard_or_the_hook_still_read_are_never_archived() {
        let dir = tempfile::tempdir().unwrap();
        let journal = AuditJournal::new(dir.path().join("journal.jsonl"));
        journal.append(&guard("web-01", "c1", 20)).unwrap();
        let to = dir.path().join("archive.jsonl");
        let err = journal
            .archive(days_ago(10), &to, KEEP_30_DAYS())
            .unwrap_err();
        assert!(
            matches!(err, ArchiveError::TooRecent { .. }) && err.to_string().contains("such as"),
            "{err}"
        );
        assert_eq!(changes(&journal), ["c1"]);
        assert!(!to.exists(), "nothing was written");
    }

    #[test]
    fn the_journal_and_the_files_beside_it_are_not_archives() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let journal = AuditJournal::new(&path);
        journal.append(&guard("web-01", "c1", 40)).unwrap();
        for name in ["journal.jsonl", "journal.vms", "journal.changes"] {
            let err = journal
                .archive(days_ago(35), &dir.path().join(name), KEEP_30_DAYS())
                .unwrap_err();
            assert!(
                matches!(err, ArchiveError::NotAnArchive(_)),
                "{name}: {err}"
            );
        }
        assert_eq!(changes(&journal), ["c1"]);
    }

    #[test]
    fn the_lines_of_one_change_on_both_sides_of_the_cut_stay_together() {
        let dir = tempfile::tempdir().unwrap();
        let journal = AuditJournal::new(dir.path().join("journal.jsonl"));
        let before = days_ago(40);
        let at = |minutes: i64, change: &str| JournalRecord {
            time: before + chrono::Duration::minutes(minutes),
            ..guard("web-01", change, 0)
        };
        journal.append(&at(-120, "c1")).unwrap();
        journal.append(&at(-1, "c2")).unwrap();
        journal.append(&at(-1, "c3")).unwrap();
        journal.append(&at(1, "c2")).unwrap();
        let to = dir.path().join("archive.jsonl");
        let archived = journal.archive(before, &to, KEEP_30_DAYS()).unwrap();
        assert_eq!(archived.lines_moved, 1);
        assert_eq!(changes(&AuditJournal::new(&to)), ["c1"]);
        let text = std::fs::read_to_string(journal.path()).unwrap();
        assert_eq!(
            text.lines().count(),
            3,
            "c2's two lines and c3's between them"
        );
    }

    #[test]
    fn a_writer_waiting_for_the_lock_while_the_journal_is_replaced_appends_to_the_new_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let journal = AuditJournal::new(&path);
        journal.append(&guard("web-01", "c1", 40)).unwrap();
        // Hold the lock as an archive does, while the writer (whose file is open) waits for it.
        let held = File::open(&path).unwrap();
        held.lock().unwrap();
        let writer = {
            let journal = journal.clone();
            std::thread::spawn(move || journal.append(&guard("db-01", "c2", 0)))
        };
        std::thread::sleep(std::time::Duration::from_millis(200));
        let replacement = dir.path().join("replacement");
        std::fs::write(&replacement, "").unwrap();
        std::fs::rename(&replacement, &path).unwrap();
        held.unlock().unwrap();
        writer.join().unwrap().unwrap();
        assert_eq!(
            changes(&journal),
            ["c2"],
            "the record is in the journal now named"
        );
    }
}
