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

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::file::WholeLines;
use super::read_error;
use super::{JournalError, JournalRecord, Phase, RecordKind};
use crate::local_state::open_private;

/// How much of the index's end is read first; twice as much each time that does not reach back to
/// the horizon.
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
            RecordKind::Recovery => true,
            RecordKind::Done | RecordKind::Keep => false,
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

/// Every use of `change_id` since `since`, from the index (made again when missing or stale) and
/// the journal's lines it does not cover yet.
pub(super) fn uses_of(
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
    let tail = match read_tail(&index, change_id, since)? {
        Some(tail) if tail.covered <= journal_len => tail,
        // Missing, or covering more than the journal holds: made again.
        _ => {
            rebuild(journal, &index)?;
            read_tail(&index, change_id, since)?.unwrap_or_default()
        }
    };
    let mut uses: Vec<ChangeUse> = tail.uses;
    if tail.covered < journal_len {
        uses.extend(uses_in_journal(journal, tail.covered)?);
    }
    uses.retain(|u| u.change_id == change_id && u.time >= since);
    uses.sort_by_key(|u| u.end);
    uses.dedup_by_key(|u| u.end);
    Ok(uses)
}

/// What the end of the index holds.
#[derive(Debug, Default)]
struct Tail {
    /// The uses of the change read, back to the horizon.
    uses: Vec<ChangeUse>,
    /// How much of the journal the index covers: the furthest end it names.
    covered: u64,
}

/// The index's lines of `change_id` back to `since` (a little before, for lines out of order);
/// `None` when there is no index. Only the lines that hold the change id's text are parsed, and the
/// first and last (how far back it reaches, how much of the journal it covers): a guard runs this
/// before every insert, and the index of a busy month holds a line per guard.
fn read_tail(
    index: &Path,
    change_id: &str,
    since: DateTime<Utc>,
) -> Result<Option<Tail>, JournalError> {
    let needle = serde_json::to_string(change_id)
        .map(|quoted| format!("\"c\":{quoted}").into_bytes())
        .map_err(|e| JournalError::Encode(e.to_string()))?;
    let mut file = match File::open(index) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(read_error(index, source)),
    };
    let len = file.metadata().map_err(|e| read_error(index, e))?.len();
    let mut span = TAIL_FIRST.min(len);
    loop {
        let from = len - span;
        let mut bytes = Vec::with_capacity(span as usize);
        file.seek(SeekFrom::Start(from))
            .and_then(|_| (&mut file).take(span).read_to_end(&mut bytes))
            .map_err(|e| read_error(index, e))?;
        // A first line cut by the start of the span is not read.
        let whole = match from {
            0 => &bytes[..],
            _ => match bytes.iter().position(|b| *b == b'\n') {
                Some(at) => &bytes[at + 1..],
                None => &[],
            },
        };
        let lines = || whole.split(|b| *b == b'\n').filter(|l| !l.is_empty());
        let read = |line: &[u8]| serde_json::from_slice::<ChangeUse>(line).ok();
        let horizon = since.checked_sub_signed(ORDER_SLACK).unwrap_or(since);
        let reaches_back = lines().find_map(read).is_some_and(|u| u.time < horizon);
        if from == 0 || reaches_back {
            // Uses are appended in the journal's order, so the last one read ends furthest.
            let covered = lines().rev().find_map(read).map_or(0, |u| u.end);
            let uses = lines()
                .filter(|l| l.windows(needle.len()).any(|w| w == needle.as_slice()))
                .filter_map(read)
                .collect();
            return Ok(Some(Tail { uses, covered }));
        }
        span = (span * 2).min(len);
    }
}

/// The uses recorded in the journal's lines from `from` on.
fn uses_in_journal(journal: &Path, from: u64) -> Result<Vec<ChangeUse>, JournalError> {
    let err = |e| read_error(journal, e);
    let file = File::open(journal).map_err(err)?;
    let mut lines = WholeLines::from(file, from).map_err(err)?;
    let mut uses = Vec::new();
    while let Some((line, _, end)) = lines.next_line().map_err(err)? {
        if let Ok(record) = serde_json::from_slice::<JournalRecord>(line) {
            uses.extend(ChangeUse::of(&record, end));
        }
    }
    Ok(uses)
}

/// Makes the index of `journal` again from the whole journal, into a temporary file moved into
/// place.
pub(super) fn rebuild(journal: &Path, index: &Path) -> Result<(), JournalError> {
    let uses = uses_in_journal(journal, 0)?;
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
