//! The ZVM's own views of its sites, VMs, VPGs, points in time, checkpoints, tasks and FLR
//! sessions (`/v1/localsite`, `peersites`, `virtualizationsites`, `vms`, `vpgs`, `tasks`, `flrs`),
//! with the link objects the others embed. How they are filled from the world is in
//! `site_view/zvm.rs`.

use serde::Serialize;

use crate::world::clock::SimTime;
use crate::world::files::{Node, NodeKind};
use crate::world::journal::Checkpoint;

/// An embedded link object (`{href, identifier, rel, type}`).
#[derive(Debug, Clone, Serialize)]
pub struct Link {
    pub href: String,
    pub identifier: String,
    pub rel: Option<String>,
    #[serde(rename = "type")]
    pub kind: &'static str,
}

/// `GET /v1/localsite`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct LocalSiteView {
    pub site_identifier: String,
    pub site_name: String,
    pub location: String,
    pub version: &'static str,
    pub display_version: &'static str,
    pub zvm_api_version: &'static str,
    pub contact_email: String,
    pub contact_name: String,
    pub contact_phone: &'static str,
    pub is_replication_to_self_enabled: bool,
    pub utc_offset_in_minutes: i32,
    pub site_type: &'static str,
    pub ip_address: String,
    #[serde(rename = "BandwidthThrottlingInMBs")]
    pub bandwidth_throttling_in_mbs: f64,
    pub site_type_version: &'static str,
    pub platform_information: SitePlatformView,
    pub is_login_banner_enabled: bool,
    pub login_banner: &'static str,
    pub link: Link,
}

/// `PlatformInformation` of a site.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct SitePlatformView {
    pub azure: Option<()>,
    pub v_center: VCenterView,
}

/// `PlatformInformation.VCenter`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct VCenterView {
    pub ip: String,
}

/// `GET /v1/peersites`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct PeerSiteView {
    pub site_identifier: String,
    pub peer_site_name: String,
    pub pairing_status: u8,
    pub location: String,
    pub host_name: String,
    pub port: u16,
    pub provisioned_storage: u64,
    pub used_storage: u64,
    pub incoming_throughput_in_mb: f64,
    pub outgoing_band_width: f64,
    pub version: &'static str,
    pub site_type: &'static str,
    pub region_name: Option<String>,
    pub link: Link,
}

/// `GET /v1/virtualizationsites`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct VirtualizationSiteView {
    pub site_identifier: String,
    pub virtualization_site_name: String,
}

/// `GET /v1/virtualizationsites/{id}/vms`: a VM that no VPG protects (`VmNativeApi`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct NativeVmView {
    pub vm_identifier: String,
    pub vm_name: String,
    pub vm_instance_identifier: Option<String>,
    #[serde(flatten)]
    pub placement: VmPlacementView,
    pub vm_perf_metric_info: PerfMetricView,
    pub nics: Vec<NicView>,
    pub volumes: Vec<VolumeView>,
    pub is_agent_installed: bool,
    pub platform_information: VmPlatformView,
}

/// Where a VM runs, as both `VmApi` and `VmNativeApi` say it (flattened into each): its host,
/// datastore, guest OS and network.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct VmPlacementView {
    pub owning_host_identifier: String,
    pub owning_host_name: String,
    pub owning_datastore_identifier: String,
    pub owning_datastore_name: String,
    pub guest_os: &'static str,
    pub vm_network_information: NetworkInformationView,
}

/// `VmPerfMetricInfo`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct PerfMetricView {
    #[serde(rename = "ProvisionedStorageInMB")]
    pub provisioned_storage_in_mb: u64,
    #[serde(rename = "UsedStorageInMB")]
    pub used_storage_in_mb: u64,
    pub cpu_cores_num: u32,
    #[serde(rename = "MemorySizeInMB")]
    pub memory_size_in_mb: u32,
}

/// `VmNetworkInformation`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct NetworkInformationView {
    pub network_adapters: Vec<NetworkAdapterView>,
}

/// One network adapter.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct NetworkAdapterView {
    pub display_name: &'static str,
    pub network_identifier: String,
    pub ip_addresses: Vec<String>,
}

/// `Nics[]`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct NicView {
    pub nic_identifier: &'static str,
}

/// `Volumes[]`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct VolumeView {
    pub vm_volume_identifier: &'static str,
    pub public_cloud_volume_identifier: Option<String>,
}

/// `PlatformInformation` of a VM.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct VmPlatformView {
    pub azure: Option<()>,
}

