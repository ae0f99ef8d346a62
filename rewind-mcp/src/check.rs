//! `zerto_check_tool`: how a tool call is classified, and how the human is asked about an unknown one.
//!
//! Unknown is not safe. When the catalog knows nothing of a tool, the human decides whether to take a
//! tagged checkpoint first, and the server asks them directly when the client can show a form:
//!
//! - up to protocol 2025-11-25, with an `elicitation/create` request sent while the call is open;
//! - from 2026-07-28 on, where a server may not send requests, by answering the call with an
//!   `InputRequiredResult` that holds the same form; the client asks the human and calls again with
//!   the answer (`inputResponses`) and the `requestState` it was given.
//!
//! The form has one required choice (checkpoint first: yes or no) and one box (remember the answer for
//! every call of the tool: with yes it is recorded as mutating, with no as read-only). A client that
//! cannot be asked (no elicitation capability, an error, a timeout, a declined or cancelled form, an
//! answer that cannot be read) gets `unknown` and the question back for the agent to put to the human:
//! never a yes, and never a silent go-ahead.

use std::time::Duration;

use rewind_core::catalog::{CatalogError, Classification, ToolClass};
use rewind_core::{Rewind, RewindError};
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolResponse, CallToolResult, ElicitRequest, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationSchema, EnumSchema, InputRequest, InputRequests,
    InputRequiredResult, InputResponses,
};
use rmcp::schemars::{self, JsonSchema};
use rmcp::service::{RequestContext, RoleServer};
use serde::Serialize;

use crate::args::{CheckToolArgs, given};
use crate::{reply, text};

/// How long the human has to answer the form before the question goes back to the agent.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(600);

/// The key of the question in an `InputRequiredResult` and in the answers sent back.
pub const INPUT_KEY: &str = "checkpoint_question";

/// The form's choice and box.
const FIELD_CHECKPOINT: &str = "checkpoint";
const FIELD_REMEMBER: &str = "remember";
const YES: &str = "yes";
const NO: &str = "no";

/// What the agent should do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Next {
    /// Guard the VM with `zerto_guard_before_mutate`, and run the tool only if the verdict is guarded.
    GuardFirst,
    /// Run the tool: it is read-only.
    Run,
    /// The human said no checkpoint: run it, and say plainly that Zerto cannot rewind the change.
    RunUnguarded,
    /// The human could not be asked here: put the question to them and wait. Do not run the tool.
    AskHuman,
}

/// What came of asking the human.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct HumanAnswer {
    /// Whether the human answered the form.
    pub answered: bool,
    /// Their answer: take a tagged checkpoint first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<bool>,
    /// How the answer was remembered in the catalog, when they asked for that.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remembered_as: Option<ToolClass>,
    /// Why they could not be asked, or why remembering failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The result of `zerto_check_tool`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ToolCheck {
    /// The catalog's classification (server, tool, vm, class, source, vm_arg, question).
    #[serde(flatten)]
    pub classification: Classification,
    /// What to do next.
    pub next: Next,
    /// The same in words, for the model.
    pub message: String,
    /// The human's answer, for an unknown tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub human: Option<HumanAnswer>,
}

