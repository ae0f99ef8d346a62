//! The HTTP client of one ZVM: TLS trust, timeouts, the single-flight token cache, read retries, the
//! client's own wire models and waiting for Zerto tasks.
//!
//! - `wire`: serde models of ZVM JSON.
//! - `token`: the single-flight token cache.
//! - `retry`: capped, jittered backoff inside a deadline.
//! - `task`: adaptive waiting for a Zerto task, and for a tagged checkpoint to be listed.
//! - `flight`: concurrent identical reads (a filtered VM listing, a site's inventory, the running
//!   inserts) share one exchange.
//! - `kept`: a site's inventory and its whole VM listing, reused for a bounded time.
//! - `inventory`: a site's inventory indexed by name and identifier.
//! - `site`: one configured site as the facade keeps it: its client, the reads concurrent callers
//!   share, the kept listings and the learnt timings ([`Site`]). [`ZvmClient`] itself is HTTP,
//!   tokens and retry only.
//! - `timings`: what is learnt of a site's insert and listing times, kept for the next process.
//! - `port`: the narrow port between the guard's insert machine and a site.

mod flight;
pub mod inventory;
mod kept;
pub(crate) mod port;
pub mod retry;
mod site;
pub mod task;
pub(crate) mod timings;
pub(crate) mod token;
pub mod wire;

use port::Sent;
pub use site::Site;

use std::sync::{Arc, Mutex as StdMutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;
use tokio::sync::OnceCell;
use url::Url;

use crate::config::{HttpSettings, SiteConfig};
use crate::error::RewindError;
use crate::error::Unreached;
use crate::way_back::{JOURNAL_ALERTS, KeptSet, VpgHistory, Wipe};
use retry::Budgets;
use token::{TOKEN_PATH, TokenCache};
use wire::{
    Checkpoint, CloneStart, ErrorBody, FailoverTestStart, FailoverTestStop, FlrBrowse, FlrDownload,
    FlrListing, FlrMount, FlrSession, INSERT_TASK_TYPE, InsertCheckpoint, JournalFlr, LocalSite,
    SiteVm, Task, VirtualizationSite, VmRow, Vpg, format_query_time,
};

/// An event's description up to its first `:` or `.`, at most 120 characters: what happened,
/// without the detail a list of tags would add.
fn first_clause(text: &str) -> String {
    let end = text.find([':', '.']).unwrap_or(text.len());
    text[..end]
        .chars()
        .take(120)
        .collect::<String>()
        .trim()
        .to_string()
}

/// The history of `vpg`, with those of `alerts` that are journal alerts.
fn history_of(vpg: &Vpg, alerts: &[wire::Alert]) -> VpgHistory {
    let history = vpg.history_status_api.clone().unwrap_or_default();
    let mut journal_alerts: Vec<String> = alerts
        .iter()
        .filter_map(|a| a.help_identifier.clone())
        .filter(|id| JOURNAL_ALERTS.contains(&id.as_str()))
        .collect();
    journal_alerts.sort();
    journal_alerts.dedup();
    VpgHistory {
        status: vpg.status,
        configured_minutes: history.configured_history_in_minutes,
        actual_minutes: history.actual_history_in_minutes,
        earliest: history.earliest_checkpoint.and_then(|c| c.time_stamp),
        alerts: journal_alerts,
    }
}

/// Why one HTTP exchange with a ZVM failed, before it is given a site and a request to name.
#[derive(Debug, Clone)]
pub(crate) enum CallError {
    /// The request never reached the ZVM (connection refused, no such host, no connection in
    /// time, TLS to a plain-HTTP server): nothing happened there.
    NotSent {
        cause: Unreached,
        /// The URL asked.
        url: String,
        detail: String,
    },
    /// The ZVM's TLS certificate is not trusted: the handshake failed before anything was sent, and
    /// trying again cannot change that.
    Untrusted { detail: String },
    /// The request may have reached the ZVM, but no answer came back (timeout, connection reset).
    Lost { detail: String },
    /// The ZVM answered with an error status.
    Status { status: u16, message: String },
    /// Authentication failed: the token endpoint refused the credentials, or the ZVM answered 401 even
    /// to a fresh token.
    Auth { detail: String },
    /// The token URL answered with a status that no Keycloak token endpoint answers (404, 405).
    NotTokenEndpoint { url: String, status: u16 },
    /// The answer could not be read.
    Decode { detail: String },
}

/// When a failed exchange may be sent again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Retry {
    /// Not at all: trying again cannot change the outcome, or could do the thing twice.
    Never,
    /// Within the connect budget (`[http] connect_retry_secs`): nothing was sent.
    Connect,
    /// Within the read budget (`[http] read_retry_secs`): an answer was started, and lost or refused
    /// for now.
    Read,
}

impl CallError {
    /// A failure to send `url`, by what reqwest met.
    fn from_reqwest(e: &reqwest::Error, url: &str) -> CallError {
        let detail = describe(e);
        if e.is_connect() {
            // reqwest does not expose the TLS library's error as a type; its message names the
            // certificate (rustls: "invalid peer certificate: UnknownIssuer", native TLS: "certificate
            // verify failed").
            if detail.to_lowercase().contains("certificate") {
                return CallError::Untrusted { detail };
            }
            return CallError::NotSent {
                cause: unreached(e, &detail),
                url: url.to_owned(),
                detail,
            };
        }
        if e.is_builder() {
            return CallError::Decode { detail };
        }
        CallError::Lost { detail }
    }

    /// Whether a write that failed this way may nevertheless have happened at the ZVM: its answer was
    /// lost, unreadable, or a server error (a gateway's 502/504 in particular says nothing about
    /// whether the request went through).
    pub(crate) fn outcome_unknown(&self) -> bool {
        match self {
            CallError::Lost { .. } | CallError::Decode { .. } => true,
            CallError::Status { status, .. } => *status >= 500,
            CallError::NotSent { .. }
            | CallError::Untrusted { .. }
            | CallError::Auth { .. }
            | CallError::NotTokenEndpoint { .. } => false,
        }
    }

