//! `/v1/tasks` (Zerto tasks, one or by type) and the insert of a tagged checkpoint, the write a
//! guard sends.

use crate::error::RewindError;
use crate::zvm::client::{ZvmClient, segment};
use crate::zvm::error::CallError;
use crate::zvm::wire::{INSERT_TASK_TYPE, InsertCheckpoint, Task};

/// What sending an insert came to, when the ZVM did not refuse it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Sent {
    /// The ZVM took it: its task id.
    Task(String),
    /// It may or may not have happened (no answer, one that could not be read, a 5xx): what
    /// happened to it, in words for a note.
    Unknown(String),
}

impl ZvmClient {
    /// `GET /v1/tasks/{id}`.
    pub async fn task(&self, task_id: &str) -> Result<Task, RewindError> {
        self.get_json(&format!("/v1/tasks/{}", segment(task_id)), &[])
            .await
    }

    /// `GET /v1/tasks?type=InsertTaggedCP` (and `status=1` when `running_only`): every VPG's.
    pub(crate) async fn insert_tasks(&self, running_only: bool) -> Result<Vec<Task>, RewindError> {
        let mut query = vec![("type", INSERT_TASK_TYPE.to_string())];
        if running_only {
            query.push(("status", "1".to_string()));
        }
        self.get_list("/v1/tasks", &query).await
    }

    /// `GET /v1/tasks?type=<kind>`, reduced to tasks of that type (a ZVM that ignores the filter must
    /// not make another task look like the one looked for).
    pub async fn tasks_of_type(&self, kind: &str) -> Result<Vec<Task>, RewindError> {
        let tasks: Vec<Task> = self
            .get_list("/v1/tasks", &[("type", kind.to_string())])
            .await?;
        Ok(tasks.into_iter().filter(|t| t.is_type(kind)).collect())
    }

    /// `POST /v1/vpgs/{id}/checkpoints`, its answer as the insert machine reads it: an outcome that
    /// may or may not have happened is an answer, not an error.
    pub(crate) async fn insert(&self, vpg_id: &str, tag: &str) -> Result<Sent, RewindError> {
        match self.insert_tagged_checkpoint(vpg_id, tag).await {
            Ok(task_id) => Ok(Sent::Task(task_id)),
            Err(e) if e.outcome_unknown() => Ok(Sent::Unknown(e.what_happened_to("the insert"))),
            Err(e) => Err(e.at(self, &format!("POST /v1/vpgs/{vpg_id}/checkpoints"))),
        }
    }

    /// `POST /v1/vpgs/{id}/checkpoints {"CheckpointName": tag}` → the insert's task id. Never retried
    /// here unless the request provably did not leave: a lost answer is the caller's to reconcile.
    async fn insert_tagged_checkpoint(&self, vpg_id: &str, tag: &str) -> Result<String, CallError> {
        self.post_for_task(
            &format!("/v1/vpgs/{}/checkpoints", segment(vpg_id)),
            Some(&InsertCheckpoint {
                checkpoint_name: tag,
            }),
        )
        .await
    }
}
