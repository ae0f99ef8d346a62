//! Waiting for a recovery's Zerto task until it is terminal, or the wait ends.

use std::time::Instant;

use serde::Serialize;

use super::point::RecoveryPoint;
use crate::codes::{Code, STATE_COMPLETED, STATE_WAITING_FOR_USER_INPUT};
use crate::error::RewindError;
use crate::progress::{ProgressSink, Stage};
use crate::zvm::ZvmClient;
use crate::zvm::task::{MIN_POLL, Pace, TaskWait, Watch, wait_task_until};
use crate::zvm::wire::Task;

/// A Zerto task a recovery started, as it ended (or stood when waiting stopped).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RecoveryTask {
    /// The configured site whose ZVM runs it.
    pub site: String,
    /// The task.
    pub task_id: String,
    /// Its type, e.g. `FlrJournalMount`.
    pub task_type: String,
    /// Its last known state.
    pub state: Option<Code>,
    /// Its last known progress, 0..100.
    pub progress: Option<u8>,
    /// Its `CompleteReason`, when it gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub complete_reason: Option<String>,
}

impl RecoveryTask {
    pub(super) fn new(
        site: &str,
        task_id: &str,
        task_type: &str,
        task: Option<&Task>,
    ) -> RecoveryTask {
        RecoveryTask {
            site: site.to_string(),
            task_id: task_id.to_string(),
            // The ZVM's own name for the task when it gives one.
            task_type: task
                .and_then(|t| t.kind.clone())
                .filter(|k| !k.is_empty())
                .unwrap_or_else(|| task_type.to_string()),
            state: task.and_then(Task::state).map(Code::task_state),
            progress: task.and_then(Task::progress),
            complete_reason: task
                .and_then(|t| t.complete_reason.clone())
                .filter(|r| !r.is_empty()),
        }
    }

    pub(super) fn state_text(&self) -> String {
        self.state
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_else(|| "unknown".into())
    }
}

/// The progress watcher of one task of a recovery.
pub(super) fn watch<'a>(
    sink: &'a dyn ProgressSink,
    site: &'a str,
    point: &'a RecoveryPoint,
    task_type: &'a str,
) -> Watch<'a> {
    Watch {
        sink,
        site,
        vpg_id: &point.vpg_id,
        vpg_name: &point.vpg_name,
        task_type,
        began: Instant::now(),
    }
}

/// How a recovery task ended.
pub(crate) enum Ended {
    /// Completed.
    Completed(RecoveryTask),
    /// Still running when waiting stopped.
    StillRunning(RecoveryTask),
    /// Failed or Stopped ([`RecoveryTask::failed`] is the error to give).
    Failed(RecoveryTask),
    /// WaitingForUserInput: a journal VM restore done, waiting for a commit or a rollback.
    Waiting(RecoveryTask),
}

impl RecoveryTask {
    /// The `TaskFailed` error of a task that ended Failed or Stopped, with its `CompleteReason`.
    pub(crate) fn failed(&self) -> RewindError {
        RewindError::TaskFailed {
            site: self.site.clone(),
            task_id: self.task_id.clone(),
            task_type: self.task_type.clone(),
            state: self.state_text(),
            reason: self
                .complete_reason
                .clone()
                .unwrap_or_else(|| "the ZVM gave no reason".into()),
        }
    }
}

/// Waits for a recovery task until it is terminal or `deadline`. An error is only a failure to read
/// the task; how the task itself ended is in the answer.
pub(crate) async fn await_task(
    client: &ZvmClient,
    task_id: &str,
    sent: Instant,
    deadline: Instant,
    watch: &Watch<'_>,
) -> Result<Ended, RewindError> {
    await_task_until(
        client,
        task_id,
        sent,
        deadline,
        watch,
        crate::codes::is_terminal,
    )
    .await
}

/// [`await_task`], ending at the first state `ends` takes: a journal VM restore's ends waiting.
pub(crate) async fn await_task_until(
    client: &ZvmClient,
    task_id: &str,
    sent: Instant,
    deadline: Instant,
    watch: &Watch<'_>,
    ends: fn(i64) -> bool,
) -> Result<Ended, RewindError> {
    watch.report(Stage::Running, Some(task_id), None);
    // A recovery's task (a mount, a failover test) runs for seconds to minutes: the floor is
    // the least, as its first poll is the only one it paces.
    let pace = Pace {
        learnt: None,
        floor: MIN_POLL,
    };
    let waited = wait_task_until(client, task_id, sent, deadline, pace, watch, ends).await;
    let waited = match waited {
        Ok(w) => w,
        Err(e) => {
            watch.report(Stage::Done, Some(task_id), None);
            return Err(e);
        }
    };
    match waited {
        TaskWait::Terminal(task) => {
            watch.report(Stage::Done, Some(task_id), Some(&task));
            let ended = RecoveryTask::new(client.name(), task_id, watch.task_type, Some(&task));
            match task.state() {
                Some(STATE_COMPLETED) => Ok(Ended::Completed(ended)),
                Some(STATE_WAITING_FOR_USER_INPUT) => Ok(Ended::Waiting(ended)),
                _ => Ok(Ended::Failed(ended)),
            }
        }
        TaskWait::StillRunning(last) => Ok(Ended::StillRunning(RecoveryTask::new(
            client.name(),
            task_id,
            watch.task_type,
            last.as_ref(),
        ))),
    }
}
