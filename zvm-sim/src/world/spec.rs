//! The world as a file describes it (`worlds/default.toml` is embedded): sites, VMs, VPGs,
//! repositories, users and clients, by name. Reading a file and resolving its names into positions
//! is `resolve.rs`.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::decisions::{DEFAULT_HISTORY_MINUTES, DEFAULT_RPO_SECONDS};

/// The embedded default world.
pub const DEFAULT_WORLD_TOML: &str = include_str!("../../worlds/default.toml");

/// A world: two sites, their VMs and VPGs, and the Keycloak users and clients.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorldSpec {
    /// Exactly two: the local site (first listener) and the peer.
    pub sites: Vec<SiteSpec>,
    /// Every VM, protected or not.
    #[serde(default)]
    pub vms: Vec<VmSpec>,
    /// Every VPG.
    #[serde(default)]
    pub vpgs: Vec<VpgSpec>,
    /// Users for the password grant (through `zerto-client`).
    #[serde(default)]
    pub users: Vec<UserSpec>,
    /// Confidential clients for the client_credentials grant.
    #[serde(default)]
    pub clients: Vec<ClientSpec>,
    /// Audiences that every access token of the realm names besides `account`, as Keycloak's
    /// audience mappers add them (an "Audience" mapper in a default client scope): how a realm is
    /// set up to sign users in to a service such as rewind-mcp (`[http.auth] audience`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub audiences: Vec<String>,
    /// How much of each VPG's usual writing its journal's hard limit holds, in minutes, by VPG
    /// name (`"web-dr" = 90`). A limit below the VPG's history keeps its journal short of it; a
    /// VPG not named holds [`crate::decisions::DEFAULT_JOURNAL_ROOM_PERCENT`] % of its history,
    /// which only a burst of writes fills.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub journal_limits: BTreeMap<String, u32>,
    /// Extended Journal Copy (long-term retention) repositories, each at a site, with the VPGs
    /// whose retention sets it keeps. A VPG in none has no repository.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repositories: Vec<RepositorySpec>,
}

/// An Extended Journal Copy repository (Zerto's long-term retention): where a VPG's retention
/// sets are written, at the VPG's recovery site.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepositorySpec {
    /// `RepositoryName`, unique in the world.
    pub name: String,
    /// The site whose ZVM manages it; every VPG it keeps recovers there.
    pub site: String,
    /// The VPGs it keeps retention sets of (their `repositoryIdentifier`); a VPG is in one
    /// repository at most.
    #[serde(default)]
    pub vpgs: Vec<String>,
    /// "Keep For" of a retention set written for these VPGs, in days: its `ExpiryDate` is this
    /// long after it was written.
    #[serde(default = "default_keep_days")]
    pub keep_days: u32,
    /// `TotalCapacityGB`.
    #[serde(default = "default_capacity_gb")]
    pub capacity_gb: u64,
}

fn default_keep_days() -> u32 {
    crate::decisions::DEFAULT_KEEP_FOR_DAYS
}

fn default_capacity_gb() -> u64 {
    crate::decisions::DEFAULT_REPOSITORY_CAPACITY_GB
}

/// A site, served by its own simulated ZVM.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SiteSpec {
    /// The site name (`SiteName`, `PeerSiteName`).
    pub name: String,
    /// Free text (`Location`).
    #[serde(default)]
    pub location: String,
    /// Its ESXi hosts, each running a VRA: names, a name without a dot taking the site's domain
    /// (`esx01` becomes `esx01.boston.example.internal`). Default: two, `esx01` and `esx02`.
    #[serde(default = "default_hosts", skip_serializing_if = "is_default_hosts")]
    pub hosts: Vec<String>,
    /// Its datastores, by name; VMs, replicas and journals are spread over them. Default: one,
    /// `ds-<site>-01`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub datastores: Vec<String>,
}

fn default_hosts() -> Vec<String> {
    vec!["esx01".to_owned(), "esx02".to_owned()]
}

fn is_default_hosts(hosts: &[String]) -> bool {
    hosts == default_hosts().as_slice()
}

impl SiteSpec {
    /// A site with the default hosts and datastore.
    pub fn named(name: &str, location: &str) -> SiteSpec {
        SiteSpec {
            name: name.to_owned(),
            location: location.to_owned(),
            hosts: default_hosts(),
            datastores: Vec::new(),
        }
    }

