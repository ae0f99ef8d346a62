//! The arguments of each tool, their JSON schemas, and the one place they are read and checked.
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
use rmcp::schemars::{self, JsonSchema};
use serde::Deserialize;
use serde::de::DeserializeOwned;

/// The longest string any argument may be. Tag parts and VM queries have tighter limits of their own
/// in rewind-core; this one only keeps a runaway argument from being carried around at all.
pub const MAX_TEXT: usize = 1000;

/// The most entries a list argument may have.
pub const MAX_LIST: usize = 100;

/// `zerto_find_protection`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindArgs {
    /// The VM: its name, host name, IP address or vmIdentifier.
    pub vm: String,
    /// Ask only these configured sites (e.g. while another site is down); the answer then says
    /// so. Leave it out to ask every site.
    #[serde(default)]
    pub sites: Vec<String>,
}

/// `zerto_guard_before_mutate`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GuardArgs {
    /// The VM about to be changed: its name, host name, IP address or vmIdentifier.
    pub vm: String,
    /// Who is about to change it, e.g. claude-code (at most 30 characters).
    pub agent: String,
    /// What is about to be done, in a few words, e.g. upgrade nginx (at most 60 characters).
    pub action: String,
    /// An id you choose for this change, reused to find and recover from its tag, e.g.
    /// upgrade-nginx-2026-11-29 (at most 40 characters).
    pub change_id: String,
    /// Ask only these configured sites (e.g. while another site is down); the answer then says
    /// so. Leave it out to ask every site.
    #[serde(default)]
    pub sites: Vec<String>,
}

/// `zerto_list_tags`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListTagsArgs {
    /// The VM: its name, host name, IP address or vmIdentifier.
    pub vm: String,
    /// Only the tags of this change: its change id, or a tag exactly.
    #[serde(default)]
    pub change_id: Option<String>,
    /// Ask only these configured sites (e.g. while another site is down); the answer then says
    /// so. Leave it out to ask every site.
    #[serde(default)]
    pub sites: Vec<String>,
}

/// `zerto_check_tool`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckToolArgs {
    /// The MCP server that offers the tool, as the host names it (claude-code for Claude Code's own
    /// tools).
    pub server: String,
    /// The tool's name.
    pub tool: String,
    /// The VM the call will act on, if known.
    #[serde(default)]
    pub vm: Option<String>,
}

/// `zerto_add_mutating_tool`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddMutatingArgs {
    /// The MCP server that offers the tool (claude-code for Claude Code's own tools).
    pub server: String,
    /// The tool's name, or * for every tool of the server.
    pub tool: String,
    /// The tool's argument that names the VM it acts on (dotted for nested arguments, e.g.
    /// target.host), so that the Claude Code hook can check that VM was guarded.
    #[serde(default)]
    pub vm_arg: Option<String>,
}

/// `zerto_add_read_only_tool`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddReadOnlyArgs {
    /// The MCP server that offers the tool (claude-code for Claude Code's own tools).
    pub server: String,
    /// The tool's name, or * for every tool of the server.
    pub tool: String,
}

/// `zerto_journal`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JournalArgs {
    /// Only the records of this VM (name, host name, IP address or vmIdentifier).
    #[serde(default)]
    pub vm: Option<String>,
    /// Only the records of this change id.
    #[serde(default)]
    pub change_id: Option<String>,
    /// Only the records a team server made for this signed-in person: their user name or their
    /// token subject.
    #[serde(default)]
    pub person: Option<String>,
    /// Only records written since this time: 2026-12-01T08:00:00Z, a day (2026-12-01), or a time
    /// ago (90m, 12h, 7d).
    #[serde(default)]
    pub since: Option<String>,
    /// Only the newest records, at most this many (default 20, at most 500).
    #[serde(default)]
    #[schemars(range(min = 1, max = 500))]
    pub last: Option<u32>,
}

