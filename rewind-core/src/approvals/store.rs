//! The held-call store: one file of lines beside the journal (`held-calls.jsonl`, 0600), each a
//! transition naming who made it, appended under an exclusive lock and synced before it is acted
//! on, so that two processes (a stdio gateway and `rewind approvals approve`) never both use one
//! approval. A call's present state is its lines folded, and the clock: a held call or an approval
//! past its time has expired, said in a line of its own when the store is next written.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::call::{CallToHold, Decision, HeldCall, HeldState, Run, Standing};
use super::error::ApprovalError;
use crate::arguments_key::ArgumentsKey;
use crate::audit_journal::{AuditJournal, Person, SharedLog};
use crate::config::ApprovalSettings;
use crate::local_state::{LOCK_WAIT, LockMode, lock, open_private};

/// The store's file, in the journal's folder.
pub const HELD_CALLS_FILE: &str = "held-calls.jsonl";

/// The longest comment kept with a decision.
const MAX_COMMENT: usize = 2_000;

/// The held calls of one state folder, or of a team's journal database.
#[derive(Clone)]
pub struct HeldCalls {
    path: PathBuf,
    catalog: PathBuf,
    settings: ApprovalSettings,
    key: Arc<OnceLock<ArgumentsKey>>,
    /// The log every replica of a team server shares, when its journal is in a database: it
    /// stands for the file then.
    shared: Option<(SharedLog, AuditJournal)>,
}

/// The name of the held calls' log in a journal's database.
const SHARED_LOG: &str = "held-calls";

/// Where a transition's line goes: the file (written and synced at once), or the lines a shared
/// log commits once the work is done.
enum Sink<'a> {
    File(&'a mut File),
    Lines(&'a mut Vec<String>),
}

impl std::fmt::Debug for HeldCalls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeldCalls")
            .field("path", &self.path)
            .finish()
    }
}

/// One line of the store.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
enum Line {
    /// A call held: everything about it, its raw arguments too.
    Held {
        call: Box<HeldCall>,
        arguments: serde_json::Value,
    },
    /// A person's decision.
    Decided {
        id: String,
        time: DateTime<Utc>,
        approved: bool,
        by: Person,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        comment: Option<String>,
    },
    /// Nobody decided in time, or the approval went unused.
    Expired { id: String, time: DateTime<Utc> },
    /// The approval used: written before the call runs.
    Used {
        id: String,
        time: DateTime<Utc>,
        allowed: bool,
    },
    /// How the call ended.
    Ran {
        id: String,
        time: DateTime<Utc>,
        summary: String,
        failed: bool,
    },
    /// A line of a newer version.
    #[serde(other)]
    Other,
}

/// The store's calls, in the order they were held, each with its raw arguments.
#[derive(Debug, Default)]
struct Folded {
    calls: Vec<(HeldCall, serde_json::Value)>,
    by_id: HashMap<String, usize>,
    /// The calls whose expiry is a line already.
    expiry_written: std::collections::HashSet<String>,
}

impl HeldCalls {
    /// The store kept in `folder` (the journal's), with the catalog file whose digest binds each
    /// approval, under `settings`.
    pub fn new(folder: &Path, catalog: &Path, settings: ApprovalSettings) -> HeldCalls {
        HeldCalls {
            path: folder.join(HELD_CALLS_FILE),
            catalog: catalog.to_path_buf(),
            settings,
            key: Arc::default(),
            shared: None,
        }
    }

    /// The store of `config`: where `journal` is (beside its file, or in its database for every
    /// replica), bound to its catalog, under its `[approvals]`.
    pub fn of(config: &crate::config::Config, journal: &AuditJournal) -> HeldCalls {
        let folder = config.journal_path.parent().unwrap_or(Path::new("."));
        let store = HeldCalls::new(folder, &config.catalog_path, config.approvals.clone());
        HeldCalls {
            shared: journal
                .shared_log(SHARED_LOG)
                .map(|log| (log, journal.clone())),
            ..store
        }
    }

    /// The file (unused when the calls are kept in a journal's database: see
    /// [`HeldCalls::place`]).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the calls are kept, in words.
    pub fn place(&self) -> String {
        match &self.shared {
            Some((log, _)) => log.place(),
            None => self.path.display().to_string(),
        }
    }

    /// The settings it holds calls under.
    pub fn settings(&self) -> &ApprovalSettings {
        &self.settings
    }

