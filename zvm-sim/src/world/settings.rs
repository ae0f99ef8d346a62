//! VPG settings (`/v1/vpgSettings`): a VPG's settings taken out as one document to be edited part
//! by part (basic, journal, recovery, networks, scratch, scripting, boot groups, Extended Journal
//! Copy, VMs with their NICs and volumes), then committed as one task, as Zerto's automation
//! (Ansible, Terraform, PowerShell, the zvml SDK) creates and edits VPGs. A document made from
//! nothing creates a VPG when committed; one made from a VPG changes it. Committing ends the
//! document, as a ZVM does.
//!
//! The document is kept as the appliance answers it: SW10's `VpgSettingsApi` with PascalCase keys.
//! What a commit applies to the simulated VPG is its name, RPO, journal history, priority and VMs;
//! the rest is kept and answered back, not modelled. A document for a new VPG creates one when
//! committed (see `lifecycle`).

use serde_json::{Value, json};

use super::auth::Principal;
use super::clock::SimTime;
use super::documents::VpgSettings;
use super::ids::{SiteRole, guid};
use super::model::World;
use super::payloads::VpgChange;
use super::refusal::Refusal;
use super::tasks::{Operation, Planned};
use crate::enums::PRIORITY;

/// The parts of a document that `/v1/vpgSettings/{id}/{part}` reads and writes, by path segment.
pub const PARTS: [(&str, &str); 8] = [
    ("basic", "Basic"),
    ("journal", "Journal"),
    ("recovery", "Recovery"),
    ("networks", "Networks"),
    ("scratch", "Scratch"),
    ("scripting", "Scripting"),
    ("bootgroup", "BootGroups"),
    ("ltr", "LongTermRetention"),
];

/// The longest journal history Zerto keeps, in hours (30 days).
const MAX_HISTORY_HOURS: i64 = 720;

/// SW10's camelCase keys as an appliance answers them: each key's first letter upper-cased, at every
/// depth.
pub fn pascal_case(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| {
                    let mut chars = k.chars();
                    let key = match chars.next() {
                        Some(first) => first.to_uppercase().chain(chars).collect(),
                        None => k,
                    };
                    (key, pascal_case(v))
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(pascal_case).collect()),
        other => other,
    }
}

fn refused(message: impl Into<String>) -> Refusal {
    Refusal::BadRequest(message.into())
}

impl World {
    /// The document `POST /v1/vpgSettings` starts from: of the VPG `from`, or for a new VPG.
    pub fn settings_document(&self, site: SiteRole, from: Option<usize>) -> Value {
        match from {
            Some(vpg) => self.settings_of_vpg(vpg),
            None => self.settings_for_new(site),
        }
    }

    /// Keeps `doc` as a new document of `site`; its identifier.
    pub fn keep_vpg_settings(&mut self, site: SiteRole, mut doc: Value) -> String {
        let id = guid(&mut self.rng);
        doc["VpgSettingsIdentifier"] = json!(id);
        let settings = VpgSettings {
            id: id.clone(),
            site,
            doc,
        };
        self.vpg_settings.insert(id.to_ascii_lowercase(), settings);
        id
    }

    /// The document `id`, as `site` sees it.
    pub fn vpg_settings(&self, site: SiteRole, id: &str) -> Result<&VpgSettings, Refusal> {
        self.vpg_settings
            .get(&id.to_ascii_lowercase())
            .filter(|s| s.site == site)
            .ok_or_else(|| {
                Refusal::NotFound(format!(
                    "No VPG settings with identifier {id} exist: create them with POST /v1/vpgSettings."
                ))
            })
    }

    /// Every document `site` made.
    pub fn all_vpg_settings(&self, site: SiteRole) -> Vec<&VpgSettings> {
        self.vpg_settings
            .values()
            .filter(|s| s.site == site)
            .collect()
    }

