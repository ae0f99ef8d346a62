//! What the hook decides of one call, typed: allow, deny, ask or fail closed, each with its reason.
//! A reason's `Display` is the sentence the agent or the human reads; code, tests and the fuzz
//! oracle match the variants.

use std::fmt;
use std::time::Duration;

use chrono::SecondsFormat;
use serde::Serialize;

use crate::audit_journal::{JournalRecord, JournalVm};

/// The hook's answer as hosts name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Permission {
    /// Let the call run.
    Allow,
    /// Block the call; the reason goes to the model.
    Deny,
    /// Put the call to the human; the reason is shown to them.
    Ask,
}

impl Permission {
    /// The word hosts read.
    pub fn word(self) -> &'static str {
        match self {
            Permission::Allow => "allow",
            Permission::Deny => "deny",
            Permission::Ask => "ask",
        }
    }
}

/// The hook's decision on one call; its `Display` is the reason.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Let the call run.
    Allow(Allowed),
    /// Block the call: the agent is told what to do first.
    Deny(Denied),
    /// Put the call to the human.
    Ask(Question),
    /// The hook itself failed (its input, configuration, catalog or guards could not be read): the
    /// call is blocked in the host's terms.
    FailClosed(Failure),
}

impl Decision {
    /// Allow, deny or ask, as hosts read it; a failure denies.
    pub fn permission(&self) -> Permission {
        match self {
            Decision::Allow(_) => Permission::Allow,
            Decision::Deny(_) | Decision::FailClosed(_) => Permission::Deny,
            Decision::Ask(_) => Permission::Ask,
        }
    }

    /// Whether the hook itself failed, so the call is blocked in the host's terms.
    pub fn failed(&self) -> bool {
        matches!(self, Decision::FailClosed(_))
    }

    /// For a question: how the human lets such calls through without being asked. A host that
    /// cannot ask denies the call, and its reason ends with this.
    pub fn remedy(&self) -> Option<String> {
        match self {
            Decision::Ask(q) => Some(q.remedy()),
            _ => None,
        }
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Decision::Allow(r) => r.fmt(f),
            Decision::Deny(r) => r.fmt(f),
            Decision::Ask(r) => r.fmt(f),
            Decision::FailClosed(r) => r.fmt(f),
        }
    }
}

/// Why a call runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Allowed {
    /// The catalog (or its built-in list) says the tool does not change a guest.
    ReadOnly {
        /// The tool's MCP server, or the host's name for its own tools.
        server: String,
        /// The tool.
        tool: String,
    },
    /// A mutating tool, and every VM the call changes has a `guarded` record within the window.
    Guarded {
        /// The tool's server.
        server: String,
        /// The tool.
        tool: String,
        /// The newest `guarded` record of each VM the call changes.
        guards: Vec<JournalRecord>,
        /// How far back a guard counts.
        window: Duration,
    },
    /// A mutating tool of an upstream, called through rewind's gateway, which guards the VM before
    /// it forwards the call (and forwards nothing it could not guard).
    ThroughGateway {
        /// The upstream.
        server: String,
        /// Its tool.
        tool: String,
    },
    /// A call the hook would have blocked, held on the team server and approved by a person: this
    /// identical call is let through once.
    Approved {
        /// The tool's server.
        server: String,
        /// The tool.
        tool: String,
        /// The held call.
        approval_id: String,
        /// Who approved it.
        by: String,
    },
}

impl fmt::Display for Allowed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Allowed::ReadOnly { server, tool } => write!(
                f,
                "{server}/{tool} is read-only in rewind's tool catalog: it does not change a guest"
            ),
            Allowed::Guarded {
                server,
                tool,
                guards,
                window,
            } => {
                let minutes = window_words(*window);
                for (i, r) in guards.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    // A guard made through a team server names the person it was made for.
                    let for_whom = r
                        .person
                        .as_ref()
                        .map(|p| format!(" for {p}, through the team server"))
                        .unwrap_or_default();
                    write!(
                        f,
                        "{server}/{tool} is mutating, and VM {} was guarded at {} for change {}{for_whom} (within the last {minutes})",
                        r.vm.name,
                        r.time.to_rfc3339_opts(SecondsFormat::Secs, true),
                        r.change_id
                    )?;
                }
                Ok(())
            }
            Allowed::ThroughGateway { server, tool } => write!(
                f,
                "{server}/{tool} is mutating and is called through rewind's gateway: the gateway guards the VM it changes before it forwards the call, and forwards nothing it could not guard"
            ),
            Allowed::Approved {
                server,
                tool,
                approval_id,
                by,
            } => write!(
                f,
                "{server}/{tool} was held on the team server as {approval_id} and approved by {by}: this identical call is allowed once"
            ),
        }
    }
}

