//! The tool catalog: which `(server, tool)` pairs are mutating, which are read-only, and the question
//! for the human about every other (unknown) tool.
//!
//! Unknown is the usual case and it is not safe: it becomes a question ("should I take a tagged
//! checkpoint first?"). The catalog is a TOML file in the XDG config dir, written atomically (a temporary
//! file renamed over it, under a lock file so two processes do not lose each other's changes). A corrupt
//! file is an error naming the file; it is never silently reset. Built-in read-only entries cover Claude
//! Code's reading tools and this project's own read tools; an entry added as mutating wins over them.
//!
//! ```toml
//! [[mutating]]
//! server = "vsphere"
//! tool = "run_in_guest"
//! vm_arg = "vm_name"     # the tool argument that names the VM (the hook reads it)
//!
//! [[read_only]]
//! server = "vsphere"
//! tool = "*"             # every tool of a server
//! ```

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error_kind::ErrorKind;
use crate::local_state::{self, LOCK_WAIT, LockBusy, LockError, LockMode, open_private};

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

/// The catalog cannot be read or written, or an entry is malformed.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// The file exists but cannot be read.
    #[error("cannot read the tool catalog {path}: {source}; check its permissions")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a valid catalog. It is left as it is.
    #[error(
        "the tool catalog {path} is corrupt: {message}; it was left untouched: fix it by hand, or move it away to start a new one"
    )]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        message: String,
    },
    /// The file cannot be written.
    #[error("cannot write the tool catalog {path}: {source}; check that its folder is writable")]
    Write {
        /// The file (or its temporary or lock file).
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Another process held the catalog's lock for longer than rewind waits.
    #[error("cannot change the tool catalog: {0}")]
    Busy(#[from] LockBusy),
    /// An entry's field is unusable.
    #[error("invalid catalog {field}: {reason}")]
    Invalid {
        /// `server`, `tool` or `vm_arg`.
        field: &'static str,
        /// What is wrong.
        reason: InvalidEntry,
    },
    /// An agent asked to mark read-only a tool the catalog records as mutating: only a human removes
    /// that entry.
    #[error(
        "{server}/{tool} is recorded as mutating, and an agent cannot mark it read-only; nothing was changed. Keep guarding before it runs. If the human wants it read-only, they remove its entry from the catalog {path} (the rewind CLI does that) and then mark it read-only"
    )]
    RecordedMutating {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
        /// The catalog file.
        path: PathBuf,
    },
    /// A tool of [`ALWAYS_ASK`] cannot be given an entry.
    #[error(
        "{server}/{tool} is never classified: it rewinds a VM, so every call is a question for a person, whatever the catalog says; nothing was changed"
    )]
    AlwaysAsks {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
    },
    /// A built-in entry cannot be removed.
    #[error(
        "{server}/{tool} is a built-in read-only tool and cannot be removed; add it as mutating to override it"
    )]
    BuiltIn {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
    },
}

/// What is wrong with a catalog entry's field ([`CatalogError::Invalid`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidEntry {
    /// The name is empty (or only blanks).
    #[error("it is empty")]
    Empty,
    /// The name holds a control character or is longer than 200 characters.
    #[error("it contains a control character or is longer than 200 characters")]
    ControlCharacterOrTooLong,
    /// The entry cannot be written as TOML.
    #[error("{detail}")]
    Unencodable {
        /// What the encoder said.
        detail: String,
    },
}

impl CatalogError {
    /// The class of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            CatalogError::Corrupt { .. }
            | CatalogError::Invalid { .. }
            | CatalogError::BuiltIn { .. } => ErrorKind::Usage,
            CatalogError::AlwaysAsks { .. } => ErrorKind::Refused,
            CatalogError::RecordedMutating { .. } => ErrorKind::Refused,
            CatalogError::Read { .. } | CatalogError::Write { .. } | CatalogError::Busy(_) => {
                ErrorKind::Internal
            }
        }
    }
}

