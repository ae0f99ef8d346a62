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
use crate::world::auth::{Grant, GrantError};

/// A Keycloak error: `{"error", "error_description"}`.
fn keycloak_error(status: StatusCode, error: &str, description: &str) -> Response {
    (
        status,
        Json(json!({ "error": error, "error_description": bounded(description) })),
    )
        .into_response()
}

/// The token endpoint.
pub(crate) async fn token(
    State(ctx): State<SiteCtx>,
    Path(realm): Path<String>,
    request: Request,
) -> Response {
    if realm != REALM {
        return (
            StatusCode::NOT_FOUND,
            Json(json!({
                "error": "Realm does not exist",
                "error_description": bounded(&format!("There is no realm '{realm}'; a ZVM's realm is '{REALM}'.")),
            })),
        )
            .into_response();
    }
    // Keycloak reads only form bodies; anything else looks like a request without parameters.
    let form = axum::Form::<Vec<(String, String)>>::from_request(request, &())
        .await
        .map(|axum::Form(pairs)| pairs)
        .unwrap_or_default();
    let field = |name: &str| {
        form.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };

    let Some(grant_type) = field("grant_type") else {
        return keycloak_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "Missing form parameter: grant_type",
        );
    };
    let Some(client_id) = field("client_id") else {
        return keycloak_error(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "Missing parameter: client_id",
        );
    };
    let missing = |name: &str| {
        keycloak_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            &format!("Missing parameter: {name}"),
        )
    };
    let grant = match grant_type {
        "password" => {
            let (Some(username), Some(password)) = (field("username"), field("password")) else {
                return missing(if field("username").is_none() {
                    "username"
                } else {
                    "password"
                });
            };
            Grant::Password {
                client_id,
                username,
                password,
            }
        }
        "client_credentials" => Grant::ClientCredentials {
            client_id,
            client_secret: field("client_secret").unwrap_or(""),
        },
        "refresh_token" => {
            let Some(refresh_token) = field("refresh_token") else {
                return missing("refresh_token");
            };
            Grant::Refresh {
                client_id,
                refresh_token,
            }
        }
        _ => {
            return keycloak_error(
                StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                "Unsupported grant_type",
            );
        }
    };

    let issued = ctx.with_world(|world, now| {
        let site = ctx.site;
        let (auth, rng) = world.auth_and_rng();
        auth.grant(site, grant, now, rng)
    });
    match issued {
        Ok(issued) => {
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
        Err(GrantError::InvalidClient) => keycloak_error(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "Invalid client or Invalid client credentials",
        ),
        Err(GrantError::InvalidGrant {
            description,
            unauthorized,
        }) => keycloak_error(
            if unauthorized {
                StatusCode::UNAUTHORIZED
            } else {
                StatusCode::BAD_REQUEST
            },
            "invalid_grant",
            description,
        ),
        Err(GrantError::UnauthorizedClient(description)) => {
            keycloak_error(StatusCode::BAD_REQUEST, "unauthorized_client", description)
        }
    }
}
