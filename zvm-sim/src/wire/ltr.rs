//! Extended Journal Copy (`/v1/ltr/...`) as SW10 shapes it: repositories
//! (`RepositoriesSettingsApi`), the catalogue of retention sets (`RetentionSetsInfoApi`,
//! `RetentionSetsApi`, `RecoverableVmsApi`) and the health of each VPG's copies
//! (`VpgsLtrHealthApi`). Lists come wrapped in an object (`{"RetentionSets": [...]}`,
//! `{"Vpgs": [...]}`, `{"Vms": [...]}`), as SW10 declares them.

use serde::Serialize;

use super::site_view::SiteView;
use super::zvm::RetentionSetView;
use crate::decisions::{self, VM_VOLUMES};
use crate::world::clock::SimTime;
use crate::world::ltr::{Repository, RetentionSet};

/// `NamedEntityApi`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct NamedEntityView {
    pub name: Option<String>,
    pub identifier: Option<String>,
}

impl NamedEntityView {
    fn of(name: &str, identifier: &str) -> Self {
        NamedEntityView {
            name: Some(name.to_owned()),
            identifier: Some(identifier.to_owned()),
        }
    }

    /// No entity: a site without Zerto Cloud Manager has no ZORG.
    fn none() -> Self {
        NamedEntityView {
            name: None,
            identifier: None,
        }
    }
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

/// The path of a repository: an NFS share at its site.
fn repository_path(site_name: &str, repository: &Repository) -> String {
    format!(
        "nfs://backup.{}.example.internal/zerto/{}",
        site_name.to_lowercase(),
        repository.name
    )
}

const KB_PER_GB: u64 = 1024 * 1024;

impl SiteView<'_> {
    /// One repository of this site, with the space its kept sets use.
    pub fn repository(&self, index: usize) -> RepositoryView {
        let world = self.world;
        let repository = &world.ltr.repositories[index];
        let used_kb: u64 = world
            .ltr
            .sets
            .iter()
            .filter(|set| set.repository == index && set.kept_at(self.now))
            .map(|set| set.size_kb)
            .sum();
        let used = used_kb.div_ceil(KB_PER_GB);
        let total = repository.capacity_gb;
        let free = total.saturating_sub(used);
        let first_of_site = world
            .ltr
            .repositories
            .iter()
            .position(|r| r.site == repository.site);
        RepositoryView {
            repository_identifier: repository.id.clone(),
            repository_name: repository.name.clone(),
            storage_type: decisions::REPOSITORY_STORAGE_TYPE,
            connection_type: decisions::REPOSITORY_CONNECTION_TYPE,
            default_repository: first_of_site == Some(index),
            is_index_repository: false,
            total_capacity_gb: total,
            used_capacity_gb: used,
            free_capacity_gb: free,
            repository_state: RepositoryStateView {
                allocated_space_in_gb: total,
                available_space_in_gb: free,
                used_space_in_gb: used,
            },
            smb: None,
            s3: None,
            nfs: NfsView {
                path: repository_path(&world.site(repository.site).name, repository),
            },
            catalyst: None,
            azure: None,
            s3_compatible: None,
        }
    }

    /// One repository as `/v1/virtualizationsites/{id}/repositories` lists it.
    pub fn site_repository(&self, index: usize) -> SiteRepositoryView {
        let repository = &self.world.ltr.repositories[index];
        SiteRepositoryView {
            repository_identifier: repository.id.clone(),
            repository_name: repository.name.clone(),
            path: repository_path(&self.world.site(repository.site).name, repository),
            connection_type: decisions::REPOSITORY_CONNECTION_NAME,
            storage_type: decisions::REPOSITORY_CONNECTION_NAME,
        }
    }