    /// What becomes of `call`: held anew, still held, run on its approval (the use synced first),
    /// denied, or already run. `by_host` says a host runs it once allowed (a hook's call), not
    /// this process. Blocks on the file: off the runtime.
    pub fn ask(&self, call: CallToHold, by_host: bool) -> Result<Standing, ApprovalError> {
        let probe = self.held(call)?;
        self.locked(|file, folded, now| {
            let newest = folded
                .calls
                .iter()
                .rev()
                .map(|(c, _)| c)
                .find(|c| c.binds(&probe.0));
            let standing: fn(HeldCall) -> Standing =
                match newest.map(|c| (c.state, c.expires >= now)) {
                    Some((HeldState::Approved, _)) => {
                        let id = newest.map(|c| c.id.clone()).unwrap_or_default();
                        let line = Line::Used {
                            id,
                            time: now,
                            allowed: by_host,
                        };
                        return self.append(file, folded, line).map(Standing::Run);
                    }
                    Some((HeldState::Held, _)) => Standing::StillHeld,
                    Some((HeldState::Denied, true)) => Standing::Denied,
                    Some((HeldState::Executed | HeldState::Allowed, true)) => Standing::AlreadyRan,
                    _ => {
                        self.room_for(folded, &probe.0)?;
                        let (call, arguments) = probe;
                        let line = Line::Held {
                            call: Box::new(call),
                            arguments,
                        };
                        return self.append(file, folded, line).map(Standing::NewlyHeld);
                    }
                };
            Ok(standing(
                newest.cloned().expect("a standing of a call found"),
            ))
        })
    }

    /// A person's decision on held call `id`. Blocks on the file: off the runtime.
    pub fn decide(
        &self,
        id: &str,
        by: &Person,
        approved: bool,
        comment: Option<String>,
    ) -> Result<HeldCall, ApprovalError> {
        let comment = comment
            .map(|c| c.trim().to_owned())
            .filter(|c| !c.is_empty());
        if let Some(c) = &comment
            && c.chars().count() > MAX_COMMENT
        {
            return Err(ApprovalError::LongComment(c.chars().count()));
        }
        self.locked(|file, folded, now| {
            let call = found(folded, id)?;
            if call.state != HeldState::Held {
                return Err(ApprovalError::NotHeld {
                    id: id.to_owned(),
                    state: call.state,
                });
            }
            if approved && call.four_eyes && call.requester.subject == by.subject {
                return Err(ApprovalError::FourEyes {
                    id: id.to_owned(),
                    requester: call.requested_by().to_owned(),
                    tool: call.tool.clone(),
                });
            }
            let took = (now - call.created).to_std().unwrap_or_default();
            crate::metrics::metrics().approval_decided(approved, took);
            let by = by.clone();
            let line = Line::Decided {
                id: id.to_owned(),
                time: now,
                approved,
                by,
                comment,
            };
            self.append(file, folded, line)
        })
    }

    /// How the call run on `id`'s approval ended.
    pub fn ran(&self, id: &str, summary: &str, failed: bool) -> Result<HeldCall, ApprovalError> {
        self.locked(|file, folded, now| {
            found(folded, id)?;
            let (id, summary) = (id.to_owned(), summary.to_owned());
            self.append(
                file,
                folded,
                Line::Ran {
                    id,
                    time: now,
                    summary,
                    failed,
                },
            )
        })
    }

    /// Every call, those still held first (oldest first), then the others (newest first).
    pub fn list(&self) -> Result<Vec<HeldCall>, ApprovalError> {
        let mut calls: Vec<HeldCall> = self.read()?.calls.into_iter().map(|(c, _)| c).collect();
        calls.reverse();
        calls.sort_by_key(|c| match c.state {
            HeldState::Held => (0, c.created.timestamp_micros()),
            _ => (1, 0),
        });
        Ok(calls)
    }

    /// Call `id` with its raw arguments: for approvers only.
    pub fn get(&self, id: &str) -> Result<(HeldCall, serde_json::Value), ApprovalError> {
        let mut folded = self.read()?;
        let at = *folded
            .by_id
            .get(id)
            .ok_or_else(|| ApprovalError::NotFound(id.to_owned()))?;
        Ok(folded.calls.swap_remove(at))
    }

    /// `call` as a held call, not yet written.
    fn held(&self, call: CallToHold) -> Result<(HeldCall, serde_json::Value), ApprovalError> {
        let now = Utc::now();
        let key = self.key()?;
        let catalog_sha256 = catalog_digest(&self.catalog).map_err(|e| self.fault(e))?;
        let held = HeldCall {
            id: format!("h-{}", hex::encode(rand::random::<[u8; 6]>())),
            arguments_hmac: key.digest(&call.arguments),
            catalog_sha256,
            four_eyes: self.settings.four_eyes.applies_to(&call.tool),
            created: now,
            expires: now + self.expire_after(),
            state: HeldState::Held,
            decision: None,
            run: None,
            requester: call.requester,
            agent: call.agent,
            server: call.server,
            tool: call.tool,
            vm: call.vm,
            what: call.what,
        };
        Ok((held, call.arguments))
    }

