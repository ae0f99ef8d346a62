//! Tag-and-await latency of rewind-core's guard under concurrent calls, against the in-process
//! simulator with a fixed task duration D and listing lag L.
//!
//! - `guard/one_vpg`, `guard/three_vpgs`: one guard of app-01 (one VPG) and of web-01 (three VPGs,
//!   tagged in parallel), in the simulator's default world (12 VMs). Floor D + L.
//! - `distinct/N` for N = 1, 8, 64, 256: N guards of N VMs, each alone in its VPG, started together,
//!   in a world of 332 VMs (so `distinct/1` is `guard/one_vpg` with a realistic lookup). Floor D + L.
//! - `team_server/distinct/64`: `distinct/64` through a team server (`rewind_mcp::serve_http` in this
//!   process, over loopback HTTP, no sign-in, journaling in the bench's store): 64 agents, each an MCP
//!   client with a session of its own, call `zerto_guard_before_mutate` at once. Floor D + L.
//! - `team_server/appliance_one_vpg`: `appliance/one_vpg` (below) through a team server, one agent.
//! - `shared_vpg/N` for N = 8, 64: N guards of N VMs that share one VPG, which must take turns.
//!   Floor N × D.
//! - `token/cold_1`, `token/warm_256`, `token/cold_256`: one read by a new client, 256 concurrent reads
//!   by a client that holds a token, and 256 concurrent reads by a new client (the cold token storm,
//!   which must cost one token request). The first two are their own floors; the storm's is their sum.
//! - `scale/guard/N`, `scale/find/N` for N = 12, 1,000, 10,000, 100,000 VMs: one guard, and one
//!   lookup, of a VM in one VPG, in the default world and in generated worlds of that size. Each is
//!   compared with its 12-VM figure (and the guard with D + L) in a table of its own.
//! - `appliance/one_vpg`, `appliance/three_vpgs`: the single guards again at the simulator's default
//!   timings (D = 2 s, L = 0.5 s, closer to an appliance's), in a table of their own with the calls
//!   each insert cost.
//!
//! Each bench gets its own simulator and its own long-lived client (both sites, as users configure
//! them), so the simulator's ground truth (`/_sim/calls`, `/_sim/tasks`) is the bench's alone. At the end
//! of `cargo bench` a Markdown table gives each result as a ratio to its floor, with token requests, 401s
//! and failed inserts. Under `cargo test` (criterion's test mode: one iteration each, short timings) the
//! same ground truth is checked, and any 401, failed insert, guard not `guarded` or token count other
//! than one per site fails the run. No speed is ever asserted.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, SamplingMode};
use rewind_benches::env::{Sites, measuring, runtime};
use rewind_benches::record::{join_batch, spawn_guard};
use rewind_benches::report::{ScalePoint, Target, scale_table};
use rewind_benches::world::{self, APP_01, SCALE_SIZES, WEB_01};
use rewind_benches::{Batch, BenchEnv, Floor, GuardRecord, Recorder, Row, Summary, Timing};
use rewind_core::{GuardRequest, Rewind};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use tokio::runtime::Runtime;
use zvm_sim::WorldSpec;

/// VMs that each have a VPG of their own in the bench world: enough for the largest distinct batch.
const DISTINCT_VMS: usize = 256;
/// VMs that share one VPG: enough for the largest queue.
const SHARED_VMS: usize = 64;
/// Concurrent calls of the token storm.
const STORM: usize = 256;
/// Agents guarding at once through a team server.
const AGENTS: usize = 64;

/// An agent of a team server: an MCP client with a session of its own.
type Agent = RunningService<RoleClient, ()>;

/// The guard target: a single guard within 10 % of D + L.
const SINGLE: Target = Target::batch(1.10);
/// 64 concurrent guards of distinct VMs: the median guard within 25 % of D + L.
const CONCURRENT: Target = Target::guard(1.25);
/// A queue of guards at one VPG within 10 % of N × D.
const QUEUE: Target = Target::batch(1.10);
/// A single guard at an appliance's timings within 5 % of D + L.
const APPLIANCE: Target = Target::batch(1.05);