/// One catalog entry. An unknown key is refused, as in the configuration: a misspelt `vm_arg` must not
/// quietly leave a mutating tool without the argument that names its VM.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CatalogEntry {
    /// The MCP server, or an agent host's name (`claude-code`, `codex`, ...) for its own tools.
    pub server: String,
    /// The tool, or `*` for every tool of the server.
    pub tool: String,
    /// The tool argument that names the VM the tool acts on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vm_arg: Option<String>,
}

impl CatalogEntry {
    fn matches(&self, server: &str, tool: &str) -> bool {
        self.server == server && (self.tool == tool || self.tool == "*")
    }

    fn same(&self, server: &str, tool: &str) -> bool {
        self.server == server && self.tool == tool
    }
}

#[derive(Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct CatalogFile {
    #[serde(default)]
    mutating: Vec<CatalogEntry>,
    #[serde(default)]
    read_only: Vec<CatalogEntry>,
}

impl CatalogFile {
    /// Records `server`/`tool` as read-only, once.
    fn keep_read_only(&mut self, server: &str, tool: &str) {
        if !self.read_only.iter().any(|e| e.same(server, tool)) {
            self.read_only.push(CatalogEntry {
                server: server.to_owned(),
                tool: tool.to_owned(),
                vm_arg: None,
            });
        }
    }
}

/// How a tool is classified.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolClass {
    /// Known not to change a guest.
    ReadOnly,
    /// Changes a guest: guard the VM first.
    Mutating,
    /// Nobody said: ask the human.
    Unknown,
}

/// Where a classification came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The built-in read-only list.
    BuiltIn,
    /// The catalog file.
    Catalog,
    /// Neither.
    None,
}

/// The answer of [`CatalogStore::classify`].
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Classification {
    /// The server asked about.
    pub server: String,
    /// The tool asked about.
    pub tool: String,
    /// The VM the call acts on, if known.
    pub vm: Option<String>,
    /// The class.
    pub class: ToolClass,
    /// Where it came from.
    pub source: Source,
    /// The tool argument that names the VM (mutating entries).
    pub vm_arg: Option<String>,
    /// For an unknown tool: the question to put to the human.
    pub question: Option<String>,
}

impl Classification {
    /// One line for humans: the tool, its class and where that came from. The question for an unknown
    /// tool is in [`Classification::question`].
    pub fn headline(&self) -> String {
        let source = match self.source {
            Source::BuiltIn => " (built in)",
            Source::Catalog => " (catalog)",
            Source::None => "",
        };
        let class = match self.class {
            ToolClass::ReadOnly => "read-only",
            ToolClass::Mutating => "mutating",
            ToolClass::Unknown => "unknown",
        };
        format!("{}/{}: {class}{source}", self.server, self.tool)
    }

    /// The question to put to the human about this call: the one [`CatalogStore::classify`] gave for
    /// an unknown tool, else one built the same way (naming the VM when it is known).
    pub fn human_question(&self) -> String {
        self.question
            .clone()
            .unwrap_or_else(|| question_for(&self.server, &self.tool, self.vm.as_deref()))
    }
}

/// One entry as listed, with whether it is built in.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ListedEntry {
    /// The entry.
    #[serde(flatten)]
    pub entry: CatalogEntry,
    /// Built in (cannot be removed).
    pub builtin: bool,
}

/// The whole catalog as listed.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct CatalogListing {
    /// The catalog file.
    pub path: PathBuf,
    /// Mutating tools.
    pub mutating: Vec<ListedEntry>,
    /// Read-only tools, built-in ones included.
    pub read_only: Vec<ListedEntry>,
}

impl CatalogListing {
    /// One line for humans: how many entries of each list, from which file, and what every other
    /// tool is.
    pub fn headline(&self) -> String {
        let builtin = self.read_only.iter().filter(|e| e.builtin).count();
        format!(
            "{} mutating and {} read-only tool(s) ({builtin} of them built in) in the catalog {}; every other tool is unknown: a question for the human",
            self.mutating.len(),
            self.read_only.len(),
            self.path.display()
        )
    }
}

/// Whether `server`/`tool` is one of [`ALWAYS_ASK`].
pub fn always_asks(server: &str, tool: &str) -> bool {
    ALWAYS_ASK.iter().any(|(s, t)| *s == server && *t == tool)
}