    /// A retention set as the catalogue of full sets lists it.
    pub fn retention_set_info(&self, set: &RetentionSet) -> RetentionSetInfoView {
        let vpg = &self.world.vpgs[set.vpg];
        let repository = &self.world.ltr.repositories[set.repository];
        RetentionSetInfoView {
            retention_set_identifier: set.id.clone(),
            backup_method: decisions::RETENTION_SET_METHOD,
            vpg: NamedEntityView::of(&vpg.name, &vpg.id),
            repository: NamedEntityView::of(&repository.name, &repository.id),
            zorg: NamedEntityView::none(),
            point_in_time: set.checkpoint.at,
            expiry_date: set.expires,
            action_type: decisions::RETENTION_SET_ACTION,
            status_type: decisions::RETENTION_SET_STATUS,
            is_app_aware: false,
            size_in_kb: set.size_kb,
            aggregated_size_in_kb: set.size_kb,
            number_of_incrementals: 0,
            is_vpg_exists: true,
            retention_set_immutability: ImmutabilityView {
                immutability_state: decisions::RETENTION_SET_IMMUTABILITY,
                immutability_expiry_time: None,
            },
            retention_set_actions_information: RetentionSetActionsView {
                delete_action: ButtonView {
                    is_enabled: true,
                    disable_reason_text: None,
                },
            },
        }
    }

    /// A retention set as a VM's list (and a point in time) shows it.
    pub fn retention_set_of_vm(&self, set: &RetentionSet) -> RetentionSetView {
        let repository = &self.world.ltr.repositories[set.repository];
        RetentionSetView {
            repository_identifier: repository.id.clone(),
            retention_set_identifier: set.id.clone(),
            time_stamp: set.checkpoint.at,
            is_application_aware: false,
            zorg_identifier: None,
            number_of_volumes: VM_VOLUMES.len(),
            repository_site_identifier: self.world.site(repository.site).id.clone(),
            tier: 0,
        }
    }

    /// The Extended Journal Copy health of a VPG.
    pub fn ltr_health(&self, index: usize) -> VpgLtrHealthView {
        let world = self.world;
        let vpg = &world.vpgs[index];
        let ltr = &vpg.ltr;
        let repository = ltr.repository.map(|r| &world.ltr.repositories[r]);
        let alerts: Vec<AlertTipView> = world
            .alerts_on(self.now)
            .into_iter()
            .filter(|alert| alert.vpg == index)
            .map(|alert| AlertTipView {
                description: world.alert_description(&alert),
                site_name: world.site(vpg.protected).name.clone(),
                alert_level: u8::from(alert.rule.level == "Error"),
                start_time: alert.on,
                id: alert.id.clone(),
            })
            .collect();
        let errors = alerts.iter().filter(|a| a.alert_level == 1).count();
        let has_repository = repository.is_some();
        let running = ltr.running.is_some();
        VpgLtrHealthView {
            ltr_vpg_status: u8::from(ltr.last_failed),
            retention_policy_latest_changed: None,
            success_rate: SuccessRateView {
                expected_retention_sets: ltr.runs,
                actual_successful_retention_sets: ltr.successes,
            },
            date_of_last_run: ltr.last_run,
            time_of_last_successful_run: ltr.last_success,
            success_rate_potential_impact: SuccessRateImpactView {
                is_success_rate_influenced_by_manual_deletion: false,
            },
            vpg_name: vpg.name.clone(),
            vpg_id: vpg.id.clone(),
            vms_in_vpg: vpg.vms.len(),
            policy: None,
            scheduling_and_retention_settings: None,
            recovery_site_name: world.site(vpg.recovery).name.clone(),
            repository_name: repository.map(|r| r.name.clone()),
            repository_id: repository.map(|r| r.id.clone()),
            zorg_name: None,
            alert_status: u8::from(!alerts.is_empty()),
            alert_tips: AlertTipsView {
                total_number_of_alerts: alerts.len(),
                total_number_of_warnings: alerts.len() - errors,
                total_number_of_errors: errors,
                has_more: false,
                alerts,
            },
            is_abort_backup_enabled: running,
            is_backup_enabled: has_repository && !running && world.writes_checkpoints(index),
            is_update_enabled: true,
            is_failover_enabled: has_repository,
            is_failover_test_enabled: has_repository,
            is_move_enabled: has_repository,
            compression_settings: CompressionView {
                compression_level: 0,
            },
            manage_retention_sets_availability: ButtonView {
                is_enabled: has_repository,
                disable_reason_text: (!has_repository)
                    .then(|| decisions::reason_no_repository(&vpg.name)),
            },
        }
    }
}