/// What every bench needs: criterion, the runtime, the timings and the summaries being built.
struct Run {
    criterion: Criterion,
    rt: Runtime,
    /// Whether this is `cargo bench` (or the smoke run of `cargo test`).
    measuring: bool,
    timing: Timing,
    summary: Summary,
    /// The single guards at an appliance's timings.
    appliance: Summary,
    /// The scale benches, by world size.
    scale: Vec<ScalePoint>,
    /// Makes every change id of the run unique, so every tag is.
    changes: AtomicU64,
}

impl Run {
    /// Starts a bench's simulator and its client.
    fn env(&self, world: WorldSpec) -> BenchEnv {
        self.env_at(world, self.timing)
    }

    /// Starts a bench's simulator with `timing`, and its client.
    fn env_at(&self, world: WorldSpec, timing: Timing) -> BenchEnv {
        self.rt
            .block_on(BenchEnv::start(world, timing))
            .unwrap_or_else(|e| panic!("the bench environment did not start: {e}"))
    }

    /// Reads the bench's ground truth, adds its row, and stops its simulator.
    fn finish(
        &mut self,
        env: BenchEnv,
        bench: &str,
        floor: Floor,
        recorder: &Recorder,
        expected_token_requests: impl FnOnce(usize) -> usize,
        target: Option<Target>,
    ) {
        if let Some(row) = self.row(env, bench, floor, recorder, expected_token_requests, target) {
            self.summary.push(row);
        }
    }

    /// The bench's row from its recorder and its ground truth, once its simulator is stopped; `None`
    /// when criterion filtered the bench out.
    fn row(
        &self,
        env: BenchEnv,
        bench: &str,
        floor: Floor,
        recorder: &Recorder,
        expected_token_requests: impl FnOnce(usize) -> usize,
        target: Option<Target>,
    ) -> Option<Row> {
        let batches = recorder.take();
        let truth = self.rt.block_on(env.ground_truth());
        let timing = env.timing();
        self.rt.block_on(env.shutdown());
        let expected = expected_token_requests(batches.len());
        Row::new(bench, floor, timing, &batches, truth, expected, target)
    }

    /// Benches batches of concurrent guards of `vms` with the bench's long-lived client.
    fn guards(
        &mut self,
        world: WorldSpec,
        group: &str,
        id: BenchmarkId,
        vms: Vec<String>,
    ) -> (BenchEnv, Recorder) {
        let env = self.env(world);
        let recorder = self.guards_in(&env, group, id, vms);
        (env, recorder)
    }

    /// Benches batches of concurrent guards of `vms` in `env`, with its long-lived client.
    fn guards_in(
        &mut self,
        env: &BenchEnv,
        group: &str,
        id: BenchmarkId,
        vms: Vec<String>,
    ) -> Recorder {
        let (rewind, changes) = (env.rewind(), &self.changes);
        measure(&mut self.criterion, &self.rt, group, id, || {
            guard_batch(rewind, &vms, changes)
        })
    }

    fn single_guards(&mut self) {
        for (name, vm) in [("one_vpg", APP_01), ("three_vpgs", WEB_01)] {
            let (env, recorder) = self.guards(
                WorldSpec::default_world(),
                "guard",
                BenchmarkId::from_parameter(name),
                vec![vm.into()],
            );
            self.finish(
                env,
                &format!("guard/{name}"),
                Floor::Guard,
                &recorder,
                |_| 2,
                Some(SINGLE),
            );
        }
    }

    fn distinct_guards(&mut self) {
        for n in [1, 8, 64, 256] {
            let vms = (0..n).map(world::distinct_vm).collect();
            let (env, recorder) =
                self.guards(big_world(), "distinct", BenchmarkId::from_parameter(n), vms);
            let target = (n == 64).then_some(CONCURRENT);
            self.finish(
                env,
                &format!("distinct/{n}"),
                Floor::Guard,
                &recorder,
                |_| 2,
                target,
            );
        }
    }

