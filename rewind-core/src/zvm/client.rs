//! The client of one configured site's ZVM, as transport only: it builds each exchange (TLS trust
//! and timeouts as configured, the site's bearer token, JSON), sends it, sends again what may be sent
//! again within the retry budgets, and names the site and the request in what fails. The ZVM's
//! resources are read and written through it in `api/`; what is kept of a site between calls is the
//! facade's ([`super::Site`]).

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;
use tokio::sync::OnceCell;
use url::Url;

use super::answer::{OneOrMany, decode, task_id_from_body};
use super::error::{CallError, describe};
use super::retry::Budgets;
use super::token::{TOKEN_PATH, TokenCache};
use super::under_way::UnderWay;
use super::wire::{ErrorBody, LocalSite};
use crate::config::{HttpSettings, SiteConfig};
use crate::error::{RewindError, Unreached};

/// How many new tokens one call takes after 401s before it reports an authentication error: a token
/// refused right after it was issued, again and again, is not a revocation but a refusal.
const TOKEN_REFRESHES: u32 = 3;

/// The client of one configured site's ZVM.
#[derive(Debug)]
pub struct ZvmClient {
    /// Which site this is, and where its settings are.
    id: Identity,
    http: reqwest::Client,
    tokens: TokenCache,
    retries: Budgets,
    /// The site's own identity, read once from `/v1/localsite` (`api/local_site.rs`).
    pub(super) local: OnceCell<LocalSite>,
    /// The exchanges under way, for a person watching ([`ZvmClient::waiting`]).
    under_way: UnderWay,
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

/// How one exchange may be retried and how long it may take.
#[derive(Debug, Clone, Copy)]
pub(super) struct How {
    /// Whether sending it twice does no harm, so transient failures may be retried like a read's.
    pub(super) idempotent: bool,
    /// A longer bound than the client's request timeout (a download).
    pub(super) timeout: Option<Duration>,
}

impl How {
    /// A read, or anything else safe to send twice, within the client's request timeout.
    pub(super) const READ: How = How {
        idempotent: true,
        timeout: None,
    };
    /// A write: sent again only when it provably never left.
    const WRITE: How = How {
        idempotent: false,
        timeout: None,
    };
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
            under_way: UnderWay::default(),
        })
    }

    /// The exchanges with this ZVM under way, oldest first.
    pub fn waiting(&self) -> Vec<crate::progress::Waiting> {
        self.under_way.list(&self.id.name)
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

    /// A body that stopped arriving, as an error naming this site and what was being read.
    pub fn body_lost(&self, request: &str, e: &reqwest::Error) -> RewindError {
        CallError::lost(e).at(self, request)
    }

    /// An answer to `request` that says something else than asked for, naming this site.
    pub(super) fn unexpected(&self, request: String, detail: impl Into<String>) -> RewindError {
        RewindError::UnexpectedResponse {
            site: self.id.name.clone(),
            request,
            detail: detail.into(),
        }
    }

    /// One exchange at a full URL of this ZVM, named `path` in messages, with retries: 401 → drop the
    /// token if it is still current and try again (a bounded number of times); transient failures of
    /// idempotent exchanges → capped, jittered backoff within the read budget; any other exchange is
    /// tried again only when it provably never left.
    pub(super) async fn call_url(
        &self,
        method: Method,
        url: &str,
        path: &str,
        query: &[(&str, String)],
        body: Option<&serde_json::Value>,
        how: How,
    ) -> Result<reqwest::Response, CallError> {
        let started = Instant::now();
        let mut attempt = 0;
        let mut refreshes = 0;
        loop {
            attempt += 1;
            let token = self
                .under_way
                .watch(
                    self.tokens.get(),
                    &self.id.name,
                    "signing in".to_owned(),
                    self.tokens.url(),
                )
                .await?;
            let mut req = self
                .http
                .request(method.clone(), url)
                .bearer_auth(&*token.value)
                .header(reqwest::header::ACCEPT, "application/json");
            if let Some(t) = how.timeout {
                req = req.timeout(t);
            }
            if !query.is_empty() {
                req = req.query(query);
            }
            if let Some(b) = body {
                req = req.json(b);
            }
            let what = format!("{method} {path}");
            let sent = self
                .under_way
                .watch(req.send(), &self.id.name, what, url)
                .await;
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
                Ok(resp) => status_error(resp).await,
                Err(e) => CallError::from_reqwest(&e, url),
            };
            match self
                .retries
                .after(&failure, how.idempotent, attempt, started)
            {
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
        let url = join(&self.id.base, path);
        let resp = self
            .call_url(method, &url, path, query, body, How::READ)
            .await
            .map_err(|e| e.at(self, &request))?;
        let bytes = resp
            .bytes()
            .await
            .map_err(|e| CallError::lost(&e).at(self, &request))?;
        decode(&bytes).map_err(|e| e.at(self, &request))
    }

    /// `GET path` with `query`, read as `T`.
    pub(super) async fn get_json<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, String)],
    ) -> Result<T, RewindError> {
        self.read(Method::GET, path, query, None).await
    }

    /// `GET path` with `query`, a list (an absent or `null` one is empty).
    pub(super) async fn get_list<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, String)],
    ) -> Result<Vec<T>, RewindError> {
        Ok(self
            .get_json::<Option<Vec<T>>>(path, query)
            .await?
            .unwrap_or_default())
    }

    /// `GET path`, one `what` (an object, or a one-element array on some versions).
    pub(super) async fn get_one<T: DeserializeOwned>(
        &self,
        path: &str,
        what: &str,
    ) -> Result<T, RewindError> {
        let one: OneOrMany<T> = self.get_json(path, &[]).await?;
        one.first().ok_or_else(|| {
            self.unexpected(format!("GET {path}"), format!("the answer holds no {what}"))
        })
    }

    /// A POST that only reads (a browse, a download link).
    pub(super) async fn post_read<T: DeserializeOwned>(
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

    /// A write that answers with a task identifier (or, for an FLR mount, a session identifier): sent
    /// once, retried only when it provably never left.
    pub(super) async fn post_for_task(
        &self,
        path: &str,
        body: Option<&impl serde::Serialize>,
    ) -> Result<String, CallError> {
        self.write_for_id(Method::POST, path, body).await
    }

    /// A write (`method` at `path`) that answers with an identifier.
    pub(super) async fn write_for_id(
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
    pub(super) async fn write(
        &self,
        method: Method,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<String, CallError> {
        let url = join(&self.id.base, path);
        let resp = self
            .call_url(method, &url, path, &[], body, How::WRITE)
            .await?;
        resp.text().await.map_err(|e| CallError::lost(&e))
    }
}

/// An error status, with the ZVM's own words when its body holds them.
async fn status_error(resp: reqwest::Response) -> CallError {
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap_or_default();
    let message = serde_json::from_str::<ErrorBody>(&text)
        .ok()
        .and_then(|b| b.message)
        .unwrap_or_else(|| text.chars().take(300).collect());
    CallError::Status { status, message }
}

impl CallError {
    /// Names the site and the request.
    pub(crate) fn at(self, client: &ZvmClient, request: &str) -> RewindError {
        let id = &client.id;
        let site = id.name.clone();
        let request = request.to_string();
        match self {
            CallError::NotSent { cause, url, detail } => RewindError::Unreachable {
                site,
                url,
                request,
                cause,
                detail,
                url_setting: id.url_setting.clone(),
            },
            CallError::Lost { detail } => RewindError::Unreachable {
                site,
                url: id.base.to_string(),
                request,
                cause: Unreached::NoAnswer,
                detail: format!("{detail}; it may be busy or restarting: try again"),
                url_setting: id.url_setting.clone(),
            },
            CallError::Untrusted { detail } => RewindError::Untrusted {
                site,
                url: id.base.to_string(),
                detail,
            },
            CallError::Auth { detail } => RewindError::Auth {
                site,
                url: id.base.to_string(),
                detail,
                credentials_setting: id.credentials_setting.clone(),
            },
            CallError::NotTokenEndpoint { url, status } => RewindError::NotTokenEndpoint {
                site,
                url,
                status,
                url_setting: id.url_setting.clone(),
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

/// Joins the base URL and an absolute path, keeping any path prefix of the base.
fn join(base: &Url, path: &str) -> String {
    format!("{}{}", base.as_str().trim_end_matches('/'), path)
}

/// Percent-encodes an identifier for use as one path segment.
pub(super) fn segment(id: &str) -> String {
    url::form_urlencoded::byte_serialize(id.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_with_prefix_keeps_it_and_ids_are_escaped() {
        let base = Url::parse("https://zvm.example/zvm/").unwrap();
        assert_eq!(join(&base, "/v1/vms"), "https://zvm.example/zvm/v1/vms");
        assert_eq!(segment("a b/c"), "a%20b%2Fc");
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
