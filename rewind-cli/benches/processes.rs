//! Whole `rewind` processes, as agents' hosts and people run them, against the in-process simulator:
//!
//! - `hook/N`, N = 1, 20,000 and 200,000: `rewind hook pre-tool-use` deciding a mutating call
//!   (`mcp__ssh__run` on web-01) with web-01 guarded a moment ago and N − 1 older guards of 2,000
//!   other VMs before it in the journal, months of a busy team. Each older guard is a copy of a real
//!   guard's records (renamed, re-timed), so the journal is as large as a real one. Beside its time,
//!   each row gives the peak memory of one run (its maximum resident set), and `hook/N (no index)` the
//!   first run after the VM index beside the journal was deleted, which makes it again.
//! - `guard/fresh_three_vpgs`: `rewind guard web-01` (three VPGs, tagged in parallel) as a new
//!   process each time, at an appliance's timings (D = 2 s, L = 0.5 s), once an earlier process learnt
//!   them; with the task and checkpoint reads each VPG cost, from the simulator's `/_sim/calls`.
//! - `guard/fresh_three_vpgs_tls`: the same over HTTPS, as appliances serve it, each site's
//!   self-signed certificate pinned as `rewind trust` keeps it: what a fresh process pays for TLS.
//!
//! At the end it prints a Markdown table (benches/README.md keeps one). Under `cargo test`
//! (criterion's test mode) each runs once, the hook at 1 and 1,000 guards and the guard at short
//! timings, and the hook's decisions and the guards' verdicts are checked. No speed is asserted.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, SamplingMode};
use rewind_benches::{BenchEnv, GroundTruth, Timing, Transport};
use serde_json::{Value, json};
use zvm_sim::test_kit::{CLIENT_ID, CLIENT_SECRET};
use zvm_sim::{SiteEndpoint, WorldSpec};

/// Set in a copy of this bench that runs one program and reports its peak memory.
const PEAK_OF: &str = "REWIND_BENCH_PEAK_OF";
/// The other VMs the older guards are spread over.
const OTHER_VMS: usize = 2_000;
/// How far back the oldest guard is.
const OLDEST: chrono::Duration = chrono::Duration::days(120);
/// The newest older guard, well outside the hook's window.
const NEWEST_OLDER: chrono::Duration = chrono::Duration::hours(1);

fn main() {
    if let Some(code) = peak_of_child() {
        std::process::exit(code);
    }
    let measuring = std::env::args().any(|a| a == "--bench");
    let rt = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let timing = if measuring {
        Timing::APPLIANCE
    } else {
        Timing::SMOKE
    };
    let env = rt
        .block_on(BenchEnv::start(WorldSpec::default_world(), timing))
        .expect("the simulator starts");
    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(5))
        .configure_from_args();
    let mut rows = Vec::new();
    let guards = Home::new(&env);
    rows.push(fresh_guards(
        &mut criterion,
        &rt,
        &env,
        &guards,
        "fresh_three_vpgs",
    ));
    let over_tls = rt
        .block_on(BenchEnv::start_over(
            WorldSpec::default_world(),
            timing,
            Transport::Https,
        ))
        .expect("the simulator starts over HTTPS");
    let tls_home = Home::new(&over_tls);
    rows.push(fresh_guards(
        &mut criterion,
        &rt,
        &over_tls,
        &tls_home,
        "fresh_three_vpgs_tls",
    ));
    rt.block_on(over_tls.shutdown());
    let template = guards.journal_lines_of("learn");
    let sizes: &[usize] = if measuring {
        &[1, 20_000, 200_000]
    } else {
        &[1, 1_000]
    };
    for &n in sizes {
        rows.extend(hooks(&mut criterion, &env, &template, n));
    }
    criterion.final_summary();
    #[expect(
        clippy::print_stdout,
        reason = "the table is the bench's output, after criterion's own"
    )]
    {
        println!("\n## Whole processes\n\n{}", table(&rows, timing));
    }
    rt.block_on(env.shutdown());
}

