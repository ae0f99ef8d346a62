//! The one test helper of rewind-core: a fresh seeded simulator on loopback port 0, a `Rewind`
//! configured for it (Boston, optionally Denver) with the `rewind`/`rewind-secret` service client and
//! temporary catalog and journal paths, the workspace's `/_sim` client (`zvm_sim::test_kit::Control`),
//! and a test-only proxy that can lose an insert's answer or slip another client's
//! insert in first.
//!
//! Tests talk to the simulator over HTTP only, with their own JSON (`serde_json::Value`): rewind-core
//! never sees the simulator's types.

#![allow(dead_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use rewind_core::{Config, GuardRequest, Rewind, SiteConfig};
use serde_json::json;

pub use zvm_sim::test_kit::{CLIENT_ID, CLIENT_SECRET, Control, Site, state_of};

/// The guard request of every test: claude-code editing app.conf on `vm`, for `change`.
pub fn request(vm: &str, change: &str) -> GuardRequest {
    GuardRequest {
        vm: vm.into(),
        agent: "claude-code".into(),
        action: "edit app.conf".into(),
        change_id: change.into(),
    }
}

/// Which configured sites a test wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sites {
    /// Boston only.
    Boston,
    /// Boston and Denver.
    Both,
}

/// A started simulator, a Rewind for it, and the control client.
pub struct TestEnv {
    pub sim: zvm_sim::Simulator,
    pub rewind: Rewind,
    pub control: Control,
    pub dir: tempfile::TempDir,
    pub sites: Sites,
}

impl TestEnv {
    /// A simulator with the test options of `seed`, and Boston configured.
    pub async fn start(seed: u64) -> TestEnv {
        TestEnv::start_with(zvm_sim::Options::for_tests(seed), Sites::Boston).await
    }

    /// A simulator with `options`, and `sites` configured.
    pub async fn start_with(options: zvm_sim::Options, sites: Sites) -> TestEnv {
        zvm_sim::test_kit::init_logging();
        let sim = zvm_sim::start(options).await.expect("the simulator starts");
        let dir = tempfile::tempdir().expect("a temporary folder");
        let control = Control::new(&sim.local().url);
        let rewind = Rewind::new(build_config(&sim, dir.path(), sites, |c| c)).expect("a Rewind");
        TestEnv {
            sim,
            rewind,
            control,
            dir,
            sites,
        }
    }

    /// Boston's site configuration (service client), at `url` (the simulator's, or a proxy's).
    pub fn boston_at(&self, url: &str) -> SiteConfig {
        SiteConfig::with_client("boston", url, CLIENT_ID, CLIENT_SECRET).unwrap()
    }

    /// The configuration of this environment's sites, with temporary paths, changed by `customize`.
    pub fn config_with(&self, customize: impl FnOnce(Config) -> Config) -> Config {
        build_config(&self.sim, self.dir.path(), self.sites, customize)
    }

    /// Another Rewind for the same simulator (as a second process would have), changed by `customize`.
    pub fn rewind_with(&self, customize: impl FnOnce(Config) -> Config) -> Rewind {
        Rewind::new(self.config_with(customize)).expect("a Rewind")
    }

    /// The identifier of the VPG named `name`, from the simulator's `/_sim/vpgs`.
    pub async fn vpg_id(&self, name: &str) -> String {
        self.control.vpg_id(name).await
    }

    /// The insert tasks the simulator has run, as `(TaskIdentifier, VpgIdentifier, State)`.
    pub async fn insert_tasks(&self) -> Vec<(String, String, i64)> {
        self.control
            .inserts(None)
            .await
            .into_iter()
            .map(|t| {
                (
                    t["TaskIdentifier"].as_str().unwrap_or_default().to_string(),
                    t["VpgIdentifier"].as_str().unwrap_or_default().to_string(),
                    state_of(&t),
                )
            })
            .collect()
    }
}

