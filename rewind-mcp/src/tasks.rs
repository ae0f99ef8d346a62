//! Guards and recoveries as MCP tasks (the `io.modelcontextprotocol/tasks` extension, served with
//! rmcp's [`TaskManager`]). A guard or a recovery holds its call open for as long as Zerto's tasks
//! run; a client that declares the extension gets a task instead, follows it with `tasks/get` (its
//! status message is the progress, its result the tool's answer), lists its own with `tasks/list`,
//! and may cancel it with `tasks/cancel`. A client that does not declare it gets today's
//! synchronous answer, and the other tools always answer at once.
//!
//! A cancel never abandons what was sent: the work runs on a task of its own counted in
//! [`crate::in_flight::InFlight`], as every guard and recovery does. For a guard, it stops the
//! inserts not yet sent ([`rewind_core::Rewind::guard_until`]); those already sent are read to
//! their end and journaled, and only then does the task end, `cancelled`, its status message giving
//! the verdict, the tag and each VPG's outcome with its Zerto task. A recovery cannot be stopped
//! half-way safely (a mount, a test, a clone already started), so it runs to its end and the task
//! ends `completed` with its answer. A guard whose every VPG was tagged before the cancel took
//! effect ends `completed` too: its checkpoints exist, and hiding them would claim less than what
//! is in Zerto.
//!
//! A signed-in caller sees and cancels only the tasks it started; without sign-in, an HTTP session
//! only its own.
//!
//! This file keeps the tasks and whose each is; [`crate::task_run`] runs a tool call as one.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rewind_core::CancellationToken;
use rmcp::RoleServer;
use rmcp::model::{CallToolRequestParams, CallToolResponse, CreateTaskResult, CustomResult, Task};
use rmcp::service::RequestContext;
use rmcp::task_manager::{TaskContext, TaskFuture, TaskManager, TaskOptions};
use serde_json::json;

use crate::sign_in;

/// The tools that run as tasks for a client that declares the extension.
pub const TASK_TOOLS: [&str; 5] = [
    "zerto_guard_before_mutate",
    "zerto_recover_file",
    "zerto_diff_since_tag",
    "zerto_failover_test",
    "zerto_clone",
];

/// How often a client is told to poll.
const POLL_INTERVAL_MS: u64 = 500;

/// The tasks of one server, shared by every session: rmcp's manager, and who started each.
#[derive(Clone, Default)]
pub struct Tasks {
    manager: TaskManager,
    /// Each task's id and whose it is ([`owner`]).
    owners: Arc<Mutex<HashMap<String, Option<String>>>>,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("running", &self.manager.running_task_count())
            .finish()
    }
}

/// What a tool call running as a task carries into its work: where its progress goes, and the
/// signal that stops a guard's unsent inserts.
#[derive(Clone, Default)]
pub struct TaskCall {
    /// The task's handle (its status message is the progress); `None` for a plain call.
    pub(crate) task: Option<TaskContext>,
    /// Cancelled when the client cancels the task; `None` for a plain call, which nothing stops.
    pub(crate) stop: Option<CancellationToken>,
}

impl std::fmt::Debug for TaskCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskCall")
            .field("task", &self.task.as_ref().map(TaskContext::task_id))
            .field(
                "stop",
                &self.stop.as_ref().map(CancellationToken::is_cancelled),
            )
            .finish()
    }
}

/// Whether this call should run as a task: one of [`TASK_TOOLS`], from a client that declared the
/// extension.
pub fn wanted(request: &CallToolRequestParams, context: &RequestContext<RoleServer>) -> bool {
    TASK_TOOLS.contains(&request.name.as_ref())
        && context
            .client_capabilities()
            .is_some_and(|c| c.supports_tasks())
}

/// Whose a task is: the signed-in caller's subject; without sign-in, over HTTP, the MCP session
/// that started it (so local sessions do not see each other's); over stdio, the one client's.
pub(crate) fn owner(context: &RequestContext<RoleServer>) -> Option<String> {
    if let Some(caller) = sign_in::caller(context) {
        return Some(format!("subject {}", caller.person.subject));
    }
    context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.headers.get("mcp-session-id"))
        .and_then(|id| id.to_str().ok())
        .map(|id| format!("session {id}"))
}

impl Tasks {
    /// Starts a call of `tool` as a task of `owner` ([`owner`]) kept for `ttl`, running `work` with
    /// the task's handle, and answers with that handle.
    pub(crate) fn start(
        &self,
        tool: &str,
        owner: Option<String>,
        ttl: Duration,
        work: impl FnOnce(TaskContext) -> TaskFuture,
    ) -> CallToolResponse {
        let options = TaskOptions::new()
            .with_ttl_ms(ttl.as_millis() as u64)
            .with_poll_interval_ms(POLL_INTERVAL_MS)
            .with_status_message(format!("{tool} started"));
        let task = self.manager.spawn(options, work);
        let mut owners = self.owners.lock().unwrap_or_else(|p| p.into_inner());
        // A task the manager no longer keeps (past its time to live) is forgotten here too.
        owners.retain(|id, _| self.manager.get_task(id).is_ok());
        owners.insert(task.task_id.clone(), owner);
        CallToolResponse::Task(CreateTaskResult::new(task))
    }

    /// `tasks/get`, for the caller that started the task.
    pub fn get(
        &self,
        task_id: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, rmcp::ErrorData> {
        self.check_owner(task_id, context)?;
        Ok(rmcp::model::GetTaskResult::new(
            self.manager.get_task(task_id)?,
        ))
    }

    /// `tasks/cancel`, for the caller that started the task.
    pub fn cancel(
        &self,
        task_id: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), rmcp::ErrorData> {
        self.check_owner(task_id, context)?;
        self.manager.cancel_task(task_id)
    }

    /// `tasks/list`: the caller's tasks still kept, oldest first.
    pub fn list(&self, context: &RequestContext<RoleServer>) -> CustomResult {
        let owner = owner(context);
        let mut owners = self.owners.lock().unwrap_or_else(|p| p.into_inner());
        let mut tasks: Vec<Task> = Vec::new();
        // A task the manager no longer keeps (past its time to live) is forgotten here too.
        owners.retain(|id, started_by| match self.manager.get_task(id) {
            Ok(detailed) => {
                if *started_by == owner {
                    tasks.push(detailed.task);
                }
                true
            }
            Err(_) => false,
        });
        tasks.sort_by(|a, b| a.created_at.cmp(&b.created_at));
        CustomResult::new(json!({ "tasks": tasks }))
    }

    /// A task of another caller is as unknown as one that never was.
    fn check_owner(
        &self,
        task_id: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), rmcp::ErrorData> {
        let owners = self.owners.lock().unwrap_or_else(|p| p.into_inner());
        match owners.get(task_id) {
            Some(started_by) if *started_by == owner(context) => Ok(()),
            _ => Err(rmcp::ErrorData::invalid_params(
                format!("no task {task_id} of yours is kept here; tasks/list shows yours"),
                None,
            )),
        }
    }
}
