//! Where the time of concurrent guards goes: N guards of distinct VMs started together (as in the
//! `distinct/N` bench), each placed on the simulator's own clock. For every guard, when its insert task
//! started, when it completed and when its checkpoint was listed (completed + L) are read from
//! `/_sim/tasks`, beside when the guard returned, all counted from the batch's start.
//!
//! ```sh
//! cargo run --release -p rewind-benches --example timeline -- 64   # 20 batches of 64, after 5 warm-up
//! ```
//!
//! The simulator's clock runs at real time in millisecond steps, and the batch's start is read from
//! `/_sim/clock` just before it, so its times are good to about a millisecond. Nothing is asserted.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use chrono::DateTime;
use rewind_benches::record::spawn_guard;
use rewind_benches::world::{self, distinct_vm};
use rewind_benches::{BenchEnv, GuardRecord, Timing};
use rewind_core::GuardRequest;
use serde_json::Value;

/// Batches whose guards are not counted: the client learns the ZVM's timings in the first ones.
const WARM_UP: usize = 5;
/// Batches counted.
const BATCHES: usize = 20;

/// A time of `/_sim` (RFC 3339) in milliseconds since the epoch.
fn millis(value: &Value) -> Option<i64> {
    DateTime::parse_from_rfc3339(value.as_str()?)
        .ok()
        .map(|t| t.timestamp_millis())
}

/// The `p` quantile of `values` (nearest rank).
fn quantile(values: &[f64], p: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = (p * sorted.len().saturating_sub(1) as f64).round() as usize;
    sorted.get(rank).copied().unwrap_or(f64::NAN)
}

/// Every counted guard's times, in milliseconds from the start of its batch.
#[derive(Debug, Default)]
struct Phases {
    started: Vec<f64>,
    completed: Vec<f64>,
    listed: Vec<f64>,
    returned: Vec<f64>,
    after_listed: Vec<f64>,
}

impl Phases {
    /// Adds the guards of one batch, whose start the simulator's clock showed as `start_ms`.
    fn add(&mut self, guards: &[GuardRecord], tasks: &Value, start_ms: i64, lag: Duration) {
        let lag_ms = lag.as_secs_f64() * 1000.0;
        for guard in guards {
            let Some(id) = guard.task_ids.first() else {
                panic!("a guard did not insert: {:?}", guard.problem);
            };
            let task = tasks
                .as_array()
                .into_iter()
                .flatten()
                .find(|t| {
                    t["TaskIdentifier"]
                        .as_str()
                        .is_some_and(|t| t.eq_ignore_ascii_case(id))
                })
                .unwrap_or_else(|| panic!("task {id} is not in /_sim/tasks"));
            let (Some(started), Some(completed)) =
                (millis(&task["Started"]), millis(&task["Completed"]))
            else {
                panic!("task {id} has no start or no end: {task}");
            };
            let returned = guard.latency.as_secs_f64() * 1000.0;
            let listed = (completed - start_ms) as f64 + lag_ms;
            self.started.push((started - start_ms) as f64);
            self.completed.push((completed - start_ms) as f64);
            self.listed.push(listed);
            self.returned.push(returned);
            self.after_listed.push(returned - listed);
        }
    }

    /// One line per phase: its p5, p50 and p95.
    #[expect(clippy::print_stdout, reason = "the timeline is the example's output")]
    fn print(&self, n: usize) {
        println!("{n} guards × {BATCHES} batches, ms from the batch's start:");
        for (what, values) in [
            ("insert task started", &self.started),
            ("insert task completed", &self.completed),
            ("checkpoint listed (completed + L)", &self.listed),
            ("guard returned", &self.returned),
            ("guard returned − checkpoint listed", &self.after_listed),
        ] {
            println!(
                "  {what:<35} p5 {:6.1}   p50 {:6.1}   p95 {:6.1}",
                quantile(values, 0.05),
                quantile(values, 0.5),
                quantile(values, 0.95)
            );
        }
    }
}

#[tokio::main]
async fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map(|a| {
            a.parse()
                .unwrap_or_else(|e| panic!("N, the number of guards: {e}"))
        })
        .unwrap_or(64);
    assert!(
        (1..=256).contains(&n),
        "N is 1 to 256, the VMs that each have a VPG of their own"
    );
    let timing = Timing::BENCH;
    let env = BenchEnv::start(world::bench_world(256, 64), timing)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let changes = AtomicU64::new(0);
    let mut phases = Phases::default();
    for batch in 0..WARM_UP + BATCHES {
        let clock = env.control().get("clock").await;
        let start_ms = millis(&clock["Now"]).unwrap_or_else(|| panic!("no clock in {clock}"));
        let start = Instant::now();
        let guards: Vec<_> = (0..n)
            .map(|i| {
                let req = GuardRequest {
                    vm: distinct_vm(i),
                    agent: "timeline".into(),
                    action: "place a guard on the simulator's clock".into(),
                    change_id: format!("timeline-{}", changes.fetch_add(1, Ordering::Relaxed)),
                };
                spawn_guard(env.rewind(), req, start)
            })
            .collect();
        let mut records = Vec::with_capacity(n);
        for guard in guards {
            records.push(guard.await.unwrap_or_else(|e| panic!("{e}")));
        }
        if batch < WARM_UP {
            continue;
        }
        let tasks = env.control().get("tasks").await;
        phases.add(&records, &tasks, start_ms, timing.listing_lag);
    }
    phases.print(n);
    env.shutdown().await;
}
