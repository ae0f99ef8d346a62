//! `rewind hook pre-tool-use` as each agent host runs it: the input shaped exactly as that host sends
//! it (the shapes below are its documentation's or its source's own examples, with the tool and
//! arguments swapped in), and the exact output and exit code its hook protocol reads. A host that
//! cannot ask never lets an unknown tool or an unguarded mutating call through.

use serde_json::{Value, json};

use crate::env::TestEnv;

/// The hosts as `--host` names them.
const HOSTS: [&str; 6] = [
    "claude-code",
    "vscode",
    "copilot-cli",
    "codex",
    "gemini-cli",
    "cursor",
];

/// A call of `tool` with `args` as `host` sends it. `mcp` names an MCP tool's server.
fn input(host: &str, mcp: Option<&str>, tool: &str, args: Value) -> Value {
    // How each host names an MCP server's tool.
    let name = match (host, mcp) {
        (_, None) => tool.to_string(),
        ("claude-code" | "codex", Some(s)) => format!("mcp__{s}__{tool}"),
        ("vscode" | "gemini-cli", Some(s)) => format!("mcp_{s}_{tool}"),
        ("copilot-cli", Some(s)) => format!("{s}-{tool}"),
        (_, Some(_)) => format!("MCP:{tool}"),
    };
    match host {
        // Claude Code 2.1: session_id, transcript_path, cwd, permission_mode, hook_event_name,
        // tool_name, tool_input, tool_use_id.
        "claude-code" => json!({
            "session_id": "3b5f0e6a-1c2d-4e5f-8a9b-0c1d2e3f4a5b",
            "transcript_path": "/home/ops/.claude/projects/-work/3b5f0e6a.jsonl",
            "cwd": "/work", "permission_mode": "default", "hook_event_name": "PreToolUse",
            "tool_name": name, "tool_input": args, "tool_use_id": "toolu_01ABC",
        }),
        // VS Code's Local agent (Copilot Chat): timestamp, hook_event_name, session_id,
        // transcript_path, cwd, tool_name, tool_input, tool_use_id.
        "vscode" => json!({
            "timestamp": "2026-12-02T10:00:00.000Z", "hook_event_name": "PreToolUse",
            "session_id": "vscode-chat-session-1", "transcript_path": "/tmp/transcript.json",
            "cwd": "/work", "tool_name": name, "tool_input": args, "tool_use_id": "call_1",
        }),
        // Copilot CLI's own hook files: timestamp (ms), cwd, toolName, toolArgs as a JSON string.
        "copilot-cli" => json!({
            "timestamp": 1_704_614_600_000u64, "cwd": "/work", "toolName": name,
            "toolArgs": args.to_string(),
        }),
        // Codex CLI 0.169, as it ran a hook.
        "codex" => json!({
            "session_id": "01a2345b-e92d-7e40-984f-d4bb3642065c",
            "turn_id": "01a2345b-e93f-7ec0-9113-6762cbd5b471", "transcript_path": null,
            "cwd": "/work", "hook_event_name": "PreToolUse", "model": "gpt-5.5",
            "permission_mode": "bypassPermissions", "tool_name": name, "tool_input": args,
            "tool_use_id": "call-exec-1",
        }),
        // Gemini CLI: BeforeTool, with mcp_context for an MCP tool.
        "gemini-cli" => {
            let mut v = json!({
                "session_id": "probe-session-0001", "transcript_path": "", "cwd": "/work",
                "hook_event_name": "BeforeTool", "timestamp": "2026-12-02T10:00:00.000Z",
                "tool_name": name, "tool_input": args,
            });
            if let Some(server) = mcp {
                v["mcp_context"] = json!({"server_name": server, "tool_name": tool, "command": "npx", "args": [server]});
            }
            v
        }
        // Cursor: an MCP call reaches beforeMCPExecution with the arguments as a JSON string and the
        // server's command; any other tool, preToolUse.
        "cursor" => {
            let common = json!({
                "conversation_id": "conv-1", "generation_id": "gen-1", "model": "claude-4",
                "cursor_version": "2.4.21", "workspace_roots": ["/work"], "user_email": null,
                "transcript_path": null,
            });
            let mut v = match mcp {
                Some(server) => json!({
                    "hook_event_name": "beforeMCPExecution", "tool_name": tool,
                    "tool_input": args.to_string(), "command": format!("npx {server}"),
                }),
                None => json!({
                    "hook_event_name": "preToolUse", "tool_name": name, "tool_input": args,
                    "tool_use_id": "abc123", "cwd": "/work", "agent_message": "working",
                }),
            };
            v.as_object_mut()
                .unwrap()
                .extend(common.as_object().unwrap().clone());
            v
        }
        other => panic!("no such host {other}"),
    }
}

