//! The agent's side: an MCP client (rmcp) talking to the real `rewind-mcp` binary over stdio, as a
//! host such as Claude Code starts it, and a [`Human`] behind that client who answers the server's
//! questions (elicitation) with a scripted answer, or a client that cannot show a form at all.

use std::process::Stdio;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, Implementation, ProtocolVersion,
};
use rmcp::service::{RequestContext, RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, ServiceExt};
use serde_json::{Value, json};

use crate::answer::Answer;

/// What the human answers when the server asks whether to take a tagged checkpoint first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HumanAnswer {
    /// Take a tagged checkpoint first.
    Yes,
    /// No checkpoint.
    No,
    /// Yes, and remember it for every call of the tool.
    YesRemember,
    /// No, and remember it.
    NoRemember,
    /// Dismiss the form.
    Decline,
}

impl HumanAnswer {
    /// Reads the words a scenario uses: `yes`, `no`, `yes, and to remember it`, `no, and to remember
    /// it`, `nothing, dismissing the form`.
    pub fn parse(words: &str) -> HumanAnswer {
        match words.trim() {
            "yes" => HumanAnswer::Yes,
            "no" => HumanAnswer::No,
            "yes, and to remember it" => HumanAnswer::YesRemember,
            "no, and to remember it" => HumanAnswer::NoRemember,
            "nothing, dismissing the form" => HumanAnswer::Decline,
            other => panic!("the human cannot answer {other:?}"),
        }
    }
}

/// The person behind the agent's client: answers each question with the current scripted answer,
/// and keeps every question they were asked.
#[derive(Debug, Clone)]
pub struct Human {
    /// Whether the client declares the elicitation capability (can show a form).
    pub can_show_forms: bool,
    /// The answer to give; changed between calls by the scenario.
    pub answer: Arc<Mutex<HumanAnswer>>,
    /// The message of every question asked, in order.
    pub asked: Arc<Mutex<Vec<String>>>,
}

impl Human {
    /// A human whose client can show forms, answering `answer`.
    pub fn answering(answer: HumanAnswer) -> Human {
        Human {
            can_show_forms: true,
            answer: Arc::new(Mutex::new(answer)),
            asked: Default::default(),
        }
    }

    /// The questions asked so far.
    pub fn questions(&self) -> Vec<String> {
        self.asked.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl ClientHandler for Human {
    fn get_info(&self) -> ClientConfig {
        let capabilities = if self.can_show_forms {
            ClientCapabilities::builder().enable_elicitation().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(
            capabilities,
            Implementation::new("rewind-acceptance-human", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _ctx: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        let message = match &request {
            ElicitRequestParams::FormElicitationParams { message, .. }
            | ElicitRequestParams::UrlElicitationParams { message, .. } => message.clone(),
            // A kind of question this human does not know is declined, never taken for a yes.
            _ => return Ok(ElicitResult::new(ElicitationAction::Decline)),
        };
        // A yes-or-no consent form (keeping tags, restoring a VM) has one field, `proceed`; the
        // question about an unknown tool has `checkpoint` and `remember`. The human fills the form
        // they are shown.
        let consent = serde_json::to_value(&request)
            .is_ok_and(|r| r["requestedSchema"]["properties"].get("proceed").is_some());
        self.asked
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(message);
        let form = |checkpoint: &str, remember: bool| {
            let content = match consent {
                true => json!({"proceed": checkpoint}),
                false => json!({"checkpoint": checkpoint, "remember": remember}),
            };
            ElicitResult::new(ElicitationAction::Accept).with_content(content)
        };
        let answer = *self.answer.lock().unwrap_or_else(|p| p.into_inner());
        Ok(match answer {
            HumanAnswer::Yes => form("yes", false),
            HumanAnswer::No => form("no", false),
            HumanAnswer::YesRemember => form("yes", true),
            HumanAnswer::NoRemember => form("no", true),
            HumanAnswer::Decline => ElicitResult::new(ElicitationAction::Decline),
        })
    }
}

/// Which protocol generation the agent's client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// With the initialize handshake (2025-11-25): the server asks with `elicitation/create`.
    Handshake,
    /// 2026-07-28, without a handshake: the server asks with an `InputRequiredResult`.
    Mrtr,
}

/// An open MCP session with `rewind-mcp`, running as a stdio child of this process.
pub struct Agent {
    client: RunningService<RoleClient, Human>,
    /// The human behind the client.
    pub human: Human,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("human", &self.human)
            .finish_non_exhaustive()
    }
}

impl Agent {
    /// Starts `cmd` (the `rewind-mcp` binary with the scenario's environment) and opens a session.
    pub async fn start(
        cmd: tokio::process::Command,
        human: Human,
        protocol: Protocol,
        log: bool,
    ) -> Agent {
        let (transport, _) = TokioChildProcess::builder(cmd)
            .stderr(if log { Stdio::inherit() } else { Stdio::null() })
            .spawn()
            .expect("rewind-mcp starts");
        let client = match protocol {
            Protocol::Handshake => human.clone().serve(transport).await,
            Protocol::Mrtr => {
                human
                    .clone()
                    .serve_with_lifecycle(
                        transport,
                        ClientLifecycleMode::Discover {
                            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                        },
                    )
                    .await
            }
        }
        .expect("the MCP session with rewind-mcp starts");
        Agent { client, human }
    }

    /// Calls `tool` with `args` (an object) and returns its answer; a protocol error fails the step,
    /// since every tool reports its failures as tool results, and so does no answer within
    /// [`crate::bins::FRONT_DEADLINE`]. On protocol 2026-07-28 the client drives the input rounds (the
    /// human's answers) itself.
    pub async fn call(&self, tool: &str, args: Value) -> Answer {
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(
            args.as_object()
                .expect("tool arguments are an object")
                .clone(),
        );
        let result =
            tokio::time::timeout(crate::bins::FRONT_DEADLINE, self.client.call_tool(params))
                .await
                .unwrap_or_else(|_| {
                    panic!(
                        "{tool} did not answer within {} s",
                        crate::bins::FRONT_DEADLINE.as_secs()
                    )
                })
                .unwrap_or_else(|e| panic!("{tool} answers without a protocol error: {e}"));
        let text = result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect::<Vec<_>>()
            .join("\n");
        Answer::from_mcp(
            tool,
            result.is_error == Some(true),
            result.structured_content.clone(),
            text,
        )
    }

    /// Makes several calls at the same moment over this one session, and returns their answers in
    /// the order given.
    pub async fn call_at_once(&self, calls: Vec<(&str, Value)>) -> Vec<Answer> {
        futures::future::join_all(calls.into_iter().map(|(tool, args)| self.call(tool, args))).await
    }

    /// The tools the server lists: each one's name and its annotations as JSON (`readOnlyHint`,
    /// `destructiveHint`, ...).
    pub async fn tools(&self) -> Vec<(String, Value)> {
        self.client
            .list_all_tools()
            .await
            .expect("rewind-mcp lists its tools")
            .into_iter()
            .map(|t| {
                let annotations = serde_json::to_value(&t.annotations).unwrap_or(Value::Null);
                (t.name.to_string(), annotations)
            })
            .collect()
    }

    /// Ends the session (the child process ends with it).
    pub async fn close(self) {
        // The session may already have ended with its child; either way it is over.
        let _ = self.client.cancel().await;
    }
}
