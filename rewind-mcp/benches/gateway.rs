//! What the gateway adds to a call, against the same call made directly to its upstream over stdio.
//! The upstream is a `rewind-mcp` child answering `zerto_check_tool` from its own catalog (a call
//! that costs the upstream little, so the gateway's part shows); the gateway is `rewind-mcp
//! --gateway` as a client starts it, in front of two upstreams of that same command:
//!
//! - `gateway/direct`: the client calls the upstream itself;
//! - `gateway/read_only`: the client calls `ro__zerto_check_tool` through the gateway, which the
//!   catalog says is read-only: judged, then forwarded;
//! - `gateway/mutating_in_window`: the client calls `mu__zerto_check_tool` through the gateway,
//!   which the catalog says is mutating and whose upstream changes web-01: web-01 was guarded in
//!   this hook window by the first call, so each call finds that guard in the journal, journals
//!   itself (one line synced before it is sent, one after), and is forwarded.
//!
//! At the end it prints each one's p50 and p90 over single calls, and the overheads (benches in
//! rewind-mcp's README line of benches/README.md). Under `cargo test` (criterion's test mode) each
//! runs once and the answers are checked: the same through the gateway as direct, the mutating call
//! guarded once and then reused. No speed is asserted.

use std::path::Path;
use std::time::{Duration, Instant};

use criterion::Criterion;
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

/// The single calls each p50 is taken over.
const CALLS: usize = 400;

type Client = RunningService<RoleClient, ()>;

fn main() {
    let measuring = std::env::args().any(|a| a == "--bench");
    let rt = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let sim = rt
        .block_on(zvm_sim::start(zvm_sim::Options::for_tests(7)))
        .expect("the simulator starts");
    let dir = tempfile::tempdir().expect("a temporary folder");
    let (direct, gateway) = rt.block_on(clients(dir.path(), &sim));
    let first = rt.block_on(call(&gateway, "mu__zerto_check_tool"));
    check_guarded(&first, false);
    let mut criterion = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    let cases = [
        ("direct", &direct, "zerto_check_tool"),
        ("read_only", &gateway, "ro__zerto_check_tool"),
        ("mutating_in_window", &gateway, "mu__zerto_check_tool"),
    ];
    for (name, client, tool) in cases {
        criterion.bench_function(&format!("gateway/{name}"), |b| {
            b.to_async(&rt).iter(|| call(client, tool));
        });
    }
    let direct_answer = rt.block_on(call(&direct, "zerto_check_tool"));
    let through = rt.block_on(call(&gateway, "ro__zerto_check_tool"));
    assert_eq!(through.structured_content, direct_answer.structured_content);
    check_guarded(&rt.block_on(call(&gateway, "mu__zerto_check_tool")), true);
    criterion.final_summary();
    if measuring {
        let rows: Vec<(&str, Vec<Duration>)> = cases
            .iter()
            .map(|(name, client, tool)| (*name, rt.block_on(latencies(client, tool))))
            .collect();
        #[expect(
            clippy::print_stdout,
            reason = "the table is the bench's output, after criterion's own"
        )]
        {
            println!("\n## The gateway's cost\n\n{}", table(&rows));
        }
    }
}

/// A client of the upstream itself and one of the gateway in front of it, configured in `dir`.
async fn clients(dir: &Path, sim: &zvm_sim::Simulator) -> (Client, Client) {
    let mcp = env!("CARGO_BIN_EXE_rewind-mcp");
    let inner = dir.join("inner.toml");
    write(
        &inner,
        &format!(
            "catalog = {:?}\njournal = {:?}\n",
            dir.join("inner-catalog.toml"),
            dir.join("inner-journal.jsonl")
        ),
    );
    write(
        &dir.join("inner-catalog.toml"),
        "[[read_only]]\nserver = \"x\"\ntool = \"y\"\n",
    );
    let site = |name: &str, url: &str| {
        format!(
            "[sites.{name}]\nurl = {url:?}\nclient_id = \"rewind\"\nclient_secret = \"rewind-secret\"\n"
        )
    };
    let upstream = |name: &str, vm: &str| {
        format!(
            "[[gateway.upstream]]\nname = {name:?}\ncommand = {mcp:?}\nargs = [\"--config\", {inner:?}]\n{vm}"
        )
    };
    let outer = dir.join("outer.toml");
    write(
        &outer,
        &format!(
            "catalog = {:?}\njournal = {:?}\n{}{}{}{}",
            dir.join("catalog.toml"),
            dir.join("journal.jsonl"),
            site("boston", &sim.local().url),
            site("denver", &sim.peer().url),
            upstream("ro", ""),
            upstream("mu", "vm = \"web-01\"\n"),
        ),
    );
    write(
        &dir.join("catalog.toml"),
        "[[read_only]]\nserver = \"ro\"\ntool = \"zerto_check_tool\"\n\n\
         [[mutating]]\nserver = \"mu\"\ntool = \"zerto_check_tool\"\n",
    );
    let direct = child(mcp, &["--config", inner.to_str().unwrap()], dir).await;
    let gateway = child(
        mcp,
        &["--config", outer.to_str().unwrap(), "--gateway"],
        dir,
    )
    .await;
    (direct, gateway)
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).expect("a file of the bench");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).expect("its mode");
}

/// `program args` as a stdio child in `home`, and a client of it.
async fn child(program: &str, args: &[&str], home: &Path) -> Client {
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .kill_on_drop(true);
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("rewind-mcp starts");
    ().serve(transport).await.expect("the MCP session starts")
}

/// One call of `tool`, asking the upstream's catalog about x/y.
async fn call(client: &Client, tool: &str) -> CallToolResult {
    let args = json!({"server": "x", "tool": "y"});
    let params = CallToolRequestParams::new(tool.to_owned())
        .with_arguments(args.as_object().expect("an object").clone());
    let answer = client.call_tool(params).await.expect("an answer");
    assert_ne!(answer.is_error, Some(true), "{answer:?}");
    answer
}

/// A mutating call's answer: guarded by web-01's three tags, `reused` as expected.
fn check_guarded(answer: &CallToolResult, reused: bool) {
    let meta = answer
        .meta
        .as_ref()
        .map(|m| json!(m))
        .unwrap_or(Value::Null);
    let guard = &meta["io.zerto-rewind/guard"];
    assert_eq!(guard["tags"].as_array().map(Vec::len), Some(3), "{meta}");
    assert_eq!(guard["reused"], reused, "{meta}");
}

/// [`CALLS`] single calls of `tool`, each timed, after a few untimed.
async fn latencies(client: &Client, tool: &str) -> Vec<Duration> {
    for _ in 0..20 {
        call(client, tool).await;
    }
    let mut out = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let began = Instant::now();
        call(client, tool).await;
        out.push(began.elapsed());
    }
    out.sort();
    out
}

fn at(sorted: &[Duration], q: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// The Markdown table: each case's p50 and p90, and its p50 over the direct call's.
fn table(rows: &[(&str, Vec<Duration>)]) -> String {
    let ms = |d: Duration| d.as_secs_f64() * 1_000.0;
    let direct = at(&rows[0].1, 0.5);
    let mut out = String::from("| call | p50 | p90 | p50 over direct |\n|---|---|---|---|\n");
    for (name, sorted) in rows {
        let p50 = at(sorted, 0.5);
        out.push_str(&format!(
            "| {name} | {:.3} ms | {:.3} ms | {:+.3} ms |\n",
            ms(p50),
            ms(at(sorted, 0.9)),
            ms(p50) - ms(direct)
        ));
    }
    out
}
