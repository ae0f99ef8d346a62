//! The tool catalog's tools: `zerto_check_tool` (how a tool call is classified, and the human asked
//! about an unknown one), `zerto_add_mutating_tool` and `zerto_add_read_only_tool`, their arguments
//! and their answers.
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

use rewind_core::catalog::{CatalogError, Classification, ToolClass};
use rewind_core::{Rewind, RewindError};
use rmcp::model::{
    CallToolResponse, CallToolResult, ElicitResult, ElicitationAction, ElicitationSchema,
    JsonObject,
};
use rmcp::schemars::{self, JsonSchema};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{tool, tool_router};
use serde::{Deserialize, Serialize};

use super::call::{arguments, or_answer};
use crate::args::{self, given};
use crate::form::{self, Form, FormRound, NO, Unanswered, YES, yes_or_no};
use crate::held;
use crate::local_files::on_files;
use crate::reply::{self, Said};
use crate::roles;
use crate::server::RewindServer;

/// zerto_check_tool.
const CHECK_TOOL: &str = "\
Ask whether a tool call changes a VM, before you make it. server: the MCP server that offers the tool \
(claude-code for Claude Code's own tools such as Bash or Edit); tool: its name; vm: the VM the call acts on, if you know it. \
The result's class: mutating = call zerto_guard_before_mutate for the VM first and proceed only on guarded; \
read_only = go ahead; unknown = nobody has classified the tool, which is NOT the same as safe. \
For an unknown tool this server asks the human directly when your client can show a form, and the result's next field gives their answer: \
guard_first (guard, then run), run_unguarded (run it, and say plainly that Zerto cannot rewind this change). \
When the human could not be asked, next is ask_human: put the result's question to the human yourself, wait for the answer, and do not run the tool meanwhile. \
Changes nothing, except the catalog entry the human asks to remember.";

/// zerto_add_mutating_tool.
const ADD_MUTATING: &str = "\
Record in the tool catalog that a tool changes VMs, so every later call of it is guarded first \
(zerto_check_tool answers mutating, and a Claude Code hook blocks it until the VM is guarded). \
Call it when the human says a tool should always get a checkpoint first. server and tool as in zerto_check_tool; \
tool may be * for every tool of the server; vm_arg (optional) names the tool's argument that holds the VM (dotted for nested arguments, e.g. target.host). \
Adding again with the same arguments changes nothing; with another vm_arg, it replaces the one recorded.";

/// zerto_add_read_only_tool.
const ADD_READ_ONLY: &str = "\
Record in the tool catalog that a tool never changes a VM, so it is no longer asked about. \
Call it only when the human has said so. A tool the catalog already marks mutating is not downgraded here: \
the call is a tool error that changes nothing, and the human removes that entry with the rewind CLI. Adding again changes nothing.";

/// `zerto_check_tool`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct CheckToolArgs {
    /// The MCP server that offers the tool, as the host names it (claude-code for Claude Code's own
    /// tools).
    pub(super) server: String,
    /// The tool's name.
    pub(super) tool: String,
    /// The VM the call will act on, if known.
    #[serde(default)]
    pub(super) vm: Option<String>,
}

/// `zerto_add_mutating_tool`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct AddMutatingArgs {
    /// The MCP server that offers the tool (claude-code for Claude Code's own tools).
    pub(super) server: String,
    /// The tool's name, or * for every tool of the server.
    pub(super) tool: String,
    /// The tool's argument that names the VM it acts on (dotted for nested arguments, e.g.
    /// target.host), so that the Claude Code hook can check that VM was guarded.
    #[serde(default)]
    pub(super) vm_arg: Option<String>,
}

/// `zerto_add_read_only_tool`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct AddReadOnlyArgs {
    /// The MCP server that offers the tool (claude-code for Claude Code's own tools).
    pub(super) server: String,
    /// The tool's name, or * for every tool of the server.
    pub(super) tool: String,
}

/// The form's message when asking the human about an unknown tool.
pub(super) fn ask_message(server: &str, tool: &str, vm: Option<&str>) -> String {
    let target = match vm {
        Some(vm) => format!("VM {vm}"),
        None => "a VM".to_string(),
    };
    format!(
        "An agent wants to run the tool {tool} of {server} on {target}. Nobody has said whether this tool changes a VM. \
         Should rewind take a tagged checkpoint of {target} in every protecting VPG first, so that Zerto can rewind the change?"
    )
}

/// The title of the form's yes/no choice.
pub(super) const ASK_CHECKPOINT_TITLE: &str = "Take a tagged checkpoint first?";

/// The title of the "yes" option.
pub(super) const ASK_YES: &str = "Yes: guard the VM first, then run the tool";

/// The title of the "no" option.
pub(super) const ASK_NO: &str = "No: run it without a checkpoint (Zerto cannot rewind this change)";

/// The title of the form's "remember" box.
pub(super) fn ask_remember_title(server: &str, tool: &str) -> String {
    format!("Remember this answer for every call of {server}/{tool}")
}