fn refuse_always_asked(server: &str, tool: &str) -> Result<(), CatalogError> {
    match always_asks(server, tool) {
        true => Err(CatalogError::AlwaysAsks {
            server: server.to_string(),
            tool: tool.to_string(),
        }),
        false => Ok(()),
    }
}

/// The question for a tool nobody classified.
pub fn question_for(server: &str, tool: &str, vm: Option<&str>) -> String {
    // Without a VM the question still has to be answerable, so it names the VM by its role once
    // instead of repeating a phrase that reads as if the VM were known.
    let ask = match vm {
        Some(vm) => format!("Before it runs on VM {vm}, should I guard VM {vm}"),
        None => "Before it runs, should I guard the VM it changes".to_string(),
    };
    format!(
        "The tool {tool} of {server} is not in the tool catalog, so nobody has said whether it changes a VM. {ask} (take a tagged checkpoint in every protecting VPG)? Yes: guard first, then run it. No: run it without a checkpoint, and Zerto will not be able to rewind this change. To remember the answer, mark {server}/{tool} as mutating or read-only in the catalog."
    )
}

fn check_name(field: &'static str, value: &str) -> Result<String, CatalogError> {
    let v = value.trim();
    if v.is_empty() {
        return Err(CatalogError::Invalid {
            field,
            reason: InvalidEntry::Empty,
        });
    }
    if v.chars().any(char::is_control) || v.chars().count() > 200 {
        return Err(CatalogError::Invalid {
            field,
            reason: InvalidEntry::ControlCharacterOrTooLong,
        });
    }
    Ok(v.to_string())
}

/// The persisted catalog. Every call reads the file afresh, so a CLI and an MCP server sharing it see
/// each other's changes.
#[derive(Debug, Clone)]
pub struct CatalogStore {
    path: PathBuf,
}

