//! What a team's replicas share beside the journal's records, kept where the journal is: values
//! written once (a recovery plan, the key of the digests of arguments) and logs of lines appended
//! under a lock (the held calls). On a file, a value is a file in a folder beside the journal, and
//! the held calls keep their own file; in a database, rows every replica reads.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::error::JournalError;
use super::postgres::PgStore;
use super::store::Store;

/// A value written once as `kind`/`name`, or the one already there; see [`Store`].
pub(super) fn keep_once(
    store: &Store,
    folder: &Path,
    kind: &str,
    name: &str,
    value: &str,
) -> Result<String, JournalError> {
    match store {
        Store::Postgres(db) => db.keep_once(kind, name, value),
        Store::File(_) => {
            let path = kept_path(folder, kind, name)?;
            let write = |source| JournalError::Write {
                path: path.clone(),
                source,
            };
            let dir = path.parent().unwrap_or(folder);
            crate::local_state::create_private_dir(dir).map_err(write)?;
            let mut options = std::fs::OpenOptions::new();
            options.create_new(true).write(true);
            match crate::local_state::open_private(&path, &mut options, true) {
                Ok(mut file) => {
                    std::io::Write::write_all(&mut file, value.as_bytes()).map_err(write)?;
                    Ok(value.to_owned())
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    std::fs::read_to_string(&path).map_err(|source| JournalError::Read {
                        path: path.clone(),
                        source,
                    })
                }
                Err(e) => Err(write(e)),
            }
        }
    }
}

/// The value kept as `kind`/`name`, if any.
pub(super) fn kept(
    store: &Store,
    folder: &Path,
    kind: &str,
    name: &str,
) -> Result<Option<String>, JournalError> {
    match store {
        Store::Postgres(db) => db.kept(kind, name),
        Store::File(_) => {
            let path = kept_path(folder, kind, name)?;
            match std::fs::read_to_string(&path) {
                Ok(text) => Ok(Some(text)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(source) => Err(JournalError::Read { path, source }),
            }
        }
    }
}

/// Where a value is kept beside a journal file: `<kind>/<name>` in its folder. A name is never a
/// path of its own.
fn kept_path(folder: &Path, kind: &str, name: &str) -> Result<PathBuf, JournalError> {
    let plain = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
            && !s.starts_with('.')
    };
    match plain(kind) && plain(name) {
        true => Ok(folder.join(kind).join(name)),
        false => Err(JournalError::Encode(format!(
            "{kind}/{name} is not a name a value is kept under"
        ))),
    }
}

/// A log of lines a team's replicas share in the journal's database (the held calls).
#[derive(Debug, Clone)]
pub struct SharedLog {
    pub(super) db: Arc<PgStore>,
    pub(super) log: String,
}

impl SharedLog {
    /// Where it is, in words: the log's name and the database.
    pub fn place(&self) -> String {
        format!("{} in PostgreSQL {}", self.log, self.db.place())
    }

    /// Its lines, in order.
    pub fn lines(&self) -> Result<Vec<String>, JournalError> {
        self.db.log_lines(&self.log)
    }

    /// Runs `work` on its lines with the log locked for every replica, and appends the lines
    /// `work` pushed, committed before this returns, when it succeeds; none when it fails.
    pub fn locked<T, E>(
        &self,
        work: impl FnOnce(Vec<String>, &mut Vec<String>) -> Result<T, E>,
    ) -> Result<Result<T, E>, JournalError> {
        self.db.with_log(&self.log, work)
    }
}
