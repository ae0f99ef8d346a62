//! What each bench iteration did, kept beside criterion's own timing so the summary can compare every
//! iteration with its floor, and each guard with its own.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rewind_core::{GuardReport, GuardRequest, NoProgress, Outcome, Rewind, Verdict};
use tokio::task::JoinHandle;

/// Starts one guard on the runtime, timed from `start`; an error is a record too.
pub fn spawn_guard(
    rewind: &Rewind,
    request: GuardRequest,
    start: Instant,
) -> JoinHandle<GuardRecord> {
    let rewind = rewind.clone();
    tokio::spawn(async move {
        match rewind.guard(request, &NoProgress).await {
            Ok(report) => GuardRecord::from_report(&report, start.elapsed()),
            Err(e) => GuardRecord::from_error(&e, start.elapsed()),
        }
    })
}

/// The records of spawned guards or reads, as one batch timed from `start`; one whose task
/// panicked is a record of that error.
pub async fn join_batch(tasks: Vec<JoinHandle<GuardRecord>>, start: Instant) -> Batch {
    let mut guards = Vec::with_capacity(tasks.len());
    for task in tasks {
        let record = task.await;
        guards.push(record.unwrap_or_else(|e| GuardRecord::from_error(&e, start.elapsed())));
    }
    Batch {
        wall: start.elapsed(),
        guards,
    }
}

/// One guard of one iteration.
#[derive(Debug, Clone, PartialEq)]
pub struct GuardRecord {
    /// From the call to the report.
    pub latency: Duration,
    /// The insert tasks of its tagged VPGs.
    pub task_ids: Vec<String>,
    /// Why the guard is not `guarded` (`None` when it is).
    pub problem: Option<String>,
}

impl GuardRecord {
    /// The record of a guard that returned a report after `latency`.
    pub fn from_report(report: &GuardReport, latency: Duration) -> GuardRecord {
        let task_ids = report
            .vpgs
            .iter()
            .filter_map(|v| match &v.outcome {
                Outcome::Tagged {
                    task_id: Some(id), ..
                } => Some(id.clone()),
                _ => None,
            })
            .collect();
        let problem = (report.verdict != Verdict::Guarded).then(|| report.summary());
        GuardRecord {
            latency,
            task_ids,
            problem,
        }
    }

    /// The record of a guard a team server answered after `latency`, from the structured content of
    /// its `zerto_guard_before_mutate` answer, as an agent reads it: `guarded`, and the insert task of
    /// each tagged VPG; any other answer (a verdict other than `guarded`, an error's report) is the
    /// problem, in its own words.
    pub fn from_answer(answer: &serde_json::Value, latency: Duration) -> GuardRecord {
        let task_ids = answer["vpgs"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|v| v["outcome"] == "tagged")
            .filter_map(|v| v["task_id"].as_str().map(str::to_owned))
            .collect();
        let problem = (answer["verdict"] != "guarded").then(|| {
            answer["headline"]
                .as_str()
                .or_else(|| answer["message"].as_str())
                .map_or_else(|| answer.to_string(), str::to_owned)
        });
        GuardRecord {
            latency,
            task_ids,
            problem,
        }
    }

    /// The record of a guard that returned an error after `latency`.
    pub fn from_error(error: &dyn std::fmt::Display, latency: Duration) -> GuardRecord {
        GuardRecord {
            latency,
            task_ids: Vec::new(),
            problem: Some(error.to_string()),
        }
    }
}

/// One iteration: a batch of guards started together (one guard for the single-guard benches), or a
/// batch of calls (the token storm, which has no guards).
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    /// From the start of the first to the end of the last.
    pub wall: Duration,
    /// Each guard.
    pub guards: Vec<GuardRecord>,
}

/// The batches of one bench, shared between criterion's routine and the summary.
#[derive(Debug, Clone, Default)]
pub struct Recorder {
    batches: Arc<Mutex<Vec<Batch>>>,
}

impl Recorder {
    /// Keeps one iteration.
    pub fn push(&self, batch: Batch) {
        self.batches
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(batch);
    }

    /// A copy of every iteration kept so far.
    pub fn batches(&self) -> Vec<Batch> {
        self.batches
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Every iteration kept so far, leaving none.
    pub fn take(&self) -> Vec<Batch> {
        std::mem::take(&mut *self.batches.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// The `p`-th quantile (0.0..=1.0, nearest rank) of some durations; `None` when there are none.
pub fn quantile(values: &[Duration], p: f64) -> Option<Duration> {
    let mut sorted = values.to_vec();
    sorted.sort();
    let last = sorted.len().checked_sub(1)?;
    let rank = (p.clamp(0.0, 1.0) * last as f64).round() as usize;
    sorted.get(rank).copied()
}

/// The median of some ratios; `None` when there are none.
pub fn median_ratio(values: &[f64]) -> Option<f64> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn quantiles_use_the_nearest_rank() {
        let v = [MS(30), MS(10), MS(20), MS(40), MS(50)];
        assert_eq!(quantile(&v, 0.5), Some(MS(30)));
        assert_eq!(quantile(&v, 0.0), Some(MS(10)));
        assert_eq!(quantile(&v, 1.0), Some(MS(50)));
        assert_eq!(quantile(&v, 0.95), Some(MS(50)));
        assert_eq!(quantile(&[], 0.5), None);
    }

    #[test]
    fn the_median_ratio_averages_the_middle_pair_and_ignores_non_numbers() {
        assert_eq!(median_ratio(&[1.2, 1.0, 1.1]), Some(1.1));
        let even = median_ratio(&[1.0, 1.25, f64::NAN, 1.5, 1.75]).unwrap();
        assert!((even - 1.375).abs() < 1e-12, "{even}");
        assert_eq!(median_ratio(&[]), None);
    }

    #[test]
    fn an_answer_of_a_team_server_is_guarded_with_its_tagged_vpgs_tasks_or_a_problem_in_its_words()
    {
        let guarded = serde_json::json!({
            "verdict": "guarded",
            "headline": "Guarded web-01",
            "vpgs": [
                {"vpg_id": "a", "outcome": "tagged", "task_id": "t-1"},
                {"vpg_id": "b", "outcome": "skipped", "reason": "not protecting"},
                {"vpg_id": "c", "outcome": "tagged", "task_id": "t-2"},
            ],
        });
        assert_eq!(
            GuardRecord::from_answer(&guarded, MS(80)),
            GuardRecord {
                latency: MS(80),
                task_ids: vec!["t-1".into(), "t-2".into()],
                problem: None,
            }
        );
        let failed = serde_json::json!({
            "verdict": "not_guarded",
            "headline": "Not guarded: web-01",
            "vpgs": [{"vpg_id": "a", "outcome": "failed", "task_id": "t-3"}],
        });
        let record = GuardRecord::from_answer(&failed, MS(90));
        assert_eq!(record.task_ids, Vec::<String>::new());
        assert_eq!(record.problem.as_deref(), Some("Not guarded: web-01"));
        let refused = serde_json::json!({"kind": "vm_not_found", "message": "no VM is named x"});
        let record = GuardRecord::from_answer(&refused, MS(5));
        assert_eq!(record.problem.as_deref(), Some("no VM is named x"));
    }

    #[test]
    fn a_recorder_hands_its_batches_over_once() {
        let recorder = Recorder::default();
        let batch = Batch {
            wall: MS(70),
            guards: vec![GuardRecord::from_error(&"refused", MS(70))],
        };
        recorder.clone().push(batch.clone());
        assert_eq!(recorder.take(), vec![batch]);
        assert!(recorder.take().is_empty());
    }
}
