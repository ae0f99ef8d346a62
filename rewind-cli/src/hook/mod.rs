//! `rewind hook pre-tool-use`: the pre-tool hook of every agent host that has one (Claude Code, VS
//! Code's agent, GitHub Copilot CLI, Codex CLI, Gemini CLI, Cursor), the host-side enforcement point.
//!
//! It reads the host's JSON on stdin, tells the host from its fields (or `--host`), and answers in
//! that host's own shape ([`host`]):
//!
//! - a read-only tool is allowed;
//! - an unknown tool is asked about, with the catalog's question; a host that cannot ask gets a deny
//!   that carries the question and how to let such a call through;
//! - a mutating tool is allowed only when the VM it changes has a `guarded` journal record younger
//!   than the hook window; otherwise it is denied, telling the agent to guard that VM first. The VM is
//!   read from the argument the catalog entry names (`vm_arg`: a name, host name, IP address or
//!   vmIdentifier, matched against the journal as find_protection matches it); failing that, the hook
//!   looks in the input for the name, identifier or IP address of a VM the journal knows; when it
//!   finds none, it asks. A reference that records of more than one VM answer to (two VMs sharing a
//!   name, a host name's first label or an address) is asked about too, naming them: a guard of one
//!   never lets a call on the other through.
//! - input it cannot read, and a configuration, catalog or journal it cannot read, fail the hook:
//!   a block in the host's terms (fail closed).
//!
//! It reads only the configuration, the catalog and the journal: it never calls a ZVM, and it starts
//! no async runtime, so it answers in milliseconds. The one exception is a machine whose agent guards
//! through a team server (`[hook.team]`, [`team`]): for a mutating call only, it asks that server
//! for its recent guards, within a short timeout, and fails closed when it cannot.
//!
//! `rewind hook install` ([`install`]) writes it into a host's settings.

pub mod host;
pub mod install;
pub mod team;

use std::collections::BTreeMap;
use std::io::Read;
use std::time::Duration;

use rewind_core::audit_journal::{GuardLookup, JournalVm};
use rewind_core::catalog::CatalogStore;
use rewind_core::{AuditJournal, Config, JournalRecord, ToolClass};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::context::Context;
use crate::exit::CliError;
use crate::output;
pub use host::{Answer, Call, Host, ToolRef};
use team::{Guards, GuardsError};

/// The hook's decision.
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

/// A decision with its reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// Allow, deny or ask.
    pub permission: Permission,
    /// Why, in words the agent or the human can act on.
    pub reason: String,
    /// For a question: how the human lets such calls through without being asked. A host that cannot
    /// ask denies the call, and its reason ends with this.
    pub remedy: Option<String>,
    /// The hook itself failed (its input, configuration, catalog or journal could not be read): the
    /// call is blocked in the host's terms.
    pub failed: bool,
}

impl Decision {
    fn allow(reason: String) -> Decision {
        Decision {
            permission: Permission::Allow,
            reason,
            remedy: None,
            failed: false,
        }
    }
    fn deny(reason: String) -> Decision {
        Decision {
            permission: Permission::Deny,
            reason,
            remedy: None,
            failed: false,
        }
    }
    fn ask(reason: String, remedy: String) -> Decision {
        Decision {
            permission: Permission::Ask,
            reason,
            remedy: Some(remedy),
            failed: false,
        }
    }
    fn fail(reason: String) -> Decision {
        Decision {
            permission: Permission::Deny,
            reason,
            remedy: None,
            failed: true,
        }
    }
}

