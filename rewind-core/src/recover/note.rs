//! What a bounded recover notes on its way: a mount found after its answer was lost, a download
//! fetched again, a clone aborted through its own task, a journal that could not be written. Each
//! note is a variant carrying the names involved; its `Display` is the sentence a human reads, and
//! the JSON and the audit journal hold that sentence.

use std::fmt;

use super::destination::GuestPath;
use crate::zvm::wire::FLR_MOUNT_TASK_TYPE;

/// One note of a recovery ([`super::RecoverFileReport::notes`],
/// [`super::RecoveryTaskReport::notes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecoveryNote {
    /// The answer to the FLR mount was lost, and the session it created was found and used.
    MountFound {
        /// What happened to the mount's answer, in the HTTP client's words.
        what: String,
        /// The session found.
        session_id: String,
    },
    /// No mount task of the FLR session was listed; the session's own status says it is mounted.
    MountTaskNotListed {
        /// The FLR session.
        session_id: String,
    },
    /// A download's body was cut off, and it was fetched again.
    DownloadCutOff {
        /// The guest path downloaded.
        path: GuestPath,
        /// What cut it off.
        error: String,
    },
    /// A folder asked for held no file at the checkpoint.
    EmptyFolder {
        /// The guest path of the folder.
        path: GuestPath,
    },
    /// A file's size differs from the one the ZVM listed.
    SizeDiffers {
        /// The guest path of the file.
        path: GuestPath,
        /// The size the ZVM listed.
        listed: i64,
        /// The size downloaded.
        downloaded: u64,
    },
    /// The recovery could not be written to the audit journal; the recovery itself stands.
    NotJournaled {
        /// Why, as the journal's error says.
        error: String,
    },
    /// The stage a failover test was at when it was stopped.
    TestStage {
        /// The stage, as the ZVM names it.
        stage: String,
    },
    /// Another VPG of the change runs a failover test too; it was left running.
    OtherTestRunning {
        /// That VPG's name.
        vpg_name: String,
    },
    /// The ZVM answered a clone abort without a task of its own, so the clone's task was followed.
    AbortWithoutTask {
        /// The clone's task.
        clone_task: String,
    },
    /// The clone's task ended Stopped or Failed after the abort: the clone was aborted.
    CloneAborted {
        /// The clone's task.
        task_id: String,
        /// The state it ended in, e.g. `Stopped (5)`.
        state: String,
    },
    /// The clone had Completed before the abort arrived: the clone exists.
    CloneAlreadyCompleted,
    /// The task was still running when waiting stopped; it was not stopped.
    TaskStillRunning {
        /// The task.
        task_id: String,
    },
    /// An FLR session whose work was done could not be unmounted.
    NotUnmounted {
        /// The session.
        session_id: String,
        /// The configured site whose ZVM holds it.
        site: String,
        /// Why.
        error: String,
    },
}

impl fmt::Display for RecoveryNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecoveryNote::MountFound { what, session_id } => write!(
                f,
                "{what}; the session it created, {session_id}, was found and used"
            ),
            RecoveryNote::MountTaskNotListed { session_id } => write!(
                f,
                "no {FLR_MOUNT_TASK_TYPE} task of session {session_id} was listed; the session's status says it is mounted"
            ),
            RecoveryNote::DownloadCutOff { path, error } => write!(
                f,
                "the download of {path} was cut off ({error}); it was fetched again"
            ),
            RecoveryNote::EmptyFolder { path } => {
                write!(f, "the folder {path} held no file at the checkpoint")
            }
            RecoveryNote::SizeDiffers {
                path,
                listed,
                downloaded,
            } => write!(
                f,
                "{path}: the ZVM listed {listed} bytes and {downloaded} were downloaded"
            ),
            RecoveryNote::NotJournaled { error } => f.write_str(error),
            RecoveryNote::TestStage { stage } => {
                write!(f, "the test was at stage {stage:?} when it was stopped")
            }
            RecoveryNote::OtherTestRunning { vpg_name } => write!(
                f,
                "a failover test is also running at VPG {vpg_name}; it was left running"
            ),
            RecoveryNote::AbortWithoutTask { clone_task } => write!(
                f,
                "the ZVM answered the abort without a task of its own; the clone's task {clone_task} was followed instead"
            ),
            RecoveryNote::CloneAborted { task_id, state } => write!(
                f,
                "the clone's task {task_id} ended {state}: the clone was aborted"
            ),
            RecoveryNote::CloneAlreadyCompleted => f.write_str(
                "the clone had already completed when the abort arrived; the clone exists",
            ),
            RecoveryNote::TaskStillRunning { task_id } => write!(
                f,
                "task {task_id} was still running when waiting stopped; it was not stopped: follow it in the ZVM"
            ),
            RecoveryNote::NotUnmounted {
                session_id,
                site,
                error,
            } => write!(
                f,
                "the FLR session {session_id} at site {site} could NOT be unmounted ({error}): unmount it in the ZVM (File Restore sessions)"
            ),
        }
    }
}

serialize_as_text!(RecoveryNote);
