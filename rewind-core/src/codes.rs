//! The ZVM's numeric enumerations with their names (zvm-api.md §3), and [`Code`], a number shown with
//! its name.

use serde::Serialize;

/// A numeric ZVM code with its name, e.g. `{"code": 6, "name": "DeltaSync"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Code {
    /// The number the ZVM sent.
    pub code: i64,
    /// Its name, or `Unknown(<n>)` for a number this client does not know.
    pub name: String,
}

impl Code {
    fn from_table(code: i64, table: &[&str]) -> Code {
        let name = usize::try_from(code)
            .ok()
            .and_then(|i| table.get(i))
            .map(|s| s.to_string())
            .unwrap_or_else(|| format!("Unknown({code})"));
        Code { code, name }
    }

    /// A VPG status (`VpgVisualStatusApi`).
    pub fn vpg_status(code: i64) -> Code {
        Code::from_table(code, VPG_STATUS)
    }

    /// A VPG substatus (`VpgVisualSubStatusApi`).
    pub fn vpg_substatus(code: i64) -> Code {
        Code::from_table(code, VPG_SUBSTATUS)
    }

    /// A task state (`TaskStatusEnumApi`).
    pub fn task_state(code: i64) -> Code {
        Code::from_table(code, TASK_STATE)
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.name, self.code)
    }
}

/// VPG status 0..8. 3 is RpoNotMeetingSLA and 4 HistoryNotMeetingSLA, as the official docs and the ZVM
/// UI number them (some SDKs swap the two).
const VPG_STATUS: &[&str] = &[
    "Initializing",
    "MeetingSLA",
    "NotMeetingSLA",
    "RpoNotMeetingSLA",
    "HistoryNotMeetingSLA",
    "FailingOver",
    "Moving",
    "Deleting",
    "Recovered",
];

/// VPG substatus 0..32 (33..42 are declared by the API but their names are not published).
const VPG_SUBSTATUS: &[&str] = &[
    "None",
    "InitialSync",
    "Creating",
    "VolumeInitialSync",
    "Sync",
    "RecoveryPossible",
    "DeltaSync",
    "NeedsConfiguration",
    "Error",
    "EmptyProtectionGroup",
    "DisconnectedFromPeerNoRecoveryPoints",
    "FullSync",
    "VolumeDeltaSync",
    "VolumeFullSync",
    "FailingOverCommitting",
    "FailingOverBeforeCommit",
    "FailingOverRollingBack",
    "Promoting",
    "MovingCommitting",
    "MovingBeforeCommit",
    "MovingRollingBack",
    "Deleting",
    "PendingRemove",
    "BitmapSync",
    "DisconnectedFromPeer",
    "ReplicationPausedUserInitiated",
    "ReplicationPausedSystemInitiated",
    "RecoveryStorageProfileError",
    "Backup",
    "RollingBack",
    "RecoveryStorageError",
    "JournalStorageError",
    "VmNotProtectedError",
];

/// Task state 0..7.
const TASK_STATE: &[&str] = &[
    "FirstUnusedValue",
    "InProgress",
    "WaitingForUserInput",
    "Paused",
    "Failed",
    "Stopped",
    "Completed",
    "Cancelling",
];

/// Task state 1: running.
pub const STATE_IN_PROGRESS: i64 = 1;
/// Task state 2: done its part, waiting for a person (a journal VM restore before its commit).
pub const STATE_WAITING_FOR_USER_INPUT: i64 = 2;
/// Task state 4: ended in failure.
pub const STATE_FAILED: i64 = 4;
/// Task state 5: stopped before it finished.
pub const STATE_STOPPED: i64 = 5;
/// Task state 6: done.
pub const STATE_COMPLETED: i64 = 6;

/// Whether a task state is terminal (Failed, Stopped or Completed).
pub fn is_terminal(state: i64) -> bool {
    matches!(state, STATE_FAILED | STATE_STOPPED | STATE_COMPLETED)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_have_names_and_unknown_numbers_say_so() {
        assert_eq!(Code::vpg_status(3).name, "RpoNotMeetingSLA");
        assert_eq!(Code::vpg_status(4).name, "HistoryNotMeetingSLA");
        assert_eq!(Code::vpg_substatus(23).name, "BitmapSync");
        assert_eq!(Code::task_state(6).to_string(), "Completed (6)");
        assert_eq!(Code::vpg_substatus(40).name, "Unknown(40)");
        assert_eq!(Code::vpg_status(-1).name, "Unknown(-1)");
    }

    #[test]
    fn only_failed_stopped_and_completed_are_terminal() {
        let terminal: Vec<i64> = (0..8).filter(|s| is_terminal(*s)).collect();
        assert_eq!(terminal, vec![4, 5, 6]);
    }
}
