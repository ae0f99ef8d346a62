//! The journal's writer: one thread per journal of a process, which appends what every caller sends
//! it, in groups.
//!
//! While one write and its sync run, the lines that arrive wait in the channel; the next write takes
//! them all. So 256 guards at once cost a few syncs rather than 768 in a row, and an async caller
//! waits on a oneshot rather than on a thread of tokio's blocking pool (whose hand-offs, with 64
//! guards at once on two cores, cost more than the sync itself). Each caller learns its own line's
//! outcome once it is written, and synced when it asked for that.

use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};

use chrono::{DateTime, Utc};

use super::changes::{self, ChangeUse};
use super::error::JournalError;
use super::file::Appender;
use super::recent::RecentLines;
use super::record::{JournalRecord, JournalVm};
use super::vms;

/// One record's line to append, with what the indexes beside the journal learn of it.
pub(super) struct Line {
    /// The record as JSON, with its newline.
    bytes: Vec<u8>,
    /// The line's change id and time, for this process's index of recent lines.
    key: (String, DateTime<Utc>),
    /// Whether that index takes the line ([`super::recent::indexed`]: not a forwarded call's).
    indexed: bool,
    /// The use of its change id it records, for the change index (its end is learnt when written).
    use_of_change: Option<ChangeUse>,
    /// The VM it names, for the VM index.
    vm: JournalVm,
    /// Whether its caller waits for the disk's sync, not only for the write.
    sync: bool,
}

impl Line {
    /// `record` as one journal line, synced to disk before its caller is told when `sync`.
    pub(super) fn of(record: &JournalRecord, sync: bool) -> Result<Line, JournalError> {
        let mut bytes =
            serde_json::to_vec(record).map_err(|e| JournalError::Encode(e.to_string()))?;
        bytes.push(b'\n');
        Ok(Line {
            bytes,
            key: (record.change_id.clone(), record.time),
            indexed: super::recent::indexed(record.kind),
            use_of_change: ChangeUse::of(record, 0),
            vm: record.vm.clone(),
            sync,
        })
    }
}

impl Line {
    /// `record` as `text`, the line another journal wrote for it, kept as it is; synced.
    pub(super) fn as_written(record: &JournalRecord, text: String) -> Line {
        let mut bytes = text.into_bytes();
        bytes.push(b'\n');
        Line {
            bytes,
            key: (record.change_id.clone(), record.time),
            indexed: super::recent::indexed(record.kind),
            use_of_change: ChangeUse::of(record, 0),
            vm: record.vm.clone(),
            sync: true,
        }
    }
}

/// One line to append, and where its outcome goes.
struct Job {
    line: Line,
    done: Done,
}

/// Where a caller waits for its line's outcome.
enum Done {
    Async(tokio::sync::oneshot::Sender<Result<(), JournalError>>),
    Blocking(mpsc::SyncSender<Result<(), JournalError>>),
}

impl Done {
    fn send(self, outcome: Result<(), JournalError>) {
        // A caller that stopped waiting (a dropped future) no longer needs its answer.
        let _ = match self {
            Done::Async(tx) => tx.send(outcome).map_err(|_| ()),
            Done::Blocking(tx) => tx.send(outcome).map_err(|_| ()),
        };
    }
}

/// The writer of one journal file; its thread starts with the first line.
#[derive(Debug)]
pub(super) struct Writer {
    path: PathBuf,
    /// The index of recent lines, told of each line written here, so it never reads them back.
    recent: Arc<Mutex<RecentLines>>,
    jobs: OnceLock<mpsc::Sender<Job>>,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Job({} bytes, sync {})",
            self.line.bytes.len(),
            self.line.sync
        )
    }
}

impl Writer {
    /// The writer of the journal at `path`, which tells `recent` of the lines it writes.
    pub(super) fn new(path: PathBuf, recent: Arc<Mutex<RecentLines>>) -> Writer {
        Writer {
            path,
            recent,
            jobs: OnceLock::new(),
        }
    }

    /// Appends `line` and waits for it on this thread. Not for a runtime's worker threads.
    pub(super) fn append(&self, line: Line) -> Result<(), JournalError> {
        let (tx, rx) = mpsc::sync_channel(1);
        self.send(Job {
            line,
            done: Done::Blocking(tx),
        })?;
        rx.recv().unwrap_or_else(|_| Err(stopped(&self.path)))
    }

