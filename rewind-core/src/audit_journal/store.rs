//! The seam between the journal's facade and where its lines are kept: a file beside this machine's
//! state (its indexes and writer thread inside it), or a PostgreSQL database that a team server's
//! replicas share. The facade folds, filters and judges; a store appends lines, selects them by
//! time, change and VM, tells which change locks are held, and takes them.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};

use super::change_lock::{self, ChangeLock, ChangeLockError, LocksNow};
use super::changes::{ChangeIndex, ChangeUse};
use super::error::JournalError;
use super::file::{self, Wanted};
use super::postgres::{Lease, PgStore, Row, Standing};
use super::recent::RecentLines;
use super::record::{JournalRecord, JournalVm};
use super::view::GuardsView;
use super::{vms, writer};

/// Where the journal's lines are kept.
#[derive(Debug, Clone)]
pub(super) enum Store {
    File(Arc<FileStore>),
    Postgres(Arc<PgStore>),
}

/// The file, and this process's writer and indexes of it.
#[derive(Debug)]
pub(super) struct FileStore {
    pub(super) path: PathBuf,
    /// This process's appends, written and synced in groups by one thread.
    writer: writer::Writer,
    /// This process's index of the journal's recent lines, by change.
    recent: Arc<Mutex<RecentLines>>,
    /// This process's copy of the change index's recent lines.
    changes: Mutex<ChangeIndex>,
}

impl FileStore {
    pub(super) fn new(path: PathBuf) -> FileStore {
        let recent: Arc<Mutex<RecentLines>> = Default::default();
        FileStore {
            writer: writer::Writer::new(path.clone(), recent.clone()),
            path,
            recent,
            changes: Default::default(),
        }
    }

    /// The folder of the change locks, beside the journal.
    pub(super) fn locks_dir(&self) -> PathBuf {
        self.path
            .parent()
            .unwrap_or(Path::new("."))
            .join(change_lock::LOCKS_DIR)
    }
}

/// A change lock held, let go when dropped: a lock beside the file, or a lease in the database.
#[derive(Debug)]
pub struct ChangeHold {
    held: Held,
}

#[derive(Debug)]
enum Held {
    File(#[allow(dead_code)] ChangeLock),
    Lease(Lease),
    /// A role on a journal file, which one process serves: nobody else can take it.
    Alone,
}

impl ChangeHold {
    /// Whether this process may still act under the lock: a file lock is held until dropped; a
    /// lease, until its holder could not renew it in time (see the PostgreSQL store's leases).
    pub fn holds(&self) -> bool {
        match &self.held {
            Held::File(_) | Held::Alone => true,
            Held::Lease(lease) => lease.standing().holds(),
        }
    }

    /// What [`ChangeHold::holds`] reads, to be asked again later without the hold itself.
    pub fn fence(&self) -> Fence {
        Fence(match &self.held {
            Held::File(_) | Held::Alone => None,
            Held::Lease(lease) => Some(lease.standing()),
        })
    }
}

/// Whether a change lock is still held, asked where the hold itself is not at hand (before each
/// insert of a guard).
#[derive(Debug, Clone, Default)]
pub struct Fence(Option<Arc<Standing>>);

impl Fence {
    /// Whether the lock is still this process's to act under.
    pub fn holds(&self) -> bool {
        self.0.as_ref().is_none_or(|s| s.holds())
    }
}

impl Store {
    /// Where the journal is, in words: the file's path, or the database's host and name.
    pub(super) fn place(&self) -> String {
        match self {
            Store::File(f) => f.path.display().to_string(),
            Store::Postgres(db) => format!("PostgreSQL {}", db.place()),
        }
    }

    pub(super) fn append(&self, record: &JournalRecord, sync: bool) -> Result<(), JournalError> {
        match self {
            Store::File(f) => f.writer.append(writer::Line::of(record, sync)?),
            Store::Postgres(db) => db.append(Row::of(record)?),
        }
    }

    pub(super) async fn append_async(
        &self,
        record: &JournalRecord,
        sync: bool,
    ) -> Result<(), JournalError> {
        match self {
            Store::File(f) => f.writer.append_async(writer::Line::of(record, sync)?).await,
            // Boxed: the database's future would make every guard's future larger.
            Store::Postgres(db) => Box::pin(db.append_async(Row::of(record)?)).await,
        }
    }

    /// Appends `line`, the JSON of `record` as another journal wrote it, as it is.
    pub(super) fn append_line(
        &self,
        record: &JournalRecord,
        line: String,
    ) -> Result<(), JournalError> {
        match self {
            Store::File(f) => f.writer.append(writer::Line::as_written(record, line)),
            Store::Postgres(db) => db.append(Row::of(record)?.with_line(line)),
        }
    }

