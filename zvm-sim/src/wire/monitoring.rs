//! The monitoring surface's views: VRAs (`VraApi`), datastores (`DatastoreApi`), volumes
//! (`VolumeApi`), VM statistics and encryption detection's VM metrics, shaped as SW10 declares them,
//! with the identifier fields real appliances add (`VraIdentifierStr`). Their figures
//! come from [`crate::world::placement`], so they add up to what `/v1/vms` and `/v1/vpgs` show.

use serde::Serialize;

use super::virtualization::DatastoreClusterView;
use super::zvm::Link;
use crate::world::placement::{Counters, Space};

/// `GET /v1/vras`: one VRA.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct VraView {
    pub link: Link,
    pub vra_identifier: u64,
    pub vra_identifier_str: String,
    pub vra_name: String,
    pub status: u8,
    pub upgrade_status: u8,
    pub progress: u8,
    pub vra_version: &'static str,
    pub vra_display_version: &'static str,
    pub host_version: &'static str,
    pub vra_network_data_api: VraNetworkView,
    pub vra_group: String,
    #[serde(rename = "MemoryInGB")]
    pub memory_in_gb: u32,
    pub datastore_name: String,
    pub datastore_identifier: String,
    pub datastore_cluster_name: Option<String>,
    pub datastore_cluster_identifier: Option<String>,
    pub vm_instance_type: Option<String>,
    pub network_name: String,
    pub network_identifier: String,
    pub host_identifier: String,
    pub host_display_name: String,
    pub protected_counters: CountersView,
    pub recovery_counters: CountersView,
    pub self_protected_vpgs: usize,
    pub vra_alerts: VraAlertsView,
    pub num_of_cpus: u32,
    pub is_ghost: bool,
    pub is_vaio: bool,
    pub platform_information: Option<()>,
}

/// A host whose VRA could recover instead (`ChangeVraPotentialApi`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct PotentialVraView {
    pub host_identifier: String,
    pub host_name: String,
}

/// `VraNetworkDataApi`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct VraNetworkView {
    #[serde(rename = "VraIPConfigurationTypeApi")]
    pub configuration: &'static str,
    #[serde(rename = "VraIPAddress")]
    pub address: String,
    #[serde(rename = "VraIPAddressRangeEnd")]
    pub range_end: String,
    pub subnet_mask: &'static str,
    pub default_gateway: String,
}

/// `{Vpgs, Vms, Volumes}`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct CountersView {
    pub vpgs: usize,
    pub vms: usize,
    pub volumes: usize,
}

impl From<Counters> for CountersView {
    fn from(c: Counters) -> Self {
        CountersView {
            vpgs: c.vpgs,
            vms: c.vms,
            volumes: c.volumes,
        }
    }
}

/// `VraAlerts`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct VraAlertsView {
    pub vra_alerts_status: u8,
}

