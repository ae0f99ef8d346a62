//! Loading a configuration as both fronts do: the file (given, or the default one when it exists)
//! merged with the `ZVM_*` environment, then checked once (`validate`).

use std::path::Path;

use super::error::ConfigError;
use super::loaded::Config;
use super::paths::default_config_file;
use super::site::SiteKeys;
use super::validate;
use super::written::Written;

impl Config {
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
            .any(|s| s.client_secret.is_some() || s.password.is_some())
            || written.gateway.holds_secret()
            || written.approvals.webhook.is_some();
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
        tables: crate::toml_error::tables::<Written>().join(", "),
    })
}
