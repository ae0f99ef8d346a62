//! What a ZVM shows of what happened: alerts (`AlertApi`), events (`EventApi`) and recovery reports
//! (`RecoveryReportApi`), shaped as SW10 declares them, with the `EventIdentifier` that real
//! appliances add. Alert levels, entities and help identifiers are strings; event types and
//! entity types are numbers; a report's times are strings, as SW10 has them.

use serde::Serialize;

use super::site_view::SiteView;
use super::zvm::Link;
use crate::enums::event_type;
use crate::world::SiteRole;
use crate::world::traces::{Alert, RecoveryReport, Trace, Trigger};

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
