//! What a lookup finds: the VM, each VPG it is in and whether it protects it, and where a file
//! recovery of it can run.

use serde::Serialize;

use super::note::ProtectionNote;
use crate::codes::Code;
use crate::error::Candidate;
use crate::vm::{SiteRef, VmRef};

/// Whether FLR can run for this VM in this VPG from a configured ZVM.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum FlrAvailability {
    /// FLR can run through the ZVM configured under `site` (the VPG's recovery site).
    Available {
        /// The configured site name.
        site: String,
    },
    /// FLR cannot run from here.
    Unavailable {
        /// Why, and what would make it possible.
        reason: String,
    },
}

/// One VPG that a VM is in.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct VpgProtection {
    /// The VPG's identifier.
    pub vpg_id: String,
    /// The VPG's name.
    pub vpg_name: String,
    /// Its status.
    pub status: Code,
    /// Its substatus.
    pub substatus: Code,
    /// Whether it is protecting (and so will be tagged by a guard).
    pub protecting: bool,
    /// Why it is not protecting.
    pub reason: Option<String>,
    /// Where the VM runs.
    pub protected_site: SiteRef,
    /// Where the journal is and recovery happens.
    pub recovery_site: SiteRef,
    /// Protected site and recovery site are the same.
    pub locally_replicated: bool,
    /// Whether FLR can run from a configured ZVM.
    pub flr: FlrAvailability,
    /// The configured site whose ZVM rewind calls for this VPG: the protected site's if configured,
    /// else the recovery site's.
    pub zvm_site: String,
}

/// A VM and every VPG it is in.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Protection {
    /// The query as given.
    pub query: String,
    /// The VM it resolved to.
    pub vm: VmRef,
    /// Every VPG the VM is in, protecting or not, by name.
    pub vpgs: Vec<VpgProtection>,
    /// The configured sites whose ZVMs answered, when not every configured site did (some were left
    /// out with `--site`, or could not answer a lookup by identifier): a VM of the same name, or a
    /// VPG that only another site lists, would not be seen. Absent when every site answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub asked: Option<Vec<String>>,
    /// Things the answer could not check (e.g. a site's inventory that could not be read).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<ProtectionNote>,
}

impl Protection {
    /// What a lookup says of a VM in no VPG (`vm`, as [`RewindError::VmNotProtected`] names it):
    /// for listing the tags its guards left where it no longer is.
    pub fn of_no_vpg(query: &str, vm: &Candidate) -> Protection {
        Protection {
            query: query.to_owned(),
            vm: VmRef {
                id: vm.vm_id.clone(),
                name: vm.vm_name.clone(),
                site: crate::vm::SiteRef {
                    id: String::new(),
                    name: vm.site.clone(),
                    configured_as: None,
                },
                ip_addresses: Vec::new(),
            },
            vpgs: Vec::new(),
            asked: None,
            notes: Vec::new(),
        }
    }

    /// The protecting VPGs.
    pub fn protecting(&self) -> impl Iterator<Item = &VpgProtection> {
        self.vpgs.iter().filter(|v| v.protecting)
    }

    /// One line for humans: the VM, where it runs, how many VPGs it is in and how many protect it.
    pub fn headline(&self) -> String {
        format!(
            "{} ({}) at {}: {} VPG(s), {} protecting",
            self.vm.name,
            self.vm.id,
            self.vm.site,
            self.vpgs.len(),
            self.protecting().count()
        )
    }

    /// The headline, then one line per VPG and the notes.
    pub fn summary(&self) -> String {
        let mut out = self.headline();
        for v in &self.vpgs {
            out.push_str(&format!(
                "\n  {} {} -> {}: {} / {}: {}",
                v.vpg_name,
                v.protected_site,
                v.recovery_site,
                v.status,
                v.substatus,
                match &v.reason {
                    None => "protecting".to_string(),
                    Some(r) => format!("not protecting, {r}"),
                }
            ));
        }
        for n in &self.notes {
            out.push_str(&format!("\n  note: {n}"));
        }
        out
    }
}
