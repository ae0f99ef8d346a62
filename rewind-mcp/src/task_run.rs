//! A tool call run as an MCP task ([`crate::tasks`]): the tool on a server that carries the task's
//! progress and stop, and how the task ends (a guard cancelled before its verdict ends
//! `cancelled`, with every task id it sent in its status message).

use std::time::Duration;

use rewind_core::{CancellationToken, Verdict};
use rmcp::RoleServer;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult};
use rmcp::service::RequestContext;
use rmcp::task_manager::{TaskContext, TaskExit};
use serde::Deserialize;

use crate::server::RewindServer;
use crate::tasks::{self, TaskCall};

/// Starts `request` as a task on `server` and answers with its handle.
pub(crate) fn start(
    server: RewindServer,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> CallToolResponse {
    let tasks = server.tasks.clone();
    let tool = request.name.to_string();
    let (owner, keep) = (tasks::owner(&context), ttl(&server));
    tasks.start(&tool, owner, keep, move |task| {
        Box::pin(run(server, request, context, task))
    })
}

/// How long a task is kept: past every wait of a guard or a recovery (a recovery waits for up to
/// two Zerto tasks), and at least an hour, so a client that polls late still reads its result.
fn ttl(server: &RewindServer) -> Duration {
    let config = server.rewind.config();
    (config.recover.wait(&config.guard) * 3).max(Duration::from_secs(3600))
}

/// The task's work: the tool, on `server` with the task's progress and stop, and how it ended.
async fn run(
    server: RewindServer,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
    task: TaskContext,
) -> Result<CallToolResult, TaskExit> {
    let stop = CancellationToken::new();
    let server = server.as_task(TaskCall {
        task: Some(task.clone()),
        stop: Some(stop.clone()),
    });
    let watch = tokio::spawn({
        let task = task.clone();
        async move {
            task.cancelled().await;
            stop.cancel();
        }
    });
    let tool = request.name.to_string();
    let answer = RewindServer::tool_router()
        .call(ToolCallContext::new(&server, request, context))
        .await;
    watch.abort();
    let result = match answer? {
        CallToolResponse::Complete(result) => result,
        _ => {
            return Err(TaskExit::Error(rmcp::ErrorData::internal_error(
                format!("{tool} asked for input inside a task, which rewind's tools never do"),
                None,
            )));
        }
    };
    if tool == "zerto_guard_before_mutate" && task.is_cancel_requested() && !guarded(&result) {
        task.set_status_message(cancelled_guard_words(&result));
        return Err(TaskExit::Cancelled);
    }
    Ok(result)
}

/// Whether a guard's answer is the `guarded` verdict.
fn guarded(result: &CallToolResult) -> bool {
    result.is_error != Some(true)
        && result.structured_content.as_ref().is_some_and(|s| {
            Verdict::deserialize(&s["verdict"]).is_ok_and(|v| v == Verdict::Guarded)
        })
}

/// The status message of a guard task that ended cancelled: its verdict and tag, and each VPG's
/// outcome with its Zerto task, so that no task id sent or still running is lost with the result.
fn cancelled_guard_words(result: &CallToolResult) -> String {
    let Some(report) = result.structured_content.as_ref() else {
        let said = result
            .content
            .first()
            .and_then(|c| c.as_text())
            .map(|t| t.text.clone())
            .unwrap_or_default();
        return format!("cancelled: the guard did not run to a verdict: {said}");
    };
    let vpgs: Vec<String> = report["vpgs"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| {
            let task = v["task_id"]
                .as_str()
                .map(|t| format!(" (task {t})"))
                .unwrap_or_default();
            format!(
                "{}: {}{task}",
                v["vpg_name"].as_str().unwrap_or("?"),
                v["outcome"].as_str().unwrap_or("?")
            )
        })
        .collect();
    format!(
        "cancelled: the guard sent no insert once asked to stop; the inserts it had sent were read to their end and journaled. Verdict {}, tag {}: {}. zerto_journal (change {}) shows the record.",
        report["verdict"].as_str().unwrap_or("?"),
        report["tag"].as_str().unwrap_or("?"),
        vpgs.join("; "),
        report["change_id"].as_str().unwrap_or("?"),
    )
}
