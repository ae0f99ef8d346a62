//! The agent hosts whose pre-tool hook rewind answers, each in its own terms: the shape of its input,
//! how it names its tools and MCP tools, the shape of the decision it reads, and what blocks there.
//!
//! Every fact here is from the host's own documentation or source (`docs/hooks.md` cites them):
//!
//! | host | input | MCP tool name | output it reads | `ask` | a failure blocks by |
//! |---|---|---|---|---|---|
//! | Claude Code | `hook_event_name: PreToolUse`, `tool_name`, `tool_input`, `permission_mode` | `mcp__<server>__<tool>` | `hookSpecificOutput.permissionDecision` | yes | exit 2 |
//! | VS Code agent | the same, with `timestamp` and `tool_use_id` (camelCase `hookEventName` before 2026-02) | `mcp_<server>_<tool>` | `hookSpecificOutput.permissionDecision` | yes | exit 2 |
//! | Copilot CLI | `toolName`, `toolArgs` (a JSON string); from `.claude/settings.json`: Claude's fields and an ISO `timestamp` | `<server>-<tool>` | top-level `permissionDecision` | yes | a deny (before 1.0.57 a non-zero exit was skipped) |
//! | Codex CLI | Claude's fields plus `turn_id`, `model` | `mcp__<server>__<tool>` | `hookSpecificOutput` deny only; an `allow` without `updatedInput`, or `ask`, runs the tool | no | exit 2 |
//! | Gemini CLI | `hook_event_name: BeforeTool`, `tool_name`, `tool_input`, `mcp_context` | `mcp_<server>_<tool>` | top-level `decision`, `reason` | no: denied | exit 2 |
//! | Cursor | `hook_event_name` `preToolUse` / `beforeShellExecution` / `beforeMCPExecution`, `cursor_version` | `MCP:<tool>`, or a bare name with the server's `command` or `url` | `permission`, `user_message`, `agent_message` | not dependable: denied | exit 2 |
//!
//! Where a host cannot put a question to the human, a call rewind would ask about is denied, and the
//! reason carries the question and the way to let such a call through.

use serde_json::{Map, Value, json};

use super::Permission;

/// An agent host with a pre-tool hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Host {
    /// Claude Code (`.claude/settings.json`).
    #[value(name = "claude-code")]
    ClaudeCode,
    /// VS Code's agent hooks (GitHub Copilot Chat's Local agent).
    #[value(name = "vscode")]
    VsCode,
    /// GitHub Copilot CLI (`.github/hooks/*.json`).
    #[value(name = "copilot-cli")]
    CopilotCli,
    /// OpenAI's Codex CLI (`~/.codex/hooks.json`).
    #[value(name = "codex")]
    Codex,
    /// Google's Gemini CLI (`~/.gemini/settings.json`, `BeforeTool`).
    #[value(name = "gemini-cli")]
    GeminiCli,
    /// Cursor (`.cursor/hooks.json`).
    #[value(name = "cursor")]
    Cursor,
}

impl Host {
    /// Every host, in the order the docs list them.
    pub const ALL: [Host; 6] = [
        Host::ClaudeCode,
        Host::VsCode,
        Host::CopilotCli,
        Host::Codex,
        Host::GeminiCli,
        Host::Cursor,
    ];