/// The configuration of `sites` of `sim` (Boston first), with the catalog and journal in `dir`,
/// changed by `customize`.
fn build_config(
    sim: &zvm_sim::Simulator,
    dir: &std::path::Path,
    sites: Sites,
    customize: impl FnOnce(Config) -> Config,
) -> Config {
    let site = |name, url: &str| SiteConfig::with_client(name, url, CLIENT_ID, CLIENT_SECRET);
    let mut config = Config {
        sites: vec![site("boston", &sim.local().url).unwrap()],
        ..Config::new(dir.join("catalog.toml"), dir.join("journal.jsonl"))
    };
    if sites == Sites::Both {
        config.sites.push(site("denver", &sim.peer().url).unwrap());
    }
    customize(config)
}

/// What the test proxy does to the first insert it forwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mischief {
    /// Forward everything faithfully.
    None,
    /// Forward it, let the simulator run it, then never answer (the client times out: a lost answer).
    LoseAnswer,
    /// Fire another client's insert into the same VPG just before forwarding it (the back-to-back rule
    /// then fails ours).
    ForeignInsertFirst,
    /// Answer the first two `/v1` reads 503 without forwarding them.
    UnavailableTwice,
    /// Cut the body of the first FLR download off halfway (its length announced whole), as a
    /// connection that drops mid-transfer does. The Host header is forwarded, so the download URLs
    /// the simulator hands out point at the proxy.
    CutFirstDownload,
    /// Forward the first FLR mount and never answer it (as `LoseAnswer` does an insert), then answer
    /// every read of the FLR sessions 500, so the lost mount cannot be reconciled.
    LoseMountThenSessions,
}

/// A test-only HTTP proxy in front of one simulated site.
pub struct Proxy {
    pub url: String,
    handle: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.handle.abort();
    }
}

#[derive(Clone)]
struct ProxyState {
    target: String,
    http: reqwest::Client,
    mischief: Mischief,
    done: Arc<AtomicBool>,
    unavailable: Arc<AtomicUsize>,
}

impl Proxy {
    /// Starts a proxy to `target` on a free port that plays `mischief` on the first insert.
    pub async fn start(target: &str, mischief: Mischief) -> Proxy {
        Proxy::start_on("127.0.0.1:0", target, mischief).await
    }

    fn app(target: &str, mischief: Mischief) -> axum::Router {
        let state = ProxyState {
            target: target.to_string(),
            http: reqwest::Client::new(),
            mischief,
            done: Arc::new(AtomicBool::new(false)),
            unavailable: Arc::new(AtomicUsize::new(0)),
        };
        axum::Router::new().fallback(forward).with_state(state)
    }

    /// Starts an HTTPS proxy to `target` with a fresh self-signed certificate for 127.0.0.1; returns
    /// it with the certificate's PEM.
    pub async fn start_tls(target: &str) -> (Proxy, String) {
        let key = rcgen::generate_simple_self_signed(vec![
            "127.0.0.1".to_string(),
            "localhost".to_string(),
        ])
        .expect("a self-signed certificate");
        let cert_pem = key.cert.pem();
        let config = axum_server::tls_rustls::RustlsConfig::from_pem(
            cert_pem.clone().into_bytes(),
            key.signing_key.serialize_pem().into_bytes(),
        )
        .await
        .expect("a TLS configuration");
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!(
            "https://127.0.0.1:{}",
            listener.local_addr().unwrap().port()
        );
        let app = Proxy::app(target, Mischief::None);
        let server = axum_server::from_tcp_rustls(listener, config).expect("a TLS server");
        let handle = tokio::spawn(async move {
            let _ = server.serve(app.into_make_service()).await;
        });
        (Proxy { url, handle }, cert_pem)
    }

    /// Starts a proxy to `target` listening on `addr`.
    pub async fn start_on(addr: &str, target: &str, mischief: Mischief) -> Proxy {
        let app = Proxy::app(target, mischief);
        let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let handle = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Proxy { url, handle }
    }
}