/// Runs the hook: stdin in, the decision out in the host's shape. Returns the exit code.
pub fn pre_tool_use(ctx: &Context, host: Option<Host>) -> u8 {
    let mut input = String::new();
    let answer = match std::io::stdin().read_to_string(&mut input) {
        Ok(_) => respond(&input, host, || ctx.config()),
        Err(e) => host::failure(
            host,
            &format!(
                "rewind's pre-tool hook could not read its input on stdin ({e}), so the call is denied (fail closed)"
            ),
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
    tracing::info!(host = host.map(Host::name), decision = ?decision.permission, reason = %decision.reason, "PreToolUse");
    match host {
        Some(host) if !decision.failed => {
            let (permission, reason) = in_terms_of(host, &decision);
            host::answer(host, permission, &reason)
        }
        _ => host::failure(host, &decision.reason),
    }
}

/// The decision as `host` can take it: a question to a host that cannot ask is a deny that carries
/// the question and the way to let such calls through.
fn in_terms_of(host: Host, d: &Decision) -> (Permission, String) {
    if d.permission != Permission::Ask || host.asks() {
        return (d.permission, d.reason.clone());
    }
    (
        Permission::Deny,
        format!(
            "{} {} cannot put this question to the human from a hook, so rewind denies the call (fail closed). {}",
            d.reason,
            host.title(),
            d.remedy.as_deref().unwrap_or_default()
        ),
    )
}

/// Decides on one input: the host that sent it (when it can be told) and the decision.
pub fn decide(
    input: &str,
    host: Option<Host>,
    config: impl FnOnce() -> Result<Config, CliError>,
) -> (Option<Host>, Decision) {
    let fields: Map<String, Value> = match serde_json::from_str(input) {
        Ok(Value::Object(fields)) => fields,
        Ok(_) => {
            return (
                host,
                Decision::fail(unreadable_input("it is not a JSON object")),
            );
        }
        Err(e) => return (host, Decision::fail(unreadable_input(&e.to_string()))),
    };
    let host = host.unwrap_or_else(|| Host::detect(&fields));
    let call = match host::read_call(host, &fields) {
        Ok(call) => call,
        Err(problem) => {
            return (
                Some(host),
                Decision::fail(format!(
                    "rewind's pre-tool hook could not read {}'s input ({problem}), so the call is denied (fail closed)",
                    host.title()
                )),
            );
        }
    };
    let decision = match config() {
        Ok(config) => decide_call(&call, &config),
        Err(e) => Decision::fail(format!(
            "rewind cannot read its configuration, so the call is denied (fail closed): {e}"
        )),
    };
    (Some(host), decision)
}

fn unreadable_input(problem: &str) -> String {
    format!(
        "rewind's pre-tool hook could not read its input ({problem}); it expects the hook JSON of an agent host, with the tool's name and input, so the call is denied (fail closed)"
    )
}

/// Decides on a call that was read: classify its tool, then judge it.
fn decide_call(call: &Call, config: &Config) -> Decision {
    let catalog = CatalogStore::new(&config.catalog_path);
    let (server, tool) = match resolve(call, &catalog) {
        Ok(Ok(named)) => named,
        Ok(Err(unnamed)) => return unnamed,
        Err(e) => return catalog_failure(&e),
    };
    let class = match catalog.classify_call(&server, &tool, &call.input) {
        Ok(c) => c,
        // A name the catalog refuses is malformed input; an unreadable catalog tells nothing. Either
        // way the call is denied, and the error (which never echoes the name) says which.
        Err(e) => return catalog_failure(&e),
    };
    match class.class {
        ToolClass::ReadOnly => Decision::allow(format!(
            "{server}/{tool} is read-only in rewind's tool catalog: it does not change a guest"
        )),
        ToolClass::Unknown => Decision::ask(class.human_question(), classify_words(&server, &tool)),
        ToolClass::Mutating => {
            let journal = AuditJournal::new(&config.journal_path);
            let guards = Guards::new(&journal, config.hook.team.as_ref(), config.hook.window);
            mutating(
                &guards,
                &server,
                &tool,
                class.vm.as_deref(),
                class.vm_arg.as_deref(),
                &call.input,
            )
        }
    }
}

fn catalog_failure(e: &rewind_core::catalog::CatalogError) -> Decision {
    Decision::fail(format!(
        "rewind cannot classify this call from its tool catalog, so it is denied (fail closed): {e}"
    ))
}

/// How the human lets calls of an unknown tool through without a question.
fn classify_words(server: &str, tool: &str) -> String {
    format!(
        "To let {server}/{tool} through, classify it: `rewind catalog add-read-only {server} {tool}` if it never changes a guest, or `rewind catalog add-mutating {server} {tool} --vm-arg <argument>` so that it runs once the VM its argument names is guarded."
    )
}

/// The catalog's `(server, tool)` of a call: `Ok(Err(decision))` when the host did not say which MCP
/// server the tool is of and rewind cannot tell; `Err` when the catalog cannot be read.
fn resolve(
    call: &Call,
    catalog: &CatalogStore,
) -> Result<Result<(String, String), Decision>, rewind_core::catalog::CatalogError> {
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
                    found => return Ok(Err(unnamed_server(call.host, tool, found))),
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

/// The deny for an MCP tool whose server the host did not name and rewind cannot tell.
fn unnamed_server(host: Host, tool: &str, found: &[String]) -> Decision {
    let why = match found {
        [] => "no MCP server in rewind's tool catalog has a tool of that name".to_string(),
        several => format!(
            "the servers {} of rewind's tool catalog each have a tool of that name",
            several.join(", ")
        ),
    };
    Decision::deny(format!(
        "{} did not say which MCP server the tool {:?} is of, and rewind cannot tell: {why}, and no server of .cursor/mcp.json is launched as this one is. It is denied (fail closed). Classify it under its server's name in .cursor/mcp.json (`rewind catalog add-read-only <server> {tool}`, or `add-mutating <server> {tool} --vm-arg <argument>`), then run it again.",
        host.title(),
        quoted(tool)
    ))
}

/// A mutating call: allowed only when each VM it changes was guarded within the window.
fn mutating(
    guards: &Guards<'_>,
    server: &str,
    tool: &str,
    vm: Option<&str>,
    vm_arg: Option<&str>,
    tool_input: &Value,
) -> Decision {
    let call = MutatingCall {
        guards,
        minutes: window_words(guards.window()),
        server,
        tool,
        vm_arg,
    };
    match vm {
        Some(vm) => call.judge_named(vm),
        None => call.judge_mentioned(tool_input),
    }
}

/// A call of a mutating tool, judged against the audit journal (and a team server's guards).
struct MutatingCall<'a> {
    guards: &'a Guards<'a>,
    /// The window in words.
    minutes: String,
    server: &'a str,
    tool: &'a str,
    /// The argument the catalog says names the VM, if it says.
    vm_arg: Option<&'a str>,
}

impl MutatingCall<'_> {
    /// The VM that the catalog's VM argument names.
    fn judge_named(&self, vm: &str) -> Decision {
        let (server, tool, minutes) = (self.server, self.tool, &self.minutes);
        let named = quoted(vm);
        match self.guards.last_guarded(vm) {
            Ok(GuardLookup::Guarded(r)) => {
                Decision::allow(guarded_words(server, tool, &r, minutes))
            }
            Ok(GuardLookup::Ambiguous(candidates)) => ambiguous(server, tool, vm, &candidates),
            Ok(GuardLookup::NotGuarded) => Decision::deny(format!(
                "{server}/{tool} changes VM {named} (its argument {}), and {named} has no guarded record in {} from the last {minutes}: {}",
                self.vm_arg.unwrap_or("?"),
                self.guards.sources(),
                self.guard_first(&[&named])
            )),
            Err(e) => self.unreadable(&e),
        }
    }

    /// No argument names the VM: look in the input for a VM the journal knows.
    fn judge_mentioned(&self, tool_input: &Value) -> Decision {
        let known = match self.guards.known() {
            Ok(vms) => vms,
            Err(e) => return self.unreadable(&e),
        };
        let mentioned = mentioned_vms(&known, tool_input);
        // A word of the input that several of the journal's VMs answer to (a shared name, host name or
        // address) cannot tell which of them the call changes: a guard of one must not let it through.
        if let Some((word, candidates)) = shared_word(&mentioned) {
            return ambiguous(self.server, self.tool, &word, &candidates);
        }
        if mentioned.is_empty() {
            return self.no_vm_found();
        }
        self.judge_each(&mentioned)
    }

    /// Allowed only when every VM the input mentions was guarded within the window.
    fn judge_each(&self, mentioned: &BTreeMap<String, Mentioned<'_>>) -> Decision {
        let (server, tool, minutes) = (self.server, self.tool, &self.minutes);
        let mut unguarded = Vec::new();
        let mut guarded = Vec::new();
        for (id, m) in mentioned {
            match self.guards.last_guarded(id) {
                Ok(GuardLookup::Guarded(r)) => {
                    guarded.push(guarded_words(server, tool, &r, minutes))
                }
                Ok(GuardLookup::NotGuarded) => unguarded.push(m.vm.name.clone()),
                Ok(GuardLookup::Ambiguous(candidates)) => {
                    return ambiguous(server, tool, id, &candidates);
                }
                Err(e) => return self.unreadable(&e),
            }
        }
        let unguarded: Vec<&str> = unguarded.iter().map(String::as_str).collect();
        let (names, have) = match unguarded.as_slice() {
            [] => return Decision::allow(guarded.join("; ")),
            [vm] => (format!("VM {vm}"), "has"),
            _ => (format!("VMs {}", unguarded.join(", ")), "have"),
        };
        Decision::deny(format!(
            "{server}/{tool} is mutating and this call names {names}, which {have} no guarded record in {} from the last {minutes}: {}",
            self.guards.sources(),
            self.guard_first(&unguarded)
        ))
    }

    /// Neither an argument nor the input names a VM the journal knows: the human decides.
    fn no_vm_found(&self) -> Decision {
        let (server, tool) = (self.server, self.tool);
        let hint = match self.vm_arg {
            Some(arg) => format!("its VM argument `{arg}` is missing from this call"),
            None => format!(
                "the catalog does not say which argument names the VM (set it with `rewind catalog add-mutating {server} {tool} --vm-arg <argument>`)"
            ),
        };
        Decision::ask(
            format!(
                "{server}/{tool} is mutating, and rewind cannot tell which VM this call changes: {hint}, and the input names no VM that rewind has guarded. Allow it only if that VM was guarded (a tagged checkpoint for this change); otherwise guard it first."
            ),
            format!(
                "To let it through, guard the VM it changes first: the hook then finds that VM in the call's input. If an argument of the tool names the VM, tell rewind which: `rewind catalog add-mutating {server} {tool} --vm-arg <argument>`."
            ),
        )
    }

    /// The guards cannot be read, so nothing says the VM was guarded (fail closed).
    fn unreadable(&self, e: &GuardsError) -> Decision {
        let (server, tool) = (self.server, self.tool);
        let what = match e {
            GuardsError::Journal(_) => "its audit journal",
            GuardsError::Team { .. } => "the team server's guards",
        };
        Decision::fail(format!(
            "rewind cannot read {what}, so it cannot tell whether the VM was guarded; {server}/{tool} is denied (fail closed): {e}"
        ))
    }

    /// The instruction to guard `vms` first, then run the call again.
    fn guard_first(&self, vms: &[&str]) -> String {
        let (server, tool) = (self.server, self.tool);
        let (vm, each) = match vms {
            [one] => (*one, ""),
            _ => ("<vm>", " for each"),
        };
        format!(
            "guard {} first (the zerto_guard_before_mutate tool, or `rewind guard {vm} --agent <agent> --action \"<what>\" --change <id>`{each}), then run {server}/{tool} again",
            vms.join(", ")
        )
    }
}

fn guarded_words(server: &str, tool: &str, r: &JournalRecord, minutes: &str) -> String {
    let for_whom = r
        .person
        .as_ref()
        .map(|p| format!(" for {p}, through the team server"))
        .unwrap_or_default();
    format!(
        "{server}/{tool} is mutating, and VM {} was guarded at {} for change {}{for_whom} (within the last {minutes})",
        r.vm.name,
        crate::commands::protection::when(Some(r.time)),
        r.change_id
    )
}

/// The question for the human when a reference names more than one VM of the journal.
fn ambiguous(server: &str, tool: &str, reference: &str, candidates: &[JournalVm]) -> Decision {
    Decision::ask(
        ambiguous_words(server, tool, reference, candidates),
        "To let it through, guard the VM it changes and name that VM by its identifier in the call (`rewind journal` shows each VM's).".to_string(),
    )
}

fn ambiguous_words(server: &str, tool: &str, reference: &str, candidates: &[JournalVm]) -> String {
    let list = candidates
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "{server}/{tool} is mutating, and {:?} names more than one VM in rewind's journal: {list}. rewind cannot tell which one this call changes, so it does not take a guard of one for the other. Allow it only if the VM it changes was guarded for this change; to be asked less, name the VM by its identifier.",
        quoted(reference)
    )
}