    /// The host's name: on the command line, and the catalog's server of its own tools.
    pub fn name(self) -> &'static str {
        match self {
            Host::ClaudeCode => rewind_core::catalog::CLAUDE_CODE,
            Host::VsCode => rewind_core::catalog::VSCODE,
            Host::CopilotCli => rewind_core::catalog::COPILOT_CLI,
            Host::Codex => rewind_core::catalog::CODEX,
            Host::GeminiCli => rewind_core::catalog::GEMINI_CLI,
            Host::Cursor => rewind_core::catalog::CURSOR,
        }
    }

    /// How people write it.
    pub fn title(self) -> &'static str {
        match self {
            Host::ClaudeCode => "Claude Code",
            Host::VsCode => "VS Code",
            Host::CopilotCli => "GitHub Copilot CLI",
            Host::Codex => "Codex CLI",
            Host::GeminiCli => "Gemini CLI",
            Host::Cursor => "Cursor",
        }
    }

    /// Whether the host can put a hook's question to the human. Codex runs the tool on `ask`, Gemini
    /// CLI's older releases take it as allow, and Cursor's `ask` is not enforced for every event.
    pub fn asks(self) -> bool {
        matches!(self, Host::ClaudeCode | Host::VsCode | Host::CopilotCli)
    }

    /// The host that sent `input`, from the fields only it sends.
    pub fn detect(input: &Map<String, Value>) -> Host {
        let has = |k: &str| input.contains_key(k);
        let event = input
            .get("hook_event_name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if has("toolName") || has("toolArgs") {
            Host::CopilotCli
        } else if has("cursor_version") || has("conversation_id") || CURSOR_EVENTS.contains(&event)
        {
            Host::Cursor
        } else if event == "BeforeTool" {
            Host::GeminiCli
        } else if has("turn_id") {
            Host::Codex
        } else if has("hookEventName") || (has("timestamp") && has("tool_use_id")) {
            Host::VsCode
        } else if has("timestamp") {
            // Copilot CLI running a hook of `.claude/settings.json`: Claude's fields and a timestamp.
            Host::CopilotCli
        } else {
            Host::ClaudeCode
        }
    }
}

/// Cursor's events before a tool runs.
const CURSOR_EVENTS: [&str; 3] = ["preToolUse", "beforeShellExecution", "beforeMCPExecution"];

/// A tool as the host named it, before the catalog's servers are known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolRef {
    /// One of the host's own tools.
    Own(String),
    /// An MCP server's tool, the server known.
    Mcp {
        /// The server's name.
        server: String,
        /// The tool's name.
        tool: String,
    },
    /// An MCP tool named `<prefix><server><sep><tool>`, whose server name may itself hold `sep`: it
    /// is split at the longest server name the catalog knows.
    Joined {
        /// What follows the prefix: server, separator, tool.
        rest: String,
        /// The separator.
        sep: char,
    },
    /// An MCP tool whose server the host does not name (Cursor): the server's launch command or URL
    /// when the host gives it.
    OfUnnamedServer {
        /// The tool's name.
        tool: String,
        /// The server's command line or URL.
        launched_by: Option<String>,
    },
}

/// One tool call as the hook reads it.
#[derive(Debug, Clone)]
pub struct Call {
    /// The host that sent it.
    pub host: Host,
    /// The tool.
    pub tool: ToolRef,
    /// The call's arguments.
    pub input: Value,
    /// The folders of the host's workspace, where its own configuration may name MCP servers.
    pub workspace: Vec<String>,
}

/// Reads one call from `input`, sent by `host`. `Err` says what was wrong with it.
pub fn read_call(host: Host, input: &Map<String, Value>) -> Result<Call, String> {
    check_event(host, input)?;
    let text = |k: &str| input.get(k).and_then(Value::as_str).map(str::trim);
    let workspace = match input.get("workspace_roots") {
        Some(Value::Array(roots)) => roots
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => text("cwd").map(str::to_string).into_iter().collect(),
    };
    let (tool, args) = match host {
        Host::CopilotCli if input.contains_key("toolName") => {
            (copilot_tool(text("toolName")), args(input.get("toolArgs"))?)
        }
        Host::Cursor => cursor_tool(input)?,
        _ => {
            let name = text("tool_name");
            let tool = match host {
                Host::GeminiCli => gemini_tool(name, input.get("mcp_context")),
                Host::VsCode => prefixed_tool(name, "mcp_", '_'),
                Host::CopilotCli => copilot_tool(name),
                _ => double_underscore_tool(name),
            };
            (tool, args(input.get("tool_input"))?)
        }
    };
    Ok(Call {
        host,
        tool: tool.ok_or_else(|| "it names no tool (an empty or missing tool name)".to_string())?,
        input: args,
        workspace,
    })
}