/// `zerto_recover_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecoverFileArgs {
    /// The VM whose files to get back: its name, host name, IP address or vmIdentifier.
    pub vm: String,
    /// The change id of the guard (its newest tagged checkpoint is used), or a tag exactly.
    pub change_id: String,
    /// Guest paths, partition-rooted and /-separated: sda1/etc/app/app.conf,
    /// C:/ProgramData/App/app.ini. A folder is recovered whole.
    pub paths: Vec<String>,
    /// An absolute folder on the machine running this server; created when missing. Files land
    /// under their guest path (<destination>/sda1/etc/app/app.conf); an existing file is never
    /// replaced.
    pub destination: String,
    /// Ask only these configured sites (e.g. while another site is down); the answer then says
    /// so. Leave it out to ask every site.
    #[serde(default)]
    pub sites: Vec<String>,
    /// Recover from the tag in this VPG (name or identifier) instead of the one the server prefers
    /// (a locally replicated VPG first).
    #[serde(default)]
    pub vpg: Option<String>,
    /// Write nothing: answer what would be written where, each file's size and write time at the
    /// tag and now, and a plan id.
    #[serde(default)]
    pub dry_run: bool,
    /// The plan id a dry run answered: the recovery runs only while the files are as it found
    /// them.
    #[serde(default)]
    pub plan: Option<String>,
}

/// `zerto_diff_since_tag`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiffArgs {
    /// The VM: its name, host name, IP address or vmIdentifier.
    pub vm: String,
    /// The change id of the guard (its newest tagged checkpoint is used), or a tag exactly.
    pub change_id: String,
    /// Guest folders or files to compare, partition-rooted and /-separated: sda1/etc/app,
    /// C:/ProgramData/App. Leave it out for every partition.
    #[serde(default)]
    pub paths: Vec<String>,
    /// latest (the default) or a checkpoint identifier of the same VPG.
    #[serde(default)]
    pub against: Option<String>,
    /// Also a unified diff of each changed text file within the size cap.
    #[serde(default)]
    pub content: bool,
    /// Ask only these configured sites (e.g. while another site is down). Leave it out to ask
    /// every site.
    #[serde(default)]
    pub sites: Vec<String>,
    /// Diff the tag in this VPG (name or identifier) instead of the one the server prefers.
    #[serde(default)]
    pub vpg: Option<String>,
}

/// What to do with a failover test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TestAction {
    /// Start a failover test at the tagged checkpoint.
    Start,
    /// Stop the failover test running for the VM, recording its result.
    Stop,
}

/// `zerto_failover_test`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FailoverTestArgs {
    /// The VM: its name, host name, IP address or vmIdentifier.
    pub vm: String,
    /// The change id of the guard (its newest tagged checkpoint is used), or a tag exactly.
    pub change_id: String,
    /// start or stop.
    pub action: TestAction,
    /// With stop: whether the test succeeded, as the human judged it (required for stop).
    #[serde(default)]
    pub success: Option<bool>,
    /// With stop: what the test showed, in a few words.
    #[serde(default)]
    pub summary: Option<String>,
    /// Ask only these configured sites (e.g. while another site is down); the answer then says
    /// so. Leave it out to ask every site.
    #[serde(default)]
    pub sites: Vec<String>,
    /// Recover from the tag in this VPG (name or identifier) instead of the one the server prefers
    /// (a locally replicated VPG first).
    #[serde(default)]
    pub vpg: Option<String>,
}

/// What to do with an offsite clone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CloneAction {
    /// Start an offsite clone at the tagged checkpoint.
    Start,
    /// Abort the clone running for the VM.
    Abort,
}

/// `zerto_clone`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CloneArgs {
    /// The VM: its name, host name, IP address or vmIdentifier.
    pub vm: String,
    /// The change id of the guard (its newest tagged checkpoint is used), or a tag exactly.
    pub change_id: String,
    /// start or abort.
    pub action: CloneAction,
    /// Ask only these configured sites (e.g. while another site is down); the answer then says
    /// so. Leave it out to ask every site.
    #[serde(default)]
    pub sites: Vec<String>,
    /// Recover from the tag in this VPG (name or identifier) instead of the one the server prefers
    /// (a locally replicated VPG first).
    #[serde(default)]
    pub vpg: Option<String>,
}

/// The arguments of `zerto_keep_way_back`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KeepArgs {
    /// The VM: its name, host name, IP address or vmIdentifier.
    pub vm: String,
    /// The change id of the guard, or a tag exactly.
    pub change_id: String,
    /// Ask only these configured sites (e.g. while another site is down); the answer then says
    /// so. Leave it out to ask every site.
    #[serde(default)]
    pub sites: Vec<String>,
}

