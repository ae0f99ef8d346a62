//! Extended Journal Copy (`/v1/ltr`): each VPG's repository, the retention sets kept of a VPG or a
//! VM, and a manual run that copies a checkpoint into a new set.

use crate::error::RewindError;
use crate::zvm::client::{ZvmClient, segment};
use crate::zvm::error::CallError;
use crate::zvm::wire::{
    RetentionSetInfo, RetentionSetsInfo, RetentionStart, VmRetentionSet, VmRetentionSets,
    VpgLtrHealth, VpgsLtrHealth,
};

impl ZvmClient {
    /// `POST /v1/ltr/vpgs/{id}/retentionstart {checkpointId}` → the id of the run's task. Never sent
    /// twice.
    pub(crate) async fn retention_start(
        &self,
        vpg_id: &str,
        checkpoint_id: &str,
    ) -> Result<String, CallError> {
        let path = format!("/v1/ltr/vpgs/{}/retentionstart", segment(vpg_id));
        let body = RetentionStart { checkpoint_id };
        self.post_for_task(&path, Some(&body)).await
    }

    /// `GET /v1/ltr/health/vpgs`: each VPG's repository, as this site sees it.
    pub async fn ltr_health(&self) -> Result<Vec<VpgLtrHealth>, RewindError> {
        let health: VpgsLtrHealth = self.get_json("/v1/ltr/health/vpgs", &[]).await?;
        Ok(health.vpgs)
    }

    /// `GET /v1/ltr/catalog/fullretentionsets?vpgIdentifier=`: the full retention sets of a VPG.
    pub async fn full_retention_sets(
        &self,
        vpg_id: &str,
    ) -> Result<Vec<RetentionSetInfo>, RewindError> {
        let sets: RetentionSetsInfo = self
            .get_json(
                "/v1/ltr/catalog/fullretentionsets",
                &[("vpgIdentifier", vpg_id.to_string())],
            )
            .await?;
        Ok(sets.retention_sets)
    }

    /// `GET /v1/ltr/catalog/vms/{vm}/retentionsets`: the retention sets that hold a VM.
    pub async fn vm_retention_sets(&self, vm_id: &str) -> Result<Vec<VmRetentionSet>, RewindError> {
        let path = format!("/v1/ltr/catalog/vms/{}/retentionsets", segment(vm_id));
        let sets: VmRetentionSets = self.get_json(&path, &[]).await?;
        Ok(sets.retention_sets)
    }
}
