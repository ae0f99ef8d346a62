//! The Extended Journal Copy views of one site filled from the world: its repositories with the
//! space their sets use, the catalogue of retention sets it sees, and each VPG's copy health.

use super::zvm::SiteView;
use crate::decisions::{self, VM_VOLUMES};
use crate::wire::ltr::{
    AlertTipView, AlertTipsView, ButtonView, CompressionView, ImmutabilityView, NamedEntityView,
    NfsView, RepositoryStateView, RepositoryView, RetentionSetActionsView, RetentionSetInfoView,
    SiteRepositoryView, SuccessRateImpactView, SuccessRateView, VpgLtrHealthView,
};
use crate::wire::zvm::RetentionSetView;
use crate::world::ltr::{Repository, RetentionSet};

impl NamedEntityView {
    /// An entity by its name and identifier.
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