/// Where the guards a call was judged by were read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Sources {
    /// This machine's audit journal.
    #[default]
    Journal,
    /// This machine's journal and a team server's guards (`[hook.team]`).
    JournalAndTeamServer,
}

impl fmt::Display for Sources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Sources::Journal => "rewind's journal",
            Sources::JournalAndTeamServer => "rewind's journal or the team server's",
        })
    }
}

/// Why a call is blocked, with what to do first.
#[derive(Debug, Clone, PartialEq)]
pub enum Denied {
    /// A call the hook would have blocked, held on the team server for a person's approval (or
    /// denied by one, or already let through once): what the server said, its id and address.
    Held {
        /// The held call.
        approval_id: String,
        /// Where a person approves or denies it.
        url: String,
        /// What the agent is told: the state, a denial's comment, what to do next.
        message: String,
    },
    /// The VM the catalog's VM argument names has no `guarded` record within the window.
    NotGuarded {
        /// The tool's server.
        server: String,
        /// The tool.
        tool: String,
        /// The VM reference, as the argument gives it.
        vm: String,
        /// The argument that names the VM.
        vm_arg: Option<String>,
        /// Where the guards were read.
        sources: Sources,
        /// How far back a guard counts.
        window: Duration,
    },
    /// The input names VMs the journal knows, and these have no `guarded` record within the window.
    MentionedNotGuarded {
        /// The tool's server.
        server: String,
        /// The tool.
        tool: String,
        /// The names of the VMs without a guard, in the order of their identifiers.
        vms: Vec<String>,
        /// Where the guards were read.
        sources: Sources,
        /// How far back a guard counts.
        window: Duration,
    },
    /// The VM was guarded within the window, but its VPGs changed after the guard so that the
    /// guard no longer covers it.
    ProtectionChanged {
        /// The tool's server.
        server: String,
        /// The tool.
        tool: String,
        /// The VM's name.
        vm: String,
        /// The change its guard was of.
        change_id: String,
        /// The VPGs added after the guard, which hold no tag of the change.
        added: Vec<String>,
        /// The VPGs the VM is no longer in, with the guard's tags in them.
        removed: Vec<String>,
    },
    /// The host did not say which MCP server the tool is of, and rewind cannot tell.
    UnnamedServer {
        /// The host, as people write it.
        host: String,
        /// The tool.
        tool: String,
        /// The servers of the catalog with a tool of that name (none, or several).
        servers: Vec<String>,
    },
}

