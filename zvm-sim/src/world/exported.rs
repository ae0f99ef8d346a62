//! VPG settings taken out of a ZVM and brought back (`/v1/vpgSettings/exportSettings`,
//! `exportedSettings`, `import`, `copyVpgSettings`), as a site is rebuilt after a disaster or a VPG
//! is cloned: an export writes the settings of the VPGs asked for into a file named by its time,
//! kept by the ZVM that made it; an import creates a VPG from each exported settings, as a commit
//! of a new VPG's document does.

use serde_json::{Value, json};

use super::auth::Principal;
use super::clock::SimTime;
use super::documents::Export;
use super::ids::SiteRole;
use super::model::World;
use super::refusal::Refusal;

/// What an import did with each VPG it was given (SW10's `VpgSettingsImportVpgsResultApi`).
#[derive(Debug, Clone, Default)]
pub struct Imported {
    /// `ValidationFailedResults`: the settings a commit would refuse, with why.
    pub invalid: Vec<(String, String)>,
    /// `ImportFailedResults`: the VPGs that could not be created, with why.
    pub failed: Vec<(String, String)>,
    /// `ImportTaskIdentifiers`: the `CreateProtectionGroup` task of each VPG created.
    pub started: Vec<(String, String)>,
}

/// The VPG name of exported settings.
fn name_of(settings: &Value) -> String {
    settings["Basic"]["Name"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Whether `settings` are among those `names` asks for (all when none is named).
fn asked(settings: &Value, names: &[String]) -> bool {
    names.is_empty()
        || names
            .iter()
            .any(|n| n.eq_ignore_ascii_case(&name_of(settings)))
}

impl World {
    /// `POST /v1/vpgSettings/exportSettings`: writes the settings of the VPGs `names` (every VPG
    /// this site sees when empty) into a new export; its time. A name no VPG has is refused.
    pub fn export_vpg_settings(
        &mut self,
        site: SiteRole,
        names: &[String],
        now: SimTime,
    ) -> Result<(SimTime, usize), Refusal> {
        let visible: Vec<usize> = (0..self.vpgs.len())
            .filter(|&v| self.vpgs[v].visible_from(site))
            .collect();
        if let Some(unknown) = names.iter().find(|n| {
            !visible
                .iter()
                .any(|&v| self.vpgs[v].name.eq_ignore_ascii_case(n))
        }) {
            return Err(Refusal::NotFound(format!(
                "No VPG named {unknown} at this site: list them with GET /v1/vpgs."
            )));
        }
        let vpgs: Vec<Value> = visible
            .into_iter()
            .filter(|&v| {
                names.is_empty()
                    || names
                        .iter()
                        .any(|n| self.vpgs[v].name.eq_ignore_ascii_case(n))
            })
            .map(|v| self.exported(v))
            .collect();
        let count = vpgs.len();
        self.sites[site.index()]
            .exports
            .push(Export { at: now, vpgs });
        Ok((now, count))
    }

    /// The settings of VPG `vpg` as an export holds them.
    fn exported(&self, vpg: usize) -> Value {
        let v = &self.vpgs[vpg];
        let mut settings = self.settings_document(v.protected, Some(vpg));
        settings["SourceSiteName"] = json!(self.site(v.protected).name);
        settings["TargetSiteName"] = json!(self.site(v.recovery).name);
        settings["VpgSettingsIdentifier"] = Value::Null;
        settings
    }

    /// The export of `site` made at `at`.
    pub fn export_at(&self, site: SiteRole, at: SimTime) -> Result<&Export, Refusal> {
        self.site(site)
            .exports
            .iter()
            .find(|e| e.at == at)
            .ok_or_else(|| {
                Refusal::NotFound(format!(
                    "No exported settings of {} at this site: list them with GET /v1/vpgSettings/exportedSettings.",
                    at.to_wire()
                ))
            })
    }

    /// The settings of the export at `at`, of the VPGs `names` (all when empty).
    pub fn exported_settings(
        &self,
        site: SiteRole,
        at: SimTime,
        names: &[String],
    ) -> Result<Vec<Value>, Refusal> {
        let export = self.export_at(site, at)?;
        Ok(export
            .vpgs
            .iter()
            .filter(|s| asked(s, names))
            .cloned()
            .collect())
    }

    /// `POST /v1/vpgSettings/import`: a VPG created from each of `given` (those `names` asks for,
    /// all when empty), as a commit of a new VPG's settings creates one.
    pub fn import_vpg_settings(
        &mut self,
        site: SiteRole,
        given: &[Value],
        names: &[String],
        by: &Principal,
        now: SimTime,
    ) -> Imported {
        let mut imported = Imported::default();
        for settings in given.iter().filter(|s| asked(s, names)) {
            let name = name_of(settings);
            let mut doc = settings.clone();
            for key in [
                "SourceSiteName",
                "TargetSiteName",
                "VpgIdentifier",
                "VpgSettingsIdentifier",
            ] {
                if let Some(map) = doc.as_object_mut() {
                    map.remove(key);
                }
            }
            let change = match self.vpg_change(&doc) {
                Ok(change) => change,
                Err(refusal) => {
                    imported.invalid.push((name, refusal.to_string()));
                    continue;
                }
            };
            match self.create_vpg(site, change, by, now) {
                Ok(task) => imported.started.push((name, task)),
                Err(refusal) => imported.failed.push((name, refusal.to_string())),
            }
        }
        imported
    }

    /// `POST /v1/vpgSettings/copyVpgSettings`: a document for a new VPG with the settings of VPG
    /// `vpg` but its VMs (a VM is in at most three VPGs, and a copy protects the VMs it is given).
    pub fn copy_vpg_settings(&mut self, site: SiteRole, vpg: usize) -> String {
        let mut doc = self.settings_document(site, Some(vpg));
        doc["VpgIdentifier"] = Value::Null;
        doc["Vms"] = json!([]);
        self.keep_vpg_settings(site, doc)
    }
}
