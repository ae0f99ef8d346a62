//! `rewind hook install --host H`: writes rewind's pre-tool hook into an agent host's settings,
//! merged into what the file already holds, or prints the snippet.
//!
//! Each host reads its hooks from its own file and shape ([`Target`]). A file that exists is read as
//! JSON and only the hook's entry is added (once: installing twice changes nothing); a file that is
//! not a JSON object is left alone with an error. The file is replaced whole, through a temporary
//! file in its folder, so a host never reads half of it.
//!
//! `.claude/settings.json` is read by VS Code's agent, Copilot CLI and Cursor too, and `.github/hooks`
//! by VS Code and Copilot CLI: a hook installed there names no `--host`, so that each host that runs
//! it is told apart by its input.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Value, json};

use super::host::Host;
use crate::exit::CliError;

/// Where a hook is installed: the project's settings or the user's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// The current folder's settings (to commit with the project).
    Project,
    /// The user's own settings, for every project.
    User,
}

/// What `rewind hook install` did, or would do with `--print`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Installed {
    /// The host.
    pub host: &'static str,
    /// The settings file.
    pub file: PathBuf,
    /// Whether the file was changed (false when the hook was there already, or with `--print`).
    pub changed: bool,
    /// The hook's entry as the file holds it.
    pub entry: Value,
    /// What else the host needs before it runs the hook.
    pub note: &'static str,
}

/// A host's settings file and the shape of its hook entry.
struct Target {
    /// The file, relative to the project folder or to the home folder.
    project: &'static str,
    user: &'static str,
    /// The keys from the file's root to the list the entry joins.
    path: &'static [&'static str],
    /// Whether `--host` goes on the command line: not in a file other hosts read too.
    names_host: bool,
    note: &'static str,
}

fn target(host: Host) -> Target {
    match host {
        Host::ClaudeCode => Target {
            project: ".claude/settings.json",
            user: ".claude/settings.json",
            path: &["hooks", "PreToolUse"],
            names_host: false,
            note: "Claude Code runs it from its next session; VS Code's agent, Copilot CLI and Cursor (with third-party hooks on) run hooks of this file too, each told apart by its input.",
        },
        Host::VsCode | Host::CopilotCli => Target {
            project: ".github/hooks/rewind.json",
            user: ".copilot/hooks/rewind.json",
            path: &["hooks", "preToolUse"],
            names_host: false,
            note: "VS Code's agent and Copilot CLI both read this file; Copilot CLI runs a project's hooks once the folder is trusted.",
        },
        Host::Codex => Target {
            project: ".codex/hooks.json",
            user: ".codex/hooks.json",
            path: &["hooks", "PreToolUse"],
            names_host: true,
            note: "Codex runs a hook only once it is trusted: open `/hooks` in Codex and trust it (`codex exec` skips an untrusted hook without a word). A project's hooks also need the project trusted.",
        },
        Host::GeminiCli => Target {
            project: ".gemini/settings.json",
            user: ".gemini/settings.json",
            path: &["hooks", "BeforeTool"],
            names_host: true,
            note: "Gemini CLI runs hooks only in a trusted folder, user-level ones included.",
        },
        Host::Cursor => Target {
            project: ".cursor/hooks.json",
            user: ".cursor/hooks.json",
            path: &["hooks", "preToolUse"],
            names_host: true,
            note: "Cursor reloads hooks.json on save; a project's hooks run in a trusted workspace. Both preToolUse and beforeMCPExecution are installed: only the second names the MCP server.",
        },
    }
}

/// The hook's entry for `host`, running `command`.
fn entry(host: Host, command: &str) -> Value {
    match host {
        Host::ClaudeCode => {
            json!({"matcher": "*", "hooks": [{"type": "command", "command": command}]})
        }
        Host::VsCode | Host::CopilotCli => {
            json!({"type": "command", "bash": command, "timeoutSec": 30})
        }
        Host::Codex => {
            json!({"matcher": "*", "hooks": [{"type": "command", "command": command, "timeout": 30}]})
        }
        Host::GeminiCli => json!({"matcher": "*", "hooks": [
            {"name": "rewind", "type": "command", "command": command, "timeout": 30000}
        ]}),
        Host::Cursor => json!({"command": command, "failClosed": true}),
    }
}

