//! `rewind hook pre-tool-use`: the pre-tool hook of every agent host that has one (Claude Code, VS
//! Code's agent, GitHub Copilot CLI, Codex CLI, Gemini CLI, Cursor), the host-side enforcement point.
//!
//! It reads the host's JSON on stdin, tells the host from its fields (or `--host`), and answers in
//! that host's own shape ([`host`]). What it answers is [`rewind_core::hook::judge`]'s: read-only
//! tools are allowed, unknown ones asked about, a mutating one allowed only once the VM it changes
//! was guarded within the hook window. A host that cannot ask gets a deny that carries the question
//! and how to let such a call through. This module holds only the hosts' formats and the reading:
//! the input, the configuration, the catalog (and, for Cursor, `.cursor/mcp.json`) and, for a
//! mutating call only, the guards ([`team`]). What it cannot read fails the hook: a block in the
//! host's terms (fail closed).
//!
//! It never calls a ZVM, and it starts no async runtime, so it answers in milliseconds. The one
//! exception is a machine whose agent guards through a team server (`[hook.team]`, [`team`]): for a
//! mutating call only, it asks that server for its recent guards, within a short timeout, and fails
//! closed when it cannot.
//!
//! `rewind hook install` ([`install`]) writes it into a host's settings.

pub mod held;
pub mod host;
pub mod install;
pub(crate) mod reach;
pub mod team;

use std::io::Read;

use rewind_core::catalog::{CatalogError, CatalogStore};
use rewind_core::hook::{self, Denied, Failure, GuardRecords};
pub use rewind_core::hook::{Decision, Permission};
use rewind_core::{AuditJournal, Config};
use serde_json::{Map, Value};

use crate::context::Context;
use crate::exit::CliError;
use crate::output;
pub use host::{Answer, Call, Host, ToolRef};
use team::{Guards, GuardsError};

/// Runs the hook: stdin in, the decision out in the host's shape. Returns the exit code.
pub fn pre_tool_use(ctx: &Context, host: Option<Host>) -> u8 {
    let mut input = String::new();
    let answer = match std::io::stdin().read_to_string(&mut input) {
        Ok(_) => respond(&input, host, || ctx.config()),
        Err(e) => host::failure(
            host,
            &Failure::Stdin {
                error: e.to_string(),
            }
            .to_string(),
        ),
    };
    emit(&answer)
}

/// Prints an answer; a decision that cannot be printed blocks the call.
fn emit(answer: &Answer) -> u8 {
    if let Some(line) = &answer.stderr {
        eprintln!("{line}");
    }
    let Some(out) = &answer.stdout else {
        return answer.code;
    };
    match output::write_json(out) {
        Ok(()) => answer.code,
        Err(e) => {
            output::error_line(&format!(
                "cannot print the hook's decision ({e}); blocking the call"
            ));
            host::BLOCK
        }
    }
}

/// The hook's answer to one input: what to print and the exit code. `host` is `--host`, if given;
/// `config` is called only once the input is known to be well formed.
pub fn respond(
    input: &str,
    host: Option<Host>,
    config: impl FnOnce() -> Result<Config, CliError>,
) -> Answer {
    let (host, decision) = decide(input, host, config);
    tracing::info!(host = host.map(Host::name), decision = ?decision.permission(), reason = %decision, "PreToolUse");
    match host {
        Some(host) if !decision.failed() => {
            let (permission, reason) = in_terms_of(host, &decision);
            host::answer(host, permission, &reason)
        }
        _ => host::failure(host, &decision.to_string()),
    }
}

/// The decision as `host` can take it: a question to a host that cannot ask is a deny that carries
/// the question and the way to let such calls through.
fn in_terms_of(host: Host, d: &Decision) -> (Permission, String) {
    if d.permission() != Permission::Ask || host.asks() {
        return (d.permission(), d.to_string());
    }
    (
        Permission::Deny,
        format!(
            "{d} {} cannot put this question to the human from a hook, so rewind denies the call (fail closed). {}",
            host.title(),
            d.remedy().unwrap_or_default()
        ),
    )
}

