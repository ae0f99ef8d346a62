//! Extended Journal Copy (`/v1/ltr/...`) as SW10 shapes it: repositories
//! (`RepositoriesSettingsApi`), the catalogue of retention sets (`RetentionSetsInfoApi`,
//! `RetentionSetsApi`, `RecoverableVmsApi`) and the health of each VPG's copies
//! (`VpgsLtrHealthApi`). Lists come wrapped in an object (`{"RetentionSets": [...]}`,
//! `{"Vpgs": [...]}`, `{"Vms": [...]}`), as SW10 declares them.

use serde::Serialize;

use super::zvm::RetentionSetView;
use crate::world::clock::SimTime;

/// `NamedEntityApi`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct NamedEntityView {
    pub name: Option<String>,
    pub identifier: Option<String>,
}

/// `RetentionSetsInfoApi`: `GET /v1/ltr/catalog/fullretentionsets` and `.../incrementals`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct RetentionSetsInfoView {
    pub retention_sets: Vec<RetentionSetInfoView>,
}

/// `RetentionSetInfoApi`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct RetentionSetInfoView {
    pub retention_set_identifier: String,
    pub backup_method: &'static str,
    pub vpg: NamedEntityView,
    pub repository: NamedEntityView,
    pub zorg: NamedEntityView,
    pub point_in_time: SimTime,
    pub expiry_date: SimTime,
    pub action_type: &'static str,
    pub status_type: &'static str,
    pub is_app_aware: bool,
    #[serde(rename = "SizeInKB")]
    pub size_in_kb: u64,
    #[serde(rename = "AggregatedSizeInKB")]
    pub aggregated_size_in_kb: u64,
    pub number_of_incrementals: u32,
    pub is_vpg_exists: bool,
    pub retention_set_immutability: ImmutabilityView,
    pub retention_set_actions_information: RetentionSetActionsView,
}

/// `RetentionSetImmutabilityApi`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ImmutabilityView {
    pub immutability_state: &'static str,
    pub immutability_expiry_time: Option<SimTime>,
}

/// `RetentionSetActionsInformationApi`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct RetentionSetActionsView {
    pub delete_action: ButtonView,
}

/// `ButtonAvailabilityApi`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ButtonView {
    pub is_enabled: bool,
    pub disable_reason_text: Option<String>,
}

/// `RetentionSetsApi`: `GET /v1/ltr/catalog/vms/{vm}/retentionsets`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct RetentionSetsView {
    pub retention_sets: Vec<RetentionSetView>,
    pub ltr_vm_identifier: String,
}

/// `RecoverableVmsApi`: `GET /v1/ltr/catalog/vms`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct RecoverableVmsView {
    pub vms: Vec<RecoverableVmView>,
}

/// `RecoverableVmApi`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct RecoverableVmView {
    pub vm: NamedEntityView,
    pub vpg: NamedEntityView,
    pub is_searchable: bool,
    pub is_vm_exist: bool,
}

/// `VpgsLtrHealthApi`: `GET /v1/ltr/health/vpgs`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct VpgsLtrHealthView {
    pub vpgs: Vec<VpgLtrHealthView>,
}

/// `VpgLtrHealthApi`: a VPG's Extended Journal Copy, whether it has a repository or not.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct VpgLtrHealthView {
    pub ltr_vpg_status: u8,
    pub retention_policy_latest_changed: Option<SimTime>,
    pub success_rate: SuccessRateView,
    pub date_of_last_run: Option<SimTime>,
    pub time_of_last_successful_run: Option<SimTime>,
    pub success_rate_potential_impact: SuccessRateImpactView,
    pub vpg_name: String,
    pub vpg_id: String,
    pub vms_in_vpg: usize,
    pub policy: Option<String>,
    pub scheduling_and_retention_settings: Option<()>,
    pub recovery_site_name: String,
    pub repository_name: Option<String>,
    pub repository_id: Option<String>,
    pub zorg_name: Option<String>,
    pub alert_status: u8,
    pub alert_tips: AlertTipsView,
    pub is_abort_backup_enabled: bool,
    pub is_backup_enabled: bool,
    pub is_update_enabled: bool,
    pub is_failover_enabled: bool,
    pub is_failover_test_enabled: bool,
    pub is_move_enabled: bool,
    pub compression_settings: CompressionView,
    pub manage_retention_sets_availability: ButtonView,
}

/// `SuccessRateApi`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct SuccessRateView {
    pub expected_retention_sets: u32,
    pub actual_successful_retention_sets: u32,
}

/// `SuccessRatePotentialImpact`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct SuccessRateImpactView {
    pub is_success_rate_influenced_by_manual_deletion: bool,
}

/// `AlertsTipVisualObject`: the VPG's alerts on now.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct AlertTipsView {
    pub alerts: Vec<AlertTipView>,
    pub has_more: bool,
    pub total_number_of_alerts: usize,
    pub total_number_of_warnings: usize,
    pub total_number_of_errors: usize,
}

/// `AlertTipVisualObject`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct AlertTipView {
    pub description: String,
    pub site_name: String,
    /// `SystemStateAlertLevel`: 0 warning, 1 error.
    pub alert_level: u8,
    pub start_time: SimTime,
    pub id: String,
}

/// `LtrBackupCompressionSettingsApi`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct CompressionView {
    pub compression_level: u8,
}

/// `RepositoriesSettingsApi`: `GET /v1/ltr/repositories`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct RepositoryView {
    pub repository_identifier: String,
    pub repository_name: String,
    pub storage_type: u8,
    pub connection_type: u8,
    pub default_repository: bool,
    pub is_index_repository: bool,
    #[serde(rename = "TotalCapacityGB")]
    pub total_capacity_gb: u64,
    #[serde(rename = "UsedCapacityGB")]
    pub used_capacity_gb: u64,
    #[serde(rename = "FreeCapacityGB")]
    pub free_capacity_gb: u64,
    pub repository_state: RepositoryStateView,
    pub smb: Option<()>,
    pub s3: Option<()>,
    pub nfs: NfsView,
    pub catalyst: Option<()>,
    pub azure: Option<()>,
    #[serde(rename = "S3-Compatible")]
    pub s3_compatible: Option<()>,
}

/// `RepositoryStateApi`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct RepositoryStateView {
    #[serde(rename = "AllocatedSpaceInGB")]
    pub allocated_space_in_gb: u64,
    #[serde(rename = "AvailableSpaceInGB")]
    pub available_space_in_gb: u64,
    #[serde(rename = "UsedSpaceInGB")]
    pub used_space_in_gb: u64,
}

/// `NFSBackupTargetStorageObjectApi`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct NfsView {
    pub path: String,
}

/// `BackupTargetInfoRepositoriesApi`: `GET /v1/virtualizationsites/{id}/repositories`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct SiteRepositoryView {
    pub repository_identifier: String,
    pub repository_name: String,
    pub path: String,
    pub connection_type: &'static str,
    pub storage_type: &'static str,
}
