//! Errors of the `/v1` and `/_sim` APIs, shaped as the ZVM shapes them (`zvm-api.md` §9): a
//! `{"Message": ...}` body, except 401, which has an empty body and a `WWW-Authenticate` header.
//!
//! Messages name what was wrong, often by echoing it (a path, a name, a JSON value from the request);
//! [`bounded`] cuts every message on its way out, so a megabyte sent is never a megabyte answered.

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
    /// 408: a body that did not arrive in whole within the deadline.
    RequestTimeout(String),
    /// 413: a body larger than any the ZVM API takes.
    PayloadTooLarge(String),
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

/// The longest run of characters without white space or quotes that an error message keeps whole:
/// longer than any identifier, name or guest path a test sends, far shorter than a value sent to break
/// something.
pub(crate) const ECHO_MAX: usize = 200;

/// The longest error message, in characters, should many echoed words add up.
pub(crate) const MESSAGE_MAX: usize = 2_000;

/// `message` with every run of more than [`ECHO_MAX`] characters without white space or quotes cut to
/// its first [`ECHO_MAX`], then the whole cut to [`MESSAGE_MAX`]; each cut ends with an ellipsis and
/// the length it had (`'/v1/xxx… (1000000 characters)'`), so the answer still says what was sent and
/// why it was refused. A message within both bounds is returned as it is.
pub(crate) fn bounded(message: &str) -> String {
    let cut = |text: &str, keep: usize| {
        let length = text.chars().count();
        let head: String = text.chars().take(keep).collect();
        format!("{head}… ({length} characters)")
    };
    // Quotes end a word too, so the length given is the echoed value's, without its quotes.
    let between = |c: char| c.is_whitespace() || matches!(c, '\'' | '"' | '`');
    let mut out = String::with_capacity(message.len().min(MESSAGE_MAX * 4));
    let mut rest = message;
    while !rest.is_empty() {
        let (word, after) = rest.split_at(rest.find(between).unwrap_or(rest.len()));
        if word.chars().nth(ECHO_MAX).is_some() {
            out.push_str(&cut(word, ECHO_MAX));
        } else {
            out.push_str(word);
        }
        let (gap, next) = after.split_at(after.find(|c| !between(c)).unwrap_or(after.len()));
        out.push_str(gap);
        rest = next;
    }
    if out.chars().nth(MESSAGE_MAX).is_some() {
        out = cut(&out, MESSAGE_MAX);
    }
    out
}

impl ApiError {
    /// The message a person reads (bounded, as the answer's).
    pub(crate) fn message(&self) -> String {
        let message = match self {
            ApiError::Unauthorized => "Sign in again.",
            ApiError::BadRequest(m)
            | ApiError::Forbidden(m)
            | ApiError::NotFound(m)
            | ApiError::Conflict(m)
            | ApiError::RequestTimeout(m)
            | ApiError::PayloadTooLarge(m)
            | ApiError::UnsupportedMediaType(m)
            | ApiError::Internal(m) => m,
        };
        bounded(message)
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
            ApiError::RequestTimeout(m) => (StatusCode::REQUEST_TIMEOUT, m),
            ApiError::PayloadTooLarge(m) => (StatusCode::PAYLOAD_TOO_LARGE, m),
            ApiError::UnsupportedMediaType(m) => (StatusCode::UNSUPPORTED_MEDIA_TYPE, m),
            ApiError::Internal(m) => (StatusCode::INTERNAL_SERVER_ERROR, m),
        };
        (
            status,
            Json(serde_json::json!({ "Message": bounded(&message) })),
        )
            .into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_within_the_bounds_is_kept_as_it_is() {
        let message = "Action 'Explode' is not a fault:\n use  Respond, Latency, LoseResponse or RevokeTokens.";
        assert_eq!(bounded(message), message);
        assert_eq!(bounded(""), "");
    }

    #[test]
    fn an_overlong_echo_is_cut_with_an_ellipsis_and_its_length_and_the_advice_stays() {
        let path = format!("/v1/{}", "x".repeat(1_000_000));
        let message = format!("'{path}' is not a path pattern: start it with '/'");
        let out = bounded(&message);
        let head: String = path.chars().take(ECHO_MAX).collect();
        assert_eq!(
            out,
            format!("'{head}… (1000004 characters)' is not a path pattern: start it with '/'")
        );
    }

    #[test]
    fn many_words_are_cut_to_the_longest_message() {
        let message = "word ".repeat(100_000);
        let out = bounded(&message);
        assert!(
            out.ends_with("… (500000 characters)"),
            "{}",
            &out[out.len() - 40..]
        );
        assert!(out.chars().count() < MESSAGE_MAX + 30);
    }

    #[test]
    fn a_cut_never_splits_a_character() {
        let out = bounded(&"é".repeat(ECHO_MAX + 1));
        assert_eq!(
            out,
            format!("{}… ({} characters)", "é".repeat(ECHO_MAX), ECHO_MAX + 1)
        );
    }
}
