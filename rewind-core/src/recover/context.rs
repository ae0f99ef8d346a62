//! What a recovery needs from the facade ([`RecoverContext`]), how long it waits, and the client
//! of a site it runs at.

use std::sync::Arc;
use std::time::Duration;

use crate::audit_journal::{AuditJournal, Person};
use crate::config::Config;
use crate::error::RewindError;
use crate::protection::Protection;
use crate::zvm::{Site, ZvmClient};

/// What a recovery needs of the facade, and nothing more: the configuration, the sites' clients,
/// the journal, and who acts and from which VPG. [`crate::Rewind`] builds one for each call, as it
/// builds a guard's [`crate::guard::GuardContext`], so recover never sees the facade it serves.
#[derive(Debug)]
pub(crate) struct RecoverContext<'a> {
    /// The configuration: whether any site is configured, and how long a recovery task is waited
    /// for.
    pub(crate) config: &'a Config,
    /// Every configured site's client: a recovery's task goes to the site its VPG names, whether
    /// or not the VM was looked up there.
    pub(crate) configured: &'a [Arc<Site>],
    /// The sites the VM is looked up at ([`crate::Rewind::only_sites`]).
    pub(crate) sites: &'a [Arc<Site>],
    /// The configured sites left out of the lookup.
    pub(crate) left_out: &'a [String],
    /// Where each recovery is journaled.
    pub(crate) journal: &'a AuditJournal,
    /// Who acts ([`crate::Rewind::as_agent`]); without it, the ZVM account.
    pub(crate) agent: Option<&'a str>,
    /// The signed-in person the agent acts for, journaled beside it.
    pub(crate) person: Option<&'a Person>,
    /// The approval the recovery runs on, journaled beside the person.
    pub(crate) approved_by: Option<&'a crate::audit_journal::ApprovedBy>,
    /// The one VPG to recover from ([`crate::Rewind::only_vpg`]), when one was chosen.
    pub(crate) vpg: Option<&'a str>,
}

impl RecoverContext<'_> {
    /// The VM `query` means and every VPG it is in, at the sites this recovery asks.
    pub(super) async fn find_protection(&self, query: &str) -> Result<Protection, RewindError> {
        self.config.require_sites()?;
        crate::protection::find_protection(self.sites, self.left_out, query).await
    }
}

/// How long each recovery task of `ctx` is waited for: its configuration's
/// [`crate::RecoverSettings::wait`].
pub(crate) fn recovery_wait(ctx: &RecoverContext<'_>) -> Duration {
    ctx.config.recover.wait(&ctx.config.guard)
}

/// The client of a configured site.
pub(super) fn client_of(
    ctx: &RecoverContext<'_>,
    site: &str,
) -> Result<Arc<ZvmClient>, RewindError> {
    crate::protection::site_client(ctx.configured, site).cloned()
}