/// Refuses an event this hook is not for: installed under another event, it would answer a question
/// nobody asked.
fn check_event(host: Host, input: &Map<String, Value>) -> Result<(), String> {
    let event = input
        .get("hook_event_name")
        .or_else(|| input.get("hookEventName"))
        .and_then(Value::as_str);
    let expected: &[&str] = match host {
        Host::GeminiCli => &["BeforeTool"],
        Host::Cursor => &CURSOR_EVENTS,
        _ => &["PreToolUse"],
    };
    match event {
        // No event named (Copilot CLI's own hook files send none): the call is judged as it is.
        None => Ok(()),
        Some(e) if expected.contains(&e) => Ok(()),
        Some(e) => Err(format!(
            "it is for the event {:?}, and rewind's hook handles {} only: install it under that event",
            rewind_core::hook::quoted(e),
            expected.join(", ")
        )),
    }
}

/// A call's arguments: an object, or a JSON string of one (Copilot CLI's `toolArgs`, Cursor's MCP
/// `tool_input`); missing is no arguments.
fn args(value: Option<&Value>) -> Result<Value, String> {
    match value {
        None | Some(Value::Null) => Ok(Value::Object(Map::new())),
        Some(Value::String(s)) => serde_json::from_str(s)
            .map_err(|e| format!("its tool arguments are a string that is not JSON ({e})")),
        Some(v) => Ok(v.clone()),
    }
}

fn nonempty(name: Option<&str>) -> Option<&str> {
    name.filter(|n| !n.is_empty())
}

/// Claude Code's and Codex's names: `mcp__<server>__<tool>`, else the host's own tool.
fn double_underscore_tool(name: Option<&str>) -> Option<ToolRef> {
    let name = nonempty(name)?;
    Some(
        match name
            .strip_prefix("mcp__")
            .and_then(|rest| rest.split_once("__"))
        {
            Some((server, tool)) if !server.is_empty() && !tool.is_empty() => ToolRef::Mcp {
                server: server.to_string(),
                tool: tool.to_string(),
            },
            _ => ToolRef::Own(name.to_string()),
        },
    )
}

/// A name that is `<prefix><server><sep><tool>` for an MCP tool, else the host's own tool.
fn prefixed_tool(name: Option<&str>, prefix: &str, sep: char) -> Option<ToolRef> {
    let name = nonempty(name)?;
    Some(match name.strip_prefix(prefix) {
        Some(rest) if rest.contains(sep) => ToolRef::Joined {
            rest: rest.to_string(),
            sep,
        },
        _ => ToolRef::Own(name.to_string()),
    })
}

/// Copilot CLI: `<server>-<tool>` for an MCP tool (its own tools hold no `-`); Claude's names when it
/// runs a hook of `.claude/settings.json`.
fn copilot_tool(name: Option<&str>) -> Option<ToolRef> {
    let name = nonempty(name)?;
    if name.starts_with("mcp__") {
        return double_underscore_tool(Some(name));
    }
    prefixed_tool(Some(name), "", '-')
}

