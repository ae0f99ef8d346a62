//! A person's yes before a tool acts: the tools an agent may only propose (keeping a change's tags
//! past the journal, restoring a VM) ask the human every time, with a form that names what will be
//! done, and act only on an accepted yes.
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
//! How the form reaches the human is the same for every question, `zerto_check_tool`'s too
//! ([`crate::form`]).

use rmcp::model::{CallToolResponse, ElicitResult, ElicitationAction, ElicitationSchema};
use rmcp::service::{RequestContext, RoleServer};

use crate::form::{self, Form, FormRound, NO, Unanswered, YES, yes_or_no};

/// The key of the question in an `InputRequiredResult` and in the answers sent back.
const INPUT_KEY: &str = "consent";
/// The form's one choice.
const FIELD: &str = "proceed";

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
        match form::ask(ctx, round, self.form()).await {
            Ok(answer) => read(answer),
            Err(Unanswered::NoForm) => Consent::Refused(
                "the human could not be asked: the client cannot show a form (it declared no elicitation capability)".to_string(),
            ),
            Err(Unanswered::AskThroughClient(form)) => {
                Consent::AskThroughClient(Box::new((*form).into()))
            }
            Err(Unanswered::NotAsked(why)) => Consent::Refused(why),
        }
    }

    /// The question as a form: one required yes or no.
    fn form(&self) -> Form {
        Form {
            key: INPUT_KEY,
            message: self.message.clone(),
            fields: self.fields(),
            state: format!("{}/1 {}", self.tool, self.about),
        }
    }

    fn fields(&self) -> ElicitationSchema {
        let choice = yes_or_no("Go ahead?", self.yes.clone(), self.no.clone());
        ElicitationSchema::builder()
            .required_enum_schema(FIELD, choice)
            .build()
            .expect("every required field of the form exists")
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
