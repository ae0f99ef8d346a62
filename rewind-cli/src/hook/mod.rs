//! `rewind hook pre-tool-use`: Claude Code's PreToolUse hook, the host-side enforcement point.
//!
//! It reads the hook's JSON on stdin (`tool_name`, `tool_input`, ...) and answers on stdout with
//! `{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": ..., ...}}`:
//!
//! - a read-only tool is allowed;
//! - an unknown tool is asked about, with the catalog's question;
//! - a mutating tool is allowed only when the VM it changes has a `guarded` journal record younger
//!   than the hook window; otherwise it is denied, telling the agent to guard that VM first. The VM is
//!   read from the argument the catalog entry names (`vm_arg`: a name, host name, IP address or
//!   vmIdentifier, matched against the journal as find_protection matches it); failing that, the hook
//!   looks in the input for the name, identifier or IP address of a VM the journal knows; when it
//!   finds none, it asks. A reference that records of more than one VM answer to (two VMs sharing a
//!   name, a host name's first label or an address) is asked about too, naming them: a guard of one
//!   never lets a call on the other through.
//! - input it cannot read, and a catalog or journal it cannot read, are denied (fail closed).
//!
//! It reads only the configuration, the catalog and the journal: it never calls a ZVM, and it starts
//! no async runtime, so it answers in milliseconds.

use std::collections::BTreeMap;
use std::io::Read;
use std::time::Duration;

use rewind_core::catalog::{CatalogStore, claude_code_tool};
use rewind_core::journal::{GuardLookup, JournalVm};
use rewind_core::{Config, Journal, JournalFilter, JournalRecord, ToolClass};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::context::Context;
use crate::exit::CliError;
use crate::output;

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

/// A decision with its reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// Allow, deny or ask.
    pub permission: Permission,
    /// Why, in words the agent or the human can act on.
    pub reason: String,
}

impl Decision {
    fn allow(reason: String) -> Decision {
        Decision {
            permission: Permission::Allow,
            reason,
        }
    }
    fn deny(reason: String) -> Decision {
        Decision {
            permission: Permission::Deny,
            reason,
        }
    }
    fn ask(reason: String) -> Decision {
        Decision {
            permission: Permission::Ask,
            reason,
        }
    }
}

/// What Claude Code sends; other fields (`session_id`, `cwd`, `transcript_path`, ...) are ignored.
#[derive(Debug, Deserialize)]
struct HookInput {
    hook_event_name: Option<String>,
    tool_name: String,
    #[serde(default)]
    tool_input: Value,
}

/// What Claude Code reads back.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct HookOutput {
    hook_specific_output: HookSpecificOutput,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct HookSpecificOutput {
    hook_event_name: &'static str,
    permission_decision: Permission,
    permission_decision_reason: String,
}

/// Claude Code's exit code for "block this call"; what the hook wrote on stderr goes to the model.
const BLOCK: u8 = 2;

/// Runs the hook: stdin in, the decision out. Returns the exit code: 0 with the decision on stdout, or
/// [`BLOCK`] (with the reason on stderr) when the decision cannot even be printed.
pub fn pre_tool_use(ctx: &Context) -> u8 {
    let mut input = String::new();
    let decision = match std::io::stdin().read_to_string(&mut input) {
        Ok(_) => decide(&input, || ctx.config()),
        Err(e) => Decision::deny(format!(
            "rewind's PreToolUse hook could not read its input on stdin ({e}), so the call is denied (fail closed)"
        )),
    };
    tracing::info!(decision = ?decision.permission, reason = %decision.reason, "PreToolUse");
    let out = HookOutput {
        hook_specific_output: HookSpecificOutput {
            hook_event_name: "PreToolUse",
            permission_decision: decision.permission,
            permission_decision_reason: decision.reason.clone(),
        },
    };
    match output::write_json(&out) {
        Ok(()) => crate::exit::OK,
        Err(e) => {
            output::error_line(&format!(
                "cannot print the hook's decision ({e}); blocking the call: {}",
                decision.reason
            ));
            BLOCK
        }
    }
}