/// Gemini CLI: the server and tool from `mcp_context` when it is there, else `mcp_<server>_<tool>`.
fn gemini_tool(name: Option<&str>, context: Option<&Value>) -> Option<ToolRef> {
    let field = |k: &str| {
        context
            .and_then(|c| c.get(k))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    match (field("server_name"), field("tool_name")) {
        (Some(server), Some(tool)) => Some(ToolRef::Mcp {
            server: server.to_string(),
            tool: tool.to_string(),
        }),
        _ => prefixed_tool(name, "mcp_", '_'),
    }
}

/// Cursor: a shell command, an MCP call with the server's command or URL, or any tool (`MCP:<tool>`
/// for an MCP tool, whose server it does not name).
fn cursor_tool(input: &Map<String, Value>) -> Result<(Option<ToolRef>, Value), String> {
    let text = |k: &str| input.get(k).and_then(Value::as_str).map(str::trim);
    match text("hook_event_name").unwrap_or_default() {
        "beforeShellExecution" => {
            let command = text("command").ok_or("it holds no command")?;
            Ok((
                Some(ToolRef::Own("Shell".into())),
                json!({ "command": command, "cwd": text("cwd") }),
            ))
        }
        "beforeMCPExecution" => Ok((
            nonempty(text("tool_name")).map(|tool| ToolRef::OfUnnamedServer {
                tool: tool.to_string(),
                launched_by: text("url").or(text("command")).map(str::to_string),
            }),
            args(input.get("tool_input"))?,
        )),
        _ => {
            let name = nonempty(text("tool_name"));
            let tool = match name.and_then(|n| n.strip_prefix("MCP:")) {
                Some(tool) => Some(ToolRef::OfUnnamedServer {
                    tool: tool.trim().to_string(),
                    launched_by: None,
                }),
                None => name.map(|n| ToolRef::Own(n.to_string())),
            };
            Ok((tool, args(input.get("tool_input"))?))
        }
    }
}

/// The MCP server a Cursor user named in `.cursor/mcp.json` (of a workspace folder, or their own)
/// whose launch command or URL is `launched_by`: Cursor's hook gives that, not the server's name.
/// `None` unless exactly one server matches.
pub fn cursor_server(workspace: &[String], launched_by: &str) -> Option<String> {
    let home = directories::BaseDirs::new().map(|d| d.home_dir().to_path_buf());
    let files = workspace
        .iter()
        .map(std::path::PathBuf::from)
        .chain(home)
        .map(|dir| dir.join(".cursor").join("mcp.json"));
    let wanted = launched_by.trim();
    let mut found: Vec<String> = Vec::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let Ok(Value::Object(config)) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        let Some(Value::Object(servers)) = config.get("mcpServers") else {
            continue;
        };
        for (name, server) in servers {
            if launches(server, wanted) && !found.contains(name) {
                found.push(name.clone());
            }
        }
    }
    match found.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

/// Whether the server entry `server` of an `mcp.json` is launched by `wanted`: its URL, its command,
/// or its command with its arguments.
fn launches(server: &Value, wanted: &str) -> bool {
    let text = |k: &str| server.get(k).and_then(Value::as_str).map(str::trim);
    if text("url") == Some(wanted) {
        return true;
    }
    let Some(command) = text("command") else {
        return false;
    };
    let args: Vec<&str> = server
        .get("args")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let line = std::iter::once(command)
        .chain(args)
        .collect::<Vec<_>>()
        .join(" ");
    command == wanted || line == wanted
}

/// What the hook prints, and how it exits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// Standard output: the decision in the host's shape, if the host reads one.
    pub stdout: Option<Value>,
    /// One line on standard error.
    pub stderr: Option<String>,
    /// The exit code.
    pub code: u8,
}

/// The exit code that blocks a call in every host that takes one (all but Copilot CLI before 1.0.57).
pub const BLOCK: u8 = 2;

/// The answer to `host` of a decision (`Ask` only for a host that asks).
pub fn answer(host: Host, permission: Permission, reason: &str) -> Answer {
    let stdout = match (host, permission) {
        // Codex fails open on an `allow` without `updatedInput`: there, allowing is saying nothing.
        (Host::Codex, Permission::Allow) => None,
        _ => Some(decision(host, permission, reason)),
    };
    Answer {
        stdout,
        stderr: None,
        code: 0,
    }
}