/// A tool each host ships that only reads.
fn read_only_tool(host: &str) -> (&'static str, Value) {
    match host {
        "claude-code" => ("Read", json!({"file_path": "/etc/hosts"})),
        "vscode" => ("read_file", json!({"filePath": "/etc/hosts"})),
        "copilot-cli" => ("view", json!({"path": "/etc/hosts"})),
        "codex" => ("view_image", json!({"path": "/tmp/a.png"})),
        "gemini-cli" => ("read_file", json!({"file_path": "/etc/hosts"})),
        "cursor" => ("Read", json!({"file_path": "/etc/hosts"})),
        other => panic!("no such host {other}"),
    }
}

/// What the hook answered, read the way `host` reads it.
#[derive(Debug)]
struct Heard {
    decision: String,
    reason: String,
    code: i32,
}

/// The hook input of a call of ssh's `run` tool with `args`, as `host` sends it.
fn ssh_run(host: &str, args: Value) -> Value {
    input(host, Some("ssh"), "run", args)
}

/// Runs the hook on `input` as `host` runs it (without `--host` where the host shares a settings
/// file with others), and reads the answer as that host does, checking its exact shape.
async fn run(env: &TestEnv, host: &str, input: &Value) -> Heard {
    let args: Vec<&str> = match host {
        "codex" | "gemini-cli" | "cursor" => vec!["hook", "pre-tool-use", "--host", host],
        _ => vec!["hook", "pre-tool-use"],
    };
    let run = env.rewind_with_stdin(&args, Some(&input.to_string())).await;
    let heard = |decision: &str, reason: &str| Heard {
        decision: decision.to_string(),
        reason: reason.to_string(),
        code: run.code,
    };
    if host == "codex" && run.stdout.trim().is_empty() {
        // Codex: an allow is no output at all.
        return heard("allow", "");
    }
    let out: Value = run.json();
    let keys: Vec<&str> = out
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let text = |v: &Value| v.as_str().unwrap_or_else(|| panic!("{out}")).to_string();
    let claude = |o: &Value| {
        let s = &o["hookSpecificOutput"];
        let inner: Vec<&str> = s.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            inner,
            [
                "hookEventName",
                "permissionDecision",
                "permissionDecisionReason"
            ],
            "{o}"
        );
        assert_eq!(s["hookEventName"], "PreToolUse");
        (
            text(&s["permissionDecision"]),
            text(&s["permissionDecisionReason"]),
        )
    };
    let (decision, reason) = match host {
        "claude-code" | "vscode" | "codex" => {
            assert_eq!(keys, ["hookSpecificOutput"], "{out}");
            claude(&out)
        }
        "copilot-cli" => {
            // Copilot CLI reads the top-level fields; the same decision also stands in Claude's shape.
            let top = (
                text(&out["permissionDecision"]),
                text(&out["permissionDecisionReason"]),
            );
            assert_eq!(claude(&out), top);
            top
        }
        "gemini-cli" => {
            assert_eq!(keys, ["decision", "reason"], "{out}");
            (text(&out["decision"]), text(&out["reason"]))
        }
        "cursor" => {
            assert_eq!(
                keys,
                ["agent_message", "permission", "user_message"],
                "{out}"
            );
            assert_eq!(out["agent_message"], out["user_message"]);
            (text(&out["permission"]), text(&out["agent_message"]))
        }
        other => panic!("no such host {other}"),
    };
    heard(&decision, &reason)
}

#[tokio::test]
async fn each_hosts_read_only_tool_is_allowed_in_its_own_shape() {
    let env = TestEnv::start(61).await;
    for host in HOSTS {
        let (tool, args) = read_only_tool(host);
        let heard = run(&env, host, &input(host, None, tool, args)).await;
        assert_eq!(
            (heard.decision.as_str(), heard.code),
            ("allow", 0),
            "{host}: {heard:?}"
        );
        if host != "codex" {
            assert!(heard.reason.contains("read-only"), "{host}: {heard:?}");
        }
    }
}