    /// Changes document `id` with `change`, which checks what it writes.
    pub fn edit_vpg_settings(
        &mut self,
        site: SiteRole,
        id: &str,
        change: impl FnOnce(&World, &mut Value) -> Result<(), Refusal>,
    ) -> Result<(), Refusal> {
        let mut doc = self.vpg_settings(site, id)?.doc.clone();
        change(self, &mut doc)?;
        self.vpg_settings
            .get_mut(&id.to_ascii_lowercase())
            .expect("just read")
            .doc = doc;
        Ok(())
    }

    /// `DELETE /v1/vpgSettings/{id}`: the document is dropped, nothing committed.
    pub fn drop_vpg_settings(&mut self, site: SiteRole, id: &str) -> Result<(), Refusal> {
        self.vpg_settings(site, id)?;
        self.vpg_settings.remove(&id.to_ascii_lowercase());
        Ok(())
    }

    /// Checks a `Basic` part a client writes: a name, an RPO of at least a second, a journal history
    /// of 1 to 720 hours, a known priority, sites this ZVM knows.
    pub fn check_basic(&self, basic: &Value) -> Result<(), Refusal> {
        let given = |key: &str| basic.get(key).filter(|v| !v.is_null());
        if let Some(name) = given("Name")
            && name.as_str().is_none_or(|n| n.trim().is_empty())
        {
            return Err(refused("Basic.Name must be a non-empty string."));
        }
        if let Some(rpo) = given("RpoInSeconds")
            && rpo.as_i64().is_none_or(|r| r < 1)
        {
            return Err(refused(
                "Basic.RpoInSeconds must be a whole number of seconds, 1 or more.",
            ));
        }
        if let Some(hours) = given("JournalHistoryInHours")
            && hours
                .as_i64()
                .is_none_or(|h| !(1..=MAX_HISTORY_HOURS).contains(&h))
        {
            return Err(refused(format!(
                "Basic.JournalHistoryInHours must be from 1 to {MAX_HISTORY_HOURS} hours; the body has {hours}."
            )));
        }
        if let Some(priority) = given("Priority") {
            priority_of(priority)?;
        }
        for key in ["ProtectedSiteIdentifier", "RecoverySiteIdentifier"] {
            if let Some(site) = given(key).and_then(Value::as_str)
                && self.site_by_id(site).is_none()
            {
                return Err(refused(format!(
                    "Basic.{key} {site} is neither this site nor its paired peer: GET /v1/virtualizationsites lists them."
                )));
            }
        }
        Ok(())
    }

    /// Checks a VM a client adds or writes: one that runs at the document's protected site.
    pub fn check_settings_vm(&self, doc: &Value, vm: &Value) -> Result<String, Refusal> {
        let id = vm
            .get("VmIdentifier")
            .and_then(Value::as_str)
            .ok_or_else(|| refused("VmIdentifier is required: the VM to protect."))?;
        let protected = self.protected_site_of(doc)?;
        let known = self
            .vms_with_id(id)
            .iter()
            .any(|&v| self.vms[v].site == protected);
        if !known {
            return Err(Refusal::NotFound(format!(
                "No VM with identifier {id} runs at the protected site {}: GET /v1/virtualizationsites/{{id}}/vms lists them.",
                self.site(protected).name
            )));
        }
        Ok(id.to_owned())
    }

    /// `POST /v1/vpgSettings/{id}/commit`: starts the task that creates or changes the VPG, and ends
    /// the document. Refused, before any task, when the document cannot make a VPG.
    pub fn commit_vpg_settings(
        &mut self,
        site: SiteRole,
        id: &str,
        by: &Principal,
        now: SimTime,
    ) -> Result<String, Refusal> {
        let doc = self.vpg_settings(site, id)?.doc.clone();
        let change = self.vpg_change(&doc)?;
        let Some(vpg) = doc["VpgIdentifier"]
            .as_str()
            .and_then(|v| self.vpg_by_id(v))
        else {
            let task = self.create_vpg(site, change, by, now)?;
            self.vpg_settings.remove(&id.to_ascii_lowercase());
            return Ok(task);
        };
        if change.protected != self.vpgs[vpg].protected
            || change.recovery != self.vpgs[vpg].recovery
        {
            return Err(refused(
                "A VPG's protected and recovery sites cannot change: Basic.ProtectedSiteIdentifier and Basic.RecoverySiteIdentifier must stay as they are.",
            ));
        }
        self.vpg_settings.remove(&id.to_ascii_lowercase());
        let operation = Operation::UpdateVpg { change };
        let key = self.start_task(site, vpg, operation, Planned::Complete, by, now);
        Ok(self.tasks[key].id.clone())
    }