/// Decides on one PreToolUse input. `config` is called only once the input is known to be well formed.
pub fn decide(input: &str, config: impl FnOnce() -> Result<Config, CliError>) -> Decision {
    let input: HookInput = match serde_json::from_str(input) {
        Ok(i) => i,
        Err(e) => {
            return Decision::deny(format!(
                "rewind's PreToolUse hook could not read its input ({e}); it expects Claude Code's PreToolUse JSON with tool_name and tool_input, so the call is denied (fail closed)"
            ));
        }
    };
    if let Some(event) = input.hook_event_name.as_deref()
        && event != "PreToolUse"
    {
        return Decision::deny(format!(
            "rewind's hook handles PreToolUse, but was called for {:?}; denied (fail closed): install it under hooks.PreToolUse only",
            quoted(event)
        ));
    }
    if input.tool_name.trim().is_empty() {
        return Decision::deny(
            "rewind's PreToolUse hook got an empty tool_name, so the call is denied (fail closed)"
                .into(),
        );
    }
    let config = match config() {
        Ok(c) => c,
        Err(e) => {
            return Decision::deny(format!(
                "rewind cannot read its configuration, so the call is denied (fail closed): {e}"
            ));
        }
    };
    let (server, tool) = claude_code_tool(&input.tool_name);
    let catalog = CatalogStore::new(&config.catalog_path);
    let class = match catalog.classify_call(&server, &tool, &input.tool_input) {
        Ok(c) => c,
        // A name the catalog refuses is malformed input; an unreadable catalog tells nothing. Either
        // way the call is denied, and the error (which never echoes the name) says which.
        Err(e) => {
            return Decision::deny(format!(
                "rewind cannot classify this call from its tool catalog, so it is denied (fail closed): {e}"
            ));
        }
    };
    match class.class {
        ToolClass::ReadOnly => Decision::allow(format!(
            "{server}/{tool} is read-only in rewind's tool catalog: it does not change a guest"
        )),
        ToolClass::Unknown => Decision::ask(class.human_question()),
        ToolClass::Mutating => {
            let journal = Journal::new(&config.journal_path);
            mutating(
                &journal,
                config.hook.window,
                &server,
                &tool,
                class.vm.as_deref(),
                class.vm_arg.as_deref(),
                &input.tool_input,
            )
        }
    }
}

