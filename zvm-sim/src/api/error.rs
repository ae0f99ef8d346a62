//! Errors of the `/v1` and `/_sim` APIs, shaped as the ZVM shapes them (`zvm-api.md` §9): a
//! `{"Message": ...}` body, except 401, which has an empty body and a `WWW-Authenticate` header.

use axum::Json;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

/// A refused request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ApiError {
    /// 400: a malformed body, query or enum value.
    BadRequest(String),
    /// 401: a missing, expired, revoked or malformed bearer token.
    Unauthorized,
    /// 403: not allowed (a role that may not do it; the control API from a non-loopback address).
    Forbidden(String),
    /// 404: an unknown identifier or path.
    NotFound(String),
    /// 409: a state conflict (a failover test already running, an FLR session still mounting, an
    /// ambiguous name in the control API).
    Conflict(String),
    /// 415: a body that is not JSON.
    UnsupportedMediaType(String),
    /// 500: the simulator failed; the message says what to do.
    Internal(String),
}

impl From<crate::world::Refusal> for ApiError {
    fn from(refusal: crate::world::Refusal) -> Self {
        use crate::world::Refusal;
        match refusal {
            Refusal::BadRequest(m) => ApiError::BadRequest(m),
            Refusal::NotFound(m) => ApiError::NotFound(m),
            Refusal::Conflict(m) => ApiError::Conflict(m),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, message) = match self {
            ApiError::Unauthorized => {
                return (
                    StatusCode::UNAUTHORIZED,
                    [(header::WWW_AUTHENTICATE, "Bearer error=\"invalid_token\"")],
                )
                    .into_response();
            }
            ApiError::BadRequest(m) => (StatusCode::BAD_REQUEST, m),
            ApiError::Forbidden(m) => (StatusCode::FORBIDDEN, m),
            ApiError::NotFound(m) => (StatusCode::NOT_FOUND, m),
            ApiError::Conflict(m) => (StatusCode::CONFLICT, m),
            ApiError::UnsupportedMediaType(m) => (StatusCode::UNSUPPORTED_MEDIA_TYPE, m),
            ApiError::Internal(m) => (StatusCode::INTERNAL_SERVER_ERROR, m),
        };
        (status, Json(serde_json::json!({ "Message": message }))).into_response()
    }
}