    /// The document's protected site.
    fn protected_site_of(&self, doc: &Value) -> Result<SiteRole, Refusal> {
        let id = doc["Basic"]["ProtectedSiteIdentifier"]
            .as_str()
            .unwrap_or_default();
        self.site_by_id(id).ok_or_else(|| {
            refused(
                "Basic.ProtectedSiteIdentifier is required: the site whose VMs the VPG protects.",
            )
        })
    }

    fn site_by_id(&self, id: &str) -> Option<SiteRole> {
        self.sites
            .iter()
            .find(|s| s.id.eq_ignore_ascii_case(id))
            .map(|s| s.role)
    }

    /// What a commit of `doc` asks for, checked whole.
    pub(crate) fn vpg_change(&self, doc: &Value) -> Result<VpgChange, Refusal> {
        let basic = &doc["Basic"];
        self.check_basic(basic)?;
        let name = basic["Name"]
            .as_str()
            .filter(|n| !n.trim().is_empty())
            .ok_or_else(|| refused("Basic.Name is required: the VPG's name."))?
            .to_owned();
        let protected = self.protected_site_of(doc)?;
        let recovery = basic["RecoverySiteIdentifier"]
            .as_str()
            .and_then(|s| self.site_by_id(s))
            .ok_or_else(|| {
                refused("Basic.RecoverySiteIdentifier is required: the site of the journal.")
            })?;
        if protected != recovery && !self.paired() {
            return Err(refused(
                "The protected and recovery sites are not paired: pair them (POST /v1/peersites) before a VPG replicates between them.",
            ));
        }
        let this = doc["VpgIdentifier"]
            .as_str()
            .and_then(|v| self.vpg_by_id(v));
        if let Some(other) = self.vpg_by_id_or_name(&name).filter(|v| Some(*v) != this) {
            return Err(Refusal::Conflict(format!(
                "A VPG named {} already exists: VPG names are unique.",
                self.vpgs[other].name
            )));
        }
        let mut vms = Vec::new();
        for vm in doc["Vms"].as_array().into_iter().flatten() {
            let id = self.check_settings_vm(doc, vm)?;
            let vm = self.vms_with_id(&id)[0];
            if this.is_none_or(|v| !self.vpgs[v].vms.contains(&vm)) && self.vms[vm].vpgs.len() >= 3
            {
                return Err(Refusal::Conflict(format!(
                    "VM {} is already in 3 VPGs, the most Zerto allows.",
                    self.vms[vm].name
                )));
            }
            vms.push(vm);
        }
        // A VPG may have no VM: Zerto's own SDK examples create one empty, then add VMs to it.
        Ok(VpgChange {
            name,
            protected,
            recovery,
            vms,
            rpo_seconds: basic["RpoInSeconds"].as_u64().unwrap_or(300) as u32,
            history_hours: basic["JournalHistoryInHours"].as_i64().unwrap_or(24),
            priority: priority_of(&basic["Priority"]).unwrap_or(1),
        })
    }

    /// A document for a new VPG at `site`: Zerto's defaults.
    fn settings_for_new(&self, site: SiteRole) -> Value {
        let mut doc = settings_skeleton();
        doc["Basic"]["ProtectedSiteIdentifier"] = json!(self.site(site).id);
        doc
    }

