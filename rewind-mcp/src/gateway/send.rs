//! Sending one call to its upstream and waiting for its answer, from the client call's own task:
//! the upstream's progress goes on to the client under the client's token (the updates that trail
//! the answer too, before it), its questions are
//! asked of the client from here (where rmcp allows a server's request), and a cancel by the
//! client is passed on to the upstream. Sent once: never retried.

use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, ElicitResult,
    ElicitationAction, ProgressNotificationParam, ProgressToken, ServerResult,
};
use rmcp::service::{PeerRequestOptions, RequestContext, RoleServer};
use tokio::sync::mpsc;

use super::client::Question;
use super::served::Served;

/// How long the client has to answer an upstream's question.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(600);

/// What came of sending a call.
#[derive(Debug)]
pub enum Delivery {
    /// The upstream answered.
    Answered(CallToolResult),
    /// It could not be sent: the upstream never had it.
    Undelivered(String),
    /// The client cancelled it after it was sent; the upstream was told.
    Cancelled,
    /// It was sent and its answer was lost (the upstream ended, or answered in a way not a
    /// call's): it may have run.
    Lost(String),
}

/// Sends `request` to `served`'s upstream as its own tool, and waits for what comes of it.
pub async fn send(
    served: &Served,
    request: CallToolRequestParams,
    ctx: &RequestContext<RoleServer>,
) -> Delivery {
    let mut params = CallToolRequestParams::new(served.tool.clone());
    params.arguments = request.arguments;
    let call = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = match served
        .peer
        .send_request_with_option(call, PeerRequestOptions::no_options())
        .await
    {
        Ok(handle) => handle,
        Err(e) => return Delivery::Undelivered(e.to_string()),
    };
    let mut open = served.slot.relay.open(handle.progress_token.clone());
    let client_token = ctx.meta.get_progress_token();
    let (id, upstream) = (handle.id.clone(), handle.peer.clone());
    let answer = handle.await_response();
    tokio::pin!(answer);
    let mut progressed = false;
    loop {
        tokio::select! {
            answered = &mut answer => {
                if let Some(token) = &client_token {
                    last_progress(ctx, token, &mut open.progress, progressed).await;
                }
                return match answered {
                    Ok(ServerResult::CallToolResult(result)) => Delivery::Answered(result),
                    Ok(_) => Delivery::Lost("the upstream answered with something that is not a tool's result".to_owned()),
                    Err(e) => Delivery::Lost(e.to_string()),
                };
            }
            Some(question) = open.questions.recv() => ask_client(ctx, question).await,
            Some(update) = open.progress.recv() => {
                progressed = true;
                if let Some(token) = &client_token {
                    progress_to_client(ctx, token, update).await;
                }
            }
            () = ctx.ct.cancelled() => {
                let _ = upstream
                    .notify_cancelled(rmcp::model::CancelledNotificationParam::new(
                        Some(id),
                        Some("the gateway's client cancelled the call".to_owned()),
                    ))
                    .await;
                return Delivery::Cancelled;
            }
        }
    }
}

/// How long the answer of a call that reported progress waits for the updates still on their way:
/// rmcp hands each notification to a task of its own, so the last ones may trail the answer they
/// came before. A call that reported none is not held up (every rmcp client asks for progress).
const TRAILING_PROGRESS: Duration = Duration::from_millis(2);

/// Sends the client the updates that trail the answer, before the answer.
async fn last_progress(
    ctx: &RequestContext<RoleServer>,
    token: &ProgressToken,
    updates: &mut mpsc::UnboundedReceiver<ProgressNotificationParam>,
    progressed: bool,
) {
    if progressed {
        tokio::time::sleep(TRAILING_PROGRESS).await;
    } else {
        tokio::task::yield_now().await;
    }
    while let Ok(update) = updates.try_recv() {
        progress_to_client(ctx, token, update).await;
    }
}

/// Sends one upstream update on to the client under its own token.
async fn progress_to_client(
    ctx: &RequestContext<RoleServer>,
    token: &ProgressToken,
    mut update: ProgressNotificationParam,
) {
    update.progress_token = token.clone();
    // A client gone is the call's end to notice, not the upstream's progress.
    let _ = ctx.peer.notify_progress(update).await;
}

/// Asks the client an upstream's question, from this call's task, and hands the answer back; a
/// client that cannot be asked declines.
async fn ask_client(ctx: &RequestContext<RoleServer>, question: Question) {
    let answer = ctx
        .peer
        .create_elicitation_with_timeout(question.params, Some(ANSWER_TIMEOUT))
        .await
        .unwrap_or_else(|e| {
            tracing::info!("an upstream's question could not be put to the client: {e}");
            ElicitResult::new(ElicitationAction::Decline)
        });
    let _ = question.answer.send(answer);
}
