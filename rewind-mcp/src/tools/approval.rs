//! What an agent may only propose on a team server (a journal VM restore, keeping a change's tags
//! past the journal) is held for a person's approval instead of asked of the human driving the
//! agent: the call answers at once with where a person approves it, and the requester's identical
//! call made after the approval runs once, journaled with who approved it ([`crate::held`]).

use std::future::Future;
use std::sync::Arc;

use rewind_core::catalog::ZERTO_REWIND;
use rewind_core::{ProgressSink, Rewind, RewindError};
use rmcp::model::CallToolResult;
use rmcp::service::{RequestContext, RoleServer};

use crate::held::{self, Gate, Proposal, Shape};
use crate::reply;
use crate::server::RewindServer;

/// Rewind's own `tool`, proposed on `vm` with `arguments`; `what` says what it would do.
pub(super) fn proposal(
    tool: &str,
    vm: &str,
    arguments: serde_json::Value,
    what: String,
) -> Proposal {
    Proposal {
        server: ZERTO_REWIND.to_owned(),
        tool: tool.to_owned(),
        vm: Some(vm.to_owned()),
        arguments,
        what,
    }
}

/// The work an approved call does, and how its result is answered.
pub(super) struct Run<W, A> {
    what: &'static str,
    work: W,
    answer: A,
}

impl<W, A> Run<W, A> {
    /// `work` (given the facade acting on the approval) named `what` in messages, its result
    /// answered by `answer`.
    pub(super) fn new(what: &'static str, work: W, answer: A) -> Run<W, A> {
        Run { what, work, answer }
    }
}

/// Holds `proposal` for a person, or runs it once on its approval.
pub(super) async fn on_approval<T, W, F, Fut, A>(
    server: &RewindServer,
    ctx: &RequestContext<RoleServer>,
    rewind: &Rewind,
    proposal: Proposal,
    run: Run<W, A>,
) -> CallToolResult
where
    T: Send + 'static,
    W: FnOnce(Rewind) -> F,
    F: FnOnce(Arc<dyn ProgressSink>) -> Fut + Send + 'static,
    Fut: Future<Output = Result<T, RewindError>> + Send + 'static,
    A: FnOnce(&T) -> CallToolResult,
{
    let call = match held::gate(rewind, ctx, proposal, Shape::Structured).await {
        Gate::Run(call) => call,
        Gate::Answer(answer) => return answer,
    };
    let work = (run.work)(held::approved(rewind, &call));
    let result = server
        .detached(ctx, run.what, work, run.answer, reply::recovery_failure)
        .await;
    held::ended(rewind, &call, &result).await;
    result
}
