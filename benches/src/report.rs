//! The summary of a bench run: one row per bench with its result as a ratio to its floor and the
//! simulator's ground truth, printed as a Markdown table at the end of the run.

use std::fmt::Write as _;
use std::time::Duration;

use crate::env::Timing;
use crate::record::{Batch, median_ratio, quantile};
use crate::truth::GroundTruth;

/// The floor a bench is compared with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Floor {
    /// D + L: no client guards a VM faster, whatever number of VPGs it tags in parallel.
    Guard,
    /// N × D: N guards of VMs that share one VPG must take turns.
    Queue(usize),
    /// A cost measured in the same run, named: the token storm is compared with one cold call (one
    /// token request and one read), since no simulated duration bounds it.
    Measured(&'static str, Duration),
}

impl Floor {
    /// The floor from the nominal timings.
    pub fn nominal(&self, timing: Timing) -> Duration {
        match *self {
            Floor::Guard => timing.task + timing.listing_lag,
            Floor::Queue(n) => timing.task * u32::try_from(n).unwrap_or(u32::MAX),
            Floor::Measured(_, d) => d,
        }
    }

    /// How the floor is made, for the table.
    pub fn label(&self) -> String {
        match self {
            Floor::Guard => "D+L".into(),
            Floor::Queue(n) => format!("{n}×D"),
            Floor::Measured(what, _) => (*what).into(),
        }
    }

    /// The floor of one batch from the real (jittered) durations of its insert tasks: the slowest
    /// guard's slowest insert plus L, or the sum of the queue's inserts. `None` without guards or when
    /// a duration is unknown.
    pub fn exact(&self, batch: &Batch, truth: &GroundTruth, timing: Timing) -> Option<Duration> {
        match self {
            Floor::Guard => batch
                .guards
                .iter()
                .map(|g| guard_exact(&g.task_ids, truth, timing))
                .try_fold(Duration::ZERO, |max, d| d.map(|d| max.max(d)))
                .filter(|_| !batch.guards.is_empty()),
            Floor::Queue(_) => batch
                .guards
                .iter()
                .flat_map(|g| g.task_ids.iter())
                .map(|id| truth.duration_of(id))
                .sum::<Option<Duration>>()
                .filter(|d| !d.is_zero()),
            Floor::Measured(..) => None,
        }
    }
}

/// One guard's exact floor: its slowest insert plus L.
fn guard_exact(task_ids: &[String], truth: &GroundTruth, timing: Timing) -> Option<Duration> {
    let slowest = task_ids
        .iter()
        .map(|id| truth.duration_of(id))
        .try_fold(Duration::ZERO, |max, d| d.map(|d| max.max(d)))?;
    (!task_ids.is_empty()).then_some(slowest + timing.listing_lag)
}

/// Which statistic a target bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Statistic {
    /// The median iteration (criterion's measure: one batch, from the first start to the last end).
    Batch,
    /// The median guard latency over every guard of every iteration.
    Guard,
}

/// A speed target: the statistic over the floor at most `limit`. Never asserted; reported.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Target {
    /// The largest ratio allowed.
    pub limit: f64,
    /// What it bounds.
    pub on: Statistic,
}

impl Target {
    /// The median iteration (one batch) at most `limit` times its floor.
    pub const fn batch(limit: f64) -> Target {
        Target {
            limit,
            on: Statistic::Batch,
        }
    }

    /// The median guard at most `limit` times its floor.
    pub const fn guard(limit: f64) -> Target {
        Target {
            limit,
            on: Statistic::Guard,
        }
    }
}

/// One bench's result.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The bench id, as criterion names it.
    pub bench: String,
    /// How the floor is made.
    pub floor_label: String,
    /// The nominal floor.
    pub floor: Duration,
    /// Iterations run (criterion's warm-up included).
    pub iterations: usize,
    /// The median iteration.
    pub batch_median: Duration,
    /// The median iteration over the nominal floor.
    pub batch_ratio: f64,
    /// The median over iterations of each iteration over its exact floor.
    pub batch_exact_ratio: Option<f64>,
    /// The median guard latency, when the bench guards.
    pub guard_median: Option<Duration>,
    /// The 95th percentile guard latency.
    pub guard_p95: Option<Duration>,
    /// The median guard latency over D + L (benches whose floor is D + L only).
    pub guard_ratio: Option<f64>,
    /// The median over guards of each guard's latency over its exact floor.
    pub guard_exact_ratio: Option<f64>,
    /// The target, if the issue sets one.
    pub target: Option<Target>,
    /// The ground truth of the bench.
    pub truth: GroundTruth,
    /// How many token requests are right: one per site for a long-lived client, one per cold client.
    pub expected_token_requests: usize,
    /// Guards that did not end `guarded`, and the first one's report.
    pub not_guarded: usize,
    /// The first guard problem seen.
    pub first_problem: Option<String>,
}

