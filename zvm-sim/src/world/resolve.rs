//! A world file read and checked: [`WorldSpec::resolve`] turns names into positions and refuses a
//! world a ZVM could not have (a VM in a fourth VPG, a VPG member that does not exist, an unknown
//! status), with a [`WorldError`] that says which and why.

use std::collections::{BTreeMap, BTreeSet};

use super::spec::{DEFAULT_WORLD_TOML, VpgSpec, WorldSpec};
use crate::decisions::{
    MAX_HISTORY_MINUTES, MAX_JOURNAL_ROOM_MINUTES, MAX_KEEP_FOR_DAYS, MAX_VPGS_PER_VM,
    PUBLIC_CLIENT_ID, default_journal_room,
};
use crate::enums::{EnumError, PRIORITY, VPG_STATUS, VPG_SUBSTATUS};

/// A world that no ZVM could have, or a world file that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorldError {
    /// The TOML does not parse.
    #[error("the world file is not valid TOML for a zvm-sim world: {0}")]
    Toml(String),
    /// The JSON does not parse.
    #[error("the world file is not valid JSON for a zvm-sim world: {0}")]
    Json(String),
    /// The world file cannot be read.
    #[error("the world file {path} cannot be read: {message}")]
    Read {
        /// The file.
        path: String,
        /// The operating system's error.
        message: String,
    },
    /// Not exactly two sites.
    #[error(
        "a world has exactly two sites (the local one, then the peer); this one has {0}. \
         Add or remove [[sites]] entries."
    )]
    SiteCount(usize),
    /// Two sites with one name.
    #[error("two sites are named '{0}'; give each site its own name")]
    DuplicateSite(String),
    /// A VM's `ip` is not an IP address.
    #[error("VM '{0}' has an ip that is not an IPv4 or IPv6 address; give one such as 10.10.0.21")]
    BadIp(String),
    /// A site's hosts or datastores are missing, too many or named twice.
    #[error("site {site}'s {what}: {problem}")]
    SiteInventory {
        /// The site.
        site: String,
        /// `hosts` or `datastores`.
        what: &'static str,
        /// What is wrong.
        problem: String,
    },
    /// A VM or VPG names a site that does not exist.
    #[error("{owner} names the site '{site}', which is not in the world; the sites are {known}")]
    UnknownSite {
        /// "VM 'web-01'" or "VPG 'web-dr'".
        owner: String,
        /// The name given.
        site: String,
        /// The site names.
        known: String,
    },
    /// Two VMs with one name at one site make VPG membership ambiguous.
    #[error("two VMs are named '{vm}' at site {site}; give them different names")]
    DuplicateVm {
        /// VM name.
        vm: String,
        /// Site name.
        site: String,
    },
    /// Two VPGs with one name.
    #[error("two VPGs are named '{0}'; VPG names are unique on a ZVM")]
    DuplicateVpg(String),
    /// A VPG member that is not a VM at its protected site.
    #[error(
        "VPG '{vpg}' lists the VM '{vm}', but there is no VM of that name at its protected site \
         {site}; a VPG's VMs run at its protected site"
    )]
    UnknownMember {
        /// VPG name.
        vpg: String,
        /// VM name.
        vm: String,
        /// Protected site name.
        site: String,
    },
    /// A VPG lists one VM twice.
    #[error("VPG '{vpg}' lists the VM '{vm}' twice")]
    DuplicateMember {
        /// VPG name.
        vpg: String,
        /// VM name.
        vm: String,
    },
    /// A VPG without VMs.
    #[error("VPG '{0}' has no VMs; list at least one in `vms`")]
    EmptyVpg(String),
    /// A VM in more VPGs than Zerto allows.
    #[error(
        "VM '{vm}' at {site} would be in {count} VPGs ({vpgs}); a VM can be in at most three VPGs. \
         Remove it from one of them."
    )]
    TooManyVpgs {
        /// VM name.
        vm: String,
        /// Site name.
        site: String,
        /// How many.
        count: usize,
        /// Their names.
        vpgs: String,
    },
    /// A status, substatus or priority that is not one.
    #[error("VPG '{vpg}': {source}")]
    Enum {
        /// VPG name.
        vpg: String,
        /// What was wrong.
        source: EnumError,
    },
    /// A repository that names an unknown site or VPG, a VPG that recovers elsewhere or is kept
    /// twice, a name used twice, or a Keep For or capacity out of range.
    #[error("repository '{repository}': {problem}")]
    Repository {
        /// The repository's name.
        repository: String,
        /// What is wrong.
        problem: String,
    },
    /// A `[journal_limits]` entry that names no VPG, or a limit out of range.
    #[error(
        "journal_limits gives '{vpg}' {minutes} minutes: name a VPG of the world, with a limit of \
         1 to {MAX_JOURNAL_ROOM_MINUTES} minutes of its usual writing"
    )]
    JournalLimit {
        /// The VPG name given.
        vpg: String,
        /// The limit given.
        minutes: u32,
    },
    /// A history outside 1 minute .. 30 days.
    #[error(
        "VPG '{vpg}' has history_minutes = {minutes}; a journal keeps between 1 minute and 30 days \
         ({MAX_HISTORY_MINUTES} minutes)"
    )]
    History {
        /// VPG name.
        vpg: String,
        /// The value given.
        minutes: u32,
    },
    /// A guest file of a VM could not be written (the default files are checked by a test).
    #[error("VM '{vm}': {source}")]
    GuestFile {
        /// VM name.
        vm: String,
        /// What was wrong.
        source: crate::world::files::PathError,
    },
    /// Two users or clients with one name, or a client named like the public client.
    #[error(
        "the Keycloak principal '{0}' is defined twice (or reuses the public client id zerto-client)"
    )]
    DuplicatePrincipal(String),
}

