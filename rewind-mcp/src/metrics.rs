//! What a team server counts of itself, and shows a monitoring system with no token: `/metrics` in
//! the Prometheus text format (OpenMetrics), rewind-core's metrics and the server's. Each ZVM's
//! reachability, as `/readyz` last saw it ([`crate::health`]), is one of them. No label names a
//! person, a VM or a path.
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

    /// Whether the ZVM of `site` answered the last `/readyz`.
    pub(crate) fn zvm_seen(&self, site: &str, reachable: bool) {
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

/// What `/metrics` serves from: a registry of rewind-core's metrics and the server's.
#[derive(Debug, Clone)]
pub struct Scrape {
    registry: Arc<Registry>,
}

impl Default for Scrape {
    /// rewind-core's metrics and the server's, registered.
    fn default() -> Scrape {
        let mut registry = Registry::default();
        rewind_core::metrics::metrics().register(&mut registry);
        server().register(&mut registry);
        Scrape {
            registry: Arc::new(registry),
        }
    }
}

/// `GET /metrics`: the OpenMetrics text.
pub async fn metrics(State(scrape): State<Scrape>) -> Response {
    let mut text = String::new();
    if prometheus_client::encoding::text::encode(&mut text, &scrape.registry).is_err() {
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