    /// `distinct/64` through a team server.
    fn through_team_server(&mut self) {
        let env = self.env(big_world());
        let vms = (0..AGENTS).map(world::distinct_vm).collect();
        let recorder = self.agents_in(&env, BenchmarkId::new("distinct", AGENTS), vms);
        self.finish(
            env,
            &format!("team_server/distinct/{AGENTS}"),
            Floor::Guard,
            &recorder,
            |_| 2,
            Some(CONCURRENT),
        );
    }

    /// Benches batches of guards of `vms` in `env` through a team server, one agent a VM. The server
    /// journals where the bench's client does (a file, or PostgreSQL with
    /// `REWIND_BENCH_JOURNAL=postgresql`) and shares the client's connections and tokens, as its
    /// tools share one `Rewind`.
    fn agents_in(&mut self, env: &BenchEnv, id: BenchmarkId, vms: Vec<String>) -> Recorder {
        let agents = self.rt.block_on(async {
            let url = team_server(env.rewind().clone()).await;
            agents(&url, vms.len()).await
        });
        let changes = &self.changes;
        let recorder = measure(&mut self.criterion, &self.rt, "team_server", id, || {
            agents_batch(&agents, &vms, changes)
        });
        for agent in agents {
            // The session ends with the bench; how it ends says nothing of the guards.
            let _ = self.rt.block_on(agent.cancel());
        }
        recorder
    }

    fn shared_vpg(&mut self) {
        for n in [8, 64] {
            let vms = (0..n).map(world::shared_vm).collect();
            let (env, recorder) = self.guards(
                big_world(),
                "shared_vpg",
                BenchmarkId::from_parameter(n),
                vms,
            );
            self.finish(
                env,
                &format!("shared_vpg/{n}"),
                Floor::Queue(n),
                &recorder,
                |_| 2,
                Some(QUEUE),
            );
        }
    }

    /// The single guards again at an appliance's timings, D = 2 s and L = 0.5 s (the smoke run keeps
    /// its short timings: it checks the ground truth, not the speed).
    fn appliance_guards(&mut self) {
        let timing = if self.measuring {
            Timing::APPLIANCE
        } else {
            self.timing
        };
        for (name, vm) in [("one_vpg", APP_01), ("three_vpgs", WEB_01)] {
            let env = self.env_at(WorldSpec::default_world(), timing);
            let id = BenchmarkId::from_parameter(name);
            let recorder = self.guards_in(&env, "appliance", id, vec![vm.into()]);
            let bench = format!("appliance/{name}");
            let row = self.row(env, &bench, Floor::Guard, &recorder, |_| 2, Some(APPLIANCE));
            if let Some(row) = row {
                self.appliance.push(row);
            }
        }
        // The same single guard as an agent makes it, through a team server.
        let env = self.env_at(WorldSpec::default_world(), timing);
        let id = BenchmarkId::from_parameter("appliance_one_vpg");
        let recorder = self.agents_in(&env, id, vec![APP_01.into()]);
        let bench = "team_server/appliance_one_vpg";
        let row = self.row(env, bench, Floor::Guard, &recorder, |_| 2, Some(APPLIANCE));
        if let Some(row) = row {
            self.appliance.push(row);
        }
    }