/// Runs `zerto_check_tool`.
pub async fn check_tool(
    rewind: &Rewind,
    args: CheckToolArgs,
    ctx: &RequestContext<RoleServer>,
    state: Option<String>,
    responses: Option<InputResponses>,
) -> Result<CallToolResponse, McpError> {
    let vm = given(args.vm);
    let (server, tool) = (args.server.clone(), args.tool.clone());
    let classified = crate::on_files(rewind, move |r| {
        r.catalog().classify(&server, &tool, vm.as_deref())
    })
    .await;
    let classification = match classified {
        Ok(c) => c,
        // A name the catalog refuses is a bad argument, said as such; any other error is a catalog that
        // cannot be read, and the tool stays unknown until it can.
        Err(e @ CatalogError::Invalid { .. }) => return Ok(reply::failure(&e.into()).into()),
        Err(e) => return Ok(unreadable_catalog(&args.server, &args.tool, e.into()).into()),
    };
    let question = Question::of(&classification);
    match classification.class {
        ToolClass::Mutating => {
            let message = format!(
                "{} changes VMs: call zerto_guard_before_mutate for {} first, and run it only if the verdict is guarded.",
                question.name(),
                question.target()
            );
            return Ok(done(classification, Next::GuardFirst, message, None).into());
        }
        ToolClass::ReadOnly => {
            let message = format!(
                "{} is read-only: run it, no checkpoint is needed.",
                question.name()
            );
            return Ok(done(classification, Next::Run, message, None).into());
        }
        ToolClass::Unknown => {}
    }

    if !can_show_a_form(ctx) {
        return Ok(not_asked(
            classification,
            "your client cannot show the human a form (it declared no elicitation capability)",
        )
        .into());
    }
    let legacy = ctx.protocol_version().is_none_or(|v| v.has_initialize());
    let answer = if legacy {
        let request = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: question.message(),
            requested_schema: question.form(),
        };
        match ctx
            .peer
            .create_elicitation_with_timeout(request, Some(ANSWER_TIMEOUT))
            .await
        {
            Ok(result) => result,
            Err(e) => {
                tracing::info!("asking the human about {} failed: {e}", question.name());
                let why = format!("asking the human failed ({e})");
                return Ok(not_asked(classification, &why).into());
            }
        }
    } else {
        // The state only says which question the answers belong to; like everything the client sends,
        // it is not trusted: answers to another question, or no answers, mean asking again.
        let expected = question.state();
        let answer = responses
            .as_ref()
            .and_then(|r| r.get(INPUT_KEY))
            .filter(|_| state.as_deref() == Some(expected.as_str()));
        match answer {
            None => return Ok(question.input_required().into()),
            Some(value) => match serde_json::from_value::<ElicitResult>(value.clone()) {
                Ok(result) => result,
                Err(_) => {
                    return Ok(not_asked(
                        classification,
                        "the client's answer to the form could not be read",
                    )
                    .into());
                }
            },
        }
    };
    Ok(answered(rewind, classification, answer).await)
}

/// Whether the client declared form elicitation (for this request on 2026-07-28, at initialize before).
fn can_show_a_form(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.client_capabilities()
        .and_then(|c| c.elicitation)
        // A client that declares elicitation without naming a mode takes forms (MCP 2025-06-18).
        .is_some_and(|e| e.form.is_some() || e.url.is_none())
}

/// The question about one unknown tool.
struct Question<'a> {
    server: &'a str,
    tool: &'a str,
    vm: Option<&'a str>,
}

impl<'a> Question<'a> {
    fn of(c: &'a Classification) -> Self {
        Question {
            server: &c.server,
            tool: &c.tool,
            vm: c.vm.as_deref(),
        }
    }

    fn name(&self) -> String {
        format!("{}/{}", self.server, self.tool)
    }

    fn target(&self) -> String {
        match self.vm {
            Some(vm) => format!("VM {vm}"),
            None => "the VM it acts on".to_string(),
        }
    }

    fn message(&self) -> String {
        text::ask_message(self.server, self.tool, self.vm)
    }

    /// The form: a required yes/no choice and an optional "remember" box.
    fn form(&self) -> ElicitationSchema {
        let choice = EnumSchema::builder(vec![YES.to_string(), NO.to_string()])
            .enum_titles(vec![text::ASK_YES.to_string(), text::ASK_NO.to_string()])
            .expect("two titles for two values")
            .title(text::ASK_CHECKPOINT_TITLE)
            .build();
        ElicitationSchema::builder()
            .required_enum_schema(FIELD_CHECKPOINT, choice)
            .optional_bool_with(FIELD_REMEMBER, |b| {
                b.title(text::ask_remember_title(self.server, self.tool))
                    .description(text::ASK_REMEMBER_DESCRIPTION)
                    .with_default(false)
            })
            .build()
            .expect("every required field of the form exists")
    }

    /// The request state of this question: the arguments it is about.
    fn state(&self) -> String {
        let about = serde_json::json!([self.server, self.tool, self.vm]);
        format!("zerto_check_tool/1 {about}")
    }

    /// The form as an `InputRequiredResult` (protocol 2026-07-28 and later).
    fn input_required(&self) -> InputRequiredResult {
        let mut requests = InputRequests::new();
        requests.insert(
            INPUT_KEY.to_string(),
            InputRequest::Elicitation(ElicitRequest::new(
                ElicitRequestParams::FormElicitationParams {
                    meta: None,
                    message: self.message(),
                    requested_schema: self.form(),
                },
            )),
        );
        InputRequiredResult::new(Some(requests), Some(self.state()))
    }
}

