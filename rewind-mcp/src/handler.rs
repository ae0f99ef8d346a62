//! What the MCP server answers: every tool call (the role check first, then the tool, acting for
//! the caller when signed in, as an MCP task when the client asks for one; an upstream's tool
//! through the [`crate::gateway`]), the tools listed (its own, then the upstreams'), the tasks'
//! methods, and its identity, instructions and capabilities.

use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, prompt_handler, tool_handler};

use crate::server::{RewindServer, SERVER_NAME};
use crate::{gateway, metrics, prompt, roles, sign_in, task_run, tasks};

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
        if let Some(served) = self.gateway.as_ref().and_then(|g| g.find(&request.name)) {
            return Ok(self.through_gateway(served, request, context).await);
        }
        if let Some(refused) = roles::refusal(self.rewind.config(), &request.name, &context) {
            return Ok(refused.into());
        }
        let server = match sign_in::caller(&context) {
            Some(caller) => self.acting_for(caller.person.clone()),
            None => self.clone(),
        };
        if tasks::wanted(&request, &context) {
            return Ok(task_run::start(server, request, context));
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
        metrics::server().tool_called(&tool, failed, began.elapsed());
        answer
    }

    /// Rewind's own tools, then, with `--gateway`, every upstream's tool reached now.
    async fn list_tools(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ListToolsResult, rmcp::ErrorData> {
        let mut tools = Self::tool_router().list_all();
        if let Some(gateway) = &self.gateway {
            tools.extend(gateway.tools());
        }
        Ok(rmcp::model::ListToolsResult::with_all_items(tools))
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        Self::tool_router().get(name).cloned().or_else(|| {
            let gateway = self.gateway.as_ref()?;
            gateway.tools().into_iter().find(|t| t.name == name)
        })
    }

    /// A session begun: with `--gateway`, told from now on when the upstreams' tools change.
    async fn on_initialized(&self, context: rmcp::service::NotificationContext<rmcp::RoleServer>) {
        if let Some(gateway) = &self.gateway {
            gateway.tell(context.peer);
        }
    }

    /// A 2026-07-28 client may listen for the gateway's tools changing (and for nothing else).
    fn accepted_subscription_filter(
        &self,
        _requested: &rmcp::model::SubscriptionFilter,
    ) -> Option<rmcp::model::SubscriptionFilter> {
        self.gateway.as_ref()?;
        Some(
            rmcp::model::SubscriptionFilter::builder()
                .tools_list_changed()
                .build(),
        )
    }

    async fn listen(
        &self,
        subscription: rmcp::service::SubscriptionContext,
    ) -> Result<(), rmcp::ErrorData> {
        if let Some(gateway) = &self.gateway {
            gateway.listen(&subscription).await;
        } else {
            subscription.cancelled().await;
        }
        Ok(())
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
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_prompts()
            .enable_tasks();
        // Only a gateway's list changes: its upstreams come and go, and say when theirs change.
        let capabilities = match self.gateway {
            Some(_) => capabilities.enable_tool_list_changed().build(),
            None => capabilities.build(),
        };
        ServerConfig::new(capabilities)
            .with_server_info(
                Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION"))
                    .with_title("Zerto AI Rewind"),
            )
            .with_instructions(prompt::INSTRUCTIONS)
    }
}

impl RewindServer {
    /// A call of an upstream's tool: the caller's role for the upstream first, then the gateway.
    async fn through_gateway(
        &self,
        served: Result<gateway::served::Served, String>,
        request: rmcp::model::CallToolRequestParams,
        context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> rmcp::model::CallToolResponse {
        let served = match served {
            Ok(served) => served,
            Err(why) => return gateway::forward::refused(why).into(),
        };
        if let Some(refused) =
            roles::upstream_refusal(self.rewind.config(), &served.slot.upstream, &context)
        {
            return refused.into();
        }
        let server = match sign_in::caller(&context) {
            Some(caller) => self.acting_for(caller.person.clone()),
            None => self.clone(),
        };
        let tool = request.name.to_string();
        let began = std::time::Instant::now();
        let caller = gateway::forward::Caller {
            rewind: server.rewind.clone(),
            in_flight: server.in_flight.clone(),
        };
        let answer = gateway::forward::call(&caller, served, request, context).await;
        let failed = matches!(&answer, rmcp::model::CallToolResponse::Complete(r) if r.is_error == Some(true));
        metrics::server().tool_called(&tool, failed, began.elapsed());
        answer
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