/// A temporary home of its own (config, state and data folders), a configuration naming both
/// simulated sites, and the `rewind` binary run in it only.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new(env: &BenchEnv) -> Home {
        let dir = tempfile::tempdir().expect("a temporary home");
        let home = Home { dir };
        let config = home.path("config").join("zerto-ai-rewind");
        std::fs::create_dir_all(&config).expect("the config folder");
        // Over HTTPS, each site's certificate is pinned, as `rewind trust` keeps it.
        let site = |name: &str, at: &SiteEndpoint| {
            let url = &at.url;
            let pinned = at.certificate_pem.as_ref().map_or(String::new(), |pem| {
                format!("ca_cert = \"{}\"\n", pem.display())
            });
            format!(
                "[sites.{name}]\nurl = \"{url}\"\nclient_id = \"{CLIENT_ID}\"\nclient_secret = \"{CLIENT_SECRET}\"\n{pinned}"
            )
        };
        let text = format!(
            "{}\n{}",
            site("boston", env.sim().local()),
            site("denver", env.sim().peer())
        );
        let file = config.join("config.toml");
        std::fs::write(&file, text).expect("the configuration is written");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600))
            .expect("the configuration is the owner's");
        home.run(
            &["catalog", "add-mutating", "ssh", "run", "--vm-arg", "host"],
            None,
        );
        home
    }

    fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }

    fn journal(&self) -> PathBuf {
        self.path("state")
            .join("zerto-ai-rewind")
            .join("journal.jsonl")
    }

    /// `program args...` in this home's environment only.
    fn command(&self, program: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .env_clear()
            .env("HOME", self.path("home"))
            .env("XDG_CONFIG_HOME", self.path("config"))
            .env("XDG_STATE_HOME", self.path("state"))
            .env("XDG_DATA_HOME", self.path("data"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// Runs `rewind args...` with `stdin`, to its end.
    fn run(&self, args: &[&str], stdin: Option<&str>) -> Output {
        let cmd = self.command(Path::new(env!("CARGO_BIN_EXE_rewind")), args);
        run(cmd, stdin)
    }

    /// The peak memory, in KiB, of one run of `rewind args...` with `stdin`: a copy of this bench
    /// runs it as its only child and reports the children's maximum resident set.
    fn peak_kib(&self, args: &[&str], stdin: Option<&str>) -> u64 {
        let me = std::env::current_exe().expect("this bench's own path");
        let mut cmd = self.command(&me, args);
        cmd.env(PEAK_OF, env!("CARGO_BIN_EXE_rewind"));
        let out = run(cmd, stdin);
        let text = String::from_utf8_lossy(&out.stdout);
        text.trim()
            .parse()
            .unwrap_or_else(|_| panic!("a peak in KiB, not {text:?}"))
    }

    /// The journal's lines of the guard with change id `change`.
    fn journal_lines_of(&self, change: &str) -> Vec<Value> {
        let text = std::fs::read_to_string(self.journal()).expect("the journal is read");
        text.lines()
            .map(|l| serde_json::from_str::<Value>(l).expect("a journal line is JSON"))
            .filter(|r| r["change_id"] == change)
            .collect()
    }
}

/// Runs `cmd` with `stdin`, to its end.
fn run(mut cmd: Command, stdin: Option<&str>) -> Output {
    let mut child = cmd.spawn().expect("the program starts");
    let mut input = child.stdin.take().expect("a piped stdin");
    input
        .write_all(stdin.unwrap_or_default().as_bytes())
        .expect("stdin is written");
    drop(input);
    child.wait_with_output().expect("the program ends")
}

/// In a copy of this bench started by [`Home::peak_kib`]: runs the program `PEAK_OF` names with
/// this process's arguments, environment and stdin, prints its maximum resident set in KiB, and
/// returns the exit code to leave with. `None` in the bench itself.
fn peak_of_child() -> Option<i32> {
    let program = std::env::var_os(PEAK_OF)?;
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let status = Command::new(program)
        .args(args)
        .env_remove(PEAK_OF)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("the measured program starts");
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
        .expect("the children's resource usage");
    // Linux gives ru_maxrss in KiB; the parent reads it from this line.
    #[expect(
        clippy::print_stdout,
        reason = "the peak is this child's answer to its parent"
    )]
    {
        println!("{}", usage.max_rss());
    }
    Some(if status.code().is_some() { 0 } else { 1 })
}

