//! `POST /auth/realms/zerto/protocol/openid-connect/token`: Keycloak's token endpoint, with
//! Keycloak's success and error bodies. Form fields are case-sensitive, as Keycloak's are.

use axum::Json;
use axum::extract::{FromRequest, Path, Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::api::SiteCtx;
use crate::api::error::bounded;
use crate::decisions::{REALM, TOKEN_SCOPE};
use crate::world::auth::{Grant, GrantError, Issued};

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
    request: Request,
) -> Response {
    if realm != REALM {
        return KeycloakError::new(
            StatusCode::NOT_FOUND,
            "Realm does not exist",
            format!("There is no realm '{realm}'; a ZVM's realm is '{REALM}'."),
        )
        .into_response();
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
    match issued {
        Ok(issued) => token_response(issued),
        Err(error) => grant_refused(error).into_response(),
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
            _ => Err(KeycloakError::new(
                StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                "Unsupported grant_type",
            )),
        }
    }

    /// The field `name`, which the grant cannot do without.
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
fn token_response(issued: Issued) -> Response {
    let mut body = json!({
        "access_token": issued.access_token,
        "expires_in": issued.expires_in,
        "refresh_expires_in": issued.refresh.as_ref().map_or(0, |(_, s)| *s),
        "token_type": "Bearer",
        "not-before-policy": 0,
        "scope": TOKEN_SCOPE,
    });
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