/// `zerto_restore_vm`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RestoreArgs {
    /// The VM: its name, host name, IP address or vmIdentifier.
    pub vm: String,
    /// The change id of the guard, or a tag exactly.
    pub change_id: String,
    /// Restore it as a new VM of this name beside the VM (the VM keeps running as it is). Give
    /// this or in_place.
    #[serde(default)]
    pub as_name: Option<String>,
    /// Restore the VM itself to the tag: every write after the tag is lost once the human commits.
    #[serde(default)]
    pub in_place: bool,
    /// Restore from the tag in this VPG (name or identifier) instead of the one the server prefers.
    #[serde(default)]
    pub vpg: Option<String>,
    /// Ask only these configured sites. Leave it out to ask every site.
    #[serde(default)]
    pub sites: Vec<String>,
}

/// The arguments of the `rewind` prompt.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct PromptArgs {
    /// The VM about to be changed.
    pub vm: String,
    /// The change, in a few words.
    pub change: String,
    /// The change id to use (one is chosen by the agent when left out).
    #[serde(default)]
    pub change_id: Option<String>,
}

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
fn check_value(key: &str, value: &serde_json::Value) -> Result<(), String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(v: serde_json::Value) -> JsonObject {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn a_missing_field_is_named_with_what_the_tool_takes() {
        let err = parse::<GuardArgs>(
            "zerto_guard_before_mutate",
            obj(serde_json::json!({"vm": "web-01", "agent": "a", "action": "b"})),
        )
        .unwrap_err();
        assert!(
            err.message.contains("missing field `change_id`")
                && err.message.contains("change_id (string, required)")
                && err.message.contains("Nothing was done"),
            "{}",
            err.message
        );
    }

    #[test]
    fn a_wrong_type_and_an_unknown_field_are_refused() {
        let err = parse::<FindArgs>("zerto_find_protection", obj(serde_json::json!({"vm": 5})))
            .unwrap_err();
        assert!(err.message.contains("invalid type"), "{}", err.message);
        let err = parse::<ListTagsArgs>(
            "zerto_list_tags",
            obj(serde_json::json!({"vm": "web-01", "changeId": "x"})),
        )
        .unwrap_err();
        assert!(
            err.message.contains("unknown field `changeId`"),
            "{}",
            err.message
        );
    }

    #[test]
    fn oversized_text_long_lists_and_control_characters_are_refused() {
        let long = "x".repeat(MAX_TEXT + 1);
        let err = parse::<FindArgs>(
            "zerto_find_protection",
            obj(serde_json::json!({"vm": long})),
        )
        .unwrap_err();
        assert!(err.message.contains("characters long"), "{}", err.message);
        let err = parse::<CheckToolArgs>(
            "zerto_check_tool",
            obj(serde_json::json!({"server": "ssh", "tool": "run\u{1b}[2J"})),
        )
        .unwrap_err();
        assert!(
            err.message.contains("`tool` contains a control character"),
            "{}",
            err.message
        );
        let many: Vec<String> = (0..=MAX_LIST).map(|i| i.to_string()).collect();
        assert!(check_value("paths", &serde_json::json!(many)).is_err());
    }

    #[test]
    fn a_blank_required_text_is_refused_but_a_blank_optional_one_is_not() {
        let err = parse::<CheckToolArgs>(
            "zerto_check_tool",
            obj(serde_json::json!({"server": " ", "tool": "run", "vm": ""})),
        )
        .unwrap_err();
        assert!(err.message.contains("`server` is empty"), "{}", err.message);
        let ok: CheckToolArgs = parse(
            "zerto_check_tool",
            obj(serde_json::json!({"server": "ssh", "tool": "run", "vm": ""})),
        )
        .unwrap();
        assert_eq!(given(ok.vm), None);
    }

    #[test]
    fn good_arguments_pass_and_blank_optionals_count_as_absent() {
        let a: ListTagsArgs = parse(
            "zerto_list_tags",
            obj(serde_json::json!({"vm": "web-01", "change_id": " "})),
        )
        .unwrap();
        assert_eq!((a.vm.as_str(), given(a.change_id)), ("web-01", None));
    }
}
