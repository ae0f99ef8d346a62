//! This process's order at each VPG: one insert at a time per VPG, and whose each insert task is:
//! this process's own, one that may be ours after a lost answer, or another client's that made ours
//! fail.

use std::collections::HashMap;
use std::sync::{Arc, Mutex as StdMutex};

use chrono::{DateTime, Utc};

use super::note::Culprit;
use crate::codes::STATE_IN_PROGRESS;
use crate::zvm::port::InsertPort;
use crate::zvm::wire::Task;

/// The per-VPG queue of this process: one async lock per VPG. Tokio's mutex is fair, so guards wait in
/// the order they arrived.
#[derive(Debug, Default)]
pub(crate) struct VpgQueue {
    locks: StdMutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl VpgQueue {
    pub(crate) fn slot(&self, vpg_id: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut locks = self.locks.lock().unwrap_or_else(|p| p.into_inner());
        locks.entry(vpg_id.to_lowercase()).or_default().clone()
    }
}

/// The insert tasks this process started, per VPG: they are never mistaken for another client's, and
/// the newest one's start bounds how far back an insert of unknown outcome can be.
#[derive(Debug, Default)]
pub(crate) struct OwnTasks {
    by_vpg: StdMutex<HashMap<String, Vec<OwnTask>>>,
}

/// One insert task of this process.
#[derive(Debug)]
struct OwnTask {
    id: String,
    /// Its start (the ZVM's clock), once known.
    started: Option<DateTime<Utc>>,
    /// Seen terminal. A task left running when its guard's deadline came is not, and the next guard
    /// of its VPG waits for it as for another client's.
    ended: bool,
}

impl OwnTasks {
    pub(crate) fn record(
        &self,
        vpg_id: &str,
        task_id: &str,
        started: Option<DateTime<Utc>>,
        ended: bool,
    ) {
        let mut m = self.by_vpg.lock().unwrap_or_else(|p| p.into_inner());
        let list = m.entry(vpg_id.to_lowercase()).or_default();
        match list.iter_mut().find(|t| t.id == task_id) {
            Some(t) => {
                t.started = started.or(t.started);
                t.ended |= ended;
            }
            None => list.push(OwnTask {
                id: task_id.to_string(),
                started,
                ended,
            }),
        }
        // Only the recent past matters; keep the memory small.
        if list.len() > 64 {
            list.remove(0);
        }
    }

    pub(crate) fn contains(&self, vpg_id: &str, task_id: &str) -> bool {
        self.ended(vpg_id, task_id).is_some()
    }

    /// Whether this process's task was seen terminal; `None` when it is not this process's.
    pub(crate) fn ended(&self, vpg_id: &str, task_id: &str) -> Option<bool> {
        let m = self.by_vpg.lock().unwrap_or_else(|p| p.into_inner());
        m.get(&vpg_id.to_lowercase())
            .and_then(|l| l.iter().find(|t| t.id == task_id))
            .map(|t| t.ended)
    }

    pub(crate) fn newest_start(&self, vpg_id: &str) -> Option<DateTime<Utc>> {
        let m = self.by_vpg.lock().unwrap_or_else(|p| p.into_inner());
        m.get(&vpg_id.to_lowercase())
            .and_then(|l| l.iter().filter_map(|t| t.started).max())
    }
}

/// The insert tasks of the VPG that could be ours after an insert of unknown outcome: running, or
/// started after the newest insert this process saw end there and not long before the newest insert
/// the ZVM lists. Only the ZVM's own clock orders its tasks.
pub(super) fn maybe_ours(
    own: &OwnTasks,
    vpg_id: &str,
    tasks: Vec<Task>,
    newest: Option<DateTime<Utc>>,
) -> Vec<Task> {
    let floor = own.newest_start(vpg_id);
    tasks
        .into_iter()
        .filter(|t| {
            let Some(id) = t.task_identifier.as_deref() else {
                return false;
            };
            if own.contains(vpg_id, id) {
                return false;
            }
            if t.state() == Some(STATE_IN_PROGRESS) {
                return true;
            }
            t.started.is_some_and(|s| {
                floor.is_none_or(|f| s >= f)
                    && newest.is_none_or(|n| s >= n - chrono::Duration::minutes(5))
            })
        })
        .collect()
}

/// Who started `task`, as a note names them.
pub(super) fn initiated_by(task: &Task) -> String {
    task.initiated_by
        .as_deref()
        .unwrap_or("unknown")
        .to_string()
}

/// Finds the insert that was running at the VPG while ours ran (the back-to-back rule): another insert
/// task of the VPG that started no later than ours and had not ended when ours started. Falls back to
/// the reason's words when the ZVM does not relate tasks to VPGs.
pub(super) async fn back_to_back_culprit(
    port: &impl InsertPort,
    vpg_id: &str,
    ours: &str,
    task: &Task,
) -> Option<Culprit> {
    if let Ok(tasks) = port.inserts(vpg_id).await {
        let overlapping = tasks.into_iter().filter(|t| {
            t.task_identifier.as_deref() != Some(ours)
                && match (t.started, task.started) {
                    (Some(theirs), Some(mine)) => {
                        theirs <= mine && t.completed.is_none_or(|c| c >= mine)
                    }
                    _ => t.state() == Some(STATE_IN_PROGRESS),
                }
        });
        let mut overlapping: Vec<Task> = overlapping.collect();
        overlapping.sort_by_key(|t| {
            (
                t.state() != Some(STATE_IN_PROGRESS),
                std::cmp::Reverse(t.started),
            )
        });
        if let Some(t) = overlapping.into_iter().next() {
            return Some(Culprit::AnotherClient {
                initiated_by: initiated_by(&t),
                task_id: t.task_identifier.unwrap_or_default(),
            });
        }
    }
    let reason = task
        .complete_reason
        .as_deref()
        .unwrap_or_default()
        .to_lowercase();
    let says_so = (reason.contains("another")
        || reason.contains("already")
        || reason.contains("in progress"))
        && (reason.contains("checkpoint") || reason.contains("insert"));
    says_so.then_some(Culprit::Unnamed)
}
