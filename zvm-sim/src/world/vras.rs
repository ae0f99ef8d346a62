//! VRAs installed, edited, upgraded and removed (`/v1/vras` writes), each as a task, as an
//! administrator prepares hosts for replication; and the recovery host of VMs changed
//! (`changerecoveryvra`), as one is moved off a host before maintenance.
//!
//! Every host of the world file has a VRA at the start. A VRA is Installing or Removing while its
//! task runs, and is listed only while installed; one that protects or recovers a VM is not
//! removed (Zerto refuses it too: its VPGs would stop replicating). The recovery host of a VM is
//! its host's position at the recovery site unless a change of recovery host moved it.

use super::auth::Principal;
use super::clock::SimTime;
use super::ids::SiteRole;
use super::model::World;
use super::payloads::VraSettings;
use super::refusal::Refusal;
use super::tasks::{Operation, Planned, TaskKey};
use crate::enums::task_state;

/// `VraStatusApi`: Installed (0), NotInstalled (2), Installing (3), Removing (4).
pub mod vra_status {
    /// 0
    pub const INSTALLED: u8 = 0;
    /// 2
    pub const NOT_INSTALLED: u8 = 2;
    /// 3
    pub const INSTALLING: u8 = 3;
    /// 4
    pub const REMOVING: u8 = 4;
}

/// A task on installed VRAs that needs nothing but the VRAs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VraWork {
    /// Removes them, refused while one of them protects or recovers a VM.
    Uninstall,
    /// Every VRA already runs the ZVM's version, so the task completes having nothing to change.
    Upgrade,
}

impl World {
    /// The `VraStatusApi` of the VRA on host `host` of `site`.
    pub fn vra_status(&self, site: SiteRole, host: usize) -> u8 {
        let vra = &self.site(site).hosts[host].vra;
        let running = vra.busy.map(|key| &self.tasks[key].operation);
        match (vra.installed, running) {
            (false, Some(Operation::InstallVras { .. })) => vra_status::INSTALLING,
            (true, Some(Operation::UninstallVras { .. })) => vra_status::REMOVING,
            (true, _) => vra_status::INSTALLED,
            (false, _) => vra_status::NOT_INSTALLED,
        }
    }

    /// Starts `operation` on the VRAs of `hosts` at `site`, one task for them all: refused when a
    /// task already runs on one.
    fn start_vra_task(
        &mut self,
        site: SiteRole,
        hosts: &[usize],
        operation: Operation,
        by: &Principal,
        now: SimTime,
    ) -> Result<String, Refusal> {
        let s = site.index();
        if let Some(&busy) = hosts
            .iter()
            .find(|&&h| self.sites[s].hosts[h].vra.busy.is_some())
        {
            return Err(Refusal::Conflict(format!(
                "The VRA of host {} is busy with another task: wait for it to end.",
                self.sites[s].hosts[busy].name
            )));
        }
        let on = (None, (hosts.len() == 1).then(|| hosts[0]));
        let key = self.add_task(site, on, operation, Planned::Complete, by, now);
        for &h in hosts {
            self.sites[s].hosts[h].vra.busy = Some(key);
        }
        Ok(self.tasks[key].id.clone())
    }

    /// `POST /v1/vras` (one host) and `POST /v1/vras/clusters` (every host of the cluster without
    /// one): installs VRAs with `settings`.
    pub fn install_vras(
        &mut self,
        site: SiteRole,
        hosts: Vec<usize>,
        settings: VraSettings,
        by: &Principal,
        now: SimTime,
    ) -> Result<String, Refusal> {
        let missing = self.with_vra(site, &hosts, false, |names| {
            Refusal::Conflict(format!(
                "Every host named already has a VRA ({names}): remove one first to install it again."
            ))
        })?;
        let operation = Operation::InstallVras {
            hosts: missing.clone(),
            settings,
        };
        self.start_vra_task(site, &missing, operation, by, now)
    }

    /// `DELETE /v1/vras/{id}`, `/v1/vras/clusters/{id}`, `/v1/vras/cleanup` and
    /// `POST /v1/vras/{id}/upgrade`, `PUT /v1/vras/clusters/{id}`: the `work` task on the installed
    /// VRAs of `hosts` (see [`VraWork`]).
    pub fn work_on_vras(
        &mut self,
        site: SiteRole,
        hosts: Vec<usize>,
        work: VraWork,
        by: &Principal,
        now: SimTime,
    ) -> Result<String, Refusal> {
        let installed = self.with_vra(site, &hosts, true, |names| match work {
            VraWork::Uninstall => Refusal::NotFound(format!("No VRA is installed on {names}.")),
            VraWork::Upgrade => {
                Refusal::NotFound("No VRA is installed there to upgrade.".to_owned())
            }
        })?;
        let hosts = installed.clone();
        let operation = match work {
            VraWork::Uninstall => {
                self.refuse_while_replicating(site, &installed)?;
                Operation::UninstallVras { hosts }
            }
            VraWork::Upgrade => Operation::UpgradeVras { hosts },
        };
        self.start_vra_task(site, &installed, operation, by, now)
    }

