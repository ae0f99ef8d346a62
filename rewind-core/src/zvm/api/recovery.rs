//! The writes of a recovery at a VPG or a VM: a failover test (start, stop), an offsite clone
//! (start, abort) and a journal VM restore (start, commit or roll back). Each answers with its Zerto
//! task's identifier and is never sent twice.

use reqwest::Method;

use crate::zvm::answer::task_id_from_body;
use crate::zvm::client::{ZvmClient, segment};
use crate::zvm::error::CallError;
use crate::zvm::wire::{CloneStart, FailoverTestStart, FailoverTestStop, JournalVmRestore};

impl ZvmClient {
    /// `POST /v1/vpgs/{id}/FailoverTest` at `checkpoint_id` for `vm_ids` → the task identifier.
    pub(crate) async fn failover_test_start(
        &self,
        vpg_id: &str,
        checkpoint_id: &str,
        vm_ids: &[&str],
    ) -> Result<String, CallError> {
        let body = FailoverTestStart {
            checkpoint_identifier: checkpoint_id,
            vm_identifiers: vm_ids,
        };
        self.vpg_operation(vpg_id, "FailoverTest", &body).await
    }

    /// `POST /v1/vpgs/{id}/FailoverTestStop` → the task identifier.
    pub(crate) async fn failover_test_stop(
        &self,
        vpg_id: &str,
        success: bool,
        summary: &str,
    ) -> Result<String, CallError> {
        let body = FailoverTestStop {
            failover_test_success: success,
            failover_test_summary: summary,
        };
        self.vpg_operation(vpg_id, "FailoverTestStop", &body).await
    }

    /// `POST /v1/vpgs/{id}/CloneStart` at `checkpoint_id` for `vm_ids` → the task identifier.
    pub(crate) async fn clone_start(
        &self,
        vpg_id: &str,
        checkpoint_id: &str,
        vm_ids: &[&str],
    ) -> Result<String, CallError> {
        let body = CloneStart {
            checkpoint_id,
            vm_identifiers: vm_ids,
        };
        self.vpg_operation(vpg_id, "CloneStart", &body).await
    }

    /// `POST /v1/vpgs/{id}/CloneAbort` (no body) → the abort's task identifier, when the ZVM answers
    /// with one (SW10 documents only a 200).
    pub(crate) async fn clone_abort(&self, vpg_id: &str) -> Result<Option<String>, CallError> {
        let path = format!("/v1/vpgs/{}/CloneAbort", segment(vpg_id));
        let text = self.write(Method::POST, &path, None).await?;
        Ok(task_id_from_body(&text))
    }

    /// `POST /v1/vms/{id}/Restore` → the task identifier.
    pub(crate) async fn journal_vm_restore(
        &self,
        vm_id: &str,
        body: &JournalVmRestore<'_>,
    ) -> Result<String, CallError> {
        let path = format!("/v1/vms/{}/Restore", segment(vm_id));
        self.post_for_task(&path, Some(body)).await
    }

    /// `POST /v1/vms/{id}/RestoreCommit` (`commit`) or `RestoreRollback`, the body the VPG's
    /// identifier as a JSON string → the task identifier.
    pub(crate) async fn end_journal_vm_restore(
        &self,
        vm_id: &str,
        vpg_id: &str,
        commit: bool,
    ) -> Result<String, CallError> {
        let verb = if commit {
            "RestoreCommit"
        } else {
            "RestoreRollback"
        };
        let path = format!("/v1/vms/{}/{verb}", segment(vm_id));
        self.post_for_task(&path, Some(&vpg_id)).await
    }

    /// `POST /v1/vpgs/{id}/{operation}` with `body` → the task identifier.
    async fn vpg_operation(
        &self,
        vpg_id: &str,
        operation: &str,
        body: &impl serde::Serialize,
    ) -> Result<String, CallError> {
        let path = format!("/v1/vpgs/{}/{operation}", segment(vpg_id));
        self.post_for_task(&path, Some(body)).await
    }
}
