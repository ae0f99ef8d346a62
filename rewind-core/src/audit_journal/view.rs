//! What a hook elsewhere needs of a journal (a team server's, read by its users' hooks), kept up as
//! the journal grows: each look reads only the lines appended since the last one. For each VM, the
//! newest line of each name and set of addresses it has had, its newest `guarded` record, and the
//! `protection_changed` records since.

use std::collections::HashMap;
use std::fs::File;
use std::path::Path;

use chrono::{DateTime, Utc};

use super::error::JournalError;
use super::file::{FileId, WholeLines, file_id};
use super::record::{JournalRecord, RecordKind};
use super::verdict::JournalVerdict;

/// The view, and how far into which file it has read.
#[derive(Debug, Default)]
pub struct GuardsView {
    file: Option<FileId>,
    read_to: u64,
    /// The newest line of each (VM, name, addresses), with the order it came in.
    named: HashMap<(String, String, Vec<String>), (u64, JournalRecord)>,
    /// The newest `guarded` record of each VM.
    guarded: HashMap<String, (u64, JournalRecord)>,
    /// The `protection_changed` records of each VM since its newest `guarded` record.
    changed: HashMap<String, Vec<(u64, JournalRecord)>>,
    /// Lines read, to order the answer as the journal does.
    seen: u64,
}

impl GuardsView {
    /// Reads what `journal` gained since the last look (all of it the first time, or when it was
    /// replaced or cut).
    pub fn refresh(&mut self, journal: &Path) -> Result<(), JournalError> {
        let err = |source| JournalError::Read {
            path: journal.to_path_buf(),
            source,
        };
        let file = match File::open(journal) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                *self = GuardsView::default();
                return Ok(());
            }
            Err(e) => return Err(err(e)),
        };
        let meta = file.metadata().map_err(err)?;
        let id = file_id(&meta);
        if self.file != Some(id) || meta.len() < self.read_to {
            *self = GuardsView {
                file: Some(id),
                ..GuardsView::default()
            };
        }
        let mut lines = WholeLines::from(file, self.read_to).map_err(err)?;
        while let Some((line, _, end)) = lines.next_line().map_err(err)? {
            self.read_to = end;
            if let Ok(record) = serde_json::from_slice::<JournalRecord>(line) {
                self.add(record);
            }
        }
        Ok(())
    }

    /// Takes rows of a journal in PostgreSQL, each after its `seq`, in order: the view then has
    /// read to the last one's.
    pub(super) fn took_rows(&mut self, rows: Vec<(i64, String)>) {
        for (seq, line) in rows {
            self.read_to = seq as u64;
            if let Ok(record) = serde_json::from_str::<JournalRecord>(&line) {
                self.add(record);
            }
        }
    }

    fn add(&mut self, r: JournalRecord) {
        self.seen += 1;
        if r.kind == RecordKind::Guard && r.verdict == JournalVerdict::Guarded {
            self.guarded.insert(r.vm.id.clone(), (self.seen, r.clone()));
            self.changed.remove(&r.vm.id);
        }
        if r.kind == RecordKind::ProtectionChanged {
            let since_guard = self.changed.entry(r.vm.id.clone()).or_default();
            since_guard.push((self.seen, r.clone()));
        }
        let mut ips = r.vm.ip_addresses.clone();
        ips.sort_unstable();
        let key = (r.vm.id.clone(), r.vm.name.to_lowercase(), ips);
        self.named.insert(key, (self.seen, r));
    }

    /// How far into the journal the view has read.
    pub fn read_to(&self) -> u64 {
        self.read_to
    }

    /// The records of the view, in journal order: every VM's namings, and its newest `guarded`
    /// record and the `protection_changed` records since it, when written in the last `within`.
    pub fn records(&self, within: std::time::Duration) -> Vec<JournalRecord> {
        let since: DateTime<Utc> = super::filter::window_start(within);
        let recent = |(_, r): &&(u64, JournalRecord)| r.time >= since;
        let mut chosen: Vec<&(u64, JournalRecord)> = self
            .named
            .values()
            .chain(self.guarded.values().filter(recent))
            .chain(self.changed.values().flatten().filter(recent))
            .collect();
        chosen.sort_by_key(|(n, _)| *n);
        chosen.dedup_by_key(|(n, _)| *n);
        chosen.into_iter().map(|(_, r)| r.clone()).collect()
    }
}