    /// One guard and one lookup in worlds of each size, each in a simulator of its own. The smoke run
    /// stops at 1,000 VMs.
    fn scale(&mut self) {
        let sizes = if self.measuring {
            &SCALE_SIZES[..]
        } else {
            &SCALE_SIZES[..2]
        };
        for &vms in sizes {
            let (world, vm) = world::scale_world(vms);
            let mut point = ScalePoint::new(vms, world::listing_rows(&world));
            let (env, recorder) = self.guards(
                world.clone(),
                "scale/guard",
                BenchmarkId::from_parameter(vms),
                vec![vm.clone()],
            );
            let bench = format!("scale/guard/{vms}");
            if let Some(row) = self.row(env, &bench, Floor::Guard, &recorder, |_| 2, None) {
                point.guard = Some(row.batch_median);
                self.summary.push(row);
            }
            let env = self.env(world);
            let (first, recorder) = self.finds_in(&env, BenchmarkId::from_parameter(vms), &vm);
            point.first_find = Some(first);
            let bench = format!("scale/find/{vms}");
            let itself = Floor::Measured("itself", median_wall(&recorder));
            if let Some(row) = self.row(env, &bench, itself, &recorder, |_| 2, None) {
                point.find = Some(row.batch_median);
                self.summary.push(row);
            }
            self.scale.push(point);
        }
    }

    /// Benches lookups of `vm` in `env` with its long-lived client, after a first one that finds
    /// nothing kept (its time is returned beside the recorder).
    fn finds_in(&mut self, env: &BenchEnv, id: BenchmarkId, vm: &str) -> (Duration, Recorder) {
        let recorder = Recorder::default();
        let first = self.rt.block_on(find_batch(env.rewind(), vm));
        if let Some(problem) = first.guards.iter().find_map(|g| g.problem.as_ref()) {
            panic!("scale/find: the first lookup of {vm} failed: {problem}");
        }
        let mut g = self.criterion.benchmark_group("scale/find");
        g.sampling_mode(SamplingMode::Flat);
        g.bench_function(id, |b| {
            b.to_async(&self.rt).iter_custom(|iters| {
                let (rewind, recorder) = (env.rewind(), &recorder);
                async move {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let batch = find_batch(rewind, vm).await;
                        total += batch.wall;
                        recorder.push(batch);
                    }
                    total
                }
            })
        });
        g.finish();
        (first.wall, recorder)
    }

    /// Benches `calls` concurrent reads of Boston's `/v1/localsite`, by a new client per iteration
    /// (`cold`) or by one client for the whole bench.
    fn reads(&mut self, name: &str, calls: usize, cold: bool) -> (BenchEnv, Recorder) {
        let env = self.env(WorldSpec::default_world());
        let recorder = Recorder::default();
        let warm = env
            .new_client(Sites::Boston)
            .unwrap_or_else(|e| panic!("token/{name}: {e}"));
        let mut g = self.criterion.benchmark_group("token");
        g.sampling_mode(SamplingMode::Flat);
        g.bench_function(name, |b| {
            b.to_async(&self.rt).iter_custom(|iters| {
                let (env, warm, recorder) = (&env, &warm, &recorder);
                async move {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let client = if cold {
                            env.new_client(Sites::Boston)
                                .unwrap_or_else(|e| panic!("a new client: {e}"))
                        } else {
                            warm.clone()
                        };
                        let batch = read_batch(&client, calls).await;
                        total += batch.wall;
                        recorder.push(batch);
                    }
                    total
                }
            })
        });
        g.finish();
        (env, recorder)
    }

    fn token_storm(&mut self) {
        // A new client's single read (one token request, one connection, one read) and 256 reads by a
        // client that holds a token and its connections are their own floors; the cold storm is
        // compared with their sum: no client does better than reading warm after one token request.
        let (env, recorder) = self.reads("cold_1", 1, true);
        let cold_one = median_wall(&recorder);
        let itself = Floor::Measured("itself", cold_one);
        self.finish(
            env,
            "token/cold_1",
            itself,
            &recorder,
            |iterations| iterations,
            None,
        );

        let (env, recorder) = self.reads("warm_256", STORM, false);
        let warm = median_wall(&recorder);
        let itself = Floor::Measured("itself", warm);
        self.finish(env, "token/warm_256", itself, &recorder, |_| 1, None);

        let (env, recorder) = self.reads("cold_256", STORM, true);
        let floor = Floor::Measured("warm_256 + cold_1", warm + cold_one);
        self.finish(
            env,
            "token/cold_256",
            floor,
            &recorder,
            |iterations| iterations,
            None,
        );
    }
}

