//! The HTTP server assembled: every route of [`crate::paths`] mounted on its handler (the page's by
//! [`crate::ui::router`]), behind the
//! checks every request passes in order: its `Host` and `Origin` ([`crate::hosts`]), its token
//! when `[http.auth]` is set ([`crate::sign_in`]), then at `/mcp` its session and the caps
//! ([`crate::sessions`]).

use std::future::Future;
use std::sync::Arc;

use axum::Router;
use axum::middleware::from_fn_with_state;
use axum::routing::{get, post};
use rewind_core::{CancellationToken, Rewind};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::error::ServeError;
use crate::gateway::Gateway;
use crate::hosts::{self, Accepted};
use crate::in_flight::InFlight;
use crate::paths::{
    APPROVALS_PATH, EXPIRING_PATH, GUARDS_PATH, HEALTH_PATH, HELD_PATH, HTTP_PATH, METADATA_PATH,
    METRICS_PATH, READY_PATH,
};
use crate::server::RewindServer;
use crate::sign_in::{self, Verifier};
use crate::{approvals, guards, health, listen, metrics, sessions, ui, watch};

/// How the HTTP server bounds what its clients hold.
#[derive(Debug, Clone)]
pub struct HttpLimits {
    /// Host names accepted in the `Host` header besides [`hosts::LOOPBACK_HOSTS`].
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
    app: Router,
    connections: listen::ConnectionLimits,
    in_flight: InFlight,
    sessions_end: CancellationToken,
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
        HttpService::serving(rewind, limits, None)
    }

    /// [`HttpService::new`], serving `gateway`'s upstream tools beside the server's own when given.
    pub fn serving(
        rewind: Rewind,
        limits: HttpLimits,
        gateway: Option<Gateway>,
    ) -> Result<HttpService, ServeError> {
        let auth = rewind.config().http.auth.clone();
        let verifier = auth
            .as_ref()
            .map(|a| Verifier::new(a.clone()))
            .transpose()
            .map_err(ServeError::SignIn)?;
        // A browser page of the origin clients reach the server at (behind its TLS proxy) may call it.
        let resource_origins: Vec<String> = auth
            .iter()
            .filter_map(|a| a.resource.as_ref())
            .map(|r| r.origin().ascii_serialization())
            .collect();
        let accepted = Accepted::new(&limits.extra_hosts, &resource_origins);
        let mcp = Mcp::new(&rewind, &limits, &accepted, gateway);
        let mut app = mcp.routes.merge(team_routes(&rewind));
        let open = open_routes(&rewind, verifier.as_ref());
        // The pages sign people in with cookies of their own, not bearer tokens.
        let pages = ui::router(&rewind, verifier.as_ref(), &mcp.in_flight);
        if let Some(verifier) = verifier {
            app = signed_in(app, verifier);
        }
        if let Some(pages) = pages {
            app = app.merge(pages);
        }
        let app = app
            .merge(open)
            .layer(from_fn_with_state(accepted, hosts::first_check));
        Ok(HttpService {
            app,
            connections: limits.connections,
            in_flight: mcp.in_flight,
            sessions_end: mcp.sessions_end,
            rewind,
        })
    }

    /// Serves on `listener` until `shutdown` completes, then waits for the guards and recoveries
    /// still running, as [`crate::serve_stdio`] does.
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

/// MCP at [`HTTP_PATH`], with what the server waits for before it exits.
struct Mcp {
    routes: Router,
    in_flight: InFlight,
    sessions_end: CancellationToken,
}

impl Mcp {
    /// One [`RewindServer`] (so one `Rewind`, one per-VPG insert queue) shared by every session,
    /// each session admitted within the caps.
    fn new(
        rewind: &Rewind,
        limits: &HttpLimits,
        accepted: &Accepted,
        gateway: Option<Gateway>,
    ) -> Mcp {
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(accepted.hosts().cloned())
            .with_allowed_origins(accepted.origins().cloned());
        let sessions_end = config.cancellation_token.clone();
        let mut server = RewindServer::new(rewind.clone()).over_http();
        if let Some(gateway) = gateway {
            server = server.with_gateway(gateway);
        }
        let in_flight = server.in_flight();
        let mut manager = LocalSessionManager::default();
        manager.session_config.keep_alive = Some(limits.session_idle);
        let manager = Arc::new(manager);
        let service =
            StreamableHttpService::new(move || Ok(server.clone()), manager.clone(), config);
        let sessions = sessions::Sessions::new(manager, limits.caps);
        let routes = Router::new()
            .nest_service(HTTP_PATH, service)
            .layer(from_fn_with_state(sessions, sessions::admit));
        Mcp {
            routes,
            in_flight,
            sessions_end,
        }
    }
}

/// What the hooks of a team's machines ask: its recent guards, and the open changes.
fn team_routes(rewind: &Rewind) -> Router {
    let guards = Router::new()
        .route(GUARDS_PATH, get(guards::guards))
        .with_state(guards::GuardsState::new(rewind.clone()));
    let expiring = Router::new()
        .route(EXPIRING_PATH, get(watch::expiring))
        .with_state(rewind.clone());
    let approvals = Router::new()
        .route(APPROVALS_PATH, get(approvals::list))
        .route(&format!("{APPROVALS_PATH}/{{id}}"), get(approvals::show))
        .route(
            &format!("{APPROVALS_PATH}/{{id}}/approve"),
            post(approvals::approve),
        )
        .route(
            &format!("{APPROVALS_PATH}/{{id}}/deny"),
            post(approvals::deny),
        )
        .route(HELD_PATH, post(approvals::hold))
        .with_state(rewind.clone());
    guards.merge(expiring).merge(approvals)
}

/// Open to a load balancer and a scraper, with no token; the Host check still applies.
fn open_routes(rewind: &Rewind, verifier: Option<&Verifier>) -> Router {
    let metrics = Router::new()
        .route(METRICS_PATH, get(metrics::metrics))
        .with_state(metrics::Scrape::default());
    let health = Router::new()
        .route(HEALTH_PATH, get(health::healthz))
        .route(READY_PATH, get(health::readyz))
        .with_state(health::Health::new(rewind.clone(), verifier.cloned()));
    metrics.merge(health)
}

/// Signed in: every request to `app` carries a token of the issuer; the metadata that says which
/// issuer is open to all.
fn signed_in(app: Router, verifier: Verifier) -> Router {
    verifier.keep_keys_fresh();
    let metadata = get(sign_in::metadata);
    app.layer(from_fn_with_state(verifier.clone(), sign_in::require_token))
        .merge(
            Router::new()
                .route(METADATA_PATH, metadata.clone())
                .route(&format!("{METADATA_PATH}{HTTP_PATH}"), metadata)
                .with_state(verifier),
        )
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
