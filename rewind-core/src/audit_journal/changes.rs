//! The index of change ids, kept beside the journal (`journal.changes` beside `journal.jsonl`):
//! one line for each guard attempt (its intent) and each recovery, saying who used which change id
//! for what and when. A guard reads it to refuse a change id that another agent, action or person
//! used within the horizon, or that a recovery used, without reading the journal.
//!
//! The journal's writer appends the index's lines for what it wrote, while it still holds the
//! journal's lock, so they come in the journal's order. Each line names where its record ends in
//! the journal; a reader that finds the journal longer than the index covers reads only the rest
//! (lines written by a process that stopped between the two appends). An index that is missing, or
//! covers more than the journal holds (a journal replaced), is made again from the journal.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::error::{JournalError, read_error};
use super::file::{FileId, WholeLines, file_id, start_of_lines_since};
use super::record::{JournalRecord, Phase, RecordKind};
use crate::local_state::open_private;

/// How much of the index's end a first look reads; twice as much each time that does not reach
/// back to the horizon.
const TAIL_FIRST: u64 = 64 * 1024;

/// How far lines may be out of time order (two processes' clocks, a batch written together).
const ORDER_SLACK: chrono::Duration = chrono::Duration::seconds(60);

/// One use of a change id: a guard attempt or a recovery.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeUse {
    /// When.
    #[serde(rename = "t")]
    pub time: DateTime<Utc>,
    /// The change id.
    #[serde(rename = "c")]
    pub change_id: String,
    /// A guard or a recovery.
    #[serde(rename = "k")]
    pub kind: RecordKind,
    /// Who acted: the agent.
    #[serde(rename = "a")]
    pub agent: String,
    /// What was done.
    #[serde(rename = "x")]
    pub action: String,
    /// The person's subject, when the record names one.
    #[serde(rename = "p", default, skip_serializing_if = "Option::is_none")]
    pub person: Option<String>,
    /// The VM's name.
    #[serde(rename = "n")]
    pub vm_name: String,
    /// Where the record ends in the journal.
    #[serde(rename = "o")]
    pub end: u64,
}

impl ChangeUse {
    /// The use a journal line records, ending at `end`: a guard's intent and every recovery; `None`
    /// for a guard's other lines.
    pub(super) fn of(record: &JournalRecord, end: u64) -> Option<ChangeUse> {
        let counts = match record.kind {
            // A recovery the person declined sent nothing: the change id is not spent.
            RecordKind::Recovery => record.verdict != super::verdict::JournalVerdict::Declined,
            // A forwarded call runs under its change's guard, whose intent counted already.
            RecordKind::Done
            | RecordKind::Keep
            | RecordKind::ProtectionChanged
            | RecordKind::Call => false,
            RecordKind::Guard => record
                .attempt
                .as_ref()
                .is_some_and(|a| a.phase == Phase::Intent),
        };
        counts.then(|| ChangeUse {
            time: record.time,
            change_id: record.change_id.clone(),
            kind: record.kind,
            agent: record.agent.clone(),
            action: record.action.clone(),
            person: record.person.as_ref().map(|p| p.subject.clone()),
            vm_name: record.vm.name.clone(),
            end,
        })
    }
}

/// The index of the journal at `journal`.
pub(super) fn index_path(journal: &Path) -> PathBuf {
    journal.with_extension("changes")
}

/// Appends `uses` to the index of `journal`. Called with the journal's lock held, after its write.
/// A failure is left for the next reader to mend from the journal.
pub(super) fn append(journal: &Path, uses: &[ChangeUse]) {
    if uses.is_empty() {
        return;
    }
    let mut bytes = Vec::new();
    for u in uses {
        if serde_json::to_writer(&mut bytes, u).is_err() {
            return;
        }
        bytes.push(b'\n');
    }
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    let written = open_private(&index_path(journal), &mut options, true)
        .and_then(|mut f| f.write_all(&bytes));
    if let Err(e) = written {
        tracing::debug!(
            "the change index of {} was not written: {e}",
            journal.display()
        );
    }
}

