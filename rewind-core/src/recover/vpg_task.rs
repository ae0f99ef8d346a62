//! Failover test and offsite clone of a VM at a tagged checkpoint: each one Zerto task on one VPG.
//!
//! - Failover test start: `POST /v1/vpgs/{id}/FailoverTest {CheckpointIdentifier, VmIdentifiers: [vm]}`
//!   at the VPG picked for the change (see the module above); its task is read until terminal.
//! - Failover test stop: the VPG of the change whose `ActiveProcessesApi.RunningFailOverTestApi` shows a
//!   test gets `POST .../FailoverTestStop {FailoverTestSuccess, FailoverTestSummary}`; its task is read
//!   until terminal.
//! - Clone start: `POST .../CloneStart {CheckpointId, VmIdentifiers: [vm]}`; its task is read until
//!   terminal.
//! - Clone abort: the VPG of the change with a `Clone` task in progress gets `POST .../CloneAbort`; the
//!   abort's task (when the ZVM answers with one), else the clone's own task, is read until terminal.
//!
//! Only the VM asked for is tested or cloned, not the other VMs of its VPG.

use std::sync::Arc;
use std::time::Instant;

use super::context::{RecoverContext, client_of, recovery_wait};
use super::note::RecoveryNote;
use super::point::{RecoveryPoint, preference, resolve, task_site};
use super::record::RecoveryRecord;
use super::report::{CloneVm, RecoveryOperation, RecoveryTaskReport, RecoveryVerdict, action_of};
use super::request::{CloneAction, FailoverTestAction, check_change};
use super::task::{Ended, RecoveryTask, await_task, await_task_until, watch};
use crate::audit_journal::JournalVerdict;
use crate::codes::{STATE_IN_PROGRESS, STATE_WAITING_FOR_USER_INPUT as STATE_WAITING, is_terminal};
use crate::error::{RecoveryRefusal, RewindError};
use crate::progress::ProgressSink;
use crate::protection::VmRef;
use crate::zvm::wire::{CLONE_TASK_TYPE, FAILOVER_TEST_TASK_TYPE, STOP_FAILOVER_TEST_TASK_TYPE};
use crate::zvm::{CallError, ZvmClient};

/// The longest failover test summary accepted.
pub const MAX_SUMMARY: usize = 1000;

/// Runs [`crate::Rewind::failover_test`].
pub(crate) async fn failover_test(
    ctx: &RecoverContext<'_>,
    vm: &str,
    change: &str,
    action: &FailoverTestAction,
    sink: &dyn ProgressSink,
) -> Result<RecoveryTaskReport, RewindError> {
    let began = Instant::now();
    let change = check_change(change)?;
    crate::protection::validate_query(vm)?;
    if let FailoverTestAction::Stop { summary, .. } = action {
        check_summary(summary)?;
    }
    let (protection, points) = resolve(ctx, vm, change).await?;
    match action {
        FailoverTestAction::Start => {
            start(
                ctx,
                &protection.vm,
                &points,
                Start::FailoverTest,
                sink,
                began,
            )
            .await
        }
        FailoverTestAction::Stop { success, summary } => {
            let (point, client, notes) = running_test(ctx, &protection.vm, &points).await?;
            let sent = Instant::now();
            let asked = client
                .failover_test_stop(&point.vpg_id, *success, summary.trim())
                .await;
            let op = Op {
                ctx,
                client: &client,
                vm: &protection.vm,
                point,
                operation: RecoveryOperation::FailoverTestStop {
                    success: *success,
                    summary: summary.trim().to_string(),
                },
                task_type: STOP_FAILOVER_TEST_TASK_TYPE,
                request: format!("POST /v1/vpgs/{}/FailoverTestStop", point.vpg_id),
                sink,
                began,
                notes,
            };
            op.finish(asked.map(Some), sent).await
        }
    }
}

