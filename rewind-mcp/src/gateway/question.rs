//! The question about an upstream's unknown tool, put to the human through the client's form: take
//! a tagged checkpoint first (the call is then guarded as a mutating one), or run it without one.
//! A client that cannot show a form, and any answer that is not a yes or a no (declined,
//! dismissed, timed out), leave it unanswered: the call is then held for a person's approval
//! ([`crate::held`]).

use rewind_core::Classification;
use rmcp::model::{ElicitResult, ElicitationAction, ElicitationSchema, InputRequiredResult};
use rmcp::service::{RequestContext, RoleServer};

use super::served::Served;
use crate::form::{self, Form, FormRound, NO, Unanswered, YES, yes_or_no};

/// The key of the question in an `InputRequiredResult`.
const INPUT_KEY: &str = "gateway_question";

/// The form's one choice.
const FIELD_CHECKPOINT: &str = "checkpoint";

/// What the human said.
#[derive(Debug)]
pub enum Answer {
    /// Take a tagged checkpoint first.
    GuardFirst,
    /// Run it without one.
    NoCheckpoint,
    /// Nobody answered here: why (the call is then held for a person's approval).
    Unanswered(String),
    /// The client shows the form and calls again (protocol 2026-07-28 on).
    AskThroughClient(Box<InputRequiredResult>),
}

/// Asks the human about the unknown tool `served` the call of `class` names.
pub async fn ask(
    served: &Served,
    class: &Classification,
    ctx: &RequestContext<RoleServer>,
    round: &FormRound,
) -> Answer {
    let name = format!("{}__{}", served.slot.upstream.name, served.tool);
    let vm = class.vm.as_deref().or(served.slot.upstream.vm.as_deref());
    let question = rewind_core::catalog::question_for(&served.slot.upstream.name, &served.tool, vm);
    let fields = ElicitationSchema::builder()
        .required_enum_schema(
            FIELD_CHECKPOINT,
            yes_or_no(
                "Take a tagged checkpoint first?",
                "Yes: guard the VM first, then run the tool".into(),
                "No: run it without a checkpoint (Zerto cannot rewind this change)".into(),
            ),
        )
        .build()
        .expect("every required field of the form exists");
    let form = Form {
        key: INPUT_KEY,
        message: question.clone(),
        fields,
        state: format!("gateway/1 {}", serde_json::json!([name, vm])),
    };
    let unanswered = |why: &str| Answer::Unanswered(why.to_owned());
    match form::ask(ctx, round, form).await {
        Ok(answer) => read(answer).unwrap_or_else(&unanswered),
        Err(Unanswered::NoForm) => unanswered("the client cannot show a form"),
        Err(Unanswered::AskThroughClient(form)) => Answer::AskThroughClient(form),
        Err(Unanswered::NotAsked(why)) => unanswered(&why),
    }
}

/// A yes or a no from the form; anything else is why there is none.
fn read(answer: ElicitResult) -> Result<Answer, &'static str> {
    if answer.action != ElicitationAction::Accept {
        return Err("the human did not answer the form");
    }
    let content = answer.content.unwrap_or_default();
    match content.get(FIELD_CHECKPOINT).and_then(|v| v.as_str()) {
        Some(YES) => Ok(Answer::GuardFirst),
        Some(NO) => Ok(Answer::NoCheckpoint),
        _ => Err("the form came back without a yes or no"),
    }
}
