//! The acceptance suite's runner: every `*.feature` under `features/specs/`, each scenario in its own
//! [`RewindWorld`] (a fresh seeded simulator, a temporary home, the real `rewind` and `rewind-mcp`).
//!
//! - The two binaries are built first with the cargo and profile that run this test.
//! - A failing, skipped or undefined step fails the run (exit code 1); a JUnit report is written to
//!   `<target>/cucumber/acceptance.xml`.
//! - With `ZVM_URL` and credentials set, only `@real-zvm` scenarios run, against that ZVM (see
//!   `features::real`); `@inserts-tag` among them only when `REWIND_FEATURES_VPG` names a VPG.
//! - Arguments are cucumber's (`--name REGEX`, `--tags EXPR`, `--fail-fast`, `-c N`); a libtest
//!   argument that `cargo test` may pass on is dropped, a bare word filters scenarios by name, and
//!   `--list` lists nothing (so test listers such as nextest see no libtest tests here).

mod steps;

use std::path::PathBuf;

use cucumber::cli::Parser as _;
use cucumber::{World as _, WriterExt as _, gherkin, writer};
use features::RewindWorld;
use features::bins::{self, TargetLayout};
use features::real::{RealZvm, VPG_VAR};
use futures::FutureExt as _;

/// The tag of the scenarios that are safe against a real appliance.
const REAL_ZVM: &str = "real-zvm";
/// The tag of the one scenario that writes to a real appliance (one tag into the named VPG).
const INSERTS_TAG: &str = "inserts-tag";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        return;
    }
    let cli_args = cucumber_args(&args);

    if let Err(e) = bins::prepare() {
        eprintln!("acceptance: {e}");
        std::process::exit(1);
    }
    let real = RealZvm::from_env();
    if let Some(problem) = real.as_ref().and_then(RealZvm::problem) {
        eprintln!("acceptance: {problem}");
        std::process::exit(2);
    }
    let may_insert = real.as_ref().is_none_or(|r| r.vpg.is_some());
    match &real {
        Some(r) => eprintln!(
            "acceptance: ZVM_URL is set: running only the @{REAL_ZVM} scenarios against it, on VM {:?}{}",
            r.vm,
            if may_insert {
                String::new()
            } else {
                format!(" (read-only: {VPG_VAR} is not set, so @{INSERTS_TAG} is left out)")
            }
        ),
        None if std::env::var_os("ZVM_URL").is_some() => eprintln!(
            "acceptance: ZVM_URL is set without credentials, so every scenario runs against the simulator"
        ),
        None => {}
    }

    let junit = junit_path();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("the async runtime starts");
    runtime.block_on(run(cli_args, junit, real.is_some(), may_insert));
}

async fn run(cli_args: Vec<String>, junit: PathBuf, real: bool, may_insert: bool) {
    let junit_file = std::fs::File::create(&junit)
        .unwrap_or_else(|e| panic!("cannot write the JUnit report {}: {e}", junit.display()));
    let specs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("specs");
    let builder = RewindWorld::cucumber()
        // Scenarios mostly wait on simulated Zerto tasks and child processes; a few at once keep two
        // cores busy without starving the timing of any.
        .max_concurrent_scenarios(concurrency())
        .before(move |feature, _rule, scenario, world| {
            async move {
                if real && !has_tag(feature, scenario, REAL_ZVM) {
                    // The filter below leaves these out; a tag expression given on the command line
                    // replaces it, so refuse here too: only @real-zvm scenarios touch a real ZVM.
                    panic!(
                        "{:?} is not a @{REAL_ZVM} scenario, and ZVM_URL is set",
                        scenario.name
                    );
                }
                world.seed = seed_of(&scenario.name);
            }
            .boxed_local()
        })
        .after(|_feature, _rule, _scenario, _finished, world| {
            async move {
                if let Some(world) = world {
                    world.tear_down().await;
                }
            }
            .boxed_local()
        })
        .with_writer(
            writer::Basic::stdout()
                .summarized()
                .tee::<RewindWorld, _>(writer::JUnit::for_tee(junit_file, 0))
                .normalized(),
        )
        .fail_on_skipped();
    let opts = cucumber::cli::Opts::<_, _, _, cucumber::cli::Empty>::try_parse_from(&cli_args)
        .unwrap_or_else(|e| e.exit());
    let writer = builder
        .with_cli(opts)
        .filter_run(specs, move |feature, _rule, scenario| {
            let tagged = |tag: &str| has_tag(feature, scenario, tag);
            !real || (tagged(REAL_ZVM) && (may_insert || !tagged(INSERTS_TAG)))
        })
        .await;
    eprintln!("acceptance: JUnit report in {}", junit.display());
    use cucumber::writer::Stats as _;
    if writer.execution_has_failed() {
        eprintln!(
            "acceptance: {} step(s) failed, {} skipped or undefined, {} parsing error(s), {} hook error(s)",
            writer.failed_steps(),
            writer.skipped_steps(),
            writer.parsing_errors(),
            writer.hook_errors()
        );
        std::process::exit(1);
    }
}

