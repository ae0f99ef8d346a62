//! The MCP server: [`RewindServer`], its identity, instructions, capabilities and the rewind prompt.
//! Its tools are in [`crate::tools`].

use rewind_core::Rewind;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{Implementation, PromptMessage, Role, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, prompt, prompt_handler, prompt_router, tool_handler};

use crate::args::{PromptArgs, given};
use crate::progress::InFlight;
use crate::tasks::{TaskCall, Tasks};
use crate::text;

/// The name this server goes by: the one the tool catalog's built-in entries name this server's
/// read-only tools under ([`rewind_core::catalog::ZERTO_REWIND`]). Claude Code names the tools
/// `mcp__zerto-rewind__<tool>` when it is added under it, so the hook and the catalog agree.
pub const SERVER_NAME: &str = rewind_core::catalog::ZERTO_REWIND;

/// The MCP server: a thin front over one [`Rewind`], shared by every session (the per-VPG insert queue
/// inside it must be one per process, so two sessions never insert into one VPG at once).
#[derive(Debug, Clone)]
pub struct RewindServer {
    pub(crate) rewind: Rewind,
    /// The guards and recoveries running on tasks of their own, shared by every session: the server
    /// waits for them before the process ends.
    pub(crate) in_flight: InFlight,
    /// The MCP tasks of guards and recoveries, shared by every session.
    pub(crate) tasks: Tasks,
    /// For a call running as an MCP task: its status and its stop.
    pub(crate) call: TaskCall,
    /// Served over HTTP, to callers on other machines: answers say nothing of this machine's
    /// files (the journal's path).
    pub(crate) over_http: bool,
}

impl RewindServer {
    /// A server over `rewind`.
    pub fn new(rewind: Rewind) -> Self {
        RewindServer {
            rewind,
            in_flight: InFlight::default(),
            tasks: Tasks::default(),
            call: TaskCall::default(),
            over_http: false,
        }
    }

    /// The same server, served over HTTP.
    pub fn over_http(self) -> Self {
        RewindServer {
            over_http: true,
            ..self
        }
    }

    /// The same server for one call running as an MCP task.
    pub(crate) fn as_task(&self, call: TaskCall) -> Self {
        RewindServer {
            call,
            ..self.clone()
        }
    }

    /// The same server acting for `person` (one insert queue, one journal, one count of work in
    /// flight): what a signed-in call runs on, so its guards and recoveries journal who it was.
    fn acting_for(&self, person: rewind_core::Person) -> Self {
        RewindServer {
            rewind: self.rewind.acting_for(person),
            ..self.clone()
        }
    }

    /// The guards and recoveries still running, which [`InFlight::settle`] waits for.
    pub fn in_flight(&self) -> InFlight {
        self.in_flight.clone()
    }
}

#[prompt_router]
impl RewindServer {
    /// The rewind loop for one change, as a prompt the human can pick in their client.
    #[prompt(name = "rewind", description = text::PROMPT_DESCRIPTION)]
    async fn rewind_prompt(&self, Parameters(args): Parameters<PromptArgs>) -> Vec<PromptMessage> {
        let change_id = given(args.change_id);
        vec![PromptMessage::new_text(
            Role::User,
            text::prompt_text(args.vm.trim(), args.change.trim(), change_id.as_deref()),
        )]
    }
}

#[tool_handler]
#[prompt_handler]
impl ServerHandler for RewindServer {
    /// Every tool call: a signed-in caller without the role the tool needs gets a tool error naming
    /// it ([`crate::roles`]); the others go to the tool, acting for the caller when signed in.
    async fn call_tool(
        &self,
        request: rmcp::model::CallToolRequestParams,
        context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, rmcp::ErrorData> {
        if let Some(refused) = crate::roles::refusal(self.rewind.config(), &request.name, &context)
        {
            return Ok(refused.into());
        }
        let server = match crate::roles::caller(&context) {
            Some(caller) => self.acting_for(caller.person.clone()),
            None => self.clone(),
        };
        if crate::tasks::wanted(&request, &context) {
            return Ok(self.tasks.start(server, request, context));
        }
        let tool = request.name.to_string();
        let began = std::time::Instant::now();
        let call = rmcp::handler::server::tool::ToolCallContext::new(&server, request, context);
        let answer = Self::tool_router().call(call).await;
        let failed = match &answer {
            Ok(rmcp::model::CallToolResponse::Complete(r)) => r.is_error == Some(true),
            Ok(_) => false,
            Err(_) => true,
        };
        crate::metrics::server().tool_called(&tool, failed, began.elapsed());
        answer
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, rmcp::ErrorData> {
        self.tasks.get(&request.task_id, &context)
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<(), rmcp::ErrorData> {
        self.tasks.cancel(&request.task_id, &context)
    }

    /// `tasks/list` (of the tasks protocol of 2025-11-25, which the extension dropped): the
    /// caller's tasks. Any other method is unknown.
    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::CustomResult, rmcp::ErrorData> {
        if request.method != "tasks/list" {
            return Err(rmcp::ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                request.method,
                None,
            ));
        }
        if !context
            .client_capabilities()
            .is_some_and(|c| c.supports_tasks())
        {
            return Err(rmcp::ErrorData::missing_required_client_capability(
                rmcp::model::ClientCapabilities::builder()
                    .enable_tasks()
                    .build(),
            ));
        }
        Ok(self.tasks.list(&context))
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .enable_tasks()
                .build(),
        )
        .with_server_info(
            Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION"))
                .with_title("Zerto AI Rewind"),
        )
        .with_instructions(text::INSTRUCTIONS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rewind_core::catalog::BUILTIN_READ_ONLY;

    #[test]
    fn every_built_in_entry_of_this_server_names_one_of_its_tools() {
        let listed: Vec<String> = RewindServer::tool_router()
            .list_all()
            .into_iter()
            .map(|t| t.name.to_string())
            .collect();
        let ours: Vec<&str> = BUILTIN_READ_ONLY
            .iter()
            .filter(|(server, _)| *server == SERVER_NAME)
            .map(|(_, tool)| *tool)
            .collect();
        assert!(!ours.is_empty());
        for tool in ours {
            assert!(
                listed.iter().any(|t| t == tool),
                "the catalog's built-in {SERVER_NAME}/{tool} is not a tool of this server: {listed:?}"
            );
        }
    }
}
