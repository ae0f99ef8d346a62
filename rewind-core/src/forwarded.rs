//! A call the gateway forwards to an upstream's mutating tool, as the audit journal records it: one
//! line before the call is sent (`started`, synced), one when its end is known (`completed`,
//! `failed`), or `may_have_run` when it was sent and its end cannot be known (the call cancelled, the
//! upstream gone). A `started` line with no end after it is read the same way: the call may have
//! run, and it is never sent again.
//!
//! The record names the tool and an HMAC-SHA-256 of the call's arguments, never the arguments:
//! they may hold anything a guest holds (the digest is
//! [`ArgumentsKey::digest`](crate::arguments_key::ArgumentsKey::digest)).

use chrono::Utc;

use crate::audit_journal::{
    ApprovedBy, JournalRecord, JournalVerdict, JournalVm, Person, RecordKind,
};

/// One forwarded call, as its journal lines name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForwardedCall {
    /// The upstream's name.
    pub upstream: String,
    /// The upstream's own name of the tool.
    pub tool: String,
    /// [`ArgumentsKey::digest`](crate::arguments_key::ArgumentsKey::digest) of the arguments.
    pub arguments_hmac: String,
    /// The client that made the call (its `clientInfo.name`).
    pub agent: String,
    /// The person it was made for, when known.
    pub person: Option<Person>,
    /// The change it was made under.
    pub change_id: String,
    /// The VM its guard tagged.
    pub vm: JournalVm,
    /// The held call whose approval it runs on, and who approved it.
    pub approved_by: Option<ApprovedBy>,
}

impl ForwardedCall {
    /// What the record calls the call's action: `gateway <upstream>`, as its guard's action.
    pub fn action(&self) -> String {
        format!("gateway {}", self.upstream)
    }

    /// Its journal line with `verdict`.
    pub fn line(&self, verdict: JournalVerdict) -> JournalRecord {
        JournalRecord {
            time: Utc::now(),
            kind: RecordKind::Call,
            agent: self.agent.clone(),
            person: self.person.clone(),
            action: self.action(),
            change_id: self.change_id.clone(),
            vm: self.vm.clone(),
            verdict,
            vpgs: Vec::new(),
            notes: Vec::new(),
            details: Some(serde_json::json!({
                "upstream": self.upstream,
                "tool": self.tool,
                "arguments_hmac": self.arguments_hmac,
            })),
            attempt: None,
            sites: None,
            approved_by: self.approved_by.clone(),
        }
    }
}
