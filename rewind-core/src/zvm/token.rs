//! The single-flight bearer-token cache of one site (rust-stack.md §6).
//!
//! An async mutex is held across the token request, so however many calls arrive at once from cold, only
//! one token request is in flight per site and the rest receive its token. A token is refreshed ahead of
//! its expiry. On a 401 a caller drops the token only if it is still the one that failed (compared by
//! generation), so N concurrent 401s cause one new token request, not N; this matters with Keycloak
//! session limits, where every new token revokes the older ones.
//!
//! A token request that fails is shared the same way: the callers that were waiting while it failed
//! get its error instead of each asking in turn. N concurrent calls with a wrong secret are one failed
//! login at Keycloak, not N (brute-force detection could lock the account), and with Keycloak down the
//! last caller does not wait for N retry budgets one after another. A call that comes after the
//! failure asks again.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::Mutex;

use super::error::{CallError, describe, is_transient};
use super::retry::Budgets;
use super::wire::{TokenError, TokenResponse};
use crate::config::Credentials;

/// The path of the appliance's Keycloak token endpoint (realm `zerto`).
pub const TOKEN_PATH: &str = "/auth/realms/zerto/protocol/openid-connect/token";

/// The Keycloak client id that the ZVM appliance's password grant uses.
pub const PASSWORD_GRANT_CLIENT_ID: &str = "zerto-client";

/// How long ahead of its expiry a token is replaced, at most.
const REFRESH_AHEAD: Duration = Duration::from_secs(30);

/// The longest a token is kept, whatever lifetime Keycloak gives it: a lifetime of billions of years
/// would overflow the clock it is added to.
const MAX_LIFETIME: Duration = Duration::from_secs(24 * 60 * 60);

/// A token with the generation it was fetched in.
#[derive(Clone)]
struct Cached {
    token: Arc<str>,
    refresh_at: Instant,
    generation: u64,
}

/// The slot behind the mutex. `last_generation` only grows, so an old generation never matches a new
/// token.
#[derive(Default)]
struct Slot {
    current: Option<Cached>,
    last_generation: u64,
    /// The last token request's error, with its number in [`TokenCache::requests_ended`]; cleared by
    /// a success.
    failure: Option<(u64, CallError)>,
}

/// A token as handed to a caller: the bearer value and the generation to pass to
/// [`TokenCache::invalidate`] if the ZVM answers 401.
#[derive(Clone)]
pub(crate) struct Token {
    pub(crate) value: Arc<str>,
    pub(crate) generation: u64,
}

/// The single-flight token cache of one site.
pub(crate) struct TokenCache {
    http: reqwest::Client,
    token_url: String,
    credentials: Credentials,
    retries: Budgets,
    /// Held across the token request: this is what makes the fetch single-flight.
    slot: Mutex<Slot>,
    /// How many token requests have ended, counted under the slot's lock and read before waiting for
    /// it: a failure numbered higher than what a caller read ended while it waited.
    requests_ended: AtomicU64,
}

impl std::fmt::Debug for TokenCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenCache")
            .field("token_url", &self.token_url)
            .field("principal", &self.credentials.principal())
            .finish_non_exhaustive()
    }
}

impl TokenCache {
    pub(crate) fn new(
        http: reqwest::Client,
        token_url: String,
        credentials: Credentials,
        retries: Budgets,
    ) -> Self {
        TokenCache {
            http,
            token_url,
            credentials,
            retries,
            slot: Mutex::new(Slot::default()),
            requests_ended: AtomicU64::new(0),
        }
    }

    /// The token endpoint's URL.
    pub(crate) fn url(&self) -> &str {
        &self.token_url
    }