#[tokio::test]
async fn an_unknown_tool_is_asked_about_where_the_host_asks_and_denied_with_the_question_elsewhere()
{
    let env = TestEnv::start(62).await;
    for host in HOSTS {
        let call = input(
            host,
            Some("ansible"),
            "run_playbook",
            json!({"playbook": "site.yml"}),
        );
        let heard = run(&env, host, &call).await;
        let asks = matches!(host, "claude-code" | "vscode" | "copilot-cli");
        let expected = if asks { "ask" } else { "deny" };
        assert_eq!(
            (heard.decision.as_str(), heard.code),
            (expected, 0),
            "{host}: {heard:?}"
        );
        if host == "cursor" {
            // Cursor names no MCP server; none of the catalog has a tool of that name.
            assert!(
                heard.reason.contains("did not say which MCP server")
                    && heard
                        .reason
                        .contains("rewind catalog add-read-only <server> run_playbook"),
                "{heard:?}"
            );
            continue;
        }
        assert!(
            heard
                .reason
                .contains("The tool run_playbook of ansible is not in the tool catalog"),
            "{host}: {heard:?}"
        );
        if !asks {
            assert!(
                heard
                    .reason
                    .contains("cannot put this question to the human")
                    && heard
                        .reason
                        .contains("rewind catalog add-read-only ansible run_playbook")
                    && heard
                        .reason
                        .contains("rewind catalog add-mutating ansible run_playbook"),
                "{host}: {heard:?}"
            );
        }
    }
}

#[tokio::test]
async fn a_mutating_mcp_tool_runs_in_every_host_only_once_its_vm_is_guarded() {
    let env = TestEnv::start(63).await;
    env.catalog(&["add-mutating", "ssh", "run", "--vm-arg", "host"])
        .await;
    let on = |host: &str, vm: &str| ssh_run(host, json!({"host": vm, "cmd": "edit"}));
    for host in HOSTS {
        let heard = run(&env, host, &on(host, "web-01")).await;
        assert_eq!(
            (heard.decision.as_str(), heard.code),
            ("deny", 0),
            "{host}: {heard:?}"
        );
        assert!(
            heard.reason.contains("guard web-01 first"),
            "{host}: {heard:?}"
        );
    }
    env.guard("web-01", "a", "c1").await;
    for host in HOSTS {
        let heard = run(&env, host, &on(host, "web-01")).await;
        assert_eq!(
            (heard.decision.as_str(), heard.code),
            ("allow", 0),
            "{host}: {heard:?}"
        );
        let heard = run(&env, host, &on(host, "db-01")).await;
        assert_eq!(
            heard.decision, "deny",
            "{host}: db-01 was not guarded: {heard:?}"
        );
    }
}

#[tokio::test]
async fn a_hosts_own_shell_tool_marked_mutating_is_judged_by_the_vm_its_command_names() {
    let env = TestEnv::start(64).await;
    let shells = [
        ("claude-code", "Bash"),
        ("vscode", "run_in_terminal"),
        ("copilot-cli", "bash"),
        ("codex", "Bash"),
        ("gemini-cli", "run_shell_command"),
        ("cursor", "Shell"),
    ];
    for (host, shell) in shells {
        env.catalog(&["add-mutating", host, shell]).await;
    }
    env.guard("web-01", "a", "c1").await;
    for (host, shell) in shells {
        let call = |cmd: &str| input(host, None, shell, json!({"command": cmd}));
        let heard = run(&env, host, &call("ssh web-01 'systemctl restart app'")).await;
        assert_eq!(heard.decision, "allow", "{host}: {heard:?}");
        // db-01 is in no journal record, so the hook cannot tell the command changes a VM: it asks,
        // and a host that cannot ask denies.
        let heard = run(&env, host, &call("ssh db-01 'rm -rf /var/lib/app'")).await;
        let expected = if matches!(host, "claude-code" | "vscode" | "copilot-cli") {
            "ask"
        } else {
            "deny"
        };
        assert_eq!(heard.decision, expected, "{host}: {heard:?}");
    }
    // Cursor's own shell event carries the command itself.
    let cursor_shell = |cmd: &str| {
        json!({"hook_event_name": "beforeShellExecution", "command": cmd, "cwd": "/work",
               "sandbox": false, "conversation_id": "c", "cursor_version": "2.4.21",
               "workspace_roots": ["/work"]})
    };
    let heard = run(&env, "cursor", &cursor_shell("ssh db-01 reboot")).await;
    assert_eq!(heard.decision, "deny", "{heard:?}");
    assert!(heard.reason.contains("cannot tell which VM"), "{heard:?}");
    let heard = run(&env, "cursor", &cursor_shell("ssh web-01 reboot")).await;
    assert_eq!(heard.decision, "allow", "{heard:?}");
}

