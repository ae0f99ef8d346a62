//! The simulator's own JSON views of its model, shaped as a ZVM 10.x writes them: PascalCase keys
//! (with the API's own spellings such as `IOPs`, `ActualRPO`, `ProvisionedStorageInMB`), lowercase
//! keys inside link objects, the real enum numbers, ISO 8601 UTC times.
//!
//! These types are deliberately not shared with any client: a client that reads a wrong field name
//! must fail against the simulator, not agree with it.

mod ltr;
mod monitoring;
mod traces;
mod virtualization;

use serde::Serialize;

pub use ltr::*;
pub use monitoring::*;
pub use traces::*;
pub use virtualization::*;

use crate::decisions::{
    PEER_PORT, SITE_TYPE, SITE_TYPE_VERSION, ZVM_API_VERSION, ZVM_DISPLAY_VERSION, ZVM_VERSION,
};
use crate::world::clock::SimTime;
use crate::world::enums::{PAIRING_STATUS, VPG_STATUS, VPG_SUBSTATUS, status as vpg_status};
use crate::world::files::{Node, NodeKind};
use crate::world::flr::FlrSession;
use crate::world::journal::Checkpoint;
use crate::world::spec::GuestOs;
use crate::world::tasks::{Operation, Task};
use crate::world::{Call, Site, SiteRole, Vm, World};

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
    pub owning_host_identifier: String,
    pub owning_host_name: String,
    pub owning_datastore_identifier: String,
    pub owning_datastore_name: String,
    pub guest_os: &'static str,
    pub vm_network_information: NetworkInformationView,
    pub vm_perf_metric_info: PerfMetricView,
    pub nics: Vec<NicView>,
    pub volumes: Vec<VolumeView>,
    pub is_agent_installed: bool,
    pub platform_information: VmPlatformView,
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
    pub owning_host_identifier: String,
    pub owning_host_name: String,
    pub owning_datastore_identifier: String,
    pub owning_datastore_name: String,
    pub guest_os: &'static str,
    pub vm_network_information: NetworkInformationView,
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

/// `GET /_sim/clock`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ClockView {
    pub now: SimTime,
    pub scale: f64,
}

/// `GET|POST /_sim/timing`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct TimingView {
    pub task_duration_ms: i64,
    pub listing_lag_ms: i64,
}

/// `POST /_sim/reset`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ResetView {
    pub seed: u64,
    pub now: SimTime,
}

/// `GET /_sim/calls`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct CallView {
    pub seq: u64,
    pub site: String,
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    pub status: u16,
    pub task_id: Option<String>,
    /// The fault rules that fired: `[{"Rule": 1, "Action": "LoseResponse"}]`.
    pub faults: Vec<FaultNoteView>,
    /// No route matched it.
    pub unmatched: bool,
}

/// A fault rule that fired on a call.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct FaultNoteView {
    pub rule: u64,
    pub action: &'static str,
}

impl From<&Call> for CallView {
    fn from(c: &Call) -> Self {
        CallView {
            seq: c.seq,
            site: c.site.clone(),
            method: c.method.clone(),
            path: c.path.clone(),
            query: c.query.clone(),
            status: c.status,
            task_id: c.task_id.clone(),
            faults: c
                .faults
                .iter()
                .map(|note| FaultNoteView {
                    rule: note.rule,
                    action: note.action.name(),
                })
                .collect(),
            unmatched: c.unmatched,
        }
    }
}

/// `GET /_sim/tasks`: every task of both sites.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct SimTaskView {
    pub site: String,
    pub task_identifier: String,
    #[serde(rename = "Type")]
    pub kind: &'static str,
    pub vpg_identifier: String,
    pub vpg_name: String,
    pub checkpoint_name: String,
    pub state: u8,
    pub progress: u8,
    pub complete_reason: String,
    pub started: SimTime,
    pub completed: Option<SimTime>,
    /// What the task was asked to do, per type: `CheckpointIdentifier` and `VmIdentifiers` of a
    /// failover test, clone or failover; `FlrSessionIdentifier` of an FLR task;
    /// `FailoverTestSuccess` and `FailoverTestSummary` of a test's stop; `CommitPolicy`.
    pub details: serde_json::Value,
}

