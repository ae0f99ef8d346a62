//! The fault layer: between the call log and routing, it asks the fault rules what to do with
//! each request (`/_sim` calls excepted) and does it. The call log, outside it, records the status
//! the client saw and the rules that fired.
//!
//! Losing a response takes two layers. This one lets the handler run (its effect stays), drops the
//! response and marks it [`LoseConnection`]; [`close_lost_connections`], outside the call log,
//! then closes the connection through axum-server's `ConnectionShutdown` and never answers, so the
//! client sees the connection closed before a response: a transport error, not a clean answer.

use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::api::call_log::StartedTask;
use crate::api::{ApiError, SiteCtx};
use crate::faults::{FaultAction, FaultNote};

/// The rules that fired on a request, for the call log.
#[derive(Debug, Clone)]
pub(crate) struct FaultsApplied(pub Vec<FaultNote>);

/// Marks a response that must never reach the client.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LoseConnection;

/// Applies the fault rules to one request.
pub(crate) async fn apply(State(ctx): State<SiteCtx>, request: Request, next: Next) -> Response {
    let path = request.uri().path().to_owned();
    if crate::api::is_control_path(&path) {
        return next.run(request).await;
    }
    let method = request.method().to_string();
    let query = request.uri().query().map(str::to_owned);
    let decision = {
        let mut world = ctx.shared.lock();
        let decision = world
            .faults
            .decide(ctx.site, &method, &path, query.as_deref());
        if decision.action == Some(FaultAction::RevokeTokens) {
            world.auth.revoke_all(ctx.site);
        }
        decision
    };
    if decision.notes.is_empty() {
        return next.run(request).await;
    }
    if decision.latency_ms > 0 {
        tokio::time::sleep(Duration::from_millis(decision.latency_ms)).await;
    }
    let mut response = match decision.action {
        Some(FaultAction::Respond {
            status,
            body,
            headers,
        }) => injected(status, body, &headers),
        Some(FaultAction::LoseResponse) => {
            let answered = next.run(request).await;
            let mut lost = Response::new(Body::empty());
            *lost.status_mut() = answered.status();
            if let Some(task) = answered.extensions().get::<StartedTask>() {
                lost.extensions_mut().insert(task.clone());
            }
            lost.extensions_mut().insert(LoseConnection);
            lost
        }
        Some(FaultAction::Latency { .. } | FaultAction::RevokeTokens) | None => {
            next.run(request).await
        }
    };
    response
        .extensions_mut()
        .insert(FaultsApplied(decision.notes));
    response
}

/// The answer of a `Respond` rule: its body, or the ZVM's answer for that status.
fn injected(
    status: u16,
    body: Option<serde_json::Value>,
    headers: &[(String, String)],
) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = match body {
        Some(serde_json::Value::String(text)) => (
            status,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            text,
        )
            .into_response(),
        Some(json) => (status, axum::Json(json)).into_response(),
        None if status == StatusCode::UNAUTHORIZED => ApiError::Unauthorized.into_response(),
        None => (
            status,
            axum::Json(serde_json::json!({
                "Message": status.canonical_reason().unwrap_or("Injected fault"),
            })),
        )
            .into_response(),
    };
    for (name, value) in headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}

/// The outermost layer of a served site: it runs the request on a task of its own (see the module
/// map in `api`), and a response marked [`LoseConnection`] closes its
/// connection instead of being sent. Without axum-server's `ConnectionShutdown` (a router used
/// in-process with `oneshot`), the marked response is returned as it is: an empty body.
pub(crate) async fn close_lost_connections(request: Request, next: Next) -> Response {
    let shutdown = request
        .extensions()
        .get::<axum_server::ConnectionShutdown>()
        .cloned();
    // On a task of its own: when the client goes away, this future is dropped with its connection,
    // but the request goes on to its end, as an appliance finishes a write it was sent. A latency
    // fault past the client's timeout is so "the ZVM took that long, and the client had given up".
    let response = match tokio::spawn(next.run(request)).await {
        Ok(response) => response,
        Err(e) => ApiError::Internal(format!(
            "the simulator failed while serving this request ({e}); report it with the seed"
        ))
        .into_response(),
    };
    if response.extensions().get::<LoseConnection>().is_some()
        && let Some(shutdown) = shutdown
    {
        shutdown.shutdown();
        // The connection's task drops this future as it closes the connection: nothing is sent.
        std::future::pending::<()>().await;
    }
    response
}
