//! What a team server's journal costs the hooks that ask it (`GET /v1/guards`): reading the view
//! of a journal of N guard records of 2,000 VMs (`AuditJournal::guards_view`, done once per change
//! of the journal), and judging one reference on that view (`GuardLookup::among`, done by each
//! hook call), for N = 10,000 and 100,000.
//!
//! Under `cargo test` (criterion's test mode) each runs once on 1,000 records, and the view is
//! checked to answer as the whole journal does. No speed is ever asserted.

use std::time::Duration;

use criterion::{BenchmarkId, Criterion};
use rewind_core::audit_journal::{JournalVm, JournalVpg, RecordKind};
use rewind_core::{AuditJournal, GuardLookup, JournalRecord};

/// The VMs the records are spread over.
const VMS: usize = 2_000;
/// The hook's window.
const WINDOW: Duration = Duration::from_secs(15 * 60);

/// Guard record `i` of a journal of `n`: VM `i % VMS`, five seconds after the one before, the
/// last one now.
fn record(i: usize, n: usize) -> JournalRecord {
    let vm = i % VMS;
    JournalRecord {
        time: chrono::Utc::now() - chrono::Duration::seconds(5 * (n - i) as i64),
        kind: RecordKind::Guard,
        agent: "claude-code".to_owned(),
        person: None,
        action: "edit app.conf".to_owned(),
        change_id: format!("c-{i}"),
        vm: JournalVm {
            id: format!("site.vm-{vm}"),
            name: format!("vm-{vm}"),
            ip_addresses: vec![format!("10.0.{}.{}", vm / 250, vm % 250)],
            site: Some("Boston".to_owned()),
        },
        verdict: "guarded".to_owned(),
        vpgs: vec![JournalVpg {
            task_id: Some(format!("t-{i}")),
            ..JournalVpg::new(&format!("v-{vm}"), &format!("vpg-{vm}"), "tagged")
        }],
        notes: Vec::new(),
        details: None,
        attempt: None,
        sites: None,
    }
}

/// A journal of `n` records in `dir`.
fn journal(dir: &std::path::Path, n: usize) -> AuditJournal {
    let path = dir.join(format!("journal-{n}.jsonl"));
    let mut text = String::new();
    for i in 0..n {
        text.push_str(&serde_json::to_string(&record(i, n)).expect("a record is JSON"));
        text.push('\n');
    }
    std::fs::write(&path, text).expect("the journal is written");
    AuditJournal::new(path)
}

fn main() {
    let measuring = std::env::args().any(|a| a == "--bench");
    let sizes: &[usize] = if measuring {
        &[10_000, 100_000]
    } else {
        &[1_000]
    };
    let dir = tempfile::tempdir().expect("a temporary folder");
    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(5))
        .configure_from_args();
    let mut group = criterion.benchmark_group("team");
    for &n in sizes {
        let journal = journal(dir.path(), n);
        let view = journal.guards_view(WINDOW).expect("the view is read");
        for reference in ["vm-7", "10.0.0.7", "site.vm-1999"] {
            assert_eq!(
                GuardLookup::among(view.clone(), reference, WINDOW),
                journal
                    .last_guarded(reference, WINDOW)
                    .expect("the journal is read"),
                "the view answers {reference} as the whole journal does"
            );
        }
        group.bench_with_input(BenchmarkId::new("guards_view", n), &n, |b, _| {
            b.iter(|| journal.guards_view(WINDOW).expect("the view is read"))
        });
        group.bench_with_input(BenchmarkId::new("judge_one", n), &n, |b, _| {
            b.iter(|| GuardLookup::among(view.iter().cloned(), "vm-7", WINDOW))
        });
    }
    group.finish();
    criterion.final_summary();
}
