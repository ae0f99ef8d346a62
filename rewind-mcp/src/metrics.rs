//! What a team server shows a monitoring system and a load balancer, with no token: `/metrics` in
//! the Prometheus text format (OpenMetrics), `/healthz` (the process answers) and `/readyz` (it can
//! take calls: the realm's keys are held when sign-in is on, and the journal is writable). Each
//! ZVM's reachability is in `/readyz`'s body and in the metrics, and never makes the server unready:
//! a DR site down must not take the team server out of its load balancer. No label, field or line
//! names a person, a VM or a path.
//!
//! MCP operations are timed as OpenTelemetry's MCP conventions name them
//! (`mcp.server.operation.duration`, by `mcp.method.name` and `gen_ai.tool.name`), written as
//! Prometheus writes OpenTelemetry names: dots become underscores, seconds a suffix.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use rewind_core::Rewind;
use serde::Serialize;

/// `GET /metrics`.
pub const METRICS_PATH: &str = "/metrics";
/// `GET /healthz`.
pub const HEALTH_PATH: &str = "/healthz";
/// `GET /readyz`.
pub const READY_PATH: &str = "/readyz";
/// How long `/readyz` waits for the ZVMs.
const ZVM_CHECK: Duration = Duration::from_secs(2);

/// An MCP operation.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OperationLabels {
    /// `tools/call`.
    pub mcp_method_name: String,
    /// The tool called.
    pub gen_ai_tool_name: String,
    /// `tool_error` when the tool answered an error, empty otherwise.
    pub error_type: String,
}

/// One label of a kind.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KindLabel {
    /// The kind.
    pub kind: String,
}

/// A configured site.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SiteLabel {
    /// Its name in the configuration.
    pub site: String,
}

/// What the server counts of itself.
#[derive(Debug, Clone)]
pub struct ServerMetrics {
    operations: Family<OperationLabels, Histogram, fn() -> Histogram>,
    guards_answers: Family<KindLabel, Counter>,
    sessions: Gauge,
    sign_in_refusals: Family<KindLabel, Counter>,
    zvm_reachable: Family<SiteLabel, Gauge>,
}

fn operation_buckets() -> Histogram {
    // 5 ms to about 40 minutes: a read, a guard, a restore.
    Histogram::new(exponential_buckets(0.005, 2.0, 20))
}

/// This process's server metrics.
pub fn server() -> &'static ServerMetrics {
    static METRICS: OnceLock<ServerMetrics> = OnceLock::new();
    METRICS.get_or_init(|| ServerMetrics {
        operations: Family::new_with_constructor(operation_buckets),
        guards_answers: Family::default(),
        sessions: Gauge::default(),
        sign_in_refusals: Family::default(),
        zvm_reachable: Family::default(),
    })
}

impl ServerMetrics {
    /// A tool call that took `took`; `failed` when the tool answered an error.
    pub fn tool_called(&self, tool: &str, failed: bool, took: Duration) {
        self.operations
            .get_or_create(&OperationLabels {
                mcp_method_name: "tools/call".into(),
                gen_ai_tool_name: tool.into(),
                error_type: if failed {
                    "tool_error".into()
                } else {
                    String::new()
                },
            })
            .observe(took.as_secs_f64());
    }

    /// An answer of `GET /v1/guards`: `guarded`, `not_guarded`, `ambiguous`, `refused`.
    pub fn guards_answered(&self, kind: &str) {
        self.guards_answers
            .get_or_create(&KindLabel { kind: kind.into() })
            .inc();
    }

    /// The MCP sessions open now.
    pub fn sessions_open(&self, open: usize) {
        self.sessions.set(i64::try_from(open).unwrap_or(i64::MAX));
    }

    /// A request refused at sign-in, for `reason`.
    pub fn sign_in_refused(&self, reason: &str) {
        self.sign_in_refusals
            .get_or_create(&KindLabel {
                kind: reason.into(),
            })
            .inc();
    }

    fn zvm_seen(&self, site: &str, reachable: bool) {
        self.zvm_reachable
            .get_or_create(&SiteLabel { site: site.into() })
            .set(i64::from(reachable));
    }

