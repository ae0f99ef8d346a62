//! Exit codes and the CLI's error: every failure is an [`ErrorReport`] of the core (kind, message,
//! candidates, hint), and [`code`] is the one place a kind becomes an exit code.

use rewind_core::audit_journal::JournalError;
use rewind_core::catalog::CatalogError;
use rewind_core::config::ConfigError;
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

/// One exit code as `--help` and `docs/exit-codes.md` describe it: the one table both are made from.
#[derive(Debug, Clone, Copy)]
pub struct ExitCodeDoc {
    /// The code.
    pub code: u8,
    /// What it means, in a few words, for `--help`.
    pub short: &'static str,
    /// Everything it covers, for the reference page.
    pub meaning: &'static str,
}

/// Every exit code `rewind` gives.
pub const CODES: [ExitCodeDoc; 8] = [
    ExitCodeDoc {
        code: OK,
        short: "ok",
        meaning: "ok",
    },
    ExitCodeDoc {
        code: INTERNAL,
        short: "something unexpected (a ZVM answer of an unexpected shape, a catalog or journal file that cannot be read or written)",
        meaning: "something unexpected: a ZVM answer of an unexpected shape, a catalog or journal file that cannot be read or written (or whose lock another process held for more than 5 s); a guard whose intent could not be journaled (nothing was inserted) or whose verdict could not be (`not_guarded` with `journal_error`: the checkpoints exist, the hook denies until the journal takes the record; guard again with the same change id)",
    },
    ExitCodeDoc {
        code: USAGE,
        short: "bad usage: wrong arguments, or an unusable configuration or catalog",
        meaning: "bad usage: wrong arguments (clap's own code), an invalid tag part, an unusable configuration (no site, a bad URL, half a credential pair, a configuration or catalog file that is not valid: its key and line are named), or a server or tool name the catalog refuses (empty, with a control character, or over 200 characters)",
    },
    ExitCodeDoc {
        code: REFUSED,
        short: "refused by a rule: a VM not found, ambiguous or protected by nothing; a guard with no protecting VPG, or whose insert the ZVM refused; an unknown tool that needs a human's answer; a request the ZVM refused",
        meaning: "refused by a rule: the VM is not found, ambiguous, or protected by nothing; a guard that is `not_guarded` because no VPG is protecting, or because the ZVM refused an insert (an `error` VPG of kind `refused`, such as a 403); an unknown tool (`check-tool`) that needs a human's answer; a request the ZVM refused",
    },
    ExitCodeDoc {
        code: TASK_FAILED,
        short: "a Zerto task failed (ended Failed or Stopped)",
        meaning: "a Zerto task failed: a guard with a `failed` VPG, a recovery task that ended Failed or Stopped",
    },
    ExitCodeDoc {
        code: CONNECTION,
        short: "a ZVM could not be reached, would not authenticate rewind, or answered with a server error (5xx)",
        meaning: "a ZVM could not be reached, would not authenticate rewind, or answered with a server error (5xx); also `sites` with an unreachable site, `tags` with a VPG whose checkpoints could not be read, and a guard whose insert could not be sent or followed (an `error` VPG of kind `connection`)",
    },
    ExitCodeDoc {
        code: STILL_RUNNING,
        short: "a Zerto task was still running when waiting stopped: it was not stopped and has not failed; its task ids are printed (`rewind tags` shows when a guard's tags are listed)",
        meaning: "a Zerto task was still running when waiting stopped (a guard whose verdict is `still_running`, a failover test or clone whose task still runs): it was not stopped and has not failed; its task ids are printed. `rewind tags <vm> --change ID` shows when a guard's tags are listed",
    },
    ExitCodeDoc {
        code: INTERRUPTED,
        short: "interrupted twice (a first Ctrl-C or SIGTERM lets a guard or a recovery finish what it started at the ZVM)",
        meaning: "interrupted twice: a first Ctrl-C (or SIGTERM, as a CI run's timeout or a supervisor sends) during a guard or a recovery lets it finish what it started at the ZVM (its Zerto tasks read to their end, an FLR session unmounted, the journal written) and start nothing new (a guard's inserts not yet sent are not sent); a second one leaves at once",
    },
];

/// The exit codes as `rewind --help` ends: each code's short meaning, wrapped to 80 columns, and the
/// `--json` envelope.
pub fn help() -> String {
    let mut out = String::from("Exit codes:\n");
    for c in CODES {
        let mut line = format!("  {:<4} ", c.code);
        for word in c.short.split(' ') {
            if line.len() + 1 + word.len() > 80 && line.trim().len() > 4 {
                out.push_str(line.trim_end());
                out.push('\n');
                line = " ".repeat(7);
            } else if !line.ends_with(' ') {
                line.push(' ');
            }
            line.push_str(word);
        }
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str(
        "\nWith --json, every command prints one JSON document on stdout:\n  {\"command\": \"...\", \"ok\": true|false, \"exit_code\": N, \"result\": {...},\n   \"error\": {...}}\nErrors also go to stderr, as one line.",
    );
    out
}

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
