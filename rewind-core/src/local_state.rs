//! The files rewind keeps on the machine it runs on (the tool catalog, the audit journal and the
//! change locks): private to their owner, and locked with a bounded wait.
//!
//! A journal another local user can write is a journal in which they can forge a `guarded` record,
//! and a lock file another user can open is one they can hold for ever. So every folder rewind
//! creates is 0700 and every file 0600, whatever the umask, and a file found wider is narrowed
//! again when rewind next writes it.
//!
//! `flock` waits for ever, and on an async runtime it would stop a worker thread while it waited.
//! [`lock`] polls a non-blocking lock instead, until a bounded wait ([`LOCK_WAIT`]) is up, and then
//! answers [`LockBusy`] naming the file. Callers on a runtime run it on a blocking thread.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a lock of the catalog or the journal is waited for. An honest holder keeps it for
/// milliseconds (one read, or one write and its sync).
pub const LOCK_WAIT: Duration = Duration::from_secs(5);

/// A lock that another process held for longer than rewind waits.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "the lock on {path} was held by another process for more than {waited_secs} s; if no other rewind is running, find the process that holds it (`fuser {path}` names it) and stop it, then try again"
)]
pub struct LockBusy {
    /// The locked file.
    pub path: PathBuf,
    /// How long rewind waited, in seconds.
    pub waited_secs: u64,
}

/// Why a private file could not be opened or locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Opening or locking failed.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The lock was held for too long.
    #[error(transparent)]
    Busy(#[from] LockBusy),
}

/// Whether a lock is taken shared (readers) or exclusive (writers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockMode {
    /// Many holders at once.
    Shared,
    /// One holder.
    Exclusive,
}

/// Creates `dir` and any missing parent with mode 0700, whatever the umask. Folders that already
/// exist are left as they are: one may be the user's own (`/tmp`, a home folder).
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    if dir.as_os_str().is_empty() || dir.is_dir() {
        return Ok(());
    }
    let mut missing = Vec::new();
    let mut at = Some(dir);
    while let Some(d) = at.filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
        missing.push(d.to_path_buf());
        at = d.parent();
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)?;
    // The umask can only take bits away, but a umask such as 0777 takes the owner's too.
    for d in missing {
        set_mode(&d, 0o700)?;
    }
    Ok(())
}

/// Opens `path` with `options`. For `writing`, a missing file (and folder) is created 0600 (0700),
/// and a file found readable or writable by others is narrowed to 0600.
pub fn open_private(path: &Path, options: &mut OpenOptions, writing: bool) -> io::Result<File> {
    if writing && let Some(dir) = path.parent() {
        create_private_dir(dir)?;
    }
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(options, 0o600);
    let file = options.open(path)?;
    #[cfg(unix)]
    if writing {
        use std::os::unix::fs::PermissionsExt;
        let mode = file.metadata()?.permissions().mode();
        if mode & 0o077 != 0 {
            // Only the owner may change the mode; a file of another user stays as it is, and the
            // write that follows says what it can.
            let _ = file.set_permissions(std::fs::Permissions::from_mode(mode & 0o700));
        }
    }
    #[cfg(not(unix))]
    let _ = writing;
    Ok(file)
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _mode: u32) -> io::Result<()> {
    Ok(())
}

/// Locks `file` (whose path is `path`, for the error) in `mode`, waiting at most `wait`: polled
/// without blocking, with the pause between tries growing from 1 ms to 5 ms (a holder keeps it for
/// a write and a sync, so a longer pause would be most of the wait). This blocks the
/// calling thread; on an async runtime call it from a blocking thread.
pub fn lock(file: &File, path: &Path, mode: LockMode, wait: Duration) -> Result<(), LockError> {
    let started = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        let tried = match mode {
            LockMode::Shared => file.try_lock_shared(),
            LockMode::Exclusive => file.try_lock(),
        };
        match tried {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::Error(e)) => return Err(e.into()),
            Err(std::fs::TryLockError::WouldBlock) => {}
        }
        if started.elapsed() >= wait {
            return Err(LockBusy {
                path: path.to_path_buf(),
                waited_secs: wait.as_secs().max(1),
            }
            .into());
        }
        std::thread::sleep(pause.min(wait.saturating_sub(started.elapsed())));
        pause = (pause * 2).min(Duration::from_millis(5));
    }
}

/// Runs blocking file work (a lock, a read, a write and its sync) on tokio's blocking threads, so
/// that no runtime worker waits on a file. Outside a runtime it runs in place.
pub async fn off_runtime<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => match handle.spawn_blocking(work).await {
            Ok(value) => value,
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        },
        Err(_) => work(),
    }
}

/// Turns the signal a file-size limit sends (SIGXFSZ, `ulimit -f`) from a kill into a failed write,
/// which the journal handles (a partial record is cut back off, and a guard says it is not
/// journaled) instead of the process dying with its inserts sent. Call it on a runtime, and keep
/// what it returns for as long as files are written; `None` when the handler cannot be installed.
#[cfg(unix)]
pub fn catch_file_size_limit() -> Option<tokio::signal::unix::Signal> {
    let kind = tokio::signal::unix::SignalKind::from_raw(libc::SIGXFSZ);
    tokio::signal::unix::signal(kind).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    fn mode_of(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[cfg(unix)]
    #[test]
    fn created_folders_are_0700_and_files_0600_and_a_wide_file_is_narrowed_on_write() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a").join("b").join("journal.jsonl");
        open_private(&file, OpenOptions::new().create(true).append(true), true).unwrap();
        assert_eq!(mode_of(&dir.path().join("a")), 0o700);
        assert_eq!(mode_of(&dir.path().join("a").join("b")), 0o700);
        assert_eq!(mode_of(&file), 0o600);
        set_mode(&file, 0o666).unwrap();
        open_private(&file, OpenOptions::new().read(true), false).unwrap();
        assert_eq!(mode_of(&file), 0o666, "a read leaves the mode alone");
        open_private(&file, OpenOptions::new().append(true), true).unwrap();
        assert_eq!(mode_of(&file), 0o600);
        // An existing folder is not ours to change.
        set_mode(dir.path(), 0o755).unwrap();
        create_private_dir(dir.path()).unwrap();
        assert_eq!(mode_of(dir.path()), 0o755);
    }

    #[test]
    fn a_lock_held_elsewhere_is_waited_for_a_bounded_time_then_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("catalog.toml.lock");
        let holder = File::create(&path).unwrap();
        holder.lock().unwrap();
        let other = File::open(&path).unwrap();
        let err = lock(&other, &path, LockMode::Shared, Duration::from_millis(30)).unwrap_err();
        assert!(matches!(err, LockError::Busy(_)), "{err}");
        assert!(err.to_string().contains("catalog.toml.lock"), "{err}");
        holder.unlock().unwrap();
        lock(
            &other,
            &path,
            LockMode::Exclusive,
            Duration::from_millis(30),
        )
        .unwrap();
    }
}