    fn register(&self, registry: &mut Registry) {
        registry.register(
            "mcp_server_operation_duration_seconds",
            "MCP operations by method and tool (OpenTelemetry's mcp.server.operation.duration)",
            self.operations.clone(),
        );
        registry.register(
            "rewind_guards_view_answers",
            "Answers of GET /v1/guards, the hooks' question, by kind",
            self.guards_answers.clone(),
        );
        registry.register(
            "rewind_mcp_sessions",
            "MCP sessions open",
            self.sessions.clone(),
        );
        registry.register(
            "rewind_sign_in_refusals",
            "Requests refused at sign-in, by reason",
            self.sign_in_refusals.clone(),
        );
        registry.register(
            "rewind_zvm_reachable",
            "Whether each configured ZVM answered the last /readyz (1) or not (0)",
            self.zvm_reachable.clone(),
        );
    }
}

/// What the three routes need.
#[derive(Clone)]
pub struct Health {
    registry: Arc<Registry>,
    rewind: Rewind,
    verifier: Option<crate::sign_in::Verifier>,
}

impl std::fmt::Debug for Health {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Health")
            .field("signs_in", &self.verifier.is_some())
            .finish()
    }
}

impl Health {
    /// The routes' state: a registry of rewind-core's metrics and the server's.
    pub fn new(rewind: Rewind, verifier: Option<crate::sign_in::Verifier>) -> Health {
        let mut registry = Registry::default();
        rewind_core::metrics::metrics().register(&mut registry);
        server().register(&mut registry);
        Health {
            registry: Arc::new(registry),
            rewind,
            verifier,
        }
    }
}

/// `GET /metrics`: the OpenMetrics text.
pub async fn metrics(State(health): State<Health>) -> Response {
    let mut text = String::new();
    if prometheus_client::encoding::text::encode(&mut text, &health.registry).is_err() {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    }
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

/// `GET /healthz`: the process answers.
pub async fn healthz() -> Response {
    (
        StatusCode::OK,
        axum::Json(serde_json::json!({"status": "ok"})),
    )
        .into_response()
}

/// The body of `/readyz`.
#[derive(Debug, Serialize)]
pub struct Readiness {
    /// Whether the server can take calls.
    pub ready: bool,
    /// The realm's keys are held (`null` without sign-in).
    pub keys_held: Option<bool>,
    /// The journal can be written.
    pub journal_writable: bool,
    /// Each configured ZVM, reachable or not; never part of `ready`.
    pub zvms: Vec<ZvmReach>,
}

/// One ZVM's reachability.
#[derive(Debug, Serialize)]
pub struct ZvmReach {
    /// The site's name in the configuration.
    pub site: String,
    /// It answered within [`ZVM_CHECK`].
    pub reachable: bool,
}

/// `GET /readyz`: 200 when ready, 503 otherwise; the checks in the body.
pub async fn readyz(State(health): State<Health>) -> Response {
    let keys_held = health.verifier.as_ref().map(|v| v.keys_held());
    let journal = health.rewind.journal().clone();
    let journal_writable = tokio::task::spawn_blocking(move || journal.writable())
        .await
        .unwrap_or(false);
    // Each site is read at once, each within its own time: one ZVM down cannot hide the others.
    let names: Vec<String> = health
        .rewind
        .config()
        .sites
        .iter()
        .map(|s| s.name.clone())
        .collect();
    let reads = names.iter().map(|name| {
        let one = health.rewind.only_sites(std::slice::from_ref(name));
        async move {
            let reachable = match one {
                Ok(one) => tokio::time::timeout(ZVM_CHECK, one.sites())
                    .await
                    .is_ok_and(|s| s.iter().all(|s| s.reachable)),
                Err(_) => false,
            };
            ZvmReach {
                site: name.clone(),
                reachable,
            }
        }
    });
    let zvms: Vec<ZvmReach> = futures::future::join_all(reads).await;
    for z in &zvms {
        server().zvm_seen(&z.site, z.reachable);
    }
    let ready = keys_held != Some(false) && journal_writable;
    let body = Readiness {
        ready,
        keys_held,
        journal_writable,
        zvms,
    };
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, axum::Json(body)).into_response()
}
