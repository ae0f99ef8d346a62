//! The ways around a gateway on this machine: an upstream of `[[gateway.upstream]]` that an MCP
//! client's own configuration registers directly too. An agent that reaches the upstream that way
//! is not guarded by the gateway, whatever the catalog says; `rewind doctor` warns of each one,
//! naming the file and the entry.
//!
//! Read: Claude Desktop's `claude_desktop_config.json`, Claude Code's `.mcp.json` (of the working
//! folder) and `~/.claude.json` (its own servers and each project's), VS Code's `mcp.json` (the
//! user's and the working folder's `.vscode/`) and Cursor's `mcp.json` (`~/.cursor/` and the working
//! folder's `.cursor/`). An entry is the upstream when it names its URL, or runs its command with
//! its arguments, or bears its name; an entry that runs `rewind-mcp` is the gateway itself.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::config::{Reach, Upstream};

/// One entry of a client's configuration that reaches an upstream around the gateway.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bypass {
    /// The client's configuration file.
    pub file: PathBuf,
    /// The entry's name there.
    pub entry: String,
    /// The upstream it reaches.
    pub upstream: String,
    /// How it was told: `its URL`, `its command`, `its name`.
    pub by: &'static str,
}

/// The client configurations read, for a home folder `home`, a configuration folder `config` (the
/// platform's: `~/.config` on Linux) and a working folder `cwd`: each file and the keys that hold
/// its servers.
pub fn client_files(
    home: &Path,
    config: &Path,
    cwd: &Path,
) -> Vec<(PathBuf, &'static [&'static str])> {
    const SERVERS: &[&str] = &["mcpServers"];
    const VSCODE: &[&str] = &["servers"];
    vec![
        (config.join("Claude/claude_desktop_config.json"), SERVERS),
        (cwd.join(".mcp.json"), SERVERS),
        (home.join(".claude.json"), SERVERS),
        (config.join("Code/User/mcp.json"), VSCODE),
        (cwd.join(".vscode/mcp.json"), VSCODE),
        (home.join(".cursor/mcp.json"), SERVERS),
        (cwd.join(".cursor/mcp.json"), SERVERS),
    ]
}

/// Every entry of the files of [`client_files`] that reaches one of `upstreams` directly. A file
/// that is missing or not JSON is skipped: it registers nothing a client reads either.
pub fn find(upstreams: &[Upstream], files: &[(PathBuf, &'static [&'static str])]) -> Vec<Bypass> {
    let mut found = Vec::new();
    for (file, keys) in files {
        let Some(doc) = std::fs::read_to_string(file)
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        else {
            continue;
        };
        for (entry, server) in entries(&doc, keys) {
            for upstream in upstreams {
                if let Some(by) = reaches(server, &entry, upstream) {
                    found.push(Bypass {
                        file: file.clone(),
                        entry: entry.clone(),
                        upstream: upstream.name.clone(),
                        by,
                    });
                }
            }
        }
    }
    found
}

/// The servers a document registers under `keys`: at its top, and under each of `projects` (Claude
/// Code's `~/.claude.json` keeps each project's own).
fn entries<'a>(doc: &'a Value, keys: &[&str]) -> Vec<(String, &'a Value)> {
    let projects = doc
        .get("projects")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|p| p.values());
    std::iter::once(doc)
        .chain(projects)
        .flat_map(|scope| keys.iter().filter_map(move |k| scope.get(*k)?.as_object()))
        .flat_map(|servers| servers.iter().map(|(name, s)| (name.clone(), s)))
        .collect()
}

/// Whether the entry `name`, `server`, reaches `upstream`, and how that was told.
fn reaches(server: &Value, name: &str, upstream: &Upstream) -> Option<&'static str> {
    let text = |k: &str| server.get(k).and_then(Value::as_str);
    let command = text("command");
    if command.is_some_and(|c| Path::new(c).file_name().is_some_and(|f| f == "rewind-mcp")) {
        return None;
    }
    let args: Vec<&str> = server
        .get("args")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    match &upstream.reach {
        Reach::Http { url, .. } if text("url").is_some_and(|u| same_url(u, url.as_str())) => {
            return Some("its URL");
        }
        Reach::Child {
            command: up_command,
            args: up_args,
            ..
        } if command == Some(up_command.as_str()) && args == *up_args => {
            return Some("its command");
        }
        _ => {}
    }
    (name == upstream.name).then_some("its name")
}

fn same_url(a: &str, b: &str) -> bool {
    a.trim().trim_end_matches('/') == b.trim().trim_end_matches('/')
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn child(name: &str, command: &str, args: &[&str]) -> Upstream {
        Upstream {
            name: name.into(),
            reach: Reach::Child {
                command: command.into(),
                args: args.iter().map(|a| a.to_string()).collect(),
                env: BTreeMap::new(),
            },
            vm: None,
            role: None,
        }
    }

    #[test]
    fn an_upstream_registered_directly_in_a_clients_file_is_found_by_url_command_or_name() {
        let dir = tempfile::tempdir().unwrap();
        let (home, config, cwd) = (
            dir.path().join("h"),
            dir.path().join("c"),
            dir.path().join("w"),
        );
        let files = client_files(&home, &config, &cwd);
        let write = |path: PathBuf, doc: Value| {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, doc.to_string()).unwrap();
        };
        let fs = child(
            "fs",
            "npx",
            &["-y", "@modelcontextprotocol/server-filesystem", "/srv"],
        );
        let guests = Upstream {
            name: "guests".into(),
            reach: Reach::Http {
                url: url::Url::parse("https://mcp.example.com/mcp").unwrap(),
                ca_cert: None,
                credential: None,
            },
            vm: None,
            role: None,
        };
        write(
            config.join("Claude/claude_desktop_config.json"),
            serde_json::json!({"mcpServers": {
                "zerto-rewind": {"command": "/usr/local/bin/rewind-mcp", "args": ["--gateway"]},
                "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv"]},
            }}),
        );
        write(
            config.join("Code/User/mcp.json"),
            serde_json::json!({"servers": {
                "g": {"type": "http", "url": "https://mcp.example.com/mcp/"},
            }}),
        );
        write(
            home.join(".claude.json"),
            serde_json::json!({"projects": {"/w": {"mcpServers": {
                "fs": {"command": "node", "args": ["other.js"]},
            }}}}),
        );
        write(
            cwd.join(".cursor/mcp.json"),
            serde_json::json!("not servers"),
        );
        let found = find(&[fs, guests], &files);
        let said: Vec<(String, &str, &str)> = found
            .iter()
            .map(|b| {
                let file = b
                    .file
                    .strip_prefix(dir.path())
                    .unwrap()
                    .display()
                    .to_string();
                (file, b.entry.as_str(), b.by)
            })
            .collect();
        assert_eq!(
            said,
            [
                (
                    "c/Claude/claude_desktop_config.json".to_owned(),
                    "files",
                    "its command"
                ),
                ("h/.claude.json".to_owned(), "fs", "its name"),
                ("c/Code/User/mcp.json".to_owned(), "g", "its URL"),
            ]
        );
    }
}