/// The most hosts a site may have.
pub const MAX_HOSTS: usize = 1_024;
/// The most datastores a site may have.
pub const MAX_DATASTORES: usize = 256;

/// A site's `hosts` or `datastores`: from one to `most`, each name given once.
fn check_names(
    site: &str,
    what: &'static str,
    names: &[String],
    most: usize,
) -> Result<(), WorldError> {
    let mut seen = std::collections::BTreeSet::new();
    let repeated = names.iter().find(|n| !seen.insert(n.to_lowercase()));
    if names.is_empty() || names.len() > most || names.iter().any(|n| n.trim().is_empty()) {
        return Err(WorldError::SiteInventory {
            site: site.to_owned(),
            what,
            problem: format!("give from 1 to {most} names (it has {})", names.len()),
        });
    }
    match repeated {
        Some(name) => Err(WorldError::SiteInventory {
            site: site.to_owned(),
            what,
            problem: format!("'{name}' is named twice"),
        }),
        None => Ok(()),
    }
}

/// A validated world: every name turned into a position.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    /// Per VM: its site (0 local, 1 peer).
    pub vm_sites: Vec<usize>,
    /// Per VPG: protected site, recovery site, status, substatus, priority, members.
    pub vpgs: Vec<ResolvedVpg>,
    /// Per repository: its site (0 local, 1 peer).
    pub repository_sites: Vec<usize>,
}

/// One VPG of a [`Resolved`] world.
#[derive(Debug, Clone)]
pub(crate) struct ResolvedVpg {
    pub protected: usize,
    pub recovery: usize,
    pub status: u8,
    pub sub_status: u8,
    pub priority: u8,
    pub members: Vec<usize>,
    /// The journal's hard limit, in minutes of the VPG's usual writing.
    pub room_minutes: u32,
    /// The repository that keeps its retention sets, if any (a position in `repositories`).
    pub repository: Option<usize>,
}

impl Default for WorldSpec {
    /// The embedded default world.
    fn default() -> Self {
        Self::default_world()
    }
}

