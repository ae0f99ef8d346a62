//! Sign-in over HTTP (`[http.auth]`): rewind-mcp as an OAuth 2.1 resource server, as the MCP
//! specification asks. Every request to `/mcp` carries a bearer token that the server checks
//! itself: an RS256 signature by a key of the issuer's JWKS (found through its OpenID
//! configuration, and read again when a token names a key it does not know), the issuer, the
//! audience, and the expiry within a small leeway. A refusal is 401 with the `WWW-Authenticate`
//! header that points to the protected-resource metadata (RFC 9728), served at
//! `/.well-known/oauth-protected-resource`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use aws_lc_rs::signature::{RSA_PKCS1_2048_8192_SHA256, RsaPublicKeyComponents};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rewind_core::config::HttpAuth;
use serde_json::{Value, json};
use tokio::sync::Mutex;

/// The path of the protected-resource metadata.
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// The least time between two reads of the JWKS for an unknown key id, so that tokens naming keys
/// nobody has cannot make the server hammer the issuer.
const JWKS_REREAD: Duration = Duration::from_secs(30);

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

/// Why a token was refused; said in `error_description`, never with the token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// No `Authorization: Bearer` header.
    #[error("no bearer token: sign in to the issuer and send its access token")]
    NoToken,
    /// Not a token this server can read or verify.
    #[error("the token is not valid: {0}")]
    Invalid(String),
}

/// The issuer's keys, by `kid`, and when they were last read.
#[derive(Debug, Default)]
struct Keys {
    by_id: HashMap<String, (Vec<u8>, Vec<u8>)>,
    read_at: Option<Instant>,
}

/// Checks bearer tokens by one `[http.auth]`.
#[derive(Debug, Clone)]
pub struct Verifier {
    auth: HttpAuth,
    http: reqwest::Client,
    keys: Arc<Mutex<Keys>>,
}

impl Verifier {
    /// A verifier of `auth`'s issuer; nothing is read yet.
    pub fn new(auth: HttpAuth) -> Verifier {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .unwrap_or_default();
        Verifier {
            auth,
            http,
            keys: Arc::new(Mutex::new(Keys::default())),
        }
    }

    /// The issuer's URL as tokens name it (no trailing slash).
    fn issuer(&self) -> String {
        self.auth.issuer.as_str().trim_end_matches('/').to_owned()
    }

    /// Checks `token`: signature, issuer, audience, expiry.
    pub async fn check(&self, token: &str) -> Result<Caller, Refusal> {
        let invalid = |why: &str| Refusal::Invalid(why.to_owned());
        let parts: Vec<&str> = token.split('.').collect();
        let [head, body, signature] = parts[..] else {
            return Err(invalid("it is not a JWT"));
        };
        let decode = |part: &str| {
            URL_SAFE_NO_PAD
                .decode(part)
                .map_err(|_| invalid("it is not base64url"))
        };
        let header: Value = serde_json::from_slice(&decode(head)?)
            .map_err(|_| invalid("its header is not JSON"))?;
        if header["alg"] != "RS256" {
            return Err(invalid("only RS256 tokens are taken"));
        }
        let kid = header["kid"].as_str().unwrap_or_default();
        let (n, e) = self.key(kid).await?;
        RsaPublicKeyComponents { n, e }
            .verify(
                &RSA_PKCS1_2048_8192_SHA256,
                format!("{head}.{body}").as_bytes(),
                &decode(signature)?,
            )
            .map_err(|_| invalid("its signature is not the issuer's"))?;
        let claims: Value = serde_json::from_slice(&decode(body)?)
            .map_err(|_| invalid("its claims are not JSON"))?;
        self.check_claims(&claims)?;
        Ok(caller(&claims))
    }

