//! The journal file itself: a record is whole or absent.
//!
//! An append takes the file's exclusive lock (bounded, [`crate::local_state::lock`]), and then:
//! when the last byte is not a newline (a writer died mid-line, or a full disk cut its line short),
//! it writes a newline first, so the torn line stays a line of its own (read as unreadable and
//! skipped) instead of gluing the new record onto it; it writes the record in one call; if that
//! write fails (no space left, a file-size limit), it cuts the file back to where it was, so no
//! partial record is left; and it syncs the data to disk before the lock is let go.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

use super::error::JournalError;
use super::record::JournalRecord;
use crate::local_state::{LOCK_WAIT, LockMode, lock, open_private};

/// The journal file as its writer holds it between appends: opened once, and again only when its
/// path names another file (moved away, removed, replaced) or the last append failed. Opening it
/// for every append cost a guard more system calls than its write and sync.
#[derive(Debug)]
pub(super) struct Appender {
    path: PathBuf,
    open: Option<(File, FileId)>,
}

impl Appender {
    /// The appender of the journal at `path`; nothing is opened yet.
    pub(super) fn new(path: PathBuf) -> Appender {
        Appender { path, open: None }
    }

    /// Appends `line` (whole lines, each ending with its newline) to the journal, creating it (0600,
    /// in a 0700 folder) when missing. Once the place of the write is known, and before it is made,
    /// `placed` is told where it begins (a fencing newline included) and where its first line
    /// begins; it returns what to do should the write fail.
    ///
    /// `written` runs once the write succeeded, with the journal's lock still held: what it appends
    /// elsewhere (the change index) comes in the journal's order.
    pub(super) fn append<U: FnOnce()>(
        &mut self,
        line: &[u8],
        sync: bool,
        placed: impl FnOnce(u64, u64) -> U,
        written: impl FnOnce(),
    ) -> Result<(), JournalError> {
        let path = self.path.clone();
        let err = |source| JournalError::Write {
            path: path.clone(),
            source,
        };
        let file = self.locked().map_err(|e| match e {
            Locked::Io(e) => err(e),
            Locked::Lock(e) => JournalError::locking(&path, e, true),
        })?;
        let outcome = write_whole(file, line, sync, placed);
        if outcome.is_ok() {
            written();
        }
        let _ = file.unlock();
        if outcome.is_err() {
            self.open = None;
        }
        outcome.map_err(err)
    }

    /// The journal, open for appending and locked. A journal replaced while this waited for the
    /// lock (an administrator's archive, `rewind journal archive`) is opened again by its name, so no
    /// line goes to the file moved away.
    fn locked(&mut self) -> Result<&File, Locked> {
        let path = self.path.clone();
        loop {
            let file = self.file().map_err(Locked::Io)?;
            lock(file, &path, LockMode::Exclusive, LOCK_WAIT).map_err(Locked::Lock)?;
            let held = file_id(&file.metadata().map_err(Locked::Io)?);
            let named = std::fs::metadata(&path).ok().map(|m| file_id(&m));
            if named == Some(held) || held.is_none() {
                break;
            }
            let _ = file.unlock();
            self.open = None;
        }
        match &self.open {
            Some((file, _)) => Ok(file),
            None => Err(Locked::Io(std::io::Error::other(
                "the journal was not opened",
            ))),
        }
    }

    /// The journal, open for appending: the one held, while the path still names it.
    fn file(&mut self) -> std::io::Result<&File> {
        let named = std::fs::metadata(&self.path).ok().map(|m| file_id(&m));
        let held = self.open.as_ref().map(|(_, id)| *id);
        if held.is_none() || held != named || named.is_some_and(|id| id.is_none()) {
            self.open = None;
            let file = open_for_append(&self.path)?;
            let id = file_id(&file.metadata()?);
            self.open = Some((file, id));
        }
        match &self.open {
            Some((file, _)) => Ok(file),
            None => Err(std::io::Error::other("the journal was not opened")),
        }
    }
}

/// Why the journal could not be opened and locked.
enum Locked {
    Io(std::io::Error),
    Lock(crate::local_state::LockError),
}

