//! `rewind journal`: the audit journal, read back. It reads only the journal file.

use rewind_core::audit_journal::{JournalRead, RecordKind};
use rewind_core::{AuditJournal, JournalFilter, JournalRecord};

use crate::commands::protection::when;
use crate::exit::CliError;
use crate::output::{Reply, Table};

/// The result is the core's `JournalRead`: the file, the matching records oldest first, and how many
/// unreadable lines were skipped.
pub fn journal(journal: &AuditJournal, filter: &JournalFilter) -> Result<Reply, CliError> {
    let read = journal.read(filter)?;
    Reply::new(&read, journal_text(&read))
}

/// How a record's VPGs ended, counted: `2 tagged, 1 skipped`.
fn vpg_counts(r: &JournalRecord) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for v in &r.vpgs {
        match counts.iter_mut().find(|(o, _)| *o == v.outcome) {
            Some((_, n)) => *n += 1,
            None => counts.push((v.outcome.clone(), 1)),
        }
    }
    counts
        .iter()
        .map(|(o, n)| format!("{n} {o}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Audit journal records as people read them: one row per record, then the core's headline (how many, from
/// which file, how many lines could not be read).
pub fn journal_text(read: &JournalRead) -> String {
    if read.records.is_empty() {
        let path = read.path.as_deref().unwrap_or(std::path::Path::new("?"));
        return format!("no matching record in the journal {}\n", path.display());
    }
    // The PERSON column is for a team server's journal; a journal of one user's guards has none.
    let people = read.records.iter().any(|r| r.person.is_some());
    // The SITES column, for a guard that asked only some sites (`--site`, or sites that were down).
    let some_sites = read.records.iter().any(|r| r.sites.is_some());
    let mut heads = vec![
        "TIME", "KIND", "VM", "CHANGE", "VERDICT", "VPGS", "AGENT", "ACTION",
    ];
    if people {
        heads.insert(6, "PERSON");
    }
    if some_sites {
        heads.push("SITES ASKED");
    }
    let mut t = Table::new(&heads);
    for r in &read.records {
        let mut row = vec![
            when(Some(r.time)),
            match r.kind {
                RecordKind::Guard => "guard",
                RecordKind::Recovery => "recovery",
            }
            .into(),
            r.vm.name.clone(),
            r.change_id.clone(),
            r.verdict.clone(),
            vpg_counts(r),
            r.agent.clone(),
            r.action.clone(),
        ];
        if people {
            row.insert(6, r.person.as_ref().map_or("-".into(), |p| p.to_string()));
        }
        if some_sites {
            row.push(r.sites.as_ref().map_or("all".into(), |s| s.join(",")));
        }
        t.row(row);
    }
    let mut out = t.render();
    out.push_str(&format!("\n{}\n", read.headline()));
    out
}
