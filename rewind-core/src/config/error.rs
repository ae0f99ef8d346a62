//! [`ConfigError`]: a configuration that cannot be used.

use std::path::PathBuf;

/// A configuration that cannot be used. Each variant names the file, site or variable at fault and
/// never holds a secret's value.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The configuration file could not be read.
    #[error(
        "cannot read the configuration file {path}: {source}; check that it exists and is readable"
    )]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The configuration file is not valid TOML of the expected shape.
    #[error(
        "the configuration file {path} is not valid: {message}; fix the file: it takes {tables}"
    )]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong and where: the key and its line, never the value.
        message: String,
        /// The tables the file takes, as a list to read.
        tables: String,
    },
    /// No site is configured at all, and something that needs a ZVM was asked for.
    #[error(
        "no ZVM site is configured: set ZVM_URL and ZVM_CLIENT_ID + ZVM_CLIENT_SECRET (or ZVM_USERNAME + ZVM_PASSWORD), or add a [sites.<name>] table to {config_file}"
    )]
    NoSites {
        /// The configuration file that was looked for.
        config_file: String,
    },
    /// A site has no URL.
    #[error(
        "site {site} has no url: set `url` in [sites.{site}] (or ZVM_URL for the default site)"
    )]
    MissingUrl {
        /// The site.
        site: String,
    },
    /// A site's URL is not usable.
    #[error("site {site} has an unusable url {url:?}: {problem}")]
    BadUrl {
        /// The site.
        site: String,
        /// The URL as given, with any password removed.
        url: String,
        /// What is wrong and what to do.
        problem: String,
    },
    /// A site has no credentials, or half of a pair.
    #[error("site {site} has no usable credentials: {problem}")]
    Credentials {
        /// The site.
        site: String,
        /// What is missing and what to set.
        problem: String,
    },
    /// A setting has a value that cannot be used.
    #[error("{key} has an unusable value: {problem}")]
    BadValue {
        /// The file key or environment variable.
        key: String,
        /// What is wrong and what to set instead.
        problem: String,
    },
    /// No home or XDG directory could be found to place the catalog or the journal.
    #[error(
        "cannot find a config or state directory for {what} (no HOME or XDG_*_HOME); set `{key}` in the configuration file"
    )]
    NoDirectory {
        /// The catalog or the journal.
        what: &'static str,
        /// The file key that sets it explicitly.
        key: &'static str,
    },
}