/// This process's copy of the index's recent lines, by change id, read on as the index grows: a
/// team server guarding 64 VMs at once must not read a month of the index for each of them. The
/// first look, and an index replaced or cut short, start from the end and read back only as far as
/// the oldest time asked for; lines older than any look will ask for again are forgotten.
#[derive(Debug, Default)]
pub(super) struct ChangeIndex {
    /// The index file read, to notice one put in its place.
    file: Option<FileId>,
    /// Everything before this offset is read.
    read_to: u64,
    /// The oldest time uses are kept for.
    kept_from: Option<DateTime<Utc>>,
    /// How much of the journal the index covers: the furthest end its lines name.
    covered: u64,
    /// How far the journal's lines after `covered` were read (a guard's task and verdict lines
    /// follow its intent, and no index line covers them): each is read once.
    journal_read_to: u64,
    by_change: HashMap<String, Vec<ChangeUse>>,
}

impl ChangeIndex {
    /// Every use of `change_id` since `since` in the journal at `journal`, oldest first: from the
    /// index (made again when missing, or covering more than the journal holds) and the journal's
    /// lines it does not cover yet (written by a process that stopped between the two appends).
    pub(super) fn uses_of(
        &mut self,
        journal: &Path,
        change_id: &str,
        since: DateTime<Utc>,
    ) -> Result<Vec<ChangeUse>, JournalError> {
        let journal_len = match std::fs::metadata(journal) {
            Ok(m) => m.len(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => return Err(read_error(journal, source)),
        };
        let index = index_path(journal);
        let read = self.catch_up(&index, since)?;
        if !read || self.covered > journal_len {
            rebuild(journal, &index)?;
            *self = ChangeIndex::default();
            self.catch_up(&index, since)?;
        }
        if journal_len < self.journal_read_to {
            self.journal_read_to = 0;
        }
        let from = self.covered.max(self.journal_read_to);
        if from < journal_len {
            let (found, read_to) = uses_in_journal(journal, from)?;
            found.into_iter().for_each(|u| self.remember(u));
            self.journal_read_to = read_to;
        }
        let mut uses: Vec<ChangeUse> = self.by_change.get(change_id).cloned().unwrap_or_default();
        uses.retain(|u| u.time >= since);
        uses.sort_by_key(|u| u.end);
        Ok(uses)
    }

    /// Reads what the index gained since the last look, starting over when it is another file or
    /// shorter than what was read, or when older uses than those kept are asked for; `false` when
    /// there is no index.
    fn catch_up(&mut self, index: &Path, since: DateTime<Utc>) -> Result<bool, JournalError> {
        let err = |e| read_error(index, e);
        let file = match File::open(index) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(err(e)),
        };
        let meta = file.metadata().map_err(err)?;
        let (id, len) = (file_id(&meta), meta.len());
        let keep = since
            .checked_sub_signed(ORDER_SLACK)
            .unwrap_or(DateTime::<Utc>::MIN_UTC);
        let stale =
            self.file != Some(id) || len < self.read_to || self.kept_from.is_none_or(|k| since < k);
        if stale {
            let time_of = |line: &[u8]| {
                serde_json::from_slice::<ChangeUse>(line)
                    .ok()
                    .map(|u| u.time)
            };
            let recent =
                start_of_lines_since(&file, len, keep, TAIL_FIRST, time_of).map_err(err)?;
            *self = ChangeIndex {
                file: Some(id),
                // The last line is read even when older than asked for: it says what is covered.
                read_to: recent.min(start_of_last_line(&file, len).map_err(err)?),
                kept_from: Some(keep),
                ..ChangeIndex::default()
            };
        }
        let mut lines = WholeLines::from(file, self.read_to).map_err(err)?;
        while let Some((line, _, end)) = lines.next_line().map_err(err)? {
            self.read_to = end;
            if let Ok(u) = serde_json::from_slice::<ChangeUse>(line) {
                // Uses are appended in the journal's order, so the last one read ends furthest.
                self.covered = u.end;
                self.remember(u);
            }
        }
        self.forget_before(keep);
        Ok(true)
    }

