//! What a client reads of the server before it calls anything: every tool with its annotations and
//! schemas, checked in whole; the server's name, instructions and prompt; a stdout that carries only
//! protocol.

use std::path::Path;
use std::process::Stdio;

use rmcp::model::GetPromptRequestParams;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::helper::{Human, Protocol, Setup, TestEnv};

/// The annotations a tool must declare.
struct Hints {
    name: &'static str,
    read_only: bool,
    destructive: Option<bool>,
    idempotent: Option<bool>,
    open_world: bool,
}

const fn reads(name: &'static str, open_world: bool) -> Hints {
    Hints {
        name,
        read_only: true,
        destructive: None,
        idempotent: None,
        open_world,
    }
}

const fn adds(name: &'static str, idempotent: bool, open_world: bool) -> Hints {
    Hints {
        name,
        read_only: false,
        destructive: Some(false),
        idempotent: Some(idempotent),
        open_world,
    }
}

const fn destroys(name: &'static str) -> Hints {
    Hints {
        name,
        read_only: false,
        destructive: Some(true),
        idempotent: Some(false),
        open_world: true,
    }
}

const EXPECTED: &[Hints] = &[
    reads("zerto_find_protection", true),
    adds("zerto_guard_before_mutate", false, true),
    reads("zerto_list_tags", true),
    reads("zerto_check_tool", false),
    adds("zerto_add_mutating_tool", true, false),
    adds("zerto_add_read_only_tool", true, false),
    reads("zerto_journal", false),
    reads("zerto_diff_since_tag", true),
    adds("zerto_recover_file", false, true),
    destroys("zerto_restore_vm"),
    destroys("zerto_failover_test"),
    destroys("zerto_clone"),
];

#[tokio::test]
async fn every_tool_is_listed_with_annotations_a_description_and_a_closed_schema() {
    let env = TestEnv::start(11, Setup::File).await;
    let client = env.stdio(Human::unreachable(), Protocol::Legacy).await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for Hints {
        name,
        read_only,
        destructive,
        idempotent,
        open_world,
    } in EXPECTED
    {
        let tool = tools
            .iter()
            .find(|t| t.name == *name)
            .unwrap_or_else(|| panic!("{name} is listed among {names:?}"));
        let a = tool
            .annotations
            .as_ref()
            .unwrap_or_else(|| panic!("{name} has annotations"));
        assert_eq!(a.read_only_hint, Some(*read_only), "{name} readOnlyHint");
        assert_eq!(a.destructive_hint, *destructive, "{name} destructiveHint");
        assert_eq!(a.idempotent_hint, *idempotent, "{name} idempotentHint");
        assert_eq!(a.open_world_hint, Some(*open_world), "{name} openWorldHint");
        assert!(a.title.is_some(), "{name} has a title");
        let description = tool.description.as_deref().unwrap_or_default();
        assert!(description.len() > 150, "{name} is described for the model");
        assert_eq!(
            tool.input_schema.get("additionalProperties"),
            Some(&json!(false)),
            "{name} refuses unknown arguments"
        );
    }
    let guard = tools
        .iter()
        .find(|t| t.name == "zerto_guard_before_mutate")
        .unwrap();
    let required = guard.input_schema["required"].as_array().unwrap();
    for field in ["vm", "agent", "action", "change_id"] {
        assert!(required.contains(&json!(field)), "{field} is required");
    }
    let description = guard.description.as_deref().unwrap();
    assert!(
        description.contains("guarded = ") && description.contains("do NOT make the change"),
        "the guard's description says to go ahead only on guarded: {description}"
    );
    client.cancel().await.unwrap();
}

/// The tool list and the instructions as a client reads them, checked in: every tool's name, title,
/// description, annotations, `inputSchema` and `outputSchema`. Clients and hosts keep what they
/// read (a host's permission rules name tools, a model learns the descriptions), so a change to any
/// of it shows up here as a change to this file. When the change is meant,
/// `REWIND_WRITE_DOCS=1 cargo test -p rewind-mcp --test mcp listing` writes it anew.
const LISTED: &str = "tests/fixtures/tools.json";

