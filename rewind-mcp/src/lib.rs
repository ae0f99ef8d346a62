//! rewind-mcp: the MCP server an agent calls before it changes a VM. A thin front over rewind-core:
//! it reads arguments, calls the core, and answers; it holds no Zerto logic of its own.
//!
//! - [`server`]: [`RewindServer`], its instructions, capabilities and the `rewind` prompt.
//! - [`tools`]: the tools and their annotations.
//! - [`check`]: `zerto_check_tool`, and asking the human about an unknown tool (elicitation up to
//!   protocol 2025-11-25, `InputRequiredResult` from 2026-07-28).
//! - [`args`]: each tool's arguments, their schemas and the checks at the door.
//! - [`reply`]: the shape of every answer (one line, structured JSON, the JSON as text).
//! - [`progress`]: a guard's or a recovery's progress as MCP progress notifications, and the work
//!   still running on tasks of its own, which the server waits for before it exits.
//! - [`text`]: every word the model or the human reads: instructions, descriptions, the prompt, the form.
//! - [`sign_in`] and [`roles`]: who may call over HTTP, and which tools; [`issuer_keys`]: the
//!   issuer's signing keys, read off the request path.
//! - [`hosts`], [`sessions`] and [`listen`]: what the HTTP server checks first (Host, Origin), who
//!   holds which session and how much each person may hold, and its connections' bounds.
//! - [`tasks`]: guards and recoveries as MCP tasks, for a client that asks for them.
//! - [`guards`]: `GET /v1/guards`, the team server's recent guards for its users' hooks.
//! - [`watch`]: `GET /v1/expiring`, the open changes whose way back ends soon, and the watcher that
//!   logs them.
//! - [`logs`]: the server's log lines, session ids hashed.
//!
//! [`serve_stdio`] and [`HttpService`] (or [`serve_http`]) are what the binary calls once it has a
//! [`Rewind`].

pub mod args;
pub mod check;
pub mod consent;
pub mod guards;
pub mod hosts;
pub mod issuer_keys;
pub mod listen;
pub mod logs;
pub mod metrics;
pub mod progress;
pub mod reply;
pub mod roles;
pub mod server;
pub mod sessions;
pub mod sign_in;
pub mod tasks;
pub mod text;
pub mod tools;
pub mod ui;
pub mod watch;

use std::future::Future;

use rewind_core::Rewind;
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

pub use hosts::{LOOPBACK_HOSTS, LOOPBACK_ORIGINS};
pub use server::{RewindServer, SERVER_NAME};

/// The path the MCP endpoint is served at over HTTP.
pub const HTTP_PATH: &str = "/mcp";

/// Serving failed.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The MCP session could not start (the client went away, or did not speak MCP).
    #[error("the MCP session did not start: {0}")]
    Start(String),
    /// The MCP session ended abnormally.
    #[error("the MCP session ended abnormally: {0}")]
    Session(String),
    /// `[http.auth]` cannot be put to use (its `ca_cert` cannot be read, say).
    #[error("[http.auth] cannot be used: {0}")]
    SignIn(String),
    /// The HTTP listener failed.
    #[error("the HTTP server on {addr} failed: {source}")]
    Http {
        /// The address it listened on.
        addr: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// Runs catalog or journal work on a blocking thread: their file locks are waited for (a bounded
/// time, then an error naming the lock file), and no runtime worker may wait on a file, or every
/// other request of the server would wait with it.
pub(crate) async fn on_files<T: Send + 'static>(
    rewind: &Rewind,
    work: impl FnOnce(&Rewind) -> T + Send + 'static,
) -> T {
    let rewind = rewind.clone();
    rewind_core::local_state::off_runtime(move || work(&rewind)).await
}

/// Serves MCP on stdin and stdout with `server` until the client closes them, then waits for the
/// guards and recoveries still running (their Zerto tasks read to the end, an FLR session unmounted,
/// the journal written) before returning. Nothing else may write to stdout.
pub async fn serve_stdio(server: RewindServer) -> Result<(), ServeError> {
    let in_flight = server.in_flight();
    let service = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| ServeError::Start(e.to_string()))?;
    let ended = service.waiting().await;
    in_flight.settle().await;
    ended.map_err(|e| ServeError::Session(e.to_string()))?;
    Ok(())
}

/// How the HTTP server bounds what its clients hold.
#[derive(Debug, Clone)]
pub struct HttpLimits {
    /// Host names accepted in the `Host` header besides [`LOOPBACK_HOSTS`].
    pub extra_hosts: Vec<String>,
    /// How many sessions and guards or recoveries the server, and each person, may hold.
    pub caps: sessions::Caps,
    /// How long a session with no message either way is kept before it is closed.
    pub session_idle: std::time::Duration,
    /// The bound on connections and their timeouts.
    pub connections: listen::ConnectionLimits,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            extra_hosts: Vec::new(),
            caps: sessions::Caps {
                sessions: 64,
                sessions_per_person: 8,
                tasks: 64,
                tasks_per_person: 4,
            },
            session_idle: std::time::Duration::from_secs(120),
            connections: listen::ConnectionLimits::default(),
        }
    }
}

