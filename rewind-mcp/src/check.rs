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
    let classification = match classify(rewind, args).await {
        Ok(c) => c,
        Err(refused) => return Ok(refused.into()),
    };
    if let Some((next, message)) = known(&classification) {
        return Ok(done(classification, next, message, None).into());
    }
    Ok(ask_human(rewind, classification, ctx, state, responses).await)
}

/// The catalog's classification of the call, or the answer when the catalog gives none.
async fn classify(rewind: &Rewind, args: CheckToolArgs) -> Result<Classification, CallToolResult> {
    let vm = given(args.vm);
    let (server, tool) = (args.server.clone(), args.tool.clone());
    let classified = crate::local_files::on_files(rewind, move |r| {
        r.catalog().classify(&server, &tool, vm.as_deref())
    })
    .await;
    classified.map_err(|e| match e {
        // A name the catalog refuses is a bad argument, said as such; any other error is a catalog that
        // cannot be read, and the tool stays unknown until it can.
        e @ CatalogError::Invalid { .. } => reply::failure(&e.into()),
        e => unreadable_catalog(&args.server, &args.tool, e.into()),
    })
}

/// What to do with a tool the catalog knows, said for the model; `None` for an unknown tool.
fn known(classification: &Classification) -> Option<(Next, String)> {
    let question = Question::of(classification);
    match classification.class {
        ToolClass::Mutating => Some((
            Next::GuardFirst,
            format!(
                "{} changes VMs: call zerto_guard_before_mutate for {} first, and run it only if the verdict is guarded.",
                question.name(),
                question.target()
            ),
        )),
        ToolClass::ReadOnly => Some((
            Next::Run,
            format!(
                "{} is read-only: run it, no checkpoint is needed.",
                question.name()
            ),
        )),
        ToolClass::Unknown => None,
    }
}

/// Why the human's answer to the question is not at hand.
enum Unanswered {
    /// The client must show the form and call again with the answer (protocol 2026-07-28 on).
    AskThroughClient,
    /// The human could not be asked: why.
    NotAsked(String),
}

/// Puts the question about an unknown tool to the human, in the way the client's protocol allows.
async fn ask_human(
    rewind: &Rewind,
    classification: Classification,
    ctx: &RequestContext<RoleServer>,
    state: Option<String>,
    responses: Option<InputResponses>,
) -> CallToolResponse {
    if !can_show_a_form(ctx) {
        return not_asked(
            classification,
            "your client cannot show the human a form (it declared no elicitation capability)",
        )
        .into();
    }
    let question = Question::of(&classification);
    let legacy = ctx.protocol_version().is_none_or(|v| v.has_initialize());
    let answer = if legacy {
        elicit(ctx, &question).await
    } else {
        given_answer(&question, state.as_deref(), responses.as_ref())
    };
    let may_remember = match crate::roles::cannot_change_catalog(rewind.config(), ctx) {
        None => Ok(()),
        Some(why) => Err(why),
    };
    match answer {
        Ok(answer) => answered(rewind, classification, answer, may_remember).await,
        Err(Unanswered::AskThroughClient) => question.input_required().into(),
        Err(Unanswered::NotAsked(why)) => not_asked(classification, &why).into(),
    }
}

/// Up to protocol 2025-11-25: asks the human with an `elicitation/create` request, and waits.
async fn elicit(
    ctx: &RequestContext<RoleServer>,
    question: &Question<'_>,
) -> Result<ElicitResult, Unanswered> {
    let request = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: question.message(),
        requested_schema: question.form(),
    };
    ctx.peer
        .create_elicitation_with_timeout(request, Some(ANSWER_TIMEOUT))
        .await
        .map_err(|e| {
            tracing::info!("asking the human about {} failed: {e}", question.name());
            Unanswered::NotAsked(format!("asking the human failed ({e})"))
        })
}

/// From protocol 2026-07-28 on: the answer the client sent with this call, if it is one to this
/// question.
fn given_answer(
    question: &Question<'_>,
    state: Option<&str>,
    responses: Option<&InputResponses>,
) -> Result<ElicitResult, Unanswered> {
    // The state only says which question the answers belong to; like everything the client sends,
    // it is not trusted: answers to another question, or no answers, mean asking again.
    let expected = question.state();
    let answer = responses
        .and_then(|r| r.get(INPUT_KEY))
        .filter(|_| state == Some(expected.as_str()))
        .ok_or(Unanswered::AskThroughClient)?;
    serde_json::from_value::<ElicitResult>(answer.clone()).map_err(|_| {
        Unanswered::NotAsked("the client's answer to the form could not be read".to_string())
    })
}

