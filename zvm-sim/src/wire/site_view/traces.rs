//! The alerts, events, recovery reports and resource reports one site shows, filled from what the
//! world keeps of what happened.

use super::zvm::SiteView;
use crate::enums::event_type;
use crate::wire::traces::{
    AlertView, EventEntitiesView, EventView, RecoveryReportView, ReportGeneralView,
    ReportSettingsView, ReportStepView, ReportVmView, ReportVolumeView, ReportVpgView,
    ResourceComputeView, ResourceCpuView, ResourceMemoryView, ResourcePerformanceView,
    ResourceProtectedSiteView, ResourceRecoveryComputeView, ResourceRecoverySiteView,
    ResourceRecoveryStorageView, ResourceReportView, ResourceStorageView, ResourceVmInfoView,
    ResourceVpgView,
};
use crate::wire::zvm::Link;
use crate::world::SiteRole;
use crate::world::traces::{Alert, RecoveryReport, Trace, Trigger};

/// A report's `Status`: how the operation ended.
pub fn report_status(succeeded: bool) -> &'static str {
    if succeeded { "Success" } else { "Fail" }
}

impl SiteView<'_> {
    /// Whether the answering site sees the VPG, and so its alerts, events and reports.
    pub fn sees_vpg(&self, vpg: usize) -> bool {
        self.world.vpgs[vpg].visible_from(self.site)
    }

    fn alert_link(&self, id: &str) -> Link {
        self.link(&format!("alerts/{id}"), id, "AlertApi")
    }

    /// One alert.
    pub fn alert(&self, alert: &Alert) -> AlertView {
        let vpg = &self.world.vpgs[alert.vpg];
        // A VRA alert is the recovery site's, whose VRAs keep the journal; a VPG alert the
        // protected site's.
        let site = match alert.rule.trigger {
            Trigger::JournalFull => vpg.recovery,
            _ => vpg.protected,
        };
        AlertView {
            link: self.alert_link(&alert.id),
            level: alert.rule.level,
            entity: alert.rule.entity,
            is_dismissed: self.world.traces.dismissed.contains(&alert.id),
            help_identifier: alert.rule.help,
            site: self.site_link(site),
            description: self.world.alert_description(alert),
            turned_on: alert.on.to_wire(),
            affected_vpgs: vec![self.vpg_link(alert.vpg)],
            affected_zorgs: Vec::new(),
            generation: 1,
        }
    }

    /// One event.
    pub fn event(&self, event: &Trace) -> EventView {
        let vpg = &self.world.vpgs[event.vpg];
        let is_alert = matches!(
            event.kind,
            event_type::ALERT_TURNED_ON | event_type::ALERT_TURNED_OFF
        );
        EventView {
            event_identifier: event.id.clone(),
            link: self.link(&format!("events/{}", event.id), &event.id, "EventApi"),
            description: event.description.clone(),
            occurred_on: event.at.to_wire(),
            event_type: event.kind,
            help_link: String::new(),
            event_completed_successfully: event.succeeded,
            entity_type: 0,
            event_category: if is_alert { "Alerts" } else { "Events" },
            user_name: event.user.clone(),
            related_entities: EventEntitiesView {
                vpgs: vec![self.vpg_link(event.vpg)],
                sites: self.vpg_sites(vpg.protected, vpg.recovery),
                hosts: Vec::new(),
                zorgs: Vec::new(),
                alerts: event.alert.iter().map(|a| self.alert_link(a)).collect(),
                flr_sessions: event.flr.iter().map(|f| self.flr_link(f)).collect(),
                repositories: Vec::new(),
            },
        }
    }

    fn vpg_sites(&self, protected: SiteRole, recovery: SiteRole) -> Vec<Link> {
        let mut sites = vec![self.site_link(protected)];
        if recovery != protected {
            sites.push(self.site_link(recovery));
        }
        sites
    }

    /// One recovery report.
    pub fn recovery_report(&self, report: &RecoveryReport) -> RecoveryReportView {
        let vpg = &self.world.vpgs[report.vpg];
        let recovery = self.world.site(vpg.recovery);
        let rto = report.ended.millis_since(report.started).max(0) / 1000;
        let vms = report
            .vms
            .iter()
            .map(|&vm| {
                let host = self.world.host_at(vm, vpg.recovery);
                let name = &self.world.vms[vm].name;
                let datastore =
                    &recovery.datastores[self.world.datastore_of(vm, vpg.recovery)].name;
                ReportVmView {
                    vm_name: name.clone(),
                    host_name: recovery.hosts[host].name.clone(),
                    datastore_name: datastore.clone(),
                    folder_name: "/".to_owned(),
                    network_names: vec![recovery.network.1.clone()],
                    volumes: crate::decisions::VM_VOLUMES
                        .iter()
                        .enumerate()
                        .map(|(disk, _)| ReportVolumeView {
                            volume_name: format!("{name}_{disk}.vmdk"),
                            datastore_name: datastore.clone(),
                        })
                        .collect(),
                }
            })
            .collect();
        RecoveryReportView {
            recovery_operation_identifier: report.id.clone(),
            general: ReportGeneralView {
                vpg_identifier: vpg.id.clone(),
                vpg_name: vpg.name.clone(),
                recovery_type: report.kind.clone(),
                protected_site_name: self.world.site(vpg.protected).name.clone(),
                recovery_site_name: recovery.name.clone(),
                start_time: report.started.to_wire(),
                end_time: report.ended.to_wire(),
                point_in_time: report.point_in_time.map(|t| t.to_wire()),
                rto_in_seconds: rto.to_string(),
                status: report_status(report.succeeded),
                initiated_by: report.initiated_by.clone(),
                notes: report.notes.clone(),
            },
            recovery_settings: ReportSettingsView {
                vpg: ReportVpgView {
                    default_host_name: recovery.hosts[0].name.clone(),
                    default_datastore_name: recovery.datastores[0].name.clone(),
                    default_network_name: recovery.network.1.clone(),
                },
                vms,
                steps: vec![ReportStepView {
                    description: format!("{} of VPG {}", report.kind, vpg.name),
                    result: report_status(report.succeeded),
                    start_time: report.started.to_wire(),
                    end_time: report.ended.to_wire(),
                    execution_time: format!("{rto}"),
                }],
            },
        }
    }
}