    /// Refuses a new held call of a requester who has as many waiting as they may.
    fn room_for(&self, folded: &Folded, call: &HeldCall) -> Result<(), ApprovalError> {
        let max = self.settings.max_held_per_person;
        let waiting = folded
            .calls
            .iter()
            .filter(|(c, _)| c.state == HeldState::Held)
            .filter(|(c, _)| c.requester.subject == call.requester.subject)
            .count();
        match waiting < max {
            true => Ok(()),
            false => Err(ApprovalError::TooMany {
                who: call.requested_by().to_owned(),
                max,
            }),
        }
    }

    fn expire_after(&self) -> chrono::Duration {
        chrono::Duration::from_std(self.settings.expire_after).unwrap_or(chrono::Duration::MAX)
    }

    fn key(&self) -> Result<ArgumentsKey, ApprovalError> {
        if let Some(key) = self.key.get() {
            return Ok(key.clone());
        }
        let key = match &self.shared {
            Some((_, journal)) => journal.arguments_key(),
            None => ArgumentsKey::kept_in(self.path.parent().unwrap_or(Path::new("."))),
        }
        .map_err(|e| self.fault(e))?;
        Ok(self.key.get_or_init(|| key).clone())
    }

    /// The store read under a shared lock; empty when there is no file yet.
    fn read(&self) -> Result<Folded, ApprovalError> {
        if let Some((log, _)) = &self.shared {
            let lines = log.lines().map_err(|e| self.fault(e))?;
            return self.folded(lines.iter().map(String::as_str), Utc::now());
        }
        let mut file = match File::open(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Folded::default()),
            Err(e) => return Err(self.fault(e)),
        };
        lock(&file, &self.path, LockMode::Shared, LOCK_WAIT).map_err(|e| self.fault(e))?;
        let (folded, _) = self.fold(&mut file, Utc::now())?;
        Ok(folded)
    }

    /// Runs `work` on the store under an exclusive lock, after writing the expiries due.
    fn locked<T>(
        &self,
        work: impl FnOnce(&mut Sink<'_>, &mut Folded, DateTime<Utc>) -> Result<T, ApprovalError>,
    ) -> Result<T, ApprovalError> {
        if let Some((log, _)) = &self.shared {
            let done = log.locked(|lines, appended| {
                let now = Utc::now();
                let mut folded = self.folded(lines.iter().map(String::as_str), now)?;
                let mut sink = Sink::Lines(appended);
                self.write_expiries(&mut sink, &mut folded, now)?;
                work(&mut sink, &mut folded, now)
            });
            return done.map_err(|e| self.fault(e))?;
        }
        let mut options = OpenOptions::new();
        options.read(true).append(true).create(true);
        let mut file = open_private(&self.path, &mut options, true).map_err(|e| self.fault(e))?;
        lock(&file, &self.path, LockMode::Exclusive, LOCK_WAIT).map_err(|e| self.fault(e))?;
        let now = Utc::now();
        let (mut folded, whole) = self.fold(&mut file, now)?;
        if let Some(len) = whole {
            // A line cut short by a crash: cut it off, so that the next line starts clean.
            file.set_len(len).map_err(|e| self.fault(e))?;
        }
        let mut sink = Sink::File(&mut file);
        self.write_expiries(&mut sink, &mut folded, now)?;
        work(&mut sink, &mut folded, now)
    }

    /// Writes an `expired` line for each call whose time ran out since the store was last written.
    fn write_expiries(
        &self,
        file: &mut Sink<'_>,
        folded: &mut Folded,
        now: DateTime<Utc>,
    ) -> Result<(), ApprovalError> {
        let lapsed: Vec<String> = folded
            .calls
            .iter()
            .filter(|(c, _)| c.state == HeldState::Expired)
            .filter(|(c, _)| !folded.expiry_written.contains(&c.id))
            .map(|(c, _)| c.id.clone())
            .collect();
        for id in lapsed {
            crate::metrics::metrics().approval_expired();
            self.append(file, folded, Line::Expired { id, time: now })?;
        }
        Ok(())
    }

    /// Appends `line`, synced, and folds it in; the call it names as it now stands.
    fn append(
        &self,
        sink: &mut Sink<'_>,
        folded: &mut Folded,
        line: Line,
    ) -> Result<HeldCall, ApprovalError> {
        let text = serde_json::to_string(&line).expect("a line always writes as JSON");
        match sink {
            Sink::File(file) => file
                .write_all(format!("{text}\n").as_bytes())
                .and_then(|()| file.sync_data())
                .map_err(|e| self.fault(e))?,
            Sink::Lines(lines) => lines.push(text),
        }
        if matches!(line, Line::Held { .. }) {
            crate::metrics::metrics().approval_held();
        }
        let id = apply(folded, line, self.expire_after());
        let at = folded.by_id[&id];
        Ok(folded.calls[at].0.clone())
    }

    /// The file's lines folded at `now`, and the length to cut it to when its last line is partial.
    fn fold(
        &self,
        file: &mut File,
        now: DateTime<Utc>,
    ) -> Result<(Folded, Option<u64>), ApprovalError> {
        let mut text = String::new();
        file.seek(SeekFrom::Start(0))
            .and_then(|_| file.read_to_string(&mut text))
            .map_err(|e| self.fault(e))?;
        let whole = text.rfind('\n').map_or(0, |i| i + 1);
        let folded = self.folded(text[..whole].lines(), now)?;
        let partial = (whole < text.len()).then_some(whole as u64);
        Ok((folded, partial))
    }

    /// `lines` folded at `now`.
    fn folded<'l>(
        &self,
        lines: impl Iterator<Item = &'l str>,
        now: DateTime<Utc>,
    ) -> Result<Folded, ApprovalError> {
        let mut folded = Folded::default();
        for (n, raw) in lines.enumerate() {
            let line: Line = serde_json::from_str(raw).map_err(|e| ApprovalError::Store {
                path: self.place(),
                why: format!(
                    "line {} cannot be read ({e}); it was not written by rewind",
                    n + 1
                ),
            })?;
            apply(&mut folded, line, self.expire_after());
        }
        for (call, _) in &mut folded.calls {
            lapse(call, now);
        }
        Ok(folded)
    }

    fn fault(&self, e: impl std::fmt::Display) -> ApprovalError {
        ApprovalError::Store {
            path: self.place(),
            why: e.to_string(),
        }
    }
}