    /// The document of VPG `vpg` as it is.
    fn settings_of_vpg(&self, vpg: usize) -> Value {
        let v = &self.vpgs[vpg];
        let recovery = self.site(v.recovery);
        let mut doc = settings_skeleton();
        doc["VpgIdentifier"] = json!(v.id);
        let basic = &mut doc["Basic"];
        basic["Name"] = json!(v.name);
        basic["RpoInSeconds"] = json!(v.rpo_seconds);
        basic["JournalHistoryInHours"] = json!(v.journal.history_minutes() / 60);
        basic["Priority"] = json!(PRIORITY.name(v.priority));
        basic["ProtectedSiteIdentifier"] = json!(self.site(v.protected).id);
        basic["RecoverySiteIdentifier"] = json!(recovery.id);
        let host = recovery.hosts.first().map(|h| h.id.clone());
        let datastore = recovery.datastores.first().map(|d| d.id.clone());
        doc["Recovery"]["DefaultHostIdentifier"] = json!(host);
        doc["Recovery"]["DefaultDatastoreIdentifier"] = json!(datastore);
        doc["Networks"] = networks(&recovery.network.0);
        doc["Vms"] = Value::Array(
            v.vms
                .iter()
                .map(|&vm| settings_vm(&self.vms[vm].id))
                .collect(),
        );
        doc
    }
}

fn priority_of(value: &Value) -> Result<u8, Refusal> {
    let found = match value {
        Value::String(name) => PRIORITY
            .names
            .iter()
            .position(|n| n.eq_ignore_ascii_case(name)),
        Value::Number(n) => n.as_u64().filter(|n| *n < 3).map(|n| n as usize),
        _ => None,
    };
    found.map(|p| p as u8).ok_or_else(|| {
        refused(format!(
            "Basic.Priority {value} is not a VPG priority: give Low, Medium or High (0 to 2)."
        ))
    })
}

/// A VM as a document lists it: its identifier, one NIC and one volume, nothing set.
pub fn settings_vm(id: &str) -> Value {
    json!({
        "VmIdentifier": id,
        "BootGroupIdentifier": DEFAULT_BOOT_GROUP,
        "Recovery": {"HostIdentifier": null, "HostClusterIdentifier": null, "DatastoreIdentifier": null,
                     "DatastoreClusterIdentifier": null, "FolderIdentifier": null, "ResourcePoolIdentifier": null,
                     "Vcd": null, "PublicCloud": null},
        "Journal": {"DatastoreIdentifier": null, "DatastoreClusterIdentifier": null,
                    "Limitation": limitation()},
        "Scratch": {"DatastoreIdentifier": null, "DatastoreClusterIdentifier": null,
                    "Limitation": limitation()},
        "Volumes": [{"VolumeIdentifier": "scsi:0:0", "Vcd": null, "Preseed": null, "Rdm": null,
                     "Datastore": {"DatastoreIdentifier": null, "IsThin": true}, "VolumeSyncSettings": "Full"}],
        "Nics": [{"NicIdentifier": "Network adapter 1",
                  "Failover": {"Hypervisor": null, "Vcd": null, "PublicCloud": null},
                  "FailoverTest": {"Hypervisor": null, "Vcd": null, "PublicCloud": null}}],
    })
}

/// The identifier of the boot group every VM starts in.
const DEFAULT_BOOT_GROUP: &str = "00000000-0000-0000-0000-000000000000";

fn limitation() -> Value {
    json!({"HardLimitInMB": 153_600, "HardLimitInPercent": null,
           "WarningThresholdInMB": 115_200, "WarningThresholdInPercent": null})
}

fn networks(network: &str) -> Value {
    let hypervisor = json!({"Hypervisor": {"DefaultNetworkIdentifier": network}, "Vcd": null, "PublicCloud": null});
    json!({"Failover": hypervisor, "FailoverTest": hypervisor})
}

