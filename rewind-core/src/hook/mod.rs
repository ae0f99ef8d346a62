//! The hook's judgement: whether one tool call an agent host is about to run may run, from what the
//! call is, what the tool catalog says of its tool, and the guards of the VMs it names. It is pure:
//! the front (`rewind hook pre-tool-use`) reads the host's input, the catalog, the journal and a
//! team server, calls [`judge`], and answers in the host's own terms.
//!
//! - A read-only tool is allowed.
//! - An unknown tool is asked about, with the catalog's question: unknown is not safe.
//! - A mutating tool is allowed only when every VM it changes has a `guarded` record younger than the
//!   hook window, and denied otherwise, telling the agent to guard that VM first. The VM is the one
//!   the argument the catalog entry names (`vm_arg`) refers to (a name, host name, IP address or
//!   vmIdentifier, matched as find_protection matches it); failing that, the VMs whose name,
//!   identifier or address the input holds as a whole word; when there are none, it asks.
//! - A VM guarded within the window whose journal says its VPGs changed after that guard (a
//!   `protection_changed` record) is denied too when a VPG was added (it holds no tag of the
//!   change) or every VPG the guard tagged is gone (no way back is left).
//! - A reference that more than one VM answers to (two VMs sharing a name, a host name's first
//!   label or an address) is asked about too, naming them: a guard of one never lets a call on the
//!   other through.
//!
//! - A tool of rewind's own server named `<upstream>__<tool>` is its gateway's: it is judged as the
//!   upstream's tool, except that a mutating one goes on to the gateway, which guards it
//!   ([`through_gateway`], [`gateway_pass`]).
//!
//! The front turns what it cannot read (its input, configuration, catalog or guards) into a
//! [`Failure`]: the call is blocked (fail closed).

mod decision;
mod mentions;

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::audit_journal::{GuardLookup, JournalOutcome, JournalRecord, JournalVm, vpgs_named};
use crate::catalog::{Classification, ToolClass};

pub use decision::{
    Allowed, Decision, Denied, Failure, GuardSource, Permission, Question, Sources, quoted,
};

/// One call as the hook judges it.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    /// The tool's MCP server, or the host's name for its own tools, as the host named it.
    pub server: &'a str,
    /// The tool, as the host named it.
    pub tool: &'a str,
    /// The call's arguments.
    pub input: &'a Value,
    /// What the tool catalog says of the tool, and of the VM its argument names.
    pub class: &'a Classification,
}

/// The upstream and the tool a call of rewind's own server names when the tool is a gateway's
/// (`<upstream>__<tool>`: rewind's own tools hold no `__`), so the catalog is asked of the
/// upstream's tool; `None` for any other call.
pub fn through_gateway<'a>(server: &str, tool: &'a str) -> Option<(&'a str, &'a str)> {
    if server != crate::catalog::ZERTO_REWIND {
        return None;
    }
    tool.split_once("__")
        .filter(|(upstream, tool)| !upstream.is_empty() && !tool.is_empty())
}

/// The decision on a call through the gateway of class `class`: a mutating one goes on to the
/// gateway, which guards it itself; `None` for the others, judged as any call (read-only allowed,
/// unknown asked about).
pub fn gateway_pass(class: &Classification) -> Option<Decision> {
    (class.class == ToolClass::Mutating).then(|| {
        Decision::Allow(Allowed::ThroughGateway {
            server: class.server.clone(),
            tool: class.tool.clone(),
        })
    })
}

/// The guards a judgement reads, as [`wanted`] tells the front.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wanted {
    /// Those that a VM reference (the catalog's VM argument) answers to.
    Vm(String),
    /// Those of every VM known, to find the VMs the input mentions.
    All,
}

/// Which guards the judgement of a call of class `class` reads: none unless the tool is mutating.
pub fn wanted(class: &Classification) -> Option<Wanted> {
    match class.class {
        ToolClass::Mutating => Some(match &class.vm {
            Some(vm) => Wanted::Vm(vm.clone()),
            None => Wanted::All,
        }),
        ToolClass::ReadOnly | ToolClass::Unknown => None,
    }
}

/// The guards a mutating call is judged by, read by the front: this machine's audit journal (its
/// VM index and its recent records) and, with `[hook.team]`, a team server's recent guards.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GuardRecords {
    /// Every way each VM was named that the read found (when, and the VM as named then): from the
    /// journal's VM index, whatever the age of the records, and from the team server's records.
    pub namings: Vec<(DateTime<Utc>, JournalVm)>,
    /// The records of the window, this machine's and the team server's.
    pub records: Vec<JournalRecord>,
    /// Where they were read.
    pub sources: Sources,
}