/// The median iteration a recorder holds so far (zero when the bench was filtered out).
/// Benches the batches `batch` makes as criterion's iterations of `id` in `group`, each kept in the
/// recorder returned; an iteration's time is its batch's wall time.
fn measure<Fut: Future<Output = Batch>>(
    criterion: &mut Criterion,
    rt: &Runtime,
    group: &str,
    id: BenchmarkId,
    batch: impl Fn() -> Fut,
) -> Recorder {
    let recorder = Recorder::default();
    let mut g = criterion.benchmark_group(group);
    g.sampling_mode(SamplingMode::Flat);
    g.bench_function(id, |b| {
        b.to_async(rt).iter_custom(|iters| {
            let (recorder, batch) = (&recorder, &batch);
            async move {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let batch = batch().await;
                    total += batch.wall;
                    recorder.push(batch);
                }
                total
            }
        })
    });
    g.finish();
    recorder
}

fn median_wall(recorder: &Recorder) -> Duration {
    let walls: Vec<Duration> = recorder.batches().iter().map(|b| b.wall).collect();
    rewind_benches::record::quantile(&walls, 0.5).unwrap_or_default()
}

/// The world of the concurrent benches: the default world plus 256 VMs each in its own VPG and 64 VMs
/// in one VPG, 332 VMs in all, so each guard's lookup reads listings of a realistic size.
fn big_world() -> WorldSpec {
    world::bench_world(DISTINCT_VMS, SHARED_VMS)
}

/// Guards every VM of `vms` at once, each on its own task (as the MCP server runs concurrent calls).
/// Each guard's latency counts from the start of the batch, as a caller's does from its request: the
/// time a spawned guard waits for a worker thread is part of it.
async fn guard_batch(rewind: &Rewind, vms: &[String], changes: &AtomicU64) -> Batch {
    let start = Instant::now();
    let tasks: Vec<_> = vms
        .iter()
        .map(|vm| {
            let req = GuardRequest {
                vm: vm.clone(),
                agent: "bench".into(),
                action: "measure the guard".into(),
                change_id: format!("bench-{}", changes.fetch_add(1, Ordering::Relaxed)),
            };
            spawn_guard(rewind, req, start)
        })
        .collect();
    join_batch(tasks, start).await
}

/// A team server of `rewind`, no sign-in, on a loopback port of this process; its MCP endpoint's URL.
/// Its caps leave room for the bench's agents, as a team's `--max-sessions` and `--max-tasks` would.
async fn team_server(rewind: Rewind) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let url = format!(
        "http://{}{}",
        listener.local_addr().expect("its address"),
        rewind_mcp::HTTP_PATH
    );
    let mut limits = rewind_mcp::HttpLimits::default();
    limits.caps.sessions = 2 * AGENTS;
    limits.caps.tasks = 2 * AGENTS;
    tokio::spawn(async move {
        rewind_mcp::serve_http(listener, rewind, limits, std::future::pending())
            .await
            .expect("the team server serves")
    });
    url
}

/// `n` agents of the team server at `url`, each with its session open.
async fn agents(url: &str, n: usize) -> Vec<Agent> {
    let mut agents = Vec::with_capacity(n);
    for _ in 0..n {
        let transport = StreamableHttpClientTransport::from_uri(url.to_owned());
        agents.push(
            ().serve(transport)
                .await
                .expect("an agent opens its session"),
        );
    }
    agents
}