impl Row {
    /// Builds a row from a bench's iterations and the simulator's truth; `None` when the bench did not
    /// run (criterion filtered it out).
    pub fn new(
        bench: &str,
        floor: Floor,
        timing: Timing,
        batches: &[Batch],
        truth: GroundTruth,
        expected_token_requests: usize,
        target: Option<Target>,
    ) -> Option<Row> {
        let walls: Vec<Duration> = batches.iter().map(|b| b.wall).collect();
        let batch_median = quantile(&walls, 0.5)?;
        let nominal = floor.nominal(timing);
        let ratio = |d: Duration, of: Duration| d.as_secs_f64() / of.as_secs_f64();
        let batch_exact: Vec<f64> = batches
            .iter()
            .filter_map(|b| floor.exact(b, &truth, timing).map(|e| ratio(b.wall, e)))
            .collect();
        let guards: Vec<_> = batches.iter().flat_map(|b| b.guards.iter()).collect();
        let latencies: Vec<Duration> = guards.iter().map(|g| g.latency).collect();
        let guard_exact: Vec<f64> = guards
            .iter()
            .filter_map(|g| guard_exact(&g.task_ids, &truth, timing).map(|e| ratio(g.latency, e)))
            .collect();
        let guard_floor = Floor::Guard.nominal(timing);
        let guard_median = quantile(&latencies, 0.5);
        let problems: Vec<&String> = guards.iter().filter_map(|g| g.problem.as_ref()).collect();
        Some(Row {
            bench: bench.to_string(),
            floor_label: floor.label(),
            floor: nominal,
            iterations: batches.len(),
            batch_median,
            batch_ratio: ratio(batch_median, nominal),
            batch_exact_ratio: median_ratio(&batch_exact),
            guard_median,
            guard_p95: quantile(&latencies, 0.95),
            // Only a guard's own latency has D + L for its floor; queued guards and reads do not.
            guard_ratio: guard_median
                .filter(|_| floor == Floor::Guard)
                .map(|m| ratio(m, guard_floor)),
            guard_exact_ratio: median_ratio(&guard_exact).filter(|_| floor == Floor::Guard),
            target,
            truth,
            expected_token_requests,
            not_guarded: problems.len(),
            first_problem: problems.first().map(|p| p.to_string()),
        })
    }

    /// The ratio a target bounds: to the nominal floor, and to the exact floor (jitter removed).
    pub fn target_ratios(&self) -> Option<(f64, Option<f64>)> {
        match self.target?.on {
            Statistic::Batch => Some((self.batch_ratio, self.batch_exact_ratio)),
            Statistic::Guard => Some((self.guard_ratio?, self.guard_exact_ratio)),
        }
    }

    /// Whether the target is met against the nominal floor; `None` without a target.
    pub fn target_met(&self) -> Option<bool> {
        let limit = self.target?.limit;
        self.target_ratios().map(|(nominal, _)| nominal <= limit)
    }

    /// What is wrong in the ground truth: any 401, any failed insert, a token count other than the
    /// expected one, a guard that did not end `guarded`.
    pub fn violations(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.truth.unauthorized > 0 {
            out.push(format!(
                "{}: {} answers 401",
                self.bench, self.truth.unauthorized
            ));
        }
        if self.truth.failed_inserts > 0 {
            out.push(format!(
                "{}: {} insert tasks ended Failed or Stopped",
                self.bench, self.truth.failed_inserts
            ));
        }
        if self.truth.total_token_requests() != self.expected_token_requests {
            out.push(format!(
                "{}: {} token requests ({}), expected {}",
                self.bench,
                self.truth.total_token_requests(),
                self.truth.token_requests_text(),
                self.expected_token_requests
            ));
        }
        if let Some(problem) = &self.first_problem {
            out.push(format!(
                "{}: {} guards did not end guarded; the first:\n{problem}",
                self.bench, self.not_guarded
            ));
        }
        out
    }
}