/// A mutating call: allowed only when each VM it changes was guarded within the window.
fn mutating(
    journal: &Journal,
    window: Duration,
    server: &str,
    tool: &str,
    vm: Option<&str>,
    vm_arg: Option<&str>,
    tool_input: &Value,
) -> Decision {
    let minutes = window_words(window);
    let unreadable = |e: &dyn std::fmt::Display| {
        Decision::deny(format!(
            "rewind cannot read its audit journal, so it cannot tell whether the VM was guarded; {server}/{tool} is denied (fail closed): {e}"
        ))
    };
    let guard_first = |vms: &[&str]| {
        let (vm, each) = match vms {
            [one] => (*one, ""),
            _ => ("<vm>", " for each"),
        };
        format!(
            "guard {} first (the zerto_guard_before_mutate tool, or `rewind guard {vm} --agent <agent> --action \"<what>\" --change <id>`{each}), then run {server}/{tool} again",
            vms.join(", ")
        )
    };
    if let Some(vm) = vm {
        let named = quoted(vm);
        return match journal.last_guarded(vm, window) {
            Ok(GuardLookup::Guarded(r)) => {
                Decision::allow(guarded_words(server, tool, &r, &minutes))
            }
            Ok(GuardLookup::Ambiguous(candidates)) => {
                Decision::ask(ambiguous_words(server, tool, vm, &candidates))
            }
            Ok(GuardLookup::NotGuarded) => Decision::deny(format!(
                "{server}/{tool} changes VM {named} (its argument {}), and {named} has no guarded record in rewind's journal from the last {minutes}: {}",
                vm_arg.unwrap_or("?"),
                guard_first(&[&named])
            )),
            Err(e) => unreadable(&e),
        };
    }
    // No argument names the VM: look in the input for a VM the journal knows.
    let known = match journal.read(&JournalFilter::default()) {
        Ok(read) => read.records,
        Err(e) => return unreadable(&e),
    };
    let mentioned = mentioned_vms(&known, tool_input);
    // A word of the input that several of the journal's VMs answer to (a shared name, host name or
    // address) cannot tell which of them the call changes: a guard of one must not let it through.
    if let Some((word, candidates)) = shared_word(&mentioned) {
        return Decision::ask(ambiguous_words(server, tool, &word, &candidates));
    }
    if mentioned.is_empty() {
        let hint = match vm_arg {
            Some(arg) => format!("its VM argument `{arg}` is missing from this call"),
            None => format!(
                "the catalog does not say which argument names the VM (set it with `rewind catalog add-mutating {server} {tool} --vm-arg <argument>`)"
            ),
        };
        return Decision::ask(format!(
            "{server}/{tool} is mutating, and rewind cannot tell which VM this call changes: {hint}, and the input names no VM that rewind has guarded. Allow it only if that VM was guarded (a tagged checkpoint for this change); otherwise guard it first."
        ));
    }
    let mut unguarded = Vec::new();
    let mut guarded = Vec::new();
    for (id, m) in &mentioned {
        match journal.last_guarded(id, window) {
            Ok(GuardLookup::Guarded(r)) => guarded.push(guarded_words(server, tool, &r, &minutes)),
            Ok(GuardLookup::NotGuarded) => unguarded.push(m.vm.name.clone()),
            Ok(GuardLookup::Ambiguous(candidates)) => {
                return Decision::ask(ambiguous_words(server, tool, id, &candidates));
            }
            Err(e) => return unreadable(&e),
        }
    }
    let unguarded: Vec<&str> = unguarded.iter().map(String::as_str).collect();
    let (names, have) = match unguarded.as_slice() {
        [] => return Decision::allow(guarded.join("; ")),
        [vm] => (format!("VM {vm}"), "has"),
        _ => (format!("VMs {}", unguarded.join(", ")), "have"),
    };
    Decision::deny(format!(
        "{server}/{tool} is mutating and this call names {names}, which {have} no guarded record in rewind's journal from the last {minutes}: {}",
        guard_first(&unguarded)
    ))
}

fn guarded_words(server: &str, tool: &str, r: &JournalRecord, minutes: &str) -> String {
    format!(
        "{server}/{tool} is mutating, and VM {} was guarded at {} for change {} (within the last {minutes})",
        r.vm.name,
        crate::commands::protection::when(Some(r.time)),
        r.change_id
    )
}

/// The question for the human when a reference names more than one VM of the journal.
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
fn mentioned_vms<'a>(
    records: &'a [JournalRecord],
    input: &Value,
) -> BTreeMap<String, Mentioned<'a>> {
    let mut texts = Vec::new();
    strings(input, &mut texts);
    let mut vms: BTreeMap<String, &JournalVm> = BTreeMap::new();
    for r in records {
        vms.insert(r.vm.id.clone(), &r.vm);
    }
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
        decide(input, || {
            rewind_core::Config::builder(none.join("catalog.toml"), none.join("journal.jsonl"))
                .build()
                .map_err(Into::into)
        })
    }

    /// Panics when the decision let garbage through: input that is not a PreToolUse object with a
    /// tool name must be denied, and with an empty catalog and journal only a built-in read-only tool
    /// may be allowed.
    pub fn check(input: &str, decision: &Decision) {
        // Well formed: an object with a string tool_name, whatever else it holds (fields the hook
        // does not read are skipped unread, as a number too large for a float is).
        #[derive(serde::Deserialize)]
        struct Shape {
            tool_name: String,
        }
        let well_formed =
            serde_json::from_str::<Shape>(input).is_ok_and(|s| !s.tool_name.trim().is_empty());
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
            let d = decide(bad, || panic!("the configuration is not read"));
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
