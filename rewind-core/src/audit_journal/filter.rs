//! Which records to read back: a filter by VM, change, person and time, the time a person writes
//! (`since_of`), the start of a window ending now, and what a read gives back.

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::record::JournalRecord;
use crate::vm::VmQuery;

/// Which records to read back.
#[derive(Debug, Clone, Default)]
pub struct JournalFilter {
    /// Only records of this VM, matched as find_protection matches a query ([`VmQuery`]): name
    /// (case-insensitive), identifier, host name (its first label) or IP address.
    pub vm: Option<String>,
    /// Only records of this change id.
    pub change_id: Option<String>,
    /// Only records made for this person: their subject, or their name in any case ([`Person`]).
    pub person: Option<String>,
    /// Only records written at or after this time: found by bisecting the file, which is in time
    /// order within a small slack, so a journal of years is not read whole.
    pub since: Option<DateTime<Utc>>,
    /// Only the last `n` matching records.
    pub last: Option<usize>,
}

/// A time to read the journal from, as a person writes it: RFC 3339 (`2026-12-01T08:00:00Z`), a
/// day (`2026-12-01`, from its midnight UTC), or a time ago (`90m`, `12h`, `7d`).
pub fn since_of(text: &str) -> Result<DateTime<Utc>, String> {
    let text = text.trim();
    if let Ok(time) = DateTime::parse_from_rfc3339(text) {
        return Ok(time.with_timezone(&Utc));
    }
    if let Ok(day) = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return Ok(day.and_time(chrono::NaiveTime::MIN).and_utc());
    }
    let ago = text
        .char_indices()
        .last()
        .and_then(|(at, unit)| {
            let n: i64 = text[..at].parse().ok()?;
            match unit {
                'm' => chrono::Duration::try_minutes(n),
                'h' => chrono::Duration::try_hours(n),
                'd' => chrono::Duration::try_days(n),
                _ => None,
            }
        })
        .and_then(|d| Utc::now().checked_sub_signed(d));
    ago.ok_or_else(|| {
        format!(
            "{text:?} is not a time: give 2026-12-01T08:00:00Z, a day (2026-12-01), or a time ago (90m, 12h, 7d)"
        )
    })
}

impl JournalFilter {
    /// The texts a line must hold one of to be parsed at all: a VM query's words, or the change
    /// id as JSON writes it. `None` when every line must be parsed.
    pub(super) fn prefilter(&self) -> Option<Vec<Vec<u8>>> {
        if let Some(change) = self.change_id.as_deref() {
            let quoted = serde_json::to_string(change.trim()).ok()?;
            return Some(vec![format!("\"change_id\":{quoted}").into_bytes()]);
        }
        let vm = self.vm.as_deref()?.trim();
        // Lines are compared lowercased in ASCII only: a name in other letters is parsed as is.
        if !vm.is_ascii() {
            return None;
        }
        let query = VmQuery::new(vm);
        Some(query.keys().map(|k| k.as_bytes().to_vec()).collect())
    }

    /// The filter made ready to test many records.
    pub(super) fn matcher(&self) -> RecordMatcher<'_> {
        RecordMatcher {
            vm: self.vm.as_deref().map(VmQuery::new),
            change_id: self.change_id.as_deref().map(str::trim),
            person: self.person.as_deref(),
        }
    }
}

/// A [`JournalFilter`] with its VM query parsed once.
pub(super) struct RecordMatcher<'a> {
    vm: Option<VmQuery>,
    change_id: Option<&'a str>,
    person: Option<&'a str>,
}

impl RecordMatcher<'_> {
    pub(super) fn matches(&self, r: &JournalRecord) -> bool {
        let vm_ok = self.vm.as_ref().is_none_or(|q| r.vm.answers_to(q));
        let person_ok = self
            .person
            .is_none_or(|who| r.person.as_ref().is_some_and(|p| p.answers_to(who)));
        vm_ok && self.change_id.is_none_or(|c| r.change_id == c) && person_ok
    }
}

/// Records read back.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct JournalRead {
    /// The journal file; left out where the reader is on another machine (a team server's
    /// caller), whom this machine's paths do not concern.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// Matching records, oldest first.
    pub records: Vec<JournalRecord>,
    /// Lines that could not be read and were skipped.
    pub skipped_lines: usize,
}

impl JournalRead {
    /// One line for humans: how many records were read from which file, and how many lines could not
    /// be read.
    pub fn headline(&self) -> String {
        let from = match &self.path {
            Some(path) => path.display().to_string(),
            None => "the server's journal".to_owned(),
        };
        let mut line = format!("{} journal record(s) from {from}", self.records.len());
        if self.skipped_lines > 0 {
            line.push_str(&format!(
                " ({} unreadable line(s) skipped)",
                self.skipped_lines
            ));
        }
        line
    }
}

/// The start of a window of `within` that ends now; a window that reaches past what the calendar can
/// hold reaches back to every record.
pub(super) fn window_start(within: std::time::Duration) -> DateTime<Utc> {
    chrono::Duration::from_std(within)
        .ok()
        .and_then(|w| Utc::now().checked_sub_signed(w))
        .unwrap_or(DateTime::<Utc>::MIN_UTC)
}