impl WorldSpec {
    /// The embedded default world (`worlds/default.toml`).
    pub fn default_world() -> Self {
        // A unit test parses and validates the embedded file, so this cannot fail in a build
        // whose tests pass.
        Self::from_toml(DEFAULT_WORLD_TOML).expect("the embedded default world is valid")
    }

    /// Reads a world from TOML and validates it.
    pub fn from_toml(text: &str) -> Result<Self, WorldError> {
        let spec: Self =
            toml::from_str(text).map_err(|e| WorldError::Toml(toml_problem(text, &e)))?;
        let spec = spec.with_default_accounts();
        spec.resolve()?;
        Ok(spec)
    }

    /// A world that names no user and no client (a captured one) gets the default world's test
    /// accounts, so it can be logged in to without a secret in the file.
    fn with_default_accounts(mut self) -> Self {
        if self.users.is_empty() && self.clients.is_empty() {
            let defaults = WorldSpec::default_world();
            self.users = defaults.users;
            self.clients = defaults.clients;
        }
        self
    }

    /// Reads a world from JSON (the same keys as the TOML file) and validates it.
    pub fn from_json(text: &str) -> Result<Self, WorldError> {
        let spec: Self = serde_json::from_str(text)
            .map_err(|e| WorldError::Json(without_value(&e.to_string())))?;
        let spec = spec.with_default_accounts();
        spec.resolve()?;
        Ok(spec)
    }