/// The answer when the hook itself failed (its input, configuration, catalog or journal could not be
/// read): a block in the host's terms, and in every host's when it cannot tell which one sent it.
pub fn failure(host: Option<Host>, reason: &str) -> Answer {
    // Codex quotes stderr as the reason in a sentence of its own (`blocked by PreToolUse hook:
    // <reason>. Command: ...`): there the line is the bare reason, without its last full stop.
    let line = Some(match host {
        Some(Host::Codex) => reason.trim_end_matches('.').to_string(),
        _ => format!("rewind: {reason}"),
    });
    match host {
        // Copilot CLI before 1.0.57 skipped a hook that exited non-zero: only its deny blocks there.
        Some(Host::CopilotCli) => Answer {
            stdout: Some(decision(Host::CopilotCli, Permission::Deny, reason)),
            stderr: line,
            code: 0,
        },
        Some(host) => Answer {
            stdout: Some(decision(host, Permission::Deny, reason)),
            stderr: line,
            code: BLOCK,
        },
        None => {
            let mut every = Map::new();
            for host in Host::ALL {
                if let Value::Object(shape) = decision(host, Permission::Deny, reason) {
                    every.extend(shape);
                }
            }
            Answer {
                stdout: Some(Value::Object(every)),
                stderr: line,
                code: BLOCK,
            }
        }
    }
}