impl fmt::Display for Denied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Denied::NotGuarded {
                server,
                tool,
                vm,
                vm_arg,
                sources,
                window,
            } => {
                let named = quoted(vm);
                write!(
                    f,
                    "{server}/{tool} changes VM {named} (its argument {}), and {named} has no guarded record in {sources} from the last {}: {}",
                    vm_arg.as_deref().unwrap_or("?"),
                    window_words(*window),
                    guard_first(server, tool, &[&named])
                )
            }
            Denied::MentionedNotGuarded {
                server,
                tool,
                vms,
                sources,
                window,
            } => {
                let vms: Vec<&str> = vms.iter().map(String::as_str).collect();
                let (names, have) = match vms.as_slice() {
                    [vm] => (format!("VM {vm}"), "has"),
                    _ => (format!("VMs {}", vms.join(", ")), "have"),
                };
                write!(
                    f,
                    "{server}/{tool} is mutating and this call names {names}, which {have} no guarded record in {sources} from the last {}: {}",
                    window_words(*window),
                    guard_first(server, tool, &vms)
                )
            }
            Denied::ProtectionChanged {
                server,
                tool,
                vm,
                change_id,
                added,
                removed,
            } => {
                let named = quoted(vm);
                let what = match added.as_slice() {
                    [] => format!(
                        "every VPG its guard of change {change_id} tagged is gone ({}), so no way back is left",
                        removed.join(", ")
                    ),
                    added => format!(
                        "VPG {} began protecting {named} after its guard of change {change_id}, so it holds no tag to rewind this change from",
                        added.join(", ")
                    ),
                };
                write!(
                    f,
                    "{server}/{tool} changes VM {named}, and {what}: {}",
                    guard_first(server, tool, &[&named])
                )
            }
            Denied::Held { message, .. } => f.write_str(message),
            Denied::UnnamedServer {
                host,
                tool,
                servers,
            } => {
                let why = match servers.as_slice() {
                    [] => {
                        "no MCP server in rewind's tool catalog has a tool of that name".to_string()
                    }
                    several => format!(
                        "the servers {} of rewind's tool catalog each have a tool of that name",
                        several.join(", ")
                    ),
                };
                write!(
                    f,
                    "{host} did not say which MCP server the tool {:?} is of, and rewind cannot tell: {why}, and no server of .cursor/mcp.json is launched as this one is. It is denied (fail closed). Classify it under its server's name in .cursor/mcp.json (`rewind catalog add-read-only <server> {tool}`, or `add-mutating <server> {tool} --vm-arg <argument>`), then run it again.",
                    quoted(tool)
                )
            }
        }
    }
}

/// Why a call is put to the human; [`Question::remedy`] says how to stop being asked.
#[derive(Debug, Clone, PartialEq)]
pub enum Question {
    /// The tool is in neither list of the catalog: unknown is not safe.
    UnknownTool {
        /// The tool's server.
        server: String,
        /// The tool.
        tool: String,
        /// The catalog's question for the human.
        question: String,
    },
    /// A mutating tool, and neither an argument nor the input names a VM the journal knows.
    WhichVm {
        /// The tool's server.
        server: String,
        /// The tool.
        tool: String,
        /// The argument the catalog says names the VM, absent from this call; `None` when the
        /// catalog does not say.
        vm_arg: Option<String>,
    },
    /// A reference in the call answers to records of more than one VM: a guard of one must not let
    /// a call on another through.
    Ambiguous {
        /// The tool's server.
        server: String,
        /// The tool.
        tool: String,
        /// The reference (a name, host name, address or identifier) the VMs share.
        reference: String,
        /// The VMs it answers to, each as its newest record names it.
        candidates: Vec<JournalVm>,
    },
}

impl Question {
    /// How the human lets calls like this one through without a question.
    pub fn remedy(&self) -> String {
        match self {
            Question::UnknownTool { server, tool, .. } => format!(
                "To let {server}/{tool} through, classify it: `rewind catalog add-read-only {server} {tool}` if it never changes a guest, or `rewind catalog add-mutating {server} {tool} --vm-arg <argument>` so that it runs once the VM its argument names is guarded."
            ),
            Question::WhichVm { server, tool, .. } => format!(
                "To let it through, guard the VM it changes first: the hook then finds that VM in the call's input. If an argument of the tool names the VM, tell rewind which: `rewind catalog add-mutating {server} {tool} --vm-arg <argument>`."
            ),
            Question::Ambiguous { .. } => "To let it through, guard the VM it changes and name that VM by its identifier in the call (`rewind journal` shows each VM's).".to_string(),
        }
    }
}

impl fmt::Display for Question {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Question::UnknownTool { question, .. } => f.write_str(question),
            Question::WhichVm {
                server,
                tool,
                vm_arg,
            } => {
                let hint = match vm_arg {
                    Some(arg) => format!("its VM argument `{arg}` is missing from this call"),
                    None => format!(
                        "the catalog does not say which argument names the VM (set it with `rewind catalog add-mutating {server} {tool} --vm-arg <argument>`)"
                    ),
                };
                write!(
                    f,
                    "{server}/{tool} is mutating, and rewind cannot tell which VM this call changes: {hint}, and the input names no VM that rewind has guarded. Allow it only if that VM was guarded (a tagged checkpoint for this change); otherwise guard it first."
                )
            }
            Question::Ambiguous {
                server,
                tool,
                reference,
                candidates,
            } => {
                let list = candidates
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ");
                write!(
                    f,
                    "{server}/{tool} is mutating, and {:?} names more than one VM in rewind's journal: {list}. rewind cannot tell which one this call changes, so it does not take a guard of one for the other. Allow it only if the VM it changes was guarded for this change; to be asked less, name the VM by its identifier.",
                    quoted(reference)
                )
            }
        }
    }
}

