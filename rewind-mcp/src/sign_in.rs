//! Sign-in over HTTP (`[http.auth]`): rewind-mcp as an OAuth 2.1 resource server, as the MCP
//! specification asks. Every request to `/mcp` carries a bearer token that the server checks
//! itself: an RS256 signature by a key of the issuer ([`crate::issuer_keys`]), the issuer exactly,
//! the audience, the expiry, `nbf` and `iat` within a small leeway, and a subject. A refusal is 401
//! with the `WWW-Authenticate` header that points to the protected-resource metadata (RFC 9728),
//! served at `/.well-known/oauth-protected-resource`.
//!
//! The JWT itself (its parts, the signature, the registered claims) is checked by `jsonwebtoken`;
//! what is kept here is the policy: which issuer and keys, and the rules that crate leaves open.

use std::time::{SystemTime, UNIX_EPOCH};

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use jsonwebtoken::errors::ErrorKind as JwtError;
use jsonwebtoken::{Algorithm, Validation};
use rewind_core::config::HttpAuth;
use rmcp::RoleServer;
use rmcp::service::RequestContext;
use serde_json::{Value, json};

use crate::issuer_keys::{IssuerKeys, KeyRefusal};
use crate::paths::{HTTP_PATH, METADATA_PATH};

/// Who a checked token is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// `sub`, and `preferred_username` or `name` when the token has one: who the journal names.
    pub person: rewind_core::Person,
    /// The realm's roles (`realm_access.roles`) and the token's scopes.
    pub roles: Vec<String>,
}

impl Caller {
    /// How refusals name the caller: their name, else their subject.
    pub fn who(&self) -> &str {
        self.person.name.as_deref().unwrap_or(&self.person.subject)
    }
}

/// Why a request was refused; said in `error_description`, never with the token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// No `Authorization: Bearer` header.
    #[error("no bearer token: sign in to the issuer and send its access token")]
    NoToken,
    /// More than one `Authorization` header: which one counts is not for the server to guess.
    #[error("the request has more than one Authorization header: send one bearer token")]
    TwoTokens,
    /// Not a token this server can read or verify.
    #[error("the token is not valid: {0}")]
    Invalid(String),
}

impl Refusal {
    /// The reason as a metric's label: `no_token`, `two_tokens`, `invalid`.
    pub fn reason(&self) -> &'static str {
        match self {
            Refusal::NoToken => "no_token",
            Refusal::TwoTokens => "two_tokens",
            Refusal::Invalid(_) => "invalid",
        }
    }
}

/// Checks bearer tokens by one `[http.auth]`.
#[derive(Debug, Clone)]
pub struct Verifier {
    auth: HttpAuth,
    keys: IssuerKeys,
    validation: Validation,
}

