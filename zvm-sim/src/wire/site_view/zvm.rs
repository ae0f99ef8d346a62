//! [`SiteView`], the world seen from one site at one moment, with the links every view carries,
//! and the ZVM's views it fills: sites, VMs, VPGs, tasks and FLR sessions. The other files of
//! `site_view` add the projections of their areas to it.

use crate::decisions::{
    PEER_PORT, SITE_TYPE, SITE_TYPE_VERSION, ZVM_API_VERSION, ZVM_DISPLAY_VERSION, ZVM_VERSION,
};
use crate::enums::{PAIRING_STATUS, VPG_STATUS, VPG_SUBSTATUS, status as vpg_status};
use crate::wire::zvm::*;
use crate::world::clock::SimTime;
use crate::world::flr_session::FlrSession;
use crate::world::spec::GuestOs;
use crate::world::tasks::Task;
use crate::world::{Site, SiteRole, Vm, World};

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
    pub(super) fn link(&self, path: &str, identifier: &str, kind: &'static str) -> Link {
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

    pub(super) fn flr_link(&self, session: &str) -> Link {
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

    pub(super) fn vpg_link(&self, vpg: usize) -> Link {
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

    /// Where a VM runs: its host and datastore at its own site, its guest OS and network.
    fn placement(&self, vm_index: usize) -> VmPlacementView {
        let vm = &self.world.vms[vm_index];
        let site = self.world.site(vm.site);
        let host = &site.hosts[vm.host % site.hosts.len()];
        let datastore = &site.datastores[self.world.datastore_of(vm_index, vm.site)];
        VmPlacementView {
            owning_host_identifier: host.id.clone(),
            owning_host_name: host.name.clone(),
            owning_datastore_identifier: datastore.id.clone(),
            owning_datastore_name: datastore.name.clone(),
            guest_os: guest_os_name(vm.os),
            vm_network_information: self.network(vm),
        }
    }

    /// A VM no VPG protects, as `GET /v1/virtualizationsites/{id}/vms` lists it.
    pub fn native_vm(&self, vm_index: usize) -> NativeVmView {
        let vm = &self.world.vms[vm_index];
        NativeVmView {
            vm_identifier: vm.id.clone(),
            vm_name: vm.name.clone(),
            vm_instance_identifier: None,
            placement: self.placement(vm_index),
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
        let recovery = self.world.site(vpg.recovery);
        let recovery_host = &recovery.hosts[vm.host % recovery.hosts.len()];
        let identifier = format!("{}?VpgIdentifier={}", vm.id, vpg.id);
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
            placement: self.placement(vm_index),
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

/// Pairing status names, for `/pairingstatuses`.
pub fn pairing_statuses() -> Vec<&'static str> {
    PAIRING_STATUS.names.to_vec()
}