    /// Keeps `u`, once: a use read from the journal is read again from the index once its line is
    /// there.
    fn remember(&mut self, u: ChangeUse) {
        let uses = self.by_change.entry(u.change_id.clone()).or_default();
        if !uses.iter().rev().any(|known| known.end == u.end) {
            uses.push(u);
        }
    }

    /// Forgets the uses older than `keep`: looks ask for the same horizon, moving forward. At most
    /// once a second, since it walks every change.
    fn forget_before(&mut self, keep: DateTime<Utc>) {
        if self
            .kept_from
            .is_some_and(|k| keep - k >= chrono::Duration::seconds(1))
        {
            self.kept_from = Some(keep);
            self.by_change.retain(|_, uses| {
                uses.retain(|u| u.time >= keep);
                !uses.is_empty()
            });
        }
    }
}

/// Where the last whole line of a file of `len` bytes begins (`len` when it has none).
fn start_of_last_line(mut file: &File, len: u64) -> std::io::Result<u64> {
    let window = TAIL_FIRST.min(len);
    let mut bytes = vec![0u8; window as usize];
    file.seek(SeekFrom::Start(len - window))?;
    file.read_exact(&mut bytes)?;
    let Some(last_newline) = bytes.iter().rposition(|b| *b == b'\n') else {
        return Ok(len);
    };
    let begins = bytes[..last_newline]
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1);
    Ok(len - window + begins as u64)
}

/// The uses recorded in the journal's whole lines from `from` on, and where the last of those lines
/// ends.
fn uses_in_journal(journal: &Path, from: u64) -> Result<(Vec<ChangeUse>, u64), JournalError> {
    let err = |e| read_error(journal, e);
    let file = File::open(journal).map_err(err)?;
    let mut lines = WholeLines::from(file, from).map_err(err)?;
    let mut uses = Vec::new();
    while let Some((line, _, end)) = lines.next_line().map_err(err)? {
        if let Ok(record) = serde_json::from_slice::<JournalRecord>(line) {
            uses.extend(ChangeUse::of(&record, end));
        }
    }
    Ok((uses, lines.end()))
}

