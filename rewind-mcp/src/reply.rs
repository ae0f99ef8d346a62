//! How every tool answers: the core's result as structured JSON, with what happened (`headline`) and
//! what to do next (`next_step`) in it, the same two as the first text block for the model and the
//! human, and the whole JSON as text for clients that do not read structured content (MCP asks a tool
//! with structured output to send it as text as well).
//!
//! The headline and the next step are in the structured content itself because a host may show the
//! model nothing else: Claude Code hands it only a successful result's `structuredContent`. Each tool
//! declares the shape of its answers as its `outputSchema` ([`output_schema`]): its own result, or an
//! error report, each with the two.
//!
//! A tool that ran and did not do what it is for (the core returned an error, a guard that is not
//! `guarded`, a failover test or clone whose task still runs, a tag list missing a VPG it could not
//! read) answers with `isError: true` and the reason; the message names the VM, VPG, task or file
//! involved and what to do next, because it comes from rewind-core's errors, which are written that way.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use rewind_core::approvals::HeldState;
use rewind_core::{ErrorKind, ErrorReport, RewindError};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use rmcp::schemars::{self, JsonSchema};
use serde::Serialize;
use serde_json::Value;

use crate::args::BadArguments;

/// What an answer says before its data.
#[derive(Debug, Clone)]
pub struct Said {
    /// What happened, in one line.
    pub headline: String,
    /// What the agent does next.
    pub next_step: String,
}

impl Said {
    /// `headline`, then `next_step`.
    pub fn new(headline: impl Into<String>, next_step: impl Into<String>) -> Said {
        Said {
            headline: headline.into(),
            next_step: next_step.into(),
        }
    }

    /// The two as one line of text.
    fn line(&self) -> String {
        let headline = self.headline.trim_end();
        let stop = if headline.ends_with(['.', '!', '?']) {
            ""
        } else {
            "."
        };
        format!("{headline}{stop} {}", self.next_step)
    }
}

/// A tool's answer: what was said, first as text, then with `value` as structured content and as
/// JSON text.
pub fn answer(said: Said, value: &impl Serialize, is_error: bool) -> CallToolResult {
    let mut json = match serde_json::to_value(value) {
        Ok(Value::Object(json)) => json,
        Ok(other) => JsonObject::from_iter([("value".to_string(), other)]),
        // Every result type of the core serializes; should one ever fail, the model still gets the
        // summary line, and the failure is reported rather than hidden.
        Err(e) => {
            let report = ErrorReport::new(
                ErrorKind::Internal,
                format!("the result could not be encoded: {e}"),
            );
            match serde_json::to_value(report) {
                Ok(Value::Object(json)) => json,
                _ => JsonObject::new(),
            }
        }
    };
    json.insert("headline".into(), Value::String(said.headline.clone()));
    json.insert("next_step".into(), Value::String(said.next_step.clone()));
    let json = Value::Object(json);
    let mut result = if is_error {
        CallToolResult::error(Vec::new())
    } else {
        CallToolResult::success(Vec::new())
    };
    result.content = vec![
        ContentBlock::text(said.line()),
        ContentBlock::text(json.to_string()),
    ];
    result.structured_content = Some(json);
    result
}

/// A successful answer.
pub fn ok(said: Said, value: &impl Serialize) -> CallToolResult {
    answer(said, value, false)
}

/// The answer of a tool whose call into rewind-core failed.
pub fn failure(err: &RewindError) -> CallToolResult {
    report(err.report())
}

/// The answer of a tool whose arguments were refused.
pub fn bad_arguments(err: &BadArguments) -> CallToolResult {
    report(err.report())
}

/// An error's answer: its message, what to do next for its kind, its hint (a configuration block to
/// add) as a text block of its own when it has one, then the report as JSON.
pub fn report(report: ErrorReport) -> CallToolResult {
    let next = next_after(report.kind);
    report_then(report, next)
}

/// An error's answer with `next` as what to do next.
fn report_then(report: ErrorReport, next: &str) -> CallToolResult {
    let said = Said::new(report.message.clone(), next);
    let mut result = answer(said, &report, true);
    if let Some(hint) = &report.hint {
        result.content.insert(
            1,
            ContentBlock::text(format!(
                "Add this to rewind's configuration file and restart this server, then call again:\n{hint}"
            )),
        );
    }
    result
}

/// The answer of a recovery tool whose call failed: the next step is about the recovery, not about
/// a change still to make.
pub fn recovery_failure(err: &RewindError) -> CallToolResult {
    let report = err.report();
    let next = next_after_recovery(report.kind);
    report_then(report, next)
}

