//! Where the recent lines of each change are: what a guard reads to find an earlier attempt of its
//! change.
//!
//! A guard must not read the whole journal (years of records), nor even the whole hook window
//! (an MCP server guarding 256 VMs at once writes megabytes of it in minutes). So each process keeps
//! an index of the journal's recent lines, by change id: where each line is and when it was written.
//! A look reads only what was appended since the last look (by any process), adds it to the index,
//! forgets lines older than it will ever be asked for, and then reads the lines of the one change it
//! was asked about. Its first look, and a journal that was replaced or cut short, start from the end
//! and read backwards only as far as the oldest time asked for.
//!
//! The lines this process writes, the journal's writer hands to the index as it writes them
//! ([`RecentLines::written_here`]), so a look parses only other processes' lines.
//!
//! A forwarded call's lines are left out ([`indexed`]): a gateway writes two for every call of a
//! change, and what is looked up by change here (a guard's earlier attempt, a guard a gateway's
//! later call reuses, a protection change since) is never one of them.
//!
//! A look takes no lock: the journal only grows, by whole lines, and a look reads only lines that
//! end with their newline and parse, so a line still being written is left for the next look. (Were
//! the journal's lock taken, every look would wait for the write and sync under way, and 256 guards
//! starting at once would queue behind each other's intents.)

use std::collections::{BTreeMap, HashMap};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use chrono::{DateTime, Utc};

use super::error::JournalError;
use super::file::{FileId, file_id, start_of_lines_since};
use super::record::{JournalRecord, RecordKind};
use crate::local_state::open_private;

/// How much of the journal's end a first look reads; twice as much each time that does not reach
/// back far enough.
pub(super) const TAIL_FIRST: u64 = 256 * 1024;

/// How much older than asked for the lines kept are. Looks made at about the same time ask from
/// slightly different times (each reads the clock before it takes the index), and one that asks from
/// a little before the last must not make the index start over.
const KEEP_SLACK: chrono::Duration = chrono::Duration::seconds(60);

/// One line of the journal.
#[derive(Debug, Clone, Copy)]
struct Line {
    at: u64,
    len: usize,
    time: DateTime<Utc>,
}

/// The index of one process: the recent lines of each change.
#[derive(Debug, Default)]
pub(super) struct RecentLines {
    /// The file indexed, to notice one put in its place.
    file: Option<FileId>,
    /// The file indexed, held open between looks.
    reader: Option<File>,
    /// Everything before this offset is indexed.
    indexed_to: u64,
    /// The oldest time lines are kept for.
    kept_from: Option<DateTime<Utc>>,
    by_change: HashMap<String, Vec<Line>>,
    /// Stretches beyond `indexed_to` that this process wrote, already indexed: start to end.
    written: BTreeMap<u64, u64>,
}

/// The fields the index needs of a line; serde skips the rest without building it.
#[derive(serde::Deserialize)]
struct Key {
    time: DateTime<Utc>,
    change_id: String,
    kind: Option<RecordKind>,
}

/// Whether lines of `kind` are in the index: all but forwarded calls'.
pub(super) fn indexed(kind: RecordKind) -> bool {
    kind != RecordKind::Call
}