#[tokio::test]
async fn a_vm_the_hook_cannot_tell_is_a_question_where_the_host_asks_and_a_deny_elsewhere() {
    let env = TestEnv::start(65).await;
    env.catalog(&["add-mutating", "ssh", "run"]).await;
    for host in HOSTS {
        let heard = run(&env, host, &ssh_run(host, json!({"cmd": "uptime"}))).await;
        let expected = if matches!(host, "claude-code" | "vscode" | "copilot-cli") {
            "ask"
        } else {
            "deny"
        };
        assert_eq!(heard.decision, expected, "{host}: {heard:?}");
        assert!(
            heard.reason.contains("cannot tell which VM"),
            "{host}: {heard:?}"
        );
    }
}

#[tokio::test]
async fn a_hook_that_cannot_read_its_input_or_journal_blocks_in_each_hosts_terms() {
    let env = TestEnv::start(66).await;
    // Copilot CLI before 1.0.57 skipped a hook that exited non-zero: there a failure is a deny.
    let blocks = |host: &str| if host == "copilot-cli" { 0 } else { 2 };
    for host in HOSTS {
        // Arguments that are not JSON (as a string), or not an object at all.
        let mut broken = ssh_run(host, json!({}));
        for key in ["tool_input", "toolArgs"] {
            if broken.get(key).is_some() {
                broken[key] = json!("{not json");
            }
        }
        if host == "gemini-cli" || host == "claude-code" || host == "vscode" || host == "codex" {
            broken["tool_name"] = json!("");
        }
        let heard = run(&env, host, &broken).await;
        assert_eq!(
            (heard.decision.as_str(), heard.code),
            ("deny", blocks(host)),
            "{host}: {heard:?}"
        );
        assert!(heard.reason.contains("fail closed"), "{host}: {heard:?}");
    }
    env.catalog(&["add-mutating", "ssh", "run", "--vm-arg", "host"])
        .await;
    std::fs::create_dir_all(env.journal_file()).unwrap();
    for host in HOSTS {
        let heard = run(&env, host, &ssh_run(host, json!({"host": "web-01"}))).await;
        assert_eq!(
            (heard.decision.as_str(), heard.code),
            ("deny", blocks(host)),
            "{host}: {heard:?}"
        );
        assert!(heard.reason.contains("audit journal"), "{host}: {heard:?}");
    }
}

#[tokio::test]
async fn input_no_host_sends_is_blocked_in_every_hosts_terms_at_once() {
    let env = TestEnv::start(67).await;
    let run = env
        .rewind_with_stdin(&["hook", "pre-tool-use"], Some("not json at all"))
        .await;
    run.expect_code(2);
    let out = run.json();
    assert_eq!(out["hookSpecificOutput"]["permissionDecision"], "deny");
    assert_eq!(out["permissionDecision"], "deny");
    assert_eq!(out["decision"], "deny");
    assert_eq!(out["permission"], "deny");
    assert!(run.one_error_line().contains("fail closed"), "{run:?}");
}

#[tokio::test]
async fn an_mcp_tool_whose_server_cursor_does_not_name_is_found_from_cursors_mcp_json() {
    let env = TestEnv::start(68).await;
    env.catalog(&["add-mutating", "ssh-prod", "run", "--vm-arg", "host"])
        .await;
    env.catalog(&["add-read-only", "ssh-lab", "run"]).await;
    let workspace = env.dir.path().join("work");
    std::fs::create_dir_all(workspace.join(".cursor")).unwrap();
    std::fs::write(
        workspace.join(".cursor/mcp.json"),
        json!({"mcpServers": {
            "ssh-prod": {"command": "npx", "args": ["-y", "ssh-mcp", "--prod"]},
            "ssh-lab": {"url": "http://127.0.0.1:9000/mcp"},
        }})
        .to_string(),
    )
    .unwrap();
    let call = |launched: (&str, &str)| {
        let mut v = json!({"hook_event_name": "beforeMCPExecution", "tool_name": "run",
            "tool_input": "{\"host\": \"web-01\"}", "conversation_id": "c",
            "cursor_version": "2.4.21", "workspace_roots": [workspace.to_str().unwrap()]});
        v[launched.0] = json!(launched.1);
        v
    };
    let heard = run(&env, "cursor", &call(("command", "npx -y ssh-mcp --prod"))).await;
    assert_eq!(heard.decision, "deny", "{heard:?}");
    assert!(heard.reason.contains("ssh-prod/run"), "{heard:?}");
    let heard = run(&env, "cursor", &call(("url", "http://127.0.0.1:9000/mcp"))).await;
    assert_eq!(heard.decision, "allow", "{heard:?}");
    // preToolUse names no server: two servers of the catalog have a tool of that name.
    let pre = json!({"hook_event_name": "preToolUse", "tool_name": "MCP:run",
        "tool_input": {"host": "web-01"}, "conversation_id": "c", "cursor_version": "2.4.21",
        "workspace_roots": [workspace.to_str().unwrap()]});
    let heard = run(&env, "cursor", &pre).await;
    assert_eq!(heard.decision, "deny", "{heard:?}");
    assert!(heard.reason.contains("ssh-lab, ssh-prod"), "{heard:?}");
}

