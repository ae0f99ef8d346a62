//! Keycloak as a ZVM appliance runs it: users, clients, and the access tokens each site issues.
//!
//! Each site has its own tokens, as two real appliances would: a Boston token is not valid at
//! Denver. Tokens expire on the simulated clock, so advancing the clock expires them.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use base64::Engine;

use super::clock::SimTime;
use super::ids::{SiteRole, guid};
use super::spec::{ClientSpec, Role, UserSpec};
use crate::decisions::{PUBLIC_CLIENT_ID, service_account_name};

/// Who made a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Principal {
    /// The user name, or `service-account-<client>` for a client.
    pub name: String,
    /// The ZVM role.
    pub role: Role,
    /// More realm roles its tokens carry.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub realm_roles: Vec<String>,
}

/// A token request, as the form gave it.
#[derive(Debug, Clone, Copy)]
pub enum Grant<'a> {
    /// `grant_type=password`.
    Password {
        /// `client_id`.
        client_id: &'a str,
        /// `username`.
        username: &'a str,
        /// `password`.
        password: &'a str,
    },
    /// `grant_type=client_credentials`.
    ClientCredentials {
        /// `client_id`.
        client_id: &'a str,
        /// `client_secret`.
        client_secret: &'a str,
    },
    /// `grant_type=authorization_code`: a code the login page handed out, with the PKCE verifier.
    AuthorizationCode {
        /// `client_id`.
        client_id: &'a str,
        /// `code`.
        code: &'a str,
        /// `redirect_uri`, the one the code was handed out for.
        redirect_uri: &'a str,
        /// `code_verifier`.
        code_verifier: &'a str,
    },
    /// `grant_type=refresh_token`.
    Refresh {
        /// `client_id`.
        client_id: &'a str,
        /// `refresh_token`.
        refresh_token: &'a str,
    },
}

/// A token response's content.
#[derive(Debug, Clone)]
pub struct Issued {
    /// `access_token`.
    pub access_token: String,
    /// `expires_in`, seconds.
    pub expires_in: u64,
    /// `refresh_token` and `refresh_expires_in` (password grant only).
    pub refresh: Option<(String, u64)>,
    /// `session_state` (password grant only).
    pub session_state: Option<String>,
    /// Who the token is for: the user, or the client's service account.
    pub principal: Principal,
    /// The audiences its access token names besides `account` ([`Auth::with_audiences`]).
    pub audiences: Vec<String>,
}

/// A refused token request, as Keycloak words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantError {
    /// 401 `invalid_client`.
    InvalidClient,
    /// 401 `invalid_grant` (bad user credentials) or 400 (bad refresh token).
    InvalidGrant {
        /// `error_description`.
        description: &'static str,
        /// Keycloak answers 401 for bad credentials and 400 for a bad refresh token.
        unauthorized: bool,
    },
    /// 400 `unauthorized_client`.
    UnauthorizedClient(&'static str),
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Token {
    site: SiteRole,
    /// Session-limit key: `user:<name>` or `client:<id>`.
    subject: String,
    principal: Principal,
    expires: SimTime,
    revoked: bool,
}

/// Whom a grant authenticated, and whether its tokens come with a refresh token.
struct Holder {
    /// Session-limit key: `user:<name>` or `client:<id>`.
    subject: String,
    principal: Principal,
    with_refresh: bool,
}

impl Holder {
    /// A user of the realm, signed in through the public client: it also gets a refresh token.
    fn user(user: &UserSpec) -> Holder {
        Holder {
            subject: format!("user:{}", user.name),
            principal: Principal {
                name: user.name.clone(),
                role: user.role,
                realm_roles: user.realm_roles.clone(),
            },
            with_refresh: true,
        }
    }
}

/// Token lifetimes and the session limit.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Lifetimes {
    /// Access tokens, ms.
    pub access_ms: i64,
    /// Refresh tokens, ms.
    pub refresh_ms: i64,
    /// Whether a new token revokes the subject's older ones at that site.
    pub session_limit: bool,
}

/// Keycloak's state.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Auth {
    users: Vec<UserSpec>,
    clients: Vec<ClientSpec>,
    tokens: HashMap<String, Token>,
    refresh_tokens: HashMap<String, Token>,
    lifetimes: Lifetimes,
    /// What the realm's audience mappers add to every access token.
    #[serde(default)]
    audiences: Vec<String>,
    /// The codes the login page handed out and no token request has used yet.
    #[serde(default)]
    codes: HashMap<String, CodeGrant>,
}

