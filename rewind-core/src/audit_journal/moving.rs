//! Moving a team between the journal's stores: `rewind journal export` writes every line as the
//! JSON-lines exchange format (a file journal, an archive and an export are one format), and
//! `rewind journal import --from FILE` appends the lines of such a file that the journal does not
//! hold yet, so importing twice adds nothing. Lines are moved as written, never re-encoded: a line of
//! a newer version keeps what this one does not read.

use std::collections::HashSet;

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::error::JournalError;
use super::record::JournalRecord;
use super::store::Store;

/// What an import did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Imported {
    /// Where the lines went.
    pub journal: String,
    /// Lines read from the file (blank ones left out).
    pub read: u64,
    /// Lines appended.
    pub added: u64,
    /// Lines the journal held already.
    pub present: u64,
    /// Lines that are no journal record, left out.
    pub unreadable: u64,
}

/// Every line of the journal in `store`, in the order written.
pub(super) fn lines(store: &Store) -> Result<Vec<String>, JournalError> {
    match store {
        Store::Postgres(db) => db.lines_since(None),
        Store::File(f) => match std::fs::read(&f.path) {
            Ok(bytes) => Ok(whole_lines(&bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(source) => Err(JournalError::Read {
                path: f.path.clone(),
                source,
            }),
        },
    }
}

/// The lines of `bytes`, a JSON-lines file: whole lines only (a last line cut short is no record),
/// blank ones left out.
pub fn whole_lines(bytes: &[u8]) -> Vec<String> {
    let whole = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    String::from_utf8_lossy(&bytes[..whole])
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Appends the lines of `incoming` that `store` does not hold yet.
pub(super) fn import(store: &Store, incoming: Vec<String>) -> Result<Imported, JournalError> {
    let held = lines(store)?;
    if let Store::File(f) = store
        && !held.is_empty()
    {
        return Err(JournalError::ImportIntoRecords {
            path: f.path.clone(),
        });
    }
    let mut seen: HashSet<[u8; 32]> = held.iter().map(|l| digest(l)).collect();
    let mut done = Imported {
        journal: store.place(),
        read: incoming.len() as u64,
        added: 0,
        present: 0,
        unreadable: 0,
    };
    for line in incoming {
        let Ok(record) = serde_json::from_str::<JournalRecord>(&line) else {
            done.unreadable += 1;
            continue;
        };
        if !seen.insert(digest(&line)) {
            done.present += 1;
            continue;
        }
        store.append_line(&record, line)?;
        done.added += 1;
    }
    Ok(done)
}

fn digest(line: &str) -> [u8; 32] {
    Sha256::digest(line.trim().as_bytes()).into()
}
