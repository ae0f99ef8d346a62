//! What a ZVM shows of what happened: alerts (`AlertApi`), events (`EventApi`) and recovery reports
//! (`RecoveryReportApi`), shaped as SW10 declares them, with the `EventIdentifier` that real
//! appliances add. Alert levels, entities and help identifiers are strings; event types and
//! entity types are numbers; a report's times are strings, as SW10 has them.

use serde::Serialize;

use super::zvm::Link;

/// `GET /v1/alerts`: one alert.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct AlertView {
    pub link: Link,
    pub level: &'static str,
    pub entity: &'static str,
    pub is_dismissed: bool,
    pub help_identifier: &'static str,
    pub site: Link,
    pub description: String,
    pub turned_on: String,
    pub affected_vpgs: Vec<Link>,
    pub affected_zorgs: Vec<Link>,
    pub generation: u64,
}

/// `GET /v1/events`: one event.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct EventView {
    pub event_identifier: String,
    pub link: Link,
    pub description: String,
    pub occurred_on: String,
    pub event_type: u8,
    pub help_link: String,
    pub event_completed_successfully: bool,
    pub entity_type: u8,
    pub event_category: &'static str,
    pub user_name: String,
    pub related_entities: EventEntitiesView,
}

/// `EventApi.RelatedEntities`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct EventEntitiesView {
    pub vpgs: Vec<Link>,
    pub sites: Vec<Link>,
    pub hosts: Vec<Link>,
    pub zorgs: Vec<Link>,
    pub alerts: Vec<Link>,
    pub flr_sessions: Vec<Link>,
    pub repositories: Vec<Link>,
}

/// `GET /v1/reports/recovery`: one report.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct RecoveryReportView {
    pub recovery_operation_identifier: String,
    pub general: ReportGeneralView,
    pub recovery_settings: ReportSettingsView,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ReportGeneralView {
    pub vpg_identifier: String,
    pub vpg_name: String,
    pub recovery_type: String,
    pub protected_site_name: String,
    pub recovery_site_name: String,
    pub start_time: String,
    pub end_time: String,
    pub point_in_time: Option<String>,
    pub rto_in_seconds: String,
    pub status: &'static str,
    pub initiated_by: String,
    pub notes: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ReportSettingsView {
    pub vpg: ReportVpgView,
    pub vms: Vec<ReportVmView>,
    pub steps: Vec<ReportStepView>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ReportVpgView {
    pub default_host_name: String,
    pub default_datastore_name: String,
    pub default_network_name: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ReportVmView {
    pub vm_name: String,
    pub host_name: String,
    pub datastore_name: String,
    pub folder_name: String,
    pub network_names: Vec<String>,
    pub volumes: Vec<ReportVolumeView>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ReportVolumeView {
    pub volume_name: String,
    pub datastore_name: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ReportStepView {
    pub description: String,
    pub result: &'static str,
    pub start_time: String,
    pub end_time: String,
    pub execution_time: String,
}

/// `GET /v1/reports/resources`: one VM's resources in one VPG at a sample time
/// (`VmResourcesReportApi`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ResourceReportView {
    pub sample_time: String,
    pub performance: ResourcePerformanceView,
    pub vpg: ResourceVpgView,
    pub protected_site: ResourceProtectedSiteView,
    pub recovery_site: ResourceRecoverySiteView,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ResourcePerformanceView {
    pub bandwidth_in_bps: f64,
    pub throughput_in_bps: f64,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ResourceVpgView {
    pub crm_identifier: String,
    pub service_profile_name: &'static str,
    pub vpg_name: String,
    pub protected_and_recovery_type: &'static str,
    pub zorg_name: &'static str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ResourceProtectedSiteView {
    pub site_name: String,
    pub vcd_org_name: &'static str,
    pub compute: ResourceComputeView,
    pub storage: ResourceStorageView,
    pub vm_info: ResourceVmInfoView,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ResourceComputeView {
    pub cluster_name: String,
    pub host_name: String,
    pub vra_name: String,
    pub org_vdc_name: &'static str,
    pub resource_pool_name: &'static str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ResourceStorageView {
    pub number_of_volumes: usize,
    #[serde(rename = "VolumesProvisionedStorageInGB")]
    pub volumes_provisioned_gb: f64,
    #[serde(rename = "VolumesUsedStorageInGB")]
    pub volumes_used_gb: f64,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ResourceVmInfoView {
    pub hardware_version: &'static str,
    pub vm_identifier: String,
    pub vm_name: String,
    pub cpu: ResourceCpuView,
    pub memory: ResourceMemoryView,
}

#[derive(Debug, Serialize)]
pub struct ResourceCpuView {
    #[serde(rename = "CpuLimitationInMhz")]
    pub limitation_mhz: i32,
    #[serde(rename = "CpuReservedInMhz")]
    pub reserved_mhz: i32,
    #[serde(rename = "NumberOfvCpus")]
    pub vcpus: u32,
    #[serde(rename = "CpuUsedInMhz")]
    pub used_mhz: u32,
}

#[derive(Debug, Serialize)]
pub struct ResourceMemoryView {
    #[serde(rename = "ActiveGuestMemoryInMB")]
    pub active_guest_mb: u64,
    #[serde(rename = "ConsumedHostMemoryInMB")]
    pub consumed_host_mb: u64,
    #[serde(rename = "MemoryInMB")]
    pub memory_mb: u32,
    #[serde(rename = "MemoryLimitationInMB")]
    pub limitation_mb: i32,
    #[serde(rename = "MemoryReservedInMB")]
    pub reserved_mb: u32,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ResourceRecoverySiteView {
    pub site_name: String,
    pub vcd_org_name: &'static str,
    pub compute: ResourceRecoveryComputeView,
    pub storage: ResourceRecoveryStorageView,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ResourceRecoveryComputeView {
    pub failover_or_move_instance_type: &'static str,
    pub failover_or_move_instance_family: &'static str,
    pub failover_test_instance_type: &'static str,
    pub failover_test_instance_family: &'static str,
    /// Where it runs, as at the protected site.
    #[serde(flatten)]
    pub placement: ResourceComputeView,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ResourceRecoveryStorageView {
    #[serde(rename = "JournalProvisionedStorageInGB")]
    pub journal_provisioned_gb: f64,
    #[serde(rename = "JournalUsedStorageInGB")]
    pub journal_used_gb: f64,
    pub datastore_name: String,
    pub storage_policy_name: &'static str,
    #[serde(rename = "VolumesProvisionedStorageInGB")]
    pub volumes_provisioned_gb: f64,
    #[serde(rename = "VolumesUsedStorageInGB")]
    pub volumes_used_gb: f64,
}