/// A code the login page handed out: for whom, to which client and redirect URI, bound to the
/// PKCE challenge; good once, for a minute.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct CodeGrant {
    user: String,
    client_id: String,
    redirect_uri: String,
    challenge: String,
    expires: SimTime,
}

/// What a person gave the login page, with the authorization request it answers.
#[derive(Debug, Clone, Copy)]
pub struct SignIn<'a> {
    /// `client_id`.
    pub client_id: &'a str,
    /// The user name.
    pub username: &'a str,
    /// The password.
    pub password: &'a str,
    /// `redirect_uri`.
    pub redirect_uri: &'a str,
    /// `code_challenge` (S256).
    pub challenge: &'a str,
}

/// How long a code is good for.
const CODE_MS: i64 = 60_000;

impl Auth {
    /// Keycloak with these users and clients, and no tokens.
    pub fn new(users: Vec<UserSpec>, clients: Vec<ClientSpec>, lifetimes: Lifetimes) -> Self {
        Self {
            users,
            clients,
            tokens: HashMap::new(),
            refresh_tokens: HashMap::new(),
            lifetimes,
            audiences: Vec::new(),
            codes: HashMap::new(),
        }
    }

    /// The login page's sign-in: the user's credentials checked for the public client, and a code
    /// for its redirect URI bound to its S256 challenge.
    pub fn sign_in(
        &mut self,
        form: &SignIn<'_>,
        now: SimTime,
        rng: &mut ChaCha8Rng,
    ) -> Result<String, GrantError> {
        let SignIn {
            client_id,
            username,
            password,
            redirect_uri,
            challenge,
        } = *form;
        let holder = self.password(client_id, username, password)?;
        if challenge.is_empty() {
            return Err(GrantError::InvalidGrant {
                description: "Missing parameter: code_challenge",
                unauthorized: false,
            });
        }
        self.codes.retain(|_, c| now < c.expires);
        let code = guid(rng);
        self.codes.insert(
            code.clone(),
            CodeGrant {
                user: holder.principal.name,
                client_id: client_id.to_owned(),
                redirect_uri: redirect_uri.to_owned(),
                challenge: challenge.to_owned(),
                expires: now.plus_millis(CODE_MS),
            },
        );
        Ok(code)
    }

    /// The same realm with audience mappers that add `audiences` to every access token.
    pub fn with_audiences(mut self, audiences: Vec<String>) -> Self {
        self.audiences = audiences;
        self
    }

    /// Issues a token at `site`, or says why not.
    pub fn grant(
        &mut self,
        site: SiteRole,
        grant: Grant<'_>,
        now: SimTime,
        rng: &mut ChaCha8Rng,
    ) -> Result<Issued, GrantError> {
        let holder = match grant {
            Grant::Password {
                client_id,
                username,
                password,
            } => self.password(client_id, username, password)?,
            Grant::ClientCredentials {
                client_id,
                client_secret,
            } => self.client_credentials(client_id, client_secret)?,
            Grant::Refresh {
                client_id,
                refresh_token,
            } => self.refresh(site, client_id, refresh_token, now)?,
            Grant::AuthorizationCode {
                client_id,
                code,
                redirect_uri,
                code_verifier,
            } => self.authorization_code(client_id, code, redirect_uri, code_verifier, now)?,
        };
        if self.lifetimes.session_limit {
            self.revoke_subject(site, &holder.subject);
        }
        // Expired tokens can never be valid again; forget them so a long run stays small.
        self.tokens.retain(|_, t| now < t.expires);
        self.refresh_tokens.retain(|_, t| now < t.expires);
        Ok(self.issue(site, &holder, now, rng))
    }

    /// The password grant: a user of the public client, who also gets a refresh token.
    fn password(
        &self,
        client_id: &str,
        username: &str,
        password: &str,
    ) -> Result<Holder, GrantError> {
        self.check_public_client(client_id)?;
        let user = self
            .users
            .iter()
            .find(|u| u.name == username && u.password == password)
            .ok_or(GrantError::InvalidGrant {
                description: "Invalid user credentials",
                unauthorized: true,
            })?;
        Ok(Holder::user(user))
    }

