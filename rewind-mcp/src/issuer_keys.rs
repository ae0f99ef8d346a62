//! The issuer's signing keys, read off the request path.
//!
//! A caller whose token names a key the server holds never waits on the issuer: the keys are read
//! at start and again in the background every half of `[http.auth] jwks_max_age_secs` (every
//! [`RETRY_AFTER_FAILURE`] after a read that failed), and a read replaces the whole set, so a key the issuer stops publishing is distrusted within that age. A
//! set that could not be read again for that long is no longer trusted at all (fail closed: every
//! token is refused, saying why, until a read succeeds).
//!
//! A token naming a key the set lacks (a rotation, or an attacker's guess) starts at most one read
//! every [`UNKNOWN_KEY_INTERVAL`], and waits for it at most [`UNKNOWN_KEY_WAIT`]; every other caller
//! goes on meanwhile, since no lock is held across a read.
//!
//! Where the keys are read is the server's decision, never the network's: the issuer's OpenID
//! configuration must name the configured issuer exactly (RFC 8414 3.3), its `jwks_uri` must be on
//! the issuer's origin, and a redirect to another origin is not followed, unless `[http.auth]
//! jwks_uri` names the JWKS itself. `[http.auth] ca_cert` pins the certificates trusted for both.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::{Duration, Instant};

use jsonwebtoken::DecodingKey;
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, KeyAlgorithm, PublicKeyUse};
use reqwest::Url;
use rewind_core::config::HttpAuth;
use serde_json::Value;
use tokio::sync::watch;

/// The least time between two reads started by tokens naming unknown keys, so that such tokens
/// cannot make the server hammer the issuer.
pub const UNKNOWN_KEY_INTERVAL: Duration = Duration::from_secs(30);

/// The longest a token naming an unknown key waits for the read it started (or found running).
pub const UNKNOWN_KEY_WAIT: Duration = Duration::from_secs(2);

/// How long one read of the OpenID configuration or the JWKS may take.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How soon the keys are read again after a read failed: a server that started (or lost them)
/// while the issuer was down serves again this soon after the issuer is back.
pub const RETRY_AFTER_FAILURE: Duration = Duration::from_secs(5);

/// The keys as last read.
#[derive(Default)]
struct KeySet {
    by_id: HashMap<String, DecodingKey>,
    /// When they were read; `None` before the first read succeeded.
    read_at: Option<Instant>,
    /// Why the last read failed, if it did.
    problem: Option<String>,
}

/// Why no key could be given for a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyRefusal {
    /// The issuer does not publish a key of that id.
    Unknown,
    /// The issuer's keys could not be read (recently enough to trust them): why.
    Unread(String),
}

/// The issuer's keys, shared by every request.
#[derive(Clone)]
pub struct IssuerKeys {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for IssuerKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IssuerKeys")
            .field("issuer", &self.inner.issuer)
            .finish()
    }
}

struct Inner {
    issuer: String,
    /// The JWKS `[http.auth]` names, if it does.
    jwks_uri: Option<Url>,
    max_age: Duration,
    http: reqwest::Client,
    current: RwLock<Arc<KeySet>>,
    /// A read is running.
    reading: AtomicBool,
    /// When the last read for an unknown key was started.
    unknown_read_at: Mutex<Option<Instant>>,
    /// Counts finished reads, for the callers waiting on one.
    reads: watch::Sender<u64>,
}

