//! `/v1/vms` (one row per protected VM and VPG) and `/v1/virtualizationsites` (the sites and every VM
//! each has, protected or not).

use crate::error::RewindError;
use crate::zvm::client::{ZvmClient, segment};
use crate::zvm::wire::{SiteVm, VirtualizationSite, VmRow};

impl ZvmClient {
    /// `GET /v1/vms?{filter}={value}`: the rows (one per VM and VPG) that filter keeps, read now.
    pub(crate) async fn vms_filtered(
        &self,
        filter: &'static str,
        value: &str,
    ) -> Result<Vec<VmRow>, RewindError> {
        self.get_list("/v1/vms", &[(filter, value.to_string())])
            .await
    }

    /// `GET /v1/vms`: every protected VM, one row per VM and VPG, read now (a site's whole listing:
    /// a lookup reads by filter instead).
    pub async fn vms(&self) -> Result<Vec<VmRow>, RewindError> {
        self.get_list("/v1/vms", &[]).await
    }

    /// `GET /v1/virtualizationsites`.
    pub async fn virtualization_sites(&self) -> Result<Vec<VirtualizationSite>, RewindError> {
        self.get_list("/v1/virtualizationsites", &[]).await
    }

    /// `GET /v1/virtualizationsites/{id}/vms`: every VM of that site, protected or not, read now.
    pub async fn site_vms(&self, site_id: &str) -> Result<Vec<SiteVm>, RewindError> {
        let path = format!("/v1/virtualizationsites/{}/vms", segment(site_id));
        self.get_list(&path, &[]).await
    }
}