/// Runs [`crate::Rewind::offsite_clone`].
pub(crate) async fn clone(
    ctx: &RecoverContext<'_>,
    vm: &str,
    change: &str,
    action: CloneAction,
    sink: &dyn ProgressSink,
) -> Result<RecoveryTaskReport, RewindError> {
    let began = Instant::now();
    let change = check_change(change)?;
    crate::protection::validate_query(vm)?;
    let (protection, points) = resolve(ctx, vm, change).await?;
    match action {
        CloneAction::Start => start(ctx, &protection.vm, &points, Start::Clone, sink, began).await,
        CloneAction::Abort => {
            let (point, client, clone_task) = running_clone(ctx, &protection.vm, &points).await?;
            let sent = Instant::now();
            let asked = client.clone_abort(&point.vpg_id).await;
            let mut notes = Vec::new();
            // An abort answered with the clone's own task id, or with none, is followed through the
            // clone's task, which ends Stopped (or Failed) when the abort worked: that is the
            // expected end, not a failure. An abort with a task of its own is followed like any other.
            let follow_clone = match &asked {
                Ok(None) => {
                    notes.push(RecoveryNote::AbortWithoutTask {
                        clone_task: clone_task.clone(),
                    });
                    true
                }
                Ok(Some(id)) => id == &clone_task,
                Err(_) => false,
            };
            let op = Op {
                ctx,
                client: &client,
                vm: &protection.vm,
                point,
                operation: RecoveryOperation::CloneAbort,
                task_type: if follow_clone {
                    CLONE_TASK_TYPE
                } else {
                    "CloneAbort"
                },
                request: format!("POST /v1/vpgs/{}/CloneAbort", point.vpg_id),
                sink,
                began,
                notes,
            };
            if follow_clone {
                op.follow_aborted_clone(&clone_task, sent).await
            } else {
                op.finish(asked, sent).await
            }
        }
    }
}

/// The two operations that start at the change's tagged checkpoint: the same steps, another call.
#[derive(Debug, Clone, Copy)]
enum Start {
    /// `POST /v1/vpgs/{id}/FailoverTest`.
    FailoverTest,
    /// `POST /v1/vpgs/{id}/CloneStart`.
    Clone,
}

impl Start {
    /// The last segment of the request's path.
    fn action(self) -> &'static str {
        match self {
            Start::FailoverTest => "FailoverTest",
            Start::Clone => "CloneStart",
        }
    }

    /// The operation as the journal and the report name it.
    fn operation(self) -> RecoveryOperation {
        match self {
            Start::FailoverTest => RecoveryOperation::FailoverTestStart,
            Start::Clone => RecoveryOperation::CloneStart,
        }
    }

    /// The `Type` of the task it starts.
    fn task_type(self) -> &'static str {
        match self {
            Start::FailoverTest => FAILOVER_TEST_TASK_TYPE,
            Start::Clone => CLONE_TASK_TYPE,
        }
    }

    /// Sends it → the task identifier.
    async fn send(
        self,
        client: &ZvmClient,
        point: &RecoveryPoint,
        vm_ids: &[&str],
    ) -> Result<String, CallError> {
        match self {
            Start::FailoverTest => {
                client
                    .failover_test_start(&point.vpg_id, &point.checkpoint_id, vm_ids)
                    .await
            }
            Start::Clone => {
                client
                    .clone_start(&point.vpg_id, &point.checkpoint_id, vm_ids)
                    .await
            }
        }
    }
}

/// Starts a failover test or a clone of `vm` alone at the preferred tagged checkpoint of the change
/// (a locally replicated VPG first), and reads its task until it is terminal.
async fn start(
    ctx: &RecoverContext<'_>,
    vm: &VmRef,
    points: &[RecoveryPoint],
    how: Start,
    sink: &dyn ProgressSink,
    began: Instant,
) -> Result<RecoveryTaskReport, RewindError> {
    // A failover test or clone needs the tag in a journal: a VPG whose journal still holds it first.
    let ordered = preference(points);
    let point = ordered
        .iter()
        .find(|p| p.retention_set.is_none())
        .copied()
        .unwrap_or(ordered[0]);
    point.in_journal()?;
    let client = client_of(ctx, &task_site(point))?;
    let sent = Instant::now();
    let asked = how.send(&client, point, &[vm.id.as_str()]).await;
    let op = Op {
        ctx,
        client: &client,
        vm,
        point,
        operation: how.operation(),
        task_type: how.task_type(),
        request: format!("POST /v1/vpgs/{}/{}", point.vpg_id, how.action()),
        sink,
        began,
        notes: Vec::new(),
    };
    op.finish(asked.map(Some), sent).await
}