/// Whether a scenario carries `tag`, itself or through its feature.
fn has_tag(feature: &gherkin::Feature, scenario: &gherkin::Scenario, tag: &str) -> bool {
    feature.tags.iter().chain(&scenario.tags).any(|t| t == tag)
}

/// The simulator's seed for a scenario: `FEATURES_SEED`, or a hash of the scenario's name, so each
/// scenario is repeatable and they differ from one another.
fn seed_of(name: &str) -> u64 {
    if let Some(seed) = std::env::var("FEATURES_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        return seed;
    }
    // FNV-1a: stable across toolchains, unlike the standard library's hasher.
    let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    hash % 1_000_000
}

fn concurrency() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get() * 2)
        .unwrap_or(4)
        .clamp(2, 8)
}

/// `<target>/cucumber/acceptance.xml`, next to everything else cargo builds for this run.
fn junit_path() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .or_else(|| TargetLayout::of_current_exe().ok().map(|l| l.target_dir))
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"));
    let dir = target.join("cucumber");
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("cannot make the report folder {}: {e}", dir.display()));
    dir.join("acceptance.xml")
}

/// The arguments cucumber understands: libtest's own (which `cargo test` passes on to every test
/// binary) are dropped, and a bare word, libtest's name filter, becomes cucumber's `--name`.
fn cucumber_args(args: &[String]) -> Vec<String> {
    const LIBTEST_FLAGS: [&str; 10] = [
        "--nocapture",
        "--show-output",
        "--ignored",
        "--include-ignored",
        "--exact",
        "--quiet",
        "-q",
        "--bench",
        "--test",
        "--no-capture",
    ];
    const LIBTEST_VALUES: [&str; 6] = [
        "--test-threads",
        "--format",
        "--skip",
        "--logfile",
        "-Z",
        "--report-time",
    ];
    let mut out = vec![args.first().cloned().unwrap_or_else(|| "acceptance".into())];
    let mut rest = args.iter().skip(1).peekable();
    while let Some(arg) = rest.next() {
        let flag = arg.split('=').next().unwrap_or(arg);
        if LIBTEST_FLAGS.contains(&arg.as_str()) {
            continue;
        }
        if LIBTEST_VALUES.contains(&flag) {
            if !arg.contains('=') {
                rest.next();
            }
            continue;
        }
        if !arg.starts_with('-') && !out.last().is_some_and(|prev| takes_value(prev)) {
            out.push("--name".into());
        }
        out.push(arg.clone());
    }
    out
}

/// Whether a cucumber option takes the next argument as its value.
fn takes_value(option: &str) -> bool {
    matches!(
        option,
        "--name"
            | "-n"
            | "--scenario-name"
            | "--tags"
            | "-t"
            | "--concurrency"
            | "-c"
            | "--retry"
            | "--retry-after"
            | "--retry-tag-filter"
            | "--color"
            | "--junit-v"
    )
}