    /// What happened to a write, in words for a note or a message: no answer at all, an answer that
    /// could not be read, or an error status after which the write may still have happened. `write`
    /// names it, e.g. "the insert".
    pub(crate) fn what_happened_to(&self, write: &str) -> String {
        match self {
            CallError::Lost { detail } => format!("no answer to {write} came back ({detail})"),
            CallError::Decode { detail } => {
                format!("the answer to {write} could not be read ({detail})")
            }
            CallError::Status { status, message } if *status >= 500 => {
                let said = if message.is_empty() {
                    String::new()
                } else {
                    format!(" ({message})")
                };
                format!(
                    "the ZVM answered {write} with HTTP {status}{said}, after which whether it happened is unknown"
                )
            }
            CallError::Status { status, message } => {
                format!("the ZVM refused {write} with HTTP {status} ({message})")
            }
            CallError::NotSent { detail, .. } | CallError::Untrusted { detail } => {
                format!("{write} could not be sent ({detail})")
            }
            CallError::NotTokenEndpoint { url, status } => {
                format!("{write} could not be sent: {url} is no token endpoint (HTTP {status})")
            }
            CallError::Auth { detail } => {
                format!("{write} was refused for authentication ({detail})")
            }
        }
    }

    /// A short description for notes.
    pub(crate) fn detail(&self) -> String {
        match self {
            CallError::NotTokenEndpoint { url, status } => format!("{url} answered HTTP {status}"),
            CallError::NotSent { detail, .. }
            | CallError::Untrusted { detail }
            | CallError::Lost { detail }
            | CallError::Auth { detail }
            | CallError::Decode { detail } => detail.clone(),
            CallError::Status { status, message } => format!("HTTP {status}: {message}"),
        }
    }

    /// When an exchange that failed this way may be sent again; `idempotent` says whether sending
    /// it twice does no harm.
    pub(crate) fn retry(&self, idempotent: bool) -> Retry {
        match self {
            // Refused, or another failure to connect: a ZVM that is restarting comes back soon. A
            // name that does not resolve, TLS to plain HTTP or a connect timeout already waited
            // will not change in seconds.
            CallError::NotSent {
                cause: Unreached::Refused | Unreached::Other,
                ..
            } => Retry::Connect,
            CallError::NotSent { .. } => Retry::Never,
            CallError::Lost { .. } if idempotent => Retry::Read,
            CallError::Status { status, .. }
                if idempotent && StatusCode::from_u16(*status).is_ok_and(is_transient) =>
            {
                Retry::Read
            }
            _ => Retry::Never,
        }
    }

    /// Names the site and the request.
    pub(crate) fn at(self, client: &ZvmClient, request: &str) -> RewindError {
        let site = client.id.name.clone();
        let request = request.to_string();
        match self {
            CallError::NotSent { cause, url, detail } => RewindError::Unreachable {
                site,
                url,
                request,
                cause,
                detail,
                url_setting: client.id.url_setting.clone(),
            },
            CallError::Lost { detail } => RewindError::Unreachable {
                site,
                url: client.id.base.to_string(),
                request,
                cause: Unreached::NoAnswer,
                detail: format!("{detail}; it may be busy or restarting: try again"),
                url_setting: client.id.url_setting.clone(),
            },
            CallError::Untrusted { detail } => RewindError::Untrusted {
                site,
                url: client.id.base.to_string(),
                detail,
            },
            CallError::Auth { detail } => RewindError::Auth {
                site,
                url: client.id.base.to_string(),
                detail,
                credentials_setting: client.id.credentials_setting.clone(),
            },
            CallError::NotTokenEndpoint { url, status } => RewindError::NotTokenEndpoint {
                site,
                url,
                status,
                url_setting: client.id.url_setting.clone(),
            },
            CallError::Status { status, message } => RewindError::Zvm {
                site,
                request,
                status,
                message,
                advice: advice(status).into(),
            },
            CallError::Decode { detail } => RewindError::UnexpectedResponse {
                site,
                request,
                detail,
            },
        }
    }
}

/// What a failed connection met, from reqwest's error and its sources.
fn unreached(e: &reqwest::Error, detail: &str) -> Unreached {
    if e.is_timeout() {
        return Unreached::ConnectTimeout;
    }
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::ConnectionRefused
        {
            return Unreached::Refused;
        }
        source = s.source();
    }
    // hyper-util and rustls say these only in words.
    let said = detail.to_ascii_lowercase();
    if said.contains("dns error") || said.contains("failed to lookup address") {
        Unreached::NoSuchHost
    } else if said.contains("invalidcontenttype") || said.contains("corrupt message") {
        Unreached::PlainHttp
    } else if said.contains("connection refused") {
        Unreached::Refused
    } else {
        Unreached::Other
    }
}

/// What to do next after a ZVM's error status; empty when there is nothing general to say. FLR's 403
/// has its own error, [`RewindError::FlrForbidden`], which names the 10.9 RBAC defect.
fn advice(status: u16) -> &'static str {
    match status {
        403 => "the configured user or client lacks the role for this",
        404 => {
            "the identifier is unknown to this ZVM; it may have been removed, or belong to another site"
        }
        409 => {
            "the VPG or VM is in a state that does not allow this now; look at it in the ZVM and try later"
        }
        500..=599 => "the ZVM had a problem; try again, and look at the appliance if it persists",
        _ => "",
    }
}

/// Whether a status is worth retrying a read for.
fn is_transient(status: StatusCode) -> bool {
    matches!(
        status,
        StatusCode::BAD_GATEWAY | StatusCode::SERVICE_UNAVAILABLE | StatusCode::GATEWAY_TIMEOUT
    )
}

