//! What a recovery is asked: a file recovery's request, a failover test's or a clone's action,
//! and the change id's check.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::destination::{Destination, GuestPath, parse_paths};

use crate::error::RewindError;

/// The longest change id or tag accepted.
pub const MAX_CHANGE: usize = 255;

/// What [`crate::Rewind::recover_file`] is asked to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RecoverFileRequest {
    /// The VM: name, host name, IP address or vmIdentifier.
    pub vm: String,
    /// The change id of the guard (the newest tag of that change is used), or a tag exactly.
    pub change: String,
    /// Guest paths, partition-rooted and `/`-separated (`sda1/etc/app/app.conf`,
    /// `C:/ProgramData/App/app.ini`). A folder is recovered whole: it downloads as a zip archive that
    /// is unpacked under the same rules as a single file.
    pub paths: Vec<String>,
    /// The local folder to write into (created when the first file is written). Each file lands
    /// under its guest path:
    /// `<destination>/sda1/etc/app/app.conf`, `<destination>/C/ProgramData/App/app.ini`.
    pub destination: PathBuf,
    /// Replace files that already exist in the destination (never a symbolic link or a folder).
    #[serde(default)]
    pub overwrite: bool,
    /// The plan id a preview printed: the recovery runs only while its files are as the preview
    /// found them ([`crate::Rewind::preview_recover_file`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
}

/// What [`crate::Rewind::failover_test`] is asked to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum FailoverTestAction {
    /// Start a failover test of the VM at the tagged checkpoint.
    Start,
    /// Stop the failover test running for the VM, recording its result.
    Stop {
        /// Whether the test succeeded.
        success: bool,
        /// What the tester found (may be empty).
        #[serde(default)]
        summary: String,
    },
}

/// What [`crate::Rewind::offsite_clone`] is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CloneAction {
    /// Start an offsite clone of the VM at the tagged checkpoint.
    Start,
    /// Abort the clone running for the VM.
    Abort,
}

/// Checks a change id or tag before anything is sent.
pub fn check_change(change: &str) -> Result<&str, RewindError> {
    let c = change.trim();
    let problem = if c.is_empty() {
        Some("it is empty; give the change id of the guard, or a tag exactly".to_string())
    } else if c.chars().any(char::is_control) {
        Some("it contains a control character; give it on one line".to_string())
    } else if c.chars().count() > MAX_CHANGE {
        Some(format!("it is longer than {MAX_CHANGE} characters"))
    } else {
        None
    };
    match problem {
        Some(problem) => Err(RewindError::InvalidInput {
            field: "change",
            problem,
        }),
        None => Ok(c),
    }
}

/// Everything of a file recovery that can be checked before anything is sent: the change, the VM
/// query, the guest paths, the destination and that each path's file may be written there.
pub(super) fn checked_locally(
    req: &RecoverFileRequest,
) -> Result<(&str, Vec<GuestPath>, Destination), RewindError> {
    let change = check_change(&req.change)?;
    crate::protection::validate_query(&req.vm)?;
    let paths = parse_paths(&req.paths)?;
    let destination = Destination::open(&req.destination, req.overwrite)?;
    for p in &paths {
        destination.precheck(p)?;
    }
    Ok((change, paths, destination))
}
