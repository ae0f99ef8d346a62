//! The audit journal: an append-only JSON-lines file in the XDG state dir, one record per guard and
//! one per recovery.
//!
//! A guard writes three kinds of line, tied by its attempt id ([`Attempt`]): its **intent** (the tag
//! and the VPGs it is about to insert into) before the first insert is sent, one line per insert
//! task as its id is learnt, and its **verdict**. So a guard killed at any point leaves a record of
//! what it may have sent; [`AuditJournal::read`] folds the lines of one attempt into one record, and shows
//! an attempt with no verdict as `running` while its process still holds the change lock
//! ([`change_lock`]) and `interrupted` once it does not. The next guard of that VM and change reads
//! it ([`AuditJournal::earlier_attempt_off_runtime`]) and adopts what it inserted.
//!
//! A record is whole or absent ([`file`]): each is one write of whole lines at the end, under an
//! exclusive lock, after a torn last line (a crash on a full disk) has been fenced off with a
//! newline; a write that fails is cut back off. An intent is synced to disk before the first insert
//! and a verdict before the guard reports (which syncs the task lines between them too). Readers
//! take a shared lock; a line that still cannot be read is counted and skipped, never fatal. A
//! record holds no secret by construction: it is built from reports, which hold none.
//!
//! Each process appends through one writer thread (`writer.rs`), which writes every line waiting in
//! one go and syncs them once, so that many guards at once share their syncs and no runtime worker
//! waits on the file. A guard finds an earlier attempt of its change through this process's index of
//! the journal's recent lines (`recent.rs`), not by reading the whole journal.

//! The folder's rooms:
//! - `record`: the record model (a line, its VM, VPGs, person and attempt), the tags records say;
//! - `verdict`: a record's verdict and each VPG's outcome, as words;
//! - `error`: what goes wrong, and the errors a file gives for its path;
//! - `filter`: which records to read back, and the start of a window ending now;
//! - `lookup`: what the records say of a VM reference, for the hook ([`GuardLookup`]);
//! - `file`, `writer`: a record whole or absent on disk, and the one writer thread;
//! - `fold`: an attempt's lines read back as one record;
//! - `recent`, `changes`, `vms`: the indexes (recent lines by change, change ids' uses, VMs named);
//! - `view`: a team server's guards view, read on as the journal grows;
//! - `protection_change`, `watch`, `timeline`, `archive`, `change_lock`: a VM's VPGs against its
//!   newest guard's, the ways back ending soon, the records as changes, old records moved out, and
//!   the lock of one VM and change.
//!
//! This face keeps [`AuditJournal`], the journal's facade: it reads and appends through the rooms.

mod archive;
pub mod change_lock;
mod changes;
mod error;
mod file;
mod filter;
mod fold;
mod kept;
mod lookup;
mod moving;
mod postgres;
mod protection_change;
mod recent;
mod record;
mod store;
mod timeline;
mod verdict;
mod view;
mod vms;
mod watch;
mod writer;

pub use archive::{ArchiveError, Archived, Retention};
pub use changes::ChangeUse;
pub use error::JournalError;
pub use filter::{JournalFilter, JournalRead, since_of};
pub use kept::SharedLog;
pub use lookup::GuardLookup;
pub use moving::{Imported, whole_lines};
pub use protection_change::{VpgNow, named as vpgs_named};
pub use record::{
    ApprovedBy, Attempt, GuardIntent, JournalRecord, JournalVm, JournalVpg, Person, Phase,
    RecordKind, journaled_tags,
};
pub use store::{ChangeHold, Fence, IntentError};
pub use timeline::{ChangeLine, Timeline, TimelineStep};
pub use verdict::{JournalOutcome, JournalVerdict};
pub use view::GuardsView;
pub use vms::Naming;
pub use watch::{Closed, Expiring, ExpiringChange};

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

use crate::arguments_key::ArgumentsKey;
use crate::way_back::JournaledTag;
use filter::window_start;

/// The audit journal.
#[derive(Debug, Clone)]
pub struct AuditJournal {
    /// The journal file; for a journal in PostgreSQL, the file whose folder keeps this machine's
    /// state beside it.
    path: PathBuf,
    /// Where its lines are kept; shared by the clones of one journal.
    store: store::Store,
    /// The key for digests of arguments beside the journal, once read.
    arguments_key: std::sync::Arc<std::sync::OnceLock<ArgumentsKey>>,
}