/// The most characters of one input value a reason quotes: a reason goes back to the model and the
/// human, and an agent's argument can be megabytes long.
const QUOTE_MAX: usize = 120;

/// `value` as a reason quotes it: whole when short, else its first [`QUOTE_MAX`] characters and how
/// long it was.
fn quoted(value: &str) -> String {
    match value.char_indices().nth(QUOTE_MAX) {
        None => value.to_string(),
        Some((cut, _)) => format!("{}… ({} bytes in all)", &value[..cut], value.len()),
    }
}

/// The window in words: `15 min`, `90 s`.
fn window_words(window: Duration) -> String {
    let secs = window.as_secs();
    if secs >= 60 && secs.is_multiple_of(60) {
        format!("{} min", secs / 60)
    } else {
        format!("{secs} s")
    }
}

/// A VM of the journal that the tool input mentions, with the words of the input it answers to.
#[derive(Debug)]
struct Mentioned<'a> {
    vm: &'a JournalVm,
    /// Its name, identifier or addresses (lowercase) that the input holds as whole words.
    words: Vec<String>,
}

/// The VMs of the journal (by identifier, each as its newest record names it) whose name, identifier
/// or one of whose IP addresses appears in the tool input as a whole word.
fn mentioned_vms<'a>(known: &'a [JournalVm], input: &Value) -> BTreeMap<String, Mentioned<'a>> {
    let mut texts = Vec::new();
    strings(input, &mut texts);
    let vms: BTreeMap<String, &JournalVm> = known.iter().map(|vm| (vm.id.clone(), vm)).collect();
    vms.into_iter()
        .filter_map(|(id, vm)| {
            let words: Vec<String> = [vm.name.as_str(), vm.id.as_str()]
                .into_iter()
                .chain(vm.ip_addresses.iter().map(String::as_str))
                .filter(|w| texts.iter().any(|t| mentions(t, w)))
                .map(str::to_lowercase)
                .collect();
            (!words.is_empty()).then_some((id, Mentioned { vm, words }))
        })
        .collect()
}

