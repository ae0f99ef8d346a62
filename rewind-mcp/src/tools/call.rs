//! What every tool call does around its one call into rewind-core: its arguments read (or the call
//! answered with what was wrong), the facade for the sites it asks, its work run on a task of its
//! own with progress, and what came of that answered.

use std::future::Future;
use std::sync::Arc;

use rewind_core::{ErrorKind, ErrorReport, ProgressSink, RewindError};
use rmcp::model::{CallToolResult, JsonObject};
use rmcp::schemars::JsonSchema;
use rmcp::service::{RequestContext, RoleServer};
use serde::de::DeserializeOwned;

use crate::reply::{self, Said};
use crate::server::RewindServer;
use crate::{args, progress};

/// `?` for a tool's steps, whose errors are answers: the value of an `Ok`, or the call answered with
/// the `Err`.
macro_rules! or_answer {
    ($step:expr) => {
        match $step {
            Ok(value) => value,
            Err(answer) => return answer.into(),
        }
    };
}
pub(super) use or_answer;

/// The arguments of `tool`, read into `T` ([`args::parse`]), or the answer that says what was wrong.
pub(super) fn arguments<T: DeserializeOwned + JsonSchema + 'static>(
    tool: &str,
    args: JsonObject,
) -> Result<T, CallToolResult> {
    args::parse(tool, args).map_err(|e| reply::bad_arguments(&e))
}

impl RewindServer {
    /// The facade asking only `sites` (every site when none is named); a name that is not
    /// configured is the tool's answer.
    pub(super) fn asking(&self, sites: &[String]) -> Result<rewind_core::Rewind, CallToolResult> {
        self.rewind
            .only_sites(sites)
            .map_err(|e| reply::failure(&e))
    }

    /// [`RewindServer::asking`] for a recovery, journaled as made by the MCP client that called
    /// (the name it gave at initialize), beside the person; from the tag in `vpg` when given.
    pub(super) fn recovering(
        &self,
        sites: &[String],
        vpg: Option<&str>,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<rewind_core::Rewind, CallToolResult> {
        let mut rewind = self.asking(sites)?;
        if let Some(info) = ctx.peer.peer_info() {
            rewind = rewind.as_agent(&info.client_info.name);
        }
        if let Some(vpg) = vpg.filter(|v| !v.trim().is_empty()) {
            rewind = rewind.only_vpg(vpg);
        }
        Ok(rewind)
    }

    /// Runs `work` on a task of its own ([`progress::detached`]) and answers what came of it:
    /// `answer` of its result, `failure` of its error, or, when the task ended without either, that
    /// `what` stopped.
    pub(super) async fn detached<T, F, Fut>(
        &self,
        ctx: &RequestContext<RoleServer>,
        what: &str,
        work: F,
        answer: impl FnOnce(&T) -> CallToolResult,
        failure: fn(&RewindError) -> CallToolResult,
    ) -> CallToolResult
    where
        T: Send + 'static,
        F: FnOnce(Arc<dyn ProgressSink>) -> Fut + Send + 'static,
        Fut: Future<Output = Result<T, RewindError>> + Send + 'static,
    {
        let task = self.call.task.clone();
        match progress::detached(&self.in_flight, task, ctx, work).await {
            Ok(Ok(done)) => answer(&done),
            Ok(Err(e)) => failure(&e),
            Err(e) => stopped(what, &e),
        }
    }
}

/// The answer when the task running a call's work ended without an answer (it panicked).
fn stopped(what: &str, e: &tokio::task::JoinError) -> CallToolResult {
    reply::answer(
        Said::new(
            format!("{what} stopped unexpectedly ({e})"),
            "Check zerto_list_tags and zerto_journal for what it did before going on.",
        ),
        &ErrorReport::new(ErrorKind::Internal, e.to_string()),
        true,
    )
}