/// What ticking "remember" does.
pub(super) const ASK_REMEMBER_DESCRIPTION: &str = "With Yes, the tool is recorded as mutating: every later call is guarded first. \
With No, it is recorded as read-only: it runs without a checkpoint and is not asked about again.";

#[tool_router(router = catalog_tools, vis = "pub(super)")]
impl RewindServer {
    #[tool(
        name = "zerto_check_tool",
        description = CHECK_TOOL,
        input_schema = args::schema::<CheckToolArgs>(),
        output_schema = reply::output_schema_holding::<ToolCheck>(),
        annotations(title = "Check whether a tool changes a VM", read_only_hint = true, open_world_hint = false)
    )]
    async fn check_tool(
        &self,
        ctx: RequestContext<RoleServer>,
        round: FormRound,
        args: JsonObject,
    ) -> CallToolResponse {
        let a: CheckToolArgs = or_answer!(arguments("zerto_check_tool", args));
        let classification = or_answer!(classify(&self.rewind, a).await);
        if let Some((next, message)) = known(&classification) {
            return done(classification, next, message, None).into();
        }
        ask_human(&self.rewind, classification, &ctx, &round).await
    }

    #[tool(
        name = "zerto_add_mutating_tool",
        description = ADD_MUTATING,
        input_schema = args::schema::<AddMutatingArgs>(),
        output_schema = reply::output_schema::<Classification>(),
        annotations(
            title = "Record a tool as mutating",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn add_mutating_tool(&self, args: JsonObject) -> CallToolResult {
        let a: AddMutatingArgs = or_answer!(arguments("zerto_add_mutating_tool", args));
        let vm_arg = given(a.vm_arg);
        let added = on_files(&self.rewind, move |r| {
            let catalog = r.catalog();
            catalog.add_mutating(&a.server, &a.tool, vm_arg.as_deref())?;
            catalog.classify(&a.server, &a.tool, None)
        })
        .await;
        recorded(
            added,
            "mutating",
            "Guard the VM it changes (zerto_guard_before_mutate) before every call of it.",
        )
    }

    #[tool(
        name = "zerto_add_read_only_tool",
        description = ADD_READ_ONLY,
        input_schema = args::schema::<AddReadOnlyArgs>(),
        output_schema = reply::output_schema::<Classification>(),
        annotations(
            title = "Record a tool as read-only",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn add_read_only_tool(&self, args: JsonObject) -> CallToolResult {
        let a: AddReadOnlyArgs = or_answer!(arguments("zerto_add_read_only_tool", args));
        if let Some(refusal) = upstream_of_gateway(&self.rewind, &a.server) {
            return refusal;
        }
        let added = on_files(&self.rewind, move |r| {
            let catalog = r.catalog();
            catalog.add_read_only_unless_mutating(&a.server, &a.tool)?;
            catalog.classify(&a.server, &a.tool, None)
        })
        .await;
        recorded(
            added,
            "read-only",
            "It runs without a checkpoint, and is not asked about again.",
        )
    }
}

/// The refusal of `zerto_add_read_only_tool` for a server the gateway forwards to: an agent does not
/// unguard the tools the gateway guards; a person does (`rewind catalog add-read-only`).
fn upstream_of_gateway(rewind: &Rewind, server: &str) -> Option<CallToolResult> {
    let upstreams = &rewind.config().gateway.upstreams;
    upstreams.iter().any(|u| u.name == server).then(|| {
        reply::report(rewind_core::ErrorReport::new(
            rewind_core::ErrorKind::Refused,
            format!(
                "{server} is an upstream of this gateway, whose tools it guards; only a person makes one of them read-only, with rewind catalog add-read-only {server} TOOL. Nothing was changed."
            ),
        ))
    })
}

/// The answer of a catalog entry added: the tool's classification read back as `class`, and
/// `next`; or why it was not added.
fn recorded(
    added: Result<Classification, CatalogError>,
    class: &str,
    next: &str,
) -> CallToolResult {
    match added {
        Ok(c) => reply::ok(
            Said::new(
                format!("{}/{} is recorded as {class}", c.server, c.tool),
                next,
            ),
            &c,
        ),
        Err(e) => reply::failure(&e.into()),
    }
}

/// The key of the question in an `InputRequiredResult` and in the answers sent back.
const INPUT_KEY: &str = "checkpoint_question";

/// The form's choice and box.
const FIELD_CHECKPOINT: &str = "checkpoint";
const FIELD_REMEMBER: &str = "remember";

/// What the agent should do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Next {
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
struct HumanAnswer {
    /// Whether the human answered the form.
    answered: bool,
    /// Their answer: take a tagged checkpoint first.
    #[serde(skip_serializing_if = "Option::is_none")]
    checkpoint: Option<bool>,
    /// How the answer was remembered in the catalog, when they asked for that.
    #[serde(skip_serializing_if = "Option::is_none")]
    remembered_as: Option<ToolClass>,
    /// Why they could not be asked, or why remembering failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
}

/// The result of `zerto_check_tool`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
struct ToolCheck {
    /// The catalog's classification (server, tool, vm, class, source, vm_arg, question).
    #[serde(flatten)]
    classification: Classification,
    /// What to do next.
    next: Next,
    /// The same in words, for the model.
    message: String,
    /// The human's answer, for an unknown tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    human: Option<HumanAnswer>,
}

/// The catalog's classification of the call, or the answer when the catalog gives none.
async fn classify(rewind: &Rewind, args: CheckToolArgs) -> Result<Classification, CallToolResult> {
    let vm = given(args.vm);
    let (server, tool) = (args.server.clone(), args.tool.clone());
    let classified = on_files(rewind, move |r| {
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

/// Puts the question about an unknown tool to the human, in the way the client's protocol allows.
async fn ask_human(
    rewind: &Rewind,
    classification: Classification,
    ctx: &RequestContext<RoleServer>,
    round: &FormRound,
) -> CallToolResponse {
    let answer = form::ask(ctx, round, Question::of(&classification).form()).await;
    let may_remember = match roles::cannot_change_catalog(rewind.config(), ctx) {
        None => Ok(()),
        Some(why) => Err(why),
    };
    match answer {
        Ok(answer) => answered(rewind, classification, answer, may_remember).await,
        Err(Unanswered::NoForm) if crate::sign_in::caller(ctx).is_some() => {
            held_question(rewind, classification, ctx).await.into()
        }
        Err(Unanswered::NoForm) => not_asked(
            classification,
            "your client cannot show the human a form (it declared no elicitation capability)",
        )
        .into(),
        Err(Unanswered::AskThroughClient(form)) => (*form).into(),
        Err(Unanswered::NotAsked(why)) => not_asked(classification, &why).into(),
    }
}

/// On a team server, the question a client without a form cannot put to its human is held for a
/// person's approval: approved, the identical check answers "take a tagged checkpoint first, then
/// run it"; denied, "do not run it", with the person's comment.
async fn held_question(
    rewind: &Rewind,
    classification: Classification,
    ctx: &RequestContext<RoleServer>,
) -> CallToolResult {
    let c = &classification;
    let on =
        c.vm.as_deref()
            .map_or_else(String::new, |vm| format!(" on VM {vm}"));
    let what = format!(
        "An agent asks whether it may run {}/{}{on}, which nobody has said changes a VM or not, and its client cannot ask its human. Approving tells it to take a tagged checkpoint first (guard the VM), then run it once; denying tells it not to run it.",
        c.server, c.tool
    );
    let proposal = held::Proposal {
        server: rewind_core::catalog::ZERTO_REWIND.to_owned(),
        tool: "zerto_check_tool".to_owned(),
        vm: c.vm.clone(),
        arguments: serde_json::json!({"server": c.server, "tool": c.tool, "vm": c.vm}),
        what,
    };
    let call = match held::gate(rewind, ctx, proposal, held::Shape::Structured).await {
        held::Gate::Run(call) => call,
        held::Gate::Answer(answer) => return answer,
    };
    let by = call
        .decision
        .as_ref()
        .map_or_else(|| "a person".to_owned(), |d| d.by.to_string());
    let human = HumanAnswer {
        answered: true,
        checkpoint: Some(true),
        remembered_as: None,
        note: Some(format!("approved by {by} on held call {}", call.id)),
    };
    let (next, message) = after_answer(&Question::of(c), &human, true);
    let answer = done(classification, next, message, Some(human));
    held::ended(rewind, &call, &answer).await;
    answer
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

    /// The question as a form, its request state naming the arguments it is about.
    fn form(&self) -> Form {
        let about = serde_json::json!([self.server, self.tool, self.vm]);
        Form {
            key: INPUT_KEY,
            message: ask_message(self.server, self.tool, self.vm),
            fields: self.fields(),
            state: format!("zerto_check_tool/1 {about}"),
        }
    }

    /// A required yes/no choice and an optional "remember" box.
    fn fields(&self) -> ElicitationSchema {
        let choice = yes_or_no(ASK_CHECKPOINT_TITLE, ASK_YES.into(), ASK_NO.into());
        ElicitationSchema::builder()
            .required_enum_schema(FIELD_CHECKPOINT, choice)
            .optional_bool_with(FIELD_REMEMBER, |b| {
                b.title(ask_remember_title(self.server, self.tool))
                    .description(ASK_REMEMBER_DESCRIPTION)
                    .with_default(false)
            })
            .build()
            .expect("every required field of the form exists")
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
    let said = Said::new(check.classification.headline(), check.message.clone());
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
        let written = on_files(rewind, move |r| r.catalog().add_mutating(&s, &t, None));
        (ToolClass::Mutating, written.await)
    } else {
        // Through the client, so a mutating entry recorded since the question was asked stays:
        // the catalog fails closed.
        let written = on_files(rewind, move |r| {
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
    let said = Said::new(
        report.message.clone(),
        format!(
            "Until the catalog can be read, treat {server}/{tool} as unknown: ask the human whether to take a tagged checkpoint first, and do not run it before they answer."
        ),
    );
    reply::answer(said, &report, true)
}
