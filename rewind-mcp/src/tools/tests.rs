//! The checks at the door ([`crate::args`]) on the arguments of real tools.

use rmcp::model::JsonObject;

use super::catalog::CheckToolArgs;
use super::find::{FindArgs, ListTagsArgs};
use super::guard::GuardArgs;
use crate::args::{MAX_LIST, MAX_TEXT, check_value, given, parse};

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