/// A reqwest error as a sentence, with its sources (which name the cause, e.g. "Connection refused"),
/// never with a request body.
pub fn describe(e: &reqwest::Error) -> String {
    let mut out = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

/// How one exchange may be retried and how long it may take.
#[derive(Debug, Clone, Copy)]
struct How {
    /// Whether sending it twice does no harm, so transient failures may be retried like a read's.
    idempotent: bool,
    /// A longer bound than the client's request timeout (a download).
    timeout: Option<Duration>,
}

/// How long one download may take: files can be large, and the client's request timeout is sized for
/// JSON answers.
pub const DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// Items asked for per page of an FLR browse.
pub const BROWSE_PAGE: usize = 500;
/// The most pages of one folder read (100,000 items): a folder is browsed to find one item in it.
pub const BROWSE_PAGES: usize = 200;

/// The client of one configured site's ZVM.
#[derive(Debug)]
pub struct ZvmClient {
    /// Which site this is, and where its settings are.
    id: Identity,
    http: reqwest::Client,
    tokens: TokenCache,
    retries: Budgets,
    /// The site's own identity, read once from `/v1/localsite`.
    local: OnceCell<LocalSite>,
    /// The exchanges under way, for a person watching ([`ZvmClient::waiting`]).
    under_way: Arc<StdMutex<UnderWay>>,
}

/// Which site a client is of, and where its settings are, for messages that say what to fix.
#[derive(Debug)]
struct Identity {
    /// The configured name.
    name: String,
    base: Url,
    /// Who signs in (the client id, or the user).
    principal: String,
    url_setting: String,
    credentials_setting: String,
}

/// The exchanges of one client under way, by a number of their own.
#[derive(Debug, Default)]
struct UnderWay {
    next: u64,
    exchanges: Vec<(u64, String, Instant)>,
}

/// An exchange counted as under way until dropped.
struct Awaited {
    under_way: Arc<StdMutex<UnderWay>>,
    id: u64,
}

impl Drop for Awaited {
    fn drop(&mut self) {
        let mut under_way = self.under_way.lock().unwrap_or_else(|p| p.into_inner());
        under_way.exchanges.retain(|(id, _, _)| *id != self.id);
    }
}

/// After how long an exchange is said to be awaited: in the log at `-v`, and on a progress line.
pub const SLOW_EXCHANGE: Duration = Duration::from_secs(1);

/// Runs `exchange`, saying in the log (info) once it has taken [`SLOW_EXCHANGE`], then every
/// five seconds, what is awaited, where and since when.
async fn noted_when_slow<F: std::future::Future>(
    exchange: F,
    site: &str,
    what: &str,
    url: &str,
) -> F::Output {
    tokio::pin!(exchange);
    let started = Instant::now();
    let mut next = SLOW_EXCHANGE;
    loop {
        match tokio::time::timeout_at((started + next).into(), &mut exchange).await {
            Ok(done) => return done,
            Err(_) => {
                tracing::info!(
                    "waiting for site {site}: {what} at {url}, for {:.1} s",
                    started.elapsed().as_secs_f64()
                );
                next += Duration::from_secs(5);
            }
        }
    }
}

impl ZvmClient {
    /// Builds the client of one site: its own reqwest client (connect and request timeouts, TLS trust
    /// as configured) and its own token cache. Nothing is sent yet.
    pub fn new(site: &SiteConfig, http: &HttpSettings) -> Result<ZvmClient, RewindError> {
        let mut builder = reqwest::Client::builder()
            .connect_timeout(http.connect_timeout)
            .timeout(http.request_timeout)
            .user_agent(concat!("zerto-ai-rewind/", env!("CARGO_PKG_VERSION")));
        if let Some(path) = &site.ca_cert {
            let certs = crate::trust::pinned_certificates(path).map_err(|problem| {
                RewindError::Config(crate::config::ConfigError::BadValue {
                    key: format!("sites.{}.ca_cert", site.name),
                    problem,
                })
            })?;
            // Pinned: only the given certificates are trusted for this site, not the platform's roots.
            builder = builder.tls_certs_only(certs);
        }
        if site.insecure {
            // Warned about by the front, once per run, from `Config::warnings`.
            builder = builder.tls_danger_accept_invalid_certs(true);
        }
        let client = builder.build().map_err(|e| {
            RewindError::Config(crate::config::ConfigError::BadValue {
                key: format!("sites.{}", site.name),
                problem: format!("cannot build an HTTP client: {}", describe(&e)),
            })
        })?;
        let base = site.url.clone();
        let retries = Budgets::of(http);
        let token_url = join(&base, TOKEN_PATH);
        Ok(ZvmClient {
            id: Identity {
                name: site.name.clone(),
                principal: site.credentials.principal().to_string(),
                base,
                url_setting: site.url_setting(),
                credentials_setting: site.credentials_setting(),
            },
            tokens: TokenCache::new(
                client.clone(),
                token_url,
                site.credentials.clone(),
                retries.clone(),
            ),
            http: client,
            retries,
            local: OnceCell::new(),
            under_way: Arc::default(),
        })
    }

    /// Counts `what` as under way until the value returned is dropped.
    fn awaiting(&self, what: String) -> Awaited {
        let mut under_way = self.under_way.lock().unwrap_or_else(|p| p.into_inner());
        under_way.next += 1;
        let id = under_way.next;
        under_way.exchanges.push((id, what, Instant::now()));
        Awaited {
            under_way: self.under_way.clone(),
            id,
        }
    }

    /// The exchanges with this ZVM under way, oldest first.
    pub fn waiting(&self) -> Vec<crate::progress::Waiting> {
        let under_way = self.under_way.lock().unwrap_or_else(|p| p.into_inner());
        under_way
            .exchanges
            .iter()
            .map(|(_, what, since)| crate::progress::Waiting {
                site: self.id.name.clone(),
                what: what.clone(),
                since: since.elapsed(),
            })
            .collect()
    }

    /// The configured name of this site.
    pub fn name(&self) -> &str {
        &self.id.name
    }

    /// The ZVM's base URL.
    pub fn url(&self) -> &Url {
        &self.id.base
    }

    /// The client id or user name this client acts as (as tasks' `InitiatedBy` may show it).
    pub fn principal(&self) -> &str {
        &self.id.principal
    }

    /// One exchange at a full URL of this ZVM, named `path` in messages, with retries: 401 → drop the
    /// token if it is still current and try again (a bounded number of times); transient failures of
    /// idempotent exchanges → capped, jittered backoff within the read budget; any other exchange is
    /// tried again only when it provably never left.
    async fn call_url(
        &self,
        method: Method,
        url: &str,
        path: &str,
        query: &[(&str, String)],
        body: Option<&serde_json::Value>,
        how: How,
    ) -> Result<reqwest::Response, CallError> {
        let How {
            idempotent,
            timeout,
        } = how;
        let started = Instant::now();
        let mut attempt = 0;
        let mut refreshes = 0;
        loop {
            attempt += 1;
            let token = {
                let _awaited = self.awaiting("signing in".to_owned());
                noted_when_slow(
                    self.tokens.get(),
                    &self.id.name,
                    "signing in",
                    self.tokens.url(),
                )
                .await?
            };
            let mut req = self
                .http
                .request(method.clone(), url)
                .bearer_auth(&*token.value)
                .header(reqwest::header::ACCEPT, "application/json");
            if let Some(t) = timeout {
                req = req.timeout(t);
            }
            if !query.is_empty() {
                req = req.query(query);
            }
            if let Some(b) = body {
                req = req.json(b);
            }
            let what = format!("{method} {path}");
            let sent = {
                let _awaited = self.awaiting(what.clone());
                noted_when_slow(req.send(), &self.id.name, &what, url).await
            };
            let failure = match sent {
                Ok(resp) if resp.status() == StatusCode::UNAUTHORIZED => {
                    if refreshes >= TOKEN_REFRESHES {
                        return Err(CallError::Auth {
                            detail: format!(
                                "the ZVM answered 401 to {method} {path} even with a new token of {:?} ({refreshes} new tokens in a row)",
                                self.id.principal
                            ),
                        });
                    }
                    // The token was revoked or expired early (a session limit, a restart of the
                    // appliance's Keycloak, possibly again right after the first new token): replace
                    // it, a bounded number of times, since a 401 is answered before anything is done.
                    self.tokens.invalidate(token.generation).await;
                    refreshes += 1;
                    continue;
                }
                Ok(resp) if resp.status().is_success() => return Ok(resp),
                Ok(resp) => {
                    let status = resp.status().as_u16();
                    let text = resp.text().await.unwrap_or_default();
                    let message = serde_json::from_str::<ErrorBody>(&text)
                        .ok()
                        .and_then(|b| b.message)
                        .unwrap_or_else(|| text.chars().take(300).collect());
                    CallError::Status { status, message }
                }
                Err(e) => CallError::from_reqwest(&e, url),
            };
            match self.retries.after(&failure, idempotent, attempt, started) {
                Some(delay) => {
                    tracing::debug!(site = %self.id.name, %path, attempt, ?delay, "retrying after {failure:?}");
                    tokio::time::sleep(delay).await;
                }
                None => return Err(failure),
            }
        }
    }

    /// One exchange whose answer is a model: a GET, or a POST that only reads (a browse, a download
    /// link). Either is safe to send twice, so both are retried like reads.
    async fn read<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<&serde_json::Value>,
    ) -> Result<T, RewindError> {
        let request = format!("{method} {path}");
        let how = How {
            idempotent: true,
            timeout: None,
        };
        let resp = self
            .call_url(method, &join(&self.id.base, path), path, query, body, how)
            .await
            .map_err(|e| e.at(self, &request))?;
        let bytes = resp.bytes().await.map_err(|e| {
            CallError::Lost {
                detail: describe(&e),
            }
            .at(self, &request)
        })?;
        decode(&bytes).map_err(|e| e.at(self, &request))
    }

    async fn get_json<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, String)],
    ) -> Result<T, RewindError> {
        self.read(Method::GET, path, query, None).await
    }

    async fn get_list<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, String)],
    ) -> Result<Vec<T>, RewindError> {
        Ok(self
            .get_json::<Option<Vec<T>>>(path, query)
            .await?
            .unwrap_or_default())
    }

    /// `GET /v1/localsite`, read once and remembered.
    pub async fn local_site(&self) -> Result<&LocalSite, RewindError> {
        self.local.get_or_try_init(|| self.read_local_site()).await
    }

    /// `GET /v1/localsite` now (a status check), remembered if nothing was yet.
    pub async fn read_local_site(&self) -> Result<LocalSite, RewindError> {
        let site: LocalSite = self.get_json("/v1/localsite", &[]).await?;
        if site.site_identifier.is_none() {
            return Err(RewindError::UnexpectedResponse {
                site: self.id.name.clone(),
                request: "GET /v1/localsite".into(),
                detail: "it has no SiteIdentifier".into(),
            });
        }
        let _ = self.local.set(site.clone());
        Ok(site)
    }

    /// This ZVM's site identifier (its local site's GUID).
    pub async fn site_identifier(&self) -> Result<String, RewindError> {
        Ok(self
            .local_site()
            .await?
            .site_identifier
            .clone()
            .unwrap_or_default())
    }

    /// `GET /v1/vms?{filter}={value}`: the rows (one per VM and VPG) that filter keeps, read now.
    pub(crate) async fn vms_filtered(
        &self,
        filter: &'static str,
        value: &str,
    ) -> Result<Vec<VmRow>, RewindError> {
        self.get_list("/v1/vms", &[(filter, value.to_string())])
            .await
    }

    /// `GET /v1/vms`: every protected VM, one row per VM and VPG, read now (a site's whole listing:
    /// a lookup reads by filter instead).
    pub async fn vms(&self) -> Result<Vec<VmRow>, RewindError> {
        self.get_list("/v1/vms", &[]).await
    }

    /// `GET path`, read as `T` (an absent or `null` body as `T`'s default): for the capture, which
    /// models the answers it reads itself.
    pub(crate) async fn read_json<T: DeserializeOwned + Default>(
        &self,
        path: &str,
    ) -> Result<T, RewindError> {
        Ok(self
            .get_json::<Option<T>>(path, &[])
            .await?
            .unwrap_or_default())
    }

    /// `GET /v1/vms` as the ZVM wrote it, for the parity report.
    pub async fn vms_value(&self) -> Result<serde_json::Value, RewindError> {
        self.read_json("/v1/vms").await
    }

    /// `GET /v1/vpgs` as JSON, unmodelled: for the parity comparison.
    pub async fn vpgs_value(&self) -> Result<serde_json::Value, RewindError> {
        self.read_json("/v1/vpgs").await
    }

    /// Whether `GET path` answers 200 (what it answers is not read further): a harmless probe of
    /// what this account may read.
    pub async fn can_read(&self, path: &str) -> Result<(), RewindError> {
        self.get_json::<serde_json::Value>(path, &[])
            .await
            .map(|_| ())
    }

    /// `GET /v1/vpgs`.
    pub async fn vpgs(&self) -> Result<Vec<Vpg>, RewindError> {
        self.get_list("/v1/vpgs", &[]).await
    }

    /// `GET /v1/vpgs/{id}/checkpoints`, from `since` on when given (the ZVM's clock).
    pub async fn checkpoints(
        &self,
        vpg_id: &str,
        since: Option<DateTime<Utc>>,
    ) -> Result<Vec<Checkpoint>, RewindError> {
        let query: Vec<(&str, String)> = since
            .map(|t| vec![("startDate", format_query_time(t))])
            .unwrap_or_default();
        let checkpoints: Vec<Checkpoint> = self
            .get_list(&format!("/v1/vpgs/{}/checkpoints", segment(vpg_id)), &query)
            .await?;
        // The filter is also applied here, so a ZVM that ignores it cannot widen the answer.
        Ok(match since {
            Some(t) => checkpoints
                .into_iter()
                .filter(|c| c.time_stamp.is_none_or(|ts| ts >= t))
                .collect(),
            None => checkpoints,
        })
    }

    /// `GET /v1/tasks/{id}`.
    pub async fn task(&self, task_id: &str) -> Result<Task, RewindError> {
        self.get_json(&format!("/v1/tasks/{}", segment(task_id)), &[])
            .await
    }

    /// `GET /v1/tasks?type=InsertTaggedCP` (and `status=1` when `running_only`): every VPG's.
    pub(crate) async fn insert_tasks(&self, running_only: bool) -> Result<Vec<Task>, RewindError> {
        let mut query = vec![("type", INSERT_TASK_TYPE.to_string())];
        if running_only {
            query.push(("status", "1".to_string()));
        }
        self.get_list("/v1/tasks", &query).await
    }

    /// `POST /v1/vpgs/{id}/checkpoints`, its answer as the insert machine reads it: an outcome that
    /// may or may not have happened is an answer, not an error.
    pub(crate) async fn insert(&self, vpg_id: &str, tag: &str) -> Result<Sent, RewindError> {
        match self.insert_tagged_checkpoint(vpg_id, tag).await {
            Ok(task_id) => Ok(Sent::Task(task_id)),
            Err(e) if e.outcome_unknown() => Ok(Sent::Unknown(e.what_happened_to("the insert"))),
            Err(e) => Err(e.at(self, &format!("POST /v1/vpgs/{vpg_id}/checkpoints"))),
        }
    }

    /// `GET /v1/virtualizationsites`.
    pub async fn virtualization_sites(&self) -> Result<Vec<VirtualizationSite>, RewindError> {
        self.get_list("/v1/virtualizationsites", &[]).await
    }

    /// `GET /v1/virtualizationsites/{id}/vms`: every VM of that site, protected or not, read now.
    pub async fn site_vms(&self, site_id: &str) -> Result<Vec<SiteVm>, RewindError> {
        let path = format!("/v1/virtualizationsites/{}/vms", segment(site_id));
        self.get_list(&path, &[]).await
    }

    /// `POST /v1/vpgs/{id}/checkpoints {"CheckpointName": tag}` → the insert's task id. Never retried
    /// here unless the request provably did not leave: a lost answer is the caller's to reconcile.
    pub(crate) async fn insert_tagged_checkpoint(
        &self,
        vpg_id: &str,
        tag: &str,
    ) -> Result<String, CallError> {
        self.post_for_task(
            &format!("/v1/vpgs/{}/checkpoints", segment(vpg_id)),
            Some(&InsertCheckpoint {
                checkpoint_name: tag,
            }),
        )
        .await
    }

    /// A write that answers with a task identifier (or, for an FLR mount, a session identifier): sent
    /// once, retried only when it provably never left.
    async fn post_for_task(
        &self,
        path: &str,
        body: Option<&impl serde::Serialize>,
    ) -> Result<String, CallError> {
        self.write_for_id(Method::POST, path, body).await
    }

    /// `POST /v1/vpgs/{id}/{operation}` with `body` → the task identifier.
    async fn vpg_operation(
        &self,
        vpg_id: &str,
        operation: &str,
        body: &impl serde::Serialize,
    ) -> Result<String, CallError> {
        let path = format!("/v1/vpgs/{}/{operation}", segment(vpg_id));
        self.post_for_task(&path, Some(body)).await
    }

    async fn write_for_id(
        &self,
        method: Method,
        path: &str,
        body: Option<&impl serde::Serialize>,
    ) -> Result<String, CallError> {
        let body = body
            .map(serde_json::to_value)
            .transpose()
            .map_err(|e| CallError::Decode {
                detail: e.to_string(),
            })?;
        let text = self.write(method, path, body.as_ref()).await?;
        task_id_from_body(&text).ok_or_else(|| CallError::Decode {
            detail: format!(
                "the answer is not an identifier: {:?}",
                text.chars().take(200).collect::<String>()
            ),
        })
    }

    /// A write, sent once (again only when it provably never left); its answer as text.
    async fn write(
        &self,
        method: Method,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<String, CallError> {
        let how = How {
            idempotent: false,
            timeout: None,
        };
        let resp = self
            .call_url(method, &join(&self.id.base, path), path, &[], body, how)
            .await?;
        resp.text().await.map_err(|e| CallError::Lost {
            detail: describe(&e),
        })
    }

    /// A POST that only reads (a browse, a download link).
    async fn post_read<T: DeserializeOwned>(
        &self,
        path: &str,
        body: &impl serde::Serialize,
    ) -> Result<T, RewindError> {
        let body = serde_json::to_value(body).map_err(|e| {
            CallError::Decode {
                detail: e.to_string(),
            }
            .at(self, &format!("POST {path}"))
        })?;
        self.read(Method::POST, path, &[], Some(&body)).await
    }

    /// `GET /v1/tasks?type=<kind>`, reduced to tasks of that type (a ZVM that ignores the filter must
    /// not make another task look like the one looked for).
    pub async fn tasks_of_type(&self, kind: &str) -> Result<Vec<Task>, RewindError> {
        let tasks: Vec<Task> = self
            .get_list("/v1/tasks", &[("type", kind.to_string())])
            .await?;
        Ok(tasks.into_iter().filter(|t| t.is_type(kind)).collect())
    }

    /// How much history one VPG's journal keeps: `GET /v1/vpgs/{id}` and its alerts, read at once.
    /// Alerts that cannot be read count as none: the status says the same, a little later.
    pub async fn vpg_history(&self, vpg_id: &str) -> Result<VpgHistory, RewindError> {
        let (vpg, alerts) = tokio::join!(self.vpg(vpg_id), self.alerts_of_vpg(vpg_id));
        Ok(history_of(&vpg?, &alerts.unwrap_or_default()))
    }

    /// The removals of every checkpoint of a VPG since `since`, read from its events: an event
    /// whose words say checkpoints were removed (a resync's, or a journal emptied). Events that
    /// cannot be read count as none; the journal's own start then tells a wipe from an ageing.
    pub async fn wipes(&self, vpg_id: &str, since: DateTime<Utc>) -> Vec<Wipe> {
        let events = self.events_of_vpg(vpg_id, since).await.unwrap_or_default();
        let mut wipes: Vec<Wipe> = events
            .into_iter()
            .filter_map(|e| {
                let by = e.description?;
                let words = by.to_lowercase();
                let removed = ["remov", "delet", "wipe", "lost"]
                    .iter()
                    .any(|w| words.contains(w));
                (words.contains("checkpoint") && removed).then_some(Wipe {
                    at: e.occurred_on?,
                    by: first_clause(&by),
                })
            })
            .filter(|w| w.at >= since)
            .collect();
        wipes.sort_by_key(|w| w.at);
        wipes
    }

    /// `GET /v1/alerts?vpgIdentifier={id}`: the alerts on now about one VPG.
    pub async fn alerts_of_vpg(&self, vpg_id: &str) -> Result<Vec<wire::Alert>, RewindError> {
        self.get_list("/v1/alerts", &[("vpgIdentifier", vpg_id.to_string())])
            .await
    }

    /// `GET /v1/events?vpgIdentifier={id}&startDate=..`: one VPG's events since `since`.
    pub async fn events_of_vpg(
        &self,
        vpg_id: &str,
        since: DateTime<Utc>,
    ) -> Result<Vec<wire::Event>, RewindError> {
        self.get_list(
            "/v1/events",
            &[
                ("vpgIdentifier", vpg_id.to_string()),
                ("startDate", format_query_time(since)),
            ],
        )
        .await
    }

    /// `GET /v1/vpgs/{id}` (an object, or a one-element array on some versions).
    pub async fn vpg(&self, vpg_id: &str) -> Result<Vpg, RewindError> {
        let path = format!("/v1/vpgs/{}", segment(vpg_id));
        let one: OneOrMany<Vpg> = self.get_json(&path, &[]).await?;
        one.first().ok_or_else(|| RewindError::UnexpectedResponse {
            site: self.id.name.clone(),
            request: format!("GET {path}"),
            detail: "the answer holds no VPG".into(),
        })
    }

    /// `POST /v1/flrs` with a journal FLR of `vm_id` in `vpg_id` at `checkpoint_id` → the FLR session
    /// identifier. Never sent twice.
    pub(crate) async fn flr_mount(
        &self,
        vpg_id: &str,
        vm_id: &str,
        checkpoint_id: &str,
    ) -> Result<String, CallError> {
        self.post_for_task(
            "/v1/flrs",
            Some(&FlrMount {
                jflr: Some(JournalFlr {
                    vpg_identifier: vpg_id,
                    vm_identifier: vm_id,
                    checkpoint_identifier: checkpoint_id,
                    initial_download_path: None,
                }),
                bflr: None,
            }),
        )
        .await
    }

    /// `POST /v1/flrs` with the FLR of `vm_id` in retention set `set` of `vpg_id` → the FLR session
    /// identifier. Never sent twice.
    pub(crate) async fn flr_mount_retention_set(
        &self,
        vpg_id: &str,
        vm_id: &str,
        set: &KeptSet,
    ) -> Result<String, CallError> {
        self.post_for_task(
            "/v1/flrs",
            Some(&FlrMount {
                jflr: None,
                bflr: Some(wire::BackupFlr {
                    vpg_identifier: vpg_id,
                    vm_identifier: vm_id,
                    retention_set_identifier: &set.retention_set_id,
                    repository_identifier: set.repository_id.as_deref(),
                    repository_site_identifier: set.repository_site_id.as_deref(),
                    initial_download_path: None,
                }),
            }),
        )
        .await
    }

    /// `POST /v1/ltr/vpgs/{id}/retentionstart {checkpointId}` → the id of the run's task. Never sent
    /// twice.
    pub(crate) async fn retention_start(
        &self,
        vpg_id: &str,
        checkpoint_id: &str,
    ) -> Result<String, CallError> {
        let path = format!("/v1/ltr/vpgs/{}/retentionstart", segment(vpg_id));
        let body = wire::RetentionStart { checkpoint_id };
        self.post_for_task(&path, Some(&body)).await
    }

    /// `GET /v1/ltr/health/vpgs`: each VPG's repository, as this site sees it.
    pub async fn ltr_health(&self) -> Result<Vec<wire::VpgLtrHealth>, RewindError> {
        let health: wire::VpgsLtrHealth = self.get_json("/v1/ltr/health/vpgs", &[]).await?;
        Ok(health.vpgs)
    }

    /// `GET /v1/ltr/catalog/fullretentionsets?vpgIdentifier=`: the full retention sets of a VPG.
    pub async fn full_retention_sets(
        &self,
        vpg_id: &str,
    ) -> Result<Vec<wire::RetentionSetInfo>, RewindError> {
        let sets: wire::RetentionSetsInfo = self
            .get_json(
                "/v1/ltr/catalog/fullretentionsets",
                &[("vpgIdentifier", vpg_id.to_string())],
            )
            .await?;
        Ok(sets.retention_sets)
    }

    /// `GET /v1/ltr/catalog/vms/{vm}/retentionsets`: the retention sets that hold a VM.
    pub async fn vm_retention_sets(
        &self,
        vm_id: &str,
    ) -> Result<Vec<wire::VmRetentionSet>, RewindError> {
        let path = format!("/v1/ltr/catalog/vms/{}/retentionsets", segment(vm_id));
        let sets: wire::VmRetentionSets = self.get_json(&path, &[]).await?;
        Ok(sets.retention_sets)
    }

    /// `GET /v1/flrs?vmIdentifier=`: the FLR sessions of a VM at this ZVM.
    pub async fn flr_sessions(&self, vm_id: &str) -> Result<Vec<FlrSession>, RewindError> {
        let sessions: Vec<FlrSession> = self
            .get_list("/v1/flrs", &[("vmIdentifier", vm_id.to_string())])
            .await?;
        // Filtered here as well: a ZVM that ignores the filter must not make another VM's session look
        // like this one's.
        Ok(sessions
            .into_iter()
            .filter(|s| {
                s.vm_identifier
                    .as_deref()
                    .is_none_or(|v| v.eq_ignore_ascii_case(vm_id))
            })
            .collect())
    }

    /// A body that stopped arriving, as an error naming this site and what was being read.
    pub fn body_lost(&self, request: &str, e: &reqwest::Error) -> RewindError {
        CallError::Lost {
            detail: describe(e),
        }
        .at(self, request)
    }

    /// `GET /v1/flrs/{id}`: the session (an object, or a one-element array as SW10 declares it).
    pub async fn flr_session(&self, session_id: &str) -> Result<FlrSession, RewindError> {
        let path = format!("/v1/flrs/{}", segment(session_id));
        let one: OneOrMany<FlrSession> = self.get_json(&path, &[]).await?;
        one.first().ok_or_else(|| RewindError::UnexpectedResponse {
            site: self.id.name.clone(),
            request: format!("GET {path}"),
            detail: "the answer holds no FLR session".into(),
        })
    }

    /// `POST /v1/flrs/{id}/browse {"Path": path, "PageNumber": n, "PageSize": BROWSE_PAGE}`, page after
    /// page until one is not full, into one listing; an empty path lists the partitions.
    ///
    /// Paging is asked for explicitly, so that a ZVM whose default page is short cannot hide the file
    /// looked for on a later page. A ZVM that ignores `PageSize` answers everything at once (more than
    /// a page) and one that ignores `PageNumber` answers the first page again: either ends the reading,
    /// without counting an item twice. At most [`BROWSE_PAGES`] pages are read.
    pub async fn flr_browse(
        &self,
        session_id: &str,
        path: &str,
    ) -> Result<FlrListing, RewindError> {
        let url = format!("/v1/flrs/{}/browse", segment(session_id));
        let page = |page_number| FlrBrowse {
            path,
            page_number,
            page_size: BROWSE_PAGE,
        };
        let mut listing: FlrListing = self.post_read(&url, &page(1)).await?;
        let mut last = listing.path_items.len();
        let mut number = 1;
        while last == BROWSE_PAGE && number < BROWSE_PAGES {
            number += 1;
            let next: FlrListing = self.post_read(&url, &page(number)).await?;
            let first = |l: &FlrListing| l.path_items.first().and_then(|i| i.path.clone());
            if next.path_items.is_empty() || first(&next) == first(&listing) {
                break;
            }
            last = next.path_items.len();
            listing.path_items.extend(next.path_items);
        }
        Ok(listing)
    }

    /// `POST /v1/flrs/{id}/download {"PathList": [path]}` → the URL to download it from.
    pub async fn flr_download_url(
        &self,
        session_id: &str,
        path: &str,
    ) -> Result<String, RewindError> {
        let request = format!("POST /v1/flrs/{}/download", segment(session_id));
        let answer: serde_json::Value = self
            .post_read(
                &format!("/v1/flrs/{}/download", segment(session_id)),
                &FlrDownload { path_list: &[path] },
            )
            .await?;
        match answer {
            serde_json::Value::String(s) if !s.trim().is_empty() => Ok(s.trim().to_string()),
            serde_json::Value::Object(o) => o
                .iter()
                .find(|(k, _)| {
                    k.eq_ignore_ascii_case("url") || k.eq_ignore_ascii_case("DownloadUrl")
                })
                .and_then(|(_, v)| v.as_str())
                .map(str::to_string)
                .ok_or_else(|| RewindError::UnexpectedResponse {
                    site: self.id.name.clone(),
                    request,
                    detail: "the answer holds no URL".into(),
                }),
            other => Err(RewindError::UnexpectedResponse {
                site: self.id.name.clone(),
                request,
                detail: format!(
                    "the answer is not a URL: {}",
                    other.to_string().chars().take(200).collect::<String>()
                ),
            }),
        }
    }

    /// `GET` a download URL of this ZVM, with the bearer, retried like a read; the response is returned
    /// as soon as its status is known, for the caller to stream. A URL of another host is refused:
    /// rewind's token never leaves for a host it was not configured for.
    pub async fn download(&self, url: &str) -> Result<reqwest::Response, RewindError> {
        let request = "GET <download URL>".to_string();
        let resolved = self
            .id
            .base
            .join(url)
            .map_err(|e| RewindError::UnexpectedResponse {
                site: self.id.name.clone(),
                request: request.clone(),
                detail: format!("the download URL {url:?} does not parse: {e}"),
            })?;
        if resolved.origin() != self.id.base.origin() {
            return Err(RewindError::UnexpectedResponse {
                site: self.id.name.clone(),
                request,
                detail: format!(
                    "the download URL {resolved} is not on this ZVM ({}); rewind does not send its token to another host",
                    self.id.base
                ),
            });
        }
        let how = How {
            idempotent: true,
            timeout: Some(DOWNLOAD_TIMEOUT),
        };
        let label = resolved.path().to_string();
        self.call_url(Method::GET, resolved.as_str(), &label, &[], None, how)
            .await
            .map_err(|e| e.at(self, &format!("GET {label}")))
    }

    /// `DELETE /v1/flrs/{id}`: unmount → the unmount's task identifier. Never sent twice.
    pub(crate) async fn flr_unmount(&self, session_id: &str) -> Result<String, CallError> {
        self.write_for_id(
            Method::DELETE,
            &format!("/v1/flrs/{}", segment(session_id)),
            None::<&()>,
        )
        .await
    }

    /// `POST /v1/vpgs/{id}/FailoverTest` at `checkpoint_id` for `vm_ids` → the task identifier.
    pub(crate) async fn failover_test_start(
        &self,
        vpg_id: &str,
        checkpoint_id: &str,
        vm_ids: &[&str],
    ) -> Result<String, CallError> {
        let body = FailoverTestStart {
            checkpoint_identifier: checkpoint_id,
            vm_identifiers: vm_ids,
        };
        self.vpg_operation(vpg_id, "FailoverTest", &body).await
    }

    /// `POST /v1/vms/{id}/Restore` → the task identifier.
    pub(crate) async fn journal_vm_restore(
        &self,
        vm_id: &str,
        body: &wire::JournalVmRestore<'_>,
    ) -> Result<String, CallError> {
        let path = format!("/v1/vms/{}/Restore", segment(vm_id));
        self.post_for_task(&path, Some(body)).await
    }

    /// `POST /v1/vms/{id}/RestoreCommit` (`commit`) or `RestoreRollback`, the body the VPG's
    /// identifier as a JSON string → the task identifier.
    pub(crate) async fn end_journal_vm_restore(
        &self,
        vm_id: &str,
        vpg_id: &str,
        commit: bool,
    ) -> Result<String, CallError> {
        let verb = if commit {
            "RestoreCommit"
        } else {
            "RestoreRollback"
        };
        let path = format!("/v1/vms/{}/{verb}", segment(vm_id));
        self.post_for_task(&path, Some(&vpg_id)).await
    }

    /// `POST /v1/vpgs/{id}/FailoverTestStop` → the task identifier.
    pub(crate) async fn failover_test_stop(
        &self,
        vpg_id: &str,
        success: bool,
        summary: &str,
    ) -> Result<String, CallError> {
        let body = FailoverTestStop {
            failover_test_success: success,
            failover_test_summary: summary,
        };
        self.vpg_operation(vpg_id, "FailoverTestStop", &body).await
    }

    /// `POST /v1/vpgs/{id}/CloneStart` at `checkpoint_id` for `vm_ids` → the task identifier.
    pub(crate) async fn clone_start(
        &self,
        vpg_id: &str,
        checkpoint_id: &str,
        vm_ids: &[&str],
    ) -> Result<String, CallError> {
        let body = CloneStart {
            checkpoint_id,
            vm_identifiers: vm_ids,
        };
        self.vpg_operation(vpg_id, "CloneStart", &body).await
    }

    /// `POST /v1/vpgs/{id}/CloneAbort` (no body) → the abort's task identifier, when the ZVM answers
    /// with one (SW10 documents only a 200).
    pub(crate) async fn clone_abort(&self, vpg_id: &str) -> Result<Option<String>, CallError> {
        let path = format!("/v1/vpgs/{}/CloneAbort", segment(vpg_id));
        let text = self.write(Method::POST, &path, None).await?;
        Ok(task_id_from_body(&text))
    }
}