    /// The client_credentials grant: a confidential client's service account, which gets no
    /// refresh token.
    fn client_credentials(
        &self,
        client_id: &str,
        client_secret: &str,
    ) -> Result<Holder, GrantError> {
        if client_id == PUBLIC_CLIENT_ID {
            return Err(GrantError::UnauthorizedClient(
                "Public client not allowed to retrieve service account",
            ));
        }
        let client = self
            .clients
            .iter()
            .find(|c| c.id == client_id && c.secret == client_secret)
            .ok_or(GrantError::InvalidClient)?;
        Ok(Holder {
            subject: format!("client:{}", client.id),
            principal: Principal {
                name: service_account_name(&client.id),
                role: client.role,
                realm_roles: client.realm_roles.clone(),
            },
            with_refresh: false,
        })
    }

    /// The authorization_code grant: a code handed out for this client and redirect URI, used
    /// once, within its minute, with the verifier whose S256 digest is its challenge.
    fn authorization_code(
        &mut self,
        client_id: &str,
        code: &str,
        redirect_uri: &str,
        verifier: &str,
        now: SimTime,
    ) -> Result<Holder, GrantError> {
        self.check_public_client(client_id)?;
        let invalid = GrantError::InvalidGrant {
            description: "Code not valid",
            unauthorized: false,
        };
        let grant = self.codes.remove(code).ok_or(invalid.clone())?;
        let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, verifier.as_bytes());
        let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest.as_ref());
        let fits = now < grant.expires
            && grant.client_id == client_id
            && grant.redirect_uri == redirect_uri;
        if !fits {
            return Err(invalid);
        }
        if challenge != grant.challenge {
            return Err(GrantError::InvalidGrant {
                description: "PKCE verification failed: Invalid code verifier",
                unauthorized: false,
            });
        }
        let user = self
            .users
            .iter()
            .find(|u| u.name == grant.user)
            .ok_or(invalid)?;
        Ok(Holder::user(user))
    }

    /// The refresh_token grant: the holder of a refresh token still valid at `site`.
    fn refresh(
        &self,
        site: SiteRole,
        client_id: &str,
        refresh_token: &str,
        now: SimTime,
    ) -> Result<Holder, GrantError> {
        self.check_public_client(client_id)?;
        let token = self
            .refresh_tokens
            .get(refresh_token)
            .filter(|t| t.site == site && !t.revoked && now < t.expires)
            .ok_or(GrantError::InvalidGrant {
                description: "Invalid refresh token",
                unauthorized: false,
            })?;
        Ok(Holder {
            subject: token.subject.clone(),
            principal: token.principal.clone(),
            with_refresh: true,
        })
    }

    /// The session limit: every token `site` issued to `subject` before is revoked.
    fn revoke_subject(&mut self, site: SiteRole, subject: &str) {
        for token in self
            .tokens
            .values_mut()
            .chain(self.refresh_tokens.values_mut())
            .filter(|t| t.site == site && t.subject == subject)
        {
            token.revoked = true;
        }
    }

    /// A new access token for `holder` at `site`, with a refresh token and a session when its
    /// grant gives them.
    fn issue(
        &mut self,
        site: SiteRole,
        holder: &Holder,
        now: SimTime,
        rng: &mut ChaCha8Rng,
    ) -> Issued {
        let token = |lifetime_ms: i64| Token {
            site,
            subject: holder.subject.clone(),
            principal: holder.principal.clone(),
            expires: now.plus_millis(lifetime_ms),
            revoked: false,
        };
        let access_token = random_token(rng);
        self.tokens
            .insert(access_token.clone(), token(self.lifetimes.access_ms));
        let (refresh, session_state) = if holder.with_refresh {
            let refresh_token = random_token(rng);
            self.refresh_tokens
                .insert(refresh_token.clone(), token(self.lifetimes.refresh_ms));
            (
                Some((refresh_token, seconds(self.lifetimes.refresh_ms))),
                Some(guid(rng)),
            )
        } else {
            (None, None)
        };
        Issued {
            access_token,
            expires_in: seconds(self.lifetimes.access_ms),
            refresh,
            session_state,
            principal: holder.principal.clone(),
            audiences: self.audiences.clone(),
        }
    }

    /// Revokes every access and refresh token `site` issued (a fault rule's `RevokeTokens`).
    pub fn revoke_all(&mut self, site: SiteRole) {
        for token in self
            .tokens
            .values_mut()
            .chain(self.refresh_tokens.values_mut())
            .filter(|t| t.site == site)
        {
            token.revoked = true;
        }
    }

    /// The principal of a bearer token valid at `site` now, if it is one.
    pub fn check(&self, site: SiteRole, token: &str, now: SimTime) -> Option<Principal> {
        self.tokens
            .get(token)
            .filter(|t| t.site == site && !t.revoked && now < t.expires)
            .map(|t| t.principal.clone())
    }

    fn check_public_client(&self, client_id: &str) -> Result<(), GrantError> {
        if client_id == PUBLIC_CLIENT_ID {
            Ok(())
        } else if self.clients.iter().any(|c| c.id == client_id) {
            Err(GrantError::UnauthorizedClient(
                "Client not allowed for direct access grants",
            ))
        } else {
            Err(GrantError::InvalidClient)
        }
    }
}

