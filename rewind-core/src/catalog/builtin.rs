//! What the catalog knows before anyone writes to it: the hosts' names, the built-in read-only
//! tools (each host's reading tools and this project's own), and the tools it always asks about.
//! One list by nature: a table (ARCHITECTURE.md).

/// The server name, in the catalog, of Claude Code's own tools.
pub const CLAUDE_CODE: &str = "claude-code";
/// The server name of VS Code's own agent tools.
pub const VSCODE: &str = "vscode";
/// The server name of GitHub Copilot CLI's own tools.
pub const COPILOT_CLI: &str = "copilot-cli";
/// The server name of Codex CLI's own tools.
pub const CODEX: &str = "codex";
/// The server name of Gemini CLI's own tools.
pub const GEMINI_CLI: &str = "gemini-cli";
/// The server name of Cursor's own tools.
pub const CURSOR: &str = "cursor";
/// The server name of this project's MCP server.
pub const ZERTO_REWIND: &str = "zerto-rewind";

/// The agent hosts whose own tools the catalog names by the host's name as the server.
pub const HOSTS: [&str; 6] = [CLAUDE_CODE, VSCODE, COPILOT_CLI, CODEX, GEMINI_CLI, CURSOR];

/// Built-in read-only tools: each agent host's own tools that change no guest (they read, or change
/// only the agent's session: its plan, its to-do list, a question to the human), and this project's
/// own tools that change no guest. Each host's list is held against the tool list of its own source
/// or package by a test (`tests/host_tools.rs`), so a tool a host renames or adds is noticed.
///
/// A host's tool that starts a subagent is here only where the host runs its hook on each of the
/// subagent's calls too (Claude Code's `Agent`, Copilot CLI's `task`).
///
/// Of zerto-rewind's own tools, the guard and `zerto_add_mutating_tool` are here although they write:
/// the guard adds tagged checkpoints to VPG journals and the other adds a catalog entry that makes
/// later calls stricter, and neither changes a guest. Asking the human before the guard would put a
/// question in front of the very step that makes a change safe. Three kinds stay unknown on purpose,
/// so the human is asked: `zerto_add_read_only_tool` weakens the guard (it lets a tool run without a
/// checkpoint from then on), and `zerto_recover_file`, `zerto_failover_test`, `zerto_clone` and
/// `zerto_keep_way_back` act on Zerto and this machine (an FLR session, files written, a test VM or a
/// clone started or removed, a retention set written), which a human should agree to.
pub const BUILTIN_READ_ONLY: &[(&str, &str)] = &[
    // Claude Code 2.1 (its package's sdk-tools.d.ts).
    (CLAUDE_CODE, "Read"),
    (CLAUDE_CODE, "Glob"),
    (CLAUDE_CODE, "Grep"),
    (CLAUDE_CODE, "TaskOutput"),
    (CLAUDE_CODE, "TaskGet"),
    (CLAUDE_CODE, "TaskList"),
    (CLAUDE_CODE, "TaskCreate"),
    (CLAUDE_CODE, "TaskUpdate"),
    (CLAUDE_CODE, "TodoWrite"),
    (CLAUDE_CODE, "CronList"),
    (CLAUDE_CODE, "ListMcpResourcesTool"),
    (CLAUDE_CODE, "ReadMcpResourceTool"),
    (CLAUDE_CODE, "ReadMcpResourceDirTool"),
    (CLAUDE_CODE, "WebFetch"),
    (CLAUDE_CODE, "WebSearch"),
    (CLAUDE_CODE, "AskUserQuestion"),
    (CLAUDE_CODE, "EnterPlanMode"),
    (CLAUDE_CODE, "ExitPlanMode"),
    (CLAUDE_CODE, "ReportFindings"),
    (CLAUDE_CODE, "ShowOnboardingRolePicker"),
    (CLAUDE_CODE, "Agent"),
    // VS Code's agent (the model-facing names of the Copilot Chat extension's tools).
    (VSCODE, "read_file"),
    (VSCODE, "list_dir"),
    (VSCODE, "file_search"),
    (VSCODE, "grep_search"),
    (VSCODE, "semantic_search"),
    (VSCODE, "search_workspace_symbols"),
    (VSCODE, "get_errors"),
    (VSCODE, "get_changed_files"),
    (VSCODE, "read_project_structure"),
    (VSCODE, "view_image"),
    (VSCODE, "get_terminal_output"),
    (VSCODE, "terminal_selection"),
    (VSCODE, "terminal_last_command"),
    (VSCODE, "get_task_output"),
    (VSCODE, "test_search"),
    (VSCODE, "test_failure"),
    (VSCODE, "get_search_view_results"),
    (VSCODE, "get_vscode_api"),
    (VSCODE, "get_project_setup_info"),
    (VSCODE, "copilot_getNotebookSummary"),
    (VSCODE, "read_notebook_cell_output"),
    (VSCODE, "fetch_webpage"),
    (VSCODE, "github_repo"),
    (VSCODE, "tool_search"),
    (VSCODE, "vscode_askQuestions"),
    (VSCODE, "manage_todo_list"),
    // The names VS Code documents for the same reads (its tools reference, `#read/readFile`,
    // `#search/codebase`, ...), which a hook may be sent.
    (VSCODE, "readFile"),
    (VSCODE, "problems"),
    (VSCODE, "changes"),
    (VSCODE, "codebase"),
    (VSCODE, "fileSearch"),
    (VSCODE, "listDirectory"),
    (VSCODE, "textSearch"),
    // GitHub Copilot CLI 1.0: its own names, and Claude Code's, which it sends to a hook of
    // `.claude/settings.json`.
    (COPILOT_CLI, "view"),
    (COPILOT_CLI, "glob"),
    (COPILOT_CLI, "grep"),
    (COPILOT_CLI, "rg"),
    (COPILOT_CLI, "web_fetch"),
    (COPILOT_CLI, "web_search"),
    (COPILOT_CLI, "ask_user"),
    (COPILOT_CLI, "read_bash"),
    (COPILOT_CLI, "list_bash"),
    (COPILOT_CLI, "read_agent"),
    (COPILOT_CLI, "list_agents"),
    (COPILOT_CLI, "fetch_copilot_cli_documentation"),
    (COPILOT_CLI, "update_todo"),
    (COPILOT_CLI, "task"),
    (COPILOT_CLI, "Read"),
    (COPILOT_CLI, "Glob"),
    (COPILOT_CLI, "Grep"),
    (COPILOT_CLI, "WebFetch"),
    (COPILOT_CLI, "WebSearch"),
    (COPILOT_CLI, "AskUserQuestion"),
    (COPILOT_CLI, "TodoWrite"),
    (COPILOT_CLI, "Agent"),
    // Codex CLI 0.169 (every shell tool reaches a hook as `Bash`, a patch as `apply_patch`).
    (CODEX, "view_image"),
    (CODEX, "list_mcp_resources"),
    (CODEX, "list_mcp_resource_templates"),
    (CODEX, "read_mcp_resource"),
    (CODEX, "get_goal"),
    (CODEX, "create_goal"),
    (CODEX, "update_goal"),
    (CODEX, "request_user_input"),
    (CODEX, "request_permissions"),
    // Gemini CLI (its registered names; `search_file_content` is grep_search's older name).
    (GEMINI_CLI, "read_file"),
    (GEMINI_CLI, "read_many_files"),
    (GEMINI_CLI, "list_directory"),
    (GEMINI_CLI, "glob"),
    (GEMINI_CLI, "grep_search"),
    (GEMINI_CLI, "search_file_content"),
    (GEMINI_CLI, "google_web_search"),
    (GEMINI_CLI, "web_fetch"),
    (GEMINI_CLI, "read_mcp_resource"),
    (GEMINI_CLI, "list_mcp_resources"),
    (GEMINI_CLI, "list_background_processes"),
    (GEMINI_CLI, "read_background_output"),
    (GEMINI_CLI, "tracker_get_task"),
    (GEMINI_CLI, "tracker_list_tasks"),
    (GEMINI_CLI, "tracker_visualize"),
    (GEMINI_CLI, "get_internal_docs"),
    (GEMINI_CLI, "write_todos"),
    (GEMINI_CLI, "ask_user"),
    (GEMINI_CLI, "enter_plan_mode"),
    (GEMINI_CLI, "exit_plan_mode"),
    // Cursor (the tool types its preToolUse hook names).
    (CURSOR, "Read"),
    (CURSOR, "Grep"),
    (CURSOR, "TabRead"),
    // This project's MCP server.
    (ZERTO_REWIND, "zerto_find_protection"),
    (ZERTO_REWIND, "zerto_list_tags"),
    (ZERTO_REWIND, "zerto_check_tool"),
    (ZERTO_REWIND, "zerto_journal"),
    (ZERTO_REWIND, "zerto_diff_since_tag"),
    (ZERTO_REWIND, "zerto_guard_before_mutate"),
    (ZERTO_REWIND, "zerto_add_mutating_tool"),
];

/// Tools the catalog never classifies, whatever its entries say: each call is a question for a
/// person. A journal VM restore rewinds a VM; no entry, `*` or remembered answer may let an agent's
/// call through.
pub const ALWAYS_ASK: &[(&str, &str)] = &[(ZERTO_REWIND, "zerto_restore_vm")];

/// Whether `server`/`tool` is one of [`ALWAYS_ASK`].
pub fn always_asks(server: &str, tool: &str) -> bool {
    ALWAYS_ASK.iter().any(|(s, t)| *s == server && *t == tool)
}
