//! `POST /auth/realms/zerto/protocol/openid-connect/token`: Keycloak's token endpoint, with
//! Keycloak's success and error bodies. Form fields are case-sensitive, as Keycloak's are.

use axum::Json;
use axum::extract::{FromRequest, Path, Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::decisions::{REALM, TOKEN_SCOPE};
use crate::http::error::bounded;
use crate::http::{BaseUrl, SiteCtx};
use crate::realm;
use crate::world::auth::{Grant, GrantError, Issued};
use crate::world::clock::SimTime;

/// A Keycloak error: its status and `{"error", "error_description"}`.
struct KeycloakError {
    status: StatusCode,
    error: &'static str,
    description: String,
}

impl KeycloakError {
    fn new(status: StatusCode, error: &'static str, description: impl Into<String>) -> Self {
        Self {
            status,
            error,
            description: description.into(),
        }
    }
}

impl IntoResponse for KeycloakError {
    fn into_response(self) -> Response {
        (
            self.status,
            Json(json!({ "error": self.error, "error_description": bounded(&self.description) })),
        )
            .into_response()
    }
}

/// The token endpoint.
pub(crate) async fn token(
    State(ctx): State<SiteCtx>,
    Path(realm): Path<String>,
    base: BaseUrl,
    request: Request,
) -> Response {
    if let Err(missing) = known_realm(&realm) {
        return missing.into_response();
    }
    let form = Form::read(request).await;
    let grant = match form.grant() {
        Ok(grant) => grant,
        Err(refused) => return refused.into_response(),
    };
    let issued = ctx.with_world(|world, now| {
        let site = ctx.site;
        let (auth, rng) = world.auth_and_rng();
        auth.grant(site, grant, now, rng)
    });
    let issued = match issued {
        Ok(issued) => issued,
        Err(error) => return grant_refused(error).into_response(),
    };
    let scope = if form.asks_openid() {
        OPENID_SCOPE
    } else {
        TOKEN_SCOPE
    };
    let now = ctx.with_world(|_, now| now);
    match signed(&ctx, &issued, &form, &base.0, now, scope) {
        Ok((access, id_token)) => token_response(issued, access, scope, id_token),
        Err(error) => KeycloakError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            format!("{error}; start the simulator again."),
        )
        .into_response(),
    }
}

/// The access token, signed, and with `openid` the ID token that names it.
fn signed(
    ctx: &SiteCtx,
    issued: &Issued,
    form: &Form,
    base: &str,
    now: SimTime,
    scope: &str,
) -> Result<(String, Option<String>), realm::SigningError> {
    let key = ctx.shared.realm().signing()?;
    let access = key.sign(&access_claims(issued, form, base, now, scope))?;
    let id_token = match form.asks_openid() {
        true => Some(key.sign(&id_claims(issued, &access, form, base, now))?),
        false => None,
    };
    Ok((access, id_token))
}

/// The claims of an access token, as Keycloak writes them; its `jti` is what the site keeps it by.
fn access_claims(issued: &Issued, form: &Form, base: &str, now: SimTime, scope: &str) -> Value {
    let mut claims = common_claims(issued, form, base, now);
    claims["jti"] = json!(issued.access_token);
    claims["typ"] = json!("Bearer");
    // One audience is a string, several an array, as Keycloak writes them.
    claims["aud"] = match issued.audiences.as_slice() {
        [] => json!("account"),
        more => json!(
            more.iter()
                .map(String::as_str)
                .chain(["account"])
                .collect::<Vec<_>>()
        ),
    };
    claims["scope"] = json!(scope);
    let mut roles = vec!["default-roles-zerto", issued.principal.role.name()];
    roles.extend(issued.principal.realm_roles.iter().map(String::as_str));
    claims["realm_access"] = json!({ "roles": roles });
    claims
}

/// What an access token and an ID token both say: who, for which client, from when to when.
fn common_claims(issued: &Issued, form: &Form, base: &str, now: SimTime) -> Value {
    let seconds = now.millis().div_euclid(1000);
    let client = form.field("client_id").unwrap_or_default();
    let name = &issued.principal.name;
    let mut claims = json!({
        "exp": seconds + i64::try_from(issued.expires_in).unwrap_or(i64::MAX),
        "iat": seconds,
        "iss": realm::issuer(base),
        "sub": uuid_of(&format!("{REALM}/{name}")),
        "azp": client,
        "acr": "1",
        "email_verified": false,
        "preferred_username": name,
    });
    if let Some(session) = &issued.session_state {
        claims["session_state"] = json!(session);
        claims["sid"] = json!(session);
    }
    claims
}

/// The scopes Keycloak answers when `openid` is asked for: the client's default scopes with it.
const OPENID_SCOPE: &str = "openid profile email";

/// The claims of an ID token, as Keycloak writes them, naming the access token it came with.
fn id_claims(issued: &Issued, access: &str, form: &Form, base: &str, now: SimTime) -> Value {
    let mut claims = common_claims(issued, form, base, now);
    let client = form.field("client_id").unwrap_or_default();
    claims["jti"] = json!(uuid_of(&format!("id/{}", issued.access_token)));
    claims["typ"] = json!("ID");
    claims["aud"] = json!(client);
    claims["auth_time"] = claims["iat"].clone();
    claims["at_hash"] = json!(realm::at_hash(access));
    claims
}

