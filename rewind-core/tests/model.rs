//! Model-based property tests: generated sequences of guards (one VM, VMs sharing a VPG, several at
//! once, one racing another process's insert, one dropped mid-flight as a killed process and run
//! again by another, two identical ones at once from two processes, one whose journal cannot be
//! written or stops taking writes midway), file-level recoveries and catalog changes, run against
//! the in-process simulator under a generated fault schedule (5xx, latency past the client's timeout,
//! which the simulator finishes after the client gave up, as an appliance does; an insert or a task
//! poll whose answer is lost, token revocation). After each run the simulator's ground truth
//! (`/_sim/tasks`, `/_sim/state`) and the journal are checked against what rewind reported:
//!
//! - every insert task the simulator ran is accounted for, by a report, the journal (a verdict, or
//!   the intent of an attempt that was killed or could not write its verdict), or the test's own
//!   "other process";
//! - at most one tagged checkpoint (Completed insert) per change and VPG, however often the change
//!   was guarded;
//! - every guard ends `guarded`, refused (each VPG saying why) or still running with its task ids, and
//!   its report is in the journal unless it says its verdict could not be written (then it is not
//!   `guarded`); a guard that failed as a whole started no insert its journal does not account for,
//!   and one whose journal could not be written started none;
//! - no 401 and no authentication error surfaced (the credentials were good all along);
//! - every FLR session was sent its unmount;
//! - the catalog classifies as a last-write-wins model of its changes says.
//!
//! The model runs twice: on a journal file, and on a journal in PostgreSQL (the test kit's server, a
//! fresh database a case), where every `Rewind` of a case is a replica of one team server, a
//! journal that cannot be written is a database nothing listens for, and one that fills refuses new
//! rows with a check on its table.
//!
//! The number of cases is small by default so CI stays within minutes; `PROPTEST_CASES` raises it, and
//! `PROPTEST_RNG_SEED` replays one run of the generator. A failing case prints its input (the
//! simulator's seed among it) and the generator's seed; proptest saves it under
//! `proptest-regressions/model.txt`, which is committed and replayed first on every run.

mod common;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use common::{CLIENT_SECRET, Site, Sites, TestEnv, state_of};
use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, FileFailurePersistence, RngSeed};
use rewind_core::audit_journal::{JournalFilter, RecordKind};
use rewind_core::{
    Culprit, GuardNote, GuardReport, GuardRequest, NoProgress, Outcome, RecoverFileRequest,
    RewindError, ToolClass, Verdict,
};
use serde_json::{Value, json};

/// The generator's seed when `PROPTEST_RNG_SEED` is not set: CI runs the same cases every time.
const DEFAULT_RNG_SEED: u64 = 20_261_129;
/// Cases per run when `PROPTEST_CASES` is not set.
const DEFAULT_CASES: u32 = 8;

/// The client's timeout of one request; latency faults are longer than this.
const REQUEST_TIMEOUT: Duration = Duration::from_millis(800);
/// Latency past the client's timeout.
const SLOW_MS: u64 = 1_100;

/// VMs of the default world a step may name: web-01 is in three VPGs (one local, two to Denver),
/// db-01 shares web-dr with it, app-01..03 share app-tier, files-01 has a syncing VPG, and
/// build-agent names two VMs (a refusal).
const VMS: &[&str] = &[
    "web-01",
    "db-01",
    "app-01",
    "app-02",
    "app-03",
    "sql-01",
    "files-01",
    "build-agent",
];
/// Linux VMs whose files an FLR step recovers.
const FLR_VMS: &[&str] = &["web-01", "db-01", "app-01"];

