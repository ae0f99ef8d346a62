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
//! - [`sign_in`] and [`roles`]: who may call over HTTP, and which tools.
//! - [`tasks`]: guards and recoveries as MCP tasks, for a client that asks for them.
//! - [`guards`]: `GET /v1/guards`, the team server's recent guards for its users' hooks.
//!
//! [`serve_stdio`] and [`serve_http`] are what the binary calls once it has a [`Rewind`].

pub mod args;
pub mod check;
pub mod guards;
pub mod progress;
pub mod reply;
pub mod roles;
pub mod server;
pub mod sign_in;
pub mod tasks;
pub mod text;
pub mod tools;

use std::future::Future;

use rewind_core::Rewind;
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

pub use server::{RewindServer, SERVER_NAME};

/// The path the MCP endpoint is served at over HTTP.
pub const HTTP_PATH: &str = "/mcp";

/// The host names the HTTP server answers to without being told: loopback only. A request whose `Host`
/// header names anything else is refused, so a web page cannot reach the server through DNS rebinding.
pub const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// The browser origins the HTTP server accepts: pages served from this machine only. Requests without
/// an `Origin` header (every non-browser client) are not affected.
pub const LOOPBACK_ORIGINS: [&str; 3] =
    ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

/// Serving failed.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The MCP session could not start (the client went away, or did not speak MCP).
    #[error("the MCP session did not start: {0}")]
    Start(String),
    /// The MCP session ended abnormally.
    #[error("the MCP session ended abnormally: {0}")]
    Session(String),
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
    /// The most MCP sessions open at once; an `initialize` past it is answered 503 with
    /// `Retry-After`, and the sessions already open are not disturbed.
    pub max_sessions: usize,
    /// How long a session with no message either way is kept before it is closed.
    pub session_idle: std::time::Duration,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            extra_hosts: Vec::new(),
            max_sessions: 64,
            session_idle: std::time::Duration::from_secs(120),
        }
    }
}

/// Serves MCP over streamable HTTP at [`HTTP_PATH`] on `listener` until `shutdown` completes, then
/// waits for the guards and recoveries still running, as [`serve_stdio`] does. Only
/// [`LOOPBACK_HOSTS`] and `limits.extra_hosts` are accepted in the `Host` header, and at most
/// `limits.max_sessions` sessions are open at once.
pub async fn serve_http(
    listener: tokio::net::TcpListener,
    rewind: Rewind,
    limits: HttpLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let addr = listener
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_else(|_| "?".to_string());
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(
            LOOPBACK_HOSTS
                .iter()
                .map(|h| h.to_string())
                .chain(limits.extra_hosts.iter().cloned()),
        )
        .with_allowed_origins(LOOPBACK_ORIGINS);
    let sessions_end = config.cancellation_token.clone();
    let auth = rewind.config().http_auth.clone();
    let rewind_for_guards = rewind.clone();
    // One RewindServer (so one Rewind, one per-VPG insert queue) shared by every session.
    let server = RewindServer::new(rewind);
    let in_flight = server.in_flight();
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(limits.session_idle);
    let sessions = std::sync::Arc::new(sessions);
    let service = StreamableHttpService::new(move || Ok(server.clone()), sessions.clone(), config);
    let cap = SessionCap {
        sessions,
        max: limits.max_sessions,
    };
    let hosts: std::sync::Arc<Vec<String>> = std::sync::Arc::new(
        LOOPBACK_HOSTS
            .iter()
            .map(|h| h.to_string())
            .chain(limits.extra_hosts.iter().cloned())
            .collect(),
    );
    // The hooks' read of the journal answers to the same host names as /mcp (which rmcp checks).
    let guards = axum::Router::new()
        .route(guards::GUARDS_PATH, axum::routing::get(guards::guards))
        .with_state(guards::GuardsState::new(rewind_for_guards))
        .layer(axum::middleware::from_fn_with_state(
            hosts,
            refuse_other_hosts,
        ));
    let mut app = axum::Router::new()
        .nest_service(HTTP_PATH, service)
        .merge(guards);
    if let Some(auth) = auth {
        // Signed in: every request to /mcp carries a token of the issuer; the metadata that says
        // which issuer is open to all.
        let verifier = sign_in::Verifier::new(auth);
        app = app
            .layer(axum::middleware::from_fn_with_state(
                verifier.clone(),
                sign_in::require_token,
            ))
            .merge(
                axum::Router::new()
                    .route(
                        sign_in::METADATA_PATH,
                        axum::routing::get(sign_in::metadata),
                    )
                    .route(
                        &format!("{}{HTTP_PATH}", sign_in::METADATA_PATH),
                        axum::routing::get(sign_in::metadata),
                    )
                    .with_state(verifier),
            );
    }
    let app = app.layer(axum::middleware::from_fn_with_state(cap, refuse_past_cap));
    let served = axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            shutdown.await;
            sessions_end.cancel();
        })
        .await;
    in_flight.settle().await;
    served.map_err(|source| ServeError::Http { addr, source })
}