/// A UUID drawn from `text`, as Keycloak's identifiers look: a user's `sub` is the same for its
/// name in every run, and a token's `jti` costs no draw from the seed's streams.
fn uuid_of(text: &str) -> String {
    let high = crate::decisions::fnv1a(text);
    let low = crate::decisions::fnv1a(&format!("{text}/{REALM}"));
    uuid::Uuid::from_u64_pair(high, low).to_string()
}

/// `GET /auth/realms/{realm}/protocol/openid-connect/certs`: the realm's JWKS.
pub(crate) async fn certs(State(ctx): State<SiteCtx>, Path(realm): Path<String>) -> Response {
    if let Err(missing) = known_realm(&realm) {
        return missing.into_response();
    }
    match ctx.shared.realm().jwks() {
        Ok(jwks) => Json(jwks).into_response(),
        Err(error) => KeycloakError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            format!("{error}; start the simulator again."),
        )
        .into_response(),
    }
}

/// `GET /auth/realms/{realm}/.well-known/openid-configuration`.
pub(crate) async fn openid_configuration(
    State(ctx): State<SiteCtx>,
    Path(realm): Path<String>,
    base: BaseUrl,
) -> Response {
    match known_realm(&realm) {
        Ok(()) => Json(ctx.shared.realm().openid_configuration(&base.0)).into_response(),
        Err(missing) => missing.into_response(),
    }
}

fn known_realm(realm: &str) -> Result<(), KeycloakError> {
    if realm == REALM {
        Ok(())
    } else {
        Err(KeycloakError::new(
            StatusCode::NOT_FOUND,
            "Realm does not exist",
            format!("There is no realm '{realm}'; a ZVM's realm is '{REALM}'."),
        ))
    }
}

/// A token request's form fields, in the order they came.
struct Form(Vec<(String, String)>);

impl Form {
    async fn read(request: Request) -> Form {
        // Keycloak reads only form bodies; anything else looks like a request without parameters.
        let pairs = axum::Form::<Vec<(String, String)>>::from_request(request, &())
            .await
            .map(|axum::Form(pairs)| pairs)
            .unwrap_or_default();
        Form(pairs)
    }

    /// The first value of the field `name`.
    fn field(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The grant the form asks for, or Keycloak's answer to a form that asks for none.
    fn grant(&self) -> Result<Grant<'_>, KeycloakError> {
        let Some(grant_type) = self.field("grant_type") else {
            return Err(KeycloakError::new(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "Missing form parameter: grant_type",
            ));
        };
        let Some(client_id) = self.field("client_id") else {
            return Err(KeycloakError::new(
                StatusCode::UNAUTHORIZED,
                "invalid_client",
                "Missing parameter: client_id",
            ));
        };
        match grant_type {
            "password" => {
                let username = self.required("username")?;
                let password = self.required("password")?;
                Ok(Grant::Password {
                    client_id,
                    username,
                    password,
                })
            }
            "client_credentials" => Ok(Grant::ClientCredentials {
                client_id,
                client_secret: self.field("client_secret").unwrap_or(""),
            }),
            "refresh_token" => Ok(Grant::Refresh {
                client_id,
                refresh_token: self.required("refresh_token")?,
            }),
            "authorization_code" => Ok(Grant::AuthorizationCode {
                client_id,
                code: self.required("code")?,
                redirect_uri: self.required("redirect_uri")?,
                code_verifier: self.required("code_verifier")?,
            }),
            _ => Err(KeycloakError::new(
                StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                "Unsupported grant_type",
            )),
        }
    }

    /// The field `name`, which the grant cannot do without.
    /// Whether the request's `scope` asks for OpenID Connect (an `id_token`).
    fn asks_openid(&self) -> bool {
        self.field("scope")
            .is_some_and(|scope| scope.split(' ').any(|s| s == "openid"))
    }

    fn required(&self, name: &str) -> Result<&str, KeycloakError> {
        self.field(name).ok_or_else(|| {
            KeycloakError::new(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                format!("Missing parameter: {name}"),
            )
        })
    }
}

/// Keycloak's success body, which a client must not cache.
fn token_response(
    issued: Issued,
    access: String,
    scope: &str,
    id_token: Option<String>,
) -> Response {
    let mut body = json!({
        "access_token": access,
        "expires_in": issued.expires_in,
        "refresh_expires_in": issued.refresh.as_ref().map_or(0, |(_, s)| *s),
        "token_type": "Bearer",
        "not-before-policy": 0,
        "scope": scope,
    });
    if let Some(id_token) = id_token {
        body["id_token"] = json!(id_token);
    }
    if let Some((refresh_token, _)) = issued.refresh {
        body["refresh_token"] = json!(refresh_token);
    }
    if let Some(session_state) = issued.session_state {
        body["session_state"] = json!(session_state);
    }
    (
        [
            (header::CACHE_CONTROL, "no-store"),
            (header::PRAGMA, "no-cache"),
        ],
        Json(body),
    )
        .into_response()
}

/// A refused grant, in Keycloak's words and status codes.
fn grant_refused(error: GrantError) -> KeycloakError {
    match error {
        GrantError::InvalidClient => KeycloakError::new(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "Invalid client or Invalid client credentials",
        ),
        GrantError::InvalidGrant {
            description,
            unauthorized,
        } => KeycloakError::new(
            if unauthorized {
                StatusCode::UNAUTHORIZED
            } else {
                StatusCode::BAD_REQUEST
            },
            "invalid_grant",
            description,
        ),
        GrantError::UnauthorizedClient(description) => {
            KeycloakError::new(StatusCode::BAD_REQUEST, "unauthorized_client", description)
        }
    }
}
