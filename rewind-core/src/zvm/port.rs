//! The narrow port between a guard's insert machine and one site's ZVM: the six exchanges an insert
//! needs, each failing with one error type that names its site and request ([`RewindError`]).
//!
//! [`ZvmClient`] is the port of a real (or simulated) ZVM; the machine's own tests script one.

use std::future::Future;

use chrono::{DateTime, Utc};

pub(crate) use super::api::Sent;
use super::client::ZvmClient;
use super::wire::{Checkpoint, Task};
use crate::codes::STATE_IN_PROGRESS;
use crate::error::RewindError;
use crate::way_back::VpgHistory;

/// The exchanges of one VPG's insert with its site's ZVM.
pub(crate) trait InsertPort: Sync {
    /// The configured site.
    fn site(&self) -> &str;

    /// The insert tasks running at the VPG.
    fn running_inserts(
        &self,
        vpg_id: &str,
    ) -> impl Future<Output = Result<Vec<Task>, RewindError>> + Send;

    /// The VPG's recent insert tasks, running or ended.
    fn inserts(&self, vpg_id: &str) -> impl Future<Output = Result<Vec<Task>, RewindError>> + Send;

    /// Sends the insert of a checkpoint tagged `tag`, once.
    fn insert(
        &self,
        vpg_id: &str,
        tag: &str,
    ) -> impl Future<Output = Result<Sent, RewindError>> + Send;

    /// Reads one task.
    fn task(&self, task_id: &str) -> impl Future<Output = Result<Task, RewindError>> + Send;

    /// How much history the VPG's journal keeps, for the tag's way back.
    fn history(&self, vpg_id: &str)
    -> impl Future<Output = Result<VpgHistory, RewindError>> + Send;

    /// The VPG's checkpoints from `since` on (the ZVM's clock), or all of them.
    fn checkpoints_since(
        &self,
        vpg_id: &str,
        since: Option<DateTime<Utc>>,
    ) -> impl Future<Output = Result<Vec<Checkpoint>, RewindError>> + Send;
}

/// A client alone is a port without shared reads: what a recovery's task waits use.
impl InsertPort for ZvmClient {
    fn site(&self) -> &str {
        self.name()
    }

    async fn running_inserts(&self, vpg_id: &str) -> Result<Vec<Task>, RewindError> {
        Ok(inserts_into(&self.insert_tasks(true).await?, vpg_id, true))
    }

    async fn inserts(&self, vpg_id: &str) -> Result<Vec<Task>, RewindError> {
        Ok(inserts_into(
            &self.insert_tasks(false).await?,
            vpg_id,
            false,
        ))
    }

    async fn insert(&self, vpg_id: &str, tag: &str) -> Result<Sent, RewindError> {
        ZvmClient::insert(self, vpg_id, tag).await
    }

    async fn task(&self, task_id: &str) -> Result<Task, RewindError> {
        ZvmClient::task(self, task_id).await
    }

    async fn history(&self, vpg_id: &str) -> Result<VpgHistory, RewindError> {
        self.vpg_history(vpg_id).await
    }

    async fn checkpoints_since(
        &self,
        vpg_id: &str,
        since: Option<DateTime<Utc>>,
    ) -> Result<Vec<Checkpoint>, RewindError> {
        self.checkpoints(vpg_id, since).await
    }
}

/// The inserts into `vpg_id` among `tasks` (only those still running when `running_only`): filtered
/// here as well, since a ZVM that ignores a filter must not make another task look like ours.
pub(crate) fn inserts_into(tasks: &[Task], vpg_id: &str, running_only: bool) -> Vec<Task> {
    tasks
        .iter()
        .filter(|t| t.is_insert() && t.concerns_vpg(vpg_id))
        .filter(|t| !running_only || t.state() == Some(STATE_IN_PROGRESS))
        .cloned()
        .collect()
}
