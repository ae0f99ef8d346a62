//! The checks at the door ([`crate::args`]) on the arguments of real tools, and the words of
//! CONTEXT.md in everything the model or the human reads of the server.

use rmcp::model::JsonObject;

use super::catalog::{self, CheckToolArgs};
use super::diff_restore::restore_message;
use super::find::{FindArgs, ListTagsArgs};
use super::guard::GuardArgs;
use super::way_back::keep_message;
use crate::args::{MAX_LIST, MAX_TEXT, check_value, given, parse};
use crate::prompt::{INSTRUCTIONS, PROMPT_DESCRIPTION, prompt_text};
use crate::server::RewindServer;

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
    let err =
        parse::<FindArgs>("zerto_find_protection", obj(serde_json::json!({"vm": 5}))).unwrap_err();
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

/// CONTEXT.md's "avoid" words that have no proper use in what this server says. (Failover is
/// avoided only when it means disaster recovery: "failover test" is the right name of a tool.)
const AVOID: &[&str] = &[
    "undo",
    "snapshot",
    "backup",
    "user checkpoint",
    "restore point",
    "replication group",
    "healthy",
    "in sync",
    "getvms",
    "denylist",
    "allowlist",
    "silently dropped",
    "restore the vpg",
    "fail back",
    "file restore",
    "instant restore",
    "zerto mcp",
    "resume",
];

/// Where an "avoid" word is the right one, by text and in those words only. CONTEXT.md avoids
/// "undo" as a name for rewind (git's word, or Zerto's Moholo); what a restore does to a change
/// gone wrong, and a rollback to a restore, is undoing them, as rewind-core and the CLI say too.
const ALLOWED: &[(&str, &str)] = &[
    (
        "zerto_restore_vm's description",
        "cannot undo what went wrong",
    ),
    ("restore_message", "undoes it"),
];

/// Every tool's title, description and input schema (its arguments' descriptions), read from the
/// list clients get, so that a new tool cannot be left out. The output schemas are rewind-core's
/// result types, described in its own words.
fn tool_texts() -> Vec<(String, String)> {
    let mut texts = Vec::new();
    for tool in RewindServer::tool_router().list_all() {
        let name = &tool.name;
        let title = tool.annotations.as_ref().and_then(|a| a.title.clone());
        texts.push((format!("{name}'s title"), title.unwrap_or_default()));
        let description = tool.description.as_deref().unwrap_or_default();
        texts.push((format!("{name}'s description"), description.to_owned()));
        let schema = serde_json::to_string(&tool.input_schema).unwrap();
        texts.push((format!("{name}'s input schema"), schema));
    }
    texts
}

/// What the forms that ask the human say.
fn form_texts() -> Vec<(String, String)> {
    let restore =
        |as_name| restore_message("web-01", "chg-1", Some("2026-01-01 10:00 UTC"), as_name);
    [
        ("keep_message", keep_message("web-01", "chg-1")),
        ("restore_message", restore(None)),
        ("restore_message beside", restore(Some("web-01-back"))),
        (
            "ask_message",
            catalog::ask_message("ssh", "run", Some("web-01")),
        ),
        (
            "ASK_CHECKPOINT_TITLE",
            catalog::ASK_CHECKPOINT_TITLE.to_owned(),
        ),
        ("ASK_YES", catalog::ASK_YES.to_owned()),
        ("ASK_NO", catalog::ASK_NO.to_owned()),
        (
            "ask_remember_title",
            catalog::ask_remember_title("ssh", "run"),
        ),
        (
            "ASK_REMEMBER_DESCRIPTION",
            catalog::ASK_REMEMBER_DESCRIPTION.to_owned(),
        ),
    ]
    .into_iter()
    .map(|(name, text)| (name.to_owned(), text))
    .collect()
}

#[test]
fn what_the_model_and_the_human_read_keeps_to_the_words_of_context_md() {
    let mut texts = vec![
        ("INSTRUCTIONS".to_owned(), INSTRUCTIONS.to_owned()),
        (
            "PROMPT_DESCRIPTION".to_owned(),
            PROMPT_DESCRIPTION.to_owned(),
        ),
        (
            "prompt_text".to_owned(),
            prompt_text("web-01", "edit app.conf", None),
        ),
    ];
    texts.extend(tool_texts());
    texts.extend(form_texts());
    for (name, text) in texts {
        let mut lower = text.to_lowercase();
        for (_, words) in ALLOWED.iter().filter(|(allowed, _)| *allowed == name) {
            lower = lower.replace(words, "");
        }
        for word in AVOID {
            assert!(!lower.contains(word), "{name} says {word:?}: {text}");
        }
    }
}