    fn check_claims(&self, claims: &Value) -> Result<(), Refusal> {
        let invalid = |why: String| Refusal::Invalid(why);
        if claims["iss"].as_str().map(|i| i.trim_end_matches('/')) != Some(self.issuer().as_str()) {
            return Err(invalid(format!(
                "it was issued by {}, not by {}",
                claims["iss"],
                self.issuer()
            )));
        }
        let audience = &self.auth.audience;
        let names_audience = match &claims["aud"] {
            Value::String(a) => a == audience,
            Value::Array(all) => all.iter().any(|a| a == audience.as_str()),
            _ => false,
        };
        if !names_audience {
            return Err(invalid(format!("it is not for the audience {audience:?}")));
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs() as i64;
        let leeway = self.auth.leeway.as_secs() as i64;
        let exp = claims["exp"]
            .as_i64()
            .ok_or_else(|| invalid("it has no expiry".to_owned()))?;
        if claims["sub"].as_str().is_none_or(|s| s.trim().is_empty()) {
            // The subject is who the journal names and whose tasks these are: a token without one
            // would be no one, and share that no one's tasks with every other such token.
            return Err(invalid(
                "it names no subject (sub); have the issuer put one in its access tokens"
                    .to_owned(),
            ));
        }
        if now > exp + leeway {
            return Err(invalid("it has expired: sign in again".to_owned()));
        }
        if claims["nbf"].as_i64().is_some_and(|nbf| now + leeway < nbf) {
            return Err(invalid("it is not valid yet".to_owned()));
        }
        Ok(())
    }

    /// The key `kid` of the issuer, reading its JWKS when the key is not known (at most every
    /// [`JWKS_REREAD`]).
    async fn key(&self, kid: &str) -> Result<(Vec<u8>, Vec<u8>), Refusal> {
        let mut keys = self.keys.lock().await;
        if let Some(key) = keys.by_id.get(kid) {
            return Ok(key.clone());
        }
        if keys.read_at.is_none_or(|at| at.elapsed() >= JWKS_REREAD) {
            keys.read_at = Some(Instant::now());
            match self.read_jwks().await {
                Ok(read) => keys.by_id = read,
                Err(why) => tracing::warn!("cannot read the JWKS of {}: {why}", self.issuer()),
            }
        }
        keys.by_id.get(kid).cloned().ok_or_else(|| {
            Refusal::Invalid("it is signed by a key the issuer does not publish".to_owned())
        })
    }

    /// The issuer's RSA keys: its OpenID configuration names its JWKS.
    async fn read_jwks(&self) -> Result<HashMap<String, (Vec<u8>, Vec<u8>)>, String> {
        let get = |url: String| async move {
            let answer = self
                .http
                .get(&url)
                .send()
                .await
                .map_err(|e| e.to_string())?;
            answer
                .error_for_status()
                .map_err(|e| e.to_string())?
                .json::<Value>()
                .await
                .map_err(|e| e.to_string())
        };
        let config = get(format!(
            "{}/.well-known/openid-configuration",
            self.issuer()
        ))
        .await?;
        let jwks_uri = config["jwks_uri"]
            .as_str()
            .ok_or("the OpenID configuration names no jwks_uri")?;
        let jwks = get(jwks_uri.to_owned()).await?;
        let decode = |v: &Value| v.as_str().and_then(|s| URL_SAFE_NO_PAD.decode(s).ok());
        Ok(jwks["keys"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|k| k["kty"] == "RSA")
            .filter_map(|k| {
                Some((
                    k["kid"].as_str()?.to_owned(),
                    (decode(&k["n"])?, decode(&k["e"])?),
                ))
            })
            .collect())
    }

    /// `GET /.well-known/oauth-protected-resource`: this resource and who issues its tokens.
    pub fn metadata(&self, resource: &str) -> Value {
        json!({
            "resource": resource,
            "authorization_servers": [self.issuer()],
            "bearer_methods_supported": ["header"],
            "resource_name": "Zerto AI Rewind (rewind-mcp)",
        })
    }
}

fn caller(claims: &Value) -> Caller {
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

/// 401 with the header the MCP specification asks for.
fn refused(refusal: &Refusal, metadata: &str) -> Response {
    let mut challenge = format!("Bearer resource_metadata=\"{metadata}\"");
    if let Refusal::Invalid(why) = refusal {
        challenge.push_str(&format!(
            ", error=\"invalid_token\", error_description=\"{}\"",
            why.replace('"', "'")
        ));
    }
    let mut response = (StatusCode::UNAUTHORIZED, refusal.to_string()).into_response();
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
    let token = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim().to_owned());
    let checked = match token {
        Some(token) => verifier.check(&token).await,
        None => Err(Refusal::NoToken),
    };
    match checked {
        Ok(caller) => {
            request.extensions_mut().insert(caller);
            next.run(request).await
        }
        Err(refusal) => refused(&refusal, &metadata_url(&verifier, &request)),
    }
}

/// `GET /.well-known/oauth-protected-resource` (and under `/mcp`, as RFC 9728 also allows).
pub async fn metadata(State(verifier): State<Verifier>, request: Request) -> Response {
    let resource = match &verifier.auth.resource {
        Some(resource) => resource.to_string(),
        None => format!("{}{}", origin(&verifier, &request), crate::HTTP_PATH),
    };
    axum::Json(verifier.metadata(&resource)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verifier() -> Verifier {
        Verifier::new(HttpAuth {
            issuer: "https://zvm.example.com/auth/realms/zerto".parse().unwrap(),
            audience: "rewind-mcp".to_owned(),
            leeway: Duration::from_secs(60),
            roles: Default::default(),
            resource: None,
        })
    }

    fn claims() -> Value {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        json!({
            "iss": "https://zvm.example.com/auth/realms/zerto",
            "aud": ["rewind-mcp", "account"],
            "exp": now + 300,
            "sub": "4f1c",
        })
    }

    #[test]
    fn a_token_that_names_no_subject_is_refused_since_no_one_would_stand_behind_its_records() {
        let v = verifier();
        assert_eq!(v.check_claims(&claims()), Ok(()));
        for sub in [Value::Null, json!(""), json!("  ")] {
            let mut c = claims();
            c["sub"] = sub;
            let refused = v.check_claims(&c).unwrap_err();
            assert!(refused.to_string().contains("no subject"), "{refused}");
        }
    }
}
