//! Keeping a change's tags past the journal, on a person's word: an Extended Journal Copy of each
//! VPG's tagged checkpoint of the change.
//!
//! For each VPG whose journal holds the tag: the VPG's repository is looked up
//! (`GET /v1/ltr/health/vpgs`; a VPG without one is said so, with the offsite clone as the way to
//! keep it instead); `POST /v1/ltr/vpgs/{id}/retentionstart {checkpointId}` answers only a task id,
//! which is read to its end; the retention set written is then found by VPG and point in time
//! (`GET /v1/ltr/catalog/fullretentionsets`), with its repository's site (`GET
//! /v1/ltr/catalog/vms/{vm}/retentionsets`), which an FLR of it names. One journal record of kind
//! `keep` holds each set's id, repository and expiry, so the tag list and a recovery find it once
//! the journal has lost the tag.

use std::time::Instant;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::context::{RecoverContext, client_of, recovery_wait};
use super::point::{RecoveryPoint, resolve, task_site};
use super::request::check_change;
use super::task::{Ended, RecoveryTask, await_task, watch};
use crate::audit_journal::{
    JournalOutcome, JournalRecord, JournalVerdict, JournalVm, JournalVpg, RecordKind,
};
use crate::error::{ErrorKind, RewindError};
use crate::progress::{ProgressSink, elapsed_text};
use crate::protection::VmRef;
use crate::way_back::KeptSet;
use crate::zvm::ZvmClient;
use crate::zvm::wire::RETENTION_TASK_TYPE;

/// How far a retention set's point in time may be from its checkpoint's and still be taken as its
/// copy: ZVMs round times to the second.
const SAME_MOMENT_MS: i64 = 1_000;

/// What a keep did.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct KeepReport {
    /// The VM.
    pub vm: VmRef,
    /// The change.
    pub change_id: String,
    /// Each VPG whose journal held the change's tag.
    pub vpgs: Vec<KeptVpg>,
    /// How long it took.
    pub elapsed_ms: u64,
    /// Why the keep could not be journaled (the sets exist; the tag list will not know them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub journal_error: Option<String>,
}

/// One VPG's part of a keep.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct KeptVpg {
    /// The VPG.
    pub vpg_id: String,
    /// Its name.
    pub vpg_name: String,
    /// The tagged checkpoint copied.
    pub checkpoint_id: String,
    /// What came of it.
    #[serde(flatten)]
    pub outcome: KeepOutcome,
}

/// What came of keeping one VPG's tag.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum KeepOutcome {
    /// The checkpoint is in a retention set.
    Kept {
        /// The run's task.
        task: RecoveryTask,
        /// The set.
        retention_set: KeptSet,
    },
    /// An earlier keep already copied it into a set that is still kept.
    AlreadyKept {
        /// The set.
        retention_set: KeptSet,
    },
    /// The VPG has no Extended Journal Copy repository.
    NoRepository {
        /// What to do instead.
        reason: String,
    },
    /// The run's task ended Failed or Stopped.
    Failed {
        /// The task, with its `CompleteReason`.
        task: RecoveryTask,
    },
    /// The run's task was still running when waiting stopped; it was not stopped.
    StillRunning {
        /// The task.
        task: RecoveryTask,
    },
    /// Something else went wrong.
    Error {
        /// Its class.
        kind: ErrorKind,
        /// What went wrong and what to do.
        message: String,
    },
}

impl KeepReport {
    /// How many VPGs' tags are kept now.
    fn kept(&self) -> usize {
        self.vpgs
            .iter()
            .filter(|v| {
                matches!(
                    v.outcome,
                    KeepOutcome::Kept { .. } | KeepOutcome::AlreadyKept { .. }
                )
            })
            .count()
    }

