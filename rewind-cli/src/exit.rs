//! Exit codes and the CLI's error: every failure is an [`ErrorReport`] of the core (kind, message,
//! candidates, hint), and [`code`] is the one place a kind becomes an exit code.

use rewind_core::catalog::CatalogError;
use rewind_core::config::ConfigError;
use rewind_core::journal::JournalError;
use rewind_core::{ErrorKind, ErrorReport, RewindError};

/// Everything went as asked.
pub const OK: u8 = 0;
/// Something unexpected: a ZVM answer of an unexpected shape, a catalog or journal file that cannot
/// be read or written.
pub const INTERNAL: u8 = 1;
/// Bad usage: wrong arguments (clap's own code), or an unusable configuration or catalog.
pub const USAGE: u8 = 2;
/// Refused by a rule: VM not found, ambiguous or protected by nothing; a guard with no protecting VPG
/// or whose insert the ZVM refused; an unknown tool; a request the ZVM refused.
pub const REFUSED: u8 = 3;
/// A Zerto task failed (ended Failed or Stopped).
pub const TASK_FAILED: u8 = 4;
/// A ZVM could not be reached, would not authenticate rewind, or answered with a server error.
pub const CONNECTION: u8 = 5;
/// A Zerto task was still running when waiting stopped: not stopped, not failed; its ids are printed.
pub const STILL_RUNNING: u8 = 6;

/// A second Ctrl-C (or SIGTERM) while a guard or a recovery was finishing (128 + SIGINT, as shells
/// report it).
pub const INTERRUPTED: u8 = 130;

/// The exit code of an error kind: the one mapping, used by every command.
pub fn code(kind: ErrorKind) -> u8 {
    match kind {
        ErrorKind::Refused => REFUSED,
        ErrorKind::TaskFailed => TASK_FAILED,
        ErrorKind::StillRunning => STILL_RUNNING,
        ErrorKind::Connection => CONNECTION,
        ErrorKind::Usage => USAGE,
        ErrorKind::Internal => INTERNAL,
    }
}

/// A failure of a command, as the core reports errors (and as `--json` prints them).
#[derive(Debug)]
pub struct CliError(pub ErrorReport);

impl CliError {
    /// A failure that did not come from the core.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> CliError {
        CliError(ErrorReport::new(kind, message))
    }

    /// The exit code.
    pub fn code(&self) -> u8 {
        code(self.0.kind)
    }
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.message)
    }
}

impl From<RewindError> for CliError {
    fn from(e: RewindError) -> Self {
        CliError(e.report())
    }
}

impl From<ConfigError> for CliError {
    fn from(e: ConfigError) -> Self {
        RewindError::from(e).into()
    }
}

impl From<CatalogError> for CliError {
    fn from(e: CatalogError) -> Self {
        RewindError::from(e).into()
    }
}

impl From<JournalError> for CliError {
    fn from(e: JournalError) -> Self {
        RewindError::from(e).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_its_own_nonzero_code() {
        let kinds = [
            ErrorKind::Refused,
            ErrorKind::TaskFailed,
            ErrorKind::StillRunning,
            ErrorKind::Connection,
            ErrorKind::Usage,
            ErrorKind::Internal,
        ];
        let mut codes: Vec<u8> = kinds.iter().map(|k| code(*k)).collect();
        assert!(codes.iter().all(|c| *c != OK));
        codes.sort();
        codes.dedup();
        assert_eq!(codes.len(), kinds.len());
        assert_eq!(
            code(ErrorKind::Usage),
            2,
            "the same code as clap's usage errors"
        );
    }
}