impl CatalogStore {
    /// A catalog kept at `path` (created on the first change).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        CatalogStore { path: path.into() }
    }

    /// The catalog file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn load(&self) -> Result<CatalogFile, CatalogError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(CatalogFile::default()),
            Err(source) => {
                return Err(CatalogError::Read {
                    path: self.path.clone(),
                    source,
                });
            }
        };
        crate::toml_error::parse_toml(&text).map_err(|message| CatalogError::Corrupt {
            path: self.path.clone(),
            message,
        })
    }

    /// Classifies a call of `tool` of `server` on `vm`: mutating entries first (fail closed), then
    /// read-only ones (the catalog's, then the built-in list), else unknown with the question to ask.
    /// `server` and `tool` are checked as [`CatalogStore::add_mutating`] checks them (not empty, no
    /// control character, at most 200 characters): a name that could never be in the catalog is
    /// refused, not called unknown.
    pub fn classify(
        &self,
        server: &str,
        tool: &str,
        vm: Option<&str>,
    ) -> Result<Classification, CatalogError> {
        let server = check_name("server", server)?;
        let tool = check_name("tool", tool)?;
        let (server, tool) = (server.as_str(), tool.as_str());
        let vm = vm.map(str::trim).filter(|v| !v.is_empty());
        let file = self.load()?;
        let mut out = Classification {
            server: server.to_string(),
            tool: tool.to_string(),
            vm: vm.map(str::to_string),
            class: ToolClass::Unknown,
            source: Source::None,
            vm_arg: None,
            question: None,
        };
        if always_asks(server, tool) {
            out.question = Some(question_for(server, tool, vm));
            return Ok(out);
        }
        // An exact entry beats a `*` entry of the same list.
        let pick = |list: &[CatalogEntry]| -> Option<CatalogEntry> {
            list.iter()
                .find(|e| e.same(server, tool))
                .or_else(|| list.iter().find(|e| e.matches(server, tool)))
                .cloned()
        };
        if let Some(e) = pick(&file.mutating) {
            out.class = ToolClass::Mutating;
            out.source = Source::Catalog;
            out.vm_arg = e.vm_arg;
        } else if pick(&file.read_only).is_some() {
            out.class = ToolClass::ReadOnly;
            out.source = Source::Catalog;
        } else if BUILTIN_READ_ONLY
            .iter()
            .any(|(s, t)| *s == server && *t == tool)
        {
            out.class = ToolClass::ReadOnly;
            out.source = Source::BuiltIn;
        } else {
            out.question = Some(question_for(server, tool, vm));
        }
        Ok(out)
    }

    /// Classifies a call with its arguments: the VM is read from the argument the catalog names for
    /// the tool (`vm_arg`, a dotted path for nested arguments), so the question or the guard can name it.
    pub fn classify_call(
        &self,
        server: &str,
        tool: &str,
        args: &serde_json::Value,
    ) -> Result<Classification, CatalogError> {
        let first = self.classify(server, tool, None)?;
        let vm = first.vm_arg.as_deref().and_then(|path| {
            path.split('.')
                .try_fold(args, |v, key| v.get(key))
                .and_then(|v| v.as_str())
                .map(str::to_string)
        });
        match vm {
            Some(vm) => self.classify(server, tool, Some(&vm)),
            None => Ok(first),
        }
    }

    /// The MCP servers the catalog knows: those its entries name (agent hosts' own tools aside), and
    /// this project's. The hook splits a host's joined MCP tool name (`mcp_<server>_<tool>`) at them.
    pub fn servers(&self) -> Result<Vec<String>, CatalogError> {
        let file = self.load()?;
        let mut servers: Vec<String> = file
            .mutating
            .iter()
            .chain(&file.read_only)
            .map(|e| e.server.clone())
            .chain([ZERTO_REWIND.to_string()])
            .filter(|s| !HOSTS.contains(&s.as_str()))
            .collect();
        servers.sort();
        servers.dedup();
        Ok(servers)
    }

    /// The MCP servers with an entry for `tool` by its own name (a server's `*` entry does not say
    /// it has the tool), built-in entries included: how the hook finds the server of a tool whose
    /// host does not name it.
    pub fn servers_of(&self, tool: &str) -> Result<Vec<String>, CatalogError> {
        let file = self.load()?;
        let builtin = BUILTIN_READ_ONLY.iter().map(|(s, t)| (*s, *t));
        let entries = file.mutating.iter().chain(&file.read_only);
        let mut servers: Vec<String> = entries
            .map(|e| (e.server.as_str(), e.tool.as_str()))
            .chain(builtin)
            .filter(|(s, t)| *t == tool && !HOSTS.contains(s))
            .map(|(s, _)| s.to_string())
            .collect();
        servers.sort();
        servers.dedup();
        Ok(servers)
    }

    /// Marks a tool as mutating (removing it from the read-only entries of the file).
    pub fn add_mutating(
        &self,
        server: &str,
        tool: &str,
        vm_arg: Option<&str>,
    ) -> Result<(), CatalogError> {
        let server = check_name("server", server)?;
        let tool = check_name("tool", tool)?;
        let vm_arg = vm_arg.map(|a| check_name("vm_arg", a)).transpose()?;
        refuse_always_asked(&server, &tool)?;
        self.update(|f| {
            f.read_only.retain(|e| !e.same(&server, &tool));
            f.mutating.retain(|e| !e.same(&server, &tool));
            f.mutating.push(CatalogEntry {
                server: server.clone(),
                tool: tool.clone(),
                vm_arg: vm_arg.clone(),
            });
            Ok(())
        })
    }

    /// Marks a tool as read-only (removing it from the mutating entries of the file).
    pub fn add_read_only(&self, server: &str, tool: &str) -> Result<(), CatalogError> {
        let server = check_name("server", server)?;
        let tool = check_name("tool", tool)?;
        refuse_always_asked(&server, &tool)?;
        self.update(|f| {
            f.mutating.retain(|e| !e.same(&server, &tool));
            f.keep_read_only(&server, &tool);
            Ok(())
        })
    }

    /// Marks a tool as read-only for an agent: refused with [`CatalogError::RecordedMutating`] when the
    /// file records it as mutating (by its own entry or its server's `*`). The check and the change are one update under the file's lock, so a
    /// mutating entry another process adds meanwhile is never removed by it.
    pub fn add_read_only_unless_mutating(
        &self,
        server: &str,
        tool: &str,
    ) -> Result<(), CatalogError> {
        let server = check_name("server", server)?;
        let tool = check_name("tool", tool)?;
        refuse_always_asked(&server, &tool)?;
        self.update(|f| {
            // A `*` entry makes the tool mutating as surely as its own entry does.
            if f.mutating.iter().any(|e| e.matches(&server, &tool)) {
                return Err(CatalogError::RecordedMutating {
                    server: server.clone(),
                    tool: tool.clone(),
                    path: self.path.clone(),
                });
            }
            f.keep_read_only(&server, &tool);
            Ok(())
        })
    }

    /// Removes a tool from the file's entries; it becomes unknown again (or built-in read-only). Returns
    /// whether there was an entry.
    pub fn remove(&self, server: &str, tool: &str) -> Result<bool, CatalogError> {
        let server = check_name("server", server)?;
        let tool = check_name("tool", tool)?;
        let mut removed = false;
        self.update(|f| {
            let before = f.mutating.len() + f.read_only.len();
            f.mutating.retain(|e| !e.same(&server, &tool));
            f.read_only.retain(|e| !e.same(&server, &tool));
            removed = f.mutating.len() + f.read_only.len() != before;
            if !removed
                && BUILTIN_READ_ONLY
                    .iter()
                    .any(|(s, t)| *s == server && *t == tool)
            {
                return Err(CatalogError::BuiltIn {
                    server: server.clone(),
                    tool: tool.clone(),
                });
            }
            Ok(())
        })?;
        Ok(removed)
    }

    /// Every entry, built-in ones included.
    pub fn list(&self) -> Result<CatalogListing, CatalogError> {
        let file = self.load()?;
        let listed = |e: CatalogEntry| ListedEntry {
            entry: e,
            builtin: false,
        };
        let mut read_only: Vec<ListedEntry> = file.read_only.into_iter().map(listed).collect();
        read_only.extend(BUILTIN_READ_ONLY.iter().map(|(s, t)| ListedEntry {
            entry: CatalogEntry {
                server: s.to_string(),
                tool: t.to_string(),
                vm_arg: None,
            },
            builtin: true,
        }));
        Ok(CatalogListing {
            path: self.path.clone(),
            mutating: file.mutating.into_iter().map(listed).collect(),
            read_only,
        })
    }

    /// Read, change, write atomically, all under the catalog's lock file.
    fn update(
        &self,
        change: impl FnOnce(&mut CatalogFile) -> Result<(), CatalogError>,
    ) -> Result<(), CatalogError> {
        let write_err = |path: &Path| {
            let path = path.to_path_buf();
            move |source| CatalogError::Write { path, source }
        };
        let lock_path = sibling(&self.path, ".lock");
        let lock = open_private(
            &lock_path,
            OpenOptions::new().create(true).truncate(false).write(true),
            true,
        )
        .map_err(write_err(&lock_path))?;
        local_state::lock(&lock, &lock_path, LockMode::Exclusive, LOCK_WAIT).map_err(
            |e| match e {
                LockError::Busy(busy) => CatalogError::Busy(busy),
                LockError::Io(source) => CatalogError::Write {
                    path: lock_path.clone(),
                    source,
                },
            },
        )?;
        let mut file = self.load()?;
        change(&mut file)?;
        let body = toml::to_string(&file).map_err(|e| CatalogError::Invalid {
            field: "entry",
            reason: InvalidEntry::Unencodable {
                detail: e.to_string(),
            },
        })?;
        let text = format!(
            "# Tool catalog of zerto-ai-rewind: tools that change a VM (mutating) and tools that do not\n# (read_only). A tool in neither list is unknown and becomes a question for the human.\n\n{body}"
        );
        let result = (|| {
            // tempfile creates it 0600 whatever the umask: the catalog says which tools may run
            // unguarded. Beside the catalog, so the rename stays on one file system; removed when
            // dropped, so a failed write leaves nothing behind.
            let mut tmp = tempfile::Builder::new()
                .prefix(&sibling_name(&self.path, "."))
                .suffix(".tmp")
                .tempfile_in(parent_dir(&self.path))?;
            tmp.write_all(text.as_bytes())?;
            tmp.as_file().sync_all()?;
            tmp.persist(&self.path).map(drop).map_err(|e| e.error)
        })();
        result.map_err(write_err(&self.path))?;
        // The lock is released when `lock` is dropped.
        drop(lock);
        Ok(())
    }
}