    /// One line for humans.
    pub fn headline(&self) -> String {
        format!(
            "{} of {} VPG(s) of {} keep the tag of change {} past the journal, in {}",
            self.kept(),
            self.vpgs.len(),
            self.vm.name,
            self.change_id,
            elapsed_text(self.elapsed_ms)
        )
    }

    /// The headline, then each VPG.
    pub fn summary(&self) -> String {
        let mut out = self.headline();
        for v in &self.vpgs {
            out.push_str(&format!("\n  {}: {}", v.vpg_name, v.outcome));
        }
        if let Some(e) = &self.journal_error {
            out.push_str(&format!("\n  note: {e}"));
        }
        out
    }

    /// The class of a keep that kept no VPG's tag, or could not be journaled; `None` when it kept
    /// at least one and was journaled.
    pub fn error_kind(&self) -> Option<ErrorKind> {
        if self.journal_error.is_some() {
            return Some(ErrorKind::Internal);
        }
        if self.kept() > 0 {
            return None;
        }
        Some(
            self.vpgs
                .iter()
                .map(|v| match &v.outcome {
                    KeepOutcome::Failed { .. } => ErrorKind::TaskFailed,
                    KeepOutcome::StillRunning { .. } => ErrorKind::StillRunning,
                    KeepOutcome::Error { kind, .. } => *kind,
                    _ => ErrorKind::Refused,
                })
                .next()
                .unwrap_or(ErrorKind::Refused),
        )
    }
}

impl std::fmt::Display for KeepOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeepOutcome::Kept { retention_set, .. } => {
                write!(f, "kept in {}", set_words(retention_set))
            }
            KeepOutcome::AlreadyKept { retention_set } => {
                write!(f, "already kept in {}", set_words(retention_set))
            }
            KeepOutcome::NoRepository { reason } => f.write_str(reason),
            KeepOutcome::Failed { task } => write!(
                f,
                "task {} ended {}: {}",
                task.task_id,
                task.state_text(),
                task.complete_reason.as_deref().unwrap_or("no reason given")
            ),
            KeepOutcome::StillRunning { task } => write!(
                f,
                "task {} is still running (not stopped); list the tags later to see its set",
                task.task_id
            ),
            KeepOutcome::Error { message, .. } => f.write_str(message),
        }
    }
}

/// `retention set X at repository R, until T`.
fn set_words(set: &KeptSet) -> String {
    let mut out = format!("retention set {}", set.retention_set_id);
    if let Some(repository) = set.repository_name.as_ref().or(set.repository_id.as_ref()) {
        out.push_str(&format!(" at repository {repository}"));
    }
    if let Some(expires) = set.expires {
        out.push_str(&format!(", until {}", expires.format("%Y-%m-%d %H:%M UTC")));
    }
    out
}

/// Runs [`crate::Rewind::keep`].
pub(crate) async fn keep(
    ctx: &RecoverContext<'_>,
    vm: &str,
    change: &str,
    sink: &dyn ProgressSink,
) -> Result<KeepReport, RewindError> {
    let began = Instant::now();
    let change = check_change(change)?;
    crate::protection::validate_query(vm)?;
    let (protection, points) = resolve(ctx, vm, change).await?;
    let journaled = ctx.journal.journaled_tags(&protection.vm.id)?;
    let now = Utc::now();
    let vm_ref = &protection.vm;
    let vpgs = futures::future::join_all(points.iter().map(|point| {
        let already = journaled
            .iter()
            .find(|j| j.vpg_id == point.vpg_id && j.checkpoint_id == point.checkpoint_id)
            .and_then(|j| j.kept.clone())
            .or_else(|| point.retention_set.clone())
            .filter(|s| s.is_kept_at(now));
        async move {
            let outcome = match already {
                Some(retention_set) => KeepOutcome::AlreadyKept { retention_set },
                None => keep_one(ctx, vm_ref, point, sink).await,
            };
            KeptVpg {
                vpg_id: point.vpg_id.clone(),
                vpg_name: point.vpg_name.clone(),
                checkpoint_id: point.checkpoint_id.clone(),
                outcome,
            }
        }
    }))
    .await;
    let mut report = KeepReport {
        vm: protection.vm.clone(),
        change_id: change.to_string(),
        vpgs,
        elapsed_ms: 0,
        journal_error: None,
    };
    let record = keep_record(ctx, &report, &points);
    if let Err(e) = ctx.journal.append_off_runtime(record).await {
        report.journal_error = Some(format!(
            "the keep could not be journaled ({e}); its retention sets exist, but `rewind tags` and a recovery will not know them: free space or fix the journal, then keep again (the sets are found, not written twice)"
        ));
    }
    report.elapsed_ms = began.elapsed().as_millis() as u64;
    Ok(report)
}