/// The inserts into `vpg_id` among `tasks` (only those still running when `running_only`): filtered
/// here as well, since a ZVM that ignores a filter must not make another task look like ours.
pub(crate) fn inserts_into(tasks: &[Task], vpg_id: &str, running_only: bool) -> Vec<Task> {
    tasks
        .iter()
        .filter(|t| t.is_insert() && t.concerns_vpg(vpg_id))
        .filter(|t| !running_only || t.state() == Some(task::STATE_IN_PROGRESS))
        .cloned()
        .collect()
}

/// How many new tokens one call takes after 401s before it reports an authentication error: a token
/// refused right after it was issued, again and again, is not a revocation but a refusal.
const TOKEN_REFRESHES: u32 = 3;

/// Turns a ZVM answer's body into a wire model: the one decoding step of every read and of the
/// writes that answer with a model (the fuzz targets reach it through [`crate::fuzzing`]).
pub(crate) fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, CallError> {
    serde_json::from_slice(bytes).map_err(|e| CallError::Decode {
        detail: e.to_string(),
    })
}

/// An answer that is one object, or an array of them (SW10 and older docs disagree for some GETs).
#[derive(Debug, serde::Deserialize)]
#[serde(untagged)]
pub(crate) enum OneOrMany<T> {
    Many(Vec<T>),
    One(T),
}