/// One fault rule of the schedule, posted to `/_sim/faults` before the run.
#[derive(Debug, Clone)]
enum Fault {
    /// The next inserts answer 503 with Retry-After.
    InsertUnavailable { count: u32 },
    /// The next reads answer 502 (retried by the client).
    ReadsBadGateway { count: u32 },
    /// A 500 on task polls.
    TaskPollError { count: u32 },
    /// Inserts that take longer than the client waits.
    InsertSlow { count: u32 },
    /// Reads that take longer than the client waits.
    ReadSlow { count: u32 },
    /// The insert happens; its answer is lost.
    InsertLost { count: u32 },
    /// A task poll's answer is lost.
    TaskPollLost { count: u32 },
    /// A task poll revokes every token of its site first.
    RevokeOnTaskPoll { count: u32, site: &'static str },
    /// A download answers 500 (the unmount must still follow).
    DownloadError { count: u32 },
}

impl Fault {
    fn rule(&self) -> Value {
        match *self {
            Fault::InsertUnavailable { count } => json!({"Method": "POST",
                "Path": "/v1/vpgs/*/checkpoints", "Action": "Respond", "Status": 503,
                "Headers": {"Retry-After": "0"}, "Count": count}),
            Fault::ReadsBadGateway { count } => json!({"Method": "GET", "Path": "/v1/**",
                "Action": "Respond", "Status": 502, "Probability": 0.3, "Count": count}),
            Fault::TaskPollError { count } => json!({"Method": "GET", "Path": "/v1/tasks/*",
                "Action": "Respond", "Status": 500, "Count": count}),
            Fault::InsertSlow { count } => json!({"Method": "POST",
                "Path": "/v1/vpgs/*/checkpoints", "Action": "Latency", "LatencyMs": SLOW_MS,
                "Count": count}),
            Fault::ReadSlow { count } => json!({"Method": "GET", "Path": "/v1/**",
                "Action": "Latency", "LatencyMs": SLOW_MS, "Probability": 0.2, "Count": count}),
            Fault::InsertLost { count } => json!({"Method": "POST",
                "Path": "/v1/vpgs/*/checkpoints", "Action": "LoseResponse", "Count": count}),
            Fault::TaskPollLost { count } => json!({"Method": "GET", "Path": "/v1/tasks/*",
                "Action": "LoseResponse", "Probability": 0.5, "Count": count}),
            Fault::RevokeOnTaskPoll { count, site } => json!({"Method": "GET",
                "Path": "/v1/tasks/*", "Site": site, "Action": "RevokeTokens", "Count": count}),
            Fault::DownloadError { count } => json!({"Method": "GET",
                "Path": "/v1/flrs/*/downloads/*", "Action": "Respond", "Status": 500,
                "Count": count}),
        }
    }
}

/// A catalog change, and what the model expects of it.
#[derive(Debug, Clone)]
enum CatalogOp {
    Mutating(&'static str, &'static str),
    ReadOnly(&'static str, &'static str),
    Remove(&'static str, &'static str),
}

/// One step of a run.
#[derive(Debug, Clone)]
enum Step {
    /// A guard of one VM.
    Guard(&'static str),
    /// Guards of several VMs at once (they may share a VPG).
    Concurrent(Vec<&'static str>),
    /// A guard racing an insert that "another process" posts into one of the VM's VPGs.
    Collision { vm: &'static str, delay_ms: u64 },
    /// A guard dropped after `after_ms` (a process killed mid-guard), then the same guard run again
    /// by a fresh `Rewind` (another process, without the first one's memory).
    Crash { vm: &'static str, after_ms: u64 },
    /// Two identical guards at once, from two `Rewind`s (two processes).
    Twice(&'static str),
    /// A guard whose journal cannot be written at all: it must insert nothing.
    JournalUnwritable(&'static str),
    /// The journal stops taking writes once the guard's intent is in it; the guard is run again
    /// once it takes them again.
    JournalFills(&'static str),
    /// File-level recovery of a VM from its last guarded change (refused when it has none).
    Recover(&'static str),
    /// A change to the tool catalog.
    Catalog(CatalogOp),
}

fn fault() -> impl Strategy<Value = Fault> {
    prop_oneof![
        (1u32..3).prop_map(|count| Fault::InsertUnavailable { count }),
        (1u32..4).prop_map(|count| Fault::ReadsBadGateway { count }),
        (1u32..2).prop_map(|count| Fault::TaskPollError { count }),
        (1u32..2).prop_map(|count| Fault::InsertSlow { count }),
        (1u32..3).prop_map(|count| Fault::ReadSlow { count }),
        (1u32..3).prop_map(|count| Fault::InsertLost { count }),
        (1u32..3).prop_map(|count| Fault::TaskPollLost { count }),
        ((1u32..3), prop::sample::select(vec!["Boston", "Denver"]))
            .prop_map(|(count, site)| Fault::RevokeOnTaskPoll { count, site }),
        (1u32..2).prop_map(|count| Fault::DownloadError { count }),
    ]
}

fn vm() -> impl Strategy<Value = &'static str> {
    prop::sample::select(VMS)
}

fn catalog_op() -> impl Strategy<Value = CatalogOp> {
    let server = prop::sample::select(vec!["ssh", "vsphere"]);
    let tool = prop::sample::select(vec!["run", "reboot"]);
    (0u8..3, server, tool).prop_map(|(op, s, t)| match op {
        0 => CatalogOp::Mutating(s, t),
        1 => CatalogOp::ReadOnly(s, t),
        _ => CatalogOp::Remove(s, t),
    })
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => vm().prop_map(Step::Guard),
        2 => prop::collection::vec(vm(), 2..4).prop_map(Step::Concurrent),
        2 => (prop::sample::select(vec!["web-01", "app-01", "db-01", "sql-01"]), 0u64..40)
            .prop_map(|(vm, delay_ms)| Step::Collision { vm, delay_ms }),
        1 => (vm(), 0u64..120).prop_map(|(vm, after_ms)| Step::Crash { vm, after_ms }),
        1 => vm().prop_map(Step::Twice),
        1 => vm().prop_map(Step::JournalUnwritable),
        1 => vm().prop_map(Step::JournalFills),
        1 => prop::sample::select(FLR_VMS).prop_map(Step::Recover),
        1 => catalog_op().prop_map(Step::Catalog),
    ]
}

/// What one guard call gave back.
#[derive(Debug)]
struct GuardCall {
    change_id: String,
    result: Result<GuardReport, String>,
}

/// Everything a run saw, to be checked against the ground truth.
#[derive(Debug, Default)]
struct Seen {
    guards: Vec<GuardCall>,
    /// Task ids of the inserts the test itself posted as "another process".
    foreign_tasks: BTreeSet<String>,
    /// Every error text rewind gave back (guards and recoveries).
    errors: Vec<String>,
    /// The last guarded change of each VM, for recoveries.
    guarded: HashMap<&'static str, String>,
    flr_attempts: usize,
    /// Changes guarded with a journal that could not be written at all: they inserted nothing.
    unjournaled: BTreeSet<String>,
    /// Guards dropped mid-flight.
    crashes: usize,
    /// Guards whose journal stopped taking writes midway.
    journal_faults: usize,
}

/// The generator's configuration: a fixed seed and a few cases, unless the environment says otherwise.
fn config() -> ProptestConfig {
    let from_env = ProptestConfig::default();
    ProptestConfig {
        cases: if std::env::var_os("PROPTEST_CASES").is_some() {
            from_env.cases
        } else {
            DEFAULT_CASES
        },
        rng_seed: if std::env::var_os("PROPTEST_RNG_SEED").is_some() {
            from_env.rng_seed
        } else {
            RngSeed::Fixed(DEFAULT_RNG_SEED)
        },
        // A case is a whole simulated run; shrinking re-runs it, so keep that bounded too.
        max_shrink_iters: 64,
        // Relative to the package folder, where cargo runs the test: committed and replayed first.
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/model.txt",
        ))),
        ..from_env
    }
}

fn rng_seed_words() -> String {
    match config().rng_seed {
        RngSeed::Fixed(s) => format!("PROPTEST_RNG_SEED={s}"),
        RngSeed::Random => "a random generator seed".to_string(),
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn guards_recoveries_and_catalog_changes_under_faults_lose_nothing_and_double_nothing(
        sim_seed in 0u64..10_000,
        faults in prop::collection::vec(fault(), 0..4),
        steps in prop::collection::vec(step(), 1..6),
    ) {
        one_case(sim_seed, &faults, &steps, Journal::File)?;
    }

    /// The same model with the journal in PostgreSQL (the test kit's server, a fresh database each
    /// case): every `Rewind` of a case is a replica of one team server.
    #[test]
    fn on_a_journal_in_postgresql_guards_under_faults_lose_nothing_and_double_nothing(
        sim_seed in 0u64..10_000,
        faults in prop::collection::vec(fault(), 0..4),
        steps in prop::collection::vec(step(), 1..6),
    ) {
        let url = zvm_sim::test_kit::Postgres::shared().fresh_database();
        one_case(sim_seed, &faults, &steps, Journal::Database(url))?;
    }
}

/// Where a case's journal is.
#[derive(Debug, Clone)]
enum Journal {
    /// The file of the test's folder.
    File,
    /// A database, by URL.
    Database(String),
}

/// One generated case, on its own runtime.
fn one_case(
    sim_seed: u64,
    faults: &[Fault],
    steps: &[Step],
    journal: Journal,
) -> Result<(), TestCaseError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let outcome = runtime.block_on(run(sim_seed, faults, steps, &journal));
    outcome.map_err(|problem| {
        TestCaseError::fail(format!(
            "{problem}\n(simulator seed {sim_seed}; journal {journal:?}; generator: {})",
            rng_seed_words()
        ))
    })
}

/// One run: start the world, post the faults, play the steps, check the ground truth.
/// The configuration of every `Rewind` of a run: short timeouts, a 10 s guard deadline.
fn configure(mut c: rewind_core::Config) -> rewind_core::Config {
    c.http.request_timeout = REQUEST_TIMEOUT;
    c.http.connect_timeout = REQUEST_TIMEOUT;
    c.http.read_retry = Duration::from_secs(4);
    c.guard.deadline = Duration::from_secs(10);
    c.recover.wait_floor = Duration::from_secs(10);
    c
}

/// [`configure`], with the journal where `journal` says.
fn configured(journal: &Journal) -> impl Fn(rewind_core::Config) -> rewind_core::Config + '_ {
    move |c| {
        let mut c = configure(c);
        if let Journal::Database(url) = journal {
            c.journal_database = Some(rewind_core::config::JournalDatabase::parse(url).unwrap());
        }
        c
    }
}

async fn run(
    sim_seed: u64,
    faults: &[Fault],
    steps: &[Step],
    journal: &Journal,
) -> Result<(), String> {
    let env = TestEnv::start_with(zvm_sim::Options::for_tests(sim_seed), Sites::Both).await;
    let configure = configured(journal);
    let rewind = env.rewind_with(&configure);
    for f in faults {
        env.control.fault(f.rule()).await;
    }
    let mut seen = Seen::default();
    let mut catalog_model: BTreeMap<(&str, &str), ToolClass> = BTreeMap::new();
    let scratch = tempfile::tempdir().unwrap();
    for (n, step) in steps.iter().enumerate() {
        match step {
            Step::Guard(vm) => {
                let call = guard(&rewind, vm, n, 0).await;
                note_guard(&mut seen, vm, call);
            }
            Step::Concurrent(vms) => {
                let calls = futures::future::join_all(
                    vms.iter()
                        .enumerate()
                        .map(|(i, vm)| guard(&rewind, vm, n, i)),
                )
                .await;
                for (vm, call) in vms.iter().zip(calls) {
                    note_guard(&mut seen, vm, call);
                }
            }
            Step::Collision { vm, delay_ms } => {
                let (task, call) = tokio::join!(
                    foreign_insert(&env, vm, *delay_ms),
                    guard(&rewind, vm, n, 0)
                );
                if let Some(task) = task {
                    seen.foreign_tasks.insert(task);
                }
                note_guard(&mut seen, vm, call);
            }
            Step::Crash { vm, after_ms } => {
                seen.crashes += 1;
                let first = tokio::time::timeout(
                    Duration::from_millis(*after_ms),
                    guard(&rewind, vm, n, 0),
                )
                .await;
                if let Ok(first) = first {
                    note_guard(&mut seen, vm, first);
                }
                let again = env.rewind_with(&configure);
                let call = guard(&again, vm, n, 0).await;
                note_guard(&mut seen, vm, call);
            }
            Step::Twice(vm) => {
                let other = env.rewind_with(&configure);
                let (a, b) = tokio::join!(guard(&rewind, vm, n, 0), guard(&other, vm, n, 0));
                note_guard(&mut seen, vm, a);
                note_guard(&mut seen, vm, b);
            }
            Step::JournalUnwritable(vm) => {
                let blocked = scratch.path().join(format!("blocked-{n}"));
                std::fs::write(&blocked, "a file where the journal's folder should be").unwrap();
                let unwritable = env.rewind_with(|c| {
                    let mut c = configure(c);
                    c.journal_path = blocked.join("journal.jsonl");
                    if c.journal_database.is_some() {
                        // A database nothing listens for.
                        let gone = "postgresql://rewind@127.0.0.1:1/gone?sslmode=disable&connect_timeout=1";
                        c.journal_database = rewind_core::config::JournalDatabase::parse(gone).ok();
                    }
                    c
                });
                let call = guard(&unwritable, vm, n, 0).await;
                if let Ok(r) = &call.result {
                    return Err(format!(
                        "step {n}: a guard whose journal cannot be written reported {}",
                        r.summary()
                    ));
                }
                seen.unjournaled.insert(call.change_id.clone());
                seen.errors.extend(call.result.err());
            }
            Step::JournalFills(vm) => {
                seen.journal_faults += 1;
                let call = match journal {
                    Journal::File => guard_while_the_journal_fills(&rewind, vm, n).await?,
                    Journal::Database(url) => {
                        guard_while_the_database_refuses(&rewind, url, vm, n).await?
                    }
                };
                if let Ok(r) = &call.result
                    && r.journal_error.is_some()
                    && r.verdict == Verdict::Guarded
                {
                    return Err(format!(
                        "step {n}: a guard whose verdict was not journaled says guarded: {}",
                        r.summary()
                    ));
                }
                note_guard(&mut seen, vm, call);
                let again = guard(&rewind, vm, n, 0).await;
                note_guard(&mut seen, vm, again);
            }
            Step::Recover(vm) => {
                let change = seen
                    .guarded
                    .get(vm)
                    .cloned()
                    .unwrap_or_else(|| format!("never-guarded-{n}"));
                let destination = scratch.path().join(format!("step-{n}"));
                seen.flr_attempts += 1;
                let result = rewind
                    .recover_file(
                        RecoverFileRequest {
                            vm: vm.to_string(),
                            change: change.clone(),
                            paths: vec!["sda1/etc/hostname".into()],
                            destination,
                            overwrite: false,
                            plan: None,
                        },
                        &NoProgress,
                    )
                    .await;
                match result {
                    Ok(report) => {
                        if report.files.is_empty() {
                            return Err(format!(
                                "step {n}: the FLR of {vm} reported success with no file"
                            ));
                        }
                    }
                    Err(e) => {
                        if !seen.guarded.contains_key(vm)
                            && !matches!(e.root(), RewindError::NoTaggedCheckpoint { .. })
                        {
                            return Err(format!(
                                "step {n}: the FLR of {vm} without a guarded change failed, but not as NoTaggedCheckpoint: {e}"
                            ));
                        }
                        seen.errors.push(e.to_string());
                    }
                }
            }
            Step::Catalog(op) => {
                let catalog = rewind.catalog();
                let (server, tool) = match *op {
                    CatalogOp::Mutating(s, t) => {
                        catalog
                            .add_mutating(s, t, Some("host"))
                            .map_err(|e| e.to_string())?;
                        catalog_model.insert((s, t), ToolClass::Mutating);
                        (s, t)
                    }
                    CatalogOp::ReadOnly(s, t) => {
                        catalog.add_read_only(s, t).map_err(|e| e.to_string())?;
                        catalog_model.insert((s, t), ToolClass::ReadOnly);
                        (s, t)
                    }
                    CatalogOp::Remove(s, t) => {
                        catalog.remove(s, t).map_err(|e| e.to_string())?;
                        catalog_model.remove(&(s, t));
                        (s, t)
                    }
                };
                let class = catalog
                    .classify(server, tool, None)
                    .map_err(|e| e.to_string())?
                    .class;
                let expected = catalog_model
                    .get(&(server, tool))
                    .copied()
                    .unwrap_or(ToolClass::Unknown);
                if class != expected {
                    return Err(format!(
                        "step {n}: after {op:?} the catalog says {server}/{tool} is {class:?}, the model {expected:?}"
                    ));
                }
            }
        }
    }
    // The faults are done with; let every task the run started end before the ground truth is read.
    let fired = env.control.faults().await;
    env.control.clear_faults().await;
    settle(&env).await;
    let checked = check(&env, &rewind, &seen).await;
    if std::env::var_os("TEST_LOG").is_some() {
        eprintln!(
            "{}",
            summary(sim_seed, &fired, &seen, &env.insert_tasks().await, &checked)
        );
    }
    checked.map(|_| ())
}

/// One line per run for `TEST_LOG`: the faults that fired, the verdicts, the inserts, and what the
/// check verified (or why it failed).
fn summary(
    sim_seed: u64,
    fired: &Value,
    seen: &Seen,
    inserts: &[(String, String, i64)],
    checked: &Result<Checked, String>,
) -> String {
    let check = match checked {
        Ok(c) => format!(
            "check=ok accounted={} single_checkpoint_pairs={}",
            c.inserts, c.checkpoints
        ),
        Err(e) => format!("check=FAILED {e}"),
    };
    let faults: Vec<String> = fired
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| format!("{}x{}", f["Action"].as_str().unwrap_or("?"), f["Fired"]))
        .collect();
    let verdicts: Vec<String> = seen
        .guards
        .iter()
        .map(|g| match &g.result {
            Ok(r) => format!("{:?}", r.verdict),
            Err(_) => "Err".into(),
        })
        .collect();
    format!(
        "MODEL-RUN seed={sim_seed} faults=[{}] guards=[{}] inserts={} checkpoints={} failed_inserts={} crashes={} journal_faults={} unjournaled={} flr={} errors={} {check}",
        faults.join(","),
        verdicts.join(","),
        inserts.len(),
        inserts.iter().filter(|(_, _, s)| *s == 6).count(),
        inserts.iter().filter(|(_, _, s)| *s == 4).count(),
        seen.crashes,
        seen.journal_faults,
        seen.unjournaled.len(),
        seen.flr_attempts,
        seen.errors.len()
    )
}

/// Guards `vm` (change `m{step}-0`) while the journal's database stops taking rows once the guard's
/// intent is in it: a check no row passes, not checked against the rows already there, stands on
/// the journal's table until the guard ends.
async fn guard_while_the_database_refuses(
    rewind: &rewind_core::Rewind,
    url: &str,
    vm: &'static str,
    step: usize,
) -> Result<GuardCall, String> {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(connection);
    let change = format!("m{step}-0");
    let running = tokio::spawn({
        let rewind = rewind.clone();
        async move { guard(&rewind, vm, step, 0).await }
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let mut refusing = false;
    while !running.is_finished() && std::time::Instant::now() < deadline {
        let intent = client
            .query_opt(
                "SELECT 1 FROM rewind_journal WHERE change_id = $1 LIMIT 1",
                &[&change],
            )
            .await;
        if matches!(intent, Ok(Some(_))) {
            client
                .batch_execute(
                    "ALTER TABLE rewind_journal ADD CONSTRAINT model_full CHECK (false) NOT VALID",
                )
                .await
                .map_err(|e| e.to_string())?;
            refusing = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let call = running.await.map_err(|e| e.to_string())?;
    if refusing {
        client
            .batch_execute("ALTER TABLE rewind_journal DROP CONSTRAINT model_full")
            .await
            .map_err(|e| e.to_string())?;
    }
    Ok(call)
}

/// Guards `vm` (change `m{step}-0`) while the journal stops taking writes once the guard's intent is
/// in it: the file is moved aside and a folder stands in its place until the guard ends.
async fn guard_while_the_journal_fills(
    rewind: &rewind_core::Rewind,
    vm: &'static str,
    step: usize,
) -> Result<GuardCall, String> {
    let path = rewind.journal().path().to_path_buf();
    let aside = path.with_extension("aside");
    let marker = format!("\"change_id\":\"m{step}-0\"");
    let running = tokio::spawn({
        let rewind = rewind.clone();
        async move { guard(&rewind, vm, step, 0).await }
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let mut swapped = false;
    while !running.is_finished() && std::time::Instant::now() < deadline {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        if text.contains(&marker) {
            std::fs::rename(&path, &aside).map_err(|e| e.to_string())?;
            std::fs::create_dir(&path).map_err(|e| e.to_string())?;
            swapped = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let call = running.await.map_err(|e| e.to_string())?;
    if swapped {
        std::fs::remove_dir(&path).map_err(|e| e.to_string())?;
        std::fs::rename(&aside, &path).map_err(|e| e.to_string())?;
    }
    Ok(call)
}

/// Guards `vm` for a change id unique to this step and position.
async fn guard(rewind: &rewind_core::Rewind, vm: &str, step: usize, i: usize) -> GuardCall {
    let change_id = format!("m{step}-{i}");
    let result = rewind
        .guard(
            GuardRequest {
                vm: vm.into(),
                agent: "model".into(),
                action: "property run".into(),
                change_id: change_id.clone(),
            },
            &NoProgress,
        )
        .await
        .map_err(|e| e.to_string());
    GuardCall { change_id, result }
}

fn note_guard(seen: &mut Seen, vm: &'static str, call: GuardCall) {
    match &call.result {
        Ok(r) if r.verdict == Verdict::Guarded => {
            seen.guarded.insert(vm, call.change_id.clone());
        }
        Ok(r) => seen
            .errors
            .extend(r.vpgs.iter().filter_map(|v| v.problem())),
        Err(e) => seen.errors.push(e.clone()),
    }
    seen.guards.push(call);
}

/// Another process (the `admin` user, with its own token) inserts into a protecting VPG of `vm`, after
/// `delay_ms`. Returns its task id when the insert was accepted (a fault may refuse it or lose its
/// answer; then the ground truth still shows it, named by its checkpoint name).
async fn foreign_insert(env: &TestEnv, vm: &str, delay_ms: u64) -> Option<String> {
    tokio::time::sleep(Duration::from_millis(delay_ms)).await;
    let vpg = match vm {
        "web-01" => "web-local",
        "db-01" => "web-dr",
        "app-01" => "app-tier",
        _ => "sql-local",
    };
    let http = reqwest::Client::new();
    let base = &env.sim.local().url;
    // The token endpoint is never faulted; the insert may be, so it is sent by hand.
    let admin = Site::login(&http, base, "admin", "admin").await;
    let vpg_id = env.vpg_id(vpg).await;
    let resp = http
        .post(format!("{base}/v1/vpgs/{vpg_id}/checkpoints"))
        .bearer_auth(&admin.token)
        .json(&json!({"CheckpointName": FOREIGN_TAG}))
        .send()
        .await
        .ok()?;
    if !resp.status().is_success() {
        return None;
    }
    let body: Value = resp.json().await.ok()?;
    body.as_str().map(str::to_string)
}

/// The checkpoint name of the other process's inserts.
const FOREIGN_TAG: &str = "another process's checkpoint";

/// Waits (with a generous deadline) until no task of the simulator is still running.
async fn settle(env: &TestEnv) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while std::time::Instant::now() < deadline {
        if env.control.tasks().await.iter().all(|t| state_of(t) != 1) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The task ids a report names.
fn report_tasks(r: &GuardReport) -> impl Iterator<Item = &str> {
    r.vpgs.iter().filter_map(|v| match &v.outcome {
        Outcome::Tagged { task_id, .. } => task_id.as_deref(),
        Outcome::Error { problem } => problem.task_id(),
        Outcome::Failed { task_id, .. } | Outcome::StillRunning { task_id, .. } => {
            Some(task_id.as_str())
        }
        Outcome::Skipped { .. } => None,
    })
}

/// The properties, against the simulator's ground truth and the journal.
/// What [`check`] verified of one run.
struct Checked {
    /// Insert tasks the simulator ran, each found accounted for.
    inserts: usize,
    /// (change, VPG) pairs with a Completed insert, each found to hold exactly one.
    checkpoints: usize,
}

async fn check(
    env: &TestEnv,
    rewind: &rewind_core::Rewind,
    seen: &Seen,
) -> Result<Checked, String> {
    let tasks = env.control.tasks().await;
    let inserts: Vec<&Value> = tasks
        .iter()
        .filter(|t| t["Type"] == "InsertTaggedCP")
        .collect();
    let journal = rewind
        .journal()
        .read(&JournalFilter::default())
        .map_err(|e| e.to_string())?;
    if journal.skipped_lines > 0 {
        return Err(format!(
            "{} journal lines could not be read",
            journal.skipped_lines
        ));
    }
    let journal_tasks: BTreeSet<&str> = journal
        .records
        .iter()
        .flat_map(|r| r.vpgs.iter().filter_map(|v| v.task_id.as_deref()))
        .collect();
    let reports: Vec<&GuardReport> = seen
        .guards
        .iter()
        .filter_map(|g| g.result.as_ref().ok())
        .collect();
    let reported_tasks: BTreeSet<&str> = reports.iter().flat_map(|r| report_tasks(r)).collect();
    // A lost insert answer reconciled from the checkpoint list has no task id: its tag and VPG say it.
    let mut tagged_by_name: BTreeSet<(String, String)> = reports
        .iter()
        .flat_map(|r| {
            r.vpgs.iter().filter_map(|v| match &v.outcome {
                Outcome::Tagged { task_id: None, .. } => {
                    Some((r.tag.clone(), v.vpg_id.to_lowercase()))
                }
                _ => None,
            })
        })
        .collect();
    // An attempt's intent names each VPG it was about to insert its tag into: a killed guard's
    // inserts, and those of a guard whose verdict could not be written, are accounted for by it.
    tagged_by_name.extend(journal.records.iter().flat_map(|r| {
        r.vpgs
            .iter()
            .filter_map(|v| Some((v.tag.clone()?, v.vpg_id.to_lowercase())))
    }));

    // Notes name the inserts a guard retried (back to back) or waited for; the journal holds them
    // as sentences.
    let noted: BTreeSet<&str> = reports
        .iter()
        .flat_map(|r| {
            r.notes
                .iter()
                .chain(r.vpgs.iter().flat_map(|v| v.notes.iter()))
        })
        .flat_map(tasks_named)
        .collect();
    let journal_notes: Vec<&str> = journal
        .records
        .iter()
        .flat_map(|r| r.notes.iter())
        .map(String::as_str)
        .collect();

    // 1. Every insert the simulator ran is accounted for.
    for t in &inserts {
        let id = t["TaskIdentifier"].as_str().unwrap_or_default();
        let name = t["CheckpointName"].as_str().unwrap_or_default();
        let vpg = t["VpgIdentifier"].as_str().unwrap_or_default();
        let accounted = seen.foreign_tasks.contains(id)
            || name == FOREIGN_TAG
            || reported_tasks.contains(id)
            || journal_tasks.contains(id)
            || tagged_by_name.contains(&(name.to_string(), vpg.to_lowercase()))
            || noted.contains(id)
            || journal_notes.iter().any(|n| n.contains(id));
        if !accounted {
            return Err(format!(
                "insert task {id} ({name:?} into VPG {}, state {}) ran, but no report and no journal record accounts for it; the guards said: {}",
                t["VpgName"],
                state_of(t),
                guards_words(seen)
            ));
        }
    }

    // 2. At most one tagged checkpoint per change and VPG, however often the change was guarded.
    let mut completed: BTreeMap<(String, &str), usize> = BTreeMap::new();
    for t in inserts.iter().filter(|t| state_of(t) == 6) {
        let name = t["CheckpointName"].as_str().unwrap_or_default();
        if let Some(parts) = rewind_core::tagged_checkpoint::parse_tag(name) {
            *completed
                .entry((parts.change_id, t["VpgName"].as_str().unwrap_or_default()))
                .or_default() += 1;
        }
    }
    if let Some(((change, vpg), n)) = completed.iter().find(|(_, n)| **n > 1) {
        return Err(format!(
            "{n} tagged checkpoints of change {change} in VPG {vpg}: a change was inserted twice; the guards said: {}",
            guards_words(seen)
        ));
    }
    for change in &seen.unjournaled {
        let marker = format!("change={change} |");
        if let Some(t) = inserts.iter().find(|t| {
            t["CheckpointName"]
                .as_str()
                .is_some_and(|n| n.contains(&marker))
        }) {
            return Err(format!(
                "the guard of change {change} could not write its journal, yet insert task {} of it ran",
                t["TaskIdentifier"]
            ));
        }
    }

    // 3. Every guard ends guarded, refused or still running with its task ids, and is journaled; a
    //    guard that failed as a whole started no insert.
    for g in &seen.guards {
        let change = format!("change={} |", g.change_id);
        match &g.result {
            Ok(r) if r.journal_error.is_some() => {
                check_report(r, &inserts)?;
                if r.verdict == Verdict::Guarded {
                    return Err(format!("not journaled, yet guarded: {}", r.summary()));
                }
            }
            Ok(r) => {
                check_report(r, &inserts)?;
                let journaled = journal
                    .records
                    .iter()
                    .any(|rec| rec.kind == RecordKind::Guard && rec.change_id == g.change_id);
                if !journaled {
                    return Err(format!(
                        "the guard of change {} ({}) is not in the journal",
                        g.change_id,
                        r.summary()
                    ));
                }
            }
            Err(e) => {
                // An earlier attempt of the same change (a killed one) may have inserted: its
                // intent accounts for that.
                if let Some(t) = inserts.iter().find(|t| {
                    let name = t["CheckpointName"].as_str().unwrap_or_default();
                    let vpg = t["VpgIdentifier"]
                        .as_str()
                        .unwrap_or_default()
                        .to_lowercase();
                    name.contains(&change) && !tagged_by_name.contains(&(name.to_string(), vpg))
                }) {
                    return Err(format!(
                        "the guard of change {} failed as a whole ({e}), yet insert task {} of it ran",
                        g.change_id, t["TaskIdentifier"]
                    ));
                }
            }
        }
    }

    // 4. No 401 surfaced: the credentials were good, so a token could always be had.
    if let Some(e) = seen.errors.iter().find(|e| {
        // "HTTP 401", not "401": a task id may hold those digits.
        e.contains("HTTP 401")
            || e.to_lowercase().contains("authenticat")
            || e.contains(CLIENT_SECRET)
    }) {
        return Err(format!("an authentication failure surfaced: {e}"));
    }

    // 5. Every FLR session was sent its unmount.
    let state = env.control.state().await;
    let sessions = state["Flrs"].as_array().cloned().unwrap_or_default();
    if let Some(s) = sessions.iter().find(|s| s["UnmountTask"].is_null()) {
        return Err(format!(
            "FLR session {} ({} attempt(s)) was never unmounted",
            s["Id"], seen.flr_attempts
        ));
    }
    Ok(Checked {
        inserts: inserts.len(),
        checkpoints: completed.len(),
    })
}

/// The Zerto tasks a guard's note names. Every variant is listed, so that a new one is looked at here.
fn tasks_named(note: &GuardNote) -> Vec<&str> {
    match note {
        GuardNote::TaskIdNotJournaled { task_id, .. }
        | GuardNote::EarlierInsertCompleted { task_id, .. }
        | GuardNote::EarlierInsertEnded { task_id, .. }
        | GuardNote::EarlierInsertStillRunning { task_id, .. }
        | GuardNote::EarlierInsertUnreadable { task_id, .. }
        | GuardNote::NotListedYet { task_id }
        | GuardNote::WaitedForRunning { task_id, .. }
        | GuardNote::RunningUnfollowed { task_id, .. }
        | GuardNote::MaybeOursStillRunning { task_id } => vec![task_id.as_str()],
        GuardNote::BackToBack {
            task_id, culprit, ..
        } => match culprit {
            Culprit::AnotherClient { task_id: other, .. } => vec![task_id.as_str(), other.as_str()],
            Culprit::Unnamed => vec![task_id.as_str()],
        },
        GuardNote::FoundAfterUnknown { task_id, .. } => task_id.as_deref().into_iter().collect(),
        GuardNote::Protection(_)
        | GuardNote::TookOver { .. }
        | GuardNote::NothingProtecting { .. }
        | GuardNote::TagAlreadyListed { .. }
        | GuardNote::OutcomeUnknown { .. }
        | GuardNote::InsertingAgain { .. }
        | GuardNote::RunningUnchecked { .. }
        | GuardNote::ShortWayBack { .. }
        | GuardNote::WayBackUnknown { .. } => Vec::new(),
    }
}

/// What every guard of the run said, with each VPG's outcome and notes.
fn guards_words(seen: &Seen) -> String {
    seen.guards
        .iter()
        .map(|g| match &g.result {
            Ok(r) => format!(
                "[{}: {}; {}]",
                g.change_id,
                r.summary(),
                r.vpgs
                    .iter()
                    .map(|v| format!(
                        "{} {} notes {:?}",
                        v.vpg_name,
                        serde_json::to_string(&v.outcome).unwrap_or_default(),
                        v.notes
                    ))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            Err(e) => format!("[{}: error {e}]", g.change_id),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// One report against the ground truth.
fn check_report(r: &GuardReport, inserts: &[&Value]) -> Result<(), String> {
    let task = |id: &str| {
        inserts
            .iter()
            .find(|t| t["TaskIdentifier"].as_str() == Some(id))
            .copied()
    };
    let mut tagged = 0;
    let mut still_running = 0;
    let mut problems = 0;
    for v in &r.vpgs {
        match &v.outcome {
            Outcome::Tagged { task_id, .. } => {
                tagged += 1;
                if let Some(id) = task_id {
                    let state = task(id).map(state_of);
                    if state != Some(6) {
                        return Err(format!(
                            "{}: VPG {} is reported tagged by task {id}, whose state in the simulator is {state:?}",
                            r.summary(),
                            v.vpg_name
                        ));
                    }
                }
            }
            Outcome::StillRunning { task_id, .. } => {
                still_running += 1;
                if task_id.is_empty() {
                    return Err(format!(
                        "{}: a task still running without its id",
                        r.summary()
                    ));
                }
            }
            Outcome::Failed { task_id, .. } => {
                problems += 1;
                if task(task_id).map(state_of) == Some(6) {
                    return Err(format!(
                        "{}: VPG {} reports task {task_id} failed, but it Completed",
                        r.summary(),
                        v.vpg_name
                    ));
                }
            }
            Outcome::Error { .. } => problems += 1,
            Outcome::Skipped { .. } => {}
        }
        if !matches!(v.outcome, Outcome::Tagged { .. } | Outcome::Skipped { .. })
            && v.problem().is_none()
        {
            return Err(format!(
                "{}: VPG {} was not tagged and says no why",
                r.summary(),
                v.vpg_name
            ));
        }
    }
    let consistent = match r.verdict {
        Verdict::Guarded => tagged > 0 && still_running == 0 && problems == 0,
        Verdict::StillRunning => still_running > 0,
        Verdict::NotGuarded => {
            tagged == 0 || problems > 0 || still_running > 0 || r.journal_error.is_some()
        }
    };
    if !consistent {
        return Err(format!(
            "verdict {:?} with {tagged} tagged, {still_running} still running and {problems} failed: {}",
            r.verdict,
            r.summary()
        ));
    }
    Ok(())
}
