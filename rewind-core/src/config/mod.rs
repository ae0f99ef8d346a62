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
//!
//! The folder's rooms: `loaded` ([`Config`] and what it
//! tells the fronts), `load` (the file and the environment read into one), `written` (the file as
//! written), `sections`, `fronts`, `gateway` and `approvals` (each section's struct), `database` (a journal in PostgreSQL), `values` (durations and counts as
//! the keys write them), `site` (sites, their keys and the `ZVM_*` environment), `validate`,
//! `paths` (the default files) and `error`.

mod approvals;
mod database;
mod error;
mod fronts;
mod gateway;
mod load;
mod loaded;
mod paths;
mod sections;
mod site;
mod validate;
mod values;
mod written;

pub use crate::secret::Secret;
pub use approvals::{ApprovalSettings, FOUR_EYES_DEFAULT, FourEyes, RequiredApproval};
pub use database::{JournalDatabase, SslMode};
pub use error::ConfigError;
pub use fronts::{HttpAuth, TEAM_TOKEN_ENV, TeamServer, ToolRoles, UiSignIn};
pub use gateway::{
    GatewaySettings, Reach, UPSTREAM_NAME_MAX, Upstream, UpstreamCredential, name as upstream_name,
};
pub use loaded::Config;
pub use paths::{APP_DIR, default_catalog_path, default_config_file, default_journal_path};
pub use sections::{
    DiffSettings, GuardSettings, HookSettings, HttpSettings, LookupSettings, RecoverSettings,
};
pub use site::{Credentials, ENV_SITE, FromEnv, SiteConfig, parse_site_url, site_config_example};

#[cfg(test)]
mod tests;
