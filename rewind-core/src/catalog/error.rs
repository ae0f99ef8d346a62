//! What goes wrong with the catalog, and an entry it refuses.

use std::path::PathBuf;

use crate::error_kind::ErrorKind;
use crate::local_state::LockBusy;

/// The catalog cannot be read or written, or an entry is malformed.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// The file exists but cannot be read.
    #[error("cannot read the tool catalog {path}: {source}; check its permissions")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a valid catalog. It is left as it is.
    #[error(
        "the tool catalog {path} is corrupt: {message}; it was left untouched: fix it by hand, or move it away to start a new one"
    )]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        message: String,
    },
    /// The file cannot be written.
    #[error("cannot write the tool catalog {path}: {source}; check that its folder is writable")]
    Write {
        /// The file (or its temporary or lock file).
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Another process held the catalog's lock for longer than rewind waits.
    #[error("cannot change the tool catalog: {0}")]
    Busy(#[from] LockBusy),
    /// An entry's field is unusable.
    #[error("invalid catalog {field}: {reason}")]
    Invalid {
        /// `server`, `tool` or `vm_arg`.
        field: &'static str,
        /// What is wrong.
        reason: InvalidEntry,
    },
    /// An agent asked to mark read-only a tool the catalog records as mutating: only a human removes
    /// that entry.
    #[error(
        "{server}/{tool} is recorded as mutating, and an agent cannot mark it read-only; nothing was changed. Keep guarding before it runs. If the human wants it read-only, they remove its entry from the catalog {path} (the rewind CLI does that) and then mark it read-only"
    )]
    RecordedMutating {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
        /// The catalog file.
        path: PathBuf,
    },
    /// A tool of [`ALWAYS_ASK`] cannot be given an entry.
    #[error(
        "{server}/{tool} is never classified: it rewinds a VM, so every call is a question for a person, whatever the catalog says; nothing was changed"
    )]
    AlwaysAsks {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
    },
    /// A built-in entry cannot be removed.
    #[error(
        "{server}/{tool} is a built-in read-only tool and cannot be removed; add it as mutating to override it"
    )]
    BuiltIn {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
    },
}

/// What is wrong with a catalog entry's field ([`CatalogError::Invalid`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidEntry {
    /// The name is empty (or only blanks).
    #[error("it is empty")]
    Empty,
    /// The name holds a control character or is longer than 200 characters.
    #[error("it contains a control character or is longer than 200 characters")]
    ControlCharacterOrTooLong,
    /// The entry cannot be written as TOML.
    #[error("{detail}")]
    Unencodable {
        /// What the encoder said.
        detail: String,
    },
}

impl CatalogError {
    /// The class of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            CatalogError::Corrupt { .. }
            | CatalogError::Invalid { .. }
            | CatalogError::BuiltIn { .. } => ErrorKind::Usage,
            CatalogError::AlwaysAsks { .. } => ErrorKind::Refused,
            CatalogError::RecordedMutating { .. } => ErrorKind::Refused,
            CatalogError::Read { .. } | CatalogError::Write { .. } | CatalogError::Busy(_) => {
                ErrorKind::Internal
            }
        }
    }
}
