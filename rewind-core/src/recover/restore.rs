//! Journal VM restore from a change's tag: the VM rewound to the tagged checkpoint of a VPG whose
//! journal is at the VM's own site, as a new VM beside it or in place, and then a person's commit
//! or rollback. Each step is one Zerto task, journaled with the person and the agent.
//!
//! - Restore: `POST /v1/vms/{id}/Restore {vpgIdentifier, checkpointIdentifier, restoredVmName?,
//!   commitPolicy: 0, shutdownPolicy: 0, timeToWaitBeforeContinueInSeconds}`. Commit policy 0 is
//!   Rollback (the zvml SDK's `ZertoCommitPolicy`): a restore nobody commits rolls back by itself
//!   once `[recover] restore_wait_secs` passes. rewind never sends a policy that commits. Its task is
//!   read until it waits for a person (state 2, WaitingForUserInput) or ends.
//! - Refused before anything is sent: no VPG with the tag keeps its journal at the VM's site, that
//!   VPG is not protecting (a sync), the tag is only in a retention set, or a restore of the VM that
//!   rewind journaled still waits.
//! - Commit or rollback: the restore this machine journaled for the VM, checked waiting at Zerto,
//!   gets `POST /v1/vms/{id}/RestoreCommit` or `RestoreRollback` with its VPG's identifier; that
//!   task is read until it ends.

use std::time::Instant;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::context::{RecoverContext, client_of};
use super::point::{RecoveryPoint, preference, resolve, task_site};
use super::report::{RecoveryOperation, RecoveryTaskReport, RestoreTarget, action_of};
use super::request::check_change;
use super::vpg_task::Op;
use crate::audit_journal::{JournalFilter, JournalRecord, JournalVerdict, JournalVm, RecordKind};
use crate::codes::STATE_WAITING_FOR_USER_INPUT;
use crate::error::{RecoveryRefusal, RewindError};
use crate::progress::ProgressSink;
use crate::protection::{Protection, VmRef};
use crate::zvm::wire::{
    JournalVmRestore, RESTORE_COMMIT_POLICY_ROLLBACK, RESTORE_COMMIT_TASK_TYPE,
    RESTORE_ROLLBACK_TASK_TYPE, RESTORE_TASK_TYPE,
};

/// The longest name of a VM restored beside the original.
pub const MAX_RESTORED_NAME: usize = 80;
/// How far back the journal is read for a restore still waiting.
const OPEN_RESTORES_SINCE: chrono::Duration = chrono::Duration::days(30);

/// What [`crate::Rewind::restore_vm`] is asked to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RestoreRequest {
    /// The VM: name, host name, IP address or vmIdentifier.
    pub vm: String,
    /// The change id of the guard (the newest tag of that change is used), or a tag exactly.
    pub change: String,
    /// Beside the VM as a new VM, or in place.
    pub target: RestoreTarget,
}

/// A restore rewind journaled that waits for a commit or a rollback.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct WaitingRestore {
    /// The VM.
    pub vm: String,
    /// Its identifier.
    pub vm_id: String,
    /// The change restored to.
    pub change_id: String,
    /// The VPG whose journal it came from.
    pub vpg_name: String,
    /// The checkpoint restored.
    pub checkpoint_id: Option<String>,
    /// What the restore's journal record says was done (`restore vm as NAME`, `restore vm in
    /// place`).
    pub action: String,
    /// The restore's task.
    pub task_id: String,
    /// The task's state at Zerto now.
    pub task_state: String,
    /// When the restore was journaled waiting.
    pub waiting_since: DateTime<Utc>,
    /// When Zerto rolls it back by itself if nobody commits it (about).
    pub rolls_back_at: Option<DateTime<Utc>>,
    /// Who asked for it.
    pub agent: String,
    /// The person it was asked for.
    pub person: Option<String>,
}

/// The result of [`crate::Rewind::restore_status`].
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RestoreStatus {
    /// Each restore that waits, oldest first.
    pub waiting: Vec<WaitingRestore>,
}