/// Every row of a run.
#[derive(Debug, Clone)]
pub struct Summary {
    timing: Timing,
    rows: Vec<Row>,
}

impl Summary {
    /// An empty summary of a run with `timing`.
    pub fn new(timing: Timing) -> Summary {
        Summary {
            timing,
            rows: Vec::new(),
        }
    }

    /// Adds a bench's row.
    pub fn push(&mut self, row: Row) {
        self.rows.push(row);
    }

    /// The rows so far.
    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// Every ground-truth violation of every bench.
    pub fn violations(&self) -> Vec<String> {
        self.rows.iter().flat_map(Row::violations).collect()
    }

    /// The summary as Markdown: the timings, the table, and the call mix per guard.
    pub fn table(&self) -> String {
        let mut out = String::new();
        // Without a jitter the exact floor is the nominal one, and a second ratio would repeat the first.
        let jittered = self.timing.task_jitter > 0.0;
        if jittered {
            let _ = writeln!(
                out,
                "D = {} ms, L = {} ms. Ratios: median over the nominal floor, then (in brackets) the \
                 median of each iteration over its exact floor, from the real durations of its insert \
                 tasks (the simulator jitters D by ±{} %).\n",
                self.timing.task.as_millis(),
                self.timing.listing_lag.as_millis(),
                self.timing.task_jitter * 100.0
            );
        } else {
            let _ = writeln!(
                out,
                "D = {} ms exactly (the simulator's task jitter is off), L = {} ms. Ratios: the median \
                 over the floor.\n",
                self.timing.task.as_millis(),
                self.timing.listing_lag.as_millis()
            );
        }
        let exact_label = if jittered { " [exact]" } else { "" };
        let _ = writeln!(
            out,
            "| bench | floor | iters | median | × floor{exact_label} | guard p50 / p95 | guard p50 × (D+L){exact_label} | target | token requests | 401s | failed inserts |",
        );
        out.push_str("|---|---|---:|---:|---:|---:|---:|---|---|---:|---:|\n");
        for r in &self.rows {
            let exact = |x: Option<f64>| {
                x.filter(|_| jittered)
                    .map(|x| format!(" [{x:.3}]"))
                    .unwrap_or_default()
            };
            let guards = match (r.guard_median, r.guard_p95) {
                (Some(m), Some(p)) => format!("{} / {}", ms(m), ms(p)),
                _ => "–".into(),
            };
            let guard_ratio = r
                .guard_ratio
                .map(|g| format!("{g:.3}{}", exact(r.guard_exact_ratio)))
                .unwrap_or_else(|| "–".into());
            let target = match (r.target, r.target_met()) {
                (Some(t), Some(met)) => format!(
                    "≤ {:.2} ({}): {}",
                    t.limit,
                    match t.on {
                        Statistic::Batch => "median",
                        Statistic::Guard => "guard p50",
                    },
                    if met { "met" } else { "MISSED" }
                ),
                _ => "–".into(),
            };
            let tokens = if r.truth.total_token_requests() == r.expected_token_requests {
                r.truth.token_requests_text()
            } else {
                format!(
                    "{} (expected {})",
                    r.truth.token_requests_text(),
                    r.expected_token_requests
                )
            };
            // A measured floor is zero when the bench that measures it was filtered out.
            let ratio = if r.batch_ratio.is_finite() {
                format!("{:.3}{}", r.batch_ratio, exact(r.batch_exact_ratio))
            } else {
                "–".into()
            };
            let _ = writeln!(
                out,
                "| {} | {} = {} | {} | {} | {ratio} | {guards} | {guard_ratio} | {target} | {tokens} | {} | {} |",
                r.bench,
                r.floor_label,
                ms(r.floor),
                r.iterations,
                ms(r.batch_median),
                r.truth.unauthorized,
                r.truth.failed_inserts,
            );
        }
        out
    }

    /// Calls per guard by kind, per bench that guards: what one guard costs on the wire.
    pub fn call_mix(&self) -> String {
        let mut out = String::new();
        for r in &self.rows {
            let guards: usize = r.truth.inserts;
            if guards == 0 {
                continue;
            }
            let mix = r
                .truth
                .calls_by_kind
                .iter()
                .map(|(kind, n)| format!("{kind} {:.2}", *n as f64 / guards as f64))
                .collect::<Vec<_>>()
                .join(", ");
            let _ = writeln!(out, "- {} (per insert): {mix}", r.bench);
        }
        out
    }
}