/// Which guards could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuardSource {
    /// This machine's audit journal (or its VM index).
    Journal,
    /// The team server's (`[hook.team]`).
    TeamServer,
}

/// Why the hook could not decide, so that the call is blocked (fail closed).
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// Standard input could not be read.
    Stdin {
        /// The error.
        error: String,
    },
    /// The input is not a JSON object.
    NotHookInput {
        /// What is wrong with it.
        problem: String,
    },
    /// The input is a JSON object, but not one the host's hook sends.
    HostInput {
        /// The host, as people write it.
        host: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The configuration cannot be read.
    Configuration {
        /// The error.
        error: String,
    },
    /// The tool catalog cannot be read, or refuses the tool's name.
    Catalog {
        /// The error (which never echoes the name).
        error: String,
    },
    /// The guards a mutating call is judged by cannot be read.
    Guards {
        /// Which.
        source: GuardSource,
        /// The tool's server.
        server: String,
        /// The tool.
        tool: String,
        /// The error.
        error: String,
    },
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Stdin { error } => write!(
                f,
                "rewind's pre-tool hook could not read its input on stdin ({error}), so the call is denied (fail closed)"
            ),
            Failure::NotHookInput { problem } => write!(
                f,
                "rewind's pre-tool hook could not read its input ({problem}); it expects the hook JSON of an agent host, with the tool's name and input, so the call is denied (fail closed)"
            ),
            Failure::HostInput { host, problem } => write!(
                f,
                "rewind's pre-tool hook could not read {host}'s input ({problem}), so the call is denied (fail closed)"
            ),
            Failure::Configuration { error } => write!(
                f,
                "rewind cannot read its configuration, so the call is denied (fail closed): {error}"
            ),
            Failure::Catalog { error } => write!(
                f,
                "rewind cannot classify this call from its tool catalog, so it is denied (fail closed): {error}"
            ),
            Failure::Guards {
                source,
                server,
                tool,
                error,
            } => {
                let what = match source {
                    GuardSource::Journal => "its audit journal",
                    GuardSource::TeamServer => "the team server's guards",
                };
                write!(
                    f,
                    "rewind cannot read {what}, so it cannot tell whether the VM was guarded; {server}/{tool} is denied (fail closed): {error}"
                )
            }
        }
    }
}

/// The instruction to guard `vms` first, then run `server`/`tool` again.
fn guard_first(server: &str, tool: &str, vms: &[&str]) -> String {
    let (vm, each) = match vms {
        [one] => (*one, ""),
        _ => ("<vm>", " for each"),
    };
    format!(
        "guard {} first (the zerto_guard_before_mutate tool, or `rewind guard {vm} --agent <agent> --action \"<what>\" --change <id>`{each}), then run {server}/{tool} again",
        vms.join(", ")
    )
}

/// The most characters of one input value a reason quotes: a reason goes back to the model and the
/// human, and an agent's argument can be megabytes long.
const QUOTE_MAX: usize = 120;

/// `value` as a reason quotes it: whole when short, else its first 120 characters and how long it
/// was (a reason goes back to the model and the human; an agent's argument can be megabytes long).
pub fn quoted(value: &str) -> String {
    match value.char_indices().nth(QUOTE_MAX) {
        None => value.to_string(),
        Some((cut, _)) => format!("{}… ({} bytes in all)", &value[..cut], value.len()),
    }
}

/// The window in words: `15 min`, `90 s`.
pub(super) fn window_words(window: Duration) -> String {
    let secs = window.as_secs();
    if secs >= 60 && secs.is_multiple_of(60) {
        format!("{} min", secs / 60)
    } else {
        format!("{secs} s")
    }
}