/// A word of the input that more than one mentioned VM answers to, with those VMs.
fn shared_word(mentioned: &BTreeMap<String, Mentioned<'_>>) -> Option<(String, Vec<JournalVm>)> {
    let mut by_word: BTreeMap<&str, Vec<&JournalVm>> = BTreeMap::new();
    for m in mentioned.values() {
        for w in &m.words {
            by_word.entry(w.as_str()).or_default().push(m.vm);
        }
    }
    by_word
        .into_iter()
        .find(|(_, vms)| vms.len() > 1)
        .map(|(w, vms)| (w.to_string(), vms.into_iter().cloned().collect()))
}

/// Every string in a JSON value, object keys excluded.
fn strings<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::String(s) => out.push(s),
        Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
        Value::Object(o) => o.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// Whether `text` holds `word` (case-insensitive) with no name character on either side, so `web-01`
/// is found in `ssh web-01.example.com` but not in `web-010` or `web-01-old`.
fn mentions(text: &str, word: &str) -> bool {
    if word.is_empty() {
        return false;
    }
    let text = text.to_lowercase();
    let word = word.to_lowercase();
    let name_char = |c: char| c.is_alphanumeric() || c == '-' || c == '_';
    text.match_indices(&word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(name_char) && !after.is_some_and(name_char)
    })
}