/// Zerto's defaults for a new VPG (RPO 300 s, 24 hours of journal history, Medium priority).
fn settings_skeleton() -> Value {
    json!({
        "VpgIdentifier": null,
        "VpgSettingsIdentifier": null,
        "Basic": {"Name": null, "VpgType": "Remote", "RpoInSeconds": 300, "TestIntervalInMinutes": 262_080,
                  "JournalHistoryInHours": 24, "Priority": "Medium", "UseWanCompression": true,
                  "ServiceProfileIdentifier": null, "ZorgIdentifier": null,
                  "ProtectedSiteIdentifier": null, "RecoverySiteIdentifier": null},
        "Journal": {"DatastoreIdentifier": null, "DatastoreClusterIdentifier": null, "Limitation": limitation()},
        "Scratch": {"DatastoreIdentifier": null, "DatastoreClusterIdentifier": null, "Limitation": limitation()},
        "Recovery": {"DefaultHostIdentifier": null, "DefaultHostClusterIdentifier": null,
                     "DefaultDatastoreIdentifier": null, "DefaultDatastoreClusterIdentifier": null,
                     "DefaultFolderIdentifier": null, "ResourcePoolIdentifier": null, "Vcd": null, "PublicCloud": null},
        "Networks": {"Failover": null, "FailoverTest": null},
        "Scripting": {"PreRecovery": null, "PostRecovery": null, "PostBackup": null},
        "BootGroups": {"BootGroups": [{"BootGroupIdentifier": DEFAULT_BOOT_GROUP, "Name": "Default",
                                       "BootDelayInSeconds": 0}]},
        "LongTermRetention": {"Enabled": false, "RepositoryIdentifier": null, "RetentionRunTime": null,
                              "SchedulerPolicy": null, "Retry": null, "Indexing": null, "Compression": null},
        "Vms": [],
        "Protected": {"Vcd": null},
    })
}

/// The part `key` of a fresh document, which a DELETE of a part puts back.
pub fn default_part(key: &str) -> Value {
    settings_skeleton()[key].clone()
}

impl World {
    /// The end of an `UpdateProtectionGroup` task: the VPG takes its new name, RPO, priority, VMs
    /// and journal history. A shorter history drops the checkpoints older than it at once, as a
    /// ZVM's journal does; a longer one fills as the journal writes. A VM added is synced first
    /// (NotMeetingSLA / VolumeInitialSync for a few seconds, no checkpoint written meanwhile).
    pub(crate) fn finish_update(
        &mut self,
        vpg: usize,
        change: &VpgChange,
        at: SimTime,
    ) -> (u8, String) {
        let before = self.vpgs[vpg].vms.clone();
        for &vm in before.iter().filter(|vm| !change.vms.contains(vm)) {
            self.vms[vm].vpgs.retain(|&v| v != vpg);
        }
        for &vm in change.vms.iter().filter(|vm| !before.contains(vm)) {
            self.vms[vm].vpgs.push(vpg);
        }
        let minutes = (change.history_hours * 60) as u32;
        self.changing_journal(vpg, at, |world| {
            world.vpgs[vpg].journal.set_history_minutes(minutes, at);
        });
        let v = &mut self.vpgs[vpg];
        v.name = change.name.clone();
        v.rpo_seconds = change.rpo_seconds;
        v.priority = change.priority;
        v.vms = change.vms.clone();
        let writing = crate::decisions::writes_checkpoints(v.status, v.sub_status);
        self.reindex();
        // A VM added has no replica yet: the VPG syncs its volumes, as Zerto does, and writes no
        // checkpoint until they are.
        if writing && change.vms.iter().any(|vm| !before.contains(vm)) {
            let until = at.plus_millis(super::lifecycle::INITIAL_SYNC_MS);
            self.sync(
                vpg,
                until,
                crate::enums::substatus::VOLUME_INITIAL_SYNC,
                false,
                at,
            );
        }
        (crate::enums::task_state::COMPLETED, String::new())
    }
}