/// `GET /_sim/vpgs`, and the answer of `POST /_sim/vpgs/{id}/resync` and `/status`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct VpgStateView {
    pub vpg_identifier: String,
    pub vpg_name: String,
    pub status: u8,
    pub sub_status: u8,
    pub resync_until: Option<SimTime>,
}

/// `GET /_sim/vpgs/{id}/journal`, and the answer of `POST /_sim/vpgs/{id}/journal-burst`: how
/// much history the journal holds against its configured history and its hard limit.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct JournalStateView {
    pub vpg_identifier: String,
    pub vpg_name: String,
    /// The status the VPG shows (HistoryNotMeetingSLA once its mature journal falls short).
    pub status: u8,
    pub configured_history_in_minutes: i64,
    /// `ActualHistoryInMinutes`, as `GET /v1/vpgs/{id}` shows it.
    pub actual_history_in_minutes: i64,
    /// The journal's hard limit, in minutes of the VPG's usual writing.
    pub limit_in_minutes: i64,
    /// The bursts of writes the journal holds now, in minutes of usual writing.
    pub burst_minutes: f64,
    /// Whether the journal is at its hard limit (judged once it has written for its history).
    pub full: bool,
    pub earliest_checkpoint: Option<CheckpointView>,
}

/// `GET /_sim/retention-sets`: a retention set of either site, as the simulator keeps it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct SimRetentionSetView {
    pub retention_set_identifier: String,
    pub vpg_identifier: String,
    pub vpg_name: String,
    pub repository_identifier: String,
    pub repository_name: String,
    /// The repository's site.
    pub site: String,
    /// The checkpoint it was copied from, and its tag.
    pub checkpoint_identifier: String,
    pub tag: Option<String>,
    pub point_in_time: SimTime,
    /// When its run ended.
    pub written: SimTime,
    pub expiry_date: SimTime,
    pub vm_identifiers: Vec<String>,
    pub initiated_by: String,
}

/// A retention set as `GET /_sim/retention-sets` shows it.
pub fn sim_retention_set(
    world: &World,
    set: &crate::world::ltr::RetentionSet,
) -> SimRetentionSetView {
    let vpg = &world.vpgs[set.vpg];
    let repository = &world.ltr.repositories[set.repository];
    SimRetentionSetView {
        retention_set_identifier: set.id.clone(),
        vpg_identifier: vpg.id.clone(),
        vpg_name: vpg.name.clone(),
        repository_identifier: repository.id.clone(),
        repository_name: repository.name.clone(),
        site: world.site(repository.site).name.clone(),
        checkpoint_identifier: set.checkpoint.id.to_string(),
        tag: set.checkpoint.tag.clone(),
        point_in_time: set.checkpoint.at,
        written: set.written,
        expiry_date: set.expires,
        vm_identifiers: set.vms.iter().map(|&vm| world.vms[vm].id.clone()).collect(),
        initiated_by: set.initiated_by.clone(),
    }
}

/// `GET /_sim/vms/{id}/files` without a path, and the answer to `PUT`/`DELETE`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct FileView {
    pub path: String,
    pub size: usize,
    pub last_write_time: SimTime,
}

/// Everything a view of one site at one moment needs.
#[derive(Debug, Clone, Copy)]
pub struct SiteView<'a> {
    pub world: &'a World,
    /// The site answering.
    pub site: SiteRole,
    /// `http://host:port` of the request.
    pub base: &'a str,
    pub now: SimTime,
}

const ZERO_GUID: &str = "00000000-0000-0000-0000-000000000000";