/// The entry point of the hook's fuzz target (`fuzz/` at the workspace root) and of the test that
/// replays its corpus: [`decide`] on any input, with a configuration of no site (so no ZVM), an empty
/// catalog and an empty journal. Not part of the crate's API.
#[doc(hidden)]
pub mod fuzzing {
    use super::{Decision, Permission, decide};

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
            assert_eq!(
                decision.permission,
                Permission::Deny,
                "malformed input was not denied: {}",
                decision.reason
            );
        }
        if decision.permission == Permission::Allow {
            assert!(
                decision.reason.contains("read-only"),
                "allowed without being read-only: {}",
                decision.reason
            );
        }
        assert!(!decision.reason.is_empty());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_vm_name_is_found_only_as_a_whole_word() {
        assert!(mentions(
            "ssh web-01.example.com 'systemctl restart'",
            "web-01"
        ));
        assert!(mentions("WEB-01", "web-01"));
        assert!(mentions("edit /etc/hosts on web-01", "web-01"));
        assert!(!mentions("ssh web-010", "web-01"));
        assert!(!mentions("ssh web-01-old", "web-01"));
        assert!(!mentions("ssh myweb-01", "web-01"));
    }

    #[test]
    fn strings_are_collected_from_nested_input() {
        let v = json!({"a": "x", "b": [{"c": "y"}, 3], "d": {"e": "z"}});
        let mut out = Vec::new();
        strings(&v, &mut out);
        out.sort();
        assert_eq!(out, vec!["x", "y", "z"]);
    }

    #[test]
    fn malformed_input_is_denied_without_reading_the_configuration() {
        for bad in ["", "not json", "{\"tool_input\": {}}", "[1, 2]"] {
            let (_, d) = decide(bad, None, || panic!("the configuration is not read"));
            assert_eq!(d.permission, Permission::Deny, "{bad:?}: {}", d.reason);
            assert!(d.reason.contains("fail closed"), "{}", d.reason);
        }
    }

    #[test]
    fn windows_read_naturally() {
        assert_eq!(window_words(Duration::from_secs(900)), "15 min");
        assert_eq!(window_words(Duration::from_secs(90)), "90 s");
    }
}
