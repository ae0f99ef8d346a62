//! The audit journal: an append-only JSON-lines file in the XDG state dir, one record per guard and
//! one per recovery.
//!
//! Appends are safe across processes: the file is opened with `O_APPEND`, locked exclusively
//! (`File::lock`), and each record is one `write` of one line. Readers take a shared lock, so they never
//! see half a line; a line that still cannot be read (say, a crash mid-write on a full disk) is counted
//! and skipped, never fatal. A record holds no secret by construction: it is built from reports, which
//! hold none.

use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::guard::{GuardReport, Outcome, Verdict};
use crate::protection::{VmQuery, VmRef};

/// The journal cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// Opening, locking or writing failed.
    #[error(
        "cannot write the audit journal {path}: {source}; check that its folder is writable (the guard itself is done)"
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
    /// A record could not be serialized.
    #[error("cannot encode a journal record: {0}")]
    Encode(String),
}

/// What a record is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordKind {
    /// A guard.
    Guard,
    /// A bounded recover (FLR, failover test, clone).
    Recovery,
}

/// The VM of a record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalVm {
    /// Its identifier.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its IP addresses when the record was written, so a VM named by an address (as a tool's
    /// argument may name it) is recognised without asking a ZVM. Absent from older records.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ip_addresses: Vec<String>,
    /// The name of the site it runs at, so a human told apart two VMs of one name by where they
    /// run. Absent from older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site: Option<String>,
}

impl From<&VmRef> for JournalVm {
    fn from(vm: &VmRef) -> Self {
        JournalVm {
            id: vm.id.clone(),
            name: vm.name.clone(),
            ip_addresses: vm.ip_addresses.clone(),
            site: Some(vm.site.name.clone()),
        }
    }
}

/// One VPG's line of a record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalVpg {
    /// The VPG.
    pub vpg_id: String,
    /// Its name.
    pub vpg_name: String,
    /// `tagged`, `skipped`, `failed`, `still_running`, `error` (or a recovery's own words).
    pub outcome: String,
    /// The tag written (or recovered from).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// The Zerto task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// The task's state, e.g. `Completed (6)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_state: Option<String>,
    /// The checkpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_id: Option<String>,
    /// The reason of a skip, a failure's `CompleteReason`, or an error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// One record of the journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalRecord {
    /// When it was written.
    pub time: DateTime<Utc>,
    /// Guard or recovery.
    pub kind: RecordKind,
    /// Who acted.
    pub agent: String,
    /// What they did.
    pub action: String,
    /// The change id.
    pub change_id: String,
    /// The VM.
    pub vm: JournalVm,
    /// The verdict (`guarded`, `not_guarded`, `still_running`, or a recovery's).
    pub verdict: String,
    /// Each VPG.
    pub vpgs: Vec<JournalVpg>,
    /// Notes: retries, reconciliations.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Kind-specific details (a recovery's files, target and so on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<serde_json::Value>,
}

fn verdict_word(v: Verdict) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

