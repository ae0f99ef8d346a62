//! What every command starts from: the global options, the configuration built from them (file,
//! environment and `--zvm`, through the core's own loader), and the async runtime.

use std::future::Future;
use std::path::PathBuf;

use rewind_core::{Config, ErrorKind, Rewind};

use crate::exit::CliError;
use crate::output;

/// The global options of one run.
#[derive(Debug, Clone)]
pub struct Context {
    /// `--zvm`: the URL of the site named `default`.
    pub zvm: Option<String>,
    /// `--config`.
    pub config_file: Option<PathBuf>,
    /// `--site`: the only sites to ask (all when empty).
    pub sites: Vec<String>,
    /// `--json`.
    pub json: bool,
    /// `-q` given: no progress line.
    pub quiet: bool,
}

impl Context {
    /// The configuration (file, environment, and `--zvm` standing in for `ZVM_URL`). Sites are
    /// optional here: the catalog, the journal and the hook need none, and the core refuses what
    /// needs a ZVM when none is configured.
    pub fn config(&self) -> Result<Config, CliError> {
        Ok(Config::load_with_zvm(
            self.config_file.as_deref(),
            self.zvm.as_deref(),
        )?)
    }

    /// A [`Rewind`] for commands that talk to a ZVM, from [`Context::config_warned`]. Nothing is sent yet: each command's first call learns
    /// what it needs, so one unreachable site fails only what needs that site.
    /// Every guard and recovery made through it journals the person at this machine.
    pub fn rewind(&self) -> Result<Rewind, CliError> {
        let mut rewind = Rewind::new(self.config_warned()?)?;
        if let Some(person) = rewind_core::Person::local() {
            rewind = rewind.acting_for(person);
        }
        Ok(rewind.only_sites(&self.sites)?)
    }

    /// The configuration for a command the operator runs, its warnings (TLS verification off, a
    /// secret others can read) printed once, on every such run. The hook reads [`Context::config`]:
    /// its stderr is the host's.
    pub fn config_warned(&self) -> Result<Config, CliError> {
        let config = self.config()?;
        for warning in config.warnings() {
            output::warning_line(&warning);
        }
        Ok(config)
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
    runtime.block_on(async {
        #[cfg(unix)]
        let _caught = rewind_core::local_state::catch_file_size_limit();
        future.await
    })
}

/// The facade acting as `agent` (`--agent` or `REWIND_AGENT`) beside the person at this machine,
/// else as the person alone: who a recovery or a restore is journaled as.
pub fn as_agent(rewind: &Rewind, agent: Option<&str>) -> Rewind {
    let person = rewind.person().and_then(|p| p.name.as_deref());
    match agent.filter(|a| !a.trim().is_empty()).or(person) {
        Some(agent) => rewind.as_agent(agent),
        None => rewind.clone(),
    }
}