    /// [`Writer::append`] without holding a thread while it waits.
    pub(super) async fn append_async(&self, line: Line) -> Result<(), JournalError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.send(Job {
            line,
            done: Done::Async(tx),
        })?;
        rx.await.unwrap_or_else(|_| Err(stopped(&self.path)))
    }

    fn send(&self, job: Job) -> Result<(), JournalError> {
        let jobs = self.jobs.get_or_init(|| {
            let (tx, rx) = mpsc::channel();
            let (path, recent) = (self.path.clone(), self.recent.clone());
            // If the thread cannot start, the sender's receiver is dropped and the send below
            // fails, which each caller is told.
            let _ = std::thread::Builder::new()
                .name("rewind-journal".into())
                .spawn(move || write_all(&path, &recent, &rx));
            tx
        });
        jobs.send(job).map_err(|_| stopped(&self.path))
    }
}

/// The writer thread: each turn takes every line waiting, writes them in one append, syncs when one
/// of them asked for it, indexes them, and tells each caller. It ends when every `Writer` of the
/// file is gone.
fn write_all(path: &std::path::Path, recent: &Mutex<RecentLines>, jobs: &mpsc::Receiver<Job>) {
    let mut journal = Appender::new(path.to_path_buf());
    let mut vm_index = vms::Writer::default();
    while let Ok(first) = jobs.recv() {
        let mut batch = vec![first];
        batch.extend(jobs.try_iter());
        let sync = batch.iter().any(|j| j.line.sync);
        let lines: Vec<u8> = batch
            .iter()
            .flat_map(|j| j.line.bytes.iter().copied())
            .collect();
        // Where the write begins and each line ends in the journal, learnt as the write is placed,
        // for the indexes.
        let ends = std::cell::RefCell::new(Vec::with_capacity(batch.len()));
        let began = std::cell::Cell::new(0u64);
        // The index is told before the write, so that a look made while it and its sync run does
        // not parse these lines back (it waits for them to be in the file); and told again if the
        // write fails and is cut back off.
        let placed = |start: u64, first_line: u64| {
            began.set(start);
            let mut at = first_line;
            let lines = batch.iter().map(|j| {
                let (change, time) = &j.line.key;
                let line =
                    j.line
                        .indexed
                        .then_some((change.as_str(), *time, at, j.line.bytes.len()));
                at += j.line.bytes.len() as u64;
                ends.borrow_mut().push(at);
                line
            });
            let lines: Vec<_> = lines.flatten().collect();
            let changes: Vec<String> = lines.iter().map(|l| l.0.to_string()).collect();
            lock(recent).written_here(start, lines);
            move || lock(recent).not_written(start, &changes)
        };
        let index = || {
            let uses: Vec<ChangeUse> = batch
                .iter()
                .zip(ends.borrow().iter())
                .filter_map(|(j, end)| {
                    let mut u = j.line.use_of_change.clone()?;
                    u.end = *end;
                    Some(u)
                })
                .collect();
            changes::append(path, &uses);
            let named: Vec<(DateTime<Utc>, &JournalVm)> =
                batch.iter().map(|j| (j.line.key.1, &j.line.vm)).collect();
            let end = ends.borrow().last().copied().unwrap_or(began.get());
            vm_index.written(path, &named, began.get(), end);
        };
        let started = std::time::Instant::now();
        let written = journal.append(&lines, sync, placed, index);
        crate::metrics::metrics().journal_written(started.elapsed());
        match written {
            Ok(()) => batch.into_iter().for_each(|j| j.done.send(Ok(()))),
            Err(e) => batch
                .into_iter()
                .for_each(|j| j.done.send(Err(e.duplicate()))),
        }
    }
}

fn lock(recent: &Mutex<RecentLines>) -> std::sync::MutexGuard<'_, RecentLines> {
    recent.lock().unwrap_or_else(|p| p.into_inner())
}

/// The error of a writer that is gone.
fn stopped(path: &std::path::Path) -> JournalError {
    JournalError::Write {
        path: path.to_path_buf(),
        source: std::io::Error::other("the journal's writer thread stopped"),
    }
}