#[tokio::test]
async fn the_tools_and_the_instructions_are_listed_exactly_as_checked_in() {
    let env = TestEnv::start(14, Setup::File).await;
    let client = env.stdio(Human::unreachable(), Protocol::Legacy).await;
    let tools = client.list_all_tools().await.unwrap();
    let instructions = client.peer_info().and_then(|i| i.instructions.clone());
    client.cancel().await.unwrap();
    let listed = json!({"instructions": instructions, "tools": tools});
    let listed = format!("{}\n", serde_json::to_string_pretty(&listed).unwrap());
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(LISTED);
    if std::env::var_os("REWIND_WRITE_DOCS").is_some() {
        std::fs::write(&path, &listed).unwrap();
        return;
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    let first_difference = checked_in
        .lines()
        .zip(listed.lines())
        .position(|(was, is)| was != is)
        .map_or(String::new(), |n| {
            format!(
                " (line {}: {:?} is now {:?})",
                n + 1,
                checked_in.lines().nth(n).unwrap_or_default(),
                listed.lines().nth(n).unwrap_or_default()
            )
        });
    assert!(
        checked_in == listed,
        "the server no longer lists what {LISTED} holds{first_difference}; if the change is meant, run `REWIND_WRITE_DOCS=1 cargo test -p rewind-mcp --test mcp listing` and commit the file"
    );
}

#[tokio::test]
async fn the_server_gives_its_name_the_rewind_loop_and_a_prompt() {
    let env = TestEnv::start(12, Setup::File).await;
    let client = env.stdio(Human::unreachable(), Protocol::Legacy).await;
    let info = client.peer_info().expect("the server introduced itself");
    let server = info.server_info.as_ref().expect("the server named itself");
    assert_eq!(server.name, "zerto-rewind");
    let instructions = info.instructions.as_deref().unwrap_or_default();
    for step in [
        "zerto_find_protection",
        "zerto_check_tool",
        "zerto_guard_before_mutate",
        "guarded",
        "zerto_list_tags",
    ] {
        assert!(instructions.contains(step), "the instructions name {step}");
    }
    let prompts = client.list_all_prompts().await.unwrap();
    assert!(prompts.iter().any(|p| p.name == "rewind"));
    let args = json!({"vm": "web-01", "change": "upgrade nginx", "change_id": "nginx-1"});
    let prompt = client
        .get_prompt(
            GetPromptRequestParams::new("rewind").with_arguments(args.as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    let text = serde_json::to_value(&prompt.messages[0]).unwrap();
    let text = text["content"]["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("web-01")
            && text.contains("nginx-1")
            && text.contains("zerto_guard_before_mutate"),
        "{text}"
    );
    client.cancel().await.unwrap();
}

/// Every line the server writes on stdout must be a JSON-RPC message: a stray log line there breaks
/// the client.
#[tokio::test]
async fn stdout_carries_only_protocol_messages() {
    let env = TestEnv::start(13, Setup::File).await;
    let mut child = env
        .command(&["-vv"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "zerto_find_protection", "arguments": {"vm": "web-01"}}}),
    ];
    for m in &messages {
        stdin.write_all(format!("{m}\n").as_bytes()).await.unwrap();
    }
    let mut stdout = child.stdout.take().unwrap();
    let mut out = String::new();
    let read = tokio::time::timeout(std::time::Duration::from_secs(60), async {
        let mut buf = [0u8; 4096];
        // Until the answer to id 2 has arrived whole: its line ends with a newline.
        while !(out.contains("\"id\":2") && out.ends_with('\n')) {
            let n = stdout.read(&mut buf).await.unwrap();
            assert!(n > 0, "stdout closed early: {out}");
            out.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    })
    .await;
    assert!(read.is_ok(), "both answers came: {out}");
    drop(stdin);
    for line in out.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("stdout line is JSON ({e}): {line}"));
        assert_eq!(v["jsonrpc"], "2.0", "{line}");
    }
    let _ = child.kill().await;
}
