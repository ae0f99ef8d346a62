//! `rewind diff` over a VM of 1,000 files of which 10 changed since the tag, with `content`, at an
//! appliance's timings (every Zerto task D = 2 s). Its floor is the Zerto tasks it must wait for:
//! three FLR sessions (the tag, the latest checkpoint, the tag again for the changed files' old
//! bytes), each a mount and an unmount, 6 × D. The table gives the median over that floor and what
//! the diff cost the ZVM: mounts, folders browsed, downloads.
//!
//! Under `cargo test` (criterion's test mode, short timings) it runs once, and a diff that does not
//! find exactly the 10 changed files, or that leaves a session mounted, fails the run. No speed is
//! ever asserted.

use std::cell::RefCell;
use std::time::{Duration, Instant};

use criterion::Criterion;
use rewind_benches::env::{BenchEnv, Timing, measuring, runtime};
use rewind_core::{CancellationToken, DiffReport, DiffRequest, GuardRequest, NoProgress, Verdict};
use zvm_sim::WorldSpec;

/// The VM whose files are compared.
const VM: &str = "web-01";
/// Folders of the guest tree, each with [`FILES_PER_FOLDER`] files.
const FOLDERS: usize = 10;
const FILES_PER_FOLDER: usize = 100;
/// Files changed after the tag: one per folder.
const CHANGED: usize = 10;
/// FLR sessions of a diff with content, each a mount task and an unmount task.
const SESSIONS: u32 = 3;

fn file(folder: usize, i: usize) -> String {
    format!("sda1/data/set-{folder:02}/file-{i:03}.txt")
}

/// The world: web-01 holds the 1,000 files, the tag is taken, 10 files change, and a later
/// checkpoint holds the change.
async fn prepare(env: &BenchEnv) {
    let control = env.control();
    for folder in 0..FOLDERS {
        for i in 0..FILES_PER_FOLDER {
            let text = format!("folder {folder} file {i}\n");
            control
                .put_file(VM, &file(folder, i), text.as_bytes())
                .await;
        }
    }
    guard(env, "bench-diff").await;
    for folder in 0..CHANGED {
        let text = format!("folder {folder} file 7, changed by the agent\n");
        control
            .put_file(VM, &file(folder, 7), text.as_bytes())
            .await;
    }
    // A checkpoint after the change: the latest one the diff compares with.
    guard(env, "bench-after").await;
}

async fn guard(env: &BenchEnv, change: &str) {
    let request = GuardRequest {
        vm: VM.into(),
        agent: "bench".into(),
        action: "diff".into(),
        change_id: change.into(),
    };
    let report = env.rewind().guard(request, &NoProgress).await;
    let report = report.unwrap_or_else(|e| panic!("the guard of {change} runs: {e}"));
    assert_eq!(report.verdict, Verdict::Guarded, "{}", report.summary());
}

async fn diff(env: &BenchEnv) -> DiffReport {
    let request = DiffRequest {
        vm: VM.into(),
        change: "bench-diff".into(),
        paths: vec!["sda1/data".into()],
        content: true,
        ..DiffRequest::default()
    };
    let stop = CancellationToken::new();
    let rewind = env.rewind().only_vpg("web-local");
    let report = rewind.diff(request, &NoProgress, &stop).await;
    let report = report.unwrap_or_else(|e| panic!("the diff runs: {e}"));
    check(&report);
    report
}

/// What every run must find, measured or not.
fn check(report: &DiffReport) {
    let c = report.counts;
    assert_eq!(
        (c.added, c.removed, c.changed, c.unknown),
        (0, 0, CHANGED, 0),
        "{}",
        report.headline()
    );
    assert!(
        report.entries.iter().all(|e| e.content.is_some()),
        "every changed file's content is compared"
    );
    assert!(
        report.sessions.iter().all(|s| s.unmount.unmounted),
        "every session is unmounted: {:?}",
        report.sessions
    );
    assert_eq!(report.calls.mounts, SESSIONS);
    assert_eq!(report.calls.downloads as usize, 2 * CHANGED);
}

fn main() {
    let measuring = measuring();
    let timing = if measuring {
        Timing::APPLIANCE
    } else {
        Timing::SMOKE
    };
    let rt = runtime();
    let env = rt
        .block_on(BenchEnv::start(WorldSpec::default_world(), timing))
        .unwrap_or_else(|e| panic!("the bench environment starts: {e}"));
    rt.block_on(prepare(&env));
    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_secs(if measuring { 60 } else { 1 }))
        .configure_from_args();
    let took: RefCell<Vec<Duration>> = RefCell::default();
    let last: RefCell<Option<DiffReport>> = RefCell::default();
    criterion.bench_function("diff/1000_files_10_changed", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let (env, took, last) = (&env, &took, &last);
            async move {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let start = Instant::now();
                    let report = diff(env).await;
                    total += start.elapsed();
                    took.borrow_mut().push(start.elapsed());
                    *last.borrow_mut() = Some(report);
                }
                total
            }
        })
    });
    criterion.final_summary();
    if let (took, Some(report)) = (took.into_inner(), last.into_inner()) {
        table(took, &report, timing);
    }
    rt.block_on(env.shutdown());
}

/// The table printed after criterion's own output: the median over its floor, and the calls.
#[expect(
    clippy::print_stdout,
    reason = "the table is the bench's output, printed after criterion's own"
)]
fn table(mut took: Vec<Duration>, report: &DiffReport, timing: Timing) {
    took.sort();
    let median = took[took.len() / 2];
    let floor = timing.task * 2 * SESSIONS;
    let c = report.calls;
    println!(
        "\n| bench | files | changed | iters | median | floor (6 D) | × floor | mounts | browses | downloads |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n| diff/1000_files_10_changed | {} | {CHANGED} | {} | {:.2} s | {:.2} s | {:.3} | {} | {} | {} |",
        FOLDERS * FILES_PER_FOLDER,
        took.len(),
        median.as_secs_f64(),
        floor.as_secs_f64(),
        median.as_secs_f64() / floor.as_secs_f64(),
        c.mounts,
        c.browses,
        c.downloads
    );
}
