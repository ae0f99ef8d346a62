//! Bad tool arguments for every tool (missing, wrong type, huge strings, control characters headed
//! for a checkpoint name or a catalog entry) are a tool error of kind `usage` that names what is wrong,
//! and change nothing: no insert, no FLR session, no failover test or clone, no catalog or journal file.

use serde_json::{Value, json};

use crate::helper::{Human, Protocol, Setup, TestEnv, call, is_error, line, structured};

#[tokio::test]
async fn bad_arguments_to_every_tool_are_usage_errors_and_change_nothing() {
    let env = TestEnv::start(25, Setup::File).await;
    let client = env.stdio(Human::unreachable(), Protocol::Legacy).await;
    let huge = "x".repeat(200_000);
    let dest = env.dir.path().join("out").to_string_lossy().into_owned();
    let cases: Vec<(&str, Value)> = vec![
        ("zerto_find_protection", json!({})),
        ("zerto_find_protection", json!({"vm": 5})),
        ("zerto_find_protection", json!({"vm": ""})),
        ("zerto_find_protection", json!({"vm": "web\u{0}01"})),
        ("zerto_find_protection", json!({"vm": huge})),
        (
            "zerto_guard_before_mutate",
            json!({"vm": "web-01", "agent": "a", "action": "b\u{1b}[2J", "change_id": "c"}),
        ),
        (
            "zerto_guard_before_mutate",
            json!({"vm": "web-01", "agent": "a", "action": "b", "change_id": "c\r\n"}),
        ),
        (
            "zerto_guard_before_mutate",
            json!({"vm": "web-01", "agent": "a", "action": "b", "change_id": null}),
        ),
        (
            "zerto_guard_before_mutate",
            json!({"vm": ["web-01"], "agent": "a", "action": "b", "change_id": "c"}),
        ),
        (
            "zerto_guard_before_mutate",
            json!({"vm": "web-01", "agent": huge, "action": "b", "change_id": "c"}),
        ),
        ("zerto_list_tags", json!({"vm": "web-01", "change_id": 3})),
        ("zerto_check_tool", json!({"server": "ssh"})),
        (
            "zerto_check_tool",
            json!({"server": "ssh\u{7}", "tool": "run"}),
        ),
        (
            "zerto_add_mutating_tool",
            json!({"server": "", "tool": "run"}),
        ),
        (
            "zerto_add_mutating_tool",
            json!({"server": "ssh", "tool": "run\n", "vm_arg": "host"}),
        ),
        (
            "zerto_add_mutating_tool",
            json!({"server": "ssh", "tool": huge}),
        ),
        (
            "zerto_add_mutating_tool",
            json!({"server": "ssh", "tool": "run", "vm_arg": true}),
        ),
        (
            "zerto_add_read_only_tool",
            json!({"server": "ssh", "tool": "ls", "extra": 1}),
        ),
        ("zerto_journal", json!({"last": -1})),
        ("zerto_journal", json!({"last": "ten"})),
        (
            "zerto_recover_file",
            json!({"vm": "web-01", "change_id": "c", "paths": [], "destination": dest}),
        ),
        (
            "zerto_recover_file",
            json!({"vm": "web-01", "change_id": "c", "paths": "sda1/etc/hosts", "destination": dest}),
        ),
        (
            "zerto_recover_file",
            json!({"vm": "web-01", "change_id": "c", "paths": ["../../etc/passwd"], "destination": dest}),
        ),
        (
            "zerto_recover_file",
            json!({"vm": "web-01", "change_id": "c", "paths": ["sda1/etc/hosts"], "destination": "relative/dir"}),
        ),
        (
            "zerto_failover_test",
            json!({"vm": "web-01", "change_id": "c", "action": "failover_live"}),
        ),
        (
            "zerto_failover_test",
            json!({"vm": "web-01", "change_id": "c"}),
        ),
        (
            "zerto_clone",
            json!({"vm": "web-01", "change_id": "c", "action": "move"}),
        ),
    ];
    for (tool, args) in &cases {
        let result = call(&client, tool, args.clone()).await;
        let shown: String = args.to_string().chars().take(100).collect();
        assert!(
            is_error(&result),
            "{tool} {shown} is refused: {}",
            line(&result)
        );
        assert_eq!(
            structured(&result)["kind"],
            "usage",
            "{tool} {shown}: {}",
            line(&result)
        );
        let text = line(&result);
        assert!(
            text.len() < 2_000,
            "{tool} {shown}: the error does not echo a huge argument"
        );
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}') && !text.contains('\u{0}'),
            "{tool} {shown}: no control character is echoed: {text:?}"
        );
    }
    assert!(
        env.insert_tasks().await.is_empty(),
        "no checkpoint was inserted"
    );
    let writes: Vec<Value> = env
        .control
        .calls()
        .await
        .into_iter()
        .filter(|c| c["Method"] != "GET" && !c["Path"].as_str().unwrap_or("").starts_with("/auth/"))
        .collect();
    assert!(writes.is_empty(), "the ZVMs saw no write: {writes:?}");
    assert!(!env.journal_path().exists(), "nothing was journaled");
    assert!(!env.catalog_path().exists(), "the catalog was not written");
    client.cancel().await.unwrap();
}
