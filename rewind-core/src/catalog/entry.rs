//! The catalog's entries and what they classify: a tool read-only, mutating or unknown, from which
//! source, and the question for the human about an unknown one.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

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
    pub(super) fn matches(&self, server: &str, tool: &str) -> bool {
        self.server == server && (self.tool == tool || self.tool == "*")
    }

    pub(super) fn same(&self, server: &str, tool: &str) -> bool {
        self.server == server && self.tool == tool
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
