//! What a team server's journal costs the hooks that ask it, for a journal of N guard records of
//! 2,000 VMs, N = 10,000 and 100,000:
//!
//! - `team/after_append/N`: `GET /v1/guards?within_secs=900&vm=vm-7` (what a hook asks) of a team
//!   server (`rewind_mcp::serve_http`, in this process, over loopback HTTP) right after one more
//!   guard was appended to its journal, so every answer reads what was appended since the last;
//! - `team/after_append_postgresql/N`: the same of a team server whose journal is in PostgreSQL (the
//!   test kit's server on loopback, the N records imported), the guard appended by another replica;
//! - `team/first_read/N`: the view read from the whole journal (`AuditJournal::guards_view`), what
//!   a server pays once, on its first ask;
//! - `team/judge_one/N`: one reference judged on that view (`GuardLookup::among`, done by each hook
//!   call).
//!
//! Under `cargo test` (criterion's test mode) each runs once on 1,000 records, the view is checked
//! to answer as the whole journal does, and the server's answer to hold the guard just appended. No
//! speed is ever asserted.

use std::time::Duration;

use criterion::{BenchmarkId, Criterion};
use rewind_core::audit_journal::{
    JournalOutcome, JournalVerdict, JournalVm, JournalVpg, RecordKind,
};
use rewind_core::{AuditJournal, Config, GuardLookup, JournalRecord, Rewind};

/// The VMs the records are spread over.
const VMS: usize = 2_000;
/// The hook's window.
const WINDOW: Duration = Duration::from_secs(15 * 60);

/// Guard record `i` of a journal of `n`: VM `i % VMS`, five seconds after the one before, the
/// last one now.
fn record(i: usize, n: usize) -> JournalRecord {
    guard(
        i,
        chrono::Utc::now() - chrono::Duration::seconds(5 * (n - i) as i64),
    )
}

/// Guard `i` (of VM `i % VMS`), made at `time`.
fn guard(i: usize, time: chrono::DateTime<chrono::Utc>) -> JournalRecord {
    let vm = i % VMS;
    JournalRecord {
        time,
        kind: RecordKind::Guard,
        agent: "claude-code".to_owned(),
        person: None,
        action: "edit app.conf".to_owned(),
        change_id: format!("c-{i}"),
        vm: JournalVm {
            id: format!("site.vm-{vm}"),
            name: format!("vm-{vm}"),
            ip_addresses: vec![format!("10.0.{}.{}", vm / 250, vm % 250)],
            site: "Boston".to_owned(),
        },
        verdict: JournalVerdict::Guarded,
        vpgs: vec![JournalVpg {
            task_id: Some(format!("t-{i}")),
            ..JournalVpg::new(
                &format!("v-{vm}"),
                &format!("vpg-{vm}"),
                JournalOutcome::Tagged,
            )
        }],
        notes: Vec::new(),
        details: None,
        attempt: None,
        sites: None,
        approved_by: None,
    }
}

/// A team server (no sign-in, loopback) journaling in `journal`, or in the database at `database`,
/// and its URL.
async fn team_server(
    dir: &std::path::Path,
    journal: &AuditJournal,
    database: Option<&str>,
) -> String {
    let config = Config {
        journal_database: database.map(|url| {
            rewind_core::config::JournalDatabase::parse(url).expect("the test server's URL")
        }),
        ..Config::new(dir.join("catalog.toml"), journal.path())
    };
    let rewind = Rewind::new(config).expect("the facade");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let url = format!("http://{}", listener.local_addr().expect("its address"));
    let limits = rewind_mcp::HttpLimits::default();
    tokio::spawn(async move {
        rewind_mcp::serve_http(listener, rewind, limits, std::future::pending())
            .await
            .expect("the team server serves")
    });
    url
}

/// `GET /v1/guards` as a hook of a call on `vm` asks it, and the change ids of its answer.
async fn ask(http: &reqwest::Client, url: &str, vm: &str) -> Vec<String> {
    let answer: serde_json::Value = http
        .get(format!("{url}/v1/guards"))
        .query(&[
            ("within_secs", WINDOW.as_secs().to_string()),
            ("vm", vm.into()),
        ])
        .send()
        .await
        .and_then(|r| r.error_for_status())
        .expect("the server answers")
        .json()
        .await
        .expect("a JSON answer");
    answer["records"]
        .as_array()
        .expect("records")
        .iter()
        .map(|r| r["change_id"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The server's answer right after each append, `iters` times; only the asks are timed.
async fn after_appends(
    journal: &AuditJournal,
    http: &reqwest::Client,
    url: &str,
    next: &std::cell::Cell<usize>,
    iters: u64,
) -> Duration {
    let mut took = Duration::ZERO;
    for _ in 0..iters {
        // Another guard of vm-7.
        next.set(next.get() + VMS);
        let record = guard(next.get(), chrono::Utc::now());
        journal.append(&record).expect("the guard is journaled");
        let start = std::time::Instant::now();
        let changes = ask(http, url, "vm-7").await;
        took += start.elapsed();
        assert!(
            changes.contains(&record.change_id),
            "the answer holds the guard just appended: {changes:?}"
        );
    }
    took
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

/// A journal in the database at `url` holding the records of `file`: another replica's.
fn in_database(url: &str, dir: &std::path::Path, file: &AuditJournal) -> AuditJournal {
    let database = rewind_core::config::JournalDatabase::parse(url).expect("the test server's URL");
    let journal = AuditJournal::in_database(&database, dir.join("state.jsonl"))
        .expect("the database's journal");
    let lines = file.export_lines().expect("the file's lines");
    journal
        .import_lines(lines)
        .expect("the records are imported");
    journal
}

fn main() {
    let measuring = rewind_benches::env::measuring();
    let sizes: &[usize] = if measuring {
        &[10_000, 100_000]
    } else {
        &[1_000]
    };
    let dir = tempfile::tempdir().expect("a temporary folder");
    let rt = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let http = reqwest::Client::new();
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
        let url = rt.block_on(team_server(dir.path(), &journal, None));
        rt.block_on(ask(&http, &url, "vm-7"));
        // The next guard appended is of vm-7 (a multiple of VMS, plus 7).
        let next = std::cell::Cell::new(n.div_ceil(VMS) * VMS + 7);
        group.bench_with_input(BenchmarkId::new("after_append", n), &n, |b, _| {
            b.to_async(&rt).iter_custom(|iters| {
                let (journal, http, url) = (&journal, &http, &url);
                let next = &next;
                async move { after_appends(journal, http, url, next, iters).await }
            })
        });
        let database = zvm_sim::test_kit::Postgres::shared().fresh_database();
        let replica = in_database(&database, dir.path(), &journal);
        let replica_url = rt.block_on(team_server(dir.path(), &replica, Some(&database)));
        rt.block_on(ask(&http, &replica_url, "vm-7"));
        group.bench_with_input(
            BenchmarkId::new("after_append_postgresql", n),
            &n,
            |b, _| {
                b.to_async(&rt).iter_custom(|iters| {
                    let (replica, http, url) = (&replica, &http, &replica_url);
                    let next = &next;
                    async move { after_appends(replica, http, url, next, iters).await }
                })
            },
        );
        group.bench_with_input(BenchmarkId::new("first_read", n), &n, |b, _| {
            b.iter(|| journal.guards_view(WINDOW).expect("the view is read"))
        });
        group.bench_with_input(BenchmarkId::new("judge_one", n), &n, |b, _| {
            b.iter(|| GuardLookup::among(view.iter().cloned(), "vm-7", WINDOW))
        });
    }
    group.finish();
    criterion.final_summary();
}