fn check_summary(summary: &str) -> Result<(), RewindError> {
    let problem = if summary.chars().count() > MAX_SUMMARY {
        Some(format!(
            "it is longer than {MAX_SUMMARY} characters; shorten it"
        ))
    } else if summary
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        Some("it contains a control character other than a newline or tab".to_string())
    } else {
        None
    };
    match problem {
        Some(problem) => Err(RewindError::InvalidInput {
            field: "summary",
            problem,
        }),
        None => Ok(()),
    }
}

/// The VPG of the change where a failover test is running, and the client to stop it with.
async fn running_test<'a>(
    ctx: &RecoverContext<'_>,
    vm: &VmRef,
    points: &'a [RecoveryPoint],
) -> Result<(&'a RecoveryPoint, Arc<ZvmClient>, Vec<RecoveryNote>), RewindError> {
    let mut running = Vec::new();
    let mut looked = Vec::new();
    for p in preference(points) {
        let client = client_of(ctx, &task_site(p))?;
        let vpg = client.vpg(&p.vpg_id).await?;
        match vpg.running_failover_test() {
            Some(stage) => running.push((p, client, stage.to_string())),
            None => looked.push(p.vpg_name.clone()),
        }
    }
    let mut running = running.into_iter();
    let Some((point, client, stage)) = running.next() else {
        return Err(RewindError::NotPossible {
            reason: RecoveryRefusal::NoFailoverTest {
                vm: vm.name.clone(),
                looked,
            },
        });
    };
    let mut notes = vec![RecoveryNote::TestStage { stage }];
    for (other, _, _) in running {
        notes.push(RecoveryNote::OtherTestRunning {
            vpg_name: other.vpg_name.clone(),
        });
    }
    Ok((point, client, notes))
}

/// The VPG of the change with a clone in progress, its client, and the clone's task.
async fn running_clone<'a>(
    ctx: &RecoverContext<'_>,
    vm: &VmRef,
    points: &'a [RecoveryPoint],
) -> Result<(&'a RecoveryPoint, Arc<ZvmClient>, String), RewindError> {
    let mut looked = Vec::new();
    for p in preference(points) {
        let client = client_of(ctx, &task_site(p))?;
        let tasks = client.tasks_of_type(CLONE_TASK_TYPE).await?;
        let running = tasks
            .into_iter()
            .find(|t| t.concerns_vpg(&p.vpg_id) && t.state() == Some(STATE_IN_PROGRESS));
        if let Some(id) = running.and_then(|t| t.task_identifier) {
            return Ok((p, client, id));
        }
        looked.push(format!("{} (at site {})", p.vpg_name, client.name()));
    }
    Err(RewindError::NotPossible {
        reason: RecoveryRefusal::NoClone {
            vm: vm.name.clone(),
            looked,
        },
    })
}

/// One operation sent, to be waited for, journaled and reported.
pub(super) struct Op<'a> {
    pub(super) ctx: &'a RecoverContext<'a>,
    pub(super) client: &'a ZvmClient,
    pub(super) vm: &'a VmRef,
    pub(super) point: &'a RecoveryPoint,
    pub(super) operation: RecoveryOperation,
    pub(super) task_type: &'a str,
    pub(super) request: String,
    pub(super) sink: &'a dyn ProgressSink,
    pub(super) began: Instant,
    pub(super) notes: Vec<RecoveryNote>,
}