const GIB_PER_MIB: f64 = 1.0 / 1024.0;

/// Where a VM runs at `site`: on `host`, in the site's one cluster and resource pool, replicated by
/// the host's VRA.
fn compute(site: &crate::world::Site, host: String) -> ResourceComputeView {
    ResourceComputeView {
        cluster_name: format!("{}-Cluster", site.name),
        vra_name: format!("Z-VRA-{host}"),
        host_name: host,
        org_vdc_name: "",
        resource_pool_name: "Resources",
    }
}

impl SiteView<'_> {
    /// The resources of a VM in a VPG at `sample`, from the figures `/v1/vms` shows.
    pub fn resource_report(
        &self,
        vm: usize,
        vpg: usize,
        sample: crate::world::clock::SimTime,
    ) -> ResourceReportView {
        let v = &self.world.vpgs[vpg];
        let machine = &self.world.vms[vm];
        let (protected, recovery) = (self.world.site(v.protected), self.world.site(v.recovery));
        let host =
            |site: &crate::world::Site, role| site.hosts[self.world.host_at(vm, role)].name.clone();
        let (protected_host, recovery_host) =
            (host(protected, v.protected), host(recovery, v.recovery));
        let (_, throughput_mb) = self.world.vm_load(vm, vpg);
        let journal_mb = self.world.journal_used_mb(vm, vpg, sample) as f64;
        ResourceReportView {
            sample_time: sample.to_wire(),
            performance: ResourcePerformanceView {
                bandwidth_in_bps: throughput_mb * 8.0 * 1_000_000.0,
                throughput_in_bps: throughput_mb * 1024.0 * 1024.0,
            },
            vpg: ResourceVpgView {
                crm_identifier: v.id.clone(),
                service_profile_name: "",
                vpg_name: v.name.clone(),
                protected_and_recovery_type: "VCVpg",
                zorg_name: "",
            },
            protected_site: ResourceProtectedSiteView {
                site_name: protected.name.clone(),
                vcd_org_name: "",
                compute: compute(protected, protected_host),
                storage: ResourceStorageView {
                    number_of_volumes: crate::decisions::VM_VOLUMES.len(),
                    volumes_provisioned_gb: machine.provisioned_mb as f64 * GIB_PER_MIB,
                    volumes_used_gb: machine.used_mb as f64 * GIB_PER_MIB,
                },
                vm_info: ResourceVmInfoView {
                    hardware_version: "vmx-19",
                    vm_identifier: machine.id.clone(),
                    vm_name: machine.name.clone(),
                    cpu: ResourceCpuView {
                        limitation_mhz: -1,
                        reserved_mhz: 0,
                        vcpus: machine.cpus,
                        used_mhz: machine.cpus * 100,
                    },
                    memory: ResourceMemoryView {
                        active_guest_mb: u64::from(machine.memory_mb) / 4,
                        consumed_host_mb: u64::from(machine.memory_mb) / 2,
                        memory_mb: machine.memory_mb,
                        limitation_mb: -1,
                        reserved_mb: 0,
                    },
                },
            },
            recovery_site: ResourceRecoverySiteView {
                site_name: recovery.name.clone(),
                vcd_org_name: "",
                compute: ResourceRecoveryComputeView {
                    failover_or_move_instance_type: "",
                    failover_or_move_instance_family: "",
                    failover_test_instance_type: "",
                    failover_test_instance_family: "",
                    placement: compute(recovery, recovery_host),
                },
                storage: ResourceRecoveryStorageView {
                    journal_provisioned_gb: journal_mb * GIB_PER_MIB,
                    journal_used_gb: journal_mb * GIB_PER_MIB,
                    datastore_name: recovery.datastores[self.world.datastore_of(vm, v.recovery)]
                        .name
                        .clone(),
                    storage_policy_name: "",
                    volumes_provisioned_gb: machine.provisioned_mb as f64 * GIB_PER_MIB,
                    volumes_used_gb: machine.used_mb as f64 * GIB_PER_MIB,
                },
            },
        }
    }
}