/// `GET /v1/vms`: one row per VM × VPG (`VmApi`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct VmView {
    pub vm_identifier: String,
    pub vm_name: String,
    pub vpg_identifier: String,
    pub vpg_name: String,
    pub link: Link,
    pub organization_name: &'static str,
    pub priority: u8,
    #[serde(rename = "ProvisionedStorageInMB")]
    pub provisioned_storage_in_mb: u64,
    #[serde(rename = "UsedStorageInMB")]
    pub used_storage_in_mb: u64,
    pub cpu_cores_num: u32,
    #[serde(rename = "MemorySizeInMB")]
    pub memory_size_in_mb: u32,
    pub journal_used_storage_mb: u64,
    pub journal_warning_threshold: JournalLimitView,
    pub journal_hard_limit: JournalLimitView,
    #[serde(rename = "IOPs")]
    pub iops: u32,
    #[serde(rename = "ThroughputInMB")]
    pub throughput_in_mb: f64,
    pub outgoing_band_width_in_mbps: f64,
    #[serde(rename = "ActualRPO")]
    pub actual_rpo: u32,
    pub last_test: Option<SimTime>,
    pub volumes: Vec<VolumeView>,
    pub nics: Vec<NicView>,
    pub protected_site_name: String,
    pub recovery_site_name: String,
    pub entities: EntitiesView,
    pub status: u8,
    pub sub_status: u8,
    pub protected_site: Link,
    pub recovery_site: Link,
    pub enabled_actions: EnabledActionsView,
    pub is_vm_exists: bool,
    pub recovery_host_identifier: String,
    pub recovery_host_name: String,
    #[serde(flatten)]
    pub placement: VmPlacementView,
    pub hardware_version: &'static str,
    pub is_agent_installed: bool,
    pub platform_information: VmPlatformView,
}

/// `JournalWarningThreshold`, `JournalHardLimit`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct JournalLimitView {
    pub limit_type: u8,
    pub limit_value: u64,
}

/// `Entities`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct EntitiesView {
    pub protected: u8,
    pub recovery: u8,
}

/// `EnabledActions`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct EnabledActionsView {
    pub is_flr_enabled: bool,
}

/// `GET /v1/vpgs` (`VpgApi`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct VpgView {
    pub vpg_identifier: String,
    pub vpg_name: String,
    pub vpg_description: &'static str,
    pub vpg_type: Option<String>,
    pub link: Link,
    pub progress_percentage: f64,
    pub zorg: Link,
    pub organization_name: &'static str,
    pub priority: u8,
    pub vms_count: usize,
    #[serde(rename = "ProvisionedStorageInMB")]
    pub provisioned_storage_in_mb: u64,
    #[serde(rename = "UsedStorageInMB")]
    pub used_storage_in_mb: u64,
    #[serde(rename = "IOPs")]
    pub iops: u32,
    #[serde(rename = "ThroughputInMB")]
    pub throughput_in_mb: f64,
    #[serde(rename = "ActualRPO")]
    pub actual_rpo: u32,
    pub configured_rpo_seconds: u32,
    pub last_test: Option<SimTime>,
    pub protected_site_name: String,
    pub protected_site: Link,
    pub recovery_site_name: String,
    pub recovery_site: Link,
    pub entities: EntitiesView,
    pub status: u8,
    pub status_description: &'static str,
    pub sub_status: u8,
    pub sub_status_description: &'static str,
    pub active_processes_api: ActiveProcessesView,
    pub service_profile: Option<Link>,
    pub service_profile_identifier: Option<String>,
    pub service_profile_name: &'static str,
    pub backup_enabled: bool,
    pub fail_safe_history: Option<()>,
    pub history_status_api: HistoryStatusView,
    pub alert_status: u8,
}

/// `ActiveProcessesApi`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ActiveProcessesView {
    pub running_fail_over_test_api: Option<RunningTestView>,
}

/// `RunningFailOverTestApi`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct RunningTestView {
    pub stage: &'static str,
}

/// `GET /v1/vms/{id}/pointsInTime` (`PointInTimeApi`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct PointInTimeView {
    /// The journal checkpoint; `None` for a retention set.
    pub checkpoint: Option<CheckpointView>,
    /// The retention set of Extended Journal Copy; `None` for a journal checkpoint.
    pub retention_set: Option<RetentionSetView>,
    pub can_mount: CanMountView,
}