/// Opens the journal at `path` for appending, creating it (0600, in a 0700 folder) when missing.
fn open_for_append(path: &Path) -> std::io::Result<File> {
    let created = !path.exists();
    let mut options = OpenOptions::new();
    options.create(true).read(true).append(true);
    let file = open_private(path, &mut options, true)?;
    if created {
        // The new file's name must outlive a power cut as well as its first record.
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            let _ = File::open(dir).and_then(|d| d.sync_all());
        }
    }
    Ok(file)
}

/// What tells one file from another that took its name: device and inode; `None` where the
/// platform cannot tell, so the file is opened again each time.
pub(super) type FileId = Option<(u64, u64)>;

#[cfg(unix)]
pub(super) fn file_id(meta: &std::fs::Metadata) -> FileId {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
pub(super) fn file_id(_meta: &std::fs::Metadata) -> FileId {
    None
}

/// The offset of the first line written at or after `since`, read back from the end of a file of
/// `len` bytes, `tail_first` bytes first and twice as many each time that does not reach back far
/// enough. Lines are appended in the order they are written (each under the lock, moments after its
/// time), so the first line older than `since` found going back marks the place. `time_of` reads a
/// line's time; lines it cannot read are passed over.
pub(super) fn start_of_lines_since(
    mut file: &File,
    len: u64,
    since: DateTime<Utc>,
    tail_first: u64,
    time_of: impl Fn(&[u8]) -> Option<DateTime<Utc>>,
) -> std::io::Result<u64> {
    let mut window = tail_first.min(len);
    loop {
        let start = len - window;
        let mut bytes = vec![0u8; window as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut bytes)?;
        // The window's first line may begin before it: left out (it is older than the rest).
        let mut at = match start {
            0 => 0,
            _ => bytes
                .iter()
                .position(|b| *b == b'\n')
                .map_or(bytes.len(), |i| i + 1),
        };
        let mut reaches_back = false;
        let mut first_recent = None;
        for line in bytes[at..].split_inclusive(|b| *b == b'\n') {
            match time_of(line) {
                Some(time) if time < since => reaches_back = true,
                Some(_) => first_recent = Some(at),
                None => {}
            }
            at += line.len();
            if first_recent.is_some() {
                break;
            }
        }
        if start == 0 || reaches_back {
            return Ok(start + first_recent.unwrap_or(at) as u64);
        }
        window = (window * 2).min(len);
    }
}

/// Writes `line` at the end of `file` (opened for appending and reading, and locked), fencing a torn
/// last line first, and cuts the file back if the write fails; `placed` as for [`Appender::append`].
fn write_whole<U: FnOnce()>(
    mut file: &File,
    line: &[u8],
    sync: bool,
    placed: impl FnOnce(u64, u64) -> U,
) -> std::io::Result<()> {
    let len = file.metadata()?.len();
    let mut bytes = Vec::with_capacity(line.len() + 1);
    if len > 0 && last_byte(file, len)? != b'\n' {
        bytes.push(b'\n');
    }
    bytes.extend_from_slice(line);
    let synced = |()| if sync { file.sync_data() } else { Ok(()) };
    let fence = (bytes.len() - line.len()) as u64;
    let undo = placed(len, len + fence);
    match file.write_all(&bytes).and_then(synced) {
        Ok(()) => Ok(()),
        Err(e) => {
            undo();
            // Whole or absent: the part that reached the file is taken back off. Should that fail
            // too, the next append fences the torn line.
            let _ = file.set_len(len);
            let _ = file.sync_data();
            Err(e)
        }
    }
}

/// The last byte of `file`, `len` bytes long.
#[cfg(unix)]
fn last_byte(file: &File, len: u64) -> std::io::Result<u8> {
    let mut last = [0u8];
    std::os::unix::fs::FileExt::read_exact_at(file, &mut last, len - 1)?;
    Ok(last[0])
}

#[cfg(not(unix))]
fn last_byte(mut file: &File, len: u64) -> std::io::Result<u8> {
    let mut last = [0u8];
    file.seek(SeekFrom::Start(len - 1))?;
    file.read_exact(&mut last)?;
    Ok(last[0])
}

/// Which lines a read parses.
#[derive(Debug, Default)]
pub(super) struct Wanted {
    /// From this time on (the file bisected to a little before it).
    pub(super) since: Option<chrono::DateTime<chrono::Utc>>,
    /// Lines holding one of these texts (compared with the line lowercased in ASCII).
    pub(super) holding: Option<Vec<Vec<u8>>>,
}

impl Wanted {
    /// Whether `line` is to be parsed.
    pub(super) fn takes(&self, line: &[u8]) -> bool {
        let Some(texts) = &self.holding else {
            return true;
        };
        let lower = line.to_ascii_lowercase();
        texts
            .iter()
            .any(|t| lower.windows(t.len()).any(|w| w.eq_ignore_ascii_case(t)))
    }
}

/// Every record of the journal at `path` in file order that `wanted` takes (from where a bisection
/// finds its time, and only lines holding its texts), and how many of those lines could not be
/// read; `None` when there is no journal yet.
pub(super) fn read_records_of(
    path: &Path,
    wanted: &Wanted,
) -> Result<Option<(Vec<JournalRecord>, usize)>, JournalError> {
    let err = |source| JournalError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = match open_private(path, OpenOptions::new().read(true), false) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(err(e)),
    };
    lock(&file, path, LockMode::Shared, LOCK_WAIT)
        .map_err(|e| JournalError::locking(path, e, false))?;
    let mut records = Vec::new();
    let mut skipped_lines = 0;
    // Split on bytes, not `lines()`: a line torn inside a multi-byte character is not UTF-8, and
    // must be skipped like any other unreadable line rather than end the whole read.
    let read = (|| {
        let start = match wanted.since {
            Some(since) => bisect(&file, since)?,
            None => 0,
        };
        let mut reader = BufReader::new(&file);
        reader.seek(SeekFrom::Start(start))?;
        if start > 0 {
            // The line the bisection landed in the middle of.
            reader.read_until(b'\n', &mut Vec::new())?;
        }
        for line in reader.split(b'\n') {
            let line = line?;
            if line.trim_ascii().is_empty() || !wanted.takes(&line) {
                continue;
            }
            match serde_json::from_slice::<JournalRecord>(&line) {
                Ok(r) => records.push(r),
                Err(_) => skipped_lines += 1,
            }
        }
        Ok(())
    })();
    let _ = file.unlock();
    read.map_err(err)?;
    Ok(Some((records, skipped_lines)))
}

