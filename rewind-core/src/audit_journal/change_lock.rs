//! The change lock: one guard of a VM and change at a time on this machine.
//!
//! A guard holds the lock of its VM and change from before it reads the journal for an earlier
//! attempt until its verdict is written. A second guard of the same VM and change (a second
//! terminal, a retried MCP call, the same command run again after a `kill -9`) waits for it, then
//! finds the first one's record and adopts what it inserted, instead of inserting the same tag again.
//! The kernel lets go of the lock when its holder's file is closed or its process dies, however it
//! dies; that is also how a reader of the journal tells a guard that is still running from one that
//! was interrupted ([`is_held`]).
//!
//! On Linux the lock is an open file description lock (`F_OFD_SETLK`) on one byte of one file,
//! `locks/changes.lock`, at an offset named by a digest of the VM and change, so no file is made per
//! guard: with 256 guards at once, creating and removing a file each cost the machine an eighth of
//! its CPU (ext4's inode allocation, under the folder's lock), more than the rest of their journal
//! work. Elsewhere it is an `flock` on a file per VM and change, which the holder removes
//! as it lets go; a waiter that had opened that file checks that its path still names it.

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
    #[error("another guard of this VM and change held {lock} until the deadline")]
    Busy {
        /// The lock: its file, or its lease and database.
        lock: String,
    },
    /// The lock could not be made or taken.
    #[error("cannot take {lock}: {source}")]
    Io {
        /// The lock: its file, or its lease and database.
        lock: String,
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

/// A VM and change, as the lock knows them: a digest, since a VM identifier and a change id may hold
/// any character.
type Key = [u8; 16];

fn key(vm_id: &str, change_id: &str) -> Key {
    let mut digest = Sha256::new();
    digest.update(vm_id.to_lowercase().as_bytes());
    digest.update([0]);
    digest.update(change_id.trim().as_bytes());
    let mut key = Key::default();
    key.copy_from_slice(&digest.finalize()[..16]);
    key
}

/// The file that holds the lock of the VM `vm_id` and `change_id` in `locks_dir`.
pub fn lock_path(locks_dir: &Path, vm_id: &str, change_id: &str) -> PathBuf {
    slot::path(locks_dir, &key(vm_id, change_id))
}

/// Whether a process holds the lock of `vm_id` and `change_id` now. A lock that cannot be tested
/// (a folder that cannot be read) counts as held: a reader must not call a guard interrupted that
/// may still be running.
pub fn is_held(locks_dir: &Path, vm_id: &str, change_id: &str) -> bool {
    let key = key(vm_id, change_id);
    let file = match File::open(slot::path(locks_dir, &key)) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return false,
        Err(_) => return true,
    };
    slot::held(&file, &key).unwrap_or(true)
}

/// The lease that stands for the lock of `vm_id` and `change_id` in a journal kept in PostgreSQL
/// (`vm_id` empty: of the change id alone).
pub(super) fn lease_name(vm_id: &str, change_id: &str) -> String {
    format!("change:{}", hex::encode(key(vm_id, change_id)))
}

/// Which change locks are held now, as a reader of the journal finds them.
#[derive(Debug)]
pub(super) enum LocksNow {
    /// The locks beside a journal file, tested one by one.
    Dir(PathBuf),
    /// The names of the leases held in the journal's database.
    Leases(std::collections::HashSet<String>),
    /// They could not be read: every one counts as held.
    Unknown,
}

impl LocksNow {
    /// Whether a process holds the lock of `vm_id` and `change_id`.
    pub(super) fn held(&self, vm_id: &str, change_id: &str) -> bool {
        match self {
            LocksNow::Dir(dir) => is_held(dir, vm_id, change_id),
            LocksNow::Leases(names) => names.contains(&lease_name(vm_id, change_id)),
            LocksNow::Unknown => true,
        }
    }
}

/// What one try to take the lock found.
enum Try {
    Taken(ChangeLock),
    /// Another guard holds it.
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
        let key = key(vm_id, change_id);
        let path = slot::path(locks_dir, &key);
        let mut pause = Duration::from_millis(5);
        loop {
            match try_take(&path, &key)? {
                Try::Taken(lock) => return Ok(lock),
                Try::Renamed => continue,
                Try::Held => {}
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(ChangeLockError::Busy {
                    lock: path.display().to_string(),
                });
            }
            // Jittered, so that guards waiting for the same lock do not all try at once.
            let jittered = pause.mul_f64(0.5 + rand::random::<f64>());
            tokio::time::sleep(jittered.min(left)).await;
            pause = (pause * 2).min(Duration::from_millis(100));
        }
    }

    /// Takes the lock of `change_id` itself, whatever the VM, waiting until `deadline`: a guard
    /// holds it while it checks that the id is its change's and writes its intent, so that two
    /// guards of one id (two agents, on one VM or two, in two processes) cannot both pass the check
    /// before either intent is written. Held for a read of the change index and one append.
    pub async fn acquire_change_id(
        locks_dir: &Path,
        change_id: &str,
        deadline: Instant,
    ) -> Result<ChangeLock, ChangeLockError> {
        // No VM identifier is empty: the slot of the id alone is no VM's.
        ChangeLock::acquire(locks_dir, "", change_id, deadline).await
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn try_take(path: &Path, key: &Key) -> Result<Try, ChangeLockError> {
    let io = |source| ChangeLockError::Io {
        lock: path.display().to_string(),
        source,
    };
    // The lock file is made once (0600, in a 0700 folder); after that, an open is all it costs.
    let file = match OpenOptions::new().write(true).open(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut options = OpenOptions::new();
            options.create(true).truncate(false).write(true);
            open_private(path, &mut options, true)
        }
        opened => opened,
    }
    .map_err(io)?;
    if !slot::try_lock(&file, key).map_err(io)? {
        return Ok(Try::Held);
    }
    if !slot::still_named(&file, path) {
        return Ok(Try::Renamed);
    }
    Ok(Try::Taken(ChangeLock {
        file,
        path: path.to_path_buf(),
    }))
}