/// Answers 403 to a request whose `Host` header names none of `hosts` (its port aside), as rmcp
/// answers one to `/mcp`: a web page reached through DNS rebinding reads nothing.
async fn refuse_other_hosts(
    axum::extract::State(hosts): axum::extract::State<std::sync::Arc<Vec<String>>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let header = request
        .headers()
        .get(axum::http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    // An allowed name matches the header's host whatever its port; an allowed host:port only that.
    let named =
        |h: &String| h.eq_ignore_ascii_case(header) || h.eq_ignore_ascii_case(host_name(header));
    if !header.is_empty() && hosts.iter().any(named) {
        return next.run(request).await;
    }
    (
        axum::http::StatusCode::FORBIDDEN,
        "this host name is not one rewind-mcp answers to; add it with --allowed-host",
    )
        .into_response()
}

/// The host of a `Host` header, without its port or an IPv6 address's brackets.
fn host_name(header: &str) -> &str {
    if let Some(rest) = header.strip_prefix('[') {
        return match rest.split_once(']') {
            Some((address, port)) if port.is_empty() || port.starts_with(':') => address,
            _ => "",
        };
    }
    header.split(':').next().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::host_name;

    #[test]
    fn a_host_header_is_read_without_its_port_or_brackets_and_a_malformed_one_names_nothing() {
        assert_eq!(host_name("rewind.example.com:8443"), "rewind.example.com");
        assert_eq!(host_name("localhost"), "localhost");
        assert_eq!(host_name("[::1]:8765"), "::1");
        assert_eq!(host_name("[::1]"), "::1");
        assert_eq!(host_name("[::1]junk"), "");
    }
}

/// The open sessions and how many may be.
#[derive(Clone)]
struct SessionCap {
    sessions: std::sync::Arc<LocalSessionManager>,
    max: usize,
}

/// Answers a request that would open one session too many with 503 and `Retry-After`: a request
/// without `Mcp-Session-Id` (an `initialize`) while `max` sessions are open. Requests of open
/// sessions always pass.
async fn refuse_past_cap(
    axum::extract::State(cap): axum::extract::State<SessionCap>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let opens_one = request.method() == axum::http::Method::POST
        && !request.headers().contains_key("mcp-session-id");
    if opens_one {
        let open = cap.sessions.sessions.read().await.len();
        if open >= cap.max {
            let body = serde_json::json!({
                "jsonrpc": "2.0",
                "id": null,
                "error": {
                    "code": -32000,
                    "message": format!(
                        "rewind-mcp serves at most {} sessions at once and all are open; try again in a while, or close sessions you no longer use (DELETE with their Mcp-Session-Id)",
                        cap.max
                    ),
                },
            });
            return (
                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                [(axum::http::header::RETRY_AFTER, "5")],
                axum::Json(body),
            )
                .into_response();
        }
    }
    next.run(request).await
}