/// Keeps one VPG's tagged checkpoint: its repository, the run, its task, the set it wrote.
async fn keep_one(
    ctx: &RecoverContext<'_>,
    vm: &VmRef,
    point: &RecoveryPoint,
    sink: &dyn ProgressSink,
) -> KeepOutcome {
    let error = |e: RewindError| KeepOutcome::Error {
        kind: e.kind(),
        message: e.to_string(),
    };
    let site = task_site(point);
    let client = match client_of(ctx, &site) {
        Ok(client) => client,
        Err(e) => return error(e),
    };
    match repository_of(&client, point).await {
        Ok(Some(_)) => {}
        Ok(None) => {
            return KeepOutcome::NoRepository {
                reason: format!(
                    "VPG {} has no Extended Journal Copy repository at site {}, so its tag cannot be kept past the journal; an offsite clone of the tagged checkpoint (`rewind recover clone {} --change {} start`) is a VM that outlives the journal",
                    point.vpg_name,
                    client.name(),
                    vm.name,
                    point.change_id
                ),
            };
        }
        Err(e) => return error(e),
    }
    let sent = Instant::now();
    let request = format!("POST /v1/ltr/vpgs/{}/retentionstart", point.vpg_id);
    let task_id = match client
        .retention_start(&point.vpg_id, &point.checkpoint_id)
        .await
    {
        Ok(task_id) => task_id,
        Err(e) => return error(e.at(&client, &request)),
    };
    let w = watch(sink, client.name(), point, RETENTION_TASK_TYPE);
    let deadline = sent + recovery_wait(ctx);
    match await_task(&client, &task_id, sent, deadline, &w).await {
        Ok(Ended::Completed(task)) => match written_set(&client, vm, point).await {
            Ok(retention_set) => KeepOutcome::Kept {
                task,
                retention_set,
            },
            Err(e) => error(e),
        },
        Ok(Ended::Failed(task)) => KeepOutcome::Failed { task },
        Ok(Ended::StillRunning(task) | Ended::Waiting(task)) => KeepOutcome::StillRunning { task },
        Err(e) => error(e),
    }
}

/// The VPG's repository, as its site's Extended Journal Copy health says; `None` when it has none.
async fn repository_of(
    client: &ZvmClient,
    point: &RecoveryPoint,
) -> Result<Option<String>, RewindError> {
    let health = client.ltr_health().await?;
    Ok(health
        .into_iter()
        .find(|h| {
            h.vpg_id
                .as_deref()
                .is_some_and(|id| id.eq_ignore_ascii_case(&point.vpg_id))
        })
        .and_then(|h| h.repository_id))
}

