//! Extended Journal Copy administered through the API: repositories made, edited and deleted
//! (`/v1/ltr/repositories`), retention sets deleted before they expire
//! (`/v1/ltr/catalog/deleteretentionsets`), and a VM restored from a retention set
//! (`/v1/ltr/restore/vm`) as a new VM at the repository's site.
//!
//! A repository keeps its position once deleted (retention sets and VPGs hold it) and is no longer
//! listed; one a VPG uses or a kept set is in is not deleted. A deleted set is gone at once, as an
//! expired one is.

use super::auth::Principal;
use super::clock::SimTime;
use super::ids::{SiteRole, guid};
use super::ltr::{Ltr, Repository};
use super::model::World;
use super::refusal::Refusal;
use super::tasks::{Operation, Planned, TaskKey};
use crate::decisions;
use crate::enums::task_state;

/// A repository as a client writes it (`RepositoriesSettingsApi`, the parts modelled).
#[derive(Debug, Clone, Default)]
pub struct RepositoryWrite {
    /// `RepositoryName`.
    pub name: Option<String>,
    /// `TotalCapacityGB`.
    pub capacity_gb: Option<u64>,
}

impl Ltr {
    /// Whether repository `r` is listed at `site`.
    pub fn repository_at(&self, r: usize, site: SiteRole) -> bool {
        let repository = &self.repositories[r];
        !repository.deleted && repository.site == site
    }
}

impl World {
    /// The repository `id` listed at `site`.
    fn listed_repository(&self, site: SiteRole, id: &str) -> Result<usize, Refusal> {
        (0..self.ltr.repositories.len())
            .find(|&r| {
                self.ltr.repository_at(r, site) && self.ltr.repositories[r].id.eq_ignore_ascii_case(id)
            })
            .ok_or_else(|| {
                Refusal::NotFound(format!(
                    "There is no repository '{id}' at this site: list them with GET /v1/ltr/repositories."
                ))
            })
    }

    /// Refuses a name another repository of `site` has (but `this`).
    fn unique_name(&self, site: SiteRole, name: &str, this: Option<usize>) -> Result<(), Refusal> {
        let taken = (0..self.ltr.repositories.len()).any(|r| {
            Some(r) != this
                && self.ltr.repository_at(r, site)
                && self.ltr.repositories[r].name.eq_ignore_ascii_case(name)
        });
        match taken {
            true => Err(Refusal::Conflict(format!(
                "A repository named {name} already exists at this site."
            ))),
            false => Ok(()),
        }
    }

    /// `POST /v1/ltr/repositories`: a new repository at `site`; its identifier.
    pub fn create_repository(
        &mut self,
        site: SiteRole,
        write: RepositoryWrite,
    ) -> Result<String, Refusal> {
        let Some(name) = write.name.filter(|n| !n.trim().is_empty()) else {
            return Err(Refusal::BadRequest(
                "repositoryName is required: the repository's name.".to_owned(),
            ));
        };
        self.unique_name(site, &name, None)?;
        let id = guid(&mut self.rng);
        self.ltr.repositories.push(Repository {
            id: id.clone(),
            name: name.trim().to_owned(),
            site,
            keep_days: decisions::DEFAULT_KEEP_FOR_DAYS,
            capacity_gb: write
                .capacity_gb
                .unwrap_or(decisions::DEFAULT_REPOSITORY_CAPACITY_GB),
            deleted: false,
        });
        Ok(id)
    }

    /// `PUT /v1/ltr/repositories/{id}`: a new name or capacity.
    pub fn edit_repository(
        &mut self,
        site: SiteRole,
        id: &str,
        write: RepositoryWrite,
    ) -> Result<(), Refusal> {
        let r = self.listed_repository(site, id)?;
        if let Some(name) = write.name.as_deref().filter(|n| !n.trim().is_empty()) {
            self.unique_name(site, name, Some(r))?;
            self.ltr.repositories[r].name = name.trim().to_owned();
        }
        if let Some(capacity) = write.capacity_gb {
            self.ltr.repositories[r].capacity_gb = capacity;
        }
        Ok(())
    }