impl IssuerKeys {
    /// The keys of `auth`'s issuer; nothing is read until [`IssuerKeys::keep_fresh`]. Fails when
    /// `ca_cert` cannot be read.
    pub fn new(auth: &HttpAuth) -> Result<IssuerKeys, String> {
        let mut builder = reqwest::Client::builder()
            .timeout(READ_TIMEOUT)
            .user_agent(concat!("rewind-mcp/", env!("CARGO_PKG_VERSION")))
            .redirect(same_origin_redirects());
        if let Some(path) = &auth.ca_cert {
            let certs = rewind_core::trust::pinned_certificates(path)
                .map_err(|why| format!("http.auth.ca_cert: {why}"))?;
            builder = builder.tls_certs_only(certs);
        }
        let http = builder
            .build()
            .map_err(|e| format!("cannot build the HTTP client of the issuer: {e}"))?;
        Ok(IssuerKeys {
            inner: Arc::new(Inner {
                issuer: auth.issuer.clone(),
                jwks_uri: auth.jwks_uri.clone(),
                max_age: auth.jwks_max_age,
                http,
                current: RwLock::default(),
                reading: AtomicBool::new(false),
                unknown_read_at: Mutex::new(None),
                reads: watch::Sender::new(0),
            }),
        })
    }

    /// Reads the keys now and again every half of their maximum age, in the background, for as
    /// long as these keys are in use.
    pub fn keep_fresh(&self) {
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        let every = (self.inner.max_age / 2).max(Duration::from_secs(1));
        tokio::spawn(async move {
            loop {
                let Some(inner) = weak.upgrade() else { return };
                let keys = IssuerKeys { inner };
                let mut reads = keys.inner.reads.subscribe();
                keys.start_read();
                let _ = tokio::time::timeout(READ_TIMEOUT * 3, reads.changed()).await;
                // A failed read is tried again soon, not half a key age later.
                let wait = if keys.snapshot().problem.is_some() {
                    RETRY_AFTER_FAILURE.min(every)
                } else {
                    every
                };
                drop(keys);
                tokio::time::sleep(wait).await;
            }
        });
    }

    /// The HTTP client that reaches the issuer (its `ca_cert` trusted, redirects on its origin).
    pub fn http(&self) -> &reqwest::Client {
        &self.inner.http
    }

    /// Whether the issuer's keys are held: a read of them succeeded.
    pub fn held(&self) -> bool {
        let current = self.inner.current.read().unwrap_or_else(|p| p.into_inner());
        current.read_at.is_some() && !current.by_id.is_empty()
    }

    /// The key `kid` to check a token with.
    pub async fn key(&self, kid: &str) -> Result<DecodingKey, KeyRefusal> {
        let finished = match self.known(kid) {
            Ok(key) => return Ok(key),
            Err(KeyRefusal::Unknown) => self.read_for_unknown_key(),
            // Not read yet (the server has just started) or not lately: the read under way, if
            // any, may bring them.
            Err(KeyRefusal::Unread(_)) => self.running_read(),
        };
        if let Some(mut reads) = finished {
            // Bounded: a slow issuer makes this caller wait a little, never the others.
            let _ = tokio::time::timeout(UNKNOWN_KEY_WAIT, reads.changed()).await;
        }
        self.known(kid)
    }

    /// The key from the set as it is, if the set may still be trusted.
    fn known(&self, kid: &str) -> Result<DecodingKey, KeyRefusal> {
        let set = self.snapshot();
        let fresh = set
            .read_at
            .is_some_and(|at| at.elapsed() <= self.inner.max_age);
        if !fresh {
            let why = set
                .problem
                .clone()
                .unwrap_or_else(|| "they have not been read yet; try again in a moment".to_owned());
            return Err(KeyRefusal::Unread(why));
        }
        set.by_id.get(kid).cloned().ok_or(KeyRefusal::Unknown)
    }