impl JournalRecord {
    /// The record of a guard.
    pub fn from_guard(report: &GuardReport) -> JournalRecord {
        let vpgs = report
            .vpgs
            .iter()
            .map(|v| {
                let mut line = JournalVpg {
                    vpg_id: v.vpg_id.clone(),
                    vpg_name: v.vpg_name.clone(),
                    outcome: String::new(),
                    tag: None,
                    task_id: None,
                    task_state: None,
                    checkpoint_id: None,
                    detail: None,
                };
                match &v.outcome {
                    Outcome::Tagged {
                        task_id,
                        task_state,
                        checkpoint_id,
                        ..
                    } => {
                        line.outcome = "tagged".into();
                        line.tag = Some(report.tag.clone());
                        line.task_id = task_id.clone();
                        line.task_state = task_state.as_ref().map(ToString::to_string);
                        line.checkpoint_id = Some(checkpoint_id.clone());
                    }
                    Outcome::Skipped { reason } => {
                        line.outcome = "skipped".into();
                        line.detail = Some(reason.clone());
                    }
                    Outcome::Failed {
                        task_id,
                        task_state,
                        complete_reason,
                    } => {
                        line.outcome = "failed".into();
                        line.tag = Some(report.tag.clone());
                        line.task_id = Some(task_id.clone());
                        line.task_state = Some(task_state.to_string());
                        line.detail = Some(complete_reason.clone());
                    }
                    Outcome::StillRunning {
                        task_id,
                        task_state,
                        ..
                    } => {
                        line.outcome = "still_running".into();
                        line.tag = Some(report.tag.clone());
                        line.task_id = Some(task_id.clone());
                        line.task_state = task_state.as_ref().map(ToString::to_string);
                    }
                    Outcome::Error {
                        task_id, message, ..
                    } => {
                        line.outcome = "error".into();
                        line.tag = Some(report.tag.clone());
                        line.task_id = task_id.clone();
                        line.detail = Some(message.clone());
                    }
                }
                line
            })
            .collect();
        let mut notes = report.notes.clone();
        for v in &report.vpgs {
            notes.extend(v.notes.iter().map(|n| format!("{}: {n}", v.vpg_name)));
        }
        JournalRecord {
            time: Utc::now(),
            kind: RecordKind::Guard,
            agent: report.agent.clone(),
            action: report.action.clone(),
            change_id: report.change_id.clone(),
            vm: JournalVm::from(&report.vm),
            verdict: verdict_word(report.verdict),
            vpgs,
            notes,
            details: None,
        }
    }
}

/// Which records to read back.
#[derive(Debug, Clone, Default)]
pub struct JournalFilter {
    /// Only records of this VM, matched as find_protection matches a query ([`VmQuery`]): name
    /// (case-insensitive), identifier, host name (its first label) or IP address.
    pub vm: Option<String>,
    /// Only records of this change id.
    pub change_id: Option<String>,
    /// Only the last `n` matching records.
    pub last: Option<usize>,
}

impl JournalFilter {
    /// The filter made ready to test many records.
    fn matcher(&self) -> RecordMatcher<'_> {
        RecordMatcher {
            vm: self.vm.as_deref().map(VmQuery::new),
            change_id: self.change_id.as_deref().map(str::trim),
        }
    }
}

/// A [`JournalFilter`] with its VM query parsed once.
struct RecordMatcher<'a> {
    vm: Option<VmQuery>,
    change_id: Option<&'a str>,
}

impl RecordMatcher<'_> {
    fn matches(&self, r: &JournalRecord) -> bool {
        let vm_ok = self.vm.as_ref().is_none_or(|q| {
            q.matches(
                Some(&r.vm.id),
                Some(&r.vm.name),
                r.vm.ip_addresses.iter().map(String::as_str),
            )
        });
        vm_ok && self.change_id.is_none_or(|c| r.change_id == c)
    }
}

/// Records read back.
#[derive(Debug, Clone, Serialize)]
pub struct JournalRead {
    /// The journal file.
    pub path: PathBuf,
    /// Matching records, oldest first.
    pub records: Vec<JournalRecord>,
    /// Lines that could not be read and were skipped.
    pub skipped_lines: usize,
}

impl JournalRead {
    /// One line for humans: how many records were read from which file, and how many lines could not
    /// be read.
    pub fn headline(&self) -> String {
        let mut line = format!(
            "{} journal record(s) from {}",
            self.records.len(),
            self.path.display()
        );
        if self.skipped_lines > 0 {
            line.push_str(&format!(
                " ({} unreadable line(s) skipped)",
                self.skipped_lines
            ));
        }
        line
    }
}

/// What the journal says of a VM reference: [`Journal::last_guarded`].
#[derive(Debug, Clone, PartialEq)]
pub enum GuardLookup {
    /// The reference names one VM, guarded within the window: its newest `guarded` record.
    Guarded(Box<JournalRecord>),
    /// The reference names no VM of the journal, or one without a `guarded` record within the window.
    NotGuarded,
    /// The reference matches records of more than one VM (each listed once, as its newest record
    /// names it), so the journal cannot tell which one is meant.
    Ambiguous(Vec<JournalVm>),
}