/// One world size of the scale benches: a guard and a lookup of a VM in one VPG.
#[derive(Debug, Clone, PartialEq)]
pub struct ScalePoint {
    /// VMs in the world.
    pub vms: usize,
    /// Rows of the whole `/v1/vms` listing (one per VM and VPG).
    pub rows: usize,
    /// The median guard.
    pub guard: Option<Duration>,
    /// The median lookup, with the site's inventory kept.
    pub find: Option<Duration>,
    /// The first lookup of the client, which had nothing kept.
    pub first_find: Option<Duration>,
}

impl ScalePoint {
    /// A world size not measured yet.
    pub fn new(vms: usize, rows: usize) -> ScalePoint {
        ScalePoint {
            vms,
            rows,
            guard: None,
            find: None,
            first_find: None,
        }
    }
}

/// The scale benches as Markdown: each guard and lookup over its figure in the smallest world, and
/// over D + L.
pub fn scale_table(points: &[ScalePoint], timing: Timing) -> String {
    let floor = Floor::Guard.nominal(timing);
    let base = points.first();
    let ratio = |d: Option<Duration>, of: Option<Duration>| match (d, of) {
        (Some(d), Some(of)) if !of.is_zero() => {
            format!("{:.3}", d.as_secs_f64() / of.as_secs_f64())
        }
        _ => "–".into(),
    };
    let time = |d: Option<Duration>| d.map(ms).unwrap_or_else(|| "–".into());
    let mut out = String::new();
    let _ = writeln!(
        out,
        "One guard and one lookup of a VM in one VPG; D = {} ms, L = {} ms. \"× 12\" is over the \
         figure in the smallest world; the first lookup is the client's first, with no inventory kept.\n",
        timing.task.as_millis(),
        timing.listing_lag.as_millis()
    );
    out.push_str(
        "| VMs | `/v1/vms` rows | guard | × 12 | × (D+L) | find | × 12 | × (D+L) | first find |\n",
    );
    out.push_str("|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for p in points {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            p.vms,
            p.rows,
            time(p.guard),
            ratio(p.guard, base.and_then(|b| b.guard)),
            ratio(p.guard, Some(floor)),
            time(p.find),
            ratio(p.find, base.and_then(|b| b.find)),
            ratio(p.find, Some(floor)),
            time(p.first_find),
        );
    }
    out
}