/// Decides on one input: the host that sent it (when it can be told) and the decision.
pub fn decide(
    input: &str,
    host: Option<Host>,
    config: impl FnOnce() -> Result<Config, CliError>,
) -> (Option<Host>, Decision) {
    let unreadable = |problem: String| Decision::FailClosed(Failure::NotHookInput { problem });
    let fields: Map<String, Value> = match serde_json::from_str(input) {
        Ok(Value::Object(fields)) => fields,
        Ok(_) => return (host, unreadable("it is not a JSON object".to_string())),
        Err(e) => return (host, unreadable(e.to_string())),
    };
    let host = host.unwrap_or_else(|| Host::detect(&fields));
    let call = match host::read_call(host, &fields) {
        Ok(call) => call,
        Err(problem) => {
            return (
                Some(host),
                Decision::FailClosed(Failure::HostInput {
                    host: host.title().to_string(),
                    problem,
                }),
            );
        }
    };
    let decision = match config() {
        Ok(config) => decide_call(&call, &config),
        Err(e) => Decision::FailClosed(Failure::Configuration {
            error: e.to_string(),
        }),
    };
    (Some(host), decision)
}

/// Decides on a call that was read: reads what the catalog says of its tool and, for a mutating
/// tool, the guards; then judges it.
fn decide_call(call: &Call, config: &Config) -> Decision {
    let catalog = CatalogStore::new(&config.catalog_path);
    let (server, tool) = match resolve(call, &catalog) {
        Ok(Ok(named)) => named,
        Ok(Err(unnamed)) => return Decision::Deny(unnamed),
        Err(e) => return catalog_failure(&e),
    };
    let gateway = hook::through_gateway(&server, &tool).map(|(u, t)| (u.to_owned(), t.to_owned()));
    let (server, tool) = gateway.clone().unwrap_or((server, tool));
    let class = match catalog.classify_call(&server, &tool, &call.input) {
        Ok(c) => c,
        // A name the catalog refuses is malformed input; an unreadable catalog tells nothing. Either
        // way the call is denied, and the error (which never echoes the name) says which.
        Err(e) => return catalog_failure(&e),
    };
    if let Some(pass) = gateway.and_then(|_| hook::gateway_pass(&class)) {
        return pass;
    }
    let guards = match hook::wanted(&class) {
        None => GuardRecords::default(),
        Some(wanted) => {
            let read = AuditJournal::of(config)
                .map_err(GuardsError::Journal)
                .and_then(|journal| {
                    Guards::new(&journal, config.hook.team.as_ref(), config.hook.window)
                        .read(&wanted)
                });
            match read {
                Ok(read) => read,
                Err(e) => {
                    return Decision::FailClosed(Failure::Guards {
                        source: e.which(),
                        server,
                        tool,
                        error: e.to_string(),
                    });
                }
            }
        }
    };
    let judged = hook::Call {
        server: &server,
        tool: &tool,
        input: &call.input,
        class: &class,
    };
    let decision = hook::judge(&judged, &guards, config.hook.window, chrono::Utc::now());
    match &config.hook.team {
        Some(team) if blocks(call.host, &decision) => {
            let call = held::HeldCall {
                agent: call.host.name(),
                server: &server,
                tool: &tool,
                vm: class.vm.as_deref(),
                arguments: &call.input,
            };
            held::held(team, call, decision)
        }
        _ => decision,
    }
}

/// Whether `host` blocks the call on `decision`: a deny, or a question it cannot ask from a hook.
/// With `[hook.team]` such a call is held for a person's approval instead of leaving the agent stuck.
fn blocks(host: Host, decision: &Decision) -> bool {
    match decision.permission() {
        Permission::Deny => !decision.failed(),
        Permission::Ask => !host.asks(),
        Permission::Allow => false,
    }
}

fn catalog_failure(e: &CatalogError) -> Decision {
    Decision::FailClosed(Failure::Catalog {
        error: e.to_string(),
    })
}

/// The catalog's `(server, tool)` of a call: `Ok(Err(why))` when the host did not say which MCP
/// server the tool is of and rewind cannot tell; `Err` when the catalog cannot be read.
fn resolve(
    call: &Call,
    catalog: &CatalogStore,
) -> Result<Result<(String, String), Denied>, CatalogError> {
    Ok(Ok(match &call.tool {
        ToolRef::Own(name) => (call.host.name().to_string(), name.clone()),
        ToolRef::Mcp { server, tool } => (server.clone(), tool.clone()),
        ToolRef::Joined { rest, sep } => split_joined(rest, *sep, &catalog.servers()?),
        ToolRef::OfUnnamedServer { tool, launched_by } => {
            let named = launched_by
                .as_deref()
                .and_then(|by| host::cursor_server(&call.workspace, by));
            let server = match named {
                Some(server) => server,
                None => match catalog.servers_of(tool)?.as_slice() {
                    [one] => one.clone(),
                    found => {
                        return Ok(Err(Denied::UnnamedServer {
                            host: call.host.title().to_string(),
                            tool: tool.clone(),
                            servers: found.to_vec(),
                        }));
                    }
                },
            };
            (server, tool.clone())
        }
    }))
}