impl RestoreTarget {
    fn check(&self) -> Result<(), RewindError> {
        let RestoreTarget::Alongside { name } = self else {
            return Ok(());
        };
        let problem = if name.trim().is_empty() {
            Some("it is empty; give the new VM's name".to_string())
        } else if name.chars().count() > MAX_RESTORED_NAME {
            Some(format!("it is longer than {MAX_RESTORED_NAME} characters"))
        } else if name.chars().any(char::is_control) {
            Some("it contains a control character".to_string())
        } else {
            None
        };
        match problem {
            Some(problem) => Err(RewindError::InvalidInput {
                field: "as",
                problem,
            }),
            None => Ok(()),
        }
    }
}

/// Runs [`crate::Rewind::restore_vm`].
pub(crate) async fn restore_vm(
    ctx: &RecoverContext<'_>,
    req: &RestoreRequest,
    sink: &dyn ProgressSink,
) -> Result<RecoveryTaskReport, RewindError> {
    let began = Instant::now();
    let change = check_change(&req.change)?;
    crate::protection::validate_query(&req.vm)?;
    req.target.check()?;
    let (protection, points) = resolve(ctx, &req.vm, change).await?;
    let point = restorable(&protection, &points)?;
    if let Some(open) = open_restores(ctx, &protection.vm.id)?.into_iter().next() {
        return Err(RewindError::NotPossible {
            reason: RecoveryRefusal::RestoreWaiting {
                vm: protection.vm.name.clone(),
                change: open.change_id,
                task: open
                    .vpgs
                    .first()
                    .and_then(|v| v.task_id.clone())
                    .unwrap_or_default(),
            },
        });
    }
    let client = client_of(ctx, &task_site(point))?;
    let name = match &req.target {
        RestoreTarget::Alongside { name } => Some(name.trim()),
        RestoreTarget::InPlace => None,
    };
    let body = JournalVmRestore {
        vpg_identifier: &point.vpg_id,
        checkpoint_identifier: &point.checkpoint_id,
        restored_vm_name: name,
        commit_policy: RESTORE_COMMIT_POLICY_ROLLBACK,
        shutdown_policy: 0,
        time_to_wait_before_continue_in_seconds: ctx.config.recover.restore_wait.as_secs(),
    };
    let sent = Instant::now();
    let asked = client.journal_vm_restore(&protection.vm.id, &body).await;
    let op = Op {
        ctx,
        client: &client,
        vm: &protection.vm,
        point,
        operation: RecoveryOperation::RestoreVm {
            target: req.target.clone(),
        },
        task_type: RESTORE_TASK_TYPE,
        request: format!("POST /v1/vms/{}/Restore", protection.vm.id),
        sink,
        began,
        notes: Vec::new(),
    };
    op.finish(asked.map(Some), sent).await
}

/// Runs [`crate::Rewind::restore_declined`]: journals that the person did not approve the restore
/// an agent proposed. Nothing is sent to any ZVM but the lookup that names the VM.
pub(crate) async fn declined(
    ctx: &RecoverContext<'_>,
    req: &RestoreRequest,
    why: &str,
) -> Result<(), RewindError> {
    let vm = match ctx.find_protection(&req.vm).await {
        Ok(p) => JournalVm::from(&p.vm),
        // The VM as the agent named it: the refusal is journaled however the lookup went.
        Err(_) => JournalVm {
            id: req.vm.trim().to_string(),
            name: req.vm.trim().to_string(),
            ip_addresses: Vec::new(),
            site: String::new(),
        },
    };
    let record = JournalRecord {
        time: Utc::now(),
        kind: RecordKind::Recovery,
        agent: ctx.agent.unwrap_or("an agent").to_string(),
        person: ctx.person.cloned(),
        action: action_of(&req.target),
        change_id: req.change.trim().to_string(),
        vm,
        verdict: JournalVerdict::Declined,
        vpgs: Vec::new(),
        notes: vec![why.to_string()],
        details: Some(serde_json::json!({"operation": "restore_vm", "target": req.target})),
        attempt: None,
        sites: None,
        approved_by: None,
    };
    Ok(ctx.journal.append_off_runtime(record).await?)
}

