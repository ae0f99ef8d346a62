//! The inventory: sites with their hosts, VMs with their guest files, and VPGs with their journals.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::clock::SimTime;
use super::files::GuestFiles;
use super::ids::SiteRole;
use super::journal::Journal;
use super::ltr::VpgLtr;
use super::payloads::VraSettings;
use super::spec::GuestOs;
use super::tasks::{TaskKey, Tasks};
use super::traces::HistoryWatch;

/// An ESXi host of a site.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Host {
    /// `<serverGuid>.host-<n>`.
    pub id: String,
    /// Its DNS name.
    pub name: String,
    /// Its VRA.
    #[serde(default)]
    pub vra: Vra,
}

/// A datastore of a site.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Datastore {
    /// `<serverGuid>.datastore-<n>`.
    pub id: String,
    /// Its name.
    pub name: String,
}

/// Reads a site's datastores: a list, or the one `[identifier, name]` pair of an older state.
fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Datastore>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Stored {
        Many(Vec<Datastore>),
        One((String, String)),
    }
    Ok(match Stored::deserialize(d)? {
        Stored::Many(all) => all,
        Stored::One((id, name)) => vec![Datastore { id, name }],
    })
}

/// A site and its virtualization inventory.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Site {
    /// Local or peer.
    pub role: SiteRole,
    /// `SiteName`.
    pub name: String,
    /// `Location`.
    pub location: String,
    /// `SiteIdentifier`, a GUID.
    pub id: String,
    /// The vCenter server GUID that prefixes VM, host and datastore identifiers.
    pub server_id: String,
    /// The ZVM's IP address.
    pub ip: String,
    /// Its ESXi hosts.
    pub hosts: Vec<Host>,
    /// Its datastores. A state saved when a site had one names it `Datastore`.
    #[serde(alias = "Datastore", deserialize_with = "one_or_many")]
    pub datastores: Vec<Datastore>,
    /// Its VM network: identifier and name.
    pub network: (String, String),
    /// The banner its ZVM's login page shows (`/v1/localsite/settings/loginBanner`).
    #[serde(default)]
    pub login_banner: LoginBanner,
    /// Whether its encryption detection was turned off (`POST /v1/encryptionDetection/state`).
    #[serde(default)]
    pub encryption_detection_off: bool,
    /// Its license key; `None` once deleted (`/v1/license`).
    #[serde(default = "simulated_license")]
    pub license_key: Option<String>,
    /// The pairing token it generated last, and until when it is good.
    #[serde(default)]
    pub pairing_token: Option<(String, SimTime)>,
    /// Its recovery-scripts folders (`/v1/recoveryScripts/...`).
    #[serde(default)]
    pub scripts: crate::world::scripts::Scripts,
    /// The VPG settings it exported (`/v1/vpgSettings/exportSettings`), oldest first.
    #[serde(default)]
    pub exports: Vec<crate::world::documents::Export>,
    /// Unpaired from its peer (`DELETE /v1/peersites/{id}`); the sites start paired.
    #[serde(default)]
    pub unpaired: bool,
    /// The VRA install settings kept for its cluster (`/v1/vras/clusters/{id}/settings`), in
    /// PascalCase, never a password; `Null` until kept.
    #[serde(default)]
    pub cluster_vra_settings: serde_json::Value,
}

/// The license key every simulated ZVM starts with.
pub const SIMULATED_LICENSE: &str = "SIMULATED-ZVM-LICENSE";

fn simulated_license() -> Option<String> {
    Some(SIMULATED_LICENSE.to_owned())
}

/// A ZVM's login banner: off, with no text, until someone sets it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct LoginBanner {
    /// `IsLoginBannerEnabled`.
    pub enabled: bool,
    /// `LoginBanner`.
    pub text: Option<String>,
}

/// A VM.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Vm {
    /// `<serverGuid>.vm-<n>`.
    pub id: String,
    /// `VmName`; not unique.
    pub name: String,
    /// The site it runs at.
    pub site: SiteRole,
    /// Linux or Windows.
    pub os: GuestOs,
    /// `CpuCoresNum`.
    pub cpus: u32,
    /// `MemorySizeInMB`.
    pub memory_mb: u32,
    /// `ProvisionedStorageInMB`.
    pub provisioned_mb: u64,
    /// `UsedStorageInMB`.
    pub used_mb: u64,
    /// Position of its host in its site's hosts.
    pub host: usize,
    /// The host it recovers on at the other site, once a change of recovery host moved it.
    #[serde(default)]
    pub recovery_host: Option<usize>,
    /// Its IP address.
    pub ip: String,
    /// The VPGs it is in (at most three).
    pub vpgs: Vec<usize>,
    /// Its guest files, with their history.
    pub files: GuestFiles,
    /// Removed (a VM a rolled-back journal VM restore made): no listing or lookup shows it.
    #[serde(default)]
    pub removed: bool,
}

/// A failover test of a VPG, from its start until its stop task ends.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct FailoverTestRun {
    /// The `FailOverTest` task.
    pub start_task: TaskKey,
    /// The `StopFailOverTest` task, once asked for.
    pub stop_task: Option<TaskKey>,
    /// The VMs tested.
    pub vms: Vec<usize>,
}

/// A resync or force sync in progress.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Resync {
    /// When it started.
    pub started: SimTime,
    /// When it ends.
    pub until: SimTime,
}