    /// Every record `wanted` takes, in the order written, and how many lines could not be read;
    /// `None` when there is no journal yet.
    pub(super) fn records(
        &self,
        wanted: &Wanted,
    ) -> Result<Option<(Vec<JournalRecord>, usize)>, JournalError> {
        match self {
            Store::File(f) => file::read_records_of(&f.path, wanted),
            Store::Postgres(db) => {
                // The file is read from a little before `since` on, for lines out of time order.
                let from = wanted
                    .since
                    .map(|s| s.checked_sub_signed(file::ORDER_SLACK).unwrap_or(s));
                Ok(Some(parsed(db.lines_since(from)?, wanted)))
            }
        }
    }

    /// The records written since `since` (with some a little older), read from the end back.
    pub(super) fn recent(&self, since: DateTime<Utc>) -> Result<Vec<JournalRecord>, JournalError> {
        match self {
            Store::File(f) => Ok(file::records_since(&f.path, since)?.unwrap_or_default()),
            Store::Postgres(db) => Ok(parsed(db.lines_since(Some(since))?, &Wanted::default()).0),
        }
    }

    /// The records of `change_id` written since `since` (a file may give some of other changes or
    /// older; the facade filters), `None` when there is no journal.
    pub(super) fn of_change(
        &self,
        change_id: &str,
        since: DateTime<Utc>,
    ) -> Result<Option<Vec<JournalRecord>>, JournalError> {
        match self {
            Store::File(f) => f
                .recent
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .of_change(&f.path, change_id, since),
            Store::Postgres(db) => {
                let lines = db.lines_of_change(change_id, since)?;
                Ok(Some(parsed(lines, &Wanted::default()).0))
            }
        }
    }

    /// [`Store::of_change`] without holding the caller's thread while a database answers.
    pub(super) async fn of_change_off_runtime(
        &self,
        change_id: &str,
        since: DateTime<Utc>,
    ) -> Result<Option<Vec<JournalRecord>>, JournalError> {
        match self {
            Store::File(_) => self.of_change(change_id, since),
            Store::Postgres(db) => {
                let lines = db.lines_of_change_async(change_id, since).await?;
                Ok(Some(parsed(lines, &Wanted::default()).0))
            }
        }
    }

    /// [`Store::change_uses`] without holding the caller's thread while a database answers.
    pub(super) async fn change_uses_off_runtime(
        &self,
        change_id: &str,
        since: DateTime<Utc>,
    ) -> Result<Vec<ChangeUse>, JournalError> {
        match self {
            Store::File(_) => self.change_uses(change_id, since),
            Store::Postgres(db) => Ok(uses(db.lines_of_change_async(change_id, since).await?)),
        }
    }

    /// [`Store::locks_now`] without holding the caller's thread while a database answers.
    pub(super) async fn locks_now_off_runtime(&self) -> LocksNow {
        match self {
            Store::File(_) => self.locks_now(),
            Store::Postgres(db) => match db.live_leases_async().await {
                Ok(names) => LocksNow::Leases(names.into_iter().collect()),
                Err(_) => LocksNow::Unknown,
            },
        }
    }

    /// Every use of `change_id` since `since`, oldest first.
    pub(super) fn change_uses(
        &self,
        change_id: &str,
        since: DateTime<Utc>,
    ) -> Result<Vec<ChangeUse>, JournalError> {
        match self {
            Store::File(f) => f
                .changes
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .uses_of(&f.path, change_id, since),
            Store::Postgres(db) => Ok(uses(db.lines_of_change(change_id, since)?)),
        }
    }

    /// Each way the journal named a VM that `wanted` takes, with when, oldest first.
    pub(super) fn namings(
        &self,
        wanted: &Wanted,
    ) -> Result<Vec<(DateTime<Utc>, JournalVm)>, JournalError> {
        match self {
            Store::File(f) => Ok(vms::namings(&f.path, wanted)?
                .into_iter()
                .map(|n| (n.time, n.vm))
                .collect()),
            Store::Postgres(db) => Ok(db
                .namings()?
                .into_iter()
                .filter(|(_, vm)| wanted.takes(vm.as_bytes()))
                .filter_map(|(at, vm)| Some((at, serde_json::from_str(&vm).ok()?)))
                .collect()),
        }
    }

    /// Which change locks are held now, for telling a running attempt from an interrupted one.
    pub(super) fn locks_now(&self) -> LocksNow {
        match self {
            Store::File(f) => LocksNow::Dir(f.locks_dir()),
            Store::Postgres(db) => match db.live_leases() {
                Ok(names) => LocksNow::Leases(names.into_iter().collect()),
                // Not known: none is called interrupted.
                Err(_) => LocksNow::Unknown,
            },
        }
    }

    /// Brings `view` up to what the journal holds now.
    pub(super) fn refresh_view(&self, view: &mut GuardsView) -> Result<(), JournalError> {
        match self {
            Store::File(f) => view.refresh(&f.path),
            Store::Postgres(db) => {
                let lines = db.lines_after(view.read_to() as i64)?;
                view.took_rows(lines);
                Ok(())
            }
        }
    }