    /// Its datastores' names: those given, or the default one.
    pub fn datastore_names(&self) -> Vec<String> {
        if self.datastores.is_empty() {
            vec![format!("ds-{}-01", self.name.to_lowercase())]
        } else {
            self.datastores.clone()
        }
    }
}

/// A VM.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VmSpec {
    /// The VM name; two VMs may share one.
    pub name: String,
    /// The site the VM runs at.
    pub site: String,
    /// Linux or Windows: decides its partitions and guest files.
    pub os: GuestOs,
    /// Virtual CPU cores.
    #[serde(default = "default_cpus")]
    pub cpus: u32,
    /// Memory in MB.
    #[serde(default = "default_memory_mb")]
    pub memory_mb: u32,
    /// Provisioned disk in GB.
    #[serde(default = "default_disk_gb")]
    pub disk_gb: u32,
    /// Its IP address (default: one drawn from the seed in the site's network).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip: Option<String>,
}

/// The guest operating system family.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub enum GuestOs {
    /// Partitions `sda1` and `sdb1`.
    Linux,
    /// Partitions `C:` and `D:`.
    Windows,
}

/// A VPG.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VpgSpec {
    /// The VPG name, unique in the world.
    pub name: String,
    /// Where its VMs run.
    pub protected_site: String,
    /// Where its journal is and where it recovers.
    pub recovery_site: String,
    /// A VPG status name or number.
    #[serde(default = "default_status")]
    pub status: String,
    /// A VPG substatus name or number.
    #[serde(default = "default_sub_status")]
    pub sub_status: String,
    /// `ConfiguredHistoryInMinutes`.
    #[serde(default = "default_history_minutes")]
    pub history_minutes: u32,
    /// `ConfiguredRpoSeconds`.
    #[serde(default = "default_rpo_seconds")]
    pub rpo_seconds: u32,
    /// A priority name or number.
    #[serde(default = "default_priority")]
    pub priority: String,
    /// Member VM names, looked up among the VMs at the protected site.
    pub vms: Vec<String>,
}

/// A Keycloak user.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserSpec {
    /// User name.
    pub name: String,
    /// Password.
    pub password: String,
    /// ZVM role.
    pub role: Role,
    /// More realm roles its tokens carry (`realm_access.roles`), for services that sign users in
    /// with the ZVM's Keycloak (rewind-mcp's `[http.auth.roles]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub realm_roles: Vec<String>,
}

/// A confidential Keycloak client with a service account.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientSpec {
    /// Client id.
    pub id: String,
    /// Client secret.
    pub secret: String,
    /// ZVM role of its service account.
    pub role: Role,
    /// More realm roles its tokens carry.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub realm_roles: Vec<String>,
}

/// A ZVM role.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub enum Role {
    /// May do everything.
    Administrator,
    /// May operate VPGs (and, on 10.9, is refused FLR).
    Operator,
}

impl Role {
    /// Its name, as the world file and a token's realm roles write it.
    pub fn name(self) -> &'static str {
        match self {
            Role::Administrator => "Administrator",
            Role::Operator => "Operator",
        }
    }
}

// Secrets never reach a log line, not even through `{:?}` of the options.
impl fmt::Debug for UserSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_redacted(f, "UserSpec", ("name", &self.name), "password", self.role)
    }
}

impl fmt::Debug for ClientSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_redacted(f, "ClientSpec", ("id", &self.id), "secret", self.role)
    }
}

/// `{:?}` of a user or a client: its name and role, and its secret shown as `<redacted>`.
fn debug_redacted(
    f: &mut fmt::Formatter<'_>,
    kind: &str,
    (name_key, name): (&str, &str),
    secret_key: &str,
    role: Role,
) -> fmt::Result {
    f.debug_struct(kind)
        .field(name_key, &name)
        .field(secret_key, &"<redacted>")
        .field("role", &role)
        .finish()
}

fn default_cpus() -> u32 {
    2
}
fn default_memory_mb() -> u32 {
    4096
}
fn default_disk_gb() -> u32 {
    60
}
pub(super) fn default_status() -> String {
    "MeetingSLA".to_owned()
}
pub(super) fn default_sub_status() -> String {
    "None".to_owned()
}
fn default_history_minutes() -> u32 {
    DEFAULT_HISTORY_MINUTES
}
fn default_rpo_seconds() -> u32 {
    DEFAULT_RPO_SECONDS
}
pub(super) fn default_priority() -> String {
    "Medium".to_owned()
}
