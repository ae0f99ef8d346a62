//! The pre-tool hook: `rewind hook pre-tool-use` as each agent host runs it, with the host's JSON on
//! stdin and its decision on stdout, in that host's shape.

use cucumber::{given, then, when};
use features::RewindWorld;
use serde_json::{Value, json};

async fn ask_hook(world: &mut RewindWorld, input: String) {
    ask_hook_as(world, input, None).await;
}

/// Runs the hook on `input`, with `--host` when given; its answer is the world's last.
async fn ask_hook_as(world: &mut RewindWorld, input: String, host: Option<&str>) {
    let mut args = vec!["hook".to_string(), "pre-tool-use".to_string()];
    if let Some(host) = host {
        args.extend(["--host".to_string(), host.to_string()]);
    }
    let answer = world.rewind(args, Some(input.clone())).await;
    assert!(
        matches!(answer.exit_code(), Some(0 | 2)),
        "the hook answers with a decision, or blocks, for {input:?}: {answer:#?}"
    );
}

/// A call of the MCP tool `tool` of `server`, as `host` sends it: the `--host` it is run with (where
/// its settings file is its own) and its input.
fn host_call(host: &str, server: &str, tool: &str, args: Value) -> (Option<&'static str>, Value) {
    match host {
        "VS Code's agent" => (
            None,
            json!({
                "timestamp": "2026-12-02T10:00:00.000Z", "hook_event_name": "PreToolUse",
                "session_id": "s", "cwd": "/work", "tool_name": format!("mcp_{server}_{tool}"),
                "tool_input": args, "tool_use_id": "call_1",
            }),
        ),
        "GitHub Copilot CLI" => (
            None,
            json!({
                "timestamp": 1_704_614_600_000u64, "cwd": "/work",
                "toolName": format!("{server}-{tool}"), "toolArgs": args.to_string(),
            }),
        ),
        "Codex CLI" => (
            Some("codex"),
            json!({
                "session_id": "s", "turn_id": "t", "transcript_path": null, "cwd": "/work",
                "hook_event_name": "PreToolUse", "model": "gpt-5.5", "permission_mode": "default",
                "tool_name": format!("mcp__{server}__{tool}"), "tool_input": args, "tool_use_id": "c",
            }),
        ),
        "Gemini CLI" => (
            Some("gemini-cli"),
            json!({
                "session_id": "s", "transcript_path": "", "cwd": "/work",
                "hook_event_name": "BeforeTool", "timestamp": "2026-12-02T10:00:00.000Z",
                "tool_name": format!("mcp_{server}_{tool}"), "tool_input": args,
                "mcp_context": {"server_name": server, "tool_name": tool},
            }),
        ),
        "Cursor" => (
            Some("cursor"),
            json!({
                "hook_event_name": "beforeMCPExecution", "tool_name": tool,
                "tool_input": args.to_string(), "command": format!("npx {server}"),
                "conversation_id": "c", "cursor_version": "2.4.21", "workspace_roots": ["/work"],
            }),
        ),
        other => panic!("no agent host named {other:?}"),
    }
}

#[when(
    regex = r#"^(VS Code's agent|GitHub Copilot CLI|Codex CLI|Gemini CLI|Cursor) asks the hook about the MCP tool "([^"]*)" of "([^"]*)" with input '(.*)'$"#
)]
async fn host_asks(
    world: &mut RewindWorld,
    host: String,
    tool: String,
    server: String,
    input: String,
) {
    host_asks_about(world, host, tool, server, input).await;
}

async fn host_asks_about(
    world: &mut RewindWorld,
    host: String,
    tool: String,
    server: String,
    input: String,
) {
    let args: Value = serde_json::from_str(&input).expect("the scenario's input is JSON");
    let (flag, call) = host_call(&host, &server, &tool, args);
    ask_hook_as(world, call.to_string(), flag).await;
}

#[when(expr = "Cursor asks the hook before the shell command {string}")]
async fn cursor_shell(world: &mut RewindWorld, command: String) {
    let call = json!({"hook_event_name": "beforeShellExecution", "command": command, "cwd": "/work",
        "sandbox": false, "conversation_id": "c", "cursor_version": "2.4.21",
        "workspace_roots": ["/work"]});
    ask_hook_as(world, call.to_string(), Some("cursor")).await;
}

#[when("GitHub Copilot CLI sends the hook tool arguments that are not JSON")]
async fn copilot_sends_garbage(world: &mut RewindWorld) {
    let call = json!({"timestamp": 1_704_614_600_000u64, "cwd": "/work", "toolName": "bash",
        "toolArgs": "{\"command\": "});
    ask_hook_as(world, call.to_string(), None).await;
}

#[then(expr = "the hook exits with {int}")]
async fn hook_exits(world: &mut RewindWorld, code: i32) {
    let answer = world.last();
    assert_eq!(answer.exit_code(), Some(code), "{answer:#?}");
}

