//! One configured site as the facade keeps it between calls: its client (HTTP, tokens, retry), and
//! what rewind keeps of the site beside it: reads that concurrent callers share, the listings kept
//! for lookups, the lookups in flight, and the timings learnt of its inserts.
//!
//! This is policy, owned by whoever decides with it; [`ZvmClient`] itself keeps none of it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use chrono::{DateTime, Utc};

use super::client::ZvmClient;
use super::flight::SingleFlight;
use super::inventory::Inventory;
use super::kept::Kept;
use super::port::{InsertPort, Sent, inserts_into};
use super::timings::SiteTimings;
use super::wire::{Checkpoint, LocalSite, SiteVm, Task, VmRow};
use crate::config::LookupSettings;
use crate::error::RewindError;
use crate::way_back::VpgHistory;

/// What one exchange with a ZVM costs, in rows of a listing (see [`Site::whole_listing_is_cheaper`]).
const ROWS_PER_EXCHANGE: usize = 10;

/// One configured site: its client and what is kept of it.
#[derive(Debug)]
pub struct Site {
    client: Arc<ZvmClient>,
    /// Concurrent `/v1/vms` reads with the same filters share one exchange.
    vm_listing: SingleFlight<Vec<VmRow>>,
    /// Concurrent reads of one site's inventory share one exchange.
    site_listing: SingleFlight<Vec<SiteVm>>,
    /// Concurrent reads of the running inserts share one exchange (each guard reads them before its
    /// insert, whatever its VPG).
    running_inserts: SingleFlight<Vec<Task>>,
    /// The whole `/v1/vms` listing, kept for IP-address lookups.
    kept_vms: Arc<Kept<Vec<VmRow>>>,
    /// Sites' inventories, kept for lookups.
    kept_site_vms: Arc<Kept<Inventory>>,
    /// Lookups in flight, and how many VMs the site had when its inventory was last read: together
    /// they say when one shared read of the whole listing costs less than each lookup's own.
    lookups: AtomicUsize,
    vms_seen: AtomicUsize,
    /// What is learnt of the site's insert and listing times.
    timings: SiteTimings,
}

impl Site {
    /// The site of `client`, keeping listings as `lookup` says and starting from `timings`.
    pub(crate) fn new(
        client: Arc<ZvmClient>,
        lookup: &LookupSettings,
        timings: SiteTimings,
    ) -> Site {
        Site {
            client,
            vm_listing: SingleFlight::default(),
            site_listing: SingleFlight::default(),
            running_inserts: SingleFlight::default(),
            kept_vms: Arc::new(Kept::new(lookup.inventory_max_age)),
            kept_site_vms: Arc::new(Kept::new(lookup.inventory_max_age)),
            lookups: AtomicUsize::new(0),
            vms_seen: AtomicUsize::new(0),
            timings,
        }
    }

    /// The site's client.
    pub fn client(&self) -> &Arc<ZvmClient> {
        &self.client
    }

    /// The configured name of this site.
    pub fn name(&self) -> &str {
        self.client.name()
    }

    /// What is learnt of the site's timings.
    pub(crate) fn timings(&self) -> &SiteTimings {
        &self.timings
    }

    /// The site's own identity, read once.
    pub async fn local_site(&self) -> Result<&LocalSite, RewindError> {
        self.client.local_site().await
    }

    /// `GET /v1/vms?{filter}={value}`, read now; callers that ask for the same while a read is in
    /// flight share its answer.
    pub(crate) async fn vms_where(
        &self,
        filter: &'static str,
        value: &str,
    ) -> Result<Arc<Vec<VmRow>>, RewindError> {
        let key = format!("{filter}={}", value.to_ascii_lowercase());
        self.vm_listing
            .run(&key, || self.client.vms_filtered(filter, value))
            .await
    }

    /// `GET /v1/vms`, read now, shared with callers that ask while it is in flight.
    pub(crate) async fn all_vms(&self) -> Result<Arc<Vec<VmRow>>, RewindError> {
        self.vm_listing.run("", || self.client.vms()).await
    }

    /// `GET /v1/vms`, as kept for lookups (see [`LookupSettings::inventory_max_age`]): what the ZVM's
    /// filters cannot answer (an IP address) is looked up in it, and the rows of what it finds are
    /// read again by identifier.
    pub(crate) async fn vms_kept(self: &Arc<Self>) -> Result<Arc<Vec<VmRow>>, RewindError> {
        let site = self.clone();
        self.kept_vms
            .get("/v1/vms", move || async move { site.all_vms().await })
            .await
    }

    /// `GET /v1/virtualizationsites/{id}/vms`, read now; callers that ask while a read of the same
    /// site is in flight share its answer.
    pub(crate) async fn site_vms(&self, site_id: &str) -> Result<Arc<Vec<SiteVm>>, RewindError> {
        let key = site_id.to_ascii_lowercase();
        self.site_listing
            .run(&key, || self.client.site_vms(site_id))
            .await
    }