/// A VPG.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Vpg {
    /// `VpgIdentifier`, a GUID.
    pub id: String,
    /// `VpgName`, unique.
    pub name: String,
    /// Where its VMs run.
    pub protected: SiteRole,
    /// Where its journal is.
    pub recovery: SiteRole,
    /// Its VMs.
    pub vms: Vec<usize>,
    /// `Status`.
    pub status: u8,
    /// `SubStatus`.
    pub sub_status: u8,
    /// The resync or force sync in progress, if any.
    pub resync: Option<Resync>,
    /// The failover test running, if any (`ActiveProcessesApi.RunningFailOverTestApi`).
    pub test: Option<FailoverTestRun>,
    /// `LastTest`: when the last failover test was stopped.
    pub last_test: Option<SimTime>,
    /// Per VM: when the last failover test that included it was stopped.
    pub vm_last_test: BTreeMap<usize, SimTime>,
    /// The `Clone` task running, if any.
    pub clone_task: Option<TaskKey>,
    /// The `FailOver` or `Move` task running, if any.
    pub live_task: Option<TaskKey>,
    /// Bumped by every resync and status pin, so an outdated resync end is ignored.
    pub generation: u64,
    /// Insert tasks at this VPG that have not ended, oldest first, so refusing a second insert
    /// does not scan every task ever run.
    pub running_inserts: Vec<TaskKey>,
    /// `Priority`.
    pub priority: u8,
    /// `ConfiguredRpoSeconds`.
    pub rpo_seconds: u32,
    /// `ActualRPO` while it replicates.
    pub actual_rpo: u32,
    /// Its checkpoints.
    pub journal: Journal,
    /// Its history alerts and up to when they are known.
    #[serde(default)]
    pub watch: HistoryWatch,
    /// Its Extended Journal Copy: repository and runs.
    #[serde(default)]
    pub ltr: VpgLtr,
    /// The journal VM restore of one of its VMs, from its start until committed or rolled back.
    #[serde(default)]
    pub restore: Option<JournalRestore>,
    /// Removed through `DELETE /v1/vpgs/{id}`: it keeps its position (tasks and traces hold it)
    /// but no site lists it.
    #[serde(default)]
    pub deleted: bool,
}

impl Vpg {
    /// Every task the VPG refers to: its running inserts, its failover test's start and stop,
    /// its clone, its live operation, its Extended Journal Copy run, and its journal restore with
    /// its end.
    pub fn tasks(&self) -> impl Iterator<Item = TaskKey> + '_ {
        let test = self
            .test
            .iter()
            .flat_map(|t| std::iter::once(t.start_task).chain(t.stop_task));
        let restore = self
            .restore
            .iter()
            .flat_map(|r| std::iter::once(r.task).chain(r.end_task));
        self.running_inserts
            .iter()
            .copied()
            .chain(test)
            .chain(self.clone_task)
            .chain(self.live_task)
            .chain(self.ltr.running)
            .chain(restore)
    }

    /// Its status and substatus by name, `MeetingSLA / None`, for messages.
    pub fn state(&self) -> String {
        format!(
            "{} / {}",
            crate::enums::VPG_STATUS.name(self.status),
            crate::enums::VPG_SUBSTATUS.name(self.sub_status)
        )
    }

    /// `RunningFailOverTestApi.Stage` of its running failover test: `Starting` while the start
    /// task runs, `InTest` once it completed, `Stopping` while the stop task runs.
    pub fn test_stage(&self, tasks: &Tasks) -> Option<&'static str> {
        let test = self.test.as_ref()?;
        Some(if test.stop_task.is_some() {
            "Stopping"
        } else if tasks[test.start_task].is_running() {
            "Starting"
        } else {
            "InTest"
        })
    }

    /// Visible from the ZVM of its protected site and of its recovery site.
    pub fn visible_from(&self, site: SiteRole) -> bool {
        !self.deleted && (self.protected == site || self.recovery == site)
    }
}

/// The VRA of one host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Vra {
    /// Installed (a host's VRA is, until removed).
    pub installed: bool,
    /// Its settings.
    pub settings: VraSettings,
    /// The install, removal, edit or upgrade running on it.
    pub busy: Option<TaskKey>,
}

impl Default for Vra {
    fn default() -> Self {
        Vra {
            installed: true,
            settings: VraSettings::default(),
            busy: None,
        }
    }
}

/// A journal VM restore of one VM, from its start until it is committed or rolled back.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct JournalRestore {
    /// The VM restored (a position in `World::vms`).
    pub vm: usize,
    /// The restore's task: running, then waiting for a commit or a rollback.
    pub task: TaskKey,
    /// The checkpoint restored.
    pub checkpoint: u64,
    /// The name of the new VM, for a restore beside the original.
    pub restored_vm_name: Option<String>,
    /// The new VM, once made.
    pub new_vm: Option<usize>,
    /// When the restore began: a rollback in place returns the guest's files to this moment.
    pub started: SimTime,
    /// When its task reached `WaitingForUserInput`.
    pub waiting_since: Option<SimTime>,
    /// `commitPolicy`.
    pub commit_policy: u8,
    /// `timeToWaitBeforeContinueInSeconds`, in ms.
    pub wait_ms: Option<i64>,
    /// The commit or rollback task, once asked for.
    pub end_task: Option<TaskKey>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_saved_with_one_datastore_per_site_still_loads() {
        let site = serde_json::json!({
            "Role": "Local", "Name": "Boston", "Location": "", "Id": "s", "ServerId": "v",
            "Ip": "10.10.0.10", "Hosts": [], "Datastore": ["v.datastore-20", "ds-boston-01"],
            "Network": ["v.network-30", "VM Network"]
        });
        let site: Site = serde_json::from_value(site).unwrap();
        assert_eq!(site.datastores.len(), 1);
        assert_eq!(site.datastores[0].name, "ds-boston-01");
        let again: Site = serde_json::from_value(serde_json::to_value(&site).unwrap()).unwrap();
        assert_eq!(again.datastores[0].id, "v.datastore-20");
    }
}
