//! The simulator's metrics, which `GET /metrics` serves (`control/metrics.rs`): the requests each
//! site answered (by method, status and whether a route matched), and, read from the world when
//! scraped, its tasks by type and state, its FLR sessions and its VPGs by status. Like the control
//! API it is not in the call log and no fault rule touches it.

use std::sync::Arc;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use crate::enums::{TASK_STATE, VPG_STATUS};
use crate::world::World;

/// A request one site answered.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    /// The site's name.
    pub site: String,
    /// The HTTP method.
    pub method: String,
    /// The status answered.
    pub status: String,
    /// `false` for a request no route matched.
    pub matched: String,
}

/// Tasks of one type in one state.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct TaskLabels {
    /// `Type`.
    pub task_type: String,
    /// `Status.State`, by name.
    pub state: String,
}

/// VPGs in one status.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StatusLabel {
    /// `VpgVisualStatusApi`, by name.
    pub status: String,
}

/// The simulator's metrics, shared by both sites.
#[derive(Debug, Clone)]
pub(crate) struct SimMetrics {
    registry: Arc<Registry>,
    requests: Family<RequestLabels, Counter>,
    tasks: Family<TaskLabels, Gauge>,
    flr_sessions: Gauge,
    vpgs: Family<StatusLabel, Gauge>,
}

impl Default for SimMetrics {
    fn default() -> Self {
        let (requests, tasks, vpgs) = (Family::default(), Family::default(), Family::default());
        let flr_sessions = Gauge::default();
        let mut registry = Registry::default();
        registry.register(
            "zvm_sim_requests",
            "Requests answered, by site, method, status and whether a route matched",
            Family::<RequestLabels, Counter>::clone(&requests),
        );
        registry.register(
            "zvm_sim_tasks",
            "Tasks still listed, by type and state",
            Family::<TaskLabels, Gauge>::clone(&tasks),
        );
        registry.register(
            "zvm_sim_flr_sessions",
            "FLR sessions mounted or mounting",
            flr_sessions.clone(),
        );
        registry.register(
            "zvm_sim_vpgs",
            "VPGs by status",
            Family::<StatusLabel, Gauge>::clone(&vpgs),
        );
        SimMetrics {
            registry: Arc::new(registry),
            requests,
            tasks,
            flr_sessions,
            vpgs,
        }
    }
}

impl SimMetrics {
    /// A request `site` answered.
    pub(crate) fn answered(&self, site: &str, method: &str, status: u16, matched: bool) {
        self.requests
            .get_or_create(&RequestLabels {
                site: site.to_owned(),
                method: method.to_owned(),
                status: status.to_string(),
                matched: matched.to_string(),
            })
            .inc();
    }

    /// Sets the gauges from the world as it is at `now`.
    pub(crate) fn read(&self, world: &World, now: crate::world::clock::SimTime) {
        self.tasks.clear();
        for task in world.tasks.iter() {
            let (state, _) = task.status_at(now);
            let labels = TaskLabels {
                task_type: task.kind().to_owned(),
                state: TASK_STATE.name(state).to_owned(),
            };
            self.tasks.get_or_create(&labels).inc();
        }
        let mounted = world.flrs.len();
        self.flr_sessions
            .set(i64::try_from(mounted).unwrap_or(i64::MAX));
        self.vpgs.clear();
        for vpg in &world.vpgs {
            let labels = StatusLabel {
                status: VPG_STATUS.name(vpg.status).to_owned(),
            };
            self.vpgs.get_or_create(&labels).inc();
        }
    }

    /// The registry in the Prometheus text format, or `None` if it could not be written.
    pub(crate) fn encode(&self) -> Option<String> {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry).ok()?;
        Some(text)
    }
}