    /// Refuses to remove a VRA that protects or recovers a VM (its VPGs would stop replicating).
    fn refuse_while_replicating(&self, site: SiteRole, hosts: &[usize]) -> Result<(), Refusal> {
        let loads = self.vra_loads(site);
        match hosts
            .iter()
            .find(|&&h| loads[h].protected.vms + loads[h].recovery.vms > 0)
        {
            Some(&h) => Err(Refusal::Conflict(format!(
                "The VRA of host {} protects {} and recovers {} VM(s): move them first (changerecoveryvra, or remove them from their VPGs).",
                self.site(site).hosts[h].name,
                loads[h].protected.vms,
                loads[h].recovery.vms
            ))),
            None => Ok(()),
        }
    }

    /// `PUT /v1/vras/{id}`: new settings for one installed VRA.
    pub fn edit_vra(
        &mut self,
        site: SiteRole,
        host: usize,
        settings: VraSettings,
        by: &Principal,
        now: SimTime,
    ) -> Result<String, Refusal> {
        self.installed_vra(site, host)?;
        let operation = Operation::EditVra { settings };
        self.start_vra_task(site, &[host], operation, by, now)
    }

    /// Refuses a host without an installed VRA.
    pub fn installed_vra(&self, site: SiteRole, host: usize) -> Result<(), Refusal> {
        match self.site(site).hosts[host].vra.installed {
            true => Ok(()),
            false => Err(Refusal::NotFound(format!(
                "No VRA is installed on host {}: install one with POST /v1/vras.",
                self.site(site).hosts[host].name
            ))),
        }
    }

    /// Those of `hosts` at `site` whose VRA is installed (`installed`), or is not; when there are
    /// none, the refusal `none` makes of the hosts' names.
    fn with_vra(
        &self,
        site: SiteRole,
        hosts: &[usize],
        installed: bool,
        none: impl FnOnce(String) -> Refusal,
    ) -> Result<Vec<usize>, Refusal> {
        let at = &self.site(site).hosts;
        let found: Vec<usize> = hosts
            .iter()
            .copied()
            .filter(|&h| at[h].vra.installed == installed)
            .collect();
        if found.is_empty() {
            return Err(none(self.host_names(site, hosts)));
        }
        Ok(found)
    }

    fn host_names(&self, site: SiteRole, hosts: &[usize]) -> String {
        let names: Vec<&str> = hosts
            .iter()
            .map(|&h| self.site(site).hosts[h].name.as_str())
            .collect();
        names.join(", ")
    }

    /// The end of a VRA task: what it did takes effect, and its VRAs are free again.
    pub(crate) fn finish_vra_task(&mut self, key: TaskKey) -> (u8, String) {
        let site = self.tasks[key].site.index();
        let operation = self.tasks[key].operation.clone();
        let hosts = &mut self.sites[site].hosts;
        for host in hosts.iter_mut().filter(|h| h.vra.busy == Some(key)) {
            host.vra.busy = None;
            match &operation {
                Operation::InstallVras { settings, .. } => {
                    (host.vra.installed, host.vra.settings) = (true, settings.clone());
                }
                Operation::UninstallVras { .. } => host.vra.installed = false,
                Operation::EditVra { settings } => host.vra.settings = settings.clone(),
                _ => {}
            }
        }
        if let Operation::ChangeRecoveryHost { moves } = &operation {
            for &(vm, host) in moves {
                self.vms[vm].recovery_host = Some(host);
            }
        }
        (task_state::COMPLETED, String::new())
    }

    /// The VMs the VRA of `host` at `site` recovers: those of VPGs recovering at `site` whose
    /// recovery host it is.
    pub fn recovered_on(&self, site: SiteRole, host: usize) -> Vec<usize> {
        let mut vms: Vec<usize> = self
            .vpgs
            .iter()
            .filter(|v| !v.deleted && v.recovery == site && v.protected != site)
            .flat_map(|v| v.vms.iter().copied())
            .filter(|&vm| self.host_at(vm, site) == host)
            .collect();
        vms.sort_unstable();
        vms.dedup();
        vms
    }

    /// Why VM `vm` cannot recover on host `to` instead of host `from` at `site`, if it cannot.
    pub fn recovery_move_refused(
        &self,
        site: SiteRole,
        from: usize,
        vm: usize,
        to: usize,
    ) -> Option<String> {
        let host = &self.site(site).hosts[to];
        if !self.recovered_on(site, from).contains(&vm) {
            Some(format!(
                "the VM does not recover on host {}",
                self.site(site).hosts[from].name
            ))
        } else if to == from {
            Some("it is the host the VM recovers on already".to_owned())
        } else if !host.vra.installed || host.vra.busy.is_some() {
            Some(format!("host {} has no VRA ready to recover it", host.name))
        } else {
            None
        }
    }

    /// `POST /v1/vras/{id}/changerecoveryvra/execute`: the VMs of `moves` recover on their new
    /// hosts once the `ChangeRecoveryHost` task ends; refused whole when one cannot.
    pub fn change_recovery_host(
        &mut self,
        site: SiteRole,
        from: usize,
        moves: Vec<(usize, usize)>,
        by: &Principal,
        now: SimTime,
    ) -> Result<String, Refusal> {
        if moves.is_empty() {
            return Err(Refusal::BadRequest(
                "vmsAllocations is empty: give each VM and the host to recover it on.".to_owned(),
            ));
        }
        for &(vm, to) in &moves {
            if let Some(why) = self.recovery_move_refused(site, from, vm, to) {
                return Err(Refusal::BadRequest(format!(
                    "VM {} cannot move: {why}.",
                    self.vms[vm].id
                )));
            }
        }
        let operation = Operation::ChangeRecoveryHost { moves };
        self.start_vra_task(site, &[from], operation, by, now)
    }
}
