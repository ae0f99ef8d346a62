//! Capturing a site: reading a ZVM's inventory (its two sites with their hosts and datastores, the
//! VPGs with their status, history and RPO settings, the VMs with their OS, size, address and VPGs)
//! into a world file that `zvm-sim --world` serves, so a developer without an appliance gets a
//! simulator that looks like the site. Nothing secret is read or written: the file names no
//! account, and the simulator gives such a world its own test accounts.
//!
//! It reads through this crate's own models of the answers and writes the documented world format
//! (`zvm-sim/worlds/example.toml`); it shares no type with the simulator. `anonymize` replaces every
//! name and address consistently (one name, one replacement), so the file can leave the company.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::error::RewindError;
use crate::zvm::ZvmClient;
use crate::zvm::wire::Link;

/// A world file, as `zvm-sim --world` reads it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct WorldFile {
    /// The local site, then its peer.
    pub sites: Vec<SiteEntry>,
    /// Every VM.
    pub vms: Vec<VmEntry>,
    /// Every VPG between the two sites.
    pub vpgs: Vec<VpgEntry>,
}

/// `[[sites]]`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SiteEntry {
    pub name: String,
    pub location: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub datastores: Vec<String>,
}

/// `[[vms]]`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct VmEntry {
    pub name: String,
    pub site: String,
    pub os: String,
    pub cpus: u32,
    pub memory_mb: u32,
    pub disk_gb: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ip: Option<String>,
}

/// `[[vpgs]]`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct VpgEntry {
    pub name: String,
    pub protected_site: String,
    pub recovery_site: String,
    pub status: String,
    pub sub_status: String,
    pub history_minutes: u32,
    pub rpo_seconds: u32,
    pub priority: String,
    pub vms: Vec<String>,
}

// ---- What the capture reads (this crate's own models of the ZVM's answers) -------------------
//
// Every field takes `null` as its default, as a missing one: an appliance writes `null` where it
// has nothing, and one such field must not fail the whole capture.

fn nullable<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
struct SiteAnswer {
    #[serde(deserialize_with = "nullable")]
    site_identifier: String,
    #[serde(deserialize_with = "nullable")]
    virtualization_site_name: String,
}

/// `/v1/localsite` and each of `/v1/peersites`: where a site is.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
struct LocationAnswer {
    #[serde(deserialize_with = "nullable")]
    site_identifier: String,
    #[serde(deserialize_with = "nullable")]
    location: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
struct DatastoreAnswer {
    #[serde(deserialize_with = "nullable")]
    datastore_name: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
struct HostAnswer {
    #[serde(deserialize_with = "nullable")]
    virtualization_host_name: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
struct VpgAnswer {
    #[serde(deserialize_with = "nullable")]
    vpg_identifier: String,
    #[serde(deserialize_with = "nullable")]
    vpg_name: String,
    #[serde(deserialize_with = "nullable")]
    status: i64,
    #[serde(deserialize_with = "nullable")]
    sub_status: i64,
    #[serde(deserialize_with = "nullable")]
    priority: i64,
    #[serde(deserialize_with = "nullable")]
    configured_rpo_seconds: u32,
    history_status_api: Option<History>,
    protected_site: Option<Link>,
    recovery_site: Option<Link>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
struct History {
    #[serde(deserialize_with = "nullable")]
    configured_history_in_minutes: u32,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
struct VmAnswer {
    #[serde(deserialize_with = "nullable")]
    vm_identifier: String,
    #[serde(deserialize_with = "nullable")]
    vm_name: String,
    #[serde(deserialize_with = "nullable")]
    vpg_identifier: String,
    protected_site: Option<Link>,
    /// Its size, as a `/v1/vms` row gives it (at the top level).
    #[serde(flatten)]
    row_size: Perf,
    #[serde(deserialize_with = "nullable")]
    guest_os: String,
    vm_network_information: Option<Network>,
    vm_perf_metric_info: Option<Perf>,
}

/// A VM's size: a `/v1/vms` row's own, or a VM's `VmPerfMetricInfo`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
struct Perf {
    #[serde(deserialize_with = "nullable")]
    cpu_cores_num: u32,
    #[serde(rename = "MemorySizeInMB", deserialize_with = "nullable")]
    memory_size_in_mb: u32,
    #[serde(rename = "ProvisionedStorageInMB", deserialize_with = "nullable")]
    provisioned_storage_in_mb: u64,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
struct Network {
    #[serde(deserialize_with = "nullable")]
    network_adapters: Vec<Adapter>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
struct Adapter {
    ip_addresses: Vec<serde_json::Value>,
}

impl VmAnswer {
    /// Its size, from a `/v1/vms` row or, for a VM no VPG protects, its performance figures.
    fn size(&self) -> (u32, u32, u64) {
        let size = self.vm_perf_metric_info.as_ref().unwrap_or(&self.row_size);
        (
            size.cpu_cores_num,
            size.memory_size_in_mb,
            size.provisioned_storage_in_mb,
        )
    }

