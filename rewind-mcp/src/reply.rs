//! How every tool answers: the core's result as structured JSON, a one-line summary first in the text
//! content for the model and the human, and the same JSON as text for clients that do not read
//! structured content (MCP asks a tool with structured output to send it as text as well).
//!
//! A tool that ran and did not do what it is for (the core returned an error, a guard that is not
//! `guarded`, a failover test or clone whose task still runs, a tag list missing a VPG it could not
//! read) answers with `isError: true` and the reason; the message names the VM, VPG, task or file
//! involved and what to do next, because it comes from rewind-core's errors, which are written that way.

use rewind_core::{ErrorReport, RewindError};
use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;

use crate::args::BadArguments;

/// A tool's answer: `line` first, then `value` as structured content and as JSON text.
pub fn answer(line: impl Into<String>, value: &impl Serialize, is_error: bool) -> CallToolResult {
    let json = match serde_json::to_value(value) {
        Ok(json) => json,
        // Every result type of the core serializes; should one ever fail, the model still gets the
        // summary line, and the failure is reported rather than hidden.
        Err(e) => {
            serde_json::json!({"kind": "internal", "message": format!("the result could not be encoded: {e}")})
        }
    };
    let mut result = if is_error {
        CallToolResult::error(Vec::new())
    } else {
        CallToolResult::success(Vec::new())
    };
    result.content = vec![
        ContentBlock::text(line.into()),
        ContentBlock::text(json.to_string()),
    ];
    result.structured_content = Some(json);
    result
}

/// A successful answer.
pub fn ok(line: impl Into<String>, value: &impl Serialize) -> CallToolResult {
    answer(line, value, false)
}

/// The answer of a tool whose call into rewind-core failed.
pub fn failure(err: &RewindError) -> CallToolResult {
    report(err.report())
}

/// The answer of a tool whose arguments were refused.
pub fn bad_arguments(err: &BadArguments) -> CallToolResult {
    report(err.report())
}

/// An error's answer: its one line, then its hint (a configuration block to add) as a text block of its
/// own when it has one, then the report as JSON.
fn report(report: ErrorReport) -> CallToolResult {
    let mut result = answer(report.message.clone(), &report, true);
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
