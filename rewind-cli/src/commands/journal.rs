//! `rewind journal`: the audit journal, read back (it reads only the journal file); `rewind journal
//! archive`: its old records moved to a file of their own.

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use rewind_core::audit_journal::{
    ArchiveError, Archived, JournalOutcome, JournalRead, Retention, Timeline,
};
use rewind_core::{AuditJournal, Config, ErrorKind, JournalFilter, JournalRecord};

use crate::commands::protection::when;
use crate::exit::CliError;
use crate::output::{Reply, Table};

/// The result is the core's `JournalRead`: the file, the matching records oldest first, and how many
/// unreadable lines were skipped.
/// With `timeline`, the result is the core's `Timeline` of those records instead.
pub fn journal(
    journal: &AuditJournal,
    filter: &JournalFilter,
    timeline: bool,
) -> Result<Reply, CliError> {
    let read = journal.read(filter)?;
    if timeline {
        let timeline = Timeline::of(&read.records);
        return Reply::new(&timeline, timeline_text(&timeline));
    }
    Reply::new(&read, journal_text(&read))
}

/// A timeline as people read it: each change, then its steps indented.
fn timeline_text(t: &Timeline) -> String {
    if t.changes.is_empty() {
        return "No record matches.\n".into();
    }
    let mut out = String::new();
    for c in &t.changes {
        let people = match c.people.is_empty() {
            true => String::new(),
            false => format!(" for {}", c.people.join(", ")),
        };
        out.push_str(&format!(
            "{}  change {} of {}, by {}{people}{}\n",
            c.began.format("%Y-%m-%d %H:%M"),
            c.change_id,
            c.vm,
            c.agents.join(", "),
            if c.closed() { " (done)" } else { "" },
        ));
        for s in &c.steps {
            let vpgs = match s.vpgs {
                0 => String::new(),
                n => format!(", {n} VPG(s)"),
            };
            out.push_str(&format!(
                "  {}  {:<8} {}: {}{vpgs}\n",
                s.time.format("%H:%M:%S"),
                s.kind,
                s.action,
                s.verdict,
            ));
        }
    }
    out
}

/// Moves the records written before `before` to `to` (by default `journal-until-<day>.jsonl` beside
/// the journal), keeping what the guard (the change-id horizon) and the hook (its window) read.
pub fn archive(
    config: &Config,
    before: DateTime<Utc>,
    to: Option<PathBuf>,
) -> Result<Reply, CliError> {
    let journal = AuditJournal::of(config)?;
    let to = to.unwrap_or_else(|| {
        let name = format!("journal-until-{}.jsonl", before.format("%Y-%m-%d"));
        config.journal_path.with_file_name(name)
    });
    let kept = config.guard.change_id_horizon.max(config.hook.window);
    let retention = Retention {
        keep_since: Utc::now() - chrono::Duration::from_std(kept).unwrap_or(chrono::Duration::MAX),
    };
    let archived = journal
        .archive(before, &to, retention)
        .map_err(|e| match e {
            ArchiveError::Journal(e) => CliError::from(e),
            refused => CliError::new(ErrorKind::Usage, refused.to_string()),
        })?;
    Reply::new(&archived, archived_text(&archived))
}

/// Writes every line of the configured journal to `to` (a new file) or stdout.
pub fn export(config: &Config, to: Option<PathBuf>) -> Result<Reply, CliError> {
    let journal = AuditJournal::of(config)?;
    let lines = journal.export_lines()?;
    let mut text = String::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
    for line in &lines {
        text.push_str(line);
        text.push('\n');
    }
    let Some(to) = to else {
        // The lines are the output, for a pipe; with `--json`, the records as an array.
        let records: Vec<Box<serde_json::value::RawValue>> = lines
            .into_iter()
            .filter_map(|l| serde_json::value::RawValue::from_string(l).ok())
            .collect();
        return Reply::new(&records, text);
    };
    let mut options = std::fs::OpenOptions::new();
    options.create_new(true).write(true);
    let written =
        rewind_core::local_state::open_private(&to, &mut options, false).and_then(|mut file| {
            std::io::Write::write_all(&mut file, text.as_bytes())?;
            file.sync_all()
        });
    written.map_err(|e| {
        CliError::new(
            match e.kind() {
                std::io::ErrorKind::AlreadyExists => ErrorKind::Usage,
                _ => ErrorKind::Internal,
            },
            format!(
                "cannot write {}: {e}; name a new file (an export never writes over one)",
                to.display()
            ),
        )
    })?;
    let exported = Exported {
        journal: journal.place(),
        to: to.clone(),
        lines: lines.len() as u64,
    };
    let said = format!(
        "wrote {} line{} of {} to {}\nread it with: rewind journal --file {}\n",
        exported.lines,
        if exported.lines == 1 { "" } else { "s" },
        exported.journal,
        to.display(),
        to.display()
    );
    Reply::new(&exported, said)
}