fn done(
    classification: Classification,
    next: Next,
    message: String,
    human: Option<HumanAnswer>,
) -> CallToolResult {
    let check = ToolCheck {
        classification,
        next,
        message,
        human,
    };
    let said = reply::Said::new(check.classification.headline(), check.message.clone());
    reply::ok(said, &check)
}

/// The human could not be asked: the question goes back to the agent.
fn not_asked(classification: Classification, why: &str) -> CallToolResult {
    let question = classification.human_question();
    let message = format!(
        "{}/{} is unknown and the human could not be asked here: {why}. Do not run it yet. Ask the human this question and wait for the answer: {question}",
        classification.server, classification.tool
    );
    let human = HumanAnswer {
        answered: false,
        checkpoint: None,
        remembered_as: None,
        note: Some(why.to_string()),
    };
    done(classification, Next::AskHuman, message, Some(human))
}

/// Reads the human's answer to the form, and remembers it when they asked for that.
async fn answered(
    rewind: &Rewind,
    classification: Classification,
    answer: ElicitResult,
) -> CallToolResponse {
    let content = match answer.action {
        ElicitationAction::Accept => answer.content,
        ElicitationAction::Decline => {
            return not_asked(classification, "the human declined to answer the form").into();
        }
        ElicitationAction::Cancel => {
            return not_asked(classification, "the human dismissed the form").into();
        }
        // An action this server does not know is not a yes.
        _ => {
            return not_asked(
                classification,
                "the client answered the form in a way this server does not know",
            )
            .into();
        }
    };
    let content = content.unwrap_or_default();
    let checkpoint = match content.get(FIELD_CHECKPOINT).and_then(|v| v.as_str()) {
        Some(YES) => true,
        Some(NO) => false,
        _ => {
            return not_asked(
                classification,
                "the form came back without a yes or no to the checkpoint question",
            )
            .into();
        }
    };
    let remember = content
        .get(FIELD_REMEMBER)
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    let question = Question::of(&classification);
    let (server, tool) = (classification.server.clone(), classification.tool.clone());
    let mut human = HumanAnswer {
        answered: true,
        checkpoint: Some(checkpoint),
        remembered_as: None,
        note: None,
    };
    if remember {
        let (s, t) = (server.clone(), tool.clone());
        let (class, written) = if checkpoint {
            let written = crate::on_files(rewind, move |r| r.catalog().add_mutating(&s, &t, None));
            (ToolClass::Mutating, written.await)
        } else {
            // Through the client, so a mutating entry recorded since the question was asked stays:
            // the catalog fails closed.
            let written = crate::on_files(rewind, move |r| {
                r.catalog().add_read_only_unless_mutating(&s, &t)
            });
            (ToolClass::ReadOnly, written.await)
        };
        match written {
            Ok(()) => human.remembered_as = Some(class),
            Err(e) => {
                human.note = Some(format!(
                    "the answer was not remembered: {e}; it holds for this call only"
                ))
            }
        }
    }
    let remembered = match human.remembered_as {
        Some(ToolClass::Mutating) => " It is now recorded as mutating in the catalog.",
        Some(ToolClass::ReadOnly) => " It is now recorded as read-only in the catalog.",
        _ => "",
    };
    let (next, message) = if checkpoint {
        (
            Next::GuardFirst,
            format!(
                "The human said to take a tagged checkpoint first: call zerto_guard_before_mutate for {}, and run {} only if the verdict is guarded.{remembered}",
                question.target(),
                question.name()
            ),
        )
    } else {
        (
            Next::RunUnguarded,
            format!(
                "The human said no checkpoint: {} may run, but Zerto cannot rewind this change. Say so plainly when you report it.{remembered}",
                question.name()
            ),
        )
    };
    done(classification, next, message, Some(human)).into()
}

/// The catalog cannot be read: the tool is treated as unknown, and the reason is the error.
fn unreadable_catalog(server: &str, tool: &str, err: RewindError) -> CallToolResult {
    let report = err.report();
    let said = reply::Said::new(
        report.message.clone(),
        format!(
            "Until the catalog can be read, treat {server}/{tool} as unknown: ask the human whether to take a tagged checkpoint first, and do not run it before they answer."
        ),
    );
    reply::answer(said, &report, true)
}