impl GuardLookup {
    /// The guarded record, when the reference names one VM guarded within the window.
    pub fn guarded(&self) -> Option<&JournalRecord> {
        match self {
            GuardLookup::Guarded(r) => Some(r),
            _ => None,
        }
    }
}

impl std::fmt::Display for JournalVm {
    /// `build-agent at Boston (s1.vm-3, 10.0.0.5)`: the name and site, then the identifier and
    /// addresses that tell it from another VM of the same name.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name)?;
        if let Some(site) = &self.site {
            write!(f, " at {site}")?;
        }
        write!(f, " ({}", self.id)?;
        for ip in &self.ip_addresses {
            write!(f, ", {ip}")?;
        }
        f.write_str(")")
    }
}

/// The audit journal.
#[derive(Debug, Clone)]
pub struct Journal {
    path: PathBuf,
}

impl Journal {
    /// A journal kept at `path` (created, with its folder, on the first append).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Journal { path: path.into() }
    }

    /// The journal file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record as one line.
    pub fn append(&self, record: &JournalRecord) -> Result<(), JournalError> {
        let mut line =
            serde_json::to_string(record).map_err(|e| JournalError::Encode(e.to_string()))?;
        line.push('\n');
        let err = |source| JournalError::Write {
            path: self.path.clone(),
            source,
        };
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(err)?;
        }
        let mut options = OpenOptions::new();
        options.create(true).append(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            // The journal names VMs and changes: readable by its owner only.
            options.mode(0o600);
        }
        let mut file = options.open(&self.path).map_err(err)?;
        file.lock().map_err(err)?;
        // One write of one whole line, at the end (O_APPEND), under the lock.
        let written = file.write_all(line.as_bytes()).and_then(|_| file.flush());
        let _ = file.unlock();
        written.map_err(err)
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
        // A window that reaches past what the calendar can hold reaches back to every record.
        let since = chrono::Duration::from_std(within)
            .ok()
            .and_then(|w| Utc::now().checked_sub_signed(w))
            .unwrap_or(DateTime::<Utc>::MIN_UTC);
        let read = self.read(&JournalFilter {
            vm: Some(vm.to_string()),
            ..Default::default()
        })?;
        let mut vms: Vec<JournalVm> = Vec::new();
        for r in &read.records {
            match vms.iter_mut().find(|v| v.id == r.vm.id) {
                // The newest record of a VM names it as it is now.
                Some(known) => *known = r.vm.clone(),
                None => vms.push(r.vm.clone()),
            }
        }
        if vms.len() > 1 {
            return Ok(GuardLookup::Ambiguous(vms));
        }
        Ok(read
            .records
            .into_iter()
            .filter(|r| r.kind == RecordKind::Guard && r.verdict == "guarded" && r.time >= since)
            .max_by_key(|r| r.time)
            .map_or(GuardLookup::NotGuarded, |r| {
                GuardLookup::Guarded(Box::new(r))
            }))
    }

    /// Reads back the records that match `filter`.
    pub fn read(&self, filter: &JournalFilter) -> Result<JournalRead, JournalError> {
        let err = |source| JournalError::Read {
            path: self.path.clone(),
            source,
        };
        let file = match std::fs::File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(JournalRead {
                    path: self.path.clone(),
                    records: Vec::new(),
                    skipped_lines: 0,
                });
            }
            Err(e) => return Err(err(e)),
        };
        file.lock_shared().map_err(err)?;
        let matcher = filter.matcher();
        let mut records = Vec::new();
        let mut skipped_lines = 0;
        // Split on bytes, not `lines()`: a line torn inside a multi-byte character is not UTF-8, and
        // must be skipped like any other unreadable line rather than end the whole read.
        for line in BufReader::new(&file).split(b'\n') {
            let line = line.map_err(err)?;
            if line.trim_ascii().is_empty() {
                continue;
            }
            match serde_json::from_slice::<JournalRecord>(&line) {
                Ok(r) if matcher.matches(&r) => records.push(r),
                Ok(_) => {}
                Err(_) => skipped_lines += 1,
            }
        }
        let _ = file.unlock();
        if let Some(n) = filter.last {
            let drop = records.len().saturating_sub(n);
            records.drain(..drop);
        }
        Ok(JournalRead {
            path: self.path.clone(),
            records,
            skipped_lines,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(vm: &str, change: &str) -> JournalRecord {
        JournalRecord {
            time: Utc::now(),
            kind: RecordKind::Guard,
            agent: "claude".into(),
            action: "edit".into(),
            change_id: change.into(),
            vm: JournalVm {
                id: format!("s.{vm}"),
                name: vm.into(),
                ip_addresses: Vec::new(),
                site: None,
            },
            verdict: "guarded".into(),
            vpgs: vec![],
            notes: vec![],
            details: None,
        }
    }

    #[test]
    fn a_journal_vm_names_its_site_so_two_vms_of_one_name_can_be_told_apart() {
        let mut vm = record("build-agent", "c").vm;
        vm.ip_addresses = vec!["10.0.0.5".into()];
        vm.site = Some("Denver".into());
        assert_eq!(
            vm.to_string(),
            "build-agent at Denver (s.build-agent, 10.0.0.5)"
        );
        vm.site = None;
        assert_eq!(vm.to_string(), "build-agent (s.build-agent, 10.0.0.5)");
    }

    #[test]
    fn appended_records_read_back_filtered_by_vm_and_change() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::new(dir.path().join("state").join("journal.jsonl"));
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
                last: None,
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

    /// A journal of two good records of web-01 (c1, c2) with `torn` written as a line between them.
    fn journal_with_line_between(torn: &[u8]) -> (tempfile::TempDir, Journal) {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::new(dir.path().join("journal.jsonl"));
        j.append(&record("web-01", "c1")).unwrap();
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
        let j = Journal::new(dir.path().join("journal.jsonl"));
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
        let j = Journal::new(dir.path().join("journal.jsonl"));
        let mut old = record("web-01", "old");
        old.time = Utc::now() - chrono::Duration::hours(2);
        j.append(&old).unwrap();
        let mut refused = record("web-01", "refused");
        refused.verdict = "not_guarded".into();
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
        let j = Journal::new(dir.path().join("journal.jsonl"));
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
        let j = Journal::new(dir.path().join("journal.jsonl"));
        let window = std::time::Duration::from_secs(900);
        // Two VMs named build-agent, one at each site; only the Denver one is guarded, and the
        // Boston one's record is old and refused, yet it still makes the name ambiguous.
        let mut boston = record("build-agent", "old");
        boston.vm.id = "boston.vm-3".into();
        boston.vm.ip_addresses = vec!["10.0.0.7".into()];
        boston.verdict = "not_guarded".into();
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
    fn a_record_written_before_ip_addresses_were_kept_still_reads() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::new(dir.path().join("journal.jsonl"));
        std::fs::write(
            j.path(),
            r#"{"time":"2026-01-01T00:00:00Z","kind":"guard","agent":"a","action":"b","change_id":"c","vm":{"id":"s.web-01","name":"web-01"},"verdict":"guarded","vpgs":[]}
"#,
        )
        .unwrap();
        let read = j.read(&JournalFilter::default()).unwrap();
        assert_eq!(read.records.len(), 1);
        assert!(read.records[0].vm.ip_addresses.is_empty());
    }

    #[test]
    fn a_missing_journal_reads_as_empty() {
        let dir = tempfile::tempdir().unwrap();
        let read = Journal::new(dir.path().join("none.jsonl"))
            .read(&JournalFilter::default())
            .unwrap();
        assert!(read.records.is_empty());
    }

    #[test]
    fn concurrent_appenders_write_whole_lines() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::new(dir.path().join("journal.jsonl"));
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
}