/// What an export wrote.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Exported {
    /// The journal read.
    pub journal: String,
    /// The file written.
    pub to: PathBuf,
    /// Lines written.
    pub lines: u64,
}

/// Appends the lines of `from` that the configured journal does not hold yet.
pub fn import(config: &Config, from: &std::path::Path) -> Result<Reply, CliError> {
    let bytes = std::fs::read(from).map_err(|e| {
        CliError::new(
            ErrorKind::Usage,
            format!(
                "cannot read {}: {e}; give a journal file, an archive or an export",
                from.display()
            ),
        )
    })?;
    let journal = AuditJournal::of(config)?;
    let imported = journal
        .import_lines(rewind_core::audit_journal::whole_lines(&bytes))
        .map_err(|e| match e {
            e @ rewind_core::audit_journal::JournalError::ImportIntoRecords { .. } => {
                CliError::new(ErrorKind::Usage, e.to_string())
            }
            e => CliError::from(e),
        })?;
    let mut said = format!(
        "added {} of the {} lines of {} to {}; {} were there already\n",
        imported.added,
        imported.read,
        from.display(),
        imported.journal,
        imported.present
    );
    if imported.unreadable > 0 {
        said.push_str(&format!(
            "{} lines are no journal record and were left out\n",
            imported.unreadable
        ));
    }
    Reply::new(&imported, said)
}

/// What an archive did, for people.
fn archived_text(a: &Archived) -> String {
    let day = a.before.format("%Y-%m-%d");
    if a.lines_moved == 0 {
        return format!(
            "nothing in the journal {} was written before {day}; nothing moved\n",
            a.journal.display()
        );
    }
    let lines = |n: u64| format!("{n} line{}", if n == 1 { "" } else { "s" });
    let kept = match a.oldest_kept {
        Some(t) => format!(
            "{} stay{} in {}, the oldest from {}",
            lines(a.lines_kept),
            if a.lines_kept == 1 { "s" } else { "" },
            a.journal.display(),
            when(Some(t))
        ),
        None => format!("the journal {} is empty now", a.journal.display()),
    };
    format!(
        "moved {} ({}) written before {day} to {}\n{kept}\nread the archive with: rewind journal --file {}\n",
        lines(a.lines_moved),
        size(a.bytes_moved),
        a.archive.display(),
        a.archive.display()
    )
}

/// A size in bytes as people read it: `840 KB`, `74.2 MB`.
fn size(bytes: u64) -> String {
    match bytes {
        0..1_000 => format!("{bytes} bytes"),
        1_000..1_000_000 => format!("{} KB", bytes / 1_000),
        _ => format!("{:.1} MB", bytes as f64 / 1e6),
    }
}

/// How a record's VPGs ended, counted: `2 tagged, 1 skipped`.
fn vpg_counts(r: &JournalRecord) -> String {
    let mut counts: Vec<(&JournalOutcome, usize)> = Vec::new();
    for v in &r.vpgs {
        match counts.iter_mut().find(|(o, _)| **o == v.outcome) {
            Some((_, n)) => *n += 1,
            None => counts.push((&v.outcome, 1)),
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
    // The WAY BACK column, once a guard said how long its tags last.
    let ways_back = read.records.iter().any(|r| shortest_way_back(r).is_some());
    if ways_back {
        heads.push("WAY BACK");
    }
    let now = chrono::Utc::now();
    let mut t = Table::new(&heads);
    for r in &read.records {
        let mut row = vec![
            when(Some(r.time)),
            r.kind.to_string(),
            r.vm.name.clone(),
            r.change_id.clone(),
            r.verdict.to_string(),
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
        if ways_back {
            row.push(way_back_cell(r, now));
        }
        t.row(row);
    }
    let mut out = t.render();
    out.push_str(&format!("\n{}\n", read.headline()));
    out
}

/// The shortest way back a guard record said, with its VPG.
fn shortest_way_back(r: &JournalRecord) -> Option<&rewind_core::way_back::WayBack> {
    r.vpgs
        .iter()
        .filter_map(|v| v.way_back.as_ref())
        .min_by_key(|w| w.recoverable_until)
}

/// A guard's way back as the journal's table shows it, from what the guard said (the ZVM is not
/// asked: `rewind tags` does): `until 2026-12-05 11:00 UTC (1 h from now)`, or when it ended.
fn way_back_cell(r: &JournalRecord, now: chrono::DateTime<chrono::Utc>) -> String {
    match shortest_way_back(r) {
        Some(w) if w.recoverable_until > now => w.describe(now),
        Some(w) => format!(
            "ended about {} (aged out)",
            w.recoverable_until.format("%Y-%m-%d %H:%M UTC")
        ),
        None => "-".into(),
    }
}