/// One row of the table.
struct Row {
    bench: String,
    runs: Vec<Duration>,
    peak_kib: Option<u64>,
    /// For the hook: the journal's size.
    journal_bytes: Option<u64>,
    /// For the guard: reads per VPG (tasks, checkpoints) and token requests per process.
    reads: Option<(f64, f64, f64)>,
}

/// `rewind guard web-01` by a new process each time, after one that learnt the site's timings: the
/// bench `guard/{name}`.
fn fresh_guards(
    criterion: &mut Criterion,
    rt: &tokio::runtime::Runtime,
    env: &BenchEnv,
    home: &Home,
    name: &str,
) -> Row {
    let guard = |change: &str| {
        let out = home.run(
            &[
                "guard", "web-01", "--agent", "bench", "--action", "edit", "--change", change,
            ],
            None,
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "rewind guard: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    guard("learn");
    let before = rt.block_on(env.ground_truth());
    let mut runs = Vec::new();
    let mut count = 0;
    let mut group = criterion.benchmark_group("guard");
    group.sampling_mode(SamplingMode::Flat);
    group.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                count += 1;
                let start = Instant::now();
                guard(&format!("fresh-{count}"));
                let took = start.elapsed();
                runs.push(took);
                total += took;
            }
            total
        })
    });
    group.finish();
    let after = rt.block_on(env.ground_truth());
    Row {
        bench: format!("guard/{name}"),
        runs,
        peak_kib: None,
        journal_bytes: None,
        reads: Some(reads_per_vpg(&before, &after, count)),
    }
}

/// Task and checkpoint reads per VPG, and token requests per process, between two truths.
fn reads_per_vpg(before: &GroundTruth, after: &GroundTruth, processes: usize) -> (f64, f64, f64) {
    let of = |truth: &GroundTruth, kind: &str| {
        truth.calls_by_kind.get(kind).copied().unwrap_or(0) as f64
    };
    let grew = |kind: &str| of(after, kind) - of(before, kind);
    let inserts = (after.inserts - before.inserts) as f64;
    assert_eq!(after.failed_inserts, 0, "no insert failed");
    let tokens = (after.total_token_requests() - before.total_token_requests()) as f64;
    (
        grew("GET /v1/tasks/{id}") / inserts,
        grew("GET /v1/vpgs/{id}/checkpoints") / inserts,
        tokens / processes as f64,
    )
}

/// The hook deciding `mcp__ssh__run` on web-01 with `n` guards in the journal, the newest web-01's.
fn hooks(criterion: &mut Criterion, env: &BenchEnv, template: &[Value], n: usize) -> Vec<Row> {
    let home = Home::new(env);
    write_journal(&home.journal(), template, n);
    let journal_bytes = std::fs::metadata(home.journal()).ok().map(|m| m.len());
    let input = json!({
        "session_id": "s-1",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": "/work",
        "hook_event_name": "PreToolUse",
        "tool_name": "mcp__ssh__run",
        "tool_input": {"host": "web-01"},
    })
    .to_string();
    let args = ["hook", "pre-tool-use"];
    let decide = || {
        let out = home.run(&args, Some(&input));
        let answer: Value = serde_json::from_slice(&out.stdout).expect("the hook answers JSON");
        assert_eq!(
            answer["hookSpecificOutput"]["permissionDecision"], "allow",
            "{answer}"
        );
    };
    // Its first run makes the VM index the journal's writer would have kept.
    let start = Instant::now();
    decide();
    let first = Row {
        bench: format!("hook/{n} (no index)"),
        runs: vec![start.elapsed()],
        peak_kib: None,
        journal_bytes,
        reads: None,
    };
    let mut runs = Vec::new();
    criterion.bench_with_input(BenchmarkId::new("hook", n), &n, |b, _| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let start = Instant::now();
                decide();
                let took = start.elapsed();
                runs.push(took);
                total += took;
            }
            total
        })
    });
    let peak = home.peak_kib(&args, Some(&input));
    let mut rows = vec![Row {
        bench: format!("hook/{n}"),
        runs,
        peak_kib: Some(peak),
        journal_bytes,
        reads: None,
    }];
    if n > 1 {
        std::fs::remove_file(home.journal().with_extension("vms")).expect("the index is there");
        let peak = home.peak_kib(&args, Some(&input));
        rows.push(Row {
            peak_kib: Some(peak),
            ..first
        });
    }
    rows
}