/// The command a host runs: `program hook pre-tool-use`, with `--host` where the file is the host's
/// alone.
pub fn command_line(host: Host, program: &str) -> String {
    let quoted = if program.contains(char::is_whitespace) {
        format!("'{program}'")
    } else {
        program.to_string()
    };
    if target(host).names_host {
        format!("{quoted} hook pre-tool-use --host {}", host.name())
    } else {
        format!("{quoted} hook pre-tool-use")
    }
}

/// The settings file of `host` for `scope`, under `project` or `home`.
pub fn settings_file(host: Host, scope: Scope, project: &Path, home: &Path) -> PathBuf {
    let t = target(host);
    match scope {
        Scope::Project => project.join(t.project),
        Scope::User if host == Host::Codex => std::env::var_os("CODEX_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join(".codex"))
            .join("hooks.json"),
        Scope::User => home.join(t.user),
    }
}

/// Installs the hook of `host` into `file` (or, with `print`, only says what it would add).
pub fn install(host: Host, file: &Path, command: &str, print: bool) -> Result<Installed, CliError> {
    let t = target(host);
    let entry = entry(host, command);
    let mut settings = read_settings(file)?;
    let mut changed = add(&mut settings, t.path, &entry, command, file)?;
    if host == Host::Cursor {
        changed |= add(
            &mut settings,
            &["hooks", "beforeMCPExecution"],
            &entry,
            command,
            file,
        )?;
        settings
            .as_object_mut()
            .map(|o| o.entry("version").or_insert(json!(1)));
    }
    if matches!(host, Host::VsCode | Host::CopilotCli) {
        settings
            .as_object_mut()
            .map(|o| o.entry("version").or_insert(json!(1)));
    }
    if changed && !print {
        write_settings(file, &settings)?;
    }
    Ok(Installed {
        host: host.name(),
        file: file.to_path_buf(),
        changed: changed && !print,
        entry,
        note: t.note,
    })
}

/// The settings in `file`: `{}` when there is none yet.
fn read_settings(file: &Path) -> Result<Value, CliError> {
    let text = match std::fs::read_to_string(file) {
        Ok(t) if t.trim().is_empty() => return Ok(json!({})),
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(json!({})),
        Err(e) => return Err(refused(file, &format!("it cannot be read ({e})"))),
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err(refused(file, "it is not a JSON object")),
        Err(e) => Err(refused(file, &format!("it is not JSON ({e})"))),
    }
}

fn refused(file: &Path, why: &str) -> CliError {
    CliError::new(
        rewind_core::ErrorKind::Usage,
        format!(
            "cannot install the hook into {}: {why}; nothing was changed. Mend the file, or print the snippet with --print and add it by hand",
            file.display()
        ),
    )
}

/// Adds `entry` to the list at `path` of `settings`, unless an entry there runs `command` already.
/// Whether it was added.
fn add(
    settings: &mut Value,
    path: &[&str],
    entry: &Value,
    command: &str,
    file: &Path,
) -> Result<bool, CliError> {
    let mut at = settings;
    for (i, key) in path.iter().enumerate() {
        let last = i + 1 == path.len();
        let Value::Object(map) = at else {
            return Err(refused(
                file,
                &format!("its {:?} is not an object", path[..i].join(".")),
            ));
        };
        at = map
            .entry(key.to_string())
            .or_insert_with(|| if last { json!([]) } else { json!({}) });
    }
    let Value::Array(list) = at else {
        return Err(refused(
            file,
            &format!("its {:?} is not a list", path.join(".")),
        ));
    };
    if list.iter().any(|e| runs(e, command)) {
        return Ok(false);
    }
    list.push(entry.clone());
    Ok(true)
}

/// Whether a hook entry (or a hook inside it) runs `command`.
fn runs(entry: &Value, command: &str) -> bool {
    let own = ["command", "bash"]
        .iter()
        .any(|k| entry.get(k).and_then(Value::as_str) == Some(command));
    let nested = entry
        .get("hooks")
        .and_then(Value::as_array)
        .is_some_and(|hooks| hooks.iter().any(|h| runs(h, command)));
    own || nested
}

/// Replaces `file` with `settings`, through a temporary file in its folder.
fn write_settings(file: &Path, settings: &Value) -> Result<(), CliError> {
    let fail = |e: &dyn std::fmt::Display| {
        CliError::new(
            rewind_core::ErrorKind::Internal,
            format!("cannot write {}: {e}", file.display()),
        )
    };
    let dir = file
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| fail(&e))?;
    let mut text = serde_json::to_string_pretty(settings).map_err(|e| fail(&e))?;
    text.push('\n');
    let temp = tempfile::NamedTempFile::new_in(dir).map_err(|e| fail(&e))?;
    std::fs::write(temp.path(), text).map_err(|e| fail(&e))?;
    if let Ok(meta) = std::fs::metadata(file) {
        // The host's file keeps the mode its owner gave it.
        let _ = std::fs::set_permissions(temp.path(), meta.permissions());
    }
    temp.persist(file).map_err(|e| fail(&e.error))?;
    Ok(())
}