/// Where to start reading for records of `since` on: an offset whose next whole line was written
/// before `since` less the slack, found by halving (a stretch of 64 KiB is then read on).
fn bisect(file: &File, since: chrono::DateTime<chrono::Utc>) -> std::io::Result<u64> {
    let horizon = since.checked_sub_signed(ORDER_SLACK).unwrap_or(since);
    let (mut low, mut high) = (0u64, file.metadata()?.len());
    while high - low > RECENT_FIRST {
        let middle = low + (high - low) / 2;
        let mut reader = BufReader::new(file);
        reader.seek(SeekFrom::Start(middle))?;
        reader.read_until(b'\n', &mut Vec::new())?;
        let mut line = Vec::new();
        reader.read_until(b'\n', &mut line)?;
        let time = serde_json::from_slice::<JournalRecord>(&line).map(|r| r.time);
        match time {
            Ok(time) if time < horizon => low = middle,
            // Later, or a line that cannot be read: the start is before it.
            _ => high = middle,
        }
    }
    Ok(low)
}

/// How far lines may be out of time order: a batch written together, two processes' clocks.
pub(super) const ORDER_SLACK: chrono::Duration = chrono::Duration::seconds(60);

/// How much of the journal's end is read first when only its recent records are wanted; twice as
/// much each time that does not reach back far enough.
const RECENT_FIRST: u64 = 64 * 1024;

