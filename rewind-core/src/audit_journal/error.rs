//! What goes wrong reading or writing the journal, and the errors its files give for a path.

use std::path::{Path, PathBuf};

use crate::local_state::{LockBusy, LockError};

/// The journal cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// Opening, locking or writing failed. The record was not written (a partial line is cut back
    /// off).
    #[error(
        "cannot write the audit journal {path}: {source}; check that its folder is writable and its disk has room"
    )]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Reading failed.
    #[error("cannot read the audit journal {path}: {source}; check its permissions")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Another process held the journal's lock for longer than rewind waits.
    #[error("cannot use the audit journal: {0}")]
    Busy(#[from] LockBusy),
    /// The journal's PostgreSQL database could not be reached, or refused a statement.
    #[error(
        "cannot use the audit journal in PostgreSQL at {store}: {problem}; check that the database is up and reachable from this machine"
    )]
    Store {
        /// Its host, port and database (never a password).
        store: String,
        /// What went wrong.
        problem: String,
    },
    /// An import into a journal file that holds records already: a file is kept in time order.
    #[error(
        "{path} holds records already, and a journal file is kept in time order: import into an empty journal file or into a database (journal = \"postgresql://...\"); to move a database's journal to a file, run `rewind journal export --to FILE` against it"
    )]
    ImportIntoRecords {
        /// The journal file.
        path: PathBuf,
    },
    /// A record could not be serialized.
    #[error("cannot encode a journal record: {0}")]
    Encode(String),
}

/// `path` could not be read.
pub(super) fn read_error(path: &Path, source: std::io::Error) -> JournalError {
    JournalError::Read {
        path: path.to_path_buf(),
        source,
    }
}

/// `path` could not be written.
pub(super) fn write_error(path: &Path, source: std::io::Error) -> JournalError {
    JournalError::Write {
        path: path.to_path_buf(),
        source,
    }
}

impl JournalError {
    /// The same error again, for each caller of a group write that failed.
    pub(super) fn duplicate(&self) -> JournalError {
        let io = |e: &std::io::Error| std::io::Error::new(e.kind(), e.to_string());
        match self {
            JournalError::Write { path, source } => JournalError::Write {
                path: path.clone(),
                source: io(source),
            },
            JournalError::Read { path, source } => JournalError::Read {
                path: path.clone(),
                source: io(source),
            },
            JournalError::Busy(b) => JournalError::Busy(b.clone()),
            JournalError::Encode(m) => JournalError::Encode(m.clone()),
            JournalError::ImportIntoRecords { path } => {
                JournalError::ImportIntoRecords { path: path.clone() }
            }
            JournalError::Store { store, problem } => JournalError::Store {
                store: store.clone(),
                problem: problem.clone(),
            },
        }
    }

    /// The error of opening or locking the journal at `path`.
    pub(super) fn locking(path: &Path, e: LockError, writing: bool) -> JournalError {
        let path = path.to_path_buf();
        match e {
            LockError::Busy(b) => JournalError::Busy(b),
            LockError::Io(source) if writing => JournalError::Write { path, source },
            LockError::Io(source) => JournalError::Read { path, source },
        }
    }
}
