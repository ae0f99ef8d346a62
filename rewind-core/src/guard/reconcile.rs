//! After an insert whose outcome is unknown (no answer, one that could not be read, a 5xx): look for
//! the tag among the VPG's checkpoints and recent insert tasks before deciding to insert again, so
//! that one guard never leaves two checkpoints.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use super::insert::Inserted;
use super::{GuardContext, GuardNote};
use crate::codes::{STATE_COMPLETED, STATE_IN_PROGRESS};
use crate::error::RewindError;
use crate::protection::VpgProtection;
use crate::zvm::ZvmClient;
use crate::zvm::task::{ListedFrom, TaskWait, Watch, wait_listed, wait_task};
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
    notes: &mut Vec<GuardNote>,
) -> Result<Reconciled, RewindError> {
    let vpg_id = vpg.vpg_id.as_str();
    let tasks = client.insert_tasks(vpg_id, false).await?;
    let newest = tasks.iter().filter_map(|t| t.started).max();
    let mut candidates = maybe_ours(ctx, vpg_id, tasks, newest);
    if let Some(running) = follow_to_the_end(client, &mut candidates, deadline, watch, notes).await
    {
        return Ok(running);
    }
    let ours = Ours {
        vpg_id,
        tag,
        candidates: &candidates,
        newest,
    };
    ours.look_for_the_tag(ctx, client, deadline, notes).await
}

/// The insert tasks of the VPG that could be ours: running, or started after the newest insert this
/// process saw end there and not long before the newest insert the ZVM lists. Only the ZVM's own clock
/// orders its tasks.
fn maybe_ours(
    ctx: &GuardContext<'_>,
    vpg_id: &str,
    tasks: Vec<Task>,
    newest: Option<DateTime<Utc>>,
) -> Vec<Task> {
    let floor = ctx.own.newest_start(vpg_id);
    tasks
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
        .collect()
}

/// Reads each candidate still running to its end: `Some` when one still runs at the deadline or cannot
/// be followed, which settles the reconciliation.
async fn follow_to_the_end(
    client: &ZvmClient,
    candidates: &mut [Task],
    deadline: Instant,
    watch: &Watch<'_>,
    notes: &mut Vec<GuardNote>,
) -> Option<Reconciled> {
    let (learnt, _) = client.learnt();
    for c in candidates.iter_mut() {
        if c.state() != Some(STATE_IN_PROGRESS) {
            continue;
        }
        let id = c.task_identifier.clone().unwrap_or_default();
        match wait_task(client, &id, Instant::now(), deadline, learnt, watch).await {
            Ok(TaskWait::Terminal(t)) => *c = t,
            Ok(TaskWait::StillRunning(last)) => {
                notes.push(GuardNote::MaybeOursStillRunning {
                    task_id: id.clone(),
                });
                return Some(Reconciled::StillRunning(
                    id,
                    last.unwrap_or_else(|| c.clone()),
                ));
            }
            Err(e) => return Some(Reconciled::Unfollowed(id, e)),
        }
    }
    None
}

/// The tasks that could be ours, all ended, and what is looked for in the VPG's checkpoints.
struct Ours<'a> {
    vpg_id: &'a str,
    tag: &'a str,
    candidates: &'a [Task],
    newest: Option<DateTime<Utc>>,
}

impl Ours<'_> {
    /// Looks for the tag, giving a checkpoint that may be ours the time to be listed, whether or not an
    /// insert task could be tied to this VPG (a ZVM that leaves RelatedEntities empty ties none): this
    /// path is rare, and waiting here is what keeps a second insert from doubling the first.
    async fn look_for_the_tag(
        &self,
        ctx: &GuardContext<'_>,
        client: &ZvmClient,
        deadline: Instant,
        notes: &mut Vec<GuardNote>,
    ) -> Result<Reconciled, RewindError> {
        let since = self
            .candidates
            .iter()
            .filter_map(|t| t.started)
            .min()
            .or(self.newest)
            .map(|t| t - chrono::Duration::seconds(60));
        let (_, lag) = client.learnt();
        let grace = lag
            .map(|l| l * 4)
            .unwrap_or_default()
            .clamp(Duration::from_secs(2), Duration::from_secs(30));
        let until = deadline.min(Instant::now() + grace);
        // The lag this wait saw is not learnt: it does not start at a completion.
        let found =
            wait_listed(client, self.vpg_id, self.tag, since, ListedFrom::Now, until).await?;
        let Some((cp, _)) = found else {
            return Ok(Reconciled::NotInserted);
        };
        let task_id = self.newest_completed(ctx);
        notes.push(GuardNote::FoundAfterUnknown {
            checkpoint_id: cp.checkpoint_identifier.clone(),
            task_id: task_id.clone(),
        });
        Ok(Reconciled::Found(Inserted::Found {
            task_id,
            checkpoint_id: cp.checkpoint_identifier.unwrap_or_default(),
            timestamp: cp.time_stamp,
        }))
    }

    /// The newest Completed candidate, taken as ours and recorded as this process's.
    fn newest_completed(&self, ctx: &GuardContext<'_>) -> Option<String> {
        // The first of the newest, as they are listed.
        let newest = self
            .candidates
            .iter()
            .rev()
            .filter(|t| t.state() == Some(STATE_COMPLETED))
            .max_by_key(|t| t.started)?;
        let id = newest.task_identifier.clone()?;
        ctx.own.record(self.vpg_id, &id, newest.started, true);
        Some(id)
    }
}