/// A journal of `n` guards: `n − 1` older ones of other VMs, from [`OLDEST`] ago to
/// [`NEWEST_OLDER`] ago, then web-01's, now. Each is `template` (a real guard's records) renamed and
/// re-timed.
fn write_journal(path: &Path, template: &[Value], n: usize) {
    let now = chrono::Utc::now();
    let older = n - 1;
    let span = (OLDEST - NEWEST_OLDER).num_seconds();
    std::fs::create_dir_all(path.parent().expect("a folder")).expect("the journal's folder");
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).expect("the journal"));
    for i in 0..older {
        let at = now - OLDEST + chrono::Duration::seconds(span * i as i64 / older.max(1) as i64);
        let vm = i % OTHER_VMS;
        for line in template {
            let mut record = line.clone();
            record["time"] = json!(at.to_rfc3339());
            record["change_id"] = json!(format!("older-{i}"));
            if record["attempt"].is_object() {
                record["attempt"]["id"] = json!(format!("older-attempt-{i}"));
            }
            record["vm"]["id"] = json!(format!("bench.vm-{vm}"));
            record["vm"]["name"] = json!(format!("vm-{vm}"));
            record["vm"]["ip_addresses"] = json!([format!("10.9.{}.{}", vm / 250, vm % 250)]);
            writeln!(out, "{record}").expect("a journal line");
        }
    }
    for line in template {
        let mut record = line.clone();
        record["time"] = json!(now.to_rfc3339());
        writeln!(out, "{record}").expect("a journal line");
    }
    out.flush().expect("the journal is written");
}

/// The median and the 95th percentile of some runs.
fn median_p95(runs: &[Duration]) -> (Duration, Duration) {
    let mut sorted = runs.to_vec();
    sorted.sort();
    let at = |p: f64| sorted[((sorted.len() - 1) as f64 * p).round() as usize];
    (at(0.5), at(0.95))
}

/// The Markdown table of every row.
fn table(rows: &[Row], timing: Timing) -> String {
    let ms = |d: Duration| format!("{:.1} ms", d.as_secs_f64() * 1000.0);
    let hook_one = rows
        .iter()
        .find(|r| r.bench == "hook/1" && !r.runs.is_empty())
        .map(|r| median_p95(&r.runs).0);
    let floor = timing.task + timing.listing_lag;
    let mut text = String::from(
        "| bench | journal | runs | median | p95 | × reference | peak memory | reads per VPG (tasks, checkpoints) | token requests per process |\n|---|---:|---:|---:|---:|---:|---:|---|---:|\n",
    );
    // A row criterion's filter left out has no runs.
    for row in rows.iter().filter(|r| !r.runs.is_empty()) {
        let (median, p95) = median_p95(&row.runs);
        let reference = match (&row.reads, hook_one) {
            (Some(_), _) => Some((floor, "D+L")),
            (None, Some(one)) => Some((one, "hook/1")),
            (None, None) => None,
        };
        let ratio = reference.map_or("".into(), |(of, name)| {
            format!("{:.2} × {name}", median.as_secs_f64() / of.as_secs_f64())
        });
        let mb = |bytes: f64| format!("{:.1} MB", bytes / 1e6);
        let peak = row.peak_kib.map_or("".into(), |k| mb(k as f64 * 1024.0));
        let journal = row.journal_bytes.map_or("".into(), |b| mb(b as f64));
        let (reads, tokens) = row.reads.map_or(("".into(), "".into()), |(t, c, tok)| {
            (format!("{t:.1}, {c:.1}"), format!("{tok:.1}"))
        });
        text.push_str(&format!(
            "| {} | {journal} | {} | {} | {} | {ratio} | {peak} | {reads} | {tokens} |\n",
            row.bench,
            row.runs.len(),
            ms(median),
            ms(p95)
        ));
    }
    text
}