/// The settings file's JSON, as a human reads it after the install.
pub fn human(i: &Installed, print: bool) -> String {
    let entry = serde_json::to_string_pretty(&i.entry).unwrap_or_default();
    let head = match (print, i.changed) {
        (true, _) => format!(
            "Add this entry to {} (rewind hook install --host {} writes it):",
            i.file.display(),
            i.host
        ),
        (false, true) => format!(
            "Installed rewind's hook for {} in {}:",
            i.host,
            i.file.display()
        ),
        (false, false) => format!(
            "rewind's hook for {} is already in {}; nothing was changed:",
            i.host,
            i.file.display()
        ),
    };
    format!("{head}\n{entry}\n{}", i.note)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_install_keeps_what_the_settings_hold_and_a_second_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(".claude/settings.json");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(
            &file,
            r#"{"model": "opus", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]}], "Stop": []}}"#,
        )
        .unwrap();
        let first = install(
            Host::ClaudeCode,
            &file,
            "/bin/rewind hook pre-tool-use",
            false,
        )
        .unwrap();
        assert!(first.changed);
        let settings: Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(settings["model"], "opus");
        assert_eq!(settings["hooks"]["Stop"], json!([]));
        let pre = settings["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(pre.len(), 2);
        assert_eq!(pre[0]["hooks"][0]["command"], "lint");
        assert_eq!(
            pre[1]["hooks"][0]["command"],
            "/bin/rewind hook pre-tool-use"
        );
        let again = install(
            Host::ClaudeCode,
            &file,
            "/bin/rewind hook pre-tool-use",
            false,
        )
        .unwrap();
        assert!(!again.changed);
        let after: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(after, settings);
    }

    #[test]
    fn a_settings_file_that_is_not_a_json_object_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        for text in ["{\"hooks\": ", "[1]", "{\"hooks\": {\"BeforeTool\": {}}}"] {
            std::fs::write(&file, text).unwrap();
            let err =
                install(Host::GeminiCli, &file, "rewind hook pre-tool-use", false).unwrap_err();
            assert!(err.to_string().contains("nothing was changed"), "{err}");
            assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
        }
    }

    #[test]
    fn cursor_gets_both_of_its_events_and_only_a_hosts_own_file_names_the_host() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("hooks.json");
        let cmd = command_line(Host::Cursor, "/usr/bin/rewind");
        assert_eq!(cmd, "/usr/bin/rewind hook pre-tool-use --host cursor");
        install(Host::Cursor, &file, &cmd, false).unwrap();
        let s: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(s["version"], 1);
        for event in ["preToolUse", "beforeMCPExecution"] {
            assert_eq!(s["hooks"][event][0]["command"], cmd.as_str(), "{s}");
            assert_eq!(s["hooks"][event][0]["failClosed"], true);
        }
        assert_eq!(
            command_line(Host::ClaudeCode, "/usr/bin/rewind"),
            "/usr/bin/rewind hook pre-tool-use"
        );
    }
}
