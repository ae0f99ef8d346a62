//! Serving one site: a listener, axum-server (plain HTTP or HTTPS), and the handle that stops it.
//!
//! axum-server, rather than `axum::serve`, because it gives each request a `ConnectionShutdown`:
//! the fault that loses a response closes the connection through it, so the client sees a
//! transport error instead of an answer.

use std::net::SocketAddr;
use std::time::Duration;

use axum_server::Handle;
use axum_server::tls_rustls::RustlsConfig;
use tokio::task::JoinHandle;

use crate::api::{self, Scheme};
use crate::{SimState, SiteEndpoint, SiteRole, StartError};

/// How long a graceful shutdown waits for requests in flight before it closes their connections.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

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

/// HTTPS for a site: its certificate's PEM file, and the server configuration.
#[derive(Debug, Clone)]
pub(crate) struct SiteTls {
    pub certificate_pem: std::path::PathBuf,
    pub config: RustlsConfig,
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
    let service = api::site_app(state.shared.clone(), site, Scheme(scheme))
        .into_make_service_with_connect_info::<SocketAddr>();
    let handle = Handle::new();
    let task = match tls {
        None => {
            let server = axum_server::from_tcp(listener)
                .map_err(bind_error)?
                .handle(handle.clone());
            tokio::spawn(report(name, async move { server.serve(service).await }))
        }
        Some(tls) => {
            let server = axum_server::from_tcp_rustls(listener, tls.config)
                .map_err(bind_error)?
                .handle(handle.clone());
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