impl AuditJournal {
    /// A journal kept at `path` (created, with its folder, on the first append: the folder 0700 and
    /// the file 0600).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        AuditJournal {
            store: store::Store::File(std::sync::Arc::new(store::FileStore::new(path.clone()))),
            path,
            arguments_key: Default::default(),
        }
    }

    /// A journal kept in the PostgreSQL database `database`, shared with whoever else uses it (a
    /// team server's replicas); `beside` is the file whose folder keeps this machine's own state.
    /// Nothing is sent until it is first used; the schema is made or brought up to date then.
    pub fn in_database(
        database: &crate::config::JournalDatabase,
        beside: impl Into<PathBuf>,
    ) -> Result<Self, JournalError> {
        Ok(AuditJournal {
            store: store::Store::Postgres(std::sync::Arc::new(postgres::PgStore::new(database)?)),
            path: beside.into(),
            arguments_key: Default::default(),
        })
    }

    /// The journal as the configuration places it: in its database when it names one, else in its
    /// file.
    pub fn of(config: &crate::config::Config) -> Result<Self, JournalError> {
        match &config.journal_database {
            Some(database) => AuditJournal::in_database(database, &config.journal_path),
            None => Ok(AuditJournal::new(&config.journal_path)),
        }
    }

    /// Every line of the journal as written, oldest first: the JSON-lines exchange format that
    /// `rewind journal export` writes.
    pub fn export_lines(&self) -> Result<Vec<String>, JournalError> {
        moving::lines(&self.store)
    }

    /// Appends the lines of `lines` (read from an export, an archive or a journal file) that the
    /// journal does not hold yet, as they were written: importing twice adds nothing. A journal
    /// file takes an import only when it is empty (it is kept in time order).
    pub fn import_lines(&self, lines: Vec<String>) -> Result<Imported, JournalError> {
        moving::import(&self.store, lines)
    }

    /// Where the journal is, in words: its file's path, or `PostgreSQL host:port/database`.
    pub fn place(&self) -> String {
        self.store.place()
    }

    /// Whether the journal is kept in a database rather than a file.
    pub fn in_a_database(&self) -> bool {
        matches!(self.store, store::Store::Postgres(_))
    }

    /// The key for digests of arguments kept beside the journal ([`ArgumentsKey::kept_in`]), or in
    /// its database for every replica, read (or made) once by this process. Blocks the first
    /// time: off the runtime.
    pub fn arguments_key(&self) -> std::io::Result<ArgumentsKey> {
        if let Some(key) = self.arguments_key.get() {
            return Ok(key.clone());
        }
        let key = match &self.store {
            store::Store::File(_) => ArgumentsKey::kept_in(self.folder())?,
            store::Store::Postgres(_) => {
                let made = hex::encode(rand::random::<[u8; 32]>());
                let kept = self
                    .keep_once("keys", "arguments", &made)
                    .map_err(std::io::Error::other)?;
                ArgumentsKey::from_hex(&kept)?
            }
        };
        Ok(self.arguments_key.get_or_init(|| key).clone())
    }

    /// The folder of the journal file, where this machine's state is kept beside it.
    fn folder(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("."))
    }

    /// Keeps `value` as `kind`/`name` where the journal is (a file `<kind>/<name>` beside it, or a
    /// row of its database), unless a value is kept there already: the value kept is returned.
    pub fn keep_once(&self, kind: &str, name: &str, value: &str) -> Result<String, JournalError> {
        kept::keep_once(&self.store, self.folder(), kind, name, value)
    }

    /// The value kept as `kind`/`name`, if any ([`AuditJournal::keep_once`]).
    pub fn kept(&self, kind: &str, name: &str) -> Result<Option<String>, JournalError> {
        kept::kept(&self.store, self.folder(), kind, name)
    }

    /// The log `log` that a team's replicas share in the journal's database; `None` for a journal
    /// file (whose logs are files beside it).
    pub fn shared_log(&self, log: &str) -> Option<SharedLog> {
        match &self.store {
            store::Store::Postgres(db) => Some(SharedLog {
                db: db.clone(),
                log: log.to_owned(),
            }),
            store::Store::File(_) => None,
        }
    }

    /// The journal file (for a journal in a database, the file beside which this machine keeps
    /// its own state).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the journal can be appended to now: its file opens for appending (created empty,
    /// with its folder, when missing), or its database answers. Nothing is written.
    pub fn writable(&self) -> bool {
        self.reachable().is_ok()
    }

    /// [`AuditJournal::writable`], with why not.
    pub fn reachable(&self) -> Result<(), JournalError> {
        match &self.store {
            store::Store::File(_) => {
                let mut options = std::fs::OpenOptions::new();
                options.create(true).append(true);
                crate::local_state::open_private(&self.path, &mut options, true)
                    .map(|_| ())
                    .map_err(|source| JournalError::Write {
                        path: self.path.clone(),
                        source,
                    })
            }
            store::Store::Postgres(db) => db.reachable(),
        }
    }

    /// Takes the change lock of the VM `vm_id` and `change_id` (of the change id alone when
    /// `vm_id` is `None`), waiting until `deadline` while another guard holds it: a lock beside
    /// the journal file, or a lease in its database that every replica sees. A guard's process
    /// holds it while it runs, which is how a reader tells `running` from `interrupted`.
    pub async fn lock_change(
        &self,
        vm_id: Option<&str>,
        change_id: &str,
        deadline: std::time::Instant,
    ) -> Result<ChangeHold, change_lock::ChangeLockError> {
        self.store.lock(vm_id, change_id, deadline).await
    }

    /// Takes the role `role` (the watcher) for this process when no replica of a team server holds
    /// it: `None` while another does. Held until dropped, or until [`ChangeHold::holds`] says it
    /// ran out (then take it again). On a journal file, the one process has it.
    pub async fn lead(
        &self,
        role: &str,
    ) -> Result<Option<ChangeHold>, change_lock::ChangeLockError> {
        self.store.lead(role).await
    }

    /// Takes the lease of VPG `vpg_id` in the journal's database, waiting until `deadline` while a
    /// guard on another replica holds it, so that replicas never insert into one VPG at once (Zerto
    /// fails the second of two inserts back to back). `None` on a file: the process's own queue
    /// orders its guards, and guards of other processes are waited for by the inserts they run.
    pub async fn lock_vpg(
        &self,
        vpg_id: &str,
        deadline: std::time::Instant,
    ) -> Result<Option<ChangeHold>, change_lock::ChangeLockError> {
        self.store.lock_vpg(vpg_id, deadline).await
    }

    /// Appends a guard's `intent`, synced, unless `conflict` finds among the uses of its change id
    /// since `since` one that another made (returned, and nothing written). No other guard of the
    /// same id can check it between the check and the append: on a file, both are done under the
    /// change id's lock (waited for until `deadline`); in a database, in one transaction.
    pub async fn append_intent<C>(
        &self,
        intent: &JournalRecord,
        since: DateTime<Utc>,
        deadline: std::time::Instant,
        conflict: C,
    ) -> Result<Option<ChangeUse>, IntentError>
    where
        C: FnOnce(&[ChangeUse]) -> Option<ChangeUse> + Send + 'static,
    {
        self.store
            .append_intent(intent, since, deadline, conflict)
            .await
    }

    /// Appends one record as one line, synced to disk before it returns. Blocks the thread for the
    /// lock (at most [`crate::local_state::LOCK_WAIT`]) and the sync: on a runtime, use
    /// [`AuditJournal::append_off_runtime`].
    pub fn append(&self, record: &JournalRecord) -> Result<(), JournalError> {
        self.store.append(record, true)
    }

    /// [`AuditJournal::append`] for async code: the journal's writer thread does the write, the lock wait
    /// and the sync, and no runtime worker waits on the file.
    pub async fn append_off_runtime(&self, record: JournalRecord) -> Result<(), JournalError> {
        self.store.append_async(&record, true).await
    }

    /// [`AuditJournal::append_off_runtime`] without waiting for the disk: the line outlives the process
    /// (it is written), but not a power cut. For a guard's task lines, which only save a later
    /// attempt a look: its intent, which accounts for the insert, is synced.
    pub async fn append_unsynced(&self, record: JournalRecord) -> Result<(), JournalError> {
        self.store.append_async(&record, false).await
    }

    /// Moves the records written before `before` to the end of `archive` (created when missing),
    /// keeping what `retention` says the guard and the hook still read; see [`archive`]. Writers
    /// wait meanwhile, and append to the journal that is left.
    pub fn archive(
        &self,
        before: DateTime<Utc>,
        archive: &Path,
        retention: Retention,
    ) -> Result<Archived, ArchiveError> {
        match &self.store {
            store::Store::File(_) => archive::archive(&self.path, archive, before, retention),
            store::Store::Postgres(db) => {
                archive::refused(before, retention)?;
                let moved = db.archive(archive, before)?;
                Ok(Archived {
                    journal: PathBuf::from(self.place()),
                    archive: archive.to_path_buf(),
                    before,
                    lines_moved: moved.lines,
                    bytes_moved: moved.bytes,
                    lines_kept: moved.kept,
                    oldest_kept: moved.oldest_kept,
                })
            }
        }
    }

    /// Every use of `change_id` (a guard attempt, a recovery) journaled since `since`, oldest
    /// first, read from the change index beside the journal, never from the whole journal.
    pub fn change_uses(
        &self,
        change_id: &str,
        since: DateTime<Utc>,
    ) -> Result<Vec<ChangeUse>, JournalError> {
        self.store.change_uses(change_id.trim(), since)
    }

    /// What the journal says of `vm` for the PreToolUse hook, which asks it before letting a mutating
    /// call on that VM through. `vm` matches as find_protection matches a query: name, identifier, host
    /// name (`web-01.corp.example`) or an IP address a record holds.
    ///
    /// When records of more than one VM match (two VMs share a name, a host name's first label or an
    /// address), whatever their verdicts and ages, the answer is [`GuardLookup::Ambiguous`]: a guard of
    /// one must never let a call naming the other through. Otherwise it is the newest `guarded` record
    /// of that VM written less than `within` ago, if any.
    pub fn last_guarded(
        &self,
        vm: &str,
        within: std::time::Duration,
    ) -> Result<GuardLookup, JournalError> {
        Ok(GuardLookup::judged(
            self.namings_of(Some(vm))?,
            self.recent(within)?,
            vm,
            within,
        ))
    }

    /// Every way the journal has named each VM (when, and the VM as named then), oldest first,
    /// from the VM index beside it: what tells two VMs of one name apart whatever the age of their
    /// records. Its cost follows the number of VMs, not of records.
    pub fn namings(&self) -> Result<Vec<(DateTime<Utc>, JournalVm)>, JournalError> {
        self.namings_of(None)
    }

    /// [`AuditJournal::namings`], of the VMs that may answer to `vm` when it is given: the index
    /// lines that cannot name it (they hold none of its words) are not parsed. Some namings of other
    /// VMs may come too; [`GuardLookup::judged`] tells them apart.
    pub fn namings_of(
        &self,
        vm: Option<&str>,
    ) -> Result<Vec<(DateTime<Utc>, JournalVm)>, JournalError> {
        let holding = vm.and_then(|vm| {
            JournalFilter {
                vm: Some(vm.to_owned()),
                ..JournalFilter::default()
            }
            .prefilter()
        });
        let wanted = file::Wanted {
            since: None,
            holding,
        };
        self.store.namings(&wanted)
    }

    /// The records written in the last `within`, folded, read from the journal's end back.
    pub fn recent(&self, within: std::time::Duration) -> Result<Vec<JournalRecord>, JournalError> {
        let records = self.store.recent(window_start(within))?;
        Ok(fold::fold(records, &self.store.locks_now()))
    }

    /// What a hook elsewhere needs of this journal to judge calls as [`AuditJournal::last_guarded`]
    /// does (a team server's journal, read by its users' hooks), oldest first: for each VM, the
    /// newest record of each name and set of addresses it has had (so a reference that once named
    /// it is still seen to, and two VMs answering to one reference are still told apart), and its
    /// newest `guarded` record of the last `within`. [`GuardLookup::among`] judges them.
    pub fn guards_view(
        &self,
        within: std::time::Duration,
    ) -> Result<Vec<JournalRecord>, JournalError> {
        let mut view = GuardsView::default();
        self.refresh_view(&mut view)?;
        Ok(view.records(within))
    }

    /// Brings `view` up to what the journal holds now, reading only what it gained since.
    pub fn refresh_view(&self, view: &mut GuardsView) -> Result<(), JournalError> {
        self.store.refresh_view(view)
    }

    /// The newest `guarded` guard of change `change_id` of the VM `vm` (a reference, as
    /// find_protection takes one) written at or after `since`, unless a `protection_changed` record
    /// of that VM and change came after it: what a gateway's later call of the change reuses
    /// instead of guarding again. Only the change's own recent lines are read.
    pub fn guarded_in_change(
        &self,
        vm: &str,
        change_id: &str,
        since: DateTime<Utc>,
    ) -> Result<Option<JournalRecord>, JournalError> {
        let Some(records) = self.store.of_change(change_id.trim(), since)? else {
            return Ok(None);
        };
        let query = crate::vm::VmQuery::new(vm);
        let guards = records.iter().filter(|r| r.kind == RecordKind::Guard);
        let newest = fold::fold(guards.cloned().collect(), &self.store.locks_now())
            .into_iter()
            .filter(|r| r.verdict == JournalVerdict::Guarded && r.time >= since)
            .filter(|r| r.vm.answers_to(&query))
            .max_by_key(|r| r.time);
        Ok(newest.filter(|guard| {
            !records.iter().any(|r| {
                r.kind == RecordKind::ProtectionChanged
                    && r.vm.id == guard.vm.id
                    && r.time > guard.time
            })
        }))
    }

    /// The newest guard attempt of the VM `vm_id` for `change_id` written less than `within` ago that
    /// inserted (or was about to insert) a tag, whatever its verdict, folded as [`AuditJournal::read`]
    /// folds it: what a new guard of that VM and change takes over. Only the journal's end is read:
    /// back to `within` and `longest_attempt` (how long an attempt can run, so that its intent line
    /// is read with its later ones) before now.
    /// A journal in a database is asked without holding a runtime worker meanwhile; a file is read
    /// here, as it takes no lock.
    pub async fn earlier_attempt_off_runtime(
        &self,
        vm_id: &str,
        change_id: &str,
        within: std::time::Duration,
        longest_attempt: std::time::Duration,
    ) -> Result<Option<JournalRecord>, JournalError> {
        let read_from = window_start(within.saturating_add(longest_attempt));
        let found = self
            .store
            .of_change_off_runtime(change_id.trim(), read_from);
        let Some(records) = Box::pin(found).await?.filter(|r| !r.is_empty()) else {
            return Ok(None);
        };
        let locks = Box::pin(self.store.locks_now_off_runtime()).await;
        Ok(fold::newest_attempt(
            records,
            &locks,
            vm_id,
            window_start(within),
        ))
    }

    /// [`AuditJournal::change_uses`] for async code, as [`AuditJournal::earlier_attempt_off_runtime`].
    pub async fn change_uses_off_runtime(
        &self,
        change_id: &str,
        since: DateTime<Utc>,
    ) -> Result<Vec<ChangeUse>, JournalError> {
        Box::pin(self.store.change_uses_off_runtime(change_id.trim(), since)).await
    }

    /// The tagged checkpoints guards of VM `vm_id` pinned, each once.
    pub fn journaled_tags(&self, vm_id: &str) -> Result<Vec<JournaledTag>, JournalError> {
        let read = self.read(&JournalFilter {
            vm: Some(vm_id.to_string()),
            ..JournalFilter::default()
        })?;
        Ok(journaled_tags(&read.records))
    }

    /// Compares the VPGs `vm` is in now with those its newest guard saw: when they differ, the
    /// `protection_changed` record that says how, journaled unless a record since already says it;
    /// `None` when they do not differ (or the VM was never guarded).
    pub fn note_protection(
        &self,
        vm: &JournalVm,
        vpgs: &[VpgNow],
        agent: &str,
        person: Option<&Person>,
        now: DateTime<Utc>,
    ) -> Result<Option<JournalRecord>, JournalError> {
        // A guard older than the longest journal history holds no tag any more.
        let filter = JournalFilter {
            vm: Some(vm.id.clone()),
            since: Some(watch::history_start(now)),
            ..JournalFilter::default()
        };
        let records = self.read(&filter)?.records;
        let change = protection_change::change_record(&records, vm, vpgs, agent, person, now);
        let Some((record, said)) = change else {
            return Ok(None);
        };
        if !said {
            self.append(&record)?;
        }
        Ok(Some(record))
    }

    /// The open changes whose shortest way back ends after `now` and within `within` of it: the
    /// newest `guarded` verdict of each VM and change, unless a person said the change is done
    /// after it.
    pub fn expiring(
        &self,
        within: chrono::Duration,
        now: DateTime<Utc>,
    ) -> Result<Expiring, JournalError> {
        Ok(watch::expiring(&self.watched(now)?, within, now))
    }

    /// Closes `change_id` on a person's word: one `done` record for each VM it was guarded on that
    /// is not closed yet. Refused when no guard of it is in the journal's last 30 days.
    pub fn close(
        &self,
        change_id: &str,
        person: Option<&Person>,
        now: DateTime<Utc>,
    ) -> Result<Option<Closed>, JournalError> {
        let records = self.watched(now)?;
        let Some((closed, done)) = watch::closing(&records, change_id, person, now) else {
            return Ok(None);
        };
        for record in &done {
            self.append(record)?;
        }
        Ok(Some(closed))
    }

    /// The records the watch reads: those of the longest journal history before `now`.
    fn watched(&self, now: DateTime<Utc>) -> Result<Vec<JournalRecord>, JournalError> {
        let filter = JournalFilter {
            since: Some(watch::history_start(now)),
            ..JournalFilter::default()
        };
        Ok(self.read(&filter)?.records)
    }

    /// Reads back the records that match `filter`, oldest first, with the lines of each guard
    /// attempt folded into one record (see the module's docs).
    pub fn read(&self, filter: &JournalFilter) -> Result<JournalRead, JournalError> {
        let wanted = file::Wanted {
            since: filter.since,
            holding: filter.prefilter(),
        };
        // A journal in a database has no file to name.
        let path = (!self.in_a_database()).then(|| self.path.clone());
        let Some((records, skipped_lines)) = self.store.records(&wanted)? else {
            return Ok(JournalRead {
                path,
                records: Vec::new(),
                skipped_lines: 0,
            });
        };
        let matcher = filter.matcher();
        let mut records: Vec<JournalRecord> = fold::fold(records, &self.store.locks_now())
            .into_iter()
            .filter(|r| matcher.matches(r) && filter.since.is_none_or(|s| r.time >= s))
            .collect();
        if let Some(n) = filter.last {
            let drop = records.len().saturating_sub(n);
            records.drain(..drop);
        }
        Ok(JournalRead {
            path,
            records,
            skipped_lines,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vm::VmRef;

    /// The intent of a guard of `vm` for `change`, written `days` days ago.
    pub(super) fn intent_days_ago(vm: &str, change: &str, days: i64) -> JournalRecord {
        JournalRecord {
            time: Utc::now() - chrono::Duration::days(days),
            verdict: JournalVerdict::Started,
            attempt: Some(Attempt {
                id: format!("{change}-attempt"),
                phase: Phase::Intent,
                takes_over: None,
                taken_over_by: None,
            }),
            ..record(vm, change)
        }
    }

    /// A `guarded` record of `vm` for `change`, written now, by claude for nobody in particular.
    pub(super) fn record(vm: &str, change: &str) -> JournalRecord {
        JournalRecord {
            time: Utc::now(),
            kind: RecordKind::Guard,
            agent: "claude".into(),
            person: None,
            action: "edit".into(),
            change_id: change.into(),
            vm: JournalVm {
                id: format!("s.{vm}"),
                name: vm.into(),
                ip_addresses: Vec::new(),
                site: "Boston".into(),
            },
            verdict: JournalVerdict::Guarded,
            vpgs: vec![],
            notes: vec![],
            details: None,
            attempt: None,
            sites: None,
            approved_by: None,
        }
    }

    #[test]
    fn a_change_guarded_in_the_window_is_found_for_its_vm_until_its_protection_changed() {
        let dir = tempfile::tempdir().unwrap();
        let j = AuditJournal::new(dir.path().join("journal.jsonl"));
        let since = Utc::now() - chrono::Duration::minutes(15);
        assert_eq!(j.guarded_in_change("web-01", "gw-1", since).unwrap(), None);
        j.append(&record("web-01", "gw-1")).unwrap();
        let call = crate::forwarded::ForwardedCall {
            upstream: "fs".into(),
            tool: "write_file".into(),
            arguments_hmac: "00".into(),
            agent: "claude".into(),
            person: None,
            change_id: "gw-1".into(),
            vm: record("web-01", "gw-1").vm,
            approved_by: None,
        };
        for _ in 0..3 {
            j.append(&call.line(JournalVerdict::Started)).unwrap();
            j.append(&call.line(JournalVerdict::Completed)).unwrap();
        }
        let found = j.guarded_in_change("WEB-01", "gw-1", since).unwrap();
        assert_eq!(
            found.map(|r| r.kind),
            Some(RecordKind::Guard),
            "the guard, not a call"
        );
        assert_eq!(
            j.guarded_in_change("db-01", "gw-1", since).unwrap(),
            None,
            "another VM"
        );
        assert_eq!(
            j.guarded_in_change("web-01", "gw-2", since).unwrap(),
            None,
            "another change"
        );
        let later = Utc::now() + chrono::Duration::seconds(1);
        assert_eq!(
            j.guarded_in_change("web-01", "gw-1", later).unwrap(),
            None,
            "too old"
        );
        j.append(&JournalRecord {
            kind: RecordKind::ProtectionChanged,
            verdict: JournalVerdict::ProtectionChanged,
            ..record("web-01", "gw-1")
        })
        .unwrap();
        assert_eq!(
            j.guarded_in_change("web-01", "gw-1", since).unwrap(),
            None,
            "its VPGs changed after the guard: guard again"
        );
    }

    #[test]
    fn a_journal_vm_names_its_site_so_two_vms_of_one_name_can_be_told_apart() {
        let mut vm = record("build-agent", "c").vm;
        vm.ip_addresses = vec!["10.0.0.5".into()];
        vm.site = "Denver".into();
        assert_eq!(
            vm.to_string(),
            "build-agent at Denver (s.build-agent, 10.0.0.5)"
        );
    }

    #[test]
    fn appended_records_read_back_filtered_by_vm_and_change() {
        let dir = tempfile::tempdir().unwrap();
        let j = AuditJournal::new(dir.path().join("state").join("journal.jsonl"));
        j.append(&record("web-01", "c1")).unwrap();
        j.append(&record("db-01", "c1")).unwrap();
        j.append(&record("web-01", "c2")).unwrap();
        let all = j.read(&JournalFilter::default()).unwrap();
        assert_eq!(all.records.len(), 3);
        let web = j
            .read(&JournalFilter {
                vm: Some("WEB-01".into()),
                ..Default::default()
            })
            .unwrap();
        assert_eq!(web.records.len(), 2);
        let c1 = j
            .read(&JournalFilter {
                change_id: Some("c1".into()),
                vm: Some("s.db-01".into()),
                ..Default::default()
            })
            .unwrap();
        assert_eq!(c1.records.len(), 1);
        let last = j
            .read(&JournalFilter {
                last: Some(1),
                ..Default::default()
            })
            .unwrap();
        assert_eq!(last.records[0].change_id, "c2");
    }

    #[test]
    fn a_record_made_for_a_person_is_found_by_their_name_in_any_case_or_their_subject() {
        let dir = tempfile::tempdir().unwrap();
        let j = AuditJournal::new(dir.path().join("journal.jsonl"));
        let mut alice = record("web-01", "c1");
        alice.person = Some(Person {
            subject: "4f1c-sub".into(),
            name: Some("alice".into()),
        });
        j.append(&alice).unwrap();
        j.append(&record("web-01", "c2")).unwrap();
        let changes = |who: &str| -> Vec<String> {
            j.read(&JournalFilter {
                person: Some(who.into()),
                ..Default::default()
            })
            .unwrap()
            .records
            .into_iter()
            .map(|r| r.change_id)
            .collect()
        };
        assert_eq!(changes("ALICE"), ["c1"]);
        assert_eq!(changes("4f1c-sub"), ["c1"]);
        assert!(changes("bob").is_empty());
        assert!(
            changes("4F1C-SUB").is_empty(),
            "a subject is matched exactly"
        );
        let back = &j.read(&JournalFilter::default()).unwrap().records[0];
        assert_eq!(
            back.person.as_ref().unwrap().to_string(),
            "alice (4f1c-sub)"
        );
    }

    #[test]
    fn the_guards_view_tells_what_the_whole_journal_tells_of_every_reference() {
        let dir = tempfile::tempdir().unwrap();
        let j = AuditJournal::new(dir.path().join("journal.jsonl"));
        let window = std::time::Duration::from_secs(600);
        use JournalVerdict::{Guarded, NotGuarded};
        let at = |vm: &str, id: &str, ip: &str, verdict: JournalVerdict, minutes_ago: i64| {
            let mut r = record(vm, "c");
            r.vm.id = id.into();
            r.vm.ip_addresses = vec![ip.into()];
            r.verdict = verdict;
            r.time = Utc::now() - chrono::Duration::minutes(minutes_ago);
            r
        };
        // s.a was db (10.0.0.5), and is db-old now; s.b is db, at a new address, guarded just now;
        // s.c was guarded long ago, s.d gave up its address to s.e.
        for r in [
            at("db", "s.a", "10.0.0.5", Guarded, 60),
            at("db-old", "s.a", "10.0.0.9", NotGuarded, 30),
            at("db", "s.b", "10.0.0.7", Guarded, 1),
            at("old-01", "s.c", "10.0.0.8", Guarded, 120),
            at("app-01", "s.d", "10.0.0.20", NotGuarded, 90),
            at("app-02", "s.e", "10.0.0.20", Guarded, 2),
        ] {
            j.append(&r).unwrap();
        }
        let view = j.guards_view(window).unwrap();
        assert!(view.len() < 7, "only what a hook needs: {}", view.len());
        for q in [
            "db",
            "db-old",
            "10.0.0.5",
            "10.0.0.7",
            "old-01",
            "app-02",
            "10.0.0.20",
            "s.b",
        ] {
            assert_eq!(
                GuardLookup::among(view.clone(), q, window),
                j.last_guarded(q, window).unwrap(),
                "{q}"
            );
        }
        assert!(matches!(
            j.last_guarded("db", window).unwrap(),
            GuardLookup::Ambiguous(_)
        ));
    }

    /// A journal of two good records of web-01 (c1, c2) with `torn` written as a line between them.
    fn journal_with_line_between(torn: &[u8]) -> (tempfile::TempDir, AuditJournal) {
        let dir = tempfile::tempdir().unwrap();
        let j = AuditJournal::new(dir.path().join("journal.jsonl"));
        j.append(&record("web-01", "c1")).unwrap();
        use std::io::Write;
        std::fs::OpenOptions::new()
            .append(true)
            .open(j.path())
            .unwrap()
            .write_all(torn)
            .unwrap();
        j.append(&record("web-01", "c2")).unwrap();
        (dir, j)
    }

    #[test]
    fn an_unreadable_line_is_skipped_and_counted() {
        let (_dir, j) = journal_with_line_between(b"{\"time\": \"torn\n");
        let read = j.read(&JournalFilter::default()).unwrap();
        assert_eq!(read.records.len(), 2);
        assert_eq!(read.skipped_lines, 1);
    }

    #[test]
    fn a_record_after_a_torn_last_line_is_fenced_off_and_reads_back() {
        // A full disk cut the last record short, with no newline: the next record must not be
        // glued onto it.
        let dir = tempfile::tempdir().unwrap();
        let j = AuditJournal::new(dir.path().join("journal.jsonl"));
        j.append(&record("web-01", "c1")).unwrap();
        let whole = std::fs::read(j.path()).unwrap();
        let mut torn = whole.clone();
        torn.extend_from_slice(&whole[..whole.len() / 2]);
        std::fs::write(j.path(), &torn).unwrap();
        j.append(&record("app-03", "full4")).unwrap();
        let read = j.read(&JournalFilter::default()).unwrap();
        let changes: Vec<&str> = read.records.iter().map(|r| r.change_id.as_str()).collect();
        assert_eq!(changes, ["c1", "full4"]);
        assert_eq!(read.skipped_lines, 1);
        assert!(std::fs::read(j.path()).unwrap().ends_with(b"\n"));
    }

    /// An intent, a task line and (when `verdict`) a verdict of one attempt of web-01's change c.
    fn attempt_lines(j: &AuditJournal, id: &str, takes_over: Option<&str>, verdict: bool) {
        let vm = VmRef {
            id: "s.web-01".into(),
            name: "web-01".into(),
            site: crate::vm::SiteRef {
                id: "s".into(),
                name: "Boston".into(),
                configured_as: None,
            },
            ip_addresses: Vec::new(),
        };
        let intent = JournalRecord::intent(&GuardIntent {
            attempt_id: id,
            takes_over,
            agent: "claude",
            person: None,
            action: "edit",
            change_id: "c",
            vm: &vm,
            tag: "ai:claude | edit | vm=web-01 | change=c | t",
            sites: None,
            vpgs: vec![("vpg-1", "web-local"), ("vpg-2", "web-dr")],
        });
        j.append(&intent).unwrap();
        j.append(&JournalRecord::sent(&intent, "vpg-1", "task-1"))
            .unwrap();
        if verdict {
            let mut done = intent.clone();
            done.verdict = JournalVerdict::Guarded;
            done.attempt.as_mut().unwrap().phase = Phase::Verdict;
            for v in &mut done.vpgs {
                v.outcome = JournalOutcome::Tagged;
            }
            j.append(&done).unwrap();
        }
    }

    #[tokio::test]
    async fn an_attempt_without_a_verdict_reads_as_interrupted_with_what_it_sent_and_who_took_it_over()
     {
        let dir = tempfile::tempdir().unwrap();
        let j = AuditJournal::new(dir.path().join("journal.jsonl"));
        attempt_lines(&j, "a1", None, false);
        let read = j.read(&JournalFilter::default()).unwrap();
        assert_eq!(read.records.len(), 1, "{read:?}");
        let r = &read.records[0];
        assert_eq!(r.verdict, JournalVerdict::Interrupted);
        let outcomes: Vec<(&JournalOutcome, Option<&str>)> = r
            .vpgs
            .iter()
            .map(|v| (&v.outcome, v.task_id.as_deref()))
            .collect();
        assert_eq!(
            outcomes,
            [
                (&JournalOutcome::Sent, Some("task-1")),
                (&JournalOutcome::Pending, None)
            ]
        );
        assert_eq!(r.notes, [fold::INTERRUPTED_NOTE], "{r:?}");
        assert_eq!(
            j.earlier_attempt_off_runtime(
                "S.WEB-01",
                "c",
                std::time::Duration::from_secs(60),
                std::time::Duration::from_secs(60)
            )
            .await
            .unwrap()
            .and_then(|r| r.attempt)
            .map(|a| a.id),
            Some("a1".to_string())
        );

        attempt_lines(&j, "a2", Some("a1"), true);
        let read = j.read(&JournalFilter::default()).unwrap();
        let verdicts: Vec<&JournalVerdict> = read.records.iter().map(|r| &r.verdict).collect();
        assert_eq!(
            verdicts,
            [&JournalVerdict::Interrupted, &JournalVerdict::Guarded]
        );
        let first = read.records[0].attempt.as_ref().unwrap();
        assert_eq!(first.taken_over_by.as_deref(), Some("a2"));
        assert!(matches!(
            j.last_guarded("web-01", std::time::Duration::from_secs(60)),
            Ok(GuardLookup::Guarded(_))
        ));
    }

    #[tokio::test]
    async fn an_earlier_attempt_is_found_from_the_journals_end_however_long_the_journal_is() {
        let dir = tempfile::tempdir().unwrap();
        let j = AuditJournal::new(dir.path().join("journal.jsonl"));
        let minute = std::time::Duration::from_secs(60);
        // A year of other guards, well over the first window read from the end.
        for i in 0..600 {
            let mut old = record("db-01", &format!("old-{i}"));
            old.time = Utc::now() - chrono::Duration::days(365);
            old.notes = vec!["x".repeat(1_000)];
            j.append(&old).unwrap();
        }
        assert!(std::fs::metadata(j.path()).unwrap().len() > 2 * super::recent::TAIL_FIRST);
        assert!(
            j.earlier_attempt_off_runtime("s.web-01", "c", minute, minute)
                .await
                .unwrap()
                .is_none()
        );
        attempt_lines(&j, "a1", None, true);
        for i in 0..300 {
            j.append(&record("db-01", &format!("new-{i}"))).unwrap();
        }
        let found = j
            .earlier_attempt_off_runtime("s.web-01", "c", minute, minute)
            .await
            .unwrap();
        assert_eq!(
            found.and_then(|r| r.attempt).map(|a| a.id),
            Some("a1".into())
        );
        // Another VM's guard of the same change id is not this VM's.
        assert!(
            j.earlier_attempt_off_runtime("s.db-01", "c", minute, minute)
                .await
                .unwrap()
                .is_none()
        );
    }

    #[tokio::test]
    async fn a_look_for_an_earlier_attempt_sees_what_another_process_appended_since_the_last() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        // Two journals of one file: two processes, each with its own index.
        let (mine, theirs) = (AuditJournal::new(&path), AuditJournal::new(&path));
        let minute = std::time::Duration::from_secs(60);
        let earlier = async |j: &AuditJournal| {
            j.earlier_attempt_off_runtime("s.web-01", "c", minute, minute)
                .await
                .unwrap()
                .and_then(|r| r.attempt)
                .map(|a| a.id)
        };
        assert_eq!(earlier(&mine).await, None);
        attempt_lines(&theirs, "a1", None, false);
        assert_eq!(earlier(&mine).await.as_deref(), Some("a1"));
        attempt_lines(&theirs, "a2", Some("a1"), true);
        assert_eq!(earlier(&mine).await.as_deref(), Some("a2"));
        // Lines this process wrote, between others', are indexed as they are written.
        attempt_lines(&mine, "a3", Some("a2"), false);
        attempt_lines(&theirs, "b1", None, false);
        attempt_lines(&mine, "a4", Some("a3"), true);
        assert_eq!(earlier(&mine).await.as_deref(), Some("a4"));
        assert_eq!(earlier(&theirs).await.as_deref(), Some("a4"));
        let all = mine.read(&JournalFilter::default()).unwrap();
        assert_eq!(all.records.len(), 5, "{all:?}");
        // A journal put in the place of the one indexed is read afresh.
        std::fs::remove_file(&path).unwrap();
        attempt_lines(&theirs, "a3", None, false);
        assert_eq!(earlier(&mine).await.as_deref(), Some("a3"));
    }

    #[tokio::test]
    async fn an_attempt_whose_process_holds_the_change_lock_reads_as_running() {
        let dir = tempfile::tempdir().unwrap();
        let j = AuditJournal::new(dir.path().join("journal.jsonl"));
        attempt_lines(&j, "a1", None, false);
        let lock = j
            .lock_change(Some("s.web-01"), "c", std::time::Instant::now())
            .await
            .unwrap();
        let read = j.read(&JournalFilter::default()).unwrap();
        assert_eq!(read.records[0].verdict, JournalVerdict::Running);
        drop(lock);
        let read = j.read(&JournalFilter::default()).unwrap();
        assert_eq!(read.records[0].verdict, JournalVerdict::Interrupted);
    }

    #[test]
    fn a_line_torn_inside_a_character_is_skipped_not_fatal() {
        // A record cut off in the middle of "ü" (0xC3 0xBC): the line is not UTF-8.
        let (_dir, j) = journal_with_line_between(b"{\"agent\": \"J\xC3\n");
        let read = j.read(&JournalFilter::default()).unwrap();
        assert_eq!(read.records.len(), 2);
        assert_eq!(read.skipped_lines, 1);
        assert!(matches!(
            j.last_guarded("web-01", std::time::Duration::from_secs(60)),
            Ok(GuardLookup::Guarded(_))
        ));
    }

    #[test]
    fn a_window_longer_than_the_calendar_reaches_back_to_every_record_without_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let j = AuditJournal::new(dir.path().join("journal.jsonl"));
        let mut old = record("web-01", "old");
        old.time = Utc::now() - chrono::Duration::days(3650);
        j.append(&old).unwrap();
        for window in [
            std::time::Duration::from_secs(10_000_000_000_000),
            std::time::Duration::MAX,
        ] {
            let found = j.last_guarded("web-01", window).unwrap();
            assert_eq!(found.guarded().unwrap().change_id, "old", "{window:?}");
        }
    }

    #[test]
    fn last_guarded_finds_only_recent_guarded_records_of_the_vm() {
        let dir = tempfile::tempdir().unwrap();
        let j = AuditJournal::new(dir.path().join("journal.jsonl"));
        let mut old = record("web-01", "old");
        old.time = Utc::now() - chrono::Duration::hours(2);
        j.append(&old).unwrap();
        let mut refused = record("web-01", "refused");
        refused.verdict = JournalVerdict::NotGuarded;
        j.append(&refused).unwrap();
        j.append(&record("db-01", "other")).unwrap();
        let window = std::time::Duration::from_secs(900);
        assert_eq!(
            j.last_guarded("web-01", window).unwrap(),
            GuardLookup::NotGuarded
        );
        j.append(&record("web-01", "fresh")).unwrap();
        assert_eq!(
            j.last_guarded("Web-01", window)
                .unwrap()
                .guarded()
                .unwrap()
                .change_id,
            "fresh"
        );
    }

    #[test]
    fn last_guarded_knows_the_vm_by_host_name_and_ip_address_as_find_protection_does() {
        let dir = tempfile::tempdir().unwrap();
        let j = AuditJournal::new(dir.path().join("journal.jsonl"));
        let mut web = record("web-01", "c1");
        web.vm.ip_addresses = vec!["10.0.0.5".into(), "fd00::5".into()];
        j.append(&web).unwrap();
        let window = std::time::Duration::from_secs(900);
        for query in [
            "web-01.corp.example",
            "WEB-01.Corp.Example",
            "10.0.0.5",
            " 10.0.0.5 ",
            "fd00:0:0:0:0:0:0:5",
            "s.web-01",
        ] {
            assert!(
                j.last_guarded(query, window).unwrap().guarded().is_some(),
                "{query} names web-01"
            );
        }
        for query in ["10.0.0.50", "web-010.corp.example", "corp.web-01", "10.0.0"] {
            assert!(
                j.last_guarded(query, window).unwrap() == GuardLookup::NotGuarded,
                "{query} does not name web-01"
            );
        }
    }

    #[test]
    fn a_reference_matching_records_of_two_vms_is_ambiguous_even_when_one_of_them_is_guarded() {
        let dir = tempfile::tempdir().unwrap();
        let j = AuditJournal::new(dir.path().join("journal.jsonl"));
        let window = std::time::Duration::from_secs(900);
        // Two VMs named build-agent, one at each site; only the Denver one is guarded, and the
        // Boston one's record is old and refused, yet it still makes the name ambiguous.
        let mut boston = record("build-agent", "old");
        boston.vm.id = "boston.vm-3".into();
        boston.vm.ip_addresses = vec!["10.0.0.7".into()];
        boston.verdict = JournalVerdict::NotGuarded;
        boston.time = Utc::now() - chrono::Duration::days(3);
        j.append(&boston).unwrap();
        let mut denver = record("build-agent", "fresh");
        denver.vm.id = "denver.vm-9".into();
        denver.vm.ip_addresses = vec!["10.0.0.7".into()];
        j.append(&denver).unwrap();
        for query in ["build-agent", "BUILD-AGENT.corp.example", "10.0.0.7"] {
            match j.last_guarded(query, window).unwrap() {
                GuardLookup::Ambiguous(vms) => {
                    let ids: Vec<&str> = vms.iter().map(|v| v.id.as_str()).collect();
                    assert_eq!(ids, ["boston.vm-3", "denver.vm-9"], "{query}");
                }
                other => panic!("{query} names two VMs, yet the journal said {other:?}"),
            }
        }
        // By its identifier, each VM is one VM again.
        assert_eq!(
            j.last_guarded("denver.vm-9", window)
                .unwrap()
                .guarded()
                .unwrap()
                .change_id,
            "fresh"
        );
        assert_eq!(
            j.last_guarded("boston.vm-3", window).unwrap(),
            GuardLookup::NotGuarded
        );
    }

    #[test]
    fn a_record_of_a_vm_without_ip_addresses_reads_back_with_none() {
        let dir = tempfile::tempdir().unwrap();
        let j = AuditJournal::new(dir.path().join("journal.jsonl"));
        std::fs::write(
            j.path(),
            r#"{"time":"2026-01-01T00:00:00Z","kind":"guard","agent":"a","action":"b","change_id":"c","vm":{"id":"s.web-01","name":"web-01","site":"Boston"},"verdict":"guarded","vpgs":[]}
"#,
        )
        .unwrap();
        let read = j.read(&JournalFilter::default()).unwrap();
        assert_eq!(read.records.len(), 1);
        assert!(read.records[0].vm.ip_addresses.is_empty());
    }

    #[test]
    fn lines_of_a_newer_version_read_show_their_own_words_and_never_count_as_guarded() {
        let dir = tempfile::tempdir().unwrap();
        let j = AuditJournal::new(dir.path().join("journal.jsonl"));
        // An attempt of this version, continued by a line of a part this version does not know.
        attempt_lines(&j, "a1", None, false);
        let text = std::fs::read_to_string(j.path()).unwrap();
        let mut part: serde_json::Value =
            serde_json::from_str(text.lines().next().unwrap()).unwrap();
        part["attempt"]["phase"] = "confirmed".into();
        part["vpgs"] = serde_json::json!([
            {"vpg_id": "vpg-2", "vpg_name": "web-dr", "outcome": "queued", "tag": "t"}
        ]);
        // A record of a verdict this version does not know, of another VM.
        let mut approved = serde_json::to_value(record("db-01", "c2")).unwrap();
        approved["verdict"] = "approved".into();
        approved["vpgs"] = serde_json::json!([
            {"vpg_id": "vpg-3", "vpg_name": "db-local", "outcome": "approved"}
        ]);
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(j.path())
            .unwrap();
        writeln!(file, "{part}\n{approved}").unwrap();

        let read = j.read(&JournalFilter::default()).unwrap();
        assert_eq!(read.skipped_lines, 0);
        assert_eq!(read.records.len(), 2, "{read:?}");
        let attempt = &read.records[0];
        assert_eq!(attempt.verdict, JournalVerdict::Interrupted);
        assert_eq!(attempt.attempt.as_ref().unwrap().phase, Phase::Sent);
        let outcomes: Vec<&JournalOutcome> = attempt.vpgs.iter().map(|v| &v.outcome).collect();
        assert_eq!(
            outcomes,
            [
                &JournalOutcome::Sent,
                &JournalOutcome::Other("queued".into())
            ]
        );
        let newer = &read.records[1];
        assert_eq!(newer.verdict, JournalVerdict::Other("approved".into()));
        assert_eq!(newer.verdict.to_string(), "approved");
        let shown = serde_json::to_value(newer).unwrap();
        assert_eq!(shown["verdict"], "approved");
        assert_eq!(shown["vpgs"][0]["outcome"], "approved");
        let window = std::time::Duration::from_secs(60);
        assert_eq!(
            j.last_guarded("db-01", window).unwrap(),
            GuardLookup::NotGuarded
        );
        assert_eq!(
            GuardLookup::among(j.guards_view(window).unwrap(), "db-01", window),
            GuardLookup::NotGuarded
        );
    }

    #[test]
    fn a_missing_journal_reads_as_empty() {
        let dir = tempfile::tempdir().unwrap();
        let read = AuditJournal::new(dir.path().join("none.jsonl"))
            .read(&JournalFilter::default())
            .unwrap();
        assert!(read.records.is_empty());
    }

    #[test]
    fn concurrent_appenders_write_whole_lines() {
        let dir = tempfile::tempdir().unwrap();
        let j = AuditJournal::new(dir.path().join("journal.jsonl"));
        let mut big = record("web-01", "c");
        big.notes = vec!["x".repeat(20_000)];
        std::thread::scope(|scope| {
            for _ in 0..8 {
                let j = j.clone();
                let big = big.clone();
                scope.spawn(move || {
                    for _ in 0..10 {
                        j.append(&big).unwrap();
                    }
                });
            }
        });
        let read = j.read(&JournalFilter::default()).unwrap();
        assert_eq!(read.records.len(), 80);
        assert_eq!(read.skipped_lines, 0);
    }

    /// A guard record of `vm` for `change`, written `hours` hours ago.
    fn aged(vm: &str, change: &str, hours: i64) -> JournalRecord {
        JournalRecord {
            time: Utc::now() - chrono::Duration::hours(hours),
            ..record(vm, change)
        }
    }

    #[test]
    fn since_reads_from_a_bisection_and_a_change_only_the_lines_holding_it() {
        let dir = tempfile::tempdir().unwrap();
        let j = AuditJournal::new(dir.path().join("journal.jsonl"));
        // A few thousand older records, then the last day's.
        for i in 0..3000 {
            j.append(&aged(
                &format!("vm-{}", i % 50),
                &format!("old-{i}"),
                3000 - i,
            ))
            .unwrap();
        }
        for i in 0..5 {
            j.append(&aged("web-01", &format!("new-{i}"), 5 - i))
                .unwrap();
        }
        let recent = j
            .read(&JournalFilter {
                since: Some(Utc::now() - chrono::Duration::hours(24)),
                ..Default::default()
            })
            .unwrap();
        assert_eq!(recent.records.len(), 5 + 23, "{}", recent.records.len());
        let one = j
            .read(&JournalFilter {
                change_id: Some("old-17".into()),
                ..Default::default()
            })
            .unwrap();
        assert_eq!(one.records.len(), 1);
        let of_vm = j
            .read(&JournalFilter {
                vm: Some("WEB-01".into()),
                ..Default::default()
            })
            .unwrap();
        assert_eq!(of_vm.records.len(), 5);
    }

    #[test]
    fn a_time_to_read_from_is_a_time_a_day_or_a_time_ago() {
        assert!(since_of("2026-12-01T08:00:00Z").is_ok());
        assert_eq!(
            since_of("2026-12-01").unwrap().to_rfc3339(),
            "2026-12-01T00:00:00+00:00"
        );
        let ago = since_of("12h").unwrap();
        assert!(
            (Utc::now() - ago - chrono::Duration::hours(12))
                .num_seconds()
                .abs()
                < 5
        );
        assert!(since_of("yesterday").unwrap_err().contains("7d"));
    }

    #[test]
    fn the_guards_view_reads_only_what_was_appended_since_its_last_look() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let j = AuditJournal::new(&path);
        j.append(&record("web-01", "c1")).unwrap();
        j.append(&record("db-01", "c2")).unwrap();
        let mut view = GuardsView::default();
        view.refresh(&path).unwrap();
        let window = std::time::Duration::from_secs(900);
        assert_eq!(view.records(window), j.guards_view(window).unwrap());
        // web-01's line is spoilt in place (same file, same length): a view that read the journal
        // again would lose it; one that reads on from where it was keeps it.
        let text = std::fs::read_to_string(&path).unwrap();
        let first = text.lines().next().unwrap();
        let spoilt = text.replacen(first, &"x".repeat(first.len()), 1);
        std::fs::write(&path, spoilt).unwrap();
        let read_to = view.read_to();
        j.append(&record("files-01", "c3")).unwrap();
        view.refresh(&path).unwrap();
        assert!(view.read_to() > read_to);
        let names = |records: Vec<JournalRecord>| -> Vec<String> {
            records.into_iter().map(|r| r.vm.name).collect()
        };
        assert_eq!(names(view.records(window)), ["web-01", "db-01", "files-01"]);
        assert_eq!(names(j.guards_view(window).unwrap()), ["db-01", "files-01"]);
        // A journal replaced by another file is read from its start.
        let other = dir.path().join("other.jsonl");
        AuditJournal::new(&other)
            .append(&record("app-01", "c4"))
            .unwrap();
        std::fs::rename(&other, &path).unwrap();
        view.refresh(&path).unwrap();
        assert_eq!(names(view.records(window)), ["app-01"]);
    }

    #[test]
    fn every_naming_of_every_vm_is_indexed_and_made_again_when_the_index_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let j = AuditJournal::new(&path);
        j.append(&aged("web-01", "a", 5000)).unwrap();
        let mut renamed = record("web-01", "b");
        renamed.vm.name = "web-01-new".into();
        j.append(&renamed).unwrap();
        j.append(&record("web-01", "c")).unwrap();
        j.append(&record("db-01", "d")).unwrap();
        let names = |j: &AuditJournal| -> Vec<String> {
            j.namings()
                .unwrap()
                .into_iter()
                .map(|(_, v)| v.name)
                .collect()
        };
        assert_eq!(names(&j), ["web-01", "web-01-new", "web-01", "db-01"]);
        assert!(dir.path().join("journal.vms").exists());

        // Lines written by a process that stopped before it told the index are caught up.
        let mut line = serde_json::to_vec(&record("app-01", "e")).unwrap();
        line.push(b'\n');
        use std::io::Write;
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(&line)
            .unwrap();
        assert_eq!(names(&j).last().map(String::as_str), Some("app-01"));

        std::fs::remove_file(dir.path().join("journal.vms")).unwrap();
        let fresh = AuditJournal::new(&path);
        assert_eq!(names(&fresh).len(), 5, "made again from the journal");
    }
}