/// A decision in the shape `host` reads.
fn decision(host: Host, permission: Permission, reason: &str) -> Value {
    let word = permission.word();
    let claude = || {
        json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": word,
            "permissionDecisionReason": reason,
        }})
    };
    match host {
        Host::ClaudeCode | Host::VsCode => claude(),
        // Codex quotes the reason in a sentence of its own (`blocked by PreToolUse hook: <reason>.
        // Command: ...`): without its last full stop, it does not read `... first.. Command`.
        Host::Codex => {
            let mut own = claude();
            own["hookSpecificOutput"]["permissionDecisionReason"] =
                json!(reason.trim_end_matches('.'));
            own
        }
        Host::CopilotCli => {
            let mut both = claude();
            both["permissionDecision"] = json!(word);
            both["permissionDecisionReason"] = json!(reason);
            both
        }
        Host::GeminiCli => json!({"decision": word, "reason": reason}),
        Host::Cursor => json!({
            "permission": word,
            "user_message": reason,
            "agent_message": reason,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => panic!("not an object"),
        }
    }

    #[test]
    fn each_host_is_told_by_the_fields_only_it_sends() {
        let cases = [
            (
                json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {}, "permission_mode": "default"}),
                Host::ClaudeCode,
            ),
            (
                json!({"hook_event_name": "PreToolUse", "tool_name": "run_in_terminal", "tool_input": {}, "tool_use_id": "t", "timestamp": "2026-12-01T00:00:00Z"}),
                Host::VsCode,
            ),
            (
                json!({"hookEventName": "PreToolUse", "sessionId": "s", "tool_name": "run_in_terminal", "tool_input": {}}),
                Host::VsCode,
            ),
            (
                json!({"timestamp": 1_704_614_600_000u64, "cwd": "/p", "toolName": "bash", "toolArgs": "{}"}),
                Host::CopilotCli,
            ),
            (
                json!({"hook_event_name": "PreToolUse", "session_id": "s", "timestamp": "2026-12-01T00:00:00Z", "tool_name": "Bash", "tool_input": {}}),
                Host::CopilotCli,
            ),
            (
                json!({"hook_event_name": "PreToolUse", "turn_id": "t", "model": "gpt-5.5", "tool_name": "Bash", "tool_input": {}}),
                Host::Codex,
            ),
            (
                json!({"hook_event_name": "BeforeTool", "tool_name": "run_shell_command", "tool_input": {}}),
                Host::GeminiCli,
            ),
            (
                json!({"hook_event_name": "beforeShellExecution", "command": "ls", "conversation_id": "c"}),
                Host::Cursor,
            ),
        ];
        for (input, host) in cases {
            assert_eq!(Host::detect(&object(input.clone())), host, "{input}");
        }
    }

    #[test]
    fn each_host_names_an_mcp_tool_its_own_way() {
        let read = |host, v| read_call(host, &object(v)).unwrap().tool;
        assert_eq!(
            read(
                Host::ClaudeCode,
                json!({"hook_event_name": "PreToolUse", "tool_name": "mcp__ssh__run"})
            ),
            ToolRef::Mcp {
                server: "ssh".into(),
                tool: "run".into()
            }
        );
        assert_eq!(
            read(
                Host::GeminiCli,
                json!({"hook_event_name": "BeforeTool", "tool_name": "mcp_my_ssh_run", "mcp_context": {"server_name": "my_ssh", "tool_name": "run"}})
            ),
            ToolRef::Mcp {
                server: "my_ssh".into(),
                tool: "run".into()
            }
        );
        assert_eq!(
            read(
                Host::VsCode,
                json!({"hook_event_name": "PreToolUse", "tool_name": "mcp_ssh_run"})
            ),
            ToolRef::Joined {
                rest: "ssh_run".into(),
                sep: '_'
            }
        );
        assert_eq!(
            read(
                Host::CopilotCli,
                json!({"toolName": "zerto-rewind-zerto_journal", "toolArgs": "{}"})
            ),
            ToolRef::Joined {
                rest: "zerto-rewind-zerto_journal".into(),
                sep: '-'
            }
        );
        assert_eq!(
            read(
                Host::CopilotCli,
                json!({"toolName": "bash", "toolArgs": "{}"})
            ),
            ToolRef::Own("bash".into())
        );
        assert_eq!(
            read(
                Host::Cursor,
                json!({"hook_event_name": "beforeMCPExecution", "tool_name": "run", "tool_input": "{\"host\": \"web-01\"}", "command": "npx ssh-mcp"})
            ),
            ToolRef::OfUnnamedServer {
                tool: "run".into(),
                launched_by: Some("npx ssh-mcp".into())
            }
        );
        assert_eq!(
            read(
                Host::Cursor,
                json!({"hook_event_name": "preToolUse", "tool_name": "MCP:run", "tool_input": {}})
            ),
            ToolRef::OfUnnamedServer {
                tool: "run".into(),
                launched_by: None
            }
        );
    }

    #[test]
    fn arguments_given_as_a_json_string_are_read_as_json() {
        let call = read_call(
            Host::CopilotCli,
            &object(
                json!({"toolName": "bash", "toolArgs": "{\"command\": \"ssh web-01 reboot\"}"}),
            ),
        )
        .unwrap();
        assert_eq!(call.input["command"], "ssh web-01 reboot");
        let bad = read_call(
            Host::CopilotCli,
            &object(json!({"toolName": "bash", "toolArgs": "{nope"})),
        );
        assert!(bad.unwrap_err().contains("not JSON"));
    }

    #[test]
    fn codex_is_told_to_allow_by_silence_and_copilot_cli_is_denied_in_its_own_shape_on_a_failure() {
        assert_eq!(answer(Host::Codex, Permission::Allow, "fine").stdout, None);
        let deny = answer(Host::Codex, Permission::Deny, "no").stdout.unwrap();
        assert_eq!(
            deny,
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no"}}),
            "Codex refuses any field it does not know, and then runs the tool"
        );
        let failed = failure(Some(Host::CopilotCli), "broken");
        assert_eq!(
            (
                failed.code,
                &failed.stdout.as_ref().unwrap()["permissionDecision"]
            ),
            (0, &json!("deny"))
        );
        let unknown = failure(None, "broken");
        assert_eq!(unknown.code, BLOCK);
        let out = unknown.stdout.unwrap();
        for (k, v) in [
            ("decision", "deny"),
            ("permission", "deny"),
            ("permissionDecision", "deny"),
        ] {
            assert_eq!(out[k], v, "{out}");
        }
    }
}