/// Each agent guards its VM of `vms` at once, each call on its own task; each guard's latency counts
/// from the start of the batch to its answer, as the agent waits for it.
async fn agents_batch(agents: &[Agent], vms: &[String], changes: &AtomicU64) -> Batch {
    let start = Instant::now();
    let calls: Vec<_> = agents
        .iter()
        .zip(vms)
        .map(|(agent, vm)| {
            let arguments = serde_json::json!({
                "vm": vm,
                "agent": "bench",
                "action": "measure the guard",
                "change_id": format!("bench-{}", changes.fetch_add(1, Ordering::Relaxed)),
            });
            let params = CallToolRequestParams::new("zerto_guard_before_mutate")
                .with_arguments(arguments.as_object().cloned().unwrap_or_default());
            let peer = agent.peer().clone();
            tokio::spawn(async move {
                match peer.call_tool(params).await {
                    Ok(answer) => GuardRecord::from_answer(
                        &answer.structured_content.unwrap_or_default(),
                        start.elapsed(),
                    ),
                    Err(e) => GuardRecord::from_error(&e, start.elapsed()),
                }
            })
        })
        .collect();
    join_batch(calls, start).await
}

/// One lookup of `vm`, as a batch of one record: its latency, and its error if it failed.
async fn find_batch(rewind: &Rewind, vm: &str) -> Batch {
    let start = Instant::now();
    let found = rewind.find_protection(vm).await;
    let latency = start.elapsed();
    let record = match found {
        Ok(_) => GuardRecord {
            latency,
            task_ids: Vec::new(),
            problem: None,
        },
        Err(e) => GuardRecord::from_error(&e, latency),
    };
    Batch {
        wall: latency,
        guards: vec![record],
    }
}

/// `calls` concurrent reads of Boston's `/v1/localsite` with `rewind`'s client, each timed from the
/// start of the batch.
async fn read_batch(rewind: &Rewind, calls: usize) -> Batch {
    let start = Instant::now();
    let tasks: Vec<_> = (0..calls)
        .map(|_| {
            let rewind = rewind.clone();
            tokio::spawn(async move {
                let read = match rewind.client("boston") {
                    Ok(client) => client.read_local_site().await.map(|_| ()),
                    Err(e) => Err(e),
                };
                match read {
                    Ok(()) => GuardRecord {
                        latency: start.elapsed(),
                        task_ids: Vec::new(),
                        problem: None,
                    },
                    Err(e) => GuardRecord::from_error(&e, start.elapsed()),
                }
            })
        })
        .collect();
    join_batch(tasks, start).await
}

fn main() {
    let measuring = measuring();
    let timing = if measuring {
        Timing::BENCH
    } else {
        Timing::SMOKE
    };
    let rt = runtime();
    let criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    let appliance = if measuring { Timing::APPLIANCE } else { timing };
    let mut run = Run {
        criterion,
        rt,
        measuring,
        timing,
        summary: Summary::new(timing),
        appliance: Summary::new(appliance),
        scale: Vec::new(),
        changes: AtomicU64::new(0),
    };
    run.single_guards();
    run.distinct_guards();
    run.through_team_server();
    run.shared_vpg();
    run.token_storm();
    run.scale();
    run.appliance_guards();
    run.criterion.final_summary();
    report(&run);
}

/// Prints the summary after a measured run; fails the run on any ground-truth violation.
#[expect(
    clippy::print_stdout,
    reason = "the summary table is the bench's output, printed after criterion's own"
)]
fn report(run: &Run) {
    if run.measuring {
        println!("\n## Summary\n\n{}", run.summary.table());
        println!("Calls per insert:\n{}", run.summary.call_mix());
        println!("\n## Scale\n\n{}", scale_table(&run.scale, run.timing));
        println!(
            "\n## At an appliance's timings\n\n{}",
            run.appliance.table()
        );
        println!("Calls per insert:\n{}", run.appliance.call_mix());
    }
    let mut violations = run.summary.violations();
    violations.extend(run.appliance.violations());
    assert!(
        violations.is_empty(),
        "the simulator's ground truth shows what must never happen:\n{}",
        violations.join("\n")
    );
}