/// Whether the client declared form elicitation (for this request on 2026-07-28, at initialize before).
pub(crate) fn can_show_a_form(ctx: &RequestContext<RoleServer>) -> bool {
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
        form_input_required(INPUT_KEY, self.message(), self.form(), self.state())
    }
}

/// A form as an `InputRequiredResult` (protocol 2026-07-28 and later): the one input `key`, and
/// the request `state` the client sends back with the answer.
pub(crate) fn form_input_required(
    key: &str,
    message: String,
    form: ElicitationSchema,
    state: String,
) -> InputRequiredResult {
    let mut requests = InputRequests::new();
    requests.insert(
        key.to_string(),
        InputRequest::Elicitation(ElicitRequest::new(
            ElicitRequestParams::FormElicitationParams {
                meta: None,
                message,
                requested_schema: form,
            },
        )),
    );
    InputRequiredResult::new(Some(requests), Some(state))
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

/// Reads the human's answer to the form, and remembers it when they asked for that and the caller
/// may change the catalog (`may_remember`: why not, otherwise).
async fn answered(
    rewind: &Rewind,
    classification: Classification,
    answer: ElicitResult,
    may_remember: Result<(), String>,
) -> CallToolResponse {
    let form = match FormAnswer::read(answer) {
        Ok(form) => form,
        Err(why) => return not_asked(classification, why).into(),
    };
    let mut human = HumanAnswer {
        answered: true,
        checkpoint: Some(form.checkpoint),
        remembered_as: None,
        note: None,
    };
    if form.remember {
        let remembered = match may_remember {
            Ok(()) => remember(rewind, &classification, form.checkpoint).await,
            Err(why) => Err(format!(
                "the answer was not remembered: {why}; it holds for this call only"
            )),
        };
        match remembered {
            Ok(class) => human.remembered_as = Some(class),
            Err(note) => human.note = Some(note),
        }
    }
    let (next, message) = after_answer(&Question::of(&classification), &human, form.checkpoint);
    done(classification, next, message, Some(human)).into()
}

/// The choice and the box of a form the human accepted.
struct FormAnswer {
    /// Take a tagged checkpoint first.
    checkpoint: bool,
    /// Remember the answer for every call of the tool.
    remember: bool,
}

impl FormAnswer {
    /// The human's answer, or why there is none to act on.
    fn read(answer: ElicitResult) -> Result<FormAnswer, &'static str> {
        let content = match answer.action {
            ElicitationAction::Accept => answer.content.unwrap_or_default(),
            ElicitationAction::Decline => return Err("the human declined to answer the form"),
            ElicitationAction::Cancel => return Err("the human dismissed the form"),
            // An action this server does not know is not a yes.
            _ => return Err("the client answered the form in a way this server does not know"),
        };
        let checkpoint = match content.get(FIELD_CHECKPOINT).and_then(|v| v.as_str()) {
            Some(YES) => true,
            Some(NO) => false,
            _ => return Err("the form came back without a yes or no to the checkpoint question"),
        };
        let remember = content
            .get(FIELD_REMEMBER)
            .and_then(|v| v.as_bool())
            .unwrap_or(false);
        Ok(FormAnswer {
            checkpoint,
            remember,
        })
    }
}

/// Records the answer in the catalog for every later call of the tool: with yes as mutating, with
/// no as read-only. Gives the class recorded, or the note that says why it was not.
async fn remember(
    rewind: &Rewind,
    classification: &Classification,
    checkpoint: bool,
) -> Result<ToolClass, String> {
    let (s, t) = (classification.server.clone(), classification.tool.clone());
    let (class, written) = if checkpoint {
        let written =
            crate::local_files::on_files(rewind, move |r| r.catalog().add_mutating(&s, &t, None));
        (ToolClass::Mutating, written.await)
    } else {
        // Through the client, so a mutating entry recorded since the question was asked stays:
        // the catalog fails closed.
        let written = crate::local_files::on_files(rewind, move |r| {
            r.catalog().add_read_only_unless_mutating(&s, &t)
        });
        (ToolClass::ReadOnly, written.await)
    };
    written
        .map(|()| class)
        .map_err(|e| format!("the answer was not remembered: {e}; it holds for this call only"))
}

/// What to do after the human answered, said for the model with how the answer was remembered.
fn after_answer(question: &Question<'_>, human: &HumanAnswer, checkpoint: bool) -> (Next, String) {
    let remembered = match (human.remembered_as, &human.note) {
        (Some(ToolClass::Mutating), _) => {
            " It is now recorded as mutating in the catalog.".to_owned()
        }
        (Some(ToolClass::ReadOnly), _) => {
            " It is now recorded as read-only in the catalog.".to_owned()
        }
        (_, Some(note)) => format!(" Note: {note}; the next call of it asks again."),
        _ => String::new(),
    };
    if checkpoint {
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
    }
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