    /// A valid token: the cached one, or a new one fetched while every other caller waits for it (and
    /// shares its error, if it fails).
    pub(crate) async fn get(&self) -> Result<Token, CallError> {
        let seen = self.requests_ended.load(Ordering::Acquire);
        let mut slot = self.slot.lock().await;
        if let Some(c) = slot
            .current
            .as_ref()
            .filter(|c| Instant::now() < c.refresh_at)
        {
            return Ok(Token {
                value: c.token.clone(),
                generation: c.generation,
            });
        }
        if let Some((_, e)) = slot.failure.as_ref().filter(|(n, _)| *n > seen) {
            return Err(e.clone());
        }
        let fetched = self.fetch().await;
        let ended = self.requests_ended.fetch_add(1, Ordering::AcqRel) + 1;
        let (token, lifetime) = match fetched {
            Ok(t) => t,
            Err(e) => {
                slot.failure = Some((ended, e.clone()));
                return Err(e);
            }
        };
        slot.failure = None;
        slot.last_generation += 1;
        let ahead = REFRESH_AHEAD.min(lifetime / 5);
        let cached = Cached {
            token: token.into(),
            refresh_at: Instant::now() + lifetime.saturating_sub(ahead),
            generation: slot.last_generation,
        };
        slot.current = Some(cached.clone());
        Ok(Token {
            value: cached.token,
            generation: cached.generation,
        })
    }

    /// Drops the cached token if it is still the one of `generation` (the one a ZVM just refused).
    pub(crate) async fn invalidate(&self, generation: u64) {
        let mut slot = self.slot.lock().await;
        if slot
            .current
            .as_ref()
            .is_some_and(|c| c.generation == generation)
        {
            slot.current = None;
        }
    }

    /// One token request, retried on transient failures within the retry budget.
    async fn fetch(&self) -> Result<(String, Duration), CallError> {
        let form: Vec<(&str, &str)> = match &self.credentials {
            Credentials::Client { id, secret } => vec![
                ("grant_type", "client_credentials"),
                ("client_id", id),
                ("client_secret", secret.expose()),
            ],
            Credentials::Password { username, password } => vec![
                ("grant_type", "password"),
                ("client_id", PASSWORD_GRANT_CLIENT_ID),
                ("username", username),
                ("password", password.expose()),
            ],
        };
        let started = Instant::now();
        let mut attempt = 0;
        loop {
            attempt += 1;
            let result = self.http.post(&self.token_url).form(&form).send().await;
            let failure = match result {
                Ok(resp) if resp.status().is_success() => {
                    let body: TokenResponse = resp.json().await.map_err(|e| CallError::Decode {
                        detail: format!(
                            "the token response is not a Keycloak token: {}",
                            describe(&e)
                        ),
                    })?;
                    if body.access_token.is_empty() {
                        return Err(CallError::Decode {
                            detail: "the token response has no access_token".into(),
                        });
                    }
                    // A missing or silly lifetime is taken as Keycloak's default of 300 s.
                    let secs = body.expires_in.filter(|s| *s > 0).unwrap_or(300) as u64;
                    return Ok((
                        body.access_token,
                        Duration::from_secs(secs).min(MAX_LIFETIME),
                    ));
                }
                Ok(resp) if is_transient(resp.status()) => CallError::Status {
                    status: resp.status().as_u16(),
                    message: "the token endpoint is unavailable".into(),
                },
                // Keycloak's token endpoint answers a POST with 200, 400 or 401: anything that
                // does not know the path is not one (a URL with a path, or not the appliance).
                Ok(resp) if matches!(resp.status().as_u16(), 404 | 405) => {
                    return Err(CallError::NotTokenEndpoint {
                        url: self.token_url.clone(),
                        status: resp.status().as_u16(),
                    });
                }
                Ok(resp) => {
                    let status = resp.status();
                    let body: TokenError = resp.json().await.unwrap_or_default();
                    let said = [body.error, body.error_description]
                        .into_iter()
                        .flatten()
                        .collect::<Vec<_>>()
                        .join(": ");
                    return Err(CallError::Auth {
                        detail: format!(
                            "Keycloak refused the {} credentials of {:?} with HTTP {}{}",
                            match self.credentials {
                                Credentials::Client { .. } => "client",
                                Credentials::Password { .. } => "user",
                            },
                            self.credentials.principal(),
                            status.as_u16(),
                            if said.is_empty() {
                                String::new()
                            } else {
                                format!(" ({said})")
                            }
                        ),
                    });
                }
                Err(e) => CallError::from_reqwest(&e, &self.token_url),
            };
            // A token request is a read: sending it twice does no harm.
            match self.retries.after(&failure, true, attempt, started) {
                Some(delay) => tokio::time::sleep(delay).await,
                None => return Err(failure),
            }
        }
    }
}