impl Drop for ChangeLock {
    fn drop(&mut self) {
        slot::let_go(&self.file, &self.path);
    }
}

/// One byte of one file per VM and change, locked by open file description.
#[cfg(any(target_os = "linux", target_os = "android"))]
mod slot {
    use std::fs::File;
    use std::path::{Path, PathBuf};

    use nix::errno::Errno;
    use nix::fcntl::{FcntlArg, fcntl};

    use super::Key;

    pub(super) fn path(locks_dir: &Path, _key: &Key) -> PathBuf {
        locks_dir.join("changes.lock")
    }

    /// The one byte of `key`, as a lock request of `kind`. Its offset is the key's first eight bytes
    /// within what `off_t` holds: a collision of two changes is one in 2^62 on a 64-bit machine.
    fn byte(key: &Key, kind: libc::c_int) -> libc::flock {
        let mut first = [0u8; 8];
        first.copy_from_slice(&key[..8]);
        let offset = u64::from_be_bytes(first) % (libc::off_t::MAX as u64);
        libc::flock {
            l_type: kind as libc::c_short,
            l_whence: libc::SEEK_SET as libc::c_short,
            l_start: offset as libc::off_t,
            l_len: 1,
            l_pid: 0,
        }
    }

    /// Locks the byte of `key` through `file`'s own open file description: `false` when another
    /// description (another guard, of this process or another) holds it.
    pub(super) fn try_lock(file: &File, key: &Key) -> std::io::Result<bool> {
        match fcntl(file, FcntlArg::F_OFD_SETLK(&byte(key, libc::F_WRLCK))) {
            Ok(_) => Ok(true),
            Err(Errno::EAGAIN | Errno::EACCES) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Whether a description other than `file`'s holds the byte of `key`.
    pub(super) fn held(file: &File, key: &Key) -> std::io::Result<bool> {
        let mut probe = byte(key, libc::F_WRLCK);
        fcntl(file, FcntlArg::F_OFD_GETLK(&mut probe))?;
        Ok(probe.l_type != libc::F_UNLCK as libc::c_short)
    }

    /// The one file is never removed, so it always names what was locked.
    pub(super) fn still_named(_file: &File, _path: &Path) -> bool {
        true
    }

    /// Closing the file lets go of its lock.
    pub(super) fn let_go(_file: &File, _path: &Path) {}
}

/// A file per VM and change, locked by `flock`, and removed as it is let go so that the folder
/// keeps no file per change for ever.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
mod slot {
    use std::fs::File;
    use std::path::{Path, PathBuf};

    use super::Key;

    pub(super) fn path(locks_dir: &Path, key: &Key) -> PathBuf {
        locks_dir.join(format!("{}.lock", hex::encode(key)))
    }

    pub(super) fn try_lock(file: &File, _key: &Key) -> std::io::Result<bool> {
        match file.try_lock() {
            Ok(()) => Ok(true),
            Err(std::fs::TryLockError::WouldBlock) => Ok(false),
            Err(std::fs::TryLockError::Error(e)) => Err(e),
        }
    }

    pub(super) fn held(file: &File, _key: &Key) -> std::io::Result<bool> {
        match file.try_lock_shared() {
            Ok(()) => {
                let _ = file.unlock();
                Ok(false)
            }
            Err(std::fs::TryLockError::WouldBlock) => Ok(true),
            Err(std::fs::TryLockError::Error(e)) => Err(e),
        }
    }

    /// Whether `path` still names `file`: a holder letting go removes it.
    #[cfg(unix)]
    pub(super) fn still_named(file: &File, path: &Path) -> bool {
        use std::os::unix::fs::MetadataExt;
        match (file.metadata(), std::fs::metadata(path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }

    #[cfg(not(unix))]
    pub(super) fn still_named(_file: &File, path: &Path) -> bool {
        path.exists()
    }

    /// Removed while still held, so no other process can have locked this file in between; a
    /// waiter that opened it before sees it lost its name and starts over.
    pub(super) fn let_go(file: &File, path: &Path) {
        let _ = std::fs::remove_file(path);
        let _ = file.unlock();
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
            std::fs::read_dir(dir.path()).unwrap().count() <= 1,
            "the locks of two changes leave at most one file behind"
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