fn seconds(millis: i64) -> u64 {
    u64::try_from(millis / 1000).unwrap_or(0)
}

/// An opaque bearer token: 40 random bytes, hex.
fn random_token(rng: &mut ChaCha8Rng) -> String {
    let mut bytes = [0u8; 40];
    rng.fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn auth(session_limit: bool) -> Auth {
        let spec = crate::world::spec::WorldSpec::default_world();
        Auth::new(
            spec.users,
            spec.clients,
            Lifetimes {
                access_ms: 300_000,
                refresh_ms: 1_800_000,
                session_limit,
            },
        )
    }

    /// The default world's users and clients, a random stream of seed 1, and the time 0.
    fn at_start(session_limit: bool) -> (Auth, ChaCha8Rng, SimTime) {
        let rng = ChaCha8Rng::seed_from_u64(1);
        (auth(session_limit), rng, SimTime::from_millis(0))
    }

    const ADMIN: Grant<'static> = Grant::Password {
        client_id: "zerto-client",
        username: "admin",
        password: "admin",
    };

    #[test]
    fn a_token_is_valid_at_its_own_site_until_it_expires() {
        let (mut a, mut rng, t0) = at_start(false);
        let issued = a.grant(SiteRole::Local, ADMIN, t0, &mut rng).unwrap();
        assert_eq!(issued.expires_in, 300);
        let token = &issued.access_token;
        assert!(a.check(SiteRole::Local, token, t0).is_some());
        assert!(a.check(SiteRole::Peer, token, t0).is_none());
        assert!(
            a.check(SiteRole::Local, token, SimTime::from_millis(299_999))
                .is_some()
        );
        assert!(
            a.check(SiteRole::Local, token, SimTime::from_millis(300_000))
                .is_none()
        );
    }

    #[test]
    fn the_session_limit_revokes_older_tokens_of_the_same_user_only() {
        let (mut a, mut rng, t0) = at_start(true);
        let first = a.grant(SiteRole::Local, ADMIN, t0, &mut rng).unwrap();
        let operator = Grant::Password {
            client_id: "zerto-client",
            username: "operator",
            password: "operator",
        };
        let other = a.grant(SiteRole::Local, operator, t0, &mut rng).unwrap();
        let second = a.grant(SiteRole::Local, ADMIN, t0, &mut rng).unwrap();
        assert!(a.check(SiteRole::Local, &first.access_token, t0).is_none());
        assert!(a.check(SiteRole::Local, &second.access_token, t0).is_some());
        assert!(a.check(SiteRole::Local, &other.access_token, t0).is_some());
    }

    #[test]
    fn bad_credentials_are_refused_as_keycloak_refuses_them() {
        let (mut a, mut rng, t0) = at_start(false);
        let wrong_password = Grant::Password {
            client_id: "zerto-client",
            username: "admin",
            password: "nope",
        };
        assert!(matches!(
            a.grant(SiteRole::Local, wrong_password, t0, &mut rng),
            Err(GrantError::InvalidGrant {
                unauthorized: true,
                ..
            })
        ));
        let wrong_secret = Grant::ClientCredentials {
            client_id: "rewind",
            client_secret: "nope",
        };
        assert_eq!(
            a.grant(SiteRole::Local, wrong_secret, t0, &mut rng)
                .unwrap_err(),
            GrantError::InvalidClient
        );
        let service = Grant::ClientCredentials {
            client_id: "rewind",
            client_secret: "rewind-secret",
        };
        let issued = a.grant(SiteRole::Local, service, t0, &mut rng).unwrap();
        assert!(issued.refresh.is_none());
        let principal = a.check(SiteRole::Local, &issued.access_token, t0).unwrap();
        assert_eq!(principal.name, "service-account-rewind");
    }
}
