//! The change lock: one guard of a VM and change at a time on this machine.
//!
//! A guard holds the lock of its VM and change from before it reads the journal for an earlier
//! attempt until its verdict is written. A second guard of the same VM and change (a second
//! terminal, a retried MCP call, the same command run again after a `kill -9`) waits for it, then
//! finds the first one's record and adopts what it inserted, instead of inserting the same tag again.
//! The lock is an `flock` on a file of the journal's `locks/` folder, so the kernel lets go of it
//! when its process dies, however it dies; that is also how a reader of the journal tells a guard
//! that is still running from one that was interrupted ([`is_held`]).
//!
//! The holder removes its file as it lets go, so the folder keeps no file per change for ever. A
//! waiter that had opened the old file then locks a file that no longer has a name: it checks that
//! the path still names the file it locked, and starts over when it does not.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use crate::local_state::open_private;

/// The folder of the change locks, beside the journal.
pub const LOCKS_DIR: &str = "locks";

/// Why a change lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum ChangeLockError {
    /// The deadline came while another guard of the same VM and change held the lock.
    #[error("another guard of this VM and change on this machine held {path} until the deadline")]
    Busy {
        /// The lock file.
        path: PathBuf,
    },
    /// The lock file could not be opened or locked.
    #[error("cannot open or lock {path}: {source}")]
    Io {
        /// The lock file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// The lock of one VM and change, held until dropped.
#[derive(Debug)]
pub struct ChangeLock {
    file: File,
    path: PathBuf,
}

/// The lock file of the VM `vm_id` and `change_id` in `locks_dir`: named by a digest, since a VM
/// identifier and a change id may hold any character.
pub fn lock_path(locks_dir: &Path, vm_id: &str, change_id: &str) -> PathBuf {
    let mut digest = Sha256::new();
    digest.update(vm_id.to_lowercase().as_bytes());
    digest.update([0]);
    digest.update(change_id.trim().as_bytes());
    let name = hex::encode(&digest.finalize()[..16]);
    locks_dir.join(format!("{name}.lock"))
}

/// Whether a process holds the lock of `vm_id` and `change_id` now. A lock that cannot be tested
/// (a folder that cannot be read) counts as held: a reader must not call a guard interrupted that
/// may still be running.
pub fn is_held(locks_dir: &Path, vm_id: &str, change_id: &str) -> bool {
    let path = lock_path(locks_dir, vm_id, change_id);
    let file = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return false,
        Err(_) => return true,
    };
    match file.try_lock_shared() {
        Ok(()) => {
            let _ = file.unlock();
            false
        }
        Err(_) => true,
    }
}

/// What one try to take the lock found.
enum Try {
    Taken(ChangeLock),
    /// Another process holds it.
    Held,
    /// The file locked had lost its name to a holder letting go: try again at once.
    Renamed,
}

impl ChangeLock {
    /// Takes the lock of `vm_id` and `change_id`, waiting until `deadline` while another guard holds
    /// it. Every try is non-blocking, so the wait never stops a runtime worker.
    pub async fn acquire(
        locks_dir: &Path,
        vm_id: &str,
        change_id: &str,
        deadline: Instant,
    ) -> Result<ChangeLock, ChangeLockError> {
        let path = lock_path(locks_dir, vm_id, change_id);
        let mut pause = Duration::from_millis(5);
        loop {
            match try_take(&path)? {
                Try::Taken(lock) => return Ok(lock),
                Try::Renamed => continue,
                Try::Held => {}
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(ChangeLockError::Busy { path });
            }
            // Jittered, so that guards waiting for the same lock do not all try at once.
            let jittered = pause.mul_f64(0.5 + rand::random::<f64>());
            tokio::time::sleep(jittered.min(left)).await;
            pause = (pause * 2).min(Duration::from_millis(100));
        }
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn try_take(path: &Path) -> Result<Try, ChangeLockError> {
    let io = |source| ChangeLockError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut options = OpenOptions::new();
    options.create(true).truncate(false).write(true);
    let file = open_private(path, &mut options, true).map_err(io)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => return Ok(Try::Held),
        Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
    }
    if !still_named(&file, path) {
        return Ok(Try::Renamed);
    }
    Ok(Try::Taken(ChangeLock {
        file,
        path: path.to_path_buf(),
    }))
}

/// Whether `path` still names `file`.
#[cfg(unix)]
fn still_named(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn still_named(_file: &File, path: &Path) -> bool {
    path.exists()
}

impl Drop for ChangeLock {
    fn drop(&mut self) {
        // Removed while still held, so no other process can have locked this file in between; a
        // waiter that opened it before sees it lost its name and starts over.
        let _ = std::fs::remove_file(&self.path);
        let _ = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_second_guard_of_the_same_change_waits_and_a_reader_sees_the_first_running() {
        let dir = tempfile::tempdir().unwrap();
        let soon = || Instant::now() + Duration::from_millis(60);
        let first = ChangeLock::acquire(dir.path(), "S.vm-1", "c1", soon())
            .await
            .unwrap();
        assert!(is_held(dir.path(), "s.vm-1", "c1"));
        assert!(!is_held(dir.path(), "s.vm-1", "c2"));
        let busy = ChangeLock::acquire(dir.path(), "s.vm-1", "c1", soon()).await;
        assert!(
            matches!(busy, Err(ChangeLockError::Busy { .. })),
            "{busy:?}"
        );
        // Another change of the same VM is not held up.
        let other = ChangeLock::acquire(dir.path(), "s.vm-1", "c2", soon()).await;
        assert!(other.is_ok());
        drop(first);
        assert!(!is_held(dir.path(), "s.vm-1", "c1"));
        assert!(
            !lock_path(dir.path(), "s.vm-1", "c1").exists(),
            "let go, the lock leaves no file behind"
        );
        let again = ChangeLock::acquire(dir.path(), "s.vm-1", "c1", soon()).await;
        assert!(again.is_ok());
    }

    #[tokio::test]
    async fn a_waiter_takes_the_lock_when_the_holder_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let first = ChangeLock::acquire(dir.path(), "vm", "c", Instant::now())
            .await
            .unwrap();
        let path = dir.path().to_path_buf();
        let waiter = tokio::spawn(async move {
            ChangeLock::acquire(&path, "vm", "c", Instant::now() + Duration::from_secs(5)).await
        });
        tokio::time::sleep(Duration::from_millis(30)).await;
        assert!(
            !waiter.is_finished(),
            "the waiter waits while the lock is held"
        );
        drop(first);
        let second = waiter.await.unwrap().unwrap();
        assert!(is_held(dir.path(), "vm", "c"));
        assert!(second.path().exists());
    }
}
