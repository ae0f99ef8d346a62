//! [`Config`]: everything rewind needs to run, as loaded (or written in code by tests and the
//! demo), and what it tells the fronts: its warnings, and a refusal where a ZVM is needed.

use std::path::PathBuf;

use super::approvals::ApprovalSettings;
use super::database::JournalDatabase;
use super::error::ConfigError;
use super::gateway::GatewaySettings;
use super::sections::{
    DiffSettings, GuardSettings, HookSettings, HttpSettings, LookupSettings, RecoverSettings,
};
use super::site::SiteConfig;

/// Everything rewind needs to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// The ZVMs to talk to, one per site.
    pub sites: Vec<SiteConfig>,
    /// The tool catalog (TOML).
    pub catalog_path: PathBuf,
    /// The audit journal (JSON lines), or, with [`Config::journal_database`], the file whose folder
    /// keeps this machine's state beside the journal (the sites' timings).
    pub journal_path: PathBuf,
    /// The audit journal in PostgreSQL, when `journal` is a `postgresql://` URL: a team server's
    /// replicas share it.
    pub journal_database: Option<JournalDatabase>,
    /// How the guard waits and retries.
    pub guard: GuardSettings,
    /// The PreToolUse hook's settings.
    pub hook: HookSettings,
    /// How long a bounded recover waits.
    pub recover: RecoverSettings,
    /// How far a diff walks.
    pub diff: DiffSettings,
    /// How lookups reuse what they read.
    pub lookup: LookupSettings,
    /// HTTP timeouts and read retries, and sign-in to rewind-mcp over HTTP.
    pub http: HttpSettings,
    /// The upstream MCP servers `rewind-mcp --gateway` serves, guarded.
    pub gateway: GatewaySettings,
    /// Held calls: how long they wait, who may approve them, which are always held.
    pub approvals: ApprovalSettings,
    /// The configuration file that was read, or looked for and not found; `None` when the
    /// configuration was built in code. Named when a site is missing.
    pub file: Option<PathBuf>,
    /// The mode of [`Config::file`] when it holds a secret (a client secret, a password) and users
    /// other than its owner may read it: [`Config::warnings`] names it on every run, as ssh refuses
    /// such a key.
    pub exposed_secret_mode: Option<u32>,
}

impl Config {
    /// A configuration in code, for tests and the demo: no site, the catalog and the journal at these
    /// paths, every setting its default. No file and no environment is read.
    pub fn new(catalog_path: impl Into<PathBuf>, journal_path: impl Into<PathBuf>) -> Config {
        Config {
            sites: Vec::new(),
            catalog_path: catalog_path.into(),
            journal_path: journal_path.into(),
            journal_database: None,
            guard: GuardSettings::default(),
            hook: HookSettings::default(),
            recover: RecoverSettings::default(),
            diff: DiffSettings::default(),
            lookup: LookupSettings::default(),
            http: HttpSettings::default(),
            gateway: GatewaySettings::default(),
            approvals: ApprovalSettings::default(),
            file: None,
            exposed_secret_mode: None,
        }
    }

    /// The warnings a front must show on every run (e.g. a site with TLS verification turned off).
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings: Vec<String> = self
            .sites
            .iter()
            .filter(|s| s.insecure)
            .map(|s| {
                format!(
                    "site {} ({}): TLS certificate verification is OFF (insecure); anyone on the path can read its credentials. Set ca_cert (ZVM_CA_CERT) to the appliance's certificate instead",
                    s.name, s.url
                )
            })
            .collect();
        if let (Some(mode), Some(file)) = (self.exposed_secret_mode, &self.file) {
            warnings.push(format!(
                "the configuration file {} holds a secret and other users may read it (mode {mode:04o}); run `chmod 600 {}`",
                file.display(),
                file.display()
            ));
        }
        warnings
    }

    /// The site configured under `name`.
    pub fn site(&self, name: &str) -> Option<&SiteConfig> {
        self.sites.iter().find(|s| s.name == name)
    }

    /// Refuses a configuration without any site, for what needs a ZVM: the error names the variables
    /// to set and the file to add a `[sites.<name>]` table to.
    pub fn require_sites(&self) -> Result<(), ConfigError> {
        if self.sites.is_empty() {
            return Err(ConfigError::NoSites {
                config_file: self.file.as_ref().map_or_else(
                    || "the configuration file".to_string(),
                    |f| f.display().to_string(),
                ),
            });
        }
        Ok(())
    }
}