/// The tagged checkpoint to restore from: a VPG whose journal is at the VM's own site, holds the
/// tag, and protects the VM now.
fn restorable<'a>(
    protection: &Protection,
    points: &'a [RecoveryPoint],
) -> Result<&'a RecoveryPoint, RewindError> {
    let local: Vec<&RecoveryPoint> = preference(points)
        .into_iter()
        .filter(|p| p.locally_replicated)
        .collect();
    let Some(&point) = local.first() else {
        let vpgs = points
            .iter()
            .map(|p| format!("{} (journal at {})", p.vpg_name, p.recovery_site))
            .collect();
        return Err(RewindError::NotPossible {
            reason: RecoveryRefusal::RestoreNeedsLocalJournal {
                vm: protection.vm.name.clone(),
                site: protection.vm.site.to_string(),
                vpgs,
            },
        });
    };
    let point = local
        .iter()
        .find(|p| p.retention_set.is_none())
        .copied()
        .unwrap_or(point);
    point.in_journal()?;
    let vpg = protection.vpgs.iter().find(|v| v.vpg_id == point.vpg_id);
    if let Some(v) = vpg.filter(|v| !v.protecting) {
        return Err(RewindError::NotPossible {
            reason: RecoveryRefusal::RestoreVpgNotProtecting {
                vpg: v.vpg_name.clone(),
                why: v
                    .reason
                    .clone()
                    .unwrap_or_else(|| format!("status {}, substatus {}", v.status, v.substatus)),
            },
        });
    }
    Ok(point)
}

/// Runs [`crate::Rewind::restore_commit`] (`commit`) or [`crate::Rewind::restore_rollback`].
pub(crate) async fn end_restore(
    ctx: &RecoverContext<'_>,
    vm: &str,
    commit: bool,
    sink: &dyn ProgressSink,
) -> Result<RecoveryTaskReport, RewindError> {
    let began = Instant::now();
    crate::protection::validate_query(vm)?;
    let protection = ctx.find_protection(vm).await?;
    let Some(open) = open_restores(ctx, &protection.vm.id)?.into_iter().last() else {
        return Err(nothing_waits(&protection.vm));
    };
    let point = journaled_point(&protection, &open)?;
    let client = client_of(ctx, &task_site(&point))?;
    let task_id = open.vpgs.first().and_then(|v| v.task_id.clone());
    let task_id = task_id.ok_or_else(|| nothing_waits(&protection.vm))?;
    let task = client.task(&task_id).await?;
    if task.state() != Some(STATE_WAITING_FOR_USER_INPUT) {
        return Err(RewindError::NotPossible {
            reason: RecoveryRefusal::RestoreNoLongerWaiting {
                vm: protection.vm.name.clone(),
                task: task_id,
                state: state_text(task.state()),
            },
        });
    }
    let sent = Instant::now();
    let asked = client
        .end_journal_vm_restore(&protection.vm.id, &point.vpg_id, commit)
        .await;
    let (operation, task_type, verb) = match commit {
        true => (
            RecoveryOperation::RestoreCommit,
            RESTORE_COMMIT_TASK_TYPE,
            "RestoreCommit",
        ),
        false => (
            RecoveryOperation::RestoreRollback,
            RESTORE_ROLLBACK_TASK_TYPE,
            "RestoreRollback",
        ),
    };
    let op = Op {
        ctx,
        client: &client,
        vm: &protection.vm,
        point: &point,
        operation,
        task_type,
        request: format!("POST /v1/vms/{}/{verb}", protection.vm.id),
        sink,
        began,
        notes: Vec::new(),
    };
    op.finish(asked.map(Some), sent).await
}

