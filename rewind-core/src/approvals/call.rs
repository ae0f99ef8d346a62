//! A held call as people and agents see it: who asked for what, bound to which arguments and
//! catalog, and where it stands.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::audit_journal::Person;

/// A call a front asks to hold (or to run, when it was approved).
#[derive(Debug, Clone)]
pub struct CallToHold {
    /// The person it is made for: the token's subject and name, or the person at this machine.
    pub requester: Person,
    /// The agent that made it (its `clientInfo.name`, or the hook's host).
    pub agent: String,
    /// The server or upstream whose tool it is (`zerto-rewind` for rewind's own).
    pub server: String,
    /// The tool, as that server names it.
    pub tool: String,
    /// The VM it changes, when known.
    pub vm: Option<String>,
    /// Its arguments, exactly as sent.
    pub arguments: serde_json::Value,
    /// What it would do, in a person's words: shown to approvers.
    pub what: String,
}

/// Where a held call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HeldState {
    /// Waiting for a person.
    Held,
    /// A person approved it: the requester's identical call runs once.
    Approved,
    /// A person denied it.
    Denied,
    /// Nobody decided in time, or the approval went unused.
    Expired,
    /// The approved call was run by this server.
    Executed,
    /// The approved call was allowed through a host's hook, which ran it.
    Allowed,
}

impl std::fmt::Display for HeldState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            HeldState::Held => "held",
            HeldState::Approved => "approved",
            HeldState::Denied => "denied",
            HeldState::Expired => "expired",
            HeldState::Executed => "executed",
            HeldState::Allowed => "allowed",
        })
    }
}

/// A person's decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Decision {
    /// Approved (else denied).
    pub approved: bool,
    /// Who decided.
    pub by: Person,
    /// When.
    pub at: DateTime<Utc>,
    /// What they said, for the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// The use of an approval: written and synced before the call runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Run {
    /// When the approval was used.
    pub at: DateTime<Utc>,
    /// Run by a host after its hook allowed it (else run by this server).
    pub allowed: bool,
    /// What came of it, when its end is known: absent after a crash in the call, which then may
    /// have run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Whether it ended in an error.
    #[serde(default)]
    pub failed: bool,
}

/// A held call, folded from its lines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HeldCall {
    /// Its id (`h-` and 12 hex digits).
    pub id: String,
    /// Who it is for.
    pub requester: Person,
    /// The agent that made it.
    pub agent: String,
    /// The server or upstream.
    pub server: String,
    /// The tool.
    pub tool: String,
    /// The VM it changes, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vm: Option<String>,
    /// HMAC-SHA-256 (the server's key) of the arguments' RFC 8785 JSON.
    pub arguments_hmac: String,
    /// SHA-256 of the catalog file when it was held: a changed catalog is a changed policy.
    pub catalog_sha256: String,
    /// What it would do.
    pub what: String,
    /// Whether its approval must come from another person than its requester.
    pub four_eyes: bool,
    /// When it was held.
    pub created: DateTime<Utc>,
    /// When its present state lapses: a held call's decision, an approval's use.
    pub expires: DateTime<Utc>,
    /// Where it stands.
    pub state: HeldState,
    /// The decision, once made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    /// The approval's use, once made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<Run>,
}

impl HeldCall {
    /// Whether `other` is the same call: same requester, server, tool, arguments and catalog.
    pub fn binds(&self, other: &HeldCall) -> bool {
        self.requester.subject == other.requester.subject
            && self.server == other.server
            && self.tool == other.tool
            && self.arguments_hmac == other.arguments_hmac
            && self.catalog_sha256 == other.catalog_sha256
    }

    /// Who asked for it, as messages name them.
    pub fn requested_by(&self) -> &str {
        self.requester
            .name
            .as_deref()
            .unwrap_or(&self.requester.subject)
    }

    /// One line for people: id, state, tool, VM, requester.
    pub fn headline(&self) -> String {
        let vm = self
            .vm
            .as_deref()
            .map_or_else(String::new, |v| format!(" on {v}"));
        format!(
            "{} {}: {} of {}{vm} for {}",
            self.id,
            self.state,
            self.tool,
            self.server,
            self.requested_by()
        )
    }

    /// What the agent is told of a call that ran, or may have.
    pub fn outcome(&self) -> String {
        match &self.run {
            Some(Run {
                summary: Some(s), ..
            }) => s.clone(),
            Some(Run { allowed: true, .. }) => "the host's hook let it through once".to_owned(),
            Some(_) => {
                "it was started and its end is not known: it may have run; look at the VM before trying anything again".to_owned()
            }
            None => String::new(),
        }
    }

    /// The comment of its decision, if any.
    pub fn comment(&self) -> Option<&str> {
        self.decision.as_ref()?.comment.as_deref()
    }
}

/// What asking to run a call found.
#[derive(Debug, Clone)]
pub enum Standing {
    /// It was not held before: it is now, and waits for a person.
    NewlyHeld(HeldCall),
    /// It was held already and still waits.
    StillHeld(HeldCall),
    /// It was approved: its use is synced, run it now (and say how it ended with
    /// [`HeldCalls::ran`](super::HeldCalls::ran)).
    Run(HeldCall),
    /// A person denied it.
    Denied(HeldCall),
    /// It ran already on its approval.
    AlreadyRan(HeldCall),
}

impl Standing {
    /// The held call.
    pub fn call(&self) -> &HeldCall {
        match self {
            Standing::NewlyHeld(c)
            | Standing::StillHeld(c)
            | Standing::Run(c)
            | Standing::Denied(c)
            | Standing::AlreadyRan(c) => c,
        }
    }
}