#[tokio::test]
async fn a_joined_mcp_tool_name_is_split_at_the_server_the_catalog_knows() {
    let env = TestEnv::start(69).await;
    env.catalog(&["add-mutating", "my_ssh", "run_cmd", "--vm-arg", "host"])
        .await;
    env.guard("web-01", "a", "c1").await;
    // VS Code writes `mcp_my_ssh_run_cmd`: split at the first `_` it would be `my` and `ssh_run_cmd`.
    let on = |vm: &str| input("vscode", Some("my_ssh"), "run_cmd", json!({ "host": vm }));
    let heard = run(&env, "vscode", &on("web-01")).await;
    assert_eq!(heard.decision, "allow", "{heard:?}");
    assert!(heard.reason.contains("my_ssh/run_cmd"), "{heard:?}");
    let heard = run(&env, "vscode", &on("db-01")).await;
    assert_eq!(heard.decision, "deny", "{heard:?}");
    // The guard tool is known to every host by its server's name.
    for host in HOSTS {
        let call = input(
            host,
            Some("zerto-rewind"),
            "zerto_guard_before_mutate",
            json!({"vm": "db-01", "agent": "a", "action": "edit", "change_id": "c2"}),
        );
        let heard = run(&env, host, &call).await;
        assert_eq!(heard.decision, "allow", "{host}: {heard:?}");
    }
}

#[tokio::test]
async fn hook_install_writes_each_hosts_file_keeps_what_is_there_and_never_twice() {
    let env = TestEnv::start(70).await;
    let home = env.dir.path().join("home");
    let settings = home.join(".gemini/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(
        &settings,
        r#"{"theme": "dark", "hooks": {"AfterTool": []}}"#,
    )
    .unwrap();
    // The binary's HOME is the test's own `home` folder.
    let install = async |host: &str| {
        env.rewind(&[
            "--json",
            "hook",
            "install",
            "--host",
            host,
            "--program",
            "/opt/rewind",
        ])
        .await
    };
    for host in HOSTS {
        install(host).await.expect_code(0);
    }
    let read = |p: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(home.join(p)).unwrap()).unwrap()
    };
    let gemini = read(".gemini/settings.json");
    assert_eq!(gemini["theme"], "dark");
    assert_eq!(gemini["hooks"]["AfterTool"], json!([]));
    assert_eq!(
        gemini["hooks"]["BeforeTool"][0]["hooks"][0]["command"],
        "/opt/rewind hook pre-tool-use --host gemini-cli"
    );
    assert_eq!(
        read(".claude/settings.json")["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        "/opt/rewind hook pre-tool-use"
    );
    assert_eq!(
        read(".codex/hooks.json")["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        "/opt/rewind hook pre-tool-use --host codex"
    );
    let copilot = read(".copilot/hooks/rewind.json");
    assert_eq!(copilot["version"], 1);
    assert_eq!(
        copilot["hooks"]["preToolUse"].as_array().unwrap().len(),
        1,
        "VS Code and Copilot CLI share it: {copilot}"
    );
    assert_eq!(
        read(".cursor/hooks.json")["hooks"]["beforeMCPExecution"][0]["failClosed"],
        true
    );
    let again = install("gemini-cli").await;
    assert_eq!(again.json()["result"]["changed"], false);
    assert_eq!(read(".gemini/settings.json"), gemini);
}