/// The HTTP server, built and ready to serve: what [`serve_http`] does in two steps, so that a
/// configuration that cannot be used fails before anything listens.
pub struct HttpService {
    app: axum::Router,
    connections: listen::ConnectionLimits,
    in_flight: progress::InFlight,
    sessions_end: rewind_core::CancellationToken,
    /// The facade, whose journal the watcher of the ways back reads.
    rewind: Rewind,
}

impl std::fmt::Debug for HttpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpService")
            .field("connections", &self.connections)
            .finish()
    }
}

impl HttpService {
    /// MCP over streamable HTTP at [`HTTP_PATH`] and `GET /v1/guards`, every request checked in
    /// this order: its `Host` and `Origin` ([`hosts`]), its token when `[http.auth]` is set
    /// ([`sign_in`]), then at `/mcp` its session and the caps ([`sessions`]).
    pub fn new(rewind: Rewind, limits: HttpLimits) -> Result<HttpService, ServeError> {
        let auth = rewind.config().http.auth.clone();
        let verifier = auth
            .as_ref()
            .map(|a| sign_in::Verifier::new(a.clone()))
            .transpose()
            .map_err(ServeError::SignIn)?;
        // A browser page of the origin clients reach the server at (behind its TLS proxy) may call it.
        let resource_origins: Vec<String> = auth
            .iter()
            .filter_map(|a| a.resource.as_ref())
            .map(|r| r.origin().ascii_serialization())
            .collect();
        let accepted = hosts::Accepted::new(&limits.extra_hosts, &resource_origins);
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(accepted.hosts().cloned())
            .with_allowed_origins(accepted.origins().cloned());
        let sessions_end = config.cancellation_token.clone();
        // One RewindServer (so one Rewind, one per-VPG insert queue) shared by every session.
        let server = RewindServer::new(rewind.clone()).over_http();
        let in_flight = server.in_flight();
        let mut manager = LocalSessionManager::default();
        manager.session_config.keep_alive = Some(limits.session_idle);
        let manager = std::sync::Arc::new(manager);
        let service =
            StreamableHttpService::new(move || Ok(server.clone()), manager.clone(), config);
        let sessions = sessions::Sessions::new(manager, limits.caps);
        let mcp = axum::Router::new().nest_service(HTTP_PATH, service).layer(
            axum::middleware::from_fn_with_state(sessions, sessions::admit),
        );
        let guards = axum::Router::new()
            .route(guards::GUARDS_PATH, axum::routing::get(guards::guards))
            .with_state(guards::GuardsState::new(rewind.clone()));
        let expiring = axum::Router::new()
            .route(watch::EXPIRING_PATH, axum::routing::get(watch::expiring))
            .with_state(rewind.clone());
        let mut app = mcp.merge(guards).merge(expiring);
        // Open to a load balancer and a scraper, with no token; the Host check still applies.
        let health = axum::Router::new()
            .route(metrics::METRICS_PATH, axum::routing::get(metrics::metrics))
            .route(metrics::HEALTH_PATH, axum::routing::get(metrics::healthz))
            .route(metrics::READY_PATH, axum::routing::get(metrics::readyz))
            .with_state(metrics::Health::new(rewind.clone(), verifier.clone()));
        // The pages sign people in with cookies of their own, not bearer tokens.
        let pages = ui::router(&rewind, verifier.as_ref());
        if let Some(verifier) = verifier {
            verifier.keep_keys_fresh();
            // Signed in: every request to /mcp and /v1/guards carries a token of the issuer; the
            // metadata that says which issuer is open to all.
            let metadata = axum::routing::get(sign_in::metadata);
            app = app
                .layer(axum::middleware::from_fn_with_state(
                    verifier.clone(),
                    sign_in::require_token,
                ))
                .merge(
                    axum::Router::new()
                        .route(sign_in::METADATA_PATH, metadata.clone())
                        .route(&format!("{}{HTTP_PATH}", sign_in::METADATA_PATH), metadata)
                        .with_state(verifier),
                );
        }
        if let Some(pages) = pages {
            app = app.merge(pages);
        }
        let app = app
            .merge(health)
            .layer(axum::middleware::from_fn_with_state(
                accepted,
                hosts::first_check,
            ));
        Ok(HttpService {
            app,
            connections: limits.connections,
            in_flight,
            sessions_end,
            rewind,
        })
    }

    /// Serves on `listener` until `shutdown` completes, then waits for the guards and recoveries
    /// still running, as [`serve_stdio`] does.
    pub async fn serve(
        self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServeError> {
        let addr = listener
            .local_addr()
            .map(|a| a.to_string())
            .unwrap_or_else(|_| "?".to_string());
        let sessions_end = self.sessions_end;
        tokio::spawn(watch::watch(self.rewind, sessions_end.clone()));
        let served = listen::serve(listener, self.app, self.connections, async move {
            shutdown.await;
            sessions_end.cancel();
        })
        .await;
        self.in_flight.settle().await;
        served.map_err(|source| ServeError::Http { addr, source })
    }
}

/// Builds the [`HttpService`] of `rewind` within `limits` and serves it on `listener` until
/// `shutdown` completes.
pub async fn serve_http(
    listener: tokio::net::TcpListener,
    rewind: Rewind,
    limits: HttpLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    HttpService::new(rewind, limits)?
        .serve(listener, shutdown)
        .await
}
