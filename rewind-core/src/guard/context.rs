//! What a guard is asked ([`GuardRequest`]) and what it needs from the facade ([`GuardContext`]).

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::queue::{OwnTasks, VpgQueue};
use crate::audit_journal::{AuditJournal, Person};
use crate::config::GuardSettings;
use crate::zvm::Site;

/// What a guard is asked to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GuardRequest {
    /// The VM: name, host name, IP address or vmIdentifier.
    pub vm: String,
    /// Who is about to change it, e.g. `claude-code`.
    pub agent: String,
    /// What it is about to do, e.g. `upgrade nginx`.
    pub action: String,
    /// The change id that ties the tags of this change together.
    pub change_id: String,
}

/// What a guard needs from the facade.
pub(crate) struct GuardContext<'a> {
    pub(crate) sites: &'a [Arc<Site>],
    /// The configured sites left out of this guard's lookup (`--site`).
    pub(crate) left_out: &'a [String],
    pub(crate) queue: &'a VpgQueue,
    pub(crate) own: &'a OwnTasks,
    pub(crate) settings: &'a GuardSettings,
    /// The audit journal: the intent, the task ids and the verdict go there, and an earlier attempt
    /// of the same VM and change is read from it.
    pub(crate) journal: &'a AuditJournal,
    /// The hook's window: an earlier attempt younger than this is taken over.
    pub(crate) window: Duration,
    /// The signed-in person the agent guards for, journaled beside the agent's name.
    pub(crate) person: Option<&'a Person>,
    /// Once cancelled, no insert not yet sent is sent ([`crate::Rewind::guard_until`]).
    pub(crate) stop: &'a tokio_util::sync::CancellationToken,
}

impl GuardContext<'_> {
    pub(super) fn site(&self, name: &str) -> Option<&Arc<Site>> {
        self.sites.iter().find(|s| s.name() == name)
    }
}