    fn snapshot(&self) -> Arc<KeySet> {
        self.inner
            .current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Starts a read for a token naming an unknown key, unless one was started for that less than
    /// [`UNKNOWN_KEY_INTERVAL`] ago; the running read to wait for, if there is one.
    fn read_for_unknown_key(&self) -> Option<watch::Receiver<u64>> {
        {
            let mut last = self
                .inner
                .unknown_read_at
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            let due = last.is_none_or(|at| at.elapsed() >= UNKNOWN_KEY_INTERVAL);
            if due {
                *last = Some(Instant::now());
                self.start_read();
            }
        }
        self.running_read()
    }

    /// What tells the end of the read under way, if one is (its `changed` completes then).
    fn running_read(&self) -> Option<watch::Receiver<u64>> {
        // Subscribed first: a read that ends right after the check below is still seen.
        let reads = self.inner.reads.subscribe();
        self.inner.reading.load(Ordering::SeqCst).then_some(reads)
    }

    /// Starts one read in the background unless one is running. The read runs to its end even
    /// when every caller waiting on it gave up.
    fn start_read(&self) {
        if self.inner.reading.swap(true, Ordering::SeqCst) {
            return;
        }
        let inner = self.inner.clone();
        tokio::spawn(async move {
            let read = inner.read().await;
            {
                let mut current = inner.current.write().unwrap_or_else(|p| p.into_inner());
                let next = match read {
                    Ok(by_id) => KeySet {
                        by_id,
                        read_at: Some(Instant::now()),
                        problem: None,
                    },
                    Err(problem) => {
                        tracing::warn!(
                            "cannot read the signing keys of the issuer {}: {problem}",
                            inner.issuer
                        );
                        KeySet {
                            by_id: current.by_id.clone(),
                            read_at: current.read_at,
                            problem: Some(problem),
                        }
                    }
                };
                *current = Arc::new(next);
            }
            inner.reading.store(false, Ordering::SeqCst);
            inner.reads.send_modify(|n| *n += 1);
        });
    }
}

impl Inner {
    /// The issuer's RS256 signing keys, by id.
    async fn read(&self) -> Result<HashMap<String, DecodingKey>, String> {
        let jwks_uri = match &self.jwks_uri {
            Some(configured) => configured.clone(),
            None => self.discover().await?,
        };
        let jwks = self.get(&jwks_uri).await?;
        let keys = signing_keys(&jwks);
        if keys.is_empty() {
            return Err(format!(
                "its JWKS ({jwks_uri}) holds no RS256 signing key with a kid"
            ));
        }
        Ok(keys)
    }

    /// The `jwks_uri` of the issuer's OpenID configuration, if the configuration is the issuer's
    /// and the JWKS is on its origin.
    async fn discover(&self) -> Result<Url, String> {
        let url = discovery_url(&self.issuer)?;
        let config = self.get(&url).await?;
        let named = config["issuer"].as_str().unwrap_or_default();
        if named != self.issuer {
            return Err(format!(
                "its OpenID configuration ({url}) names the issuer {named:?}, not {:?}, so its keys are not used; set [http.auth] issuer to the issuer exactly as the realm names it",
                self.issuer
            ));
        }
        let raw = config["jwks_uri"]
            .as_str()
            .ok_or_else(|| format!("its OpenID configuration ({url}) names no jwks_uri"))?;
        let jwks_uri = Url::parse(raw).map_err(|e| {
            format!("its OpenID configuration names a jwks_uri that is not a URL ({e})")
        })?;
        if jwks_uri.origin() != url.origin() {
            return Err(format!(
                "its OpenID configuration names a JWKS on another origin ({jwks_uri}), which is not followed; if the realm really keeps its keys there, set [http.auth] jwks_uri to it"
            ));
        }
        Ok(jwks_uri)
    }