/// Runs [`crate::Rewind::restore_status`]: each restore this machine journaled that has not been
/// committed or rolled back, with its task's state at Zerto now.
pub(crate) async fn restore_status(ctx: &RecoverContext<'_>) -> Result<RestoreStatus, RewindError> {
    let mut waiting = Vec::new();
    for record in open_restores(ctx, "")? {
        let Some(vpg) = record.vpgs.first() else {
            continue;
        };
        let task_id = vpg.task_id.clone().unwrap_or_default();
        let state = match ctx
            .configured
            .iter()
            .find(|s| s.name() == task_site_of(&record))
        {
            Some(site) => match site.client().task(&task_id).await {
                Ok(task) => state_text(task.state()),
                Err(e) => format!("unknown ({})", e.in_brief()),
            },
            None => "unknown (its site is not configured)".to_string(),
        };
        let wait = chrono::Duration::from_std(ctx.config.recover.restore_wait).ok();
        waiting.push(WaitingRestore {
            vm: record.vm.name.clone(),
            vm_id: record.vm.id.clone(),
            change_id: record.change_id.clone(),
            vpg_name: vpg.vpg_name.clone(),
            checkpoint_id: vpg.checkpoint_id.clone(),
            action: record.action.clone(),
            task_id,
            task_state: state,
            waiting_since: record.time,
            rolls_back_at: wait.map(|w| record.time + w),
            agent: record.agent.clone(),
            person: record.person.as_ref().map(|p| p.subject.clone()),
        });
    }
    Ok(RestoreStatus { waiting })
}

/// The configured site a restore record's task runs at.
fn task_site_of(record: &JournalRecord) -> String {
    record
        .details
        .as_ref()
        .and_then(|d| d.get("site"))
        .and_then(|s| s.as_str())
        .unwrap_or_default()
        .to_string()
}

/// The restores this machine journaled for the VM `vm_id` (every VM when empty) that wait: a
/// `waiting` restore record with no commit or rollback of that VM after it. Oldest first.
fn open_restores(ctx: &RecoverContext<'_>, vm_id: &str) -> Result<Vec<JournalRecord>, RewindError> {
    let filter = JournalFilter {
        vm: (!vm_id.is_empty()).then(|| vm_id.to_string()),
        since: Some(Utc::now() - OPEN_RESTORES_SINCE),
        ..JournalFilter::default()
    };
    let read = ctx.journal.read(&filter)?;
    let mut open: Vec<JournalRecord> = Vec::new();
    for r in read
        .records
        .into_iter()
        .filter(|r| r.kind == RecordKind::Recovery)
    {
        let ends = r.action == "restore commit" || r.action == "restore rollback";
        if r.action.starts_with("restore vm") && r.verdict == JournalVerdict::Waiting {
            open.push(r);
        } else if ends && r.verdict == JournalVerdict::Completed {
            open.retain(|o| o.vm.id != r.vm.id);
        }
    }
    Ok(open)
}

/// The tagged checkpoint a journaled restore came from, as a point of the VM's VPG now.
fn journaled_point(
    protection: &Protection,
    record: &JournalRecord,
) -> Result<RecoveryPoint, RewindError> {
    let journaled = record.vpgs.first();
    let vpg = journaled
        .and_then(|j| protection.vpgs.iter().find(|v| v.vpg_id == j.vpg_id))
        .ok_or_else(|| nothing_waits(&protection.vm))?;
    let journaled = journaled.ok_or_else(|| nothing_waits(&protection.vm))?;
    Ok(RecoveryPoint {
        vpg_id: vpg.vpg_id.clone(),
        vpg_name: vpg.vpg_name.clone(),
        checkpoint_id: journaled.checkpoint_id.clone().unwrap_or_default(),
        timestamp: journaled.checkpoint_time,
        tag: journaled.tag.clone().unwrap_or_default(),
        change_id: record.change_id.clone(),
        protected_site: vpg.protected_site.clone(),
        recovery_site: vpg.recovery_site.clone(),
        locally_replicated: vpg.locally_replicated,
        flr: vpg.flr.clone(),
        listed_by: vpg.zvm_site.clone(),
        retention_set: None,
    })
}

/// A task state as people read it: `WaitingForUserInput (2)`.
fn state_text(state: Option<i64>) -> String {
    match state {
        Some(s) => format!("{} ({s})", crate::codes::Code::task_state(s).name),
        None => "unknown".to_string(),
    }
}

fn nothing_waits(vm: &VmRef) -> RewindError {
    RewindError::NotPossible {
        reason: RecoveryRefusal::NoRestoreWaiting {
            vm: vm.name.clone(),
        },
    }
}