/// The retention set a run that Completed wrote of `point`: the VPG's full set at the checkpoint's
/// moment, with its repository's site.
async fn written_set(
    client: &ZvmClient,
    vm: &VmRef,
    point: &RecoveryPoint,
) -> Result<KeptSet, RewindError> {
    let sets = client.full_retention_sets(&point.vpg_id).await?;
    let same_moment = |at: Option<DateTime<Utc>>| {
        at.zip(point.timestamp)
            .is_some_and(|(a, b)| (a - b).num_milliseconds().abs() <= SAME_MOMENT_MS)
    };
    let Some(set) = sets
        .into_iter()
        .filter(|s| same_moment(s.point_in_time))
        .max_by_key(|s| s.expiry_date)
    else {
        return Err(RewindError::UnexpectedResponse {
            site: client.name().to_string(),
            request: "GET /v1/ltr/catalog/fullretentionsets".into(),
            detail: format!(
                "the Extended Journal Copy run of VPG {} Completed, but no retention set of it at the checkpoint's time is listed",
                point.vpg_name
            ),
        });
    };
    let id = set.retention_set_identifier.unwrap_or_default();
    // The repository's site is what an FLR of the set names; a catalog that cannot say leaves it
    // out, and the ZVM takes its own.
    let site = client
        .vm_retention_sets(&vm.id)
        .await
        .ok()
        .and_then(|sets| {
            sets.into_iter()
                .find(|s| s.retention_set_identifier.as_deref() == Some(id.as_str()))
        })
        .and_then(|s| s.repository_site_identifier);
    let repository = set.repository.unwrap_or_default();
    Ok(KeptSet {
        retention_set_id: id,
        repository_id: repository.identifier,
        repository_name: repository.name,
        repository_site_id: site,
        point_in_time: set.point_in_time,
        expires: set.expiry_date,
    })
}

/// The journal record of a keep: each VPG's line with its set, or why it has none.
fn keep_record(
    ctx: &RecoverContext<'_>,
    report: &KeepReport,
    points: &[RecoveryPoint],
) -> JournalRecord {
    let vpgs = report
        .vpgs
        .iter()
        .map(|v| {
            let tag = points
                .iter()
                .find(|p| p.vpg_id == v.vpg_id)
                .map(|p| p.tag.clone());
            let line = JournalVpg {
                tag,
                checkpoint_id: Some(v.checkpoint_id.clone()),
                ..JournalVpg::new(&v.vpg_id, &v.vpg_name, JournalOutcome::Kept)
            };
            match &v.outcome {
                KeepOutcome::Kept {
                    task,
                    retention_set,
                } => JournalVpg {
                    task_id: Some(task.task_id.clone()),
                    task_state: Some(task.state_text()),
                    kept: Some(retention_set.clone()),
                    ..line
                },
                KeepOutcome::AlreadyKept { retention_set } => JournalVpg {
                    kept: Some(retention_set.clone()),
                    ..line
                },
                KeepOutcome::NoRepository { reason } => JournalVpg {
                    outcome: JournalOutcome::Skipped,
                    detail: Some(reason.clone()),
                    ..line
                },
                KeepOutcome::Failed { task } | KeepOutcome::StillRunning { task } => JournalVpg {
                    outcome: if matches!(v.outcome, KeepOutcome::Failed { .. }) {
                        JournalOutcome::Failed
                    } else {
                        JournalOutcome::StillRunning
                    },
                    task_id: Some(task.task_id.clone()),
                    task_state: Some(task.state_text()),
                    detail: task.complete_reason.clone(),
                    ..line
                },
                KeepOutcome::Error { message, .. } => JournalVpg {
                    outcome: JournalOutcome::Error,
                    detail: Some(message.clone()),
                    ..line
                },
            }
        })
        .collect();
    JournalRecord {
        time: Utc::now(),
        kind: RecordKind::Keep,
        agent: ctx.agent.unwrap_or("rewind").to_string(),
        person: ctx.person.cloned(),
        action: "keep its tags past the journal (Extended Journal Copy)".into(),
        change_id: report.change_id.clone(),
        vm: JournalVm::from(&report.vm),
        verdict: if report.kept() > 0 {
            JournalVerdict::Completed
        } else {
            JournalVerdict::Failed
        },
        vpgs,
        notes: Vec::new(),
        details: None,
        attempt: None,
        sites: None,
        approved_by: ctx.approved_by.cloned(),
    }
}