    /// Reads a world file: JSON when its name ends in `.json` (or, with another ending, when it
    /// starts with `{`), TOML otherwise; then validates it.
    pub fn from_file(path: &std::path::Path) -> Result<Self, WorldError> {
        let text = std::fs::read_to_string(path).map_err(|e| WorldError::Read {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        let json = match path.extension().and_then(|e| e.to_str()) {
            Some(ext) if ext.eq_ignore_ascii_case("json") => true,
            Some(ext) if ext.eq_ignore_ascii_case("toml") => false,
            _ => text.trim_start().starts_with('{'),
        };
        if json {
            Self::from_json(&text)
        } else {
            Self::from_toml(&text)
        }
    }

    /// Checks the world and resolves every name.
    pub(crate) fn resolve(&self) -> Result<Resolved, WorldError> {
        self.check_sites()?;
        let vms = self.place_vms()?;
        let mut vpg_names = BTreeSet::new();
        let mut vpgs_of_vm: Vec<Vec<&str>> = vec![Vec::new(); self.vms.len()];
        let mut vpgs = Vec::with_capacity(self.vpgs.len());
        for vpg in &self.vpgs {
            if !vpg_names.insert(vpg.name.as_str()) {
                return Err(WorldError::DuplicateVpg(vpg.name.clone()));
            }
            let resolved = self.resolve_vpg(vpg, &vms)?;
            for &vm in &resolved.members {
                vpgs_of_vm[vm].push(vpg.name.as_str());
            }
            vpgs.push(resolved);
        }
        self.check_vpgs_per_vm(&vpgs_of_vm)?;
        self.check_journal_limits()?;
        let repository_sites = self.resolve_repositories(&mut vpgs)?;
        self.check_principals()?;
        Ok(Resolved {
            vm_sites: vms.sites,
            vpgs,
            repository_sites,
        })
    }

    /// Exactly two sites, with two names, each with hosts and datastores named once.
    fn check_sites(&self) -> Result<(), WorldError> {
        if self.sites.len() != 2 {
            return Err(WorldError::SiteCount(self.sites.len()));
        }
        if self.sites[0].name == self.sites[1].name {
            return Err(WorldError::DuplicateSite(self.sites[0].name.clone()));
        }
        if let Some(vm) = self.vms.iter().find(|vm| {
            vm.ip
                .as_deref()
                .is_some_and(|ip| ip.parse::<std::net::IpAddr>().is_err())
        }) {
            return Err(WorldError::BadIp(vm.name.clone()));
        }
        for site in &self.sites {
            check_names(&site.name, "hosts", &site.hosts, MAX_HOSTS)?;
            check_names(
                &site.name,
                "datastores",
                &site.datastore_names(),
                MAX_DATASTORES,
            )?;
        }
        Ok(())
    }

    /// The position of the site `name`, which `owner` (a VM or a VPG) refers to.
    fn site_of(&self, owner: String, name: &str) -> Result<usize, WorldError> {
        self.sites
            .iter()
            .position(|s| s.name == name)
            .ok_or_else(|| WorldError::UnknownSite {
                owner,
                site: name.to_owned(),
                known: self.site_names(),
            })
    }

    /// Every VM's site, and every VM found by its site and name (the key VPG members use).
    fn place_vms(&self) -> Result<PlacedVms<'_>, WorldError> {
        let mut placed = PlacedVms {
            sites: Vec::with_capacity(self.vms.len()),
            by_site_and_name: BTreeMap::new(),
        };
        for (index, vm) in self.vms.iter().enumerate() {
            let site = self.site_of(format!("VM '{}'", vm.name), &vm.site)?;
            if placed
                .by_site_and_name
                .insert((site, vm.name.as_str()), index)
                .is_some()
            {
                return Err(WorldError::DuplicateVm {
                    vm: vm.name.clone(),
                    site: vm.site.clone(),
                });
            }
            placed.sites.push(site);
        }
        Ok(placed)
    }

    /// One VPG with its sites, enums and members resolved, and its history checked.
    fn resolve_vpg(&self, vpg: &VpgSpec, vms: &PlacedVms<'_>) -> Result<ResolvedVpg, WorldError> {
        let owner = || format!("VPG '{}'", vpg.name);
        let protected = self.site_of(owner(), &vpg.protected_site)?;
        let recovery = self.site_of(owner(), &vpg.recovery_site)?;
        let enum_error = |source| WorldError::Enum {
            vpg: vpg.name.clone(),
            source,
        };
        let status = VPG_STATUS.parse(&vpg.status).map_err(enum_error)?;
        let sub_status = VPG_SUBSTATUS.parse(&vpg.sub_status).map_err(enum_error)?;
        let priority = PRIORITY.parse(&vpg.priority).map_err(enum_error)?;
        if vpg.history_minutes == 0 || vpg.history_minutes > MAX_HISTORY_MINUTES {
            return Err(WorldError::History {
                vpg: vpg.name.clone(),
                minutes: vpg.history_minutes,
            });
        }
        Ok(ResolvedVpg {
            protected,
            recovery,
            status,
            sub_status,
            priority,
            members: vms.members(vpg, protected)?,
            room_minutes: self
                .journal_limits
                .get(&vpg.name)
                .copied()
                .unwrap_or_else(|| default_journal_room(vpg.history_minutes)),
            repository: None,
        })
    }

    /// Each repository's site, and each VPG's repository: a repository's VPGs exist, recover at
    /// its site and are kept by no other repository.
    fn resolve_repositories(&self, vpgs: &mut [ResolvedVpg]) -> Result<Vec<usize>, WorldError> {
        let mut names = BTreeSet::new();
        let mut sites = Vec::with_capacity(self.repositories.len());
        for (index, repository) in self.repositories.iter().enumerate() {
            let refuse = |problem: String| WorldError::Repository {
                repository: repository.name.clone(),
                problem,
            };
            if repository.name.trim().is_empty() || !names.insert(repository.name.as_str()) {
                return Err(refuse(
                    "its name is empty or names another repository too; give each its own name"
                        .to_owned(),
                ));
            }
            let site = self.site_of(
                format!("repository '{}'", repository.name),
                &repository.site,
            )?;
            let keep = repository.keep_days;
            if keep == 0 || keep > MAX_KEEP_FOR_DAYS {
                return Err(refuse(format!(
                    "keep_days = {keep}; a retention set is kept 1 to {MAX_KEEP_FOR_DAYS} days"
                )));
            }
            if repository.capacity_gb == 0 {
                return Err(refuse(
                    "capacity_gb = 0; give it room for retention sets".to_owned(),
                ));
            }
            for name in &repository.vpgs {
                let Some(vpg) = self.vpgs.iter().position(|v| &v.name == name) else {
                    return Err(refuse(format!(
                        "it keeps '{name}', which is not a VPG of the world"
                    )));
                };
                if vpgs[vpg].recovery != site {
                    return Err(refuse(format!(
                        "it keeps VPG '{name}', which recovers at {}, not at {}: a repository \
                         keeps the VPGs of its own site",
                        self.sites[vpgs[vpg].recovery].name, repository.site
                    )));
                }
                if let Some(other) = vpgs[vpg].repository.replace(index) {
                    return Err(refuse(format!(
                        "VPG '{name}' is kept by repository '{}' too; a VPG has one repository",
                        self.repositories[other].name
                    )));
                }
            }
            sites.push(site);
        }
        Ok(sites)
    }

    /// Every `[journal_limits]` entry names a VPG and holds 1 minute to the largest room.
    fn check_journal_limits(&self) -> Result<(), WorldError> {
        for (vpg, &minutes) in &self.journal_limits {
            let known = self.vpgs.iter().any(|v| &v.name == vpg);
            if !known || minutes == 0 || minutes > MAX_JOURNAL_ROOM_MINUTES {
                return Err(WorldError::JournalLimit {
                    vpg: vpg.clone(),
                    minutes,
                });
            }
        }
        Ok(())
    }

    /// No VM in more VPGs than Zerto allows; `vpgs_of_vm` holds each VM's VPG names.
    fn check_vpgs_per_vm(&self, vpgs_of_vm: &[Vec<&str>]) -> Result<(), WorldError> {
        for (vm, names) in vpgs_of_vm.iter().enumerate() {
            if names.len() > MAX_VPGS_PER_VM {
                return Err(WorldError::TooManyVpgs {
                    vm: self.vms[vm].name.clone(),
                    site: self.vms[vm].site.clone(),
                    count: names.len(),
                    vpgs: names.join(", "),
                });
            }
        }
        Ok(())
    }

    /// No two users or clients share a name, and none takes the public client's.
    fn check_principals(&self) -> Result<(), WorldError> {
        let mut principals = BTreeSet::from([PUBLIC_CLIENT_ID]);
        for name in self
            .users
            .iter()
            .map(|u| u.name.as_str())
            .chain(self.clients.iter().map(|c| c.id.as_str()))
        {
            if !principals.insert(name) {
                return Err(WorldError::DuplicatePrincipal(name.to_owned()));
            }
        }
        Ok(())
    }

    fn site_names(&self) -> String {
        self.sites
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The VMs of a world as [`WorldSpec::resolve`] places them.
struct PlacedVms<'a> {
    /// Per VM: its site (0 local, 1 peer).
    sites: Vec<usize>,
    /// Each VM's position, by its site and its name.
    by_site_and_name: BTreeMap<(usize, &'a str), usize>,
}

impl PlacedVms<'_> {
    /// The positions of a VPG's members, each a VM at its protected site and none listed twice.
    fn members(&self, vpg: &VpgSpec, protected: usize) -> Result<Vec<usize>, WorldError> {
        if vpg.vms.is_empty() {
            return Err(WorldError::EmptyVpg(vpg.name.clone()));
        }
        let mut members = Vec::with_capacity(vpg.vms.len());
        for vm_name in &vpg.vms {
            let vm = *self
                .by_site_and_name
                .get(&(protected, vm_name.as_str()))
                .ok_or_else(|| WorldError::UnknownMember {
                    vpg: vpg.name.clone(),
                    vm: vm_name.clone(),
                    site: vpg.protected_site.clone(),
                })?;
            if members.contains(&vm) {
                return Err(WorldError::DuplicateMember {
                    vpg: vpg.name.clone(),
                    vm: vm_name.clone(),
                });
            }
            members.push(vm);
        }
        Ok(members)
    }
}

/// A TOML error as one line, `line N: what is wrong`, never quoting the file: toml's own message
/// goes on to show the line at fault, and in a world file that may be a password's or a secret's.
fn toml_problem(text: &str, error: &toml::de::Error) -> String {
    let message = without_value(error.message().lines().next().unwrap_or("not valid TOML"));
    match error.span() {
        Some(span) => {
            let before = &text.as_bytes()[..span.start.min(text.len())];
            let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
            format!("line {line}: {message}")
        }
        None => message,
    }
}

/// A serde error message with the value at fault left out: `invalid type: integer `123456`,
/// expected a string` becomes `invalid type: integer, expected a string`. A world file or a saved
/// state holds passwords and client secrets, and the value of the wrong type may be one of them.
pub(crate) fn without_value(message: &str) -> String {
    for prefix in ["invalid type: ", "invalid value: ", "invalid length: "] {
        // From the right: a quoted value may itself hold ", expected ".
        if let Some((found, expected)) = message
            .strip_prefix(prefix)
            .and_then(|rest| rest.rsplit_once(", expected "))
        {
            let kind = found.split(['`', '"']).next().unwrap_or(found).trim();
            return format!("{prefix}{kind}, expected {expected}");
        }
    }
    message.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::spec::{default_priority, default_status, default_sub_status};

    #[test]
    fn a_world_file_error_never_quotes_the_value_or_the_line_at_fault() {
        let example = include_str!("../../worlds/example.toml");
        let at = example
            .lines()
            .position(|l| l.contains("password = \"admin\""))
            .expect("the example has a user")
            + 1;
        for (replacement, says) in [
            (
                "password = hunter2",
                "string values must be quoted, expected literal string",
            ),
            (
                "password = 123456",
                "invalid type: integer, expected a string",
            ),
            (
                "password = \"hunter2\", [1]",
                "unexpected key or value, expected newline",
            ),
        ] {
            let text = example.replacen("password = \"admin\"", replacement, 1);
            let error = WorldSpec::from_toml(&text).unwrap_err().to_string();
            assert!(
                !error.contains("hunter2") && !error.contains("123456"),
                "{error}"
            );
            assert!(error.contains(&format!("line {at}: ")), "{error}");
            assert!(error.contains(says), "{error}");
        }
        let json = r#"{"sites": [{"name": "A"}, {"name": "B"}],
            "users": [{"name": "u", "password": 123456, "role": "Administrator"}]}"#;
        let error = WorldSpec::from_json(json).unwrap_err().to_string();
        assert_eq!(
            error,
            "the world file is not valid JSON for a zvm-sim world: invalid type: integer, \
             expected a string at line 2 column 54"
        );
    }

    #[test]
    fn a_value_is_left_out_even_when_it_holds_the_words_around_it() {
        assert_eq!(
            without_value("invalid type: string \"a, expected b\", expected u32 at line 1"),
            "invalid type: string, expected u32 at line 1"
        );
        assert_eq!(
            without_value("unknown field `pasword`, expected one of `name`, `password`"),
            "unknown field `pasword`, expected one of `name`, `password`"
        );
    }

    #[test]
    fn the_embedded_default_world_is_valid() {
        let spec = WorldSpec::from_toml(DEFAULT_WORLD_TOML).unwrap();
        assert_eq!(spec.sites[0].name, "Boston");
        assert_eq!(spec.sites[1].name, "Denver");
        assert_eq!(spec.vpgs.len(), 11);
    }

    /// The default world, changed by `change`, which must be refused; the error.
    fn refused(change: impl FnOnce(&mut WorldSpec)) -> WorldError {
        let mut spec = WorldSpec::default_world();
        change(&mut spec);
        spec.resolve().unwrap_err()
    }

    #[test]
    fn a_vm_in_a_fourth_vpg_is_refused_with_its_vpgs_named() {
        let error = refused(|spec| {
            spec.vpgs.push(VpgSpec {
                name: "web-extra".to_owned(),
                protected_site: "Boston".to_owned(),
                recovery_site: "Denver".to_owned(),
                status: default_status(),
                sub_status: default_sub_status(),
                history_minutes: 60,
                rpo_seconds: 300,
                priority: default_priority(),
                vms: vec!["web-01".to_owned()],
            })
        });
        assert!(
            matches!(error, WorldError::TooManyVpgs { count: 4, .. }),
            "{error}"
        );
        let message = error.to_string();
        for part in ["web-01", "web-local, web-dr, web-archive, web-extra"] {
            assert!(message.contains(part), "{message}");
        }
    }

    #[test]
    fn a_member_must_run_at_the_protected_site() {
        let error = refused(|spec| spec.vpgs[0].vms = vec!["erp-01".to_owned()]);
        assert!(
            matches!(error, WorldError::UnknownMember { ref vm, .. } if vm == "erp-01"),
            "{error}"
        );
    }

    #[test]
    fn an_unknown_status_names_the_vpg() {
        let error = refused(|spec| spec.vpgs[1].status = "Healthy".to_owned()).to_string();
        assert!(
            error.starts_with("VPG 'web-dr': 'Healthy' is not a VPG status"),
            "{error}"
        );
    }

    #[test]
    fn a_site_needs_hosts_and_datastores_each_named_once() {
        let empty = refused(|w| w.sites[0].hosts.clear()).to_string();
        assert!(
            empty.contains("Boston's hosts") && empty.contains("from 1"),
            "{empty}"
        );
        let twice = refused(|w| w.sites[1].datastores = vec!["ds-a".into(), "DS-A".into()]);
        let twice = twice.to_string();
        assert!(
            twice.contains("Denver's datastores") && twice.contains("named twice"),
            "{twice}"
        );
        let blank = refused(|w| w.sites[1].hosts.push(" ".into())).to_string();
        assert!(blank.contains("Denver's hosts"), "{blank}");
    }

    #[test]
    fn a_world_needs_two_sites() {
        let error = refused(|spec| {
            spec.sites.pop();
        });
        assert_eq!(error, WorldError::SiteCount(1));
    }

    #[test]
    fn debug_output_hides_passwords_and_secrets() {
        let spec = WorldSpec::default_world();
        let printed = format!("{spec:?}");
        assert!(!printed.contains("rewind-secret"), "{printed}");
        assert!(!printed.contains("password: \"admin\""), "{printed}");
    }

    #[test]
    fn a_repository_keeps_only_existing_vpgs_of_its_own_site_each_once() {
        let problem = |change: fn(&mut WorldSpec)| refused(change).to_string();
        let elsewhere = problem(|w| w.repositories[0].vpgs.push("web-local".into()));
        assert!(
            elsewhere.contains("'web-local', which recovers at Boston, not at Denver"),
            "{elsewhere}"
        );
        let unknown = problem(|w| w.repositories[0].vpgs.push("no-such".into()));
        assert!(
            unknown.contains("'no-such', which is not a VPG"),
            "{unknown}"
        );
        let twice = problem(|w| {
            let mut second = w.repositories[0].clone();
            second.name = "denver-ltr-2".into();
            w.repositories.push(second);
        });
        assert!(
            twice.contains("is kept by repository 'denver-ltr' too"),
            "{twice}"
        );
        let keep = problem(|w| w.repositories[0].keep_days = 0);
        assert!(keep.contains("keep_days = 0"), "{keep}");
        let site = problem(|w| w.repositories[0].site = "Nowhere".into());
        assert!(
            site.contains("repository 'denver-ltr' names the site 'Nowhere'"),
            "{site}"
        );
    }

    #[test]
    fn the_default_world_keeps_web_dr_in_a_repository_and_web_archive_in_none() {
        let spec = WorldSpec::default_world();
        let resolved = spec.resolve().unwrap();
        let repository_of = |name: &str| {
            let vpg = spec.vpgs.iter().position(|v| v.name == name).unwrap();
            resolved.vpgs[vpg].repository
        };
        assert_eq!(repository_of("web-dr"), Some(0));
        assert_eq!(repository_of("web-archive"), None);
        assert_eq!(resolved.repository_sites, [1], "at Denver");
    }
}
