//! How every tool's arguments are read: their JSON schemas, and the one place they are checked. Each
//! tool's own arguments are beside its handler, in its family's file of [`crate::tools`].
//!
//! A model writes these arguments, so they are checked at the door: every string is bounded and on one
//! line, unknown fields are refused (a misspelt `change_id` must not silently widen a listing), and a
//! missing or mistyped field names itself. A bad argument becomes a tool error the model can act on,
//! not a protocol error: MCP 2025-11-25 asks for input validation errors as tool results so that the
//! model can correct itself, and clients often hide protocol errors from it. Nothing runs until the
//! arguments pass. The checks that belong to the domain (a tag part's length, `|` in a tag) stay in
//! rewind-core, which applies them before anything is sent to a ZVM.

use std::sync::Arc;

use rewind_core::{ErrorKind, ErrorReport};
use rmcp::handler::server::tool::schema_for_input;
use rmcp::model::JsonObject;
use rmcp::schemars::JsonSchema;
use serde::de::DeserializeOwned;

/// The longest string any argument may be. Tag parts and VM queries have tighter limits of their own
/// in rewind-core; this one only keeps a runaway argument from being carried around at all.
pub const MAX_TEXT: usize = 1000;

/// The most entries a list argument may have.
pub const MAX_LIST: usize = 100;

// What the arguments most tools share mean, said once for every schema that has them. A line break
// inside one is part of its schemas as clients read them, which `tests/fixtures/tools.json` pins
// (`tests/mcp/listing.rs`): it stays.

/// `vm`, for a tool that acts on one VM.
pub const VM: &str = "The VM: its name, host name, IP address or vmIdentifier.";

/// `change_id`, for a tool that goes back to a guard's tag.
pub const GUARDED_CHANGE: &str =
    "The change id of the guard (its newest tagged checkpoint is used), or a tag exactly.";

/// `sites`, for a tool that asks the ZVMs.
pub const SITES: &str = concat!(
    "Ask only these configured sites (e.g. while another site is down); the answer then says\n",
    "so. Leave it out to ask every site."
);

/// `vpg`, for a recovery beside production.
pub const RECOVERY_VPG: &str = concat!(
    "Recover from the tag in this VPG (name or identifier) instead of the one the server prefers\n",
    "(a locally replicated VPG first)."
);

/// The input schema of a tool whose arguments are `T`, for the `#[tool]` attribute.
pub fn schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    schema_for_input::<T>().unwrap_or_else(|e| {
        panic!(
            "the schema of {} is invalid: {e}",
            std::any::type_name::<T>()
        )
    })
}

/// Arguments that were refused, with the message the model gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadArguments {
    /// What was wrong, what the tool takes, and that nothing was done.
    pub message: String,
}

impl BadArguments {
    /// As the structured error of a tool result.
    pub fn report(&self) -> ErrorReport {
        ErrorReport::new(ErrorKind::Usage, self.message.clone())
    }
}

/// Reads the arguments of `tool` into `T`: every string bounded and on one line, no unknown field,
/// every required field present with the right type.
pub fn parse<T: DeserializeOwned + JsonSchema + 'static>(
    tool: &str,
    args: JsonObject,
) -> Result<T, BadArguments> {
    let refuse = |problem: String| BadArguments {
        message: format!(
            "{tool} did not run: {problem}. It takes {}. Nothing was done; call it again with corrected arguments.",
            takes::<T>()
        ),
    };
    for (key, value) in &args {
        check_value(key, value).map_err(&refuse)?;
    }
    // A required text left blank would reach a question for the human, or a catalog entry, as
    // nothing at all.
    let schema = schema::<T>();
    for name in required(&schema) {
        if args
            .get(name)
            .and_then(|v| v.as_str())
            .is_some_and(|v| v.trim().is_empty())
        {
            return Err(refuse(format!("`{name}` is empty")));
        }
    }
    serde_json::from_value(serde_json::Value::Object(args)).map_err(|e| refuse(e.to_string()))
}

/// Checks one argument's value: strings (alone or in a list) bounded and without control characters.
pub(crate) fn check_value(key: &str, value: &serde_json::Value) -> Result<(), String> {
    match value {
        serde_json::Value::String(s) => check_text(key, s),
        serde_json::Value::Array(items) => {
            if items.len() > MAX_LIST {
                return Err(format!(
                    "`{key}` has {} entries and at most {MAX_LIST} are taken; split the work into several calls",
                    items.len()
                ));
            }
            items.iter().try_for_each(|item| check_value(key, item))
        }
        _ => Ok(()),
    }
}

fn check_text(key: &str, value: &str) -> Result<(), String> {
    let chars = value.chars().count();
    if chars > MAX_TEXT {
        return Err(format!(
            "`{key}` is {chars} characters long and at most {MAX_TEXT} are taken"
        ));
    }
    if value.chars().any(char::is_control) {
        return Err(format!(
            "`{key}` contains a control character (a line break, tab or the like); give it on one line"
        ));
    }
    Ok(())
}

/// "vm (string, required), change_id (string, optional)", read from the schema of `T`.
fn takes<T: JsonSchema + 'static>() -> String {
    let schema = schema::<T>();
    let required = required(&schema);
    let Some(properties) = schema.get("properties").and_then(|p| p.as_object()) else {
        return "no arguments".to_string();
    };
    properties
        .iter()
        .map(|(name, p)| {
            let ty = match p.get("type") {
                Some(serde_json::Value::String(t)) => t.clone(),
                Some(serde_json::Value::Array(ts)) => ts
                    .iter()
                    .filter_map(|t| t.as_str())
                    .find(|t| *t != "null")
                    .unwrap_or("value")
                    .to_string(),
                _ => "value".to_string(),
            };
            let need = if required.contains(&name.as_str()) {
                "required"
            } else {
                "optional"
            };
            format!("{name} ({ty}, {need})")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The names of the required fields of a schema.
fn required(schema: &JsonObject) -> Vec<&str> {
    schema
        .get("required")
        .and_then(|r| r.as_array())
        .map(|r| r.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default()
}

/// An optional text argument, with a blank one taken as absent.
pub fn given(value: Option<String>) -> Option<String> {
    value.filter(|v| !v.trim().is_empty())
}