/// `RetentionSetApi`: one retention set of a VM, a point in time's `RetentionSet` (and listed by
/// Extended Journal Copy's catalogue, `ltr.rs`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct RetentionSetView {
    pub repository_identifier: String,
    pub retention_set_identifier: String,
    pub time_stamp: SimTime,
    pub is_application_aware: bool,
    pub zorg_identifier: Option<String>,
    pub number_of_volumes: usize,
    pub repository_site_identifier: String,
    pub tier: u8,
}

/// `CanMount` of a point in time.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct CanMountView {
    pub is_allowed: bool,
    pub reason: String,
}

/// `GET /v1/vms/{id}/pointsInTime/stats`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct PointsInTimeStatsView {
    pub earliest: Option<PointInTimeView>,
    pub latest: Option<PointInTimeView>,
}

/// `HistoryStatusApi`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct HistoryStatusView {
    pub actual_history_in_minutes: i64,
    pub configured_history_in_minutes: i64,
    pub earliest_checkpoint: Option<CheckpointView>,
}

/// A checkpoint (`CheckpointApi`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct CheckpointView {
    pub checkpoint_identifier: String,
    pub time_stamp: SimTime,
    pub tag: Option<String>,
    #[serde(rename = "Type")]
    pub kind: u8,
}

impl From<Checkpoint> for CheckpointView {
    fn from(c: Checkpoint) -> Self {
        CheckpointView {
            checkpoint_identifier: c.id.to_string(),
            time_stamp: c.at,
            tag: c.tag,
            kind: c.kind,
        }
    }
}

/// `GET /v1/vpgs/{id}/checkpoints/stats`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct CheckpointStatsView {
    pub earliest: Option<CheckpointView>,
    pub latest: Option<CheckpointView>,
}

/// `GET /v1/tasks` (`TaskApi`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct TaskView {
    pub task_identifier: String,
    #[serde(rename = "Type")]
    pub kind: &'static str,
    pub status: TaskStatusView,
    pub initiated_by: String,
    pub started: SimTime,
    pub completed: Option<SimTime>,
    pub complete_reason: String,
    pub is_cancellable: bool,
    pub link: Link,
    pub related_entities: RelatedEntitiesView,
    pub generation: u64,
}

/// `Status` of a task.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct TaskStatusView {
    pub state: u8,
    pub progress: u8,
}

/// `RelatedEntities` of a task.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct RelatedEntitiesView {
    pub vpgs: Vec<Link>,
    pub sites: Vec<Link>,
    pub hosts: Vec<Link>,
    pub flr_sessions: Vec<Link>,
}

/// `GET /v1/flrs` (`FlrSessionInformationApi`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct FlrSessionView {
    pub flr_session_status: &'static str,
    pub flr_session_identifier: String,
    pub flr_session_type: &'static str,
    pub vm_identifier: String,
    pub vm_volume_identifier: Option<String>,
    pub vpg_identifier: String,
    pub checkpoint_identifier: Option<String>,
    pub mount_time: Option<SimTime>,
    pub selected_path: Option<String>,
    pub number_of_related_running_tasks: usize,
    pub repository_identifier: Option<String>,
    pub retention_set_identifier: Option<String>,
    pub site_identifier: String,
}

/// `POST /v1/flrs/{id}/browse`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct BrowseView {
    pub main_path_item: Option<PathItemView>,
    pub path_items: Vec<PathItemView>,
}

/// One item of a browse answer.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct PathItemView {
    pub path: String,
    #[serde(rename = "Type")]
    pub kind: &'static str,
    pub is_browsable: bool,
    pub download_information: DownloadInformationView,
    pub size_in_bytes: Option<u64>,
    pub creation_time: Option<SimTime>,
    pub last_access_time: Option<SimTime>,
    pub last_write_time: Option<SimTime>,
}

/// `DownloadInformation` of a browse item.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DownloadInformationView {
    pub is_downloadable: bool,
    pub additional_information: Option<String>,
}

impl From<Node> for PathItemView {
    fn from(node: Node) -> Self {
        PathItemView {
            path: node.path,
            kind: match node.kind {
                NodeKind::Partition => "Partition",
                NodeKind::Folder => "Folder",
                NodeKind::File => "File",
            },
            is_browsable: node.kind != NodeKind::File,
            download_information: DownloadInformationView {
                is_downloadable: true,
                additional_information: None,
            },
            size_in_bytes: node.size,
            creation_time: node.created,
            // The journal keeps no access times; the last write is the best a mount can tell.
            last_access_time: node.written,
            last_write_time: node.written,
        }
    }
}
