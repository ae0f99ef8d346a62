//! After an insert whose outcome is unknown (no answer, one that could not be read, a 5xx): look for
//! the tag among the VPG's checkpoints and recent insert tasks before deciding to insert again, so
//! that one guard never leaves two checkpoints.

use std::time::{Duration, Instant};

use super::GuardContext;
use super::insert::Inserted;
use crate::codes::{STATE_COMPLETED, STATE_IN_PROGRESS};
use crate::error::RewindError;
use crate::protection::VpgProtection;
use crate::zvm::ZvmClient;
use crate::zvm::task::{TaskWait, Watch, wait_listed, wait_task};
use crate::zvm::wire::Task;

/// What a reconciliation of an insert of unknown outcome found.
pub(super) enum Reconciled {
    /// The tag is listed: the insert happened.
    Found(Inserted),
    /// An insert that may be ours is still running at the deadline.
    StillRunning(String, Task),
    /// An insert that may be ours was found, but following it failed: its id is kept in the outcome.
    Unfollowed(String, RewindError),
    /// No trace of the insert: it did not happen.
    NotInserted,
}

/// After an insert of unknown outcome: wait for any insert at this VPG that could be ours, then look for the tag
/// (waiting out the listing lag when such an insert Completed). Only when neither exists did the insert
/// not happen.
pub(super) async fn reconcile(
    ctx: &GuardContext<'_>,
    client: &ZvmClient,
    vpg: &VpgProtection,
    tag: &str,
    deadline: Instant,
    watch: &Watch<'_>,
    notes: &mut Vec<String>,
) -> Result<Reconciled, RewindError> {
    let vpg_id = vpg.vpg_id.as_str();
    let tasks = client.insert_tasks(vpg_id, false).await?;
    // Only the ZVM's own clock orders its tasks: an insert of ours cannot have started before the newest
    // insert this process saw end at this VPG, nor long before the newest insert the ZVM lists.
    let newest = tasks.iter().filter_map(|t| t.started).max();
    let floor = ctx.own.newest_start(vpg_id);
    let mut candidates: Vec<Task> = tasks
        .into_iter()
        .filter(|t| {
            let Some(id) = t.task_identifier.as_deref() else {
                return false;
            };
            if ctx.own.contains(vpg_id, id) {
                return false;
            }
            if t.state() == Some(STATE_IN_PROGRESS) {
                return true;
            }
            match t.started {
                Some(s) => {
                    floor.is_none_or(|f| s >= f)
                        && newest.is_none_or(|n| s >= n - chrono::Duration::minutes(5))
                }
                None => false,
            }
        })
        .collect();
    let (learnt, lag) = client.learnt();
    for c in candidates.iter_mut() {
        if c.state() != Some(STATE_IN_PROGRESS) {
            continue;
        }
        let id = c.task_identifier.clone().unwrap_or_default();
        let waited = match wait_task(client, &id, Instant::now(), deadline, learnt, watch).await {
            Ok(waited) => waited,
            Err(e) => return Ok(Reconciled::Unfollowed(id, e)),
        };
        match waited {
            TaskWait::Terminal(t) => *c = t,
            TaskWait::StillRunning(last) => {
                notes.push(format!(
                    "insert task {id}, which may be ours, was still running at the deadline"
                ));
                return Ok(Reconciled::StillRunning(
                    id,
                    last.unwrap_or_else(|| c.clone()),
                ));
            }
        }
    }
    let mut completed: Vec<&Task> = candidates
        .iter()
        .filter(|t| t.state() == Some(STATE_COMPLETED))
        .collect();
    completed.sort_by_key(|t| std::cmp::Reverse(t.started));
    let since = candidates
        .iter()
        .filter_map(|t| t.started)
        .min()
        .or(newest)
        .map(|t| t - chrono::Duration::seconds(60));
    // Give a checkpoint that may be ours the time to be listed, whether or not an insert task could be
    // tied to this VPG (a ZVM that leaves RelatedEntities empty ties none): this path is rare, and
    // waiting here is what keeps a second insert from doubling the first.
    let grace = lag
        .map(|l| l * 4)
        .unwrap_or_default()
        .clamp(Duration::from_secs(2), Duration::from_secs(30));
    let until = deadline.min(Instant::now() + grace);
    // The lag this wait saw is not learnt: it does not start at a completion.
    let found = wait_listed(client, vpg_id, tag, since, Instant::now(), until, lag).await?;
    let Some((cp, _)) = found else {
        return Ok(Reconciled::NotInserted);
    };
    let task_id = completed.first().and_then(|t| t.task_identifier.clone());
    if let Some(id) = &task_id {
        ctx.own.record(vpg_id, id, completed[0].started, true);
    }
    notes.push(match &task_id {
        Some(id) => format!(
            "found the tagged checkpoint {} and its insert task {id}: the insert had happened, so it was not sent again",
            cp.checkpoint_identifier.as_deref().unwrap_or("?")
        ),
        None => format!(
            "found the tagged checkpoint {}: the insert had happened, so it was not sent again",
            cp.checkpoint_identifier.as_deref().unwrap_or("?")
        ),
    });
    Ok(Reconciled::Found(Inserted::Found {
        task_id,
        checkpoint_id: cp.checkpoint_identifier.unwrap_or_default(),
        timestamp: cp.time_stamp,
    }))
}