async fn forward(
    axum::extract::State(state): axum::extract::State<ProxyState>,
    request: axum::extract::Request,
) -> axum::response::Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let path = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str())
        .unwrap_or("/")
        .to_string();
    let is_insert =
        parts.method == axum::http::Method::POST && path.to_lowercase().ends_with("/checkpoints");
    if state.mischief == Mischief::UnavailableTwice
        && parts.method == axum::http::Method::GET
        && path.starts_with("/v1/")
        && state.unavailable.fetch_add(1, Ordering::SeqCst) < 2
    {
        let mut out = axum::response::Response::new(axum::body::Body::from("unavailable"));
        *out.status_mut() = axum::http::StatusCode::SERVICE_UNAVAILABLE;
        return out;
    }
    let lists_sessions = parts.method == axum::http::Method::GET
        && (path == "/v1/flrs" || path.starts_with("/v1/flrs?"));
    if state.mischief == Mischief::LoseMountThenSessions
        && lists_sessions
        && state.done.load(Ordering::SeqCst)
    {
        let mut out = axum::response::Response::new(axum::body::Body::from(
            json!({"Message": "the FLR sessions cannot be read now"}).to_string(),
        ));
        *out.status_mut() = axum::http::StatusCode::INTERNAL_SERVER_ERROR;
        return out;
    }
    let is_mount = parts.method == axum::http::Method::POST && path == "/v1/flrs";
    let lost_mount = state.mischief == Mischief::LoseMountThenSessions
        && is_mount
        && !state.done.swap(true, Ordering::SeqCst);
    let first = is_insert && !state.done.swap(true, Ordering::SeqCst);
    if first && state.mischief == Mischief::ForeignInsertFirst {
        foreign_insert(&state, &path).await;
    }
    let cut = state.mischief == Mischief::CutFirstDownload
        && parts.method == axum::http::Method::GET
        && path.contains("/downloads/")
        && !state.done.swap(true, Ordering::SeqCst);
    let mut req = state
        .http
        .request(parts.method.clone(), format!("{}{path}", state.target));
    for (name, value) in parts.headers.iter() {
        let keep_host = state.mischief == Mischief::CutFirstDownload;
        if (name != axum::http::header::HOST || keep_host)
            && name != axum::http::header::CONTENT_LENGTH
        {
            req = req.header(name, value);
        }
    }
    let resp = req
        .body(body)
        .send()
        .await
        .expect("the simulator answers the proxy");
    let status = resp.status();
    let content_type = resp.headers().get(reqwest::header::CONTENT_TYPE).cloned();
    let bytes = resp.bytes().await.unwrap_or_default();
    if (first && state.mischief == Mischief::LoseAnswer) || lost_mount {
        // The insert (or mount) reached the simulator; its answer never comes back.
        tokio::time::sleep(Duration::from_secs(3600)).await;
    }
    let mut out = if cut {
        let half = bytes.slice(..bytes.len() / 2);
        let chunks: Vec<Result<axum::body::Bytes, std::io::Error>> = vec![
            Ok(half),
            Err(std::io::Error::other("the connection dropped")),
        ];
        // The error waits a little, so the half is on the wire (headers and all) before the drop.
        let chunks = futures::StreamExt::then(futures::stream::iter(chunks), |chunk| async move {
            if chunk.is_err() {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            chunk
        });
        let mut out = axum::response::Response::new(axum::body::Body::from_stream(chunks));
        out.headers_mut()
            .insert(axum::http::header::CONTENT_LENGTH, bytes.len().into());
        out
    } else {
        axum::response::Response::new(axum::body::Body::from(bytes))
    };
    *out.status_mut() = axum::http::StatusCode::from_u16(status.as_u16()).unwrap();
    if let Some(ct) = content_type {
        out.headers_mut()
            .insert(axum::http::header::CONTENT_TYPE, ct);
    }
    out
}

/// Another client (the `admin` user, with its own token) inserts into the same VPG.
async fn foreign_insert(state: &ProxyState, path: &str) {
    let admin = Site::login(&state.http, &state.target, "admin", "admin").await;
    let checkpoint = json!({"CheckpointName": "another client's checkpoint"});
    let (status, _) = admin.post(path, &checkpoint).await;
    assert!(status.is_success(), "the foreign insert was accepted");
}
