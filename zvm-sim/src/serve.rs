//! Serving one site: a listener, axum-server (plain HTTP or HTTPS), and the handle that stops it.
//!
//! axum-server, rather than `axum::serve`, because it gives each request a `ConnectionShutdown`:
//! the fault that loses a response closes the connection through it, so the client sees a
//! transport error instead of an answer.

use std::net::SocketAddr;
use std::time::Duration;

use axum_server::Handle;
use axum_server::accept::NoDelayAcceptor;
use axum_server::tls_rustls::RustlsAcceptor;
use tokio::task::JoinHandle;

use crate::app::site_app;
use crate::error::StartError;
use crate::http::Scheme;
use crate::shared::SimState;
use crate::tls::SiteTls;
use crate::world::SiteRole;

/// How long a graceful shutdown waits for requests in flight before it closes their connections.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Where one simulated ZVM listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteEndpoint {
    /// The site name (`Boston`, `Denver` in the default world).
    pub name: String,
    /// `http://127.0.0.1:PORT` (`https://` with TLS), no trailing `/`.
    pub url: String,
    /// The site's `SiteIdentifier`.
    pub site_identifier: String,
    /// With TLS: the PEM file of the site's self-signed certificate, for clients to pin.
    pub certificate_pem: Option<std::path::PathBuf>,
}

/// One site being served.
#[derive(Debug)]
pub(crate) struct ServedSite {
    pub endpoint: SiteEndpoint,
    handle: Handle<SocketAddr>,
    task: JoinHandle<()>,
}

impl ServedSite {
    /// Stops accepting, lets requests in flight finish (closing idle connections at once), and
    /// waits until the server has stopped.
    pub async fn shutdown(self) {
        self.handle.graceful_shutdown(Some(SHUTDOWN_GRACE));
        let _ = self.task.await;
    }

    /// Stops at once, without waiting (a dropped `Simulator`).
    pub fn abort(&self) {
        self.handle.shutdown();
    }
}

/// Binds `addr` and serves `site` on it in the background.
pub(crate) async fn serve_site(
    state: &SimState,
    site: SiteRole,
    addr: SocketAddr,
    tls: Option<SiteTls>,
) -> Result<ServedSite, StartError> {
    let name = state.site_name(site);
    let bind_error = |source| StartError::Bind {
        site: name.clone(),
        addr,
        source,
    };
    let listener = std::net::TcpListener::bind(addr).map_err(bind_error)?;
    let bound = listener.local_addr().map_err(bind_error)?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    let endpoint = SiteEndpoint {
        name: name.clone(),
        url: format!("{scheme}://{bound}"),
        site_identifier: state.site_identifier(site),
        certificate_pem: tls.as_ref().map(|t| t.certificate_pem.clone()),
    };
    let service = site_app(state.shared.clone(), site, Scheme(scheme))
        .into_make_service_with_connect_info::<SocketAddr>();
    let handle = Handle::new();
    // Every connection sets TCP_NODELAY, as an appliance's front (nginx's `tcp_nodelay`) does, so
    // an HTTP/2 answer's body is not held behind the client's delayed ACK: its headers and body are
    // two writes, and Nagle's algorithm would keep the second until the first is acknowledged,
    // 40 ms an answer over TLS.
    let server = axum_server::from_tcp(listener)
        .map_err(bind_error)?
        .handle(handle.clone());
    let task = match tls {
        None => {
            let server = server.acceptor(NoDelayAcceptor);
            tokio::spawn(report(name, async move { server.serve(service).await }))
        }
        Some(tls) => {
            let acceptor = RustlsAcceptor::new(tls.config).acceptor(NoDelayAcceptor);
            let server = server.acceptor(acceptor);
            tokio::spawn(report(name, async move { server.serve(service).await }))
        }
    };
    Ok(ServedSite {
        endpoint,
        handle,
        task,
    })
}

async fn report(site: String, served: impl Future<Output = std::io::Result<()>>) {
    if let Err(error) = served.await {
        tracing::error!(%site, %error, "the site stopped serving");
    }
}
