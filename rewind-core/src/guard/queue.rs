//! This process's order at each VPG: one insert at a time per VPG, and the insert tasks this process
//! started, so that a guard can tell its own running insert from another client's.

use std::collections::HashMap;
use std::sync::{Arc, Mutex as StdMutex};

use chrono::{DateTime, Utc};

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