#[when(expr = "Claude Code asks the hook about {string} with input {string}")]
async fn asks_about(world: &mut RewindWorld, tool: String, input: String) {
    let tool_input: Value = serde_json::from_str(&input).expect("the scenario's input is JSON");
    let event = json!({
        "session_id": "acceptance",
        "transcript_path": "/tmp/acceptance.jsonl",
        "cwd": "/work",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
    });
    ask_hook(world, event.to_string()).await;
}

#[when(expr = "Claude Code sends the hook {string}")]
async fn sends_raw(world: &mut RewindWorld, input: String) {
    ask_hook(world, input).await;
}

/// The hook's decision and reason, read from its stdout in whichever host's shape it is: Claude's
/// `hookSpecificOutput` (Claude Code, VS Code, Codex, and Copilot CLI beside its own), Gemini CLI's
/// `decision`, Cursor's `permission`; Codex's allow is no output at all.
fn decision(world: &RewindWorld) -> (String, String) {
    let answer = world.last();
    let mut docs = serde_json::Deserializer::from_str(&answer.text).into_iter::<Value>();
    let Some(out) = docs.next().and_then(Result::ok) else {
        assert!(
            answer.text.trim().is_empty() && answer.ok,
            "the hook prints one JSON document: {answer:#?}"
        );
        return ("allow".into(), String::new());
    };
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let specific = &out["hookSpecificOutput"];
    if specific.is_object() {
        assert_eq!(specific["hookEventName"], "PreToolUse", "{out}");
        (
            text(&specific["permissionDecision"]),
            text(&specific["permissionDecisionReason"]),
        )
    } else if out.get("decision").is_some() {
        (text(&out["decision"]), text(&out["reason"]))
    } else {
        (text(&out["permission"]), text(&out["agent_message"]))
    }
}

#[then(expr = "the hook answers {string}")]
async fn hook_answers(world: &mut RewindWorld, expected: String) {
    let (got, reason) = decision(world);
    assert_eq!(got, expected, "the reason: {reason}");
    // Codex is told to allow by silence; every other decision comes with its reason.
    assert!(
        !reason.trim().is_empty() || got == "allow",
        "a decision comes with its reason"
    );
}

#[then(expr = "the hook's reason says {string}")]
async fn reason_says(world: &mut RewindWorld, words: String) {
    let (_, reason) = decision(world);
    assert!(
        reason.contains(&words),
        "the reason says {words:?}: {reason}"
    );
}

#[given(expr = "the hook's window is {int} minutes")]
async fn hook_window(world: &mut RewindWorld, minutes: u64) {
    world.reconfigure(|w| {
        w.extra_config
            .push_str(&format!("[hook]\nwindow_secs = {}\n", minutes * 60));
    });
}

#[given(expr = "that guard was {int} minutes ago")]
async fn guard_was_ago(world: &mut RewindWorld, minutes: i64) {
    let mut records = world.journal();
    let last = records.last_mut().expect("a journal record");
    assert_eq!(last["kind"], "guard", "{last}");
    last["time"] = json!((chrono::Utc::now() - chrono::Duration::minutes(minutes)).to_rfc3339());
    let text: String = records.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(world.journal_file(), text).expect("the journal is rewritten");
}

#[given("the tool catalog is damaged")]
async fn damaged_catalog(world: &mut RewindWorld) {
    let path = world.catalog_file();
    std::fs::create_dir_all(path.parent().expect("a folder")).expect("the catalog's folder");
    std::fs::write(path, "[[mutating]\nserver = ").expect("the catalog is written");
}

#[when(expr = "Claude Code asks the hook about {string} for the IP address of {string}")]
async fn asks_by_address(world: &mut RewindWorld, tool: String, vm: String) {
    let args = vec!["--json".to_string(), "find".to_string(), vm.clone()];
    let found = world.rewind(args, None).await.clone();
    let ip = found.result()["vm"]["ip_addresses"][0]
        .as_str()
        .unwrap_or_else(|| panic!("{vm} has an IP address: {found:#?}"))
        .to_string();
    let event = json!({
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": {"host": ip},
    });
    ask_hook(world, event.to_string()).await;
}

/// Guards, through the CLI, every VM the name stands for: `rewind find` lists them as candidates of
/// its refusal, and each is guarded by its vmIdentifier, which is unambiguous.
#[given(expr = "the operator has guarded every VM named {string}, each by its vmIdentifier")]
async fn guarded_every_vm_named(world: &mut RewindWorld, name: String) {
    let find = world
        .rewind(vec!["--json".into(), "find".into(), name.clone()], None)
        .await;
    let ids: Vec<String> = find.error.as_ref().expect("the name is ambiguous")["candidates"]
        .as_array()
        .unwrap_or_else(|| panic!("{name} lists its candidates: {find:#?}"))
        .iter()
        .map(|c| c["vm_id"].as_str().expect("a vm_id").to_string())
        .collect();
    assert!(ids.len() > 1, "{name} names several VMs: {ids:?}");
    for (n, id) in ids.iter().enumerate() {
        let args = [
            "--json", "guard", id, "--agent", "ops", "--action", "patch", "--change",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([format!("shared-name-{n}")])
        .collect();
        let answer = world.rewind(args, None).await;
        assert!(answer.ok, "the guard of {id} succeeds: {answer:#?}");
    }
}
