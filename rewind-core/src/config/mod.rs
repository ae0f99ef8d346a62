//! Configuration: the ZVM sites to talk to, their credentials and TLS trust, where the catalog and the
//! journal live, and the guard's, the hook's and the HTTP settings. `docs/configuration.md` is the
//! reference of every key.
//!
//! A configuration comes from a TOML file (an explicit path, else
//! `$XDG_CONFIG_HOME/zerto-ai-rewind/config.toml` when it exists) merged with the environment
//! (`ZVM_URL`, `ZVM_CLIENT_ID` + `ZVM_CLIENT_SECRET` or `ZVM_USERNAME` + `ZVM_PASSWORD`, `ZVM_CA_CERT`,
//! `ZVM_INSECURE=1`), which makes or overrides a site named `default`. Tests and the demo write one
//! in code (`Config { sites, ..Config::new(catalog, journal) }`), which reads neither.
//!
//! Reading is two steps. Serde reads the file into the sections' own structs (`sections`, `fronts`;
//! the sites as their keys, `site`), refusing unknown keys and values of the wrong type or range with
//! the key and line (`toml_error`); then `validate` checks, once, what lies between keys: the
//! credential pairs, the addresses, the environment over the file.
//!
//! Sites are optional: the tool catalog, the audit journal and the PreToolUse hook need no ZVM, so a
//! configuration without sites loads. What needs a ZVM asks [`Config::require_sites`] first, which
//! refuses with [`ConfigError::NoSites`], naming what to set.

mod error;
mod fronts;
mod sections;
mod site;
mod validate;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

pub use crate::secret::Secret;
pub use error::ConfigError;
pub use fronts::{HttpAuth, TEAM_TOKEN_ENV, TeamServer, ToolRoles, UiSignIn};
pub use sections::{
    DiffSettings, GuardSettings, HookSettings, HttpSettings, LookupSettings, RecoverSettings,
};
use site::SiteKeys;
pub use site::{Credentials, FromEnv, SiteConfig, parse_site_url, site_config_example};

/// The folder name under the XDG config and state directories.
pub const APP_DIR: &str = "zerto-ai-rewind";

/// The name of the site that the `ZVM_*` environment variables make or override.
pub const ENV_SITE: &str = "default";

/// Everything rewind needs to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// The ZVMs to talk to, one per site.
    pub sites: Vec<SiteConfig>,
    /// The tool catalog (TOML).
    pub catalog_path: PathBuf,
    /// The audit journal (JSON lines).
    pub journal_path: PathBuf,
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
    /// The configuration file that was read, or looked for and not found; `None` when the
    /// configuration was built in code. Named when a site is missing.
    pub file: Option<PathBuf>,
    /// The mode of [`Config::file`] when it holds a secret (a client secret, a password) and users
    /// other than its owner may read it: [`Config::warnings`] names it on every run, as ssh refuses
    /// such a key.
    pub exposed_secret_mode: Option<u32>,
}

/// The configuration file as written: every section is its own public struct, and each site the keys
/// [`validate`] makes a [`SiteConfig`] of once the environment is read.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Written {
    catalog: Option<PathBuf>,
    journal: Option<PathBuf>,
    sites: BTreeMap<String, SiteKeys>,
    guard: GuardSettings,
    hook: HookSettings,
    recover: RecoverSettings,
    diff: DiffSettings,
    lookup: LookupSettings,
    http: HttpSettings,
}

impl Config {
    /// A configuration in code, for tests and the demo: no site, the catalog and the journal at these
    /// paths, every setting its default. No file and no environment is read.
    pub fn new(catalog_path: impl Into<PathBuf>, journal_path: impl Into<PathBuf>) -> Config {
        Config {
            sites: Vec::new(),
            catalog_path: catalog_path.into(),
            journal_path: journal_path.into(),
            guard: GuardSettings::default(),
            hook: HookSettings::default(),
            recover: RecoverSettings::default(),
            diff: DiffSettings::default(),
            lookup: LookupSettings::default(),
            http: HttpSettings::default(),
            file: None,
            exposed_secret_mode: None,
        }
    }

    /// Loads the configuration as both fronts do: the TOML file `file` (or, when `None`, the default
    /// config file if it exists) merged with the `ZVM_*` environment variables, where `zvm_url` (their
    /// `--zvm` flag), when given, stands in for `ZVM_URL`. A configuration without any site loads (the
    /// catalog, the journal and the hook need none); [`Config::require_sites`] refuses it where a ZVM
    /// is needed.
    pub fn load_with_zvm(
        file: Option<&Path>,
        zvm_url: Option<&str>,
    ) -> Result<Config, ConfigError> {
        Config::load_with_env(file, &|key| match (key, zvm_url) {
            ("ZVM_URL", Some(url)) => Some(url.to_string()),
            _ => std::env::var(key).ok(),
        })
    }

    /// [`Config::load_with_zvm`] with the environment given as a function, so that tests need not
    /// change the process environment.
    pub fn load_with_env(
        file: Option<&Path>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config, ConfigError> {
        let env_site = SiteKeys::from_env(env)?;
        let (written, looked_at) = match file {
            Some(path) => (Some(read_file(path)?), Some(path.to_path_buf())),
            None => match default_config_file() {
                Some(path) if path.exists() => (Some(read_file(&path)?), Some(path)),
                other => (None, other),
            },
        };
        let written = written.unwrap_or_default();
        let holds_secret = written
            .sites
            .values()
            .any(|s| s.client_secret.is_some() || s.password.is_some());
        let exposed_secret_mode = looked_at
            .as_deref()
            .filter(|_| holds_secret)
            .and_then(readable_by_others);
        Ok(Config {
            file: looked_at,
            exposed_secret_mode,
            ..validate::checked(written, env_site)?
        })
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

fn project_dirs() -> Option<directories::ProjectDirs> {
    directories::ProjectDirs::from("", "", APP_DIR)
}

/// The configuration file looked for when none is given: `$XDG_CONFIG_HOME/zerto-ai-rewind/config.toml`.
pub fn default_config_file() -> Option<PathBuf> {
    project_dirs().map(|d| d.config_dir().join("config.toml"))
}

/// The default catalog file: `$XDG_CONFIG_HOME/zerto-ai-rewind/catalog.toml`.
pub fn default_catalog_path() -> Option<PathBuf> {
    project_dirs().map(|d| d.config_dir().join("catalog.toml"))
}

/// The default journal file: `$XDG_STATE_HOME/zerto-ai-rewind/journal.jsonl` (the local data
/// directory on platforms without a state directory).
pub fn default_journal_path() -> Option<PathBuf> {
    project_dirs().map(|d| {
        d.state_dir()
            .unwrap_or_else(|| d.data_local_dir())
            .join("journal.jsonl")
    })
}

/// The mode of the file at `path` when its group or others may read or write it.
#[cfg(unix)]
fn readable_by_others(path: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path).ok()?.permissions().mode() & 0o7777;
    (mode & 0o077 != 0).then_some(mode)
}

#[cfg(not(unix))]
fn readable_by_others(_path: &Path) -> Option<u32> {
    None
}

fn read_file(path: &Path) -> Result<Written, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    crate::toml_error::parse_toml(&text).map_err(|message| ConfigError::Parse {
        path: path.to_path_buf(),
        message,
    })
}

#[cfg(test)]
mod tests;