    /// Takes the lock of `vm_id` (none: of the change id alone) and `change_id`, waiting until
    /// `deadline` while another guard holds it.
    pub(super) async fn lock(
        &self,
        vm_id: Option<&str>,
        change_id: &str,
        deadline: std::time::Instant,
    ) -> Result<ChangeHold, ChangeLockError> {
        let held = match self {
            Store::File(f) => Held::File(match vm_id {
                Some(vm) => ChangeLock::acquire(&f.locks_dir(), vm, change_id, deadline).await?,
                None => ChangeLock::acquire_change_id(&f.locks_dir(), change_id, deadline).await?,
            }),
            Store::Postgres(db) => {
                let name = change_lock::lease_name(vm_id.unwrap_or_default(), change_id);
                Held::Lease(leased(db, &name, deadline).await?)
            }
        };
        Ok(ChangeHold { held })
    }

    /// Takes the lease of VPG `vpg_id` in the database; `None` on a file.
    pub(super) async fn lock_vpg(
        &self,
        vpg_id: &str,
        deadline: std::time::Instant,
    ) -> Result<Option<ChangeHold>, ChangeLockError> {
        let Store::Postgres(db) = self else {
            return Ok(None);
        };
        let name = format!("vpg:{}", vpg_id.to_lowercase());
        let lease = leased(db, &name, deadline).await?;
        Ok(Some(ChangeHold {
            held: Held::Lease(lease),
        }))
    }

    /// The lease of `role` when no other replica holds it now; on a file, the role at once.
    pub(super) async fn lead(&self, role: &str) -> Result<Option<ChangeHold>, ChangeLockError> {
        let Store::Postgres(db) = self else {
            return Ok(Some(ChangeHold { held: Held::Alone }));
        };
        let name = format!("role:{role}");
        match leased(db, &name, std::time::Instant::now()).await {
            Ok(lease) => Ok(Some(ChangeHold {
                held: Held::Lease(lease),
            })),
            Err(ChangeLockError::Busy { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Appends `intent` unless `conflict` finds another's use of its change id since `since`, with
    /// no other guard of that id able to check between (see the facade's `append_intent`).
    pub(super) async fn append_intent<C>(
        &self,
        intent: &JournalRecord,
        since: DateTime<Utc>,
        deadline: std::time::Instant,
        conflict: C,
    ) -> Result<Option<ChangeUse>, IntentError>
    where
        C: FnOnce(&[ChangeUse]) -> Option<ChangeUse> + Send + 'static,
    {
        match self {
            Store::File(_) => {
                let claim = self.lock(None, &intent.change_id, deadline).await?;
                let uses = self.change_uses(intent.change_id.trim(), since)?;
                if let Some(other) = conflict(&uses) {
                    return Ok(Some(other));
                }
                self.append_async(intent, true).await?;
                drop(claim);
                Ok(None)
            }
            Store::Postgres(db) => {
                Ok(Box::pin(db.append_intent(Row::of(intent)?, since, uses, conflict)).await?)
            }
        }
    }
}

/// The lease `name` of `db`, taken before `deadline`.
async fn leased(
    db: &Arc<PgStore>,
    name: &str,
    deadline: std::time::Instant,
) -> Result<Lease, ChangeLockError> {
    let lock = || format!("the lease {name} in PostgreSQL {}", db.place());
    // Boxed: the database's future would make every guard's future larger.
    let taken = Box::pin(db.lease(name, deadline))
        .await
        .map_err(|e| ChangeLockError::Io {
            lock: lock(),
            source: std::io::Error::other(e.to_string()),
        })?;
    taken.ok_or_else(|| ChangeLockError::Busy { lock: lock() })
}

/// Why an intent was not written.
#[derive(Debug, thiserror::Error)]
pub enum IntentError {
    /// The change id's lock could not be taken.
    #[error(transparent)]
    Lock(#[from] ChangeLockError),
    /// The journal could not be read or written.
    #[error(transparent)]
    Journal(#[from] JournalError),
}

/// The records of `lines` that `wanted` takes, and how many could not be read.
fn parsed(lines: Vec<String>, wanted: &Wanted) -> (Vec<JournalRecord>, usize) {
    let mut skipped = 0;
    let records = lines
        .into_iter()
        .filter(|line| wanted.takes(line.as_bytes()))
        .filter_map(|line| match serde_json::from_str::<JournalRecord>(&line) {
            Ok(r) => Some(r),
            Err(_) => {
                skipped += 1;
                None
            }
        })
        .collect();
    (records, skipped)
}

/// The uses of a change id that `lines` (of that id) record.
fn uses(lines: Vec<String>) -> Vec<ChangeUse> {
    parsed(lines, &Wanted::default())
        .0
        .iter()
        .filter_map(|r| ChangeUse::of(r, 0))
        .collect()
}