    /// [`Site::site_vms`], indexed, as kept for lookups.
    pub(crate) async fn site_vms_kept(
        self: &Arc<Self>,
        site_id: &str,
    ) -> Result<Arc<Inventory>, RewindError> {
        let (site, site_id) = (self.clone(), site_id.to_string());
        let key = site_id.to_ascii_lowercase();
        self.kept_site_vms
            .get(&key, move || async move {
                let vms = site.site_vms(&site_id).await?;
                site.vms_seen.store(vms.len(), Ordering::Relaxed);
                Ok(Arc::new(Inventory::new(Arc::unwrap_or_clone(vms))))
            })
            .await
    }

    /// Counts a lookup in flight at this site until the token returned is dropped.
    pub(crate) fn lookup_begins(self: &Arc<Self>) -> LookupInFlight {
        self.lookups.fetch_add(1, Ordering::Relaxed);
        LookupInFlight(self.clone())
    }

    /// How many VMs this site's inventory held when last read (0 before it was). The inventory
    /// lists the VMs no VPG protects, on an appliance as in zvm-sim (SW10: "eligible VMs for
    /// protection that are not currently protected"), so this takes a site for smaller than its
    /// `/v1/vms` listing and shares a listing sooner.
    pub(crate) fn vms_seen(&self) -> usize {
        self.vms_seen.load(Ordering::Relaxed)
    }

    /// Whether the lookups in flight would cost less by sharing one read of the whole listing (as
    /// fresh as their own reads, since it is sent after they asked) than by each sending its
    /// filtered reads: when there are several, and at least a tenth as many as `listing_size` (one
    /// lookup alone shares nothing). An exchange costs the client and the ZVM about what ten rows of
    /// a listing do; under 64 concurrent guards in a site of 332 VMs, their 128 filtered reads cost
    /// more than the one listing they replaced.
    pub(crate) fn whole_listing_is_cheaper(&self, listing_size: usize) -> bool {
        let lookups = self.lookups.load(Ordering::Relaxed);
        lookups > 1 && listing_size > 0 && lookups * ROWS_PER_EXCHANGE >= listing_size
    }
}

/// A lookup in flight at a site; dropping it ends the count.
pub(crate) struct LookupInFlight(Arc<Site>);

impl Drop for LookupInFlight {
    fn drop(&mut self) {
        self.0.lookups.fetch_sub(1, Ordering::Relaxed);
    }
}

impl InsertPort for Site {
    fn site(&self) -> &str {
        self.name()
    }

    async fn running_inserts(&self, vpg_id: &str) -> Result<Vec<Task>, RewindError> {
        let all = self
            .running_inserts
            .run("", || self.client.insert_tasks(true))
            .await?;
        Ok(inserts_into(&all, vpg_id, true))
    }

    async fn inserts(&self, vpg_id: &str) -> Result<Vec<Task>, RewindError> {
        Ok(inserts_into(
            &self.client.insert_tasks(false).await?,
            vpg_id,
            false,
        ))
    }

    async fn insert(&self, vpg_id: &str, tag: &str) -> Result<Sent, RewindError> {
        self.client.insert(vpg_id, tag).await
    }

    async fn task(&self, task_id: &str) -> Result<Task, RewindError> {
        self.client.task(task_id).await
    }

    async fn history(&self, vpg_id: &str) -> Result<VpgHistory, RewindError> {
        self.client.vpg_history(vpg_id).await
    }

    async fn checkpoints_since(
        &self,
        vpg_id: &str,
        since: Option<DateTime<Utc>>,
    ) -> Result<Vec<Checkpoint>, RewindError> {
        self.client.checkpoints(vpg_id, since).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{HttpSettings, SiteConfig};

    #[test]
    fn concurrent_lookups_share_a_whole_listing_only_when_it_costs_less() {
        let config = SiteConfig::with_client("boston", "http://127.0.0.1:9", "c", "s").unwrap();
        let client = Arc::new(ZvmClient::new(&config, &HttpSettings::default()).unwrap());
        let timings = SiteTimings::new("boston");
        let site = Arc::new(Site::new(client, &LookupSettings::default(), timings));
        let first = site.lookup_begins();
        assert!(
            !site.whole_listing_is_cheaper(5),
            "one lookup alone shares nothing"
        );
        let more: Vec<LookupInFlight> = (0..7).map(|_| site.lookup_begins()).collect();
        assert!(site.whole_listing_is_cheaper(80), "8 lookups, 10 rows each");
        assert!(!site.whole_listing_is_cheaper(81));
        assert!(
            !site.whole_listing_is_cheaper(0),
            "a site whose size is not known yet"
        );
        drop(more);
        assert!(
            !site.whole_listing_is_cheaper(2),
            "the count ends with the lookups"
        );
        drop(first);
    }
}