/// The records of the journal at `path` written since `since` (with those a little older that the
/// same stretch holds), in file order: read from the end back, never the whole file. A line still
/// being written is left out. `None` when there is no journal yet.
pub(super) fn records_since(
    path: &Path,
    since: chrono::DateTime<chrono::Utc>,
) -> Result<Option<Vec<JournalRecord>>, JournalError> {
    let err = |source| JournalError::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(err(e)),
    };
    let len = file.metadata().map_err(err)?.len();
    let horizon = since.checked_sub_signed(ORDER_SLACK).unwrap_or(since);
    let mut span = RECENT_FIRST.min(len);
    loop {
        let from = len - span;
        let mut bytes = Vec::with_capacity(span as usize);
        file.seek(SeekFrom::Start(from))
            .and_then(|_| (&mut file).take(span).read_to_end(&mut bytes))
            .map_err(err)?;
        let records = whole_records(&bytes, from == 0);
        let reaches_back = records.first().is_some_and(|r| r.time < horizon);
        if from == 0 || reaches_back {
            return Ok(Some(records));
        }
        span = (span * 2).min(len);
    }
}

/// The records of the whole lines of `bytes`: the first line is cut unless `at_start`, and a last
/// line without its newline is still being written.
fn whole_records(bytes: &[u8], at_start: bool) -> Vec<JournalRecord> {
    let whole = match at_start {
        true => bytes,
        false => match bytes.iter().position(|b| *b == b'\n') {
            Some(at) => &bytes[at + 1..],
            None => &[],
        },
    };
    let complete = match whole.iter().rposition(|b| *b == b'\n') {
        Some(at) => &whole[..at],
        None => &[],
    };
    complete
        .split(|b| *b == b'\n')
        .filter_map(|line| serde_json::from_slice(line).ok())
        .collect()
}
/// The whole lines of a journal from an offset on, each with where it ends. A last line without its
/// newline (a record still being written, or cut short) is not given: a later look reads it whole.
/// One line is held at a time, so a journal of years is never held.
pub(super) struct WholeLines<R> {
    reader: BufReader<R>,
    end: u64,
    line: Vec<u8>,
}

impl<R: Read + Seek> WholeLines<R> {
    /// The lines of `file` from byte `from`, which starts a line.
    pub(super) fn from(mut file: R, from: u64) -> std::io::Result<WholeLines<R>> {
        file.seek(SeekFrom::Start(from))?;
        Ok(WholeLines {
            reader: BufReader::new(file),
            end: from,
            line: Vec::new(),
        })
    }

    /// The next whole line (its newline included), where it starts and where it ends; `None` at
    /// the end.
    pub(super) fn next_line(&mut self) -> std::io::Result<Option<(&[u8], u64, u64)>> {
        self.line.clear();
        let n = self.reader.read_until(b'\n', &mut self.line)?;
        if n == 0 || self.line.last() != Some(&b'\n') {
            return Ok(None);
        }
        let start = self.end;
        self.end += n as u64;
        Ok(Some((&self.line, start, self.end)))
    }

    /// Where the last line given ends (the offset given at first, before any).
    pub(super) fn end(&self) -> u64 {
        self.end
    }
}

#[cfg(test)]
mod tests {
    use super::WholeLines;
    use std::io::Cursor;

    #[test]
    fn whole_lines_give_each_line_with_its_start_and_end_and_leave_one_still_being_written() {
        let text = b"{\"a\":1}\n{\"b\":2}\n{\"c\":";
        let mut lines = WholeLines::from(Cursor::new(&text[..]), 0).unwrap();
        let (line, start, end) = lines.next_line().unwrap().unwrap();
        assert_eq!((line, start, end), (&b"{\"a\":1}\n"[..], 0, 8));
        let (line, start, end) = lines.next_line().unwrap().unwrap();
        assert_eq!((line, start, end), (&b"{\"b\":2}\n"[..], 8, 16));
        assert!(
            lines.next_line().unwrap().is_none(),
            "a line without its newline waits"
        );
        assert_eq!(lines.end(), 16);
    }

    #[test]
    fn whole_lines_start_at_the_offset_given() {
        let text = b"one\ntwo\n";
        let mut lines = WholeLines::from(Cursor::new(&text[..]), 4).unwrap();
        assert_eq!(lines.end(), 4);
        let (line, start, end) = lines.next_line().unwrap().unwrap();
        assert_eq!((line, start, end), (&b"two\n"[..], 4, 8));
        assert!(lines.next_line().unwrap().is_none());
    }
}