/// Makes the index of `journal` again from the whole journal, into a temporary file moved into
/// place.
pub(super) fn rebuild(journal: &Path, index: &Path) -> Result<(), JournalError> {
    let (uses, _) = uses_in_journal(journal, 0)?;
    let mut bytes = Vec::new();
    for u in &uses {
        serde_json::to_writer(&mut bytes, u).map_err(|e| JournalError::Encode(e.to_string()))?;
        bytes.push(b'\n');
    }
    let write_error = |source| JournalError::Write {
        path: index.to_path_buf(),
        source,
    };
    let folder = index.parent().unwrap_or(Path::new("."));
    let mut temporary = tempfile::NamedTempFile::new_in(folder).map_err(write_error)?;
    temporary.write_all(&bytes).map_err(write_error)?;
    temporary.persist(index).map_err(|e| write_error(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::AuditJournal;
    use super::super::tests::intent_days_ago as intent;
    use super::*;

    fn days_ago(days: i64) -> DateTime<Utc> {
        Utc::now() - chrono::Duration::days(days)
    }

    fn changes_of(uses: &[ChangeUse]) -> Vec<&str> {
        uses.iter().map(|u| u.change_id.as_str()).collect()
    }

    #[test]
    fn a_look_reads_only_what_the_index_gained_since_the_last_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let journal = AuditJournal::new(&path);
        journal.append(&intent("web-01", "c1", 0)).unwrap();
        journal.append(&intent("db-01", "c2", 0)).unwrap();
        let mut index = ChangeIndex::default();
        let c1 = index.uses_of(&path, "c1", days_ago(30)).unwrap();
        assert_eq!(changes_of(&c1), ["c1"]);
        // c1's line of the index is spoilt in place (same file, same length): a look that read the
        // index again would lose it; one that reads on from where it was keeps it.
        let index_file = index_path(&path);
        let text = std::fs::read_to_string(&index_file).unwrap();
        let first = text.lines().next().unwrap();
        std::fs::write(
            &index_file,
            text.replacen(first, &"x".repeat(first.len()), 1),
        )
        .unwrap();
        journal.append(&intent("files-01", "c3", 0)).unwrap();
        assert_eq!(index.uses_of(&path, "c1", days_ago(30)).unwrap(), c1);
        assert_eq!(
            changes_of(&index.uses_of(&path, "c3", days_ago(30)).unwrap()),
            ["c3"]
        );
        let fresh = ChangeIndex::default().uses_of(&path, "c1", days_ago(30));
        assert!(fresh.unwrap().is_empty(), "a first look reads the index");
    }

    #[test]
    fn journal_lines_the_index_does_not_cover_are_read_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let journal = AuditJournal::new(&path);
        journal.append(&intent("web-01", "c1", 0)).unwrap();
        // A process that stopped between its journal line and its index line.
        let index_file = index_path(&path);
        let kept = std::fs::read(&index_file).unwrap();
        journal.append(&intent("db-01", "c2", 0)).unwrap();
        std::fs::write(&index_file, &kept).unwrap();
        let mut index = ChangeIndex::default();
        let c2 = index.uses_of(&path, "c2", days_ago(30)).unwrap();
        assert_eq!(changes_of(&c2), ["c2"]);
        // c2's journal line is spoilt in place: a look that read the journal's end again would
        // lose it.
        let text = std::fs::read_to_string(&path).unwrap();
        let last = text.lines().last().unwrap();
        std::fs::write(&path, text.replacen(last, &"x".repeat(last.len()), 1)).unwrap();
        assert_eq!(index.uses_of(&path, "c2", days_ago(30)).unwrap(), c2);
    }

    #[test]
    fn uses_older_than_asked_for_are_forgotten_and_read_again_when_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let journal = AuditJournal::new(&path);
        journal.append(&intent("web-01", "old", 40)).unwrap();
        journal.append(&intent("web-01", "new", 0)).unwrap();
        let mut index = ChangeIndex::default();
        assert!(
            index
                .uses_of(&path, "old", days_ago(30))
                .unwrap()
                .is_empty()
        );
        assert!(!index.by_change.contains_key("old"), "not kept");
        let old = index.uses_of(&path, "old", days_ago(60)).unwrap();
        assert_eq!(changes_of(&old), ["old"]);
    }

    #[test]
    fn an_index_older_than_the_horizon_still_says_how_much_of_the_journal_it_covers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let journal = AuditJournal::new(&path);
        for change in ["c1", "c2", "c3"] {
            journal.append(&intent("web-01", change, 40)).unwrap();
        }
        let mut index = ChangeIndex::default();
        assert!(index.uses_of(&path, "c3", days_ago(30)).unwrap().is_empty());
        let journal_len = std::fs::metadata(&path).unwrap().len();
        assert_eq!(index.covered, journal_len, "the journal is not read again");
    }

    #[test]
    fn uses_the_index_lacks_are_read_from_the_journal_and_a_lost_index_is_made_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let journal = AuditJournal::new(&path);
        journal.append(&intent("web-01", "c1", 0)).unwrap();
        let mut index = ChangeIndex::default();
        assert_eq!(index.uses_of(&path, "c1", days_ago(30)).unwrap().len(), 1);
        // A process that stopped between its journal line and its index line.
        let index_file = index_path(&path);
        let kept = std::fs::read(&index_file).unwrap();
        journal.append(&intent("db-01", "c2", 0)).unwrap();
        std::fs::write(&index_file, &kept).unwrap();
        let c2 = index.uses_of(&path, "c2", days_ago(30)).unwrap();
        assert_eq!(changes_of(&c2), ["c2"]);
        std::fs::remove_file(&index_file).unwrap();
        let c1 = index.uses_of(&path, "c1", days_ago(30)).unwrap();
        assert_eq!(changes_of(&c1), ["c1"]);
        assert!(index_file.exists(), "made again");
    }
}