fn guest_os_name(os: GuestOs) -> &'static str {
    match os {
        GuestOs::Linux => "Ubuntu Linux (64-bit)",
        GuestOs::Windows => "Microsoft Windows Server 2022 (64-bit)",
    }
}

/// Two disks per VM: the system disk and the data disk (`sda`/`sdb`, `C:`/`D:`).
fn volumes() -> Vec<VolumeView> {
    crate::decisions::VM_VOLUMES
        .into_iter()
        .map(|id| VolumeView {
            vm_volume_identifier: id,
            public_cloud_volume_identifier: None,
        })
        .collect()
}

impl SiteView<'_> {
    fn link(&self, path: &str, identifier: &str, kind: &'static str) -> Link {
        Link {
            href: format!("{}/v1/{path}", self.base),
            identifier: identifier.to_owned(),
            rel: None,
            kind,
        }
    }

    /// The link to a site: `LocalSiteApi` for the answering site, `PeerSiteApi` for the other.
    pub fn site_link(&self, target: SiteRole) -> Link {
        let site = self.world.site(target);
        if target == self.site {
            self.link("localsite", &site.id, "LocalSiteApi")
        } else {
            self.link(&format!("peersites/{}", site.id), &site.id, "PeerSiteApi")
        }
    }

    fn flr_link(&self, session: &str) -> Link {
        self.link(&format!("flrs/{session}"), session, "FlrSessionApi")
    }

    /// `GET /v1/flrs/{id}`: one session.
    pub fn flr_session(&self, session: &FlrSession) -> FlrSessionView {
        let running = [Some(session.mount_task), session.unmount_task]
            .into_iter()
            .flatten()
            .filter(|&task| self.world.tasks[task].is_running())
            .count();
        // A retention set's session names the set and its repository, not a journal checkpoint.
        let repository = session.retention_set.as_ref().and_then(|id| {
            let set = self.world.ltr.sets.iter().find(|s| &s.id == id)?;
            Some(self.world.ltr.repositories[set.repository].id.clone())
        });
        let from_set = session.retention_set.is_some();
        FlrSessionView {
            flr_session_status: session.state.wire(),
            flr_session_identifier: session.id.clone(),
            flr_session_type: if from_set { "bflr" } else { "jflr" },
            vm_identifier: self.world.vms[session.vm].id.clone(),
            vm_volume_identifier: None,
            vpg_identifier: self.world.vpgs[session.vpg].id.clone(),
            checkpoint_identifier: (!from_set).then(|| session.checkpoint.id.to_string()),
            mount_time: session.mounted_at,
            selected_path: session.selected_path.clone(),
            number_of_related_running_tasks: running,
            repository_identifier: repository,
            retention_set_identifier: session.retention_set.clone(),
            site_identifier: self.world.site(session.site).id.clone(),
        }
    }

    fn host_link(&self, site: SiteRole, host: usize) -> Link {
        let (site_id, host_id) = (
            &self.world.site(site).id,
            &self.world.site(site).hosts[host].id,
        );
        let path = format!("virtualizationsites/{site_id}/hosts/{host_id}");
        self.link(&path, host_id, "VirtualizationSiteHostApi")
    }

    fn vpg_link(&self, vpg: usize) -> Link {
        let id = &self.world.vpgs[vpg].id;
        self.link(&format!("vpgs/{id}"), id, "VpgApi")
    }

    /// `GET /v1/localsite`.
    pub fn local_site(&self) -> LocalSiteView {
        let site = self.world.site(self.site);
        let domain = format!("{}.example.internal", site.name.to_lowercase());
        LocalSiteView {
            site_identifier: site.id.clone(),
            site_name: site.name.clone(),
            location: site.location.clone(),
            version: ZVM_VERSION,
            display_version: ZVM_DISPLAY_VERSION,
            zvm_api_version: ZVM_API_VERSION,
            contact_email: format!("dr-team@{domain}"),
            contact_name: format!("{} DR team", site.name),
            contact_phone: "+1-555-0100",
            is_replication_to_self_enabled: true,
            utc_offset_in_minutes: 0,
            site_type: SITE_TYPE,
            ip_address: site.ip.clone(),
            bandwidth_throttling_in_mbs: -1.0,
            site_type_version: SITE_TYPE_VERSION,
            platform_information: SitePlatformView {
                azure: None,
                v_center: VCenterView {
                    ip: vcenter_ip(site),
                },
            },
            is_login_banner_enabled: false,
            login_banner: "",
            link: self.site_link(self.site),
        }
    }

    /// `GET /v1/peersites/...` for the other site.
    pub fn peer_site(&self, peer: SiteRole) -> PeerSiteView {
        let site = self.world.site(peer);
        let at_site = self
            .world
            .vms
            .iter()
            .filter(|vm| vm.site == peer && !vm.removed);
        let (provisioned, used) =
            at_site.fold((0, 0), |(p, u), vm| (p + vm.provisioned_mb, u + vm.used_mb));
        let incoming: f64 = self
            .world
            .vpgs
            .iter()
            .enumerate()
            .filter(|(_, v)| v.recovery == peer && v.protected != peer)
            .map(|(i, _)| self.world.vpg_load(i).1)
            .sum();
        PeerSiteView {
            site_identifier: site.id.clone(),
            peer_site_name: site.name.clone(),
            pairing_status: 0,
            location: site.location.clone(),
            host_name: site.ip.clone(),
            port: PEER_PORT,
            provisioned_storage: provisioned,
            used_storage: used,
            incoming_throughput_in_mb: incoming,
            outgoing_band_width: incoming * 8.0,
            version: ZVM_VERSION,
            site_type: SITE_TYPE,
            region_name: None,
            link: self.site_link(peer),
        }
    }

    /// One `VirtualizationSiteApi`.
    pub fn virtualization_site(&self, target: SiteRole) -> VirtualizationSiteView {
        let site = self.world.site(target);
        VirtualizationSiteView {
            site_identifier: site.id.clone(),
            virtualization_site_name: site.name.clone(),
        }
    }

    fn network(&self, vm: &Vm) -> NetworkInformationView {
        NetworkInformationView {
            network_adapters: vec![NetworkAdapterView {
                display_name: "Network adapter 1",
                network_identifier: self.world.site(vm.site).network.0.clone(),
                ip_addresses: vec![vm.ip.clone()],
            }],
        }
    }

    /// A VM no VPG protects, as `GET /v1/virtualizationsites/{id}/vms` lists it.
    pub fn native_vm(&self, vm_index: usize) -> NativeVmView {
        let vm = &self.world.vms[vm_index];
        let site = self.world.site(vm.site);
        let host = &site.hosts[vm.host % site.hosts.len()];
        let datastore = &site.datastores[self.world.datastore_of(vm_index, vm.site)];
        NativeVmView {
            vm_identifier: vm.id.clone(),
            vm_name: vm.name.clone(),
            vm_instance_identifier: None,
            owning_host_identifier: host.id.clone(),
            owning_host_name: host.name.clone(),
            owning_datastore_identifier: datastore.id.clone(),
            owning_datastore_name: datastore.name.clone(),
            guest_os: guest_os_name(vm.os),
            vm_network_information: self.network(vm),
            vm_perf_metric_info: PerfMetricView {
                provisioned_storage_in_mb: vm.provisioned_mb,
                used_storage_in_mb: vm.used_mb,
                cpu_cores_num: vm.cpus,
                memory_size_in_mb: vm.memory_mb,
            },
            nics: vec![NicView {
                nic_identifier: "Network adapter 1",
            }],
            volumes: volumes(),
            is_agent_installed: false,
            platform_information: VmPlatformView { azure: None },
        }
    }

    /// One row of `GET /v1/vms`: a VM in one VPG.
    pub fn vm_row(&self, vm_index: usize, vpg_index: usize) -> VmView {
        let vm = &self.world.vms[vm_index];
        let vpg = &self.world.vpgs[vpg_index];
        let site = self.world.site(vm.site);
        let host = &site.hosts[vm.host % site.hosts.len()];
        let recovery = self.world.site(vpg.recovery);
        let recovery_host = &recovery.hosts[vm.host % recovery.hosts.len()];
        let identifier = format!("{}?VpgIdentifier={}", vm.id, vpg.id);
        let datastore = &site.datastores[self.world.datastore_of(vm_index, vm.site)];
        let (iops, throughput) = self.world.vm_load(vm_index, vpg_index);
        VmView {
            vm_identifier: vm.id.clone(),
            vm_name: vm.name.clone(),
            vpg_identifier: vpg.id.clone(),
            vpg_name: vpg.name.clone(),
            link: self.link(&format!("vms/{identifier}"), &identifier, "VmApi"),
            organization_name: "",
            priority: vpg.priority,
            provisioned_storage_in_mb: vm.provisioned_mb,
            used_storage_in_mb: vm.used_mb,
            cpu_cores_num: vm.cpus,
            memory_size_in_mb: vm.memory_mb,
            journal_used_storage_mb: self.world.journal_used_mb(vm_index, vpg_index, self.now),
            journal_warning_threshold: JournalLimitView {
                limit_type: 1,
                limit_value: 115_200,
            },
            journal_hard_limit: JournalLimitView {
                limit_type: 1,
                limit_value: 153_600,
            },
            iops,
            throughput_in_mb: throughput,
            outgoing_band_width_in_mbps: throughput * 8.0,
            actual_rpo: self.world.actual_rpo(vpg_index, self.now),
            last_test: vpg.vm_last_test.get(&vm_index).copied(),
            volumes: volumes(),
            nics: vec![NicView {
                nic_identifier: "Network adapter 1",
            }],
            protected_site_name: self.world.site(vpg.protected).name.clone(),
            recovery_site_name: recovery.name.clone(),
            entities: EntitiesView {
                protected: 0,
                recovery: 0,
            },
            status: self.world.shown_status(vpg_index, self.now),
            sub_status: vpg.sub_status,
            protected_site: self.site_link(vpg.protected),
            recovery_site: self.site_link(vpg.recovery),
            // FLR runs at the VPG's recovery site (§9): only that site's ZVM offers it.
            enabled_actions: EnabledActionsView {
                is_flr_enabled: self.site == vpg.recovery,
            },
            is_vm_exists: true,
            recovery_host_identifier: recovery_host.id.clone(),
            recovery_host_name: recovery_host.name.clone(),
            owning_host_identifier: host.id.clone(),
            owning_host_name: host.name.clone(),
            owning_datastore_identifier: datastore.id.clone(),
            owning_datastore_name: datastore.name.clone(),
            guest_os: guest_os_name(vm.os),
            vm_network_information: self.network(vm),
            hardware_version: "vmx-19",
            is_agent_installed: false,
            platform_information: VmPlatformView { azure: None },
        }
    }

    /// `GET /v1/vpgs/{id}`.
    pub fn vpg(&self, vpg_index: usize) -> VpgView {
        let vpg = &self.world.vpgs[vpg_index];
        let members = vpg.vms.iter().map(|&vm| &self.world.vms[vm]);
        let (provisioned, used) =
            members.fold((0, 0), |(p, u), vm| (p + vm.provisioned_mb, u + vm.used_mb));
        let earliest = vpg.journal.earliest(self.now);
        let actual_history = self.world.actual_history_minutes(vpg_index, self.now);
        let writes = self.world.writes_checkpoints(vpg_index);
        let (iops, throughput) = self.world.vpg_load(vpg_index);
        let shown_status = self.world.shown_status(vpg_index, self.now);
        let alert_status = match shown_status {
            vpg_status::MEETING_SLA if writes => 0,
            vpg_status::INITIALIZING => 0,
            _ => 1,
        };
        VpgView {
            vpg_identifier: vpg.id.clone(),
            vpg_name: vpg.name.clone(),
            vpg_description: "",
            vpg_type: None,
            link: self.vpg_link(vpg_index),
            progress_percentage: self.world.vpg_progress(vpg_index, self.now),
            zorg: self.link(&format!("zorgs/{ZERO_GUID}"), ZERO_GUID, "ZorgApi"),
            organization_name: "",
            priority: vpg.priority,
            vms_count: vpg.vms.len(),
            provisioned_storage_in_mb: provisioned,
            used_storage_in_mb: used,
            iops,
            throughput_in_mb: throughput,
            actual_rpo: self.world.actual_rpo(vpg_index, self.now),
            configured_rpo_seconds: vpg.rpo_seconds,
            last_test: vpg.last_test,
            protected_site_name: self.world.site(vpg.protected).name.clone(),
            protected_site: self.site_link(vpg.protected),
            recovery_site_name: self.world.site(vpg.recovery).name.clone(),
            recovery_site: self.site_link(vpg.recovery),
            entities: EntitiesView {
                protected: 0,
                recovery: 0,
            },
            status: shown_status,
            status_description: VPG_STATUS.name(shown_status),
            sub_status: vpg.sub_status,
            sub_status_description: VPG_SUBSTATUS.name(vpg.sub_status),
            active_processes_api: ActiveProcessesView {
                running_fail_over_test_api: vpg
                    .test_stage(&self.world.tasks)
                    .map(|stage| RunningTestView { stage }),
            },
            service_profile: None,
            service_profile_identifier: None,
            service_profile_name: "",
            backup_enabled: false,
            fail_safe_history: None,
            history_status_api: HistoryStatusView {
                actual_history_in_minutes: actual_history,
                configured_history_in_minutes: vpg.journal.history_minutes(),
                earliest_checkpoint: earliest.map(CheckpointView::from),
            },
            alert_status,
        }
    }

    /// `GET /v1/tasks/{id}`.
    pub fn task(&self, task: &Task) -> TaskView {
        let (state, progress) = task.status_at(self.now);
        let ended = task.ended.as_ref();
        TaskView {
            task_identifier: task.id.clone(),
            kind: task.kind(),
            status: TaskStatusView { state, progress },
            initiated_by: task.initiated_by.clone(),
            started: task.started,
            completed: ended.map(|e| e.at),
            complete_reason: ended.map(|e| e.reason.clone()).unwrap_or_default(),
            is_cancellable: false,
            link: self.link(&format!("tasks/{}", task.id), &task.id, "TaskApi"),
            related_entities: RelatedEntitiesView {
                vpgs: task.vpg.map(|v| self.vpg_link(v)).into_iter().collect(),
                sites: vec![self.site_link(task.site)],
                hosts: task
                    .vra
                    .map(|h| self.host_link(task.site, h))
                    .into_iter()
                    .collect(),
                flr_sessions: task
                    .operation
                    .flr_session()
                    .map(|session| self.flr_link(session))
                    .into_iter()
                    .collect(),
            },
            // One generation per change the task went through: started, then ended.
            generation: if ended.is_some() { 2 } else { 1 },
        }
    }
}

