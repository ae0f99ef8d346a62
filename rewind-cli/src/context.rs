//! What every command starts from: the global options, the configuration built from them (file,
//! environment and `--zvm`, through the core's own loader), and the async runtime.

use std::future::Future;
use std::path::PathBuf;

use rewind_core::config::ConfigError;
use rewind_core::{Config, ErrorKind, Rewind};

use crate::cli::GlobalArgs;
use crate::exit::CliError;
use crate::output;

/// The global options of one run.
#[derive(Debug, Clone)]
pub struct Context {
    /// `--zvm`: the URL of the site named `default`.
    pub zvm: Option<String>,
    /// `--config`.
    pub config_file: Option<PathBuf>,
    /// `--json`.
    pub json: bool,
    /// `-q` given: no progress line.
    pub quiet: bool,
}

impl Context {
    /// The context of the given global options.
    pub fn new(global: &GlobalArgs) -> Context {
        Context {
            zvm: global.zvm.clone(),
            config_file: global.config.clone(),
            json: global.json,
            quiet: global.quiet > 0,
        }
    }

    /// The environment as the core's loader sees it, with `--zvm` standing in for `ZVM_URL`.
    fn env(&self, key: &str) -> Option<String> {
        match (key, &self.zvm) {
            ("ZVM_URL", Some(url)) => Some(url.clone()),
            _ => std::env::var(key).ok(),
        }
    }

    /// The full configuration, for commands that talk to a ZVM; its warnings (TLS verification off)
    /// are printed on every run.
    pub fn config(&self) -> Result<Config, CliError> {
        let config = Config::load_with_env(self.config_file.as_deref(), &|k| self.env(k))?;
        for warning in config.warnings() {
            output::warning_line(&warning);
        }
        Ok(config)
    }

    /// The configuration of commands that never talk to a ZVM (the catalog, the journal, the hook):
    /// its catalog and journal paths and hook window. These work with no site configured at all.
    pub fn local_config(&self) -> Result<Config, CliError> {
        match Config::load_with_env(self.config_file.as_deref(), &|k| self.env(k)) {
            Err(ConfigError::NoSites { .. }) => {
                // The core's loader insists on at least one site. These commands need none, and the
                // file may still set the catalog, the journal or the hook window, so load it once more
                // with a stand-in site (never contacted, dropped at once). `NoSites` means no ZVM_*
                // variable is set, so the stand-in cannot mix with real settings. The core should
                // offer a loader that does not require a site; see the CLI's report.
                let stand_in = |k: &str| match k {
                    "ZVM_URL" => Some("http://site.invalid".to_string()),
                    "ZVM_USERNAME" | "ZVM_PASSWORD" => Some("unused".to_string()),
                    _ => None,
                };
                let mut config = Config::load_with_env(self.config_file.as_deref(), &stand_in)?;
                config.sites.clear();
                Ok(config)
            }
            other => Ok(other?),
        }
    }

    /// A [`Rewind`] for the full configuration. Nothing is sent yet: each command's first call
    /// learns what it needs, so one unreachable site fails only what needs that site.
    pub fn rewind(&self) -> Result<Rewind, CliError> {
        Ok(Rewind::new(self.config()?)?)
    }
}

/// Runs a future to completion on a fresh runtime. Only commands that talk to a ZVM (or run the
/// simulator) start one; the hook stays synchronous so it starts fast.
pub fn block_on<T>(future: impl Future<Output = Result<T, CliError>>) -> Result<T, CliError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| {
            CliError::new(
                ErrorKind::Internal,
                format!("cannot start the async runtime: {e}"),
            )
        })?;
    runtime.block_on(future)
}