    /// A JSON document from `url`: 200 only (a redirect to another origin stops at its 3xx).
    async fn get(&self, url: &Url) -> Result<Value, String> {
        let answer = self
            .http
            .get(url.clone())
            .send()
            .await
            .map_err(|e| format!("{url} cannot be read: {}", rewind_core::zvm::describe(&e)))?;
        let status = answer.status();
        if status.is_redirection() {
            let to = answer
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .unwrap_or("?");
            return Err(format!(
                "{url} redirects to another origin ({to}), which is not followed; set [http.auth] jwks_uri to where the keys really are"
            ));
        }
        if !status.is_success() {
            return Err(format!("{url} answered {status}"));
        }
        answer
            .json::<Value>()
            .await
            .map_err(|e| format!("{url} did not answer JSON ({e})"))
    }
}

/// The issuer's OpenID configuration: `<issuer>/.well-known/openid-configuration`, the issuer's
/// trailing slash aside (OpenID Connect Discovery 4).
fn discovery_url(issuer: &str) -> Result<Url, String> {
    let raw = format!(
        "{}/.well-known/openid-configuration",
        issuer.trim_end_matches('/')
    );
    Url::parse(&raw).map_err(|e| format!("{raw} is not a URL ({e})"))
}

/// Redirects are followed on the origin they started from only, at most five times.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let from = attempt.previous().first().map(Url::origin);
        if attempt.previous().len() > 5 || from != Some(attempt.url().origin()) {
            attempt.stop()
        } else {
            attempt.follow()
        }
    })
}

/// The RS256 signing keys of a JWKS, by id. Keys for encryption (Keycloak publishes an RSA-OAEP
/// key beside its signing key), of other algorithms, without an id, or that cannot be read are
/// left out.
fn signing_keys(jwks: &Value) -> HashMap<String, DecodingKey> {
    jwks["keys"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|entry| serde_json::from_value::<Jwk>(entry.clone()).ok())
        .filter(|jwk| {
            let common = &jwk.common;
            matches!(jwk.algorithm, AlgorithmParameters::RSA(_))
                && !matches!(common.public_key_use, Some(ref u) if *u != PublicKeyUse::Signature)
                && common
                    .key_algorithm
                    .is_none_or(|a| a == KeyAlgorithm::RS256)
        })
        .filter_map(|jwk| {
            let kid = jwk.common.key_id.clone()?;
            let key = DecodingKey::from_jwk(&jwk).ok()?;
            Some((kid, key))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_rs256_signing_keys_with_an_id_are_kept() {
        let rsa = |kid: Option<&str>, alg: &str, usage: &str| {
            let mut key = json!({
                "kty": "RSA", "alg": alg, "use": usage, "e": "AQAB",
                "n": "sXchDaQebHnPiGvyDOAT4saGEUetSyo9MKLOoWFsueri23bOdgWp4Dy1WlUzewbgBHod5pcM9H95GQRV3JDXboIRROSBigeC5yjU1hGzHHyXss8UDprecbAYxknTcQkhslANGRUZmdTOQ5qTRsLAt6BTYuyvVRdhS8exSZEy_c4gs_7svlJJQ4H9_NxsiIoLwAEk7-Q3UXERGYw_75IDrGA84-lA_-Ct4eTlXHBIY2EaV7t7LjJaynVJCpkv4LKjTTAumiGUIuQhrNhZLuF_RJLqHpM2kgWFLU7-VTdL1VbC2tejvcI2BlMkEpk1BzBZI0KQB0GaDWFLN-aEAw3vRw",
            });
            if let Some(kid) = kid {
                key["kid"] = json!(kid);
            }
            key
        };
        let jwks = json!({"keys": [
            rsa(Some("sig"), "RS256", "sig"),
            rsa(Some("enc"), "RSA-OAEP", "enc"),
            rsa(Some("ps"), "PS256", "sig"),
            rsa(None, "RS256", "sig"),
            {"kty": "oct", "kid": "hmac", "k": "c2VjcmV0"},
            {"kty": "RSA", "kid": "broken"},
        ]});
        let keys = signing_keys(&jwks);
        let mut ids: Vec<&String> = keys.keys().collect();
        ids.sort();
        assert_eq!(ids, ["sig"]);
    }

    #[test]
    fn discovery_is_under_the_issuer_whatever_its_trailing_slash() {
        for issuer in [
            "https://zvm.example.com/auth/realms/zerto",
            "https://zvm.example.com/auth/realms/zerto/",
        ] {
            assert_eq!(
                discovery_url(issuer).unwrap().as_str(),
                "https://zvm.example.com/auth/realms/zerto/.well-known/openid-configuration"
            );
        }
    }
}