impl Op<'_> {
    /// Waits for the task the write answered with, journals and reports.
    pub(super) async fn finish(
        self,
        asked: Result<Option<String>, CallError>,
        sent: Instant,
    ) -> Result<RecoveryTaskReport, RewindError> {
        let task_id = match asked {
            Ok(Some(id)) => id,
            Ok(None) => {
                let e = RewindError::UnexpectedResponse {
                    site: self.client.name().to_string(),
                    request: self.request.clone(),
                    detail: "the answer holds no task identifier, so what happened cannot be read"
                        .into(),
                };
                return Err(self
                    .failed_before_task(e, JournalVerdict::OutcomeUnknown)
                    .await);
            }
            Err(e) => {
                let unknown = e.outcome_unknown();
                // Whatever form the doubt takes (no answer, an unreadable one, a 5xx), the advice is
                // the same, and replaces a 5xx's general "try again", which could start it twice.
                let may_have_begun = format!(
                    "the request may have reached the ZVM, so the {} may have begun: look at VPG {} in the ZVM before asking again",
                    self.operation.name(),
                    self.point.vpg_name
                );
                // What the network said, without the advice a read gets.
                let said = e.detail();
                let e = match e.at(self.client, &self.request) {
                    RewindError::Unreachable {
                        site,
                        url,
                        request,
                        cause,
                        url_setting,
                        ..
                    } if unknown => RewindError::Unreachable {
                        detail: format!("{said}; {may_have_begun}"),
                        site,
                        url,
                        request,
                        cause,
                        url_setting,
                    },
                    RewindError::Zvm {
                        site,
                        request,
                        status,
                        message,
                        ..
                    } if unknown => RewindError::Zvm {
                        advice: may_have_begun,
                        site,
                        request,
                        status,
                        message,
                    },
                    RewindError::UnexpectedResponse {
                        site,
                        request,
                        detail,
                    } if unknown => RewindError::UnexpectedResponse {
                        detail: format!("{detail}; {may_have_begun}"),
                        site,
                        request,
                    },
                    other => other,
                };
                let verdict = if unknown {
                    JournalVerdict::OutcomeUnknown
                } else {
                    JournalVerdict::Failed
                };
                return Err(self.failed_before_task(e, verdict).await);
            }
        };
        self.follow(&task_id, sent).await
    }

    /// After an abort that gave no task: the clone's own task, whose Stopped or Failed end is the
    /// abort's success.
    async fn follow_aborted_clone(
        mut self,
        clone_task: &str,
        sent: Instant,
    ) -> Result<RecoveryTaskReport, RewindError> {
        let deadline = sent + recovery_wait(self.ctx);
        let w = watch(self.sink, self.client.name(), self.point, self.task_type);
        let ended = await_task(self.client, clone_task, sent, deadline, &w).await?;
        let (verdict, task) = match ended {
            Ended::Failed(t) => {
                self.notes.push(RecoveryNote::CloneAborted {
                    task_id: t.task_id.clone(),
                    state: t.state_text(),
                });
                (RecoveryVerdict::Completed, t)
            }
            Ended::Completed(t) => {
                self.notes.push(RecoveryNote::CloneAlreadyCompleted);
                (RecoveryVerdict::Completed, t)
            }
            Ended::StillRunning(t) | Ended::Waiting(t) => (RecoveryVerdict::StillRunning, t),
        };
        Ok(self.report(verdict, task).await)
    }

    /// Waits for `task_id`; Failed or Stopped is a `TaskFailed` error.
    async fn follow(self, task_id: &str, sent: Instant) -> Result<RecoveryTaskReport, RewindError> {
        let deadline = sent + recovery_wait(self.ctx);
        let w = watch(self.sink, self.client.name(), self.point, self.task_type);
        // A restore's task ends its part waiting for a person (state 2): that is what is waited for.
        let ends: fn(i64) -> bool = match self.operation {
            RecoveryOperation::RestoreVm { .. } => |s| is_terminal(s) || s == STATE_WAITING,
            _ => is_terminal,
        };
        let awaited = await_task_until(self.client, task_id, sent, deadline, &w, ends).await;
        let ended = match awaited {
            Ok(ended) => ended,
            Err(e) => {
                let e = RewindError::NotPossible {
                    reason: RecoveryRefusal::TaskUnreadable {
                        operation: self.operation.name(),
                        task_id: task_id.to_string(),
                        error: Box::new(e),
                    },
                };
                return Err(self
                    .failed_before_task(e, JournalVerdict::OutcomeUnknown)
                    .await);
            }
        };
        match ended {
            Ended::Completed(t) => Ok(self.report(RecoveryVerdict::Completed, t).await),
            Ended::Waiting(t) => Ok(self.report(RecoveryVerdict::Waiting, t).await),
            Ended::StillRunning(t) => {
                let mut me = self;
                me.notes.push(RecoveryNote::TaskStillRunning {
                    task_id: t.task_id.clone(),
                });
                Ok(me.report(RecoveryVerdict::StillRunning, t).await)
            }
            Ended::Failed(t) => {
                let e = t.failed();
                self.journal(JournalVerdict::Failed, Some(&t), Some(e.to_string()))
                    .await;
                Err(e)
            }
        }
    }

    /// Journals a write that failed before any task could be read, and gives the error back.
    async fn failed_before_task(&self, e: RewindError, verdict: JournalVerdict) -> RewindError {
        self.journal(verdict, None, Some(e.to_string())).await;
        e
    }

    async fn journal(
        &self,
        verdict: JournalVerdict,
        task: Option<&RecoveryTask>,
        detail: Option<String>,
    ) -> Option<RecoveryNote> {
        let action = match &self.operation {
            RecoveryOperation::FailoverTestStart => "failover_test start".to_string(),
            RecoveryOperation::FailoverTestStop { success, .. } => {
                format!("failover_test stop (success: {success})")
            }
            RecoveryOperation::CloneStart => "clone start".to_string(),
            RecoveryOperation::CloneAbort => "clone abort".to_string(),
            RecoveryOperation::RestoreVm { target } => action_of(target),
            RecoveryOperation::RestoreCommit => "restore commit".to_string(),
            RecoveryOperation::RestoreRollback => "restore rollback".to_string(),
        };
        RecoveryRecord {
            client: self.client,
            action,
            vm: self.vm,
            point: self.point,
            verdict,
            task,
            detail,
            notes: &self.notes,
            details: serde_json::json!({
                "operation": self.operation,
                "site": self.client.name(),
            }),
        }
        .append(self.ctx)
        .await
    }

    async fn report(mut self, verdict: RecoveryVerdict, task: RecoveryTask) -> RecoveryTaskReport {
        let journaled = match verdict {
            RecoveryVerdict::Completed => JournalVerdict::Completed,
            RecoveryVerdict::StillRunning => JournalVerdict::StillRunning,
            RecoveryVerdict::Waiting => JournalVerdict::Waiting,
        };
        if let Some(note) = self.journal(journaled, Some(&task), None).await {
            self.notes.push(note);
        }
        let clone_vm = match (&self.operation, verdict) {
            (RecoveryOperation::CloneStart, RecoveryVerdict::Completed) => {
                Some(self.clone_vm().await)
            }
            _ => None,
        };
        RecoveryTaskReport {
            operation: self.operation,
            verdict,
            vm: self.vm.clone(),
            change_id: self.point.change_id.clone(),
            from: self.point.clone(),
            site: self.client.name().to_string(),
            task,
            elapsed_ms: self.began.elapsed().as_millis() as u64,
            clone_vm,
            rolls_back_at: (verdict == RecoveryVerdict::Waiting).then(|| {
                let wait = chrono::Duration::from_std(self.ctx.config.recover.restore_wait);
                chrono::Utc::now() + wait.unwrap_or_default()
            }),
            notes: self.notes,
        }
    }

    /// The VM a Completed clone made: named as Zerto names it, and looked for in the recovery
    /// site's inventory (which lists the VMs no VPG protects, as a new clone is).
    async fn clone_vm(&self) -> CloneVm {
        let name = format!("{}{CLONE_SUFFIX}", self.vm.name);
        let site = &self.point.recovery_site;
        let vm_id = match self.client.site_vms(&site.id).await {
            Ok(vms) => vms
                .iter()
                .find(|v| v.vm_name.as_deref() == Some(name.as_str()))
                .and_then(|v| v.vm_identifier.clone()),
            Err(_) => None,
        };
        CloneVm {
            name,
            vm_id,
            site: site.name.clone(),
        }
    }
}

/// What Zerto adds to a VM's name to name its offsite clone.
const CLONE_SUFFIX: &str = "-clone";