/// `GET /v1/datastores`: one datastore.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DatastoreView {
    pub datastore_identifier: String,
    pub datastore_name: String,
    pub config: DatastoreConfigView,
    pub stats: DatastoreStatsView,
    pub health: DatastoreHealthView,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DatastoreConfigView {
    pub devices: Vec<String>,
    #[serde(rename = "Type")]
    pub kind: &'static str,
    pub owning_datastore_cluster: DatastoreClusterView,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DatastoreStatsView {
    #[serde(rename = "NumVRAs")]
    pub num_vras: usize,
    #[serde(rename = "NumIncomingVMs")]
    pub num_incoming_vms: usize,
    #[serde(rename = "NumOutgoingVMs")]
    pub num_outgoing_vms: usize,
    pub availability_status: &'static str,
    pub usage: DatastoreUsageView,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DatastoreUsageView {
    pub datastore: DatastoreSpaceView,
    pub zerto: ZertoSpaceView,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DatastoreSpaceView {
    pub capacity_in_bytes: u64,
    pub free_in_bytes: u64,
    pub used_in_bytes: u64,
    pub provisioned_in_bytes: u64,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ZertoSpaceView {
    pub protected: SpaceView,
    pub recovery: SpaceView,
    pub journal: SpaceView,
    pub scratch: SpaceView,
    pub appliances: SpaceView,
    pub unknown: SpaceView,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct SpaceView {
    pub used_in_bytes: u64,
    pub provisioned_in_bytes: u64,
}

impl From<Space> for SpaceView {
    fn from(s: Space) -> Self {
        SpaceView {
            used_in_bytes: s.used,
            provisioned_in_bytes: s.provisioned,
        }
    }
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DatastoreHealthView {
    pub status: &'static str,
    pub alerts: Vec<()>,
}

/// `VraStatusApi` names, by number (`GET /v1/vras/statuses`).
pub const VRA_STATUSES: [&str; 10] = [
    "Installed",
    "UnsupportedEsxVersion",
    "NotInstalled",
    "Installing",
    "Removing",
    "InstallationError",
    "HostPasswordChanged",
    "UpdatingIpSettings",
    "DuringChangeHost",
    "HostInMaintenanceMode",
];

/// `GET /v1/volumes`: one volume (`VolumeApi`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct SiteVolumeView {
    pub volume_type: &'static str,
    pub is_thin_provisioned: bool,
    pub volume_identifier: String,
    pub path: VolumePathView,
    pub size: SpaceView,
    pub datastore: NamedView,
    pub owning_vm: NamedView,
    pub protected_vm: Option<NamedView>,
    pub vpg: Option<NamedView>,
    pub storage_policy: Option<NamedView>,
}

/// `{Identifier, Name}`: how a volume names what it belongs to (PascalCase, not a link).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct NamedView {
    pub identifier: String,
    pub name: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct VolumePathView {
    pub full: String,
    pub relative: String,
    pub file_name: String,
}

/// `GET /v1/statistics/vms`: one VM in one VPG (`VmStatisticsApi`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct VmStatisticsView {
    pub vm_identifier: String,
    pub vpg_identifier: String,
    pub io_operations_counter: u64,
    #[serde(rename = "WriteCounterInMBs")]
    pub write_counter_in_mbs: u64,
    #[serde(rename = "SyncCounterInMBs")]
    pub sync_counter_in_mbs: u64,
    #[serde(rename = "NetworkTrafficCounterInMBs")]
    pub network_traffic_counter_in_mbs: u64,
    pub sample_time: String,
}

/// `GET /v1/encryptionDetection/metrics/vms`: one VM.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct VmEncryptionView {
    pub link: NamedLink,
    pub associated_vpgs: Vec<NamedView>,
    pub encryption_metrics: EncryptionMetricsView,
}

/// A link that also carries the entity's name, as encryption detection's do.
#[derive(Debug, Serialize)]
pub struct NamedLink {
    pub href: String,
    pub identifier: String,
    pub rel: Option<String>,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub name: String,
}

/// `GET /v1/encryptionDetection/metrics/volumes`: one volume.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct VolumeEncryptionView {
    pub volume_identifier: String,
    pub associated_vm: NamedView,
    pub associated_vpgs: Vec<NamedView>,
    pub encryption_metrics: EncryptionMetricsView,
}

/// `GET /v1/encryptionDetection/metrics/vpgs`: one VPG.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct VpgEncryptionView {
    pub link: NamedLink,
    pub encryption_metrics: EncryptionMetricsView,
}

/// `GET /v1/encryptionDetection/state`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct EncryptionStateView {
    pub encryption_detection_enabled: bool,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct EncryptionMetricsView {
    pub non_encrypted_data: u64,
    pub encrypted_data: u64,
    pub trend_change_level: u32,
}

/// `GET /v1/license` (`LicenseApi`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct LicenseView {
    /// `null` once the license was deleted.
    pub details: Option<LicenseDetailsView>,
    pub usage: LicenseUsageView,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct LicenseDetailsView {
    pub license_key: String,
    pub license_type: &'static str,
    pub expiry_time: &'static str,
    pub max_vms: usize,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct LicenseUsageView {
    pub sites_usage: Vec<SiteUsageView>,
    pub total_vms_count: usize,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct SiteUsageView {
    pub site_identifier: String,
    pub site_name: String,
    pub protected_vms_count: usize,
}
