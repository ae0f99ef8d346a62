//! The numbers a monitoring system reads: what rewind-core did in this process, in the Prometheus
//! text format (a team server serves them at `/metrics`). Labels name kinds of things (a verdict,
//! an outcome, a task type), never a person, a VM or a path.
//!
//! One set per process: a guard, a recovery and the journal's writer record into it wherever they
//! run, and whoever serves the metrics registers it ([`Metrics::register`]).

use std::sync::OnceLock;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// A guard's verdict.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct VerdictLabel {
    /// `guarded`, `not_guarded`, `still_running`, or `error` for a guard that returned an error.
    pub verdict: String,
}

/// One VPG's insert outcome.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OutcomeLabel {
    /// `tagged`, `skipped`, `failed`, `still_running`, `error`.
    pub outcome: String,
}

/// A Zerto task, by type and how it ended.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct TaskLabels {
    /// Its `Type` (`InsertTaggedCP`, `FlrJournalMount`, ...).
    pub task_type: String,
    /// `Completed`, `Failed`, `Stopped`, `WaitingForUserInput`, or `waited` when waiting stopped
    /// first.
    pub state: String,
}

type Durations<L> = Family<L, Histogram, fn() -> Histogram>;

/// What rewind-core counts and times in this process.
#[derive(Debug, Clone)]
pub struct Metrics {
    guards: Family<VerdictLabel, Counter>,
    inserts: Family<OutcomeLabel, Counter>,
    zerto_tasks: Durations<TaskLabels>,
    journal_writes: Histogram,
    held_calls: Family<HeldLabel, Counter>,
    decisions: Histogram,
    store_calls: Histogram,
    store_errors: Counter,
}

/// What became of held calls.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct HeldLabel {
    /// `held`, `approved`, `denied`, `expired`.
    pub event: String,
}

/// Seconds from 10 ms to about 3 hours, each bucket twice the last.
fn task_buckets() -> Histogram {
    Histogram::new(exponential_buckets(0.01, 2.0, 20))
}

/// This process's metrics.
pub fn metrics() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(|| Metrics {
        guards: Family::default(),
        inserts: Family::default(),
        zerto_tasks: Family::new_with_constructor(task_buckets),
        // 50 µs to about 1.6 s: an append and its sync.
        journal_writes: Histogram::new(exponential_buckets(0.000_05, 2.0, 16)),
        held_calls: Family::default(),
        // 1 s to about 4.5 days: a person's answer.
        decisions: Histogram::new(exponential_buckets(1.0, 2.0, 19)),
        // 0.1 ms to about 6.5 s: a statement on a loopback or a LAN, up to a connect timeout.
        store_calls: Histogram::new(exponential_buckets(0.000_1, 2.0, 17)),
        store_errors: Counter::default(),
    })
}

impl Metrics {
    /// Adds these metrics to `registry` (they stay this process's: what is recorded later shows).
    pub fn register(&self, registry: &mut Registry) {
        registry.register("rewind_guards", "Guards by verdict", self.guards.clone());
        registry.register(
            "rewind_inserts",
            "Tagged-checkpoint inserts by outcome, one per VPG a guard tagged or tried",
            self.inserts.clone(),
        );
        registry.register(
            "rewind_zerto_task_duration_seconds",
            "How long each Zerto task rewind waited for took, from its request to its end, by type and state",
            self.zerto_tasks.clone(),
        );
        registry.register(
            "rewind_journal_write_seconds",
            "How long each write of the audit journal took, its sync included",
            self.journal_writes.clone(),
        );
        registry.register(
            "rewind_held_calls",
            "Held calls by what became of them: held, approved, denied, expired",
            self.held_calls.clone(),
        );
        registry.register(
            "rewind_approval_decision_seconds",
            "How long each held call waited for a person's decision",
            self.decisions.clone(),
        );
        registry.register(
            "rewind_journal_store_seconds",
            "How long each call to the journal's PostgreSQL database took, its connection included",
            self.store_calls.clone(),
        );
        registry.register(
            "rewind_journal_store_errors",
            "Calls to the journal's PostgreSQL database that failed (unreachable, refused)",
            self.store_errors.clone(),
        );
    }

    /// A call to the journal's database that took `took`, and whether it failed.
    pub(crate) fn store_call(&self, took: Duration, failed: bool) {
        self.store_calls.observe(took.as_secs_f64());
        if failed {
            self.store_errors.inc();
        }
    }

    fn held_event(&self, event: &str) {
        self.held_calls
            .get_or_create(&HeldLabel {
                event: event.to_owned(),
            })
            .inc();
    }

    /// A call held for a person.
    pub(crate) fn approval_held(&self) {
        self.held_event("held");
    }

    /// A held call decided after waiting `took`.
    pub(crate) fn approval_decided(&self, approved: bool, took: Duration) {
        self.held_event(if approved { "approved" } else { "denied" });
        self.decisions.observe(took.as_secs_f64());
    }

    /// A held call or an approval that expired.
    pub(crate) fn approval_expired(&self) {
        self.held_event("expired");
    }

    /// A guard that ended with `verdict`, and the outcome of each of its VPGs.
    pub(crate) fn guard_ended<'a>(&self, verdict: &str, outcomes: impl Iterator<Item = &'a str>) {
        self.guards
            .get_or_create(&VerdictLabel {
                verdict: verdict.to_string(),
            })
            .inc();
        for outcome in outcomes {
            self.inserts
                .get_or_create(&OutcomeLabel {
                    outcome: outcome.to_string(),
                })
                .inc();
        }
    }

    /// A Zerto task of `task_type` seen in `state` after `took`.
    pub(crate) fn task_seen(&self, task_type: &str, state: &str, took: Duration) {
        self.zerto_tasks
            .get_or_create(&TaskLabels {
                task_type: task_type.to_string(),
                state: state.to_string(),
            })
            .observe(took.as_secs_f64());
    }

    /// A write of the audit journal that took `took`.
    pub(crate) fn journal_written(&self, took: Duration) {
        self.journal_writes.observe(took.as_secs_f64());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_recorded_shows_in_the_text_format_with_kinds_for_labels() {
        let mut registry = Registry::default();
        metrics().register(&mut registry);
        metrics().guard_ended("guarded", ["tagged", "skipped"].into_iter());
        metrics().task_seen("InsertTaggedCP", "Completed", Duration::from_millis(70));
        metrics().journal_written(Duration::from_micros(300));
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        assert!(
            text.contains("rewind_guards_total{verdict=\"guarded\"}"),
            "{text}"
        );
        assert!(
            text.contains("rewind_inserts_total{outcome=\"skipped\"}"),
            "{text}"
        );
        assert!(
            text.contains("rewind_zerto_task_duration_seconds_count{task_type=\"InsertTaggedCP\",state=\"Completed\"}"),
            "{text}"
        );
        assert!(
            text.contains("rewind_journal_write_seconds_count"),
            "{text}"
        );
    }
}
