//! Asking the human through the client's form, as every question of the server does
//! (`zerto_check_tool`'s about an unknown tool, the yes before a tool only a person may start, the
//! gateway's about an upstream's unknown tool):
//! whether the client can show a form, how long the human has, and the two ways of asking.
//!
//! - Up to protocol 2025-11-25, an `elicitation/create` request sent while the call is open.
//! - From 2026-07-28 on, where a server may not send requests, the call is answered with an
//!   `InputRequiredResult` that holds the form; the client asks the human and calls again with the
//!   answer (`inputResponses`) and the `requestState` it was given ([`FormRound`]).

use std::time::Duration;

use rmcp::ErrorData;
use rmcp::handler::server::common::FromContextPart;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationSchema, EnumSchema, InputRequest,
    InputRequests, InputRequiredResult, InputResponses,
};
use rmcp::service::{RequestContext, RoleServer};

/// How long the human has to answer the form before the question goes back to the agent.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(600);

/// The value of a yes, and of a no, in a form's choice.
pub(crate) const YES: &str = "yes";
pub(crate) const NO: &str = "no";

/// A required choice between yes and no, titled `title`, its two options titled `yes` and `no`.
pub(crate) fn yes_or_no(title: &'static str, yes: String, no: String) -> EnumSchema {
    EnumSchema::builder(vec![YES.to_string(), NO.to_string()])
        .enum_titles(vec![yes, no])
        .expect("two titles for two values")
        .title(title)
        .build()
}

/// One question for the human, as a form.
#[derive(Debug)]
pub(crate) struct Form {
    /// The key of the question in an `InputRequiredResult` and in the answers sent back.
    pub(crate) key: &'static str,
    /// What the form says.
    pub(crate) message: String,
    /// Its fields.
    pub(crate) fields: ElicitationSchema,
    /// The request state that names the call the question belongs to (its tool and arguments), so
    /// that an answer given to another call is not taken for this one.
    pub(crate) state: String,
}

/// Why the human's answer is not at hand.
#[derive(Debug)]
pub(crate) enum Unanswered {
    /// The client cannot show a form: it declared no elicitation capability.
    NoForm,
    /// The client must show the form and call again with the answer (protocol 2026-07-28 on):
    /// answer the call with this.
    AskThroughClient(Box<InputRequiredResult>),
    /// The human could not be asked: why.
    NotAsked(String),
}

/// Asks the human `form`, in the way the client's protocol allows, and gives their answer as the
/// client sent it; reading it is the question's own.
pub(crate) async fn ask(
    ctx: &RequestContext<RoleServer>,
    round: &FormRound,
    form: Form,
) -> Result<ElicitResult, Unanswered> {
    if !can_show_a_form(ctx) {
        return Err(Unanswered::NoForm);
    }
    if ctx.protocol_version().is_none_or(|v| v.has_initialize()) {
        return elicit(ctx, form).await;
    }
    let Some(answer) = round.answer(form.key, &form.state) else {
        return Err(Unanswered::AskThroughClient(Box::new(input_required(form))));
    };
    serde_json::from_value::<ElicitResult>(answer.clone()).map_err(|_| {
        Unanswered::NotAsked("the client's answer to the form could not be read".to_string())
    })
}

/// Whether the client declared form elicitation (for this request on 2026-07-28, at initialize before).
fn can_show_a_form(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.client_capabilities()
        .and_then(|c| c.elicitation)
        // A client that declares elicitation without naming a mode takes forms (MCP 2025-06-18).
        .is_some_and(|e| e.form.is_some() || e.url.is_none())
}

/// Up to protocol 2025-11-25: asks with an `elicitation/create` request, and waits.
async fn elicit(ctx: &RequestContext<RoleServer>, form: Form) -> Result<ElicitResult, Unanswered> {
    let state = form.state;
    let request = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: form.message,
        requested_schema: form.fields,
    };
    ctx.peer
        .create_elicitation_with_timeout(request, Some(ANSWER_TIMEOUT))
        .await
        .map_err(|e| {
            tracing::info!("asking the human ({state}) failed: {e}");
            Unanswered::NotAsked(format!("asking the human failed ({e})"))
        })
}

/// The form as an `InputRequiredResult` (protocol 2026-07-28 and later): its one input, and the
/// request state the client sends back with the answer.
fn input_required(form: Form) -> InputRequiredResult {
    let mut requests = InputRequests::new();
    requests.insert(
        form.key.to_string(),
        InputRequest::Elicitation(ElicitRequest::new(
            ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: form.message,
                requested_schema: form.fields,
            },
        )),
    );
    InputRequiredResult::new(Some(requests), Some(form.state))
}

/// What the client sent back with a call for a form asked the round before (protocol 2026-07-28
/// on): the request state that names that round, and the human's answers. Both are `None` on a
/// first call, and on every call of an older protocol.
#[derive(Debug)]
pub(crate) struct FormRound {
    state: Option<String>,
    answers: Option<InputResponses>,
}

impl<S> FromContextPart<ToolCallContext<'_, S>> for FormRound {
    fn from_context_part(context: &mut ToolCallContext<'_, S>) -> Result<Self, ErrorData> {
        Ok(FormRound {
            state: context.request_state.take(),
            answers: context.input_responses.take(),
        })
    }
}

impl FormRound {
    /// The round a call's own parameters carry: what the gateway, which reads the call whole,
    /// asks with.
    pub(crate) fn of(request: &mut rmcp::model::CallToolRequestParams) -> FormRound {
        FormRound {
            state: request.request_state.take(),
            answers: request.input_responses.take(),
        }
    }

    /// The answer given under `key`, when the round is the one `state` names. The state only says
    /// which question the answers belong to; like everything the client sends, it is not trusted:
    /// answers to another question, or no answers, mean asking again.
    fn answer(&self, key: &str, state: &str) -> Option<&serde_json::Value> {
        self.answers
            .as_ref()
            .and_then(|a| a.get(key))
            .filter(|_| self.state.as_deref() == Some(state))
    }
}