    /// `DELETE /v1/ltr/repositories/{id}`: refused while a VPG copies to it or a kept set is in it.
    pub fn delete_repository(
        &mut self,
        site: SiteRole,
        id: &str,
        now: SimTime,
    ) -> Result<(), Refusal> {
        let r = self.listed_repository(site, id)?;
        let users: Vec<&str> = self
            .vpgs
            .iter()
            .filter(|v| !v.deleted && v.ltr.repository == Some(r))
            .map(|v| v.name.as_str())
            .collect();
        let kept = self
            .ltr
            .sets
            .iter()
            .filter(|s| s.repository == r && s.kept_at(now))
            .count();
        if !users.is_empty() || kept > 0 {
            return Err(Refusal::Conflict(format!(
                "Repository {} is in use: {} VPG(s) copy to it ({}) and it keeps {kept} retention set(s); change their Extended Journal Copy settings and delete the sets first.",
                self.ltr.repositories[r].name,
                users.len(),
                users.join(", ")
            )));
        }
        self.ltr.repositories[r].deleted = true;
        Ok(())
    }

    /// `POST /v1/ltr/catalog/deleteretentionsets`: the full sets `ids` (with no incremental: the
    /// simulator writes none) are gone at once; refused whole when one is not a set `site` sees.
    pub fn delete_retention_sets(
        &mut self,
        site: SiteRole,
        ids: &[String],
        incrementals: &[String],
        now: SimTime,
    ) -> Result<(), Refusal> {
        if let Some(id) = incrementals.first() {
            return Err(Refusal::NotFound(format!(
                "There is no incremental retention set '{id}': every set the simulator writes is a full one."
            )));
        }
        let mut found = Vec::with_capacity(ids.len());
        for id in ids {
            let set = self.retention_set(site, id, now).ok_or_else(|| {
                Refusal::NotFound(format!(
                    "There is no retention set '{id}': list them with GET /v1/ltr/catalog/fullretentionsets."
                ))
            })?;
            found.push(set);
        }
        for set in found {
            self.ltr.sets[set].expires = now;
        }
        Ok(())
    }

    /// `POST /v1/ltr/restore/vm`: restores VM `vm` of the retention set `set` as a new VM at the
    /// set's repository's site, in a task of the set's VPG; its identifier.
    pub fn restore_from_retention_set(
        &mut self,
        site: SiteRole,
        vm: usize,
        set_id: &str,
        by: &Principal,
        now: SimTime,
    ) -> Result<String, Refusal> {
        let set = self.retention_set(site, set_id, now).ok_or_else(|| {
            Refusal::NotFound(format!(
                "There is no retention set '{set_id}': list them with GET /v1/ltr/catalog/fullretentionsets."
            ))
        })?;
        let set = &self.ltr.sets[set];
        if !set.vms.contains(&vm) {
            return Err(Refusal::BadRequest(format!(
                "Retention set {set_id} does not hold VM {}: GET /v1/ltr/catalog/vms/{{vm}}/retentionsets lists a VM's sets.",
                self.vms[vm].id
            )));
        }
        let (vpg, set_id) = (set.vpg, set.id.clone());
        let operation = Operation::RestoreFromRetentionSet { set: set_id, vm };
        let key = self.start_task(site, vpg, operation, Planned::Complete, by, now);
        Ok(self.tasks[key].id.clone())
    }

    /// The end of a restore from a retention set: the VM as the set holds it, a new VM at the
    /// repository's site; Failed when the set expired meanwhile.
    pub(crate) fn finish_set_restore(&mut self, key: TaskKey, at: SimTime) -> (u8, String) {
        let Operation::RestoreFromRetentionSet { set, vm } = self.tasks[key].operation.clone()
        else {
            return (task_state::FAILED, String::new());
        };
        let Some(s) = self.ltr.sets.iter().find(|s| s.id == set && s.kept_at(at)) else {
            return (
                task_state::FAILED,
                format!("Retention set {set} expired or was deleted before the restore ended."),
            );
        };
        let (moment, site) = (s.checkpoint.at, self.ltr.repositories[s.repository].site);
        self.copy_vm(vm, site, moment, decisions::RESTORED_SUFFIX, at);
        (task_state::COMPLETED, String::new())
    }
}
