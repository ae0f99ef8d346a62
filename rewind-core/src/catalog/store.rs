//! The catalog file: read, written atomically under its lock, entries added and removed.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::builtin::{BUILTIN_READ_ONLY, HOSTS, ZERTO_REWIND, always_asks};
use super::entry::{
    CatalogEntry, CatalogListing, Classification, ListedEntry, Source, ToolClass, question_for,
};
use super::error::{CatalogError, InvalidEntry};
use crate::local_state::{self, LOCK_WAIT, LockError, LockMode, open_private};

/// The catalog file as written: its two lists.
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

fn refuse_always_asked(server: &str, tool: &str) -> Result<(), CatalogError> {
    match always_asks(server, tool) {
        true => Err(CatalogError::AlwaysAsks {
            server: server.to_string(),
            tool: tool.to_string(),
        }),
        false => Ok(()),
    }
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