/// The hook's decision on `call`, by `guards`, for a window of `window` that ends `now`.
pub fn judge(
    call: &Call<'_>,
    guards: &GuardRecords,
    window: Duration,
    now: DateTime<Utc>,
) -> Decision {
    let (server, tool) = (call.server.to_string(), call.tool.to_string());
    match call.class.class {
        ToolClass::ReadOnly => Decision::Allow(Allowed::ReadOnly { server, tool }),
        ToolClass::Unknown => Decision::Ask(Question::UnknownTool {
            question: call.class.human_question(),
            server,
            tool,
        }),
        ToolClass::Mutating => {
            let judged = Mutating {
                call,
                guards,
                window,
                since: window_start(now, window),
            };
            match &call.class.vm {
                Some(vm) => judged.named(vm),
                None => judged.mentioned(),
            }
        }
    }
}

/// When a window of `window` that ends `now` began.
fn window_start(now: DateTime<Utc>, window: Duration) -> DateTime<Utc> {
    chrono::Duration::from_std(window)
        .ok()
        .and_then(|w| now.checked_sub_signed(w))
        .unwrap_or(DateTime::<Utc>::MIN_UTC)
}

/// A call of a mutating tool, judged by the guards read for it.
struct Mutating<'a> {
    call: &'a Call<'a>,
    guards: &'a GuardRecords,
    window: Duration,
    /// When the window began.
    since: DateTime<Utc>,
}

impl Mutating<'_> {
    /// The VM that the catalog's VM argument names.
    fn named(&self, vm: &str) -> Decision {
        match self.lookup(vm) {
            GuardLookup::Guarded(r) => self.allowed(vec![*r]),
            GuardLookup::ProtectionChanged(r) => self.changed(*r),
            GuardLookup::Ambiguous(candidates) => self.ambiguous(vm, candidates),
            GuardLookup::NotGuarded => Decision::Deny(Denied::NotGuarded {
                server: self.call.server.to_string(),
                tool: self.call.tool.to_string(),
                vm: vm.to_string(),
                vm_arg: self.call.class.vm_arg.clone(),
                sources: self.guards.sources,
                window: self.window,
            }),
        }
    }

    /// No argument names the VM: the VMs the journal knows that the input mentions.
    fn mentioned(&self) -> Decision {
        let known = mentions::known(&self.guards.namings);
        let mentioned = mentions::mentioned_vms(&known, self.call.input);
        // A word of the input that several of the journal's VMs answer to (a shared name, host name or
        // address) cannot tell which of them the call changes: a guard of one must not let it through.
        if let Some((word, candidates)) = mentions::shared_word(&mentioned) {
            return self.ambiguous(&word, candidates);
        }
        if mentioned.is_empty() {
            return Decision::Ask(Question::WhichVm {
                server: self.call.server.to_string(),
                tool: self.call.tool.to_string(),
                vm_arg: self.call.class.vm_arg.clone(),
            });
        }
        // Allowed only when every VM the input mentions was guarded within the window.
        let mut guarded = Vec::new();
        let mut unguarded = Vec::new();
        for (id, m) in &mentioned {
            match self.lookup(id) {
                GuardLookup::Guarded(r) => guarded.push(*r),
                GuardLookup::ProtectionChanged(r) => return self.changed(*r),
                GuardLookup::NotGuarded => unguarded.push(m.vm.name.clone()),
                GuardLookup::Ambiguous(candidates) => return self.ambiguous(id, candidates),
            }
        }
        if unguarded.is_empty() {
            return self.allowed(guarded);
        }
        Decision::Deny(Denied::MentionedNotGuarded {
            server: self.call.server.to_string(),
            tool: self.call.tool.to_string(),
            vms: unguarded,
            sources: self.guards.sources,
            window: self.window,
        })
    }

    /// What the guards say of the VM reference `vm`.
    fn lookup(&self, vm: &str) -> GuardLookup {
        GuardLookup::judged_since(
            self.guards.namings.iter().cloned(),
            self.guards.records.iter().cloned(),
            vm,
            self.since,
        )
    }

    /// Denied: the VM's VPGs changed after its guard so that the guard no longer covers it.
    fn changed(&self, record: JournalRecord) -> Decision {
        Decision::Deny(Denied::ProtectionChanged {
            server: self.call.server.to_string(),
            tool: self.call.tool.to_string(),
            vm: record.vm.name.clone(),
            change_id: record.change_id.clone(),
            added: vpgs_named(&record.vpgs, JournalOutcome::Added),
            removed: vpgs_named(&record.vpgs, JournalOutcome::Removed),
        })
    }

    fn allowed(&self, guards: Vec<JournalRecord>) -> Decision {
        Decision::Allow(Allowed::Guarded {
            server: self.call.server.to_string(),
            tool: self.call.tool.to_string(),
            guards,
            window: self.window,
        })
    }

    fn ambiguous(&self, reference: &str, candidates: Vec<JournalVm>) -> Decision {
        Decision::Ask(Question::Ambiguous {
            server: self.call.server.to_string(),
            tool: self.call.tool.to_string(),
            reference: reference.to_string(),
            candidates,
        })
    }
}

#[cfg(test)]
mod tests;
