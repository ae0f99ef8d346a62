//! A person's yes before a tool acts: the tools an agent may only propose (keeping a change's tags
//! past the journal) ask the human every time, with a form that names what will be done, and act
//! only on an accepted yes.
//!
//! - Up to protocol 2025-11-25 the form is an `elicitation/create` request sent while the call is
//!   open.
//! - From 2026-07-28 on, the call is answered with an `InputRequiredResult` holding the form; the
//!   client asks the human and calls again with the answer and the request state it was given. The
//!   state names the call's arguments, so an answer given to another call is not taken for this one.
//!
//! Anything but an accepted yes (no elicitation capability, a no, a declined or dismissed form, a
//! timeout, an answer that cannot be read) is no: the tool does nothing and says why, for the agent
//! to tell the human.
//!
//! What every question to the human shares, `zerto_check_tool`'s too, is here as well: whether the
//! client can show a form, how long the human has, and the form as an `InputRequiredResult`.

use std::time::Duration;

use rmcp::ErrorData;
use rmcp::handler::server::common::FromContextPart;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CallToolResponse, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, EnumSchema, InputRequest, InputRequests, InputRequiredResult,
    InputResponses,
};
use rmcp::service::{RequestContext, RoleServer};

/// How long the human has to answer the form before the question goes back to the agent.
pub(super) const ANSWER_TIMEOUT: Duration = Duration::from_secs(600);

/// Whether the client declared form elicitation (for this request on 2026-07-28, at initialize before).
pub(super) fn can_show_a_form(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.client_capabilities()
        .and_then(|c| c.elicitation)
        // A client that declares elicitation without naming a mode takes forms (MCP 2025-06-18).
        .is_some_and(|e| e.form.is_some() || e.url.is_none())
}

/// A form as an `InputRequiredResult` (protocol 2026-07-28 and later): the one input `key`, and
/// the request `state` the client sends back with the answer.
pub(super) fn form_input_required(
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

/// What the client sent back with a call for a form asked the round before (protocol 2026-07-28
/// on): the request state that names that round, and the human's answers. Both are `None` on a
/// first call, and on every call of an older protocol.
#[derive(Debug)]
pub(super) struct FormRound {
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
    /// The answer given under `key`, when the round is the one `state` names. The state only says
    /// which question the answers belong to; like everything the client sends, it is not trusted:
    /// answers to another question, or no answers, mean asking again.
    pub(super) fn answer(&self, key: &str, state: &str) -> Option<&serde_json::Value> {
        self.answers
            .as_ref()
            .and_then(|a| a.get(key))
            .filter(|_| self.state.as_deref() == Some(state))
    }
}

/// The key of the question in an `InputRequiredResult` and in the answers sent back.
const INPUT_KEY: &str = "consent";
/// The form's one choice.
const FIELD: &str = "proceed";
const YES: &str = "yes";
const NO: &str = "no";

/// One question put to the human before a tool acts.
#[derive(Debug, Clone)]
pub(super) struct Question {
    /// The tool asking.
    pub(super) tool: &'static str,
    /// What will be done, and what it costs, in the human's words.
    pub(super) message: String,
    /// The title of the yes.
    pub(super) yes: String,
    /// The title of the no.
    pub(super) no: String,
    /// The call's arguments, as the request state names them.
    pub(super) about: serde_json::Value,
}

/// What came of asking.
#[derive(Debug)]
pub(super) enum Consent {
    /// The human said yes: act.
    Given,
    /// No yes: why, for the agent to tell the human. Nothing is done.
    Refused(String),
    /// The client must show the form and call again (protocol 2026-07-28 on): answer with this.
    AskThroughClient(Box<CallToolResponse>),
}

impl Question {
    /// Asks the human, in the way the client's protocol allows.
    pub(super) async fn ask(&self, ctx: &RequestContext<RoleServer>, round: &FormRound) -> Consent {
        if !can_show_a_form(ctx) {
            return Consent::Refused(
                "the human could not be asked: the client cannot show a form (it declared no elicitation capability)".to_string(),
            );
        }
        let legacy = ctx.protocol_version().is_none_or(|v| v.has_initialize());
        let answer = if legacy {
            let request = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: self.message.clone(),
                requested_schema: self.form(),
            };
            match ctx
                .peer
                .create_elicitation_with_timeout(request, Some(ANSWER_TIMEOUT))
                .await
            {
                Ok(answer) => answer,
                Err(e) => {
                    return Consent::Refused(format!("asking the human failed ({e})"));
                }
            }
        } else {
            let Some(given) = round.answer(INPUT_KEY, &self.state()) else {
                return Consent::AskThroughClient(Box::new(self.input_required().into()));
            };
            match serde_json::from_value::<ElicitResult>(given.clone()) {
                Ok(answer) => answer,
                Err(_) => {
                    return Consent::Refused(
                        "the client's answer to the form could not be read".to_string(),
                    );
                }
            }
        };
        read(answer)
    }

    /// The form: one required yes or no.
    fn form(&self) -> ElicitationSchema {
        let choice = EnumSchema::builder(vec![YES.to_string(), NO.to_string()])
            .enum_titles(vec![self.yes.clone(), self.no.clone()])
            .expect("two titles for two values")
            .title("Go ahead?")
            .build();
        ElicitationSchema::builder()
            .required_enum_schema(FIELD, choice)
            .build()
            .expect("every required field of the form exists")
    }

    /// The request state of this question: the tool and the arguments it is about.
    fn state(&self) -> String {
        format!("{}/1 {}", self.tool, self.about)
    }

    /// The form as an `InputRequiredResult` (protocol 2026-07-28 and later).
    fn input_required(&self) -> InputRequiredResult {
        form_input_required(INPUT_KEY, self.message.clone(), self.form(), self.state())
    }
}

/// The human's answer: a yes only when the form was accepted with yes.
fn read(answer: ElicitResult) -> Consent {
    let content = match answer.action {
        ElicitationAction::Accept => answer.content.unwrap_or_default(),
        ElicitationAction::Decline => {
            return Consent::Refused("the human declined".to_string());
        }
        ElicitationAction::Cancel => {
            return Consent::Refused("the human dismissed the form".to_string());
        }
        _ => {
            return Consent::Refused(
                "the client answered the form in a way this server does not know".to_string(),
            );
        }
    };
    match content.get(FIELD).and_then(|v| v.as_str()) {
        Some(YES) => Consent::Given,
        Some(NO) => Consent::Refused("the human said no".to_string()),
        _ => Consent::Refused("the form came back without a yes or no".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepted(content: serde_json::Value) -> ElicitResult {
        serde_json::from_value(serde_json::json!({"action": "accept", "content": content})).unwrap()
    }

    #[test]
    fn only_an_accepted_yes_is_consent() {
        assert!(matches!(
            read(accepted(serde_json::json!({"proceed": "yes"}))),
            Consent::Given
        ));
        assert!(matches!(
            read(accepted(serde_json::json!({"proceed": "no"}))),
            Consent::Refused(why) if why == "the human said no"
        ));
        assert!(matches!(
            read(accepted(serde_json::json!({}))),
            Consent::Refused(_)
        ));
        let declined: ElicitResult =
            serde_json::from_value(serde_json::json!({"action": "decline"})).unwrap();
        assert!(matches!(read(declined), Consent::Refused(why) if why == "the human declined"));
    }
}