impl Verifier {
    /// A verifier of `auth`'s issuer; its keys are read once [`Verifier::keep_keys_fresh`] is
    /// called. Fails when `[http.auth] ca_cert` cannot be read.
    pub fn new(auth: HttpAuth) -> Result<Verifier, String> {
        let keys = IssuerKeys::new(&auth)?;
        let mut validation = Validation::new(Algorithm::RS256);
        validation.set_issuer(&[&auth.issuer]);
        validation.set_audience(&[&auth.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.leeway = auth.leeway.as_secs();
        validation.validate_nbf = true;
        Ok(Verifier {
            auth,
            keys,
            validation,
        })
    }

    /// The `[http.auth]` this verifier checks by.
    pub fn auth(&self) -> &HttpAuth {
        &self.auth
    }

    /// The HTTP client that reaches the issuer.
    pub fn issuer_http(&self) -> &reqwest::Client {
        self.keys.http()
    }

    /// Whether the issuer's keys are held (what a team server needs to be ready).
    pub fn keys_held(&self) -> bool {
        self.keys.held()
    }

    /// Reads the issuer's keys now and keeps them fresh in the background.
    pub fn keep_keys_fresh(&self) {
        self.keys.keep_fresh();
    }

    /// Checks `token`: signature, issuer, audience, times, subject.
    pub async fn check(&self, token: &str) -> Result<Caller, Refusal> {
        let invalid = |why: &str| Refusal::Invalid(why.to_owned());
        let header = jsonwebtoken::decode_header(token).map_err(|e| match e.kind() {
            JwtError::InvalidAlgorithmName | JwtError::UnsupportedAlgorithm => {
                invalid("only RS256 tokens are taken")
            }
            _ => invalid("it is not a JWT"),
        })?;
        if header.alg != Algorithm::RS256 {
            return Err(invalid("only RS256 tokens are taken"));
        }
        let kid = header
            .kid
            .ok_or_else(|| invalid("it names no signing key (kid)"))?;
        let key = self.keys.key(&kid).await.map_err(|refused| match refused {
            KeyRefusal::Unknown => invalid("it is signed by a key the issuer does not publish"),
            KeyRefusal::Unread(why) => Refusal::Invalid(format!(
                "the issuer's signing keys cannot be read ({why}), so no token can be checked; the server's administrator finds more in its log"
            )),
        })?;
        let claims = jsonwebtoken::decode::<Value>(token, &key, &self.validation)
            .map_err(|e| self.refusal(&e, token))?
            .claims;
        self.check_policy(&claims)?;
        Ok(caller_of(&claims))
    }

    /// A `jsonwebtoken` error as the sentence a caller reads.
    fn refusal(&self, error: &jsonwebtoken::errors::Error, token: &str) -> Refusal {
        let why = match error.kind() {
            JwtError::InvalidSignature => "its signature is not the issuer's".to_owned(),
            JwtError::ExpiredSignature => "it has expired: sign in again".to_owned(),
            JwtError::ImmatureSignature => "it is not valid yet".to_owned(),
            JwtError::InvalidAlgorithm => "only RS256 tokens are taken".to_owned(),
            JwtError::InvalidIssuer => {
                // Read only to say so: the signature was checked before the issuer.
                let named = jsonwebtoken::dangerous::insecure_decode_claims::<Value>(token)
                    .map(|c| c["iss"].clone())
                    .unwrap_or(Value::Null);
                format!(
                    "it was issued by {named}, not by {:?} (compared exactly)",
                    self.auth.issuer
                )
            }
            JwtError::InvalidAudience => {
                format!("it is not for the audience {:?}", self.auth.audience)
            }
            JwtError::MissingRequiredClaim(claim) if claim == "sub" => NO_SUBJECT.to_owned(),
            JwtError::MissingRequiredClaim(claim) => format!("it has no {claim} claim"),
            JwtError::InvalidClaimFormat(claim) => format!("its {claim} claim cannot be read"),
            _ => "it is not a JWT".to_owned(),
        };
        Refusal::Invalid(why)
    }

    /// What `jsonwebtoken` leaves open: one issuer, a subject that says who, and an `iat` not in
    /// the future.
    fn check_policy(&self, claims: &Value) -> Result<(), Refusal> {
        if !claims["iss"].is_string() {
            // RFC 7519 makes `iss` one StringOrURI; jsonwebtoken also takes a list that holds the
            // issuer, which no issuer writes and which would let a token name others beside it.
            return Err(Refusal::Invalid(
                "its iss claim is not one issuer (RFC 7519: a single StringOrURI)".to_owned(),
            ));
        }
        if claims["sub"].as_str().is_none_or(|s| s.trim().is_empty()) {
            // The subject is who the journal names and whose sessions and tasks these are: a
            // token without one would be no one, and share that no one's with every other such.
            return Err(Refusal::Invalid(NO_SUBJECT.to_owned()));
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let leeway = self.auth.leeway.as_secs();
        match &claims["iat"] {
            Value::Null => {}
            Value::Number(n) if n.as_u64().is_some_and(|iat| iat <= now + leeway) => {}
            Value::Number(_) => {
                return Err(Refusal::Invalid(
                    "it was issued in the future (iat): the issuer's clock or this server's is wrong".to_owned(),
                ));
            }
            _ => return Err(Refusal::Invalid("its iat claim cannot be read".to_owned())),
        }
        Ok(())
    }

    /// `GET /.well-known/oauth-protected-resource`: this resource and who issues its tokens.
    pub fn metadata(&self, resource: &str) -> Value {
        json!({
            "resource": resource,
            "authorization_servers": [self.auth.issuer],
            "bearer_methods_supported": ["header"],
            "resource_name": "Zerto AI Rewind (rewind-mcp)",
        })
    }
}

/// The signed-in caller of an MCP request over HTTP, if this is one: [`require_token`] put it in
/// the request.
pub fn caller(context: &RequestContext<RoleServer>) -> Option<&Caller> {
    context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Caller>())
}

/// Why a token without a subject is refused.
const NO_SUBJECT: &str = "it names no subject (sub); have the issuer put one in its access tokens";

fn caller_of(claims: &Value) -> Caller {
    let text = |key: &str| claims[key].as_str().map(str::to_owned);
    let mut roles: Vec<String> = claims["realm_access"]["roles"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r.as_str().map(str::to_owned))
        .collect();
    roles.extend(
        claims["scope"]
            .as_str()
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_owned),
    );
    Caller {
        person: rewind_core::Person {
            subject: text("sub").unwrap_or_default(),
            name: text("preferred_username").or_else(|| text("name")),
        },
        roles,
    }
}

/// The origin clients reach this server at: `[http.auth] resource`'s, when set (a server behind a
/// TLS proxy), else `http://` and the request's `Host`.
fn origin(verifier: &Verifier, request: &Request) -> String {
    if let Some(resource) = &verifier.auth.resource {
        return resource.origin().ascii_serialization();
    }
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost");
    format!("http://{host}")
}

/// The URL of this server's metadata.
fn metadata_url(verifier: &Verifier, request: &Request) -> String {
    format!("{}{METADATA_PATH}", origin(verifier, request))
}

/// 401 with the header the MCP specification asks for; 400 for a malformed request (RFC 6750 3.1).
fn refused(refusal: &Refusal, metadata: &str) -> Response {
    let mut challenge = format!("Bearer resource_metadata=\"{metadata}\"");
    let (status, error) = match refusal {
        Refusal::NoToken => (StatusCode::UNAUTHORIZED, None),
        Refusal::TwoTokens => (StatusCode::BAD_REQUEST, Some("invalid_request")),
        Refusal::Invalid(_) => (StatusCode::UNAUTHORIZED, Some("invalid_token")),
    };
    if let Some(error) = error {
        let why = match refusal {
            Refusal::Invalid(why) => why.clone(),
            other => other.to_string(),
        };
        challenge.push_str(&format!(
            ", error=\"{error}\", error_description=\"{}\"",
            why.replace('"', "'")
        ));
    }
    let mut response = (status, refusal.to_string()).into_response();
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// The check in front of `/mcp`: the caller goes to the handler as a request extension.
pub async fn require_token(
    State(verifier): State<Verifier>,
    mut request: Request,
    next: Next,
) -> Response {
    let mut given = request.headers().get_all(header::AUTHORIZATION).iter();
    let (first, second) = (given.next(), given.next());
    let token = first
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim().to_owned());
    let checked = match (token, second) {
        (_, Some(_)) => Err(Refusal::TwoTokens),
        (Some(token), None) => verifier.check(&token).await,
        (None, None) => Err(Refusal::NoToken),
    };
    match checked {
        Ok(caller) => {
            request.extensions_mut().insert(caller);
            next.run(request).await
        }
        Err(refusal) => {
            crate::metrics::server().sign_in_refused(refusal.reason());
            refused(&refusal, &metadata_url(&verifier, &request))
        }
    }
}

/// `GET /.well-known/oauth-protected-resource` (and under `/mcp`, as RFC 9728 also allows).
pub async fn metadata(State(verifier): State<Verifier>, request: Request) -> Response {
    let resource = match &verifier.auth.resource {
        Some(resource) => resource.to_string(),
        None => format!("{}{}", origin(&verifier, &request), HTTP_PATH),
    };
    axum::Json(verifier.metadata(&resource)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn verifier() -> Verifier {
        Verifier::new(HttpAuth {
            issuer: "https://zvm.example.com/auth/realms/zerto".to_owned(),
            audience: "rewind-mcp".to_owned(),
            leeway: Duration::from_secs(60),
            roles: Default::default(),
            resource: None,
            ca_cert: None,
            jwks_uri: None,
            jwks_max_age: Duration::from_secs(300),
            ui: None,
        })
        .unwrap()
    }

    fn now() -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs()
    }

    fn claims() -> Value {
        json!({
            "iss": "https://zvm.example.com/auth/realms/zerto",
            "aud": ["rewind-mcp", "account"],
            "exp": now() + 300,
            "iat": now(),
            "sub": "4f1c",
        })
    }

    #[test]
    fn a_token_that_names_no_subject_is_refused_since_no_one_would_stand_behind_its_records() {
        let v = verifier();
        assert_eq!(v.check_policy(&claims()), Ok(()));
        for sub in [Value::Null, json!(""), json!("  ")] {
            let mut c = claims();
            c["sub"] = sub;
            let refused = v.check_policy(&c).unwrap_err();
            assert!(refused.to_string().contains("no subject"), "{refused}");
        }
    }

    #[test]
    fn a_token_whose_issuer_is_a_list_holding_the_issuer_is_refused() {
        let v = verifier();
        let mut c = claims();
        c["iss"] = json!([
            "https://zvm.example.com/auth/realms/zerto",
            "https://evil.example.com"
        ]);
        let refused = v.check_policy(&c).unwrap_err();
        assert!(refused.to_string().contains("not one issuer"), "{refused}");
        c["iss"] = json!(["https://zvm.example.com/auth/realms/zerto"]);
        assert!(v.check_policy(&c).is_err(), "a list of one is a list too");
    }

    #[test]
    fn a_token_issued_in_the_future_beyond_the_leeway_is_refused() {
        let v = verifier();
        let mut c = claims();
        c["iat"] = json!(now() + 30);
        assert_eq!(v.check_policy(&c), Ok(()), "within the leeway");
        c["iat"] = json!(now() + 3600);
        let refused = v.check_policy(&c).unwrap_err();
        assert!(refused.to_string().contains("future"), "{refused}");
    }
}