fn vcenter_ip(site: &Site) -> String {
    site.ip
        .rsplit_once('.')
        .map_or_else(|| site.ip.clone(), |(net, _)| format!("{net}.5"))
}

/// A task as `GET /_sim/tasks` shows it.
pub fn sim_task(world: &World, task: &Task, now: SimTime) -> SimTaskView {
    let (state, progress) = task.status_at(now);
    let vpg = task.vpg.map(|v| &world.vpgs[v]);
    SimTaskView {
        site: world.site(task.site).name.clone(),
        task_identifier: task.id.clone(),
        kind: task.kind(),
        vpg_identifier: vpg.map(|v| v.id.clone()).unwrap_or_default(),
        vpg_name: vpg.map(|v| v.name.clone()).unwrap_or_default(),
        checkpoint_name: task.checkpoint_name().to_owned(),
        state,
        progress,
        complete_reason: task
            .ended
            .as_ref()
            .map(|e| e.reason.clone())
            .unwrap_or_default(),
        started: task.started,
        completed: task.ended.as_ref().map(|e| e.at),
        details: task_details(world, &task.operation),
    }
}

fn task_details(world: &World, operation: &Operation) -> serde_json::Value {
    use serde_json::json;
    let vms: Vec<&str> = operation
        .vms()
        .iter()
        .map(|&vm| world.vms[vm].id.as_str())
        .collect();
    match operation {
        Operation::InsertTaggedCheckpoint { name } => json!({ "CheckpointName": name }),
        Operation::FlrMount { session }
        | Operation::FlrUnmount { session }
        | Operation::FlrBackupMount { session }
        | Operation::FlrBackupUnmount { session } => {
            json!({ "FlrSessionIdentifier": session })
        }
        Operation::ManualRetention { checkpoint } => {
            json!({ "CheckpointIdentifier": checkpoint.map(|c| c.to_string()) })
        }
        Operation::FailoverTest { checkpoint, .. } | Operation::Clone { checkpoint, .. } => {
            json!({ "CheckpointIdentifier": checkpoint.to_string(), "VmIdentifiers": vms })
        }
        Operation::Failover {
            checkpoint,
            commit_policy,
            ..
        } => json!({
            "CheckpointIdentifier": checkpoint.to_string(),
            "VmIdentifiers": vms,
            "CommitPolicy": commit_policy,
        }),
        Operation::StopFailoverTest { success, summary } => json!({
            "FailoverTestSuccess": success,
            "FailoverTestSummary": summary,
        }),
        Operation::Move { commit_policy } => json!({ "CommitPolicy": commit_policy }),
        Operation::ForceSync { .. }
        | Operation::Pause
        | Operation::Resume
        | Operation::LiveCommit { .. }
        | Operation::LiveRollback { .. } => json!({}),
        Operation::UpdateVpg { change } => json!({ "VpgName": change.name }),
        Operation::CreateVpg { name } => json!({ "VpgName": name }),
        Operation::InstallVras { hosts, settings } => json!({
            "Hosts": hosts.len(), "MemoryInGB": settings.memory_gb, "VraGroup": settings.group,
        }),
        Operation::UninstallVras { hosts } | Operation::UpgradeVras { hosts } => {
            json!({ "Hosts": hosts.len() })
        }
        Operation::EditVra { settings } => json!({
            "MemoryInGB": settings.memory_gb, "NumOfCpus": settings.cpus, "VraGroup": settings.group,
        }),
        Operation::ChangeRecoveryHost { moves } => json!({ "Vms": moves.len() }),
        Operation::RestoreFromRetentionSet { set, .. } => {
            json!({ "RetentionSetIdentifier": set, "VmIdentifiers": vms })
        }
        Operation::DeleteVpg { removal } => json!({
            "KeepRecoveryVolumes": removal.keep_recovery_volumes,
            "Force": removal.force,
        }),
        Operation::JournalVmRestore { checkpoint, .. } => {
            json!({ "CheckpointIdentifier": checkpoint.to_string(), "VmIdentifiers": vms })
        }
        Operation::JournalVmRestoreCommit { .. } | Operation::JournalVmRestoreRollback { .. } => {
            json!({ "VmIdentifiers": vms })
        }
    }
}

/// Pairing status names, for `/pairingstatuses`.
pub fn pairing_statuses() -> Vec<&'static str> {
    PAIRING_STATUS.names.to_vec()
}