    fn ip(&self) -> Option<String> {
        self.vm_network_information
            .iter()
            .flat_map(|n| &n.network_adapters)
            .flat_map(|a| &a.ip_addresses)
            .filter_map(|v| v.as_str())
            .find(|ip| ip.parse::<std::net::IpAddr>().is_ok())
            .map(str::to_owned)
    }

    fn entry(&self, site: &str) -> VmEntry {
        let (cpus, memory_mb, provisioned_mb) = self.size();
        VmEntry {
            name: self.vm_name.clone(),
            site: site.to_owned(),
            os: if self.guest_os.to_lowercase().contains("windows") {
                "Windows"
            } else {
                "Linux"
            }
            .to_owned(),
            cpus: cpus.max(1),
            memory_mb: memory_mb.max(256),
            disk_gb: u32::try_from(provisioned_mb.div_ceil(1024))
                .unwrap_or(u32::MAX)
                .max(1),
            ip: self.ip(),
        }
    }
}

/// What was read from every configured ZVM, before it is shaped into a world.
#[derive(Default)]
struct Read {
    /// The two sites: identifier and name, local first.
    sites: Vec<(String, String)>,
    vpgs: BTreeMap<String, VpgAnswer>,
    /// `/v1/vms` rows by (VM, VPG), and the VMs no VPG protects with their site.
    rows: BTreeMap<(String, String), VmAnswer>,
    unprotected: Vec<(String, VmAnswer)>,
    hosts: HashMap<String, Vec<String>>,
    datastores: HashMap<String, Vec<String>>,
    locations: HashMap<String, String>,
}

/// Reads the inventory every configured ZVM answers for, into a world file. The first client's site
/// and its first peer are the world's two sites.
pub async fn capture(clients: &[Arc<ZvmClient>]) -> Result<WorldFile, RewindError> {
    let Some(first) = clients.first() else {
        return Ok(WorldFile::default());
    };
    let mut read = Read::default();
    let local = first.site_identifier().await?;
    let peers: Vec<LocationAnswer> = first.read_json("/v1/peersites").await?;
    let peer = peers
        .first()
        .map(|p| p.site_identifier.clone())
        .ok_or_else(|| RewindError::UnexpectedResponse {
            site: first.name().to_owned(),
            request: "GET /v1/peersites".to_owned(),
            detail: "it names no paired site, and a simulated world has two sites: capture a \
                     site that is paired"
                .to_owned(),
        })?;
    let sites: Vec<SiteAnswer> = first.read_json("/v1/virtualizationsites").await?;
    for id in [&local, &peer] {
        let name = sites
            .iter()
            .find(|s| s.site_identifier.eq_ignore_ascii_case(id))
            .map(|s| s.virtualization_site_name.clone());
        read.sites
            .push((id.clone(), name.unwrap_or_else(|| id.clone())));
    }
    for (id, _) in read.sites.clone() {
        read_site(first, &id, &mut read).await?;
    }
    let here: LocationAnswer = first.read_json("/v1/localsite").await?;
    for site in peers.into_iter().chain([here]) {
        read.locations
            .insert(site.site_identifier.to_lowercase(), site.location);
    }
    for client in clients {
        let vpgs: Vec<VpgAnswer> = client.read_json("/v1/vpgs").await?;
        for vpg in vpgs {
            read.vpgs
                .entry(vpg.vpg_identifier.to_lowercase())
                .or_insert(vpg);
        }
        let rows: Vec<VmAnswer> = client.read_json("/v1/vms").await?;
        for row in rows {
            let key = (
                row.vm_identifier.to_lowercase(),
                row.vpg_identifier.to_lowercase(),
            );
            read.rows.entry(key).or_insert(row);
        }
    }
    Ok(shape(read))
}

/// A site's hosts, datastores and the VMs no VPG protects.
async fn read_site(client: &ZvmClient, id: &str, read: &mut Read) -> Result<(), RewindError> {
    let at = |rest: &str| format!("/v1/virtualizationsites/{id}/{rest}");
    let hosts: Vec<HostAnswer> = client.read_json(&at("hosts")).await?;
    read.hosts.insert(
        id.to_lowercase(),
        hosts
            .into_iter()
            .map(|h| h.virtualization_host_name)
            .collect(),
    );
    let datastores: Vec<DatastoreAnswer> = client.read_json(&at("datastores")).await?;
    read.datastores.insert(
        id.to_lowercase(),
        datastores.into_iter().map(|d| d.datastore_name).collect(),
    );
    let vms: Vec<VmAnswer> = client.read_json(&at("vms")).await?;
    read.unprotected
        .extend(vms.into_iter().map(|vm| (id.to_lowercase(), vm)));
    Ok(())
}

/// The world of what was read: VPGs between the two sites, their VMs, and the VMs no VPG protects.
fn shape(read: Read) -> WorldFile {
    let name_of: HashMap<String, String> = read
        .sites
        .iter()
        .map(|(id, name)| (id.to_lowercase(), name.clone()))
        .collect();
    let site_of = |link: &Option<Link>| {
        link.as_ref()
            .and_then(|l| l.identifier.as_deref())
            .and_then(|id| name_of.get(&id.to_lowercase()))
            .cloned()
    };
    let mut names = UniqueNames::default();
    let mut vms: Vec<VmEntry> = Vec::new();
    let mut members: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for ((vm_id, vpg_id), row) in &read.rows {
        let Some(site) = site_of(&row.protected_site) else {
            continue;
        };
        let (name, new) = names.of(vm_id, &site, &row.vm_name);
        if new {
            vms.push(VmEntry {
                name: name.clone(),
                ..row.entry(&site)
            });
        }
        members.entry(vpg_id.clone()).or_default().push(name);
    }
    for (site_id, vm) in &read.unprotected {
        let Some(site) = name_of.get(site_id).cloned() else {
            continue;
        };
        let (name, new) = names.of(&vm.vm_identifier.to_lowercase(), &site, &vm.vm_name);
        if new {
            vms.push(VmEntry {
                name,
                ..vm.entry(&site)
            });
        }
    }
    let vpgs = read
        .vpgs
        .iter()
        .filter_map(|(id, vpg)| {
            Some(VpgEntry {
                name: vpg.vpg_name.clone(),
                protected_site: site_of(&vpg.protected_site)?,
                recovery_site: site_of(&vpg.recovery_site)?,
                status: vpg.status.to_string(),
                sub_status: vpg.sub_status.to_string(),
                history_minutes: vpg
                    .history_status_api
                    .as_ref()
                    .map_or(0, |h| h.configured_history_in_minutes)
                    .max(1),
                rpo_seconds: vpg.configured_rpo_seconds.max(1),
                priority: vpg.priority.to_string(),
                vms: members.get(id).cloned().unwrap_or_default(),
            })
        })
        .filter(|vpg| !vpg.vms.is_empty())
        .collect();
    WorldFile {
        sites: read
            .sites
            .iter()
            .map(|(id, name)| SiteEntry {
                name: name.clone(),
                location: read
                    .locations
                    .get(&id.to_lowercase())
                    .cloned()
                    .unwrap_or_default(),
                hosts: read
                    .hosts
                    .get(&id.to_lowercase())
                    .cloned()
                    .unwrap_or_default(),
                datastores: read
                    .datastores
                    .get(&id.to_lowercase())
                    .cloned()
                    .unwrap_or_default(),
            })
            .collect(),
        vms,
        vpgs,
    }
}

/// VM names unique per site, as a world file needs them: a second VM of one name at one site gets
/// ` (2)` after it. The same VM keeps one name.
#[derive(Default)]
struct UniqueNames {
    by_vm: HashMap<String, String>,
    taken: BTreeSet<(String, String)>,
}

impl UniqueNames {
    /// The name of VM `id` at `site`, and whether it is met for the first time.
    fn of(&mut self, id: &str, site: &str, name: &str) -> (String, bool) {
        if let Some(known) = self.by_vm.get(id) {
            return (known.clone(), false);
        }
        let mut candidate = name.to_owned();
        let mut n = 1;
        while !self
            .taken
            .insert((site.to_owned(), candidate.to_lowercase()))
        {
            n += 1;
            candidate = format!("{name} ({n})");
        }
        self.by_vm.insert(id.to_owned(), candidate.clone());
        (candidate, true)
    }
}

/// The same world with every name, location and address replaced consistently: sites become
/// `site-1`, `site-2`; VMs `vm-0001`...; VPGs `vpg-001`...; hosts `esx01`...; datastores `ds-01`...;
/// addresses `10.<site>.x.y`. Sizes, statuses, settings and memberships are kept.
pub fn anonymize(world: &WorldFile) -> WorldFile {
    let site: HashMap<&str, String> = world
        .sites
        .iter()
        .enumerate()
        .map(|(n, s)| (s.name.as_str(), format!("site-{}", n + 1)))
        .collect();
    let vm: HashMap<(&str, &str), String> = world
        .vms
        .iter()
        .enumerate()
        .map(|(n, v)| {
            (
                (v.site.as_str(), v.name.as_str()),
                format!("vm-{:04}", n + 1),
            )
        })
        .collect();
    let vpg: HashMap<&str, String> = world
        .vpgs
        .iter()
        .enumerate()
        .map(|(n, v)| (v.name.as_str(), format!("vpg-{:03}", n + 1)))
        .collect();
    let renamed =
        |map: &HashMap<&str, String>, name: &str| map.get(name).cloned().unwrap_or_default();
    WorldFile {
        sites: world
            .sites
            .iter()
            .enumerate()
            .map(|(n, s)| SiteEntry {
                name: format!("site-{}", n + 1),
                // Replaced, not emptied: a site that has a location keeps having one.
                location: match s.location.is_empty() {
                    true => String::new(),
                    false => format!("location-{}", n + 1),
                },
                hosts: (1..=s.hosts.len()).map(|h| format!("esx{h:02}")).collect(),
                datastores: (1..=s.datastores.len())
                    .map(|d| format!("ds-{d:02}"))
                    .collect(),
            })
            .collect(),
        vms: world
            .vms
            .iter()
            .enumerate()
            .map(|(n, v)| VmEntry {
                name: vm[&(v.site.as_str(), v.name.as_str())].clone(),
                site: renamed(&site, &v.site),
                ip: v.ip.as_ref().map(|_| {
                    format!(
                        "10.{}.{}.{}",
                        10 + world
                            .sites
                            .iter()
                            .position(|s| s.name == v.site)
                            .unwrap_or(0)
                            * 10,
                        (n / 250) % 250,
                        n % 250 + 1
                    )
                }),
                ..v.clone()
            })
            .collect(),
        vpgs: world
            .vpgs
            .iter()
            .map(|v| VpgEntry {
                name: renamed(&vpg, &v.name),
                protected_site: renamed(&site, &v.protected_site),
                recovery_site: renamed(&site, &v.recovery_site),
                vms: v
                    .vms
                    .iter()
                    .map(|m| {
                        vm.get(&(v.protected_site.as_str(), m.as_str()))
                            .cloned()
                            .unwrap_or_default()
                    })
                    .collect(),
                ..v.clone()
            })
            .collect(),
    }
}

/// The names `anonymize` gives the VPG `vpg` and the VM `vm` of `world`: how a comparison finds, in
/// a simulator serving the anonymized capture, the VPG and VM it read at the appliance.
pub fn anonymized_names(
    world: &WorldFile,
    vpg: &str,
    vm: &str,
) -> (Option<String>, Option<String>) {
    let anonymized = anonymize(world);
    let vpg_at = world.vpgs.iter().position(|v| v.name == vpg);
    let vm_at = world.vms.iter().position(|v| v.name == vm);
    (
        vpg_at.map(|i| anonymized.vpgs[i].name.clone()),
        vm_at.map(|i| anonymized.vms[i].name.clone()),
    )
}

/// The world file's text: a header saying what it is, then the TOML.
pub fn world_text(world: &WorldFile, anonymized: bool) -> Result<String, toml::ser::Error> {
    let header = format!(
        "# A zvm-sim world captured by `rewind capture`{}: serve it with `zvm-sim --world <this file>`.\n\
         # Identifiers come from the simulator's seed; names, sizes, addresses, statuses, histories,\n\
         # RPOs and memberships are the site's. No account is named: the simulator gives this world\n\
         # its own test accounts (zvm-sim's README names them); no secret of the site is here.\n\n",
        if anonymized {
            " and anonymized (every name and address replaced)"
        } else {
            ""
        }
    );
    Ok(format!("{header}{}", toml::to_string(world)?))
}