/// What the agent does after a recovery failed with an error of `kind`.
pub fn next_after_recovery(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Usage => {
            "Nothing was recovered: call it again with what the message asks for, or show the human."
        }
        ErrorKind::Refused => {
            "Nothing was recovered: show the human this result, with what became of the tag and the alternatives it names; recover from another point only on their word."
        }
        ErrorKind::TaskFailed => {
            "The recovery did not complete: show the human Zerto's reason; try again only when they say."
        }
        ErrorKind::Connection => {
            "Nothing was recovered, or it could not be followed: a ZVM could not be reached or answered with an error; call again in a while, or show the human."
        }
        ErrorKind::StillRunning => {
            "The recovery's Zerto task still runs: follow it as the message says before calling again."
        }
        ErrorKind::Internal => "Show the human this result: the recovery may be incomplete.",
    }
}

/// What the agent does after an error of `kind`: the message says why; this says what now.
pub fn next_after(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Usage => {
            "Nothing was done: call it again with what the message asks for, or show the human."
        }
        ErrorKind::Refused => {
            "Do not make the change: show the human this result, and go on only as they say."
        }
        ErrorKind::TaskFailed => {
            "Do not make the change: show the human Zerto's reason, and guard again only when they say."
        }
        ErrorKind::Connection => {
            "Do not make the change: a ZVM could not be reached or answered with an error; call again in a while, or show the human."
        }
        ErrorKind::StillRunning => {
            "Do not make the change yet: the Zerto task still runs; follow it as the message says."
        }
        ErrorKind::Internal => "Do not make the change: show the human this result.",
    }
}

/// Every answer of a tool whose result is `T`, as its `outputSchema` declares it.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct Answered<T> {
    /// What happened, in one line.
    headline: String,
    /// What the agent does next.
    next_step: String,
    #[serde(flatten)]
    result: T,
}

/// A tool's result, or the error report of a call that could not do its work.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum Output<T> {
    Result(Answered<T>),
    Error(Answered<ErrorReport>),
}

/// A held call as a tool's structured answer names it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct HeldAnswer {
    /// The held call's id.
    pub approval_id: String,
    /// Where it stands: `held`, `denied`, `executed` or `allowed` (it ran), `expired`.
    pub state: HeldState,
    /// Where a person approves or denies it.
    pub url: String,
    /// When it expires: a held call's decision, an approval's use.
    pub expires: DateTime<Utc>,
    /// Who decided, once someone did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    /// What the person who decided said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// What came of the call, when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
}

/// A tool's result, a held call's answer, or the error report of a call that could not do its work.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum OutputOrHeld<T> {
    Result(Answered<T>),
    Held(Answered<HeldAnswer>),
    Error(Answered<ErrorReport>),
}

/// The `outputSchema` of a tool whose calls may be held for a person's approval
/// ([`crate::held`]): its result, the held call, or an error report.
pub fn output_schema_holding<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    let schema = rmcp::handler::server::common::schema_for_output::<OutputOrHeld<T>>();
    let mut schema = schema.as_ref().clone();
    schema.insert("type".into(), Value::String("object".into()));
    Arc::new(schema)
}

/// The `outputSchema` of a tool whose result is `T`: every answer of it validates against it, its
/// errors included. Its root is an object, as MCP asks.
pub fn output_schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    let schema = rmcp::handler::server::common::schema_for_output::<Output<T>>();
    let mut schema = schema.as_ref().clone();
    schema.insert("type".into(), Value::String("object".into()));
    Arc::new(schema)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_carries_its_headline_and_next_step_as_structured_content_and_as_its_first_line() {
        let report = ErrorReport::new(ErrorKind::Refused, "web-01 is protected by nothing");
        let r = answer(Said::new("one", "Then two."), &report, true);
        let s = r.structured_content.unwrap();
        assert_eq!(
            (s["headline"].as_str(), s["next_step"].as_str()),
            (Some("one"), Some("Then two."))
        );
        assert_eq!(s["kind"], "refused");
        assert_eq!(r.content[0].as_text().unwrap().text, "one. Then two.");
    }

    #[test]
    fn the_output_schema_is_an_object_that_takes_a_result_or_an_error() {
        let schema = output_schema::<rewind_core::TagList>();
        assert_eq!(schema["type"], "object");
        assert!(schema.get("anyOf").is_some(), "{schema:?}");
    }
}
