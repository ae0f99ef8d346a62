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
//!
//! [`serve_stdio`] and [`serve_http`] are what the binary calls once it has a [`Rewind`].

pub mod args;
pub mod check;
pub mod progress;
pub mod reply;
pub mod server;
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

/// Serves MCP over streamable HTTP at [`HTTP_PATH`] on `listener` until `shutdown` completes, then
/// waits for the guards and recoveries still running, as [`serve_stdio`] does. Only
/// [`LOOPBACK_HOSTS`] and `extra_hosts` are accepted in the `Host` header.
pub async fn serve_http(
    listener: tokio::net::TcpListener,
    rewind: Rewind,
    extra_hosts: &[String],
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
                .chain(extra_hosts.iter().cloned()),
        )
        .with_allowed_origins(LOOPBACK_ORIGINS);
    let sessions_end = config.cancellation_token.clone();
    // One RewindServer (so one Rewind, one per-VPG insert queue) shared by every session.
    let server = RewindServer::new(rewind);
    let in_flight = server.in_flight();
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        LocalSessionManager::default().into(),
        config,
    );
    let app = axum::Router::new().nest_service(HTTP_PATH, service);
    let served = axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            shutdown.await;
            sessions_end.cancel();
        })
        .await;
    in_flight.settle().await;
    served.map_err(|source| ServeError::Http { addr, source })
}
