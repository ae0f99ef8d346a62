//! The journal file itself: a record is whole or absent.
//!
//! An append takes the file's exclusive lock (bounded, [`crate::local_state::lock`]), and then:
//! when the last byte is not a newline (a writer died mid-line, or a full disk cut its line short),
//! it writes a newline first, so the torn line stays a line of its own (read as unreadable and
//! skipped) instead of gluing the new record onto it; it writes the record in one call; if that
//! write fails (no space left, a file-size limit), it cuts the file back to where it was, so no
//! partial record is left; and it syncs the data to disk before the lock is let go.

use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::Path;

use super::{JournalError, JournalRecord};
use crate::local_state::{LOCK_WAIT, LockMode, lock, open_private};

/// Appends `line` (ending with its newline) to the journal at `path`, creating it (0600, in a 0700
/// folder) when missing.
pub(super) fn append_line(path: &Path, line: &[u8]) -> Result<(), JournalError> {
    let err = |source| JournalError::Write {
        path: path.to_path_buf(),
        source,
    };
    let created = !path.exists();
    let mut options = OpenOptions::new();
    options.create(true).read(true).append(true);
    let file = open_private(path, &mut options, true).map_err(err)?;
    if created {
        // The new file's name must outlive a power cut as well as its first record.
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            let _ = std::fs::File::open(dir).and_then(|d| d.sync_all());
        }
    }
    lock(&file, path, LockMode::Exclusive, LOCK_WAIT)
        .map_err(|e| JournalError::locking(path, e, true))?;
    let written = write_whole(&file, line);
    let _ = file.unlock();
    written.map_err(err)
}

/// Writes `line` at the end of `file` (opened for appending and reading, and locked), fencing a torn
/// last line first, and cuts the file back if the write fails.
fn write_whole(mut file: &std::fs::File, line: &[u8]) -> std::io::Result<()> {
    let len = file.metadata()?.len();
    let mut bytes = Vec::with_capacity(line.len() + 1);
    if len > 0 {
        let mut last = [0u8];
        file.seek(SeekFrom::Start(len - 1))?;
        file.read_exact(&mut last)?;
        if last[0] != b'\n' {
            bytes.push(b'\n');
        }
    }
    bytes.extend_from_slice(line);
    match file.write_all(&bytes).and_then(|()| file.sync_data()) {
        Ok(()) => Ok(()),
        Err(e) => {
            // Whole or absent: the part that reached the file is taken back off. Should that fail
            // too, the next append fences the torn line.
            let _ = file.set_len(len);
            let _ = file.sync_data();
            Err(e)
        }
    }
}

/// Every record of the journal at `path` in file order, and how many lines could not be read; `None`
/// when there is no journal yet.
pub(super) fn read_records(
    path: &Path,
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
        for line in BufReader::new(&file).split(b'\n') {
            let line = line?;
            if line.trim_ascii().is_empty() {
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