/// `path` with `suffix` appended to its file name.
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    path.with_file_name(sibling_name(path, suffix))
}

/// The file name of `path` with `suffix` appended.
fn sibling_name(path: &Path, suffix: &str) -> std::ffi::OsString {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(suffix);
    name
}

/// The folder `path` is in; `.` for a bare file name.
fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, CatalogStore) {
        let dir = tempfile::tempdir().unwrap();
        let s = CatalogStore::new(dir.path().join("sub").join("catalog.toml"));
        (dir, s)
    }

    #[test]
    fn a_vm_restore_is_never_classified_whatever_the_catalog_holds() {
        let (_d, s) = store();
        s.add_read_only("zerto-rewind", "*").unwrap();
        let c = s
            .classify("zerto-rewind", "zerto_restore_vm", Some("web-01"))
            .unwrap();
        assert_eq!((c.class, c.source), (ToolClass::Unknown, Source::None));
        assert!(c.question.unwrap().contains("web-01"));
        for refused in [
            s.add_read_only("zerto-rewind", "zerto_restore_vm"),
            s.add_read_only_unless_mutating("zerto-rewind", "zerto_restore_vm"),
            s.add_mutating("zerto-rewind", "zerto_restore_vm", None),
        ] {
            assert!(matches!(refused, Err(CatalogError::AlwaysAsks { .. })));
        }
        s.add_mutating("zerto-rewind", "*", Some("vm")).unwrap();
        let c = s
            .classify("zerto-rewind", "zerto_restore_vm", None)
            .unwrap();
        assert_eq!(c.class, ToolClass::Unknown, "not even as mutating");
    }

    #[test]
    fn builtin_read_tools_are_read_only_and_others_are_unknown_with_a_question() {
        let (_d, s) = store();
        let c = s.classify("claude-code", "Read", None).unwrap();
        assert_eq!((c.class, c.source), (ToolClass::ReadOnly, Source::BuiltIn));
        let c = s.classify("zerto-rewind", "zerto_list_tags", None).unwrap();
        assert_eq!(c.class, ToolClass::ReadOnly);
        let c = s.classify("claude-code", "Bash", Some("web-01")).unwrap();
        assert_eq!(c.class, ToolClass::Unknown);
        let q = c.question.unwrap();
        assert!(
            q.contains("Bash") && q.contains("claude-code") && q.contains("web-01"),
            "{q}"
        );
    }

    #[test]
    fn vs_codes_documented_read_names_are_read_only_as_its_internal_ones_are() {
        let (_d, s) = store();
        for tool in ["read_file", "readFile", "listDirectory", "codebase"] {
            let c = s.classify("vscode", tool, None).unwrap();
            assert_eq!(c.class, ToolClass::ReadOnly, "{tool}");
        }
        let edit = s.classify("vscode", "editFiles", None).unwrap();
        assert_eq!(edit.class, ToolClass::Unknown);
    }

    #[test]
    fn the_guard_and_add_mutating_tool_need_no_question_but_tools_that_weaken_or_recover_do() {
        let (_d, s) = store();
        for tool in ["zerto_guard_before_mutate", "zerto_add_mutating_tool"] {
            let c = s.classify(ZERTO_REWIND, tool, None).unwrap();
            assert_eq!(
                (c.class, c.source),
                (ToolClass::ReadOnly, Source::BuiltIn),
                "{tool}"
            );
        }
        for tool in [
            "zerto_add_read_only_tool",
            "zerto_recover_file",
            "zerto_failover_test",
            "zerto_clone",
            "zerto_keep_way_back",
        ] {
            let c = s.classify(ZERTO_REWIND, tool, None).unwrap();
            assert_eq!(c.class, ToolClass::Unknown, "{tool}");
        }
    }

    #[test]
    fn the_question_for_the_human_names_the_vm_of_the_call_whatever_the_class() {
        let (_d, s) = store();
        let unknown = s.classify("ssh", "run", Some("web-01")).unwrap();
        assert_eq!(unknown.human_question(), unknown.question.clone().unwrap());
        let read_only = s.classify("claude-code", "Read", Some("web-01")).unwrap();
        assert!(read_only.question.is_none());
        let q = read_only.human_question();
        assert!(q.contains("Read") && q.contains("VM web-01"), "{q}");
    }

    #[test]
    fn the_question_without_a_vm_names_the_vm_by_its_role_once() {
        let q = question_for("ssh", "run", None);
        assert!(
            q.contains("Before it runs, should I guard the VM it changes"),
            "{q}"
        );
        assert_eq!(q.matches("the VM it").count(), 1, "{q}");
    }

    #[test]
    fn an_agent_cannot_mark_read_only_a_tool_recorded_as_mutating_by_its_entry_or_its_servers_star()
    {
        let (_d, s) = store();
        s.add_mutating("ssh", "run", Some("host")).unwrap();
        s.add_mutating("k8s", "*", None).unwrap();
        for (server, tool) in [("ssh", "run"), ("k8s", "exec")] {
            let err = s.add_read_only_unless_mutating(server, tool).unwrap_err();
            assert!(
                matches!(err, CatalogError::RecordedMutating { .. }),
                "{err:?}"
            );
            assert!(
                err.to_string()
                    .contains("an agent cannot mark it read-only"),
                "{err}"
            );
            assert_eq!(err.kind(), ErrorKind::Refused);
            let c = s.classify(server, tool, None).unwrap();
            assert_eq!(c.class, ToolClass::Mutating, "{server}/{tool}");
        }
        let c = s.classify("ssh", "run", None).unwrap();
        assert_eq!(c.vm_arg.as_deref(), Some("host"), "the entry is untouched");
        s.add_read_only_unless_mutating("vsphere", "list_vms")
            .unwrap();
        let c = s.classify("vsphere", "list_vms", None).unwrap();
        assert_eq!((c.class, c.source), (ToolClass::ReadOnly, Source::Catalog));
    }

    #[test]
    fn added_entries_persist_and_mutating_wins_over_builtin_read_only() {
        let (_d, s) = store();
        s.add_mutating("ssh", "run", Some("host")).unwrap();
        s.add_mutating("claude-code", "Read", None).unwrap();
        s.add_read_only("vsphere", "*").unwrap();
        let again = CatalogStore::new(s.path());
        let c = again.classify("ssh", "run", Some("db-01")).unwrap();
        assert_eq!(c.class, ToolClass::Mutating);
        assert_eq!(c.vm_arg.as_deref(), Some("host"));
        assert_eq!(
            again.classify("claude-code", "Read", None).unwrap().class,
            ToolClass::Mutating
        );
        assert_eq!(
            again.classify("vsphere", "list_vms", None).unwrap().class,
            ToolClass::ReadOnly
        );
        let listing = again.list().unwrap();
        assert_eq!(listing.mutating.len(), 2);
        assert!(
            listing
                .read_only
                .iter()
                .any(|e| e.builtin && e.entry.tool == "Grep")
        );
    }

    #[test]
    fn moving_a_tool_between_lists_and_removing_it() {
        let (_d, s) = store();
        s.add_read_only("ssh", "run").unwrap();
        s.add_mutating("ssh", "run", None).unwrap();
        assert_eq!(
            s.list()
                .unwrap()
                .read_only
                .iter()
                .filter(|e| !e.builtin)
                .count(),
            0
        );
        assert!(s.remove("ssh", "run").unwrap());
        assert!(!s.remove("ssh", "run").unwrap());
        assert_eq!(
            s.classify("ssh", "run", None).unwrap().class,
            ToolClass::Unknown
        );
        assert!(matches!(
            s.remove("claude-code", "Grep"),
            Err(CatalogError::BuiltIn { .. })
        ));
    }

    #[test]
    fn a_corrupt_file_is_an_error_naming_it_and_is_left_untouched() {
        let (_d, s) = store();
        std::fs::create_dir_all(s.path().parent().unwrap()).unwrap();
        std::fs::write(s.path(), "[[mutating]]\nserver = \n").unwrap();
        let err = s.classify("a", "b", None).unwrap_err();
        assert!(
            err.to_string().contains(&s.path().display().to_string()),
            "{err}"
        );
        assert!(matches!(err, CatalogError::Corrupt { .. }));
        assert!(s.add_mutating("a", "b", None).is_err());
        assert_eq!(
            std::fs::read_to_string(s.path()).unwrap(),
            "[[mutating]]\nserver = \n"
        );
    }

    #[test]
    fn a_catalog_value_of_the_wrong_type_names_its_key_its_line_and_the_type_expected() {
        let (_d, s) = store();
        std::fs::create_dir_all(s.path().parent().unwrap()).unwrap();
        let text = "[[read_only]]\nserver = \"a\"\ntool = \"b\"\n\n[[mutating]]\nserver = \"x\"\ntool = 5\n";
        std::fs::write(s.path(), text).unwrap();
        let err = s.classify("a", "b", None).unwrap_err();
        assert!(
            err.to_string().contains(
                "`mutating[0].tool` (line 7) is a whole number, but a string is expected"
            ),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(s.path()).unwrap(), text);
    }

    #[test]
    fn a_call_names_its_vm_through_the_entrys_vm_arg() {
        let (_d, s) = store();
        s.add_mutating("ssh", "run", Some("target.host")).unwrap();
        let args = serde_json::json!({"target": {"host": "web-01"}, "cmd": "reboot"});
        let c = s.classify_call("ssh", "run", &args).unwrap();
        assert_eq!(
            (c.class, c.vm.as_deref()),
            (ToolClass::Mutating, Some("web-01"))
        );
        let c = s.classify_call("ssh", "exec", &args).unwrap();
        assert_eq!((c.class, c.vm), (ToolClass::Unknown, None));
    }

    #[test]
    fn classify_refuses_an_empty_a_control_character_or_an_overlong_name_as_add_does() {
        let (_d, s) = store();
        let long = "x".repeat(201);
        let unusable = InvalidEntry::ControlCharacterOrTooLong;
        for (server, tool, field, why) in [
            (" ", "run", "server", InvalidEntry::Empty),
            ("ssh", "", "tool", InvalidEntry::Empty),
            ("ssh", "run\u{7}", "tool", unusable.clone()),
            ("ss\nh", "run", "server", unusable.clone()),
            ("ssh", long.as_str(), "tool", unusable.clone()),
        ] {
            let err = s.classify(server, tool, None).unwrap_err();
            assert!(
                matches!(&err, CatalogError::Invalid { field: f, reason } if *f == field && *reason == why),
                "{server:?}/{tool:?}: {err}"
            );
            assert_eq!(err.kind(), ErrorKind::Usage);
            assert!(s.add_mutating(server, tool, None).is_err());
        }
        let c = s.classify(" ssh ", " run ", None).unwrap();
        assert_eq!((c.server.as_str(), c.tool.as_str()), ("ssh", "run"));
    }

    #[test]
    fn empty_names_are_rejected_naming_the_field() {
        let (_d, s) = store();
        let err = s.add_mutating(" ", "x", None).unwrap_err();
        assert!(matches!(
            err,
            CatalogError::Invalid {
                field: "server",
                reason: InvalidEntry::Empty,
            }
        ));
    }

    #[test]
    fn concurrent_writers_from_many_threads_lose_no_entry() {
        let (_d, s) = store();
        std::thread::scope(|scope| {
            for i in 0..8 {
                let s = s.clone();
                scope.spawn(move || s.add_mutating("srv", &format!("tool-{i}"), None).unwrap());
            }
        });
        assert_eq!(s.list().unwrap().mutating.len(), 8);
    }
}