/// A duration in milliseconds with one decimal.
fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::GuardRecord;
    use serde_json::json;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    fn truth_with(durations: &[(&str, u64)]) -> GroundTruth {
        let tasks: Vec<_> = durations
            .iter()
            .map(|(id, d)| {
                json!({"TaskIdentifier": id, "Type": "InsertTaggedCP", "State": 6,
                       "Started": "2026-01-01T00:00:00.000Z",
                       "Completed": format!("2026-01-01T00:00:00.{d:03}Z")})
            })
            .collect();
        let calls = json!([
            {"Site": "Boston", "Method": "POST", "Path": crate::truth::TOKEN_PATH, "Status": 200},
            {"Site": "Denver", "Method": "POST", "Path": crate::truth::TOKEN_PATH, "Status": 200},
        ]);
        GroundTruth::from_json(&calls, &json!(tasks))
    }

    fn guard(latency: u64, tasks: &[&str]) -> GuardRecord {
        GuardRecord {
            latency: MS(latency),
            task_ids: tasks.iter().map(|t| t.to_string()).collect(),
            problem: None,
        }
    }

    #[test]
    fn nominal_floors_are_d_plus_l_and_n_times_d() {
        assert_eq!(Floor::Guard.nominal(Timing::BENCH), MS(70));
        assert_eq!(Floor::Queue(8).nominal(Timing::BENCH), MS(400));
        assert_eq!(Floor::Measured("x", MS(3)).nominal(Timing::BENCH), MS(3));
    }

    #[test]
    fn the_exact_floor_of_a_guard_is_its_slowest_insert_plus_l() {
        let truth = truth_with(&[("a", 44), ("b", 58), ("c", 51)]);
        let batch = Batch {
            wall: MS(90),
            guards: vec![guard(80, &["a", "b"]), guard(75, &["c"])],
        };
        assert_eq!(
            Floor::Guard.exact(&batch, &truth, Timing::BENCH),
            Some(MS(78))
        );
        assert_eq!(
            Floor::Queue(3).exact(&batch, &truth, Timing::BENCH),
            Some(MS(153))
        );
        let unknown = Batch {
            wall: MS(90),
            guards: vec![guard(80, &["a", "zzz"])],
        };
        assert_eq!(Floor::Guard.exact(&unknown, &truth, Timing::BENCH), None);
    }

    #[test]
    fn a_row_reports_ratios_to_the_nominal_and_the_exact_floor() {
        let truth = truth_with(&[("a", 40), ("b", 60), ("c", 50)]);
        let batches = vec![
            Batch {
                wall: MS(63),
                guards: vec![guard(63, &["a"])],
            },
            Batch {
                wall: MS(84),
                guards: vec![guard(84, &["b"])],
            },
            Batch {
                wall: MS(77),
                guards: vec![guard(77, &["c"])],
            },
        ];
        let target = Target {
            limit: 1.10,
            on: Statistic::Batch,
        };
        let row = Row::new(
            "guard/one_vpg",
            Floor::Guard,
            Timing::BENCH,
            &batches,
            truth,
            2,
            Some(target),
        )
        .unwrap();
        assert_eq!(row.batch_median, MS(77));
        assert!((row.batch_ratio - 1.1).abs() < 1e-9);
        assert!((row.batch_exact_ratio.unwrap() - 1.05).abs() < 1e-9);
        assert_eq!(row.target_met(), Some(true));
        assert!(row.violations().is_empty(), "{:?}", row.violations());
    }

    #[test]
    fn a_missing_token_request_a_401_or_an_unguarded_vm_is_a_violation() {
        let mut truth = truth_with(&[("a", 50)]);
        truth.unauthorized = 1;
        let mut g = guard(70, &["a"]);
        g.problem = Some("NOT GUARDED".into());
        let batches = vec![Batch {
            wall: MS(70),
            guards: vec![g],
        }];
        let row = Row::new("x", Floor::Guard, Timing::BENCH, &batches, truth, 3, None).unwrap();
        let v = row.violations();
        assert_eq!(v.len(), 3, "{v:?}");
        assert!(v[0].contains("401"));
        assert!(v[1].contains("expected 3"));
        assert!(v[2].contains("NOT GUARDED"));
        let mut summary = Summary::new(Timing::BENCH);
        summary.push(row);
        assert!(summary.table().contains("(expected 3)"));
    }

    #[test]
    fn without_a_jitter_the_table_shows_one_ratio_and_with_one_also_the_exact_ratio() {
        let truth = truth_with(&[("a", 45)]);
        let batches = vec![Batch {
            wall: MS(77),
            guards: vec![guard(77, &["a"])],
        }];
        let jittered = Timing {
            task_jitter: 0.2,
            ..Timing::BENCH
        };
        for (timing, shows_exact) in [(Timing::BENCH, false), (jittered, true)] {
            let row =
                Row::new("x", Floor::Guard, timing, &batches, truth.clone(), 2, None).unwrap();
            let mut summary = Summary::new(timing);
            summary.push(row);
            let table = summary.table();
            assert!(table.contains("| 1.100"), "{table}");
            assert_eq!(table.contains("[exact]"), shows_exact, "{table}");
            assert_eq!(table.contains("[1.185]"), shows_exact, "{table}");
        }
    }

    #[test]
    fn the_scale_table_compares_each_size_with_the_smallest_and_with_d_plus_l() {
        let point = |vms, guard, find| ScalePoint {
            guard: Some(MS(guard)),
            find: Some(MS(find)),
            first_find: Some(MS(find * 3)),
            ..ScalePoint::new(vms, vms + vms / 5)
        };
        let table = scale_table(&[point(12, 70, 2), point(10_000, 77, 3)], Timing::BENCH);
        let last = table.lines().last().unwrap();
        assert_eq!(
            last,
            "| 10000 | 12000 | 77.0 ms | 1.100 | 1.100 | 3.0 ms | 1.500 | 0.043 | 9.0 ms |"
        );
        let unmeasured = scale_table(&[ScalePoint::new(12, 13)], Timing::BENCH);
        assert!(
            unmeasured.lines().last().unwrap().contains("| – |"),
            "{unmeasured}"
        );
    }

    #[test]
    fn a_bench_that_did_not_run_has_no_row() {
        assert!(
            Row::new(
                "x",
                Floor::Guard,
                Timing::BENCH,
                &[],
                truth_with(&[]),
                2,
                None
            )
            .is_none()
        );
    }
}