impl RecentLines {
    /// The records of `change_id` written at or after `since`, in file order, from the journal at
    /// `path`; `None` when there is no journal yet.
    pub(super) fn of_change(
        &mut self,
        path: &Path,
        change_id: &str,
        since: DateTime<Utc>,
    ) -> Result<Option<Vec<JournalRecord>>, JournalError> {
        let err = |source| JournalError::Read {
            path: path.to_path_buf(),
            source,
        };
        let meta = match std::fs::metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(err(e)),
        };
        let file = self.reader(path, &meta).map_err(err)?;
        let read = self.catch_up(&file, &meta, since).and_then(|()| {
            let lines = self.by_change.get(change_id).cloned().unwrap_or_default();
            read_lines(&file, lines.iter().filter(|l| l.time >= since))
        });
        self.reader = Some(file);
        read.map(Some).map_err(err)
    }

    /// The journal (whose path gave `meta`), open for reading: the file held since the last look
    /// while the path still names it, so a look costs one `stat` rather than an open and a close.
    fn reader(&mut self, path: &Path, meta: &std::fs::Metadata) -> std::io::Result<File> {
        let id = file_id(meta);
        match self.reader.take() {
            Some(file) if self.file == Some(id) && id.is_some() => Ok(file),
            _ => open_private(path, OpenOptions::new().read(true), false),
        }
    }

    /// Indexes what was appended since the last look, starting over when the file is another one or
    /// shorter than what was indexed, or when older lines than those kept are asked for.
    fn catch_up(
        &mut self,
        file: &File,
        meta: &std::fs::Metadata,
        since: DateTime<Utc>,
    ) -> std::io::Result<()> {
        let id = file_id(meta);
        let len = meta.len();
        let keep = since
            .checked_sub_signed(KEEP_SLACK)
            .unwrap_or(DateTime::<Utc>::MIN_UTC);
        let stale = self.file != Some(id)
            || len < self.indexed_to
            || self.kept_from.is_none_or(|k| since < k);
        if stale {
            self.by_change.clear();
            self.written.clear();
            self.file = Some(id);
            self.indexed_to = start_of_lines_since(file, len, keep, TAIL_FIRST, |line| {
                serde_json::from_slice::<Key>(line).ok().map(|k| k.time)
            })?;
            self.kept_from = Some(keep);
        }
        self.index(file, len)?;
        // Forget what no look will ask for again: looks ask for the same window, moving forward. At
        // most once a second, since it walks every change.
        if self
            .kept_from
            .is_some_and(|k| keep - k >= chrono::Duration::seconds(1))
        {
            self.kept_from = Some(keep);
            self.by_change.retain(|_, lines| {
                lines.retain(|l| l.time >= keep);
                !lines.is_empty()
            });
        }
        Ok(())
    }

    /// What this process's writer is about to write at `began` (a fencing newline included): each
    /// line's change id, time, offset and length. A look moves over them once they are in the file.
    /// Ignored before the first look (which reads them), and when a look already read past `began`.
    pub(super) fn written_here(
        &mut self,
        began: u64,
        lines: Vec<(&str, DateTime<Utc>, u64, usize)>,
    ) {
        if self.file.is_none() || began < self.indexed_to {
            return;
        }
        let mut end = began;
        for (change, time, at, len) in lines {
            self.by_change
                .entry(change.to_string())
                .or_default()
                .push(Line { at, len, time });
            end = at + len as u64;
        }
        self.written.insert(began, end);
    }

    /// What [`RecentLines::written_here`] was told of at `began`, of these changes, was not written
    /// after all (the write failed and was cut back off).
    pub(super) fn not_written(&mut self, began: u64, changes: &[String]) {
        let Some(end) = self.written.remove(&began) else {
            return;
        };
        for change in changes {
            if let Some(lines) = self.by_change.get_mut(change) {
                lines.retain(|l| !(began..end).contains(&l.at));
            }
        }
    }

    /// Moves `indexed_to` over the stretches this process wrote that start where it stands and are
    /// in the file (`len` long) by now.
    fn absorb_written(&mut self, len: u64) {
        while let Some(&end) = self.written.get(&self.indexed_to)
            && end <= len
        {
            self.written.remove(&self.indexed_to);
            self.indexed_to = end;
        }
    }

    /// Indexes the whole lines from `indexed_to` to `len`, skipping what this process wrote.
    fn index(&mut self, file: &File, len: u64) -> std::io::Result<()> {
        loop {
            self.absorb_written(len);
            if len <= self.indexed_to {
                return Ok(());
            }
            // A stretch of this process's starting here but not yet in the file: wait for it.
            if self.written.contains_key(&self.indexed_to) {
                return Ok(());
            }
            let next_written = self.written.keys().next().copied().filter(|w| *w < len);
            let gap_end = next_written.unwrap_or(len);
            let closed = next_written.is_some();
            self.index_gap(file, gap_end, closed)?;
            if !closed {
                return Ok(());
            }
        }
    }

    /// Indexes the lines from `indexed_to` to `gap_end`. A gap `closed` by a stretch this process
    /// wrote is whole lines (that write began with a fencing newline); otherwise a last line without
    /// its newline is left for the next look (it is still being written, or torn).
    fn index_gap(&mut self, mut file: &File, gap_end: u64, closed: bool) -> std::io::Result<()> {
        if gap_end <= self.indexed_to {
            return Ok(());
        }
        let mut bytes = vec![0u8; (gap_end - self.indexed_to) as usize];
        file.seek(SeekFrom::Start(self.indexed_to))?;
        file.read_exact(&mut bytes)?;
        let whole = if closed {
            bytes.len()
        } else {
            bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1)
        };
        let mut at = self.indexed_to;
        for line in bytes[..whole].split_inclusive(|b| *b == b'\n') {
            if let Ok(key) = serde_json::from_slice::<Key>(line)
                && key.kind.is_none_or(indexed)
            {
                self.by_change.entry(key.change_id).or_default().push(Line {
                    at,
                    len: line.len(),
                    time: key.time,
                });
            }
            at += line.len() as u64;
        }
        self.indexed_to += whole as u64;
        Ok(())
    }
}

/// The records of `lines`, read where they are.
fn read_lines<'a>(
    mut file: &File,
    lines: impl Iterator<Item = &'a Line>,
) -> std::io::Result<Vec<JournalRecord>> {
    let mut records = Vec::new();
    for line in lines {
        let mut bytes = vec![0u8; line.len];
        file.seek(SeekFrom::Start(line.at))?;
        file.read_exact(&mut bytes)?;
        if let Ok(r) = serde_json::from_slice::<JournalRecord>(&bytes) {
            records.push(r);
        }
    }
    Ok(records)
}