impl<T> OneOrMany<T> {
    pub(crate) fn first(self) -> Option<T> {
        match self {
            OneOrMany::Many(v) => v.into_iter().next(),
            OneOrMany::One(t) => Some(t),
        }
    }
}

/// Reads a task identifier from a write's answer: a JSON string (the appliance's way), a JSON object
/// with `TaskIdentifier`, or bare text.
pub(crate) fn task_id_from_body(text: &str) -> Option<String> {
    let text = text.trim();
    let id = match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(serde_json::Value::Object(o)) => o
            .get("TaskIdentifier")
            .and_then(|v| v.as_str())
            .map(str::to_string)?,
        Ok(_) => return None,
        Err(_) => text.to_string(),
    };
    let id = id.trim().to_string();
    (!id.is_empty() && !id.contains(char::is_whitespace)).then_some(id)
}

/// Joins the base URL and an absolute path, keeping any path prefix of the base.
fn join(base: &Url, path: &str) -> String {
    format!("{}{}", base.as_str().trim_end_matches('/'), path)
}

/// Percent-encodes an identifier for use as one path segment.
fn segment(id: &str) -> String {
    url::form_urlencoded::byte_serialize(id.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A read that failed, for the tests of what shares or keeps reads.
    pub(crate) fn failure() -> RewindError {
        RewindError::UnexpectedResponse {
            site: "boston".into(),
            request: "GET /v1/vms".into(),
            detail: "test".into(),
        }
    }

    #[test]
    fn task_id_is_read_from_a_json_string_an_object_or_bare_text() {
        assert_eq!(task_id_from_body("\"a.b\"").as_deref(), Some("a.b"));
        assert_eq!(
            task_id_from_body("{\"TaskIdentifier\": \"x.y\"}").as_deref(),
            Some("x.y")
        );
        assert_eq!(task_id_from_body("abc.def\n").as_deref(), Some("abc.def"));
        assert_eq!(task_id_from_body("\"\"").as_deref(), None);
        assert_eq!(task_id_from_body("<html> oops </html>").as_deref(), None);
    }

    #[test]
    fn base_with_prefix_keeps_it_and_ids_are_escaped() {
        let base = Url::parse("https://zvm.example/zvm/").unwrap();
        assert_eq!(join(&base, "/v1/vms"), "https://zvm.example/zvm/v1/vms");
        assert_eq!(segment("a b/c"), "a%20b%2Fc");
    }

    #[test]
    fn a_write_with_an_unknown_outcome_is_worded_for_what_happened() {
        let lost = CallError::Lost {
            detail: "operation timed out".into(),
        };
        assert_eq!(
            lost.what_happened_to("the insert"),
            "no answer to the insert came back (operation timed out)"
        );
        let status = CallError::Status {
            status: 503,
            message: "Service Unavailable".into(),
        };
        assert_eq!(
            status.what_happened_to("the insert"),
            "the ZVM answered the insert with HTTP 503 (Service Unavailable), after which whether it happened is unknown"
        );
        let silent = CallError::Status {
            status: 502,
            message: String::new(),
        };
        assert_eq!(
            silent.what_happened_to("the mount"),
            "the ZVM answered the mount with HTTP 502, after which whether it happened is unknown"
        );
        let unreadable = CallError::Decode {
            detail: "expected value".into(),
        };
        assert_eq!(
            unreadable.what_happened_to("the insert"),
            "the answer to the insert could not be read (expected value)"
        );
        for e in [lost, status, silent, unreadable] {
            assert!(e.outcome_unknown());
            assert!(!e.what_happened_to("the insert").contains("lost"));
        }
    }

    #[test]
    fn a_refused_connection_is_retried_within_the_connect_budget_and_a_lost_read_within_the_read_one()
     {
        let not_sent = |cause| CallError::NotSent {
            cause,
            url: String::new(),
            detail: String::new(),
        };
        let status = |status| CallError::Status {
            status,
            message: String::new(),
        };
        let lost = CallError::Lost {
            detail: String::new(),
        };
        assert_eq!(not_sent(Unreached::Refused).retry(false), Retry::Connect);
        for settled in [
            Unreached::NoSuchHost,
            Unreached::PlainHttp,
            Unreached::ConnectTimeout,
        ] {
            assert_eq!(not_sent(settled).retry(true), Retry::Never, "{settled:?}");
        }
        assert_eq!(status(503).retry(true), Retry::Read);
        assert_eq!(lost.retry(true), Retry::Read);
        assert_eq!(lost.retry(false), Retry::Never, "a write may have happened");
        assert_eq!(status(503).retry(false), Retry::Never);
        assert_eq!(status(500).retry(true), Retry::Never);
        assert_eq!(status(404).retry(true), Retry::Never);
    }

    #[test]
    fn an_unreadable_ca_cert_is_a_configuration_error_naming_the_site() {
        let mut site =
            SiteConfig::with_client("boston", "https://zvm.example", "rewind", "x").unwrap();
        site.ca_cert = Some("/nonexistent/ca.pem".into());
        let err = ZvmClient::new(&site, &HttpSettings::default()).unwrap_err();
        assert!(err.to_string().contains("sites.boston.ca_cert"), "{err}");
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate").unwrap();
        site.ca_cert = Some(empty);
        let err = ZvmClient::new(&site, &HttpSettings::default()).unwrap_err();
        assert!(err.to_string().contains("no PEM certificate"), "{err}");
    }

    #[test]
    fn error_advice_says_what_to_do_for_known_statuses() {
        assert!(advice(404).contains("unknown to this ZVM"));
        assert_eq!(advice(400), "");
    }
}