/// `<server><sep><tool>` split at the longest server name the catalog knows (as the host writes it:
/// lowercase, other characters as `_`, at most 13 characters in VS Code), else at the first `sep`.
fn split_joined(rest: &str, sep: char, servers: &[String]) -> (String, String) {
    let lower = rest.to_lowercase();
    let written = |s: &str| -> String {
        s.to_lowercase()
            .chars()
            .map(|c| match c {
                'a'..='z' | '0'..='9' | '_' | '.' | '-' => c,
                _ => '_',
            })
            .collect()
    };
    let found = servers
        .iter()
        .flat_map(|s| {
            let w = written(s);
            let clipped: String = w.chars().take(13).collect();
            [(s, w), (s, clipped)]
        })
        .filter(|(_, w)| lower.starts_with(&format!("{w}{sep}")))
        .max_by_key(|(_, w)| w.len());
    match found {
        Some((server, w)) => (server.clone(), rest[w.len() + 1..].to_string()),
        None => match rest.split_once(sep) {
            Some((server, tool)) => (server.to_string(), tool.to_string()),
            None => (String::new(), rest.to_string()),
        },
    }
}

/// The entry point of the hook's fuzz target (`fuzz/` at the workspace root) and of the test that
/// replays its corpus: [`decide`] on any input, with a configuration of no site (so no ZVM), an empty
/// catalog and an empty journal. Not part of the crate's API.
#[doc(hidden)]
pub mod fuzzing {
    use rewind_core::hook::Allowed;

    use super::{Decision, decide};

    /// Decides on `input` with no site, no catalog file and no journal file.
    pub fn decide_without_zvm(input: &str) -> Decision {
        let none = std::env::temp_dir().join("rewind-hook-fuzzing-nothing-here");
        let (_, decision) = decide(input, None, || {
            Ok(rewind_core::Config::new(
                none.join("catalog.toml"),
                none.join("journal.jsonl"),
            ))
        });
        decision
    }

    /// Panics when the decision let garbage through: input that is not a hook object naming a tool
    /// (or, from Cursor, a shell command) must be denied, and with an empty catalog and journal only a
    /// built-in read-only tool may be allowed.
    pub fn check(input: &str, decision: &Decision) {
        // Well formed: an object with a string tool name (Copilot CLI's `toolName`, everyone else's
        // `tool_name`) or command, whatever else it holds (fields the hook does not read are skipped
        // unread, as a number too large for a float is).
        #[derive(serde::Deserialize)]
        struct Shape {
            tool_name: Option<String>,
            #[serde(rename = "toolName")]
            tool_name_camel: Option<String>,
            command: Option<String>,
        }
        let named = |s: &Option<String>| s.as_deref().is_some_and(|n| !n.trim().is_empty());
        let well_formed = serde_json::from_str::<Shape>(input)
            .is_ok_and(|s| named(&s.tool_name) || named(&s.tool_name_camel) || named(&s.command));
        if !well_formed {
            assert!(
                matches!(decision, Decision::Deny(_) | Decision::FailClosed(_)),
                "malformed input was not denied: {decision:?}"
            );
        }
        if let Decision::Allow(allowed) = decision {
            assert!(
                matches!(allowed, Allowed::ReadOnly { .. }),
                "allowed without being read-only: {decision:?}"
            );
        }
        assert!(!decision.to_string().is_empty());
    }
}

#[cfg(test)]
mod tests {
    use rewind_core::hook::Failure;

    use super::*;

    #[test]
    fn malformed_input_is_denied_without_reading_the_configuration() {
        for bad in ["", "not json", "[1, 2]"] {
            let (_, d) = decide(bad, None, || panic!("the configuration is not read"));
            assert!(
                matches!(d, Decision::FailClosed(Failure::NotHookInput { .. })),
                "{bad:?}: {d:?}"
            );
        }
        let (host, d) = decide("{\"tool_input\": {}}", None, || {
            panic!("the configuration is not read")
        });
        assert_eq!(host, Some(Host::ClaudeCode));
        assert!(
            matches!(d, Decision::FailClosed(Failure::HostInput { .. })),
            "{d:?}"
        );
    }
}