/// Folds `line` into `folded`; the id of the call it names (empty for a line of a newer version).
fn apply(folded: &mut Folded, line: Line, expire_after: chrono::Duration) -> String {
    let id = match &line {
        Line::Held { call, .. } => call.id.clone(),
        Line::Decided { id, .. }
        | Line::Expired { id, .. }
        | Line::Used { id, .. }
        | Line::Ran { id, .. } => id.clone(),
        Line::Other => return String::new(),
    };
    if let Line::Held { call, arguments } = line {
        folded.by_id.insert(id.clone(), folded.calls.len());
        folded.calls.push((*call, arguments));
        return id;
    }
    if matches!(line, Line::Expired { .. }) {
        folded.expiry_written.insert(id.clone());
    }
    let Some(&at) = folded.by_id.get(&id) else {
        return id;
    };
    let c = &mut folded.calls[at].0;
    match line {
        Line::Decided {
            time,
            approved,
            by,
            comment,
            ..
        } => {
            c.state = if approved {
                HeldState::Approved
            } else {
                HeldState::Denied
            };
            c.expires = time + expire_after;
            c.decision = Some(Decision {
                approved,
                by,
                at: time,
                comment,
            });
        }
        Line::Expired { .. } => c.state = HeldState::Expired,
        Line::Used { time, allowed, .. } => {
            c.state = if allowed {
                HeldState::Allowed
            } else {
                HeldState::Executed
            };
            c.expires = time + expire_after;
            c.run = Some(Run {
                at: time,
                allowed,
                summary: None,
                failed: false,
            });
        }
        Line::Ran {
            summary, failed, ..
        } => {
            if let Some(run) = &mut c.run {
                run.summary = Some(summary);
                run.failed = failed;
            }
        }
        Line::Held { .. } | Line::Other => {}
    }
    id
}

/// A held call or an unused approval past its time has expired.
fn lapse(call: &mut HeldCall, now: DateTime<Utc>) {
    if matches!(call.state, HeldState::Held | HeldState::Approved) && call.expires < now {
        call.state = HeldState::Expired;
    }
}

fn found<'f>(folded: &'f Folded, id: &str) -> Result<&'f HeldCall, ApprovalError> {
    folded
        .by_id
        .get(id)
        .map(|&at| &folded.calls[at].0)
        .ok_or_else(|| ApprovalError::NotFound(id.to_owned()))
}

/// The SHA-256, in hex, of the catalog file's bytes (of nothing, when there is no file yet).
pub fn catalog_digest(path: &Path) -> std::io::Result<String> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e),
    };
    Ok(hex::encode(Sha256::digest(&bytes)))
}
