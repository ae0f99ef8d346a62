//! [`ErrorKind`]: the few classes every error of rewind falls into, which the fronts map to exit codes
//! and MCP results. A leaf: every module that reports an error may use it.

use serde::Serialize;

/// The class of an error, for exit codes and structured results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// A rule said no: the VM is ambiguous, not found or protected by nothing, or the ZVM refused;
    /// or, for one VPG of a guard, its insert was not sent because the guard was cancelled.
    Refused,
    /// A Zerto task ran and ended Failed or Stopped.
    TaskFailed,
    /// A Zerto task was still running when waiting stopped. It was not stopped and has not failed:
    /// follow it by its id (list the tags again, or look at the task in the ZVM) before going on.
    StillRunning,
    /// A ZVM could not be reached, or would not authenticate rewind.
    Connection,
    /// The input or the configuration is wrong.
    Usage,
    /// Something that should not happen: a ZVM answer of an unexpected shape, a local file problem.
    Internal,
}

impl ErrorKind {
    /// The kind's snake_case name, as in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Refused => "refused",
            ErrorKind::TaskFailed => "task_failed",
            ErrorKind::StillRunning => "still_running",
            ErrorKind::Connection => "connection",
            ErrorKind::Usage => "usage",
            ErrorKind::Internal => "internal",
        }
    }
}
