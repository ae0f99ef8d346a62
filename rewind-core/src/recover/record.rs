//! A recovery's journal record: one line of kind `recovery`, tied to the guard by its change id.

use chrono::Utc;

use super::context::RecoverContext;
use super::note::RecoveryNote;
use super::point::RecoveryPoint;
use super::task::RecoveryTask;
use crate::audit_journal::{
    JournalOutcome, JournalRecord, JournalVerdict, JournalVm, JournalVpg, RecordKind,
};
use crate::protection::VmRef;
use crate::zvm::ZvmClient;

/// One journal record of a recovery.
pub(crate) struct RecoveryRecord<'a> {
    pub(crate) client: &'a ZvmClient,
    pub(crate) action: String,
    pub(crate) vm: &'a VmRef,
    pub(crate) point: &'a RecoveryPoint,
    pub(crate) verdict: JournalVerdict,
    pub(crate) task: Option<&'a RecoveryTask>,
    pub(crate) detail: Option<String>,
    pub(crate) notes: &'a [RecoveryNote],
    pub(crate) details: serde_json::Value,
}

impl RecoveryRecord<'_> {
    /// Appends the record; a journal that cannot be written is returned as a note (the recovery
    /// itself stands).
    pub(crate) async fn append(self, ctx: &RecoverContext<'_>) -> Option<RecoveryNote> {
        let record = JournalRecord {
            time: Utc::now(),
            kind: RecordKind::Recovery,
            agent: ctx.agent.unwrap_or(self.client.principal()).to_string(),
            person: ctx.person.cloned(),
            action: self.action,
            change_id: self.point.change_id.clone(),
            vm: JournalVm::from(self.vm),
            verdict: self.verdict.clone(),
            vpgs: vec![JournalVpg {
                tag: Some(self.point.tag.clone()),
                task_id: self.task.map(|t| t.task_id.clone()),
                task_state: self.task.map(RecoveryTask::state_text),
                checkpoint_id: Some(self.point.checkpoint_id.clone()),
                detail: self.detail,
                ..JournalVpg::new(
                    &self.point.vpg_id,
                    &self.point.vpg_name,
                    JournalOutcome::of_recovery(&self.verdict),
                )
            }],
            // The journal holds each note as its sentence, as the report's JSON does.
            notes: self.notes.iter().map(ToString::to_string).collect(),
            details: Some(self.details),
            attempt: None,
            sites: None,
            approved_by: ctx.approved_by.cloned(),
        };
        match ctx.journal.append_off_runtime(record).await {
            Ok(()) => None,
            Err(e) => {
                // The report's notes carry it to the front; a log line would say it twice.
                tracing::debug!("{e}");
                Some(RecoveryNote::NotJournaled {
                    error: e.to_string(),
                })
            }
        }
    }
}
