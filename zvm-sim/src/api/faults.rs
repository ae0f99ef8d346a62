//! The fault layer: between the call log and routing, it asks the fault rules what to do with
//! each request (`/_sim` calls excepted) and does it. The call log, outside it, records the status
//! the client saw and the rules that fired.
//!
//! Losing a response takes two layers. This one lets the handler run (its effect stays), drops the
//! response and marks it [`LoseConnection`]; [`close_lost_connections`], outside the call log,
//! then closes the connection through axum-server's `ConnectionShutdown` and never answers, so the
//! client sees the connection closed before a response: a transport error, not a clean answer. A
//! withheld response is marked the same way, to be closed only after
//! [`decisions::WITHHOLD_FOR`], so the client's own timeout comes first. A cut response is sent
//! from here: half its body, then a body error, which makes the server drop the connection.

use std::time::Duration;

use bytes::Bytes;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::decisions;
use crate::http::{ApiError, FaultsApplied, SiteCtx, StartedTask, is_control_path};
use crate::world::faults::{FaultAction, inserted_vpg};

/// Marks a response that must never reach the client: its connection is closed at once, or, when
/// withheld, held silent until the client gives up (at most [`decisions::WITHHOLD_FOR`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct LoseConnection {
    /// How long the connection stays open and silent before it is closed.
    silent_for: Duration,
}

/// Applies the fault rules to one request.
pub(crate) async fn apply(State(ctx): State<SiteCtx>, request: Request, next: Next) -> Response {
    let path = request.uri().path().to_owned();
    if is_control_path(&path) {
        return next.run(request).await;
    }
    let method = request.method().to_string();
    let query = request.uri().query().map(str::to_owned);
    let decision = {
        let mut world = ctx.shared.lock();
        let now = world.clock.now();
        world.faults.forget_expired(now);
        let decision = world
            .faults
            .decide(ctx.site, &method, &path, query.as_deref());
        match decision.action {
            Some(FaultAction::RevokeTokens) => world.auth.revoke_all(ctx.site),
            Some(FaultAction::InsertAsAnotherClient) => {
                // The rule matches inserts only, so the path names a VPG.
                if let Some(vpg) = inserted_vpg(&method, &path) {
                    let now = world.clock.now();
                    world.advance(now);
                    world.insert_as_another_client(ctx.site, vpg, now);
                }
            }
            _ => {}
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
        Some(FaultAction::LoseResponse) => lost(next.run(request).await, Duration::ZERO),
        Some(FaultAction::WithholdResponse) => {
            lost(next.run(request).await, decisions::WITHHOLD_FOR)
        }
        Some(FaultAction::CutResponse) => cut(next.run(request).await).await,
        Some(
            FaultAction::Latency { .. }
            | FaultAction::RevokeTokens
            | FaultAction::InsertAsAnotherClient,
        )
        | None => next.run(request).await,
    };
    response
        .extensions_mut()
        .insert(FaultsApplied(decision.notes));
    response
}

/// The handler's answer, never to be sent: an empty response with its status and the task it
/// started (for the call log), marked to close its connection after `silent_for`.
fn lost(answered: Response, silent_for: Duration) -> Response {
    let mut lost = Response::new(Body::empty());
    *lost.status_mut() = answered.status();
    if let Some(task) = answered.extensions().get::<StartedTask>() {
        lost.extensions_mut().insert(task.clone());
    }
    lost.extensions_mut().insert(LoseConnection { silent_for });
    lost
}

/// The handler's answer cut off halfway: its status and headers, the whole body's length, the
/// first half of the body, then (after [`decisions::CUT_AFTER`]) a body error, on which the server
/// drops the connection, as a connection that breaks mid-transfer does.
async fn cut(answered: Response) -> Response {
    let (mut parts, body) = answered.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let half = bytes.slice(..bytes.len() / 2);
    let chunks: [Result<Bytes, std::io::Error>; 2] = [
        Ok(half),
        Err(std::io::Error::other(
            "a CutResponse fault dropped the connection",
        )),
    ];
    let chunks = futures::StreamExt::then(futures::stream::iter(chunks), |chunk| async move {
        if chunk.is_err() {
            tokio::time::sleep(decisions::CUT_AFTER).await;
        }
        chunk
    });
    parts
        .headers
        .insert(header::CONTENT_LENGTH, HeaderValue::from(bytes.len()));
    Response::from_parts(parts, Body::from_stream(chunks))
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
/// map in `api`), and a response marked [`LoseConnection`] closes its connection (at once, or
/// after holding it silent) instead of being sent. Without axum-server's `ConnectionShutdown` (a
/// router used in-process with `oneshot`), the marked response is returned as it is, at once: an
/// empty body.
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
    if let Some(&LoseConnection { silent_for }) = response.extensions().get::<LoseConnection>()
        && let Some(shutdown) = shutdown
    {
        if !silent_for.is_zero() {
            // A client that gives up meanwhile closes the connection, which drops this future.
            tokio::time::sleep(silent_for).await;
        }
        shutdown.shutdown();
        // The connection's task drops this future as it closes the connection: nothing is sent.
        std::future::pending::<()>().await;
    }
    response
}
