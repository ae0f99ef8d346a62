//! Tagging one VPG: take its place in the queue, follow or adopt what an earlier attempt left there,
//! wait for any insert running at it, insert, read the task to its end, retry after a back-to-back
//! failure, and wait until the checkpoint is listed.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use super::GuardContext;
use super::attempt::{self, AttemptLog, Earlier};
use super::note::{Culprit, GuardNote, RunningInsert};
use super::reconcile::{Reconciled, reconcile};
use super::report::{Outcome, VpgGuard};
use crate::codes::{Code, STATE_COMPLETED, STATE_IN_PROGRESS};
use crate::error::ErrorKind;
use crate::progress::{ProgressSink, Stage};
use crate::protection::VpgProtection;
use crate::zvm::ZvmClient;
use crate::zvm::task::{ListedFrom, TaskWait, Watch, wait_listed, wait_task};
use crate::zvm::wire::{INSERT_TASK_TYPE, Task};

/// How the locked part of one VPG's guard ended.
pub(super) enum Inserted {
    /// The insert Completed; the checkpoint is still to be seen listed.
    Completed {
        task: Task,
        task_id: String,
        at: Instant,
    },
    /// An insert of unknown outcome was reconciled and the checkpoint was found.
    Found {
        task_id: Option<String>,
        checkpoint_id: String,
        timestamp: Option<DateTime<Utc>>,
    },
    /// Anything else.
    Done(Outcome),
}

/// One VPG's guard.
pub(super) async fn guard_vpg(
    ctx: &GuardContext<'_>,
    vpg: &VpgProtection,
    tag: &str,
    earlier: Option<&Earlier>,
    log: &AttemptLog<'_>,
    deadline: Instant,
    sink: &dyn ProgressSink,
) -> VpgGuard {
    let mut notes = Vec::new();
    let outcome = match ctx.client(&vpg.zvm_site) {
        None => Outcome::Error {
            task_id: None,
            kind: ErrorKind::Usage,
            cause: None,
            message: format!(
                "no configured site reaches the ZVM {} of this VPG",
                vpg.zvm_site
            ),
        },
        Some(client) => {
            let watch = Watch {
                sink,
                site: client.name(),
                vpg_id: &vpg.vpg_id,
                vpg_name: &vpg.vpg_name,
                task_type: INSERT_TASK_TYPE,
                began: Instant::now(),
            };
            let run = Insert {
                ctx,
                client,
                vpg,
                tag,
                log,
                deadline,
                watch: &watch,
            };
            let outcome = tag_vpg(&run, earlier, &mut notes).await;
            watch.report(Stage::Done, task_id_of(&outcome), None);
            outcome
        }
    };
    VpgGuard {
        vpg_id: vpg.vpg_id.clone(),
        vpg_name: vpg.vpg_name.clone(),
        site: vpg.zvm_site.clone(),
        outcome,
        notes,
    }
}

/// What the insert into one VPG works with.
struct Insert<'a> {
    ctx: &'a GuardContext<'a>,
    client: &'a ZvmClient,
    vpg: &'a VpgProtection,
    tag: &'a str,
    log: &'a AttemptLog<'a>,
    deadline: Instant,
    watch: &'a Watch<'a>,
}

/// How long a task ran by the ZVM's own clock, when it says. The client learns insert durations from
/// this rather than from how long it took to see the task end: that includes the client's own lateness,
/// and under load late polls would teach it to place the next first poll later still (with 256
/// concurrent guards, a task's end was seen 41 ms late at the median; learning the ZVM's duration, 13 ms).
fn zvm_duration(task: &Task) -> Option<Duration> {
    (task.completed? - task.started?).to_std().ok()
}

fn task_id_of(o: &Outcome) -> Option<&str> {
    match o {
        Outcome::Tagged { task_id, .. } | Outcome::Error { task_id, .. } => task_id.as_deref(),
        Outcome::Failed { task_id, .. } | Outcome::StillRunning { task_id, .. } => Some(task_id),
        Outcome::Skipped { .. } => None,
    }
}

/// The outcome of a VPG whose insert was not sent because the guard was told to stop.
fn stopped(vpg: &VpgProtection) -> Outcome {
    Outcome::Error {
        task_id: None,
        kind: ErrorKind::Refused,
        cause: None,
        message: format!(
            "the guard was told to stop (cancelled, or interrupted) before its insert into {} was sent; nothing was inserted there; guard again to tag it",
            vpg.vpg_name
        ),
    }
}

async fn tag_vpg(
    run: &Insert<'_>,
    earlier: Option<&Earlier>,
    notes: &mut Vec<GuardNote>,
) -> Outcome {
    let Insert {
        ctx,
        client,
        vpg,
        tag,
        deadline,
        watch,
        ..
    } = *run;
    watch.report(Stage::Queued, None, None);
    let slot = ctx.queue.slot(&vpg.vpg_id);
    let turn = tokio::select! {
        held = tokio::time::timeout_at(deadline.into(), slot.lock_owned()) => held.ok(),
        () = ctx.stop.cancelled() => return stopped(vpg),
    };
    let Some(held) = turn else {
        return Outcome::Error {
            task_id: None,
            // A deadline is classed as a slow ZVM is, as `RewindError::Deadline` is.
            kind: ErrorKind::Connection,
            cause: None,
            message: format!(
                "the deadline came while this VPG was busy with an earlier guard of this process; nothing was inserted into {}; guard again",
                vpg.vpg_name
            ),
        };
    };
    let inserted = insert_locked(run, earlier, notes).await;
    // The VPG is free for the next insert as soon as this one's task is terminal.
    drop(held);
    match inserted {
        Inserted::Done(outcome) => outcome,
        Inserted::Found {
            task_id,
            checkpoint_id,
            timestamp,
        } => Outcome::Tagged {
            task_id,
            task_state: Some(Code::task_state(STATE_COMPLETED)),
            checkpoint_id,
            timestamp,
        },
        Inserted::Completed { task, task_id, at } => {
            watch.report(Stage::Listing, Some(&task_id), Some(&task));
            let since = task.started.map(|t| t - chrono::Duration::seconds(60));
            let from = ListedFrom::Completion {
                at,
                insert_took: zvm_duration(&task).or(client.learnt().0),
            };
            match wait_listed(client, &vpg.vpg_id, tag, since, from, deadline).await {
                Ok(Some((cp, lag))) => {
                    client.observe_listing(lag);
                    Outcome::Tagged {
                        task_id: Some(task_id),
                        task_state: task.state().map(Code::task_state),
                        checkpoint_id: cp.checkpoint_identifier.unwrap_or_default(),
                        timestamp: cp.time_stamp,
                    }
                }
                Ok(None) => {
                    notes.push(GuardNote::NotListedYet {
                        task_id: task_id.clone(),
                    });
                    Outcome::StillRunning {
                        task_id,
                        task_state: task.state().map(Code::task_state),
                        stage: Stage::Listing,
                    }
                }
                Err(e) => Outcome::Error {
                    task_id: Some(task_id),
                    kind: e.kind(),
                    cause: Some(e.in_brief()),
                    message: format!(
                        "the insert Completed, but its checkpoint could not be looked for: {e}; list the tags of this VM to check"
                    ),
                },
            }
        }
    }
}

/// Inserts (holding the VPG's lock) until the task is terminal. What an earlier attempt of this
/// change inserted is followed or adopted first; an insert running at the VPG is waited for before
/// each insert; a back-to-back failure is retried after a jittered pause, until the deadline; an
/// insert of unknown outcome is reconciled. Whenever a checkpoint with this tag may already exist (an
/// earlier attempt's, or one of this guard whose answer was lost), it is looked for before any
/// insert: never two checkpoints of one tag in one VPG.
async fn insert_locked(
    run: &Insert<'_>,
    earlier: Option<&Earlier>,
    notes: &mut Vec<GuardNote>,
) -> Inserted {
    if let Some(e) = earlier
        && let Some(settled) = attempt::follow_earlier_task(
            run.ctx,
            run.client,
            run.vpg,
            e,
            run.deadline,
            run.watch,
            notes,
        )
        .await
    {
        return settled;
    }
    let mut tries = Tries::new(run, earlier);
    loop {
        if let Turn::Done(done) = turn(run, &mut tries, notes).await {
            return *done;
        }
    }
}

/// What the insert loop carries from one turn to the next.
struct Tries {
    /// Until when a checkpoint with this tag, if there is one, may still be on its way to being
    /// listed; `None` while none can exist.
    may_exist: Option<Instant>,
    /// How far back the VPG's checkpoints are read when the tag is looked for.
    since: Option<DateTime<Utc>>,
    /// Retries after another insert made ours fail.
    back_to_back: u32,
    /// Inserts sent again after one whose outcome was unknown turned out not to have happened.
    resent: u32,
}

impl Tries {
    fn new(run: &Insert<'_>, earlier: Option<&Earlier>) -> Tries {
        let from = match earlier {
            Some(e) => {
                e.at - chrono::Duration::from_std(run.ctx.settings.deadline).unwrap_or_default()
            }
            None => Utc::now(),
        };
        Tries {
            may_exist: earlier.map(|e| attempt::earlier_look_until(run.client, e)),
            since: Some(from - chrono::Duration::minutes(10)),
            back_to_back: 0,
            resent: 0,
        }
    }
}

/// What one turn of the insert loop came to.
enum Turn {
    /// Go round again: another insert ran meanwhile, or ours is to be sent again.
    Again,
    /// The VPG is settled, one way or the other (boxed: a task is large, and most turns go round).
    Done(Box<Inserted>),
}

/// One turn: wait for any insert running at the VPG, look for the tag when it may exist, insert, read
/// the task to its end, and settle or go round again.
async fn turn(run: &Insert<'_>, tries: &mut Tries, notes: &mut Vec<GuardNote>) -> Turn {
    if Instant::now() >= run.deadline {
        return Turn::Done(Box::new(Inserted::Done(Outcome::Error {
            task_id: None,
            kind: ErrorKind::Connection,
                    cause: None,
            message: "the deadline came before the insert could be sent; nothing was inserted; guard again".into(),
        })));
    }
    if run.ctx.stop.is_cancelled() {
        return Turn::Done(Box::new(Inserted::Done(stopped(run.vpg))));
    }
    let maybe_ours = tries.may_exist.is_some();
    let waiting = wait_for_running(run, maybe_ours, notes);
    // Another client's insert need not be waited for once told to stop; one that may be an earlier
    // attempt of this change is followed to its end, as what it inserted is this guard's to account for.
    let waited = if maybe_ours {
        waiting.await
    } else {
        tokio::select! {
            waited = waiting => waited,
            () = run.ctx.stop.cancelled() => Err(Inserted::Done(stopped(run.vpg))),
        }
    };
    let waited = match waited {
        Ok(waited) => waited,
        Err(done) => return Turn::Done(Box::new(done)),
    };
    if waited && another_insert_after_a_pause(run).await {
        return Turn::Again;
    }
    if let Some(done) = look_first(run, tries, waited, notes).await {
        return Turn::Done(Box::new(done));
    }
    if run.ctx.stop.is_cancelled() {
        return Turn::Done(Box::new(Inserted::Done(stopped(run.vpg))));
    }
    let (task_id, sent) = match send(run, tries, notes).await {
        Sending::Sent(task_id, sent) => (task_id, sent),
        Sending::Ends(turn) => return turn,
    };
    let task = match follow(run, &task_id, sent).await {
        Ok(task) => task,
        Err(done) => return Turn::Done(Box::new(done)),
    };
    settle(run, tries, task_id, task, sent, notes).await
}
/// After waiting for another client's insert: every guard that waited for the same insert (other
/// processes', other machines') wakes when it ends, so a random pause spreads them out, and the first
/// to insert is seen running by the others (which then wait for it) instead of all inserting at once
/// and all but one failing. True when an insert runs again after the pause. This process's own
/// guards of one VPG take turns in its queue and never wait here for each other.
async fn another_insert_after_a_pause(run: &Insert<'_>) -> bool {
    let (learnt, _) = run.client.learnt();
    let typical = learnt
        .unwrap_or(Duration::from_millis(500))
        .clamp(Duration::from_millis(20), Duration::from_secs(2));
    let pause = typical.mul_f64(rand::random::<f64>() * 0.5);
    tokio::time::sleep(pause.min(run.deadline.saturating_duration_since(Instant::now()))).await;
    let vpg_id = run.vpg.vpg_id.as_str();
    run.client
        .insert_tasks(vpg_id, true)
        .await
        .is_ok_and(|running| {
            running
                .iter()
                .filter_map(|t| t.task_identifier.as_deref())
                .any(|id| run.ctx.own.ended(vpg_id, id) != Some(true))
        })
}

/// When a checkpoint with this tag may exist already, looks for it before any insert: `Some` when
/// that settles the VPG (it was found, or looking failed and nothing more may be inserted).
async fn look_first(
    run: &Insert<'_>,
    tries: &mut Tries,
    waited: bool,
    notes: &mut Vec<GuardNote>,
) -> Option<Inserted> {
    let until = tries.may_exist?;
    let until = if waited {
        Instant::now() + attempt::listing_grace(run.client)
    } else {
        until
    };
    let (client, vpg, tag) = (run.client, run.vpg, run.tag);
    match attempt::look_for_tag(
        client,
        vpg,
        tag,
        tries.since,
        until.min(run.deadline),
        notes,
    )
    .await
    {
        Ok(Some(found)) => Some(found),
        Ok(None) => {
            tries.may_exist = Some(Instant::now());
            None
        }
        Err(e) => Some(Inserted::Done(Outcome::Error {
            task_id: None,
            kind: e.kind(),
            cause: Some(e.in_brief()),
            message: format!(
                "a checkpoint with the tag {tag:?} may already exist in VPG {}, and looking for it failed: {e}; nothing more was inserted, so that the tag is not inserted twice; guard again",
                vpg.vpg_name
            ),
        })),
    }
}

/// What sending the insert came to.
enum Sending {
    /// The ZVM took it: its task id, and when it was sent.
    Sent(String, Instant),
    /// The turn ends here.
    Ends(Turn),
}

/// Sends the insert. An answer of unknown outcome is reconciled before anything else is sent.
async fn send(run: &Insert<'_>, tries: &mut Tries, notes: &mut Vec<GuardNote>) -> Sending {
    let vpg_id = run.vpg.vpg_id.as_str();
    run.watch.report(Stage::Inserting, None, None);
    let sent = Instant::now();
    match run.client.insert_tagged_checkpoint(vpg_id, run.tag).await {
        Ok(task_id) => Sending::Sent(task_id, sent),
        Err(e) if e.outcome_unknown() => {
            let what = e.what_happened_to("the insert");
            notes.push(GuardNote::OutcomeUnknown { what: what.clone() });
            Sending::Ends(after_unknown(run, tries, &what, notes).await)
        }
        Err(e) => {
            let e = e.at(run.client, &format!("POST /v1/vpgs/{vpg_id}/checkpoints"));
            Sending::Ends(Turn::Done(Box::new(Inserted::Done(Outcome::Error {
                task_id: None,
                kind: e.kind(),
                cause: Some(e.in_brief()),
                message: e.to_string(),
            }))))
        }
    }
}

/// After an insert whose outcome is unknown (`what` says why): what the reconciliation found settles
/// the VPG, or, when the insert did not happen, it is sent again (a bounded number of times).
async fn after_unknown(
    run: &Insert<'_>,
    tries: &mut Tries,
    what: &str,
    notes: &mut Vec<GuardNote>,
) -> Turn {
    let (ctx, client, vpg, tag) = (run.ctx, run.client, run.vpg, run.tag);
    let error = |task_id: Option<String>, kind, message, cause: Option<String>| {
        Turn::Done(Box::new(Inserted::Done(Outcome::Error {
            task_id,
            kind,
            message,
            cause,
        })))
    };
    match reconcile(ctx, client, vpg, tag, run.deadline, run.watch, notes).await {
        Ok(Reconciled::Found(found)) => Turn::Done(Box::new(found)),
        Ok(Reconciled::StillRunning(task_id, task)) => {
            Turn::Done(Box::new(Inserted::Done(Outcome::StillRunning {
                task_id,
                task_state: task.state().map(Code::task_state),
                stage: Stage::Running,
            })))
        }
        Ok(Reconciled::Unfollowed(task_id, e)) => error(
            Some(task_id.clone()),
            e.kind(),
            format!(
                "{what}, and insert task {task_id}, which may be ours, could not be followed: {e}; look at the task, and for the tag {tag:?} in VPG {}, before guarding again",
                vpg.vpg_name
            ),
            Some(e.in_brief()),
        ),
        Ok(Reconciled::NotInserted) if tries.resent < ctx.settings.lost_response_retries => {
            tries.resent += 1;
            notes.push(GuardNote::InsertingAgain {
                resent: tries.resent,
                of: ctx.settings.lost_response_retries,
            });
            // A ZVM may still be working on the lost request: look once more first.
            tries.may_exist = Some(Instant::now());
            Turn::Again
        }
        Ok(Reconciled::NotInserted) => error(
            None,
            ErrorKind::Connection,
            format!(
                "the insert was sent {} times and each time its outcome was unknown, the last time because {what}; no checkpoint with the tag exists; check the network to the ZVM of {} and guard again",
                tries.resent + 1,
                client.name()
            ),
            None,
        ),
        Err(e) => error(
            None,
            e.kind(),
            format!(
                "{what}, and looking for the tag failed: {e}; look for the tag {tag:?} in VPG {} before guarding again",
                vpg.vpg_name
            ),
            Some(e.in_brief()),
        ),
    }
}

/// Reads the insert task `task_id`, sent at `sent`, to its end, journaling its id meanwhile: `Err`
/// when that settles the VPG (it still runs at the deadline, or cannot be followed).
async fn follow(run: &Insert<'_>, task_id: &str, sent: Instant) -> Result<Task, Inserted> {
    let (client, vpg_id) = (run.client, run.vpg.vpg_id.as_str());
    run.ctx.own.record(vpg_id, task_id, None, false);
    let (learnt, _) = client.learnt();
    // The task id is journaled while the task is followed: the intent, synced before the insert,
    // already accounts for it, and the task line only saves a later attempt a look.
    let (_, waited) = tokio::join!(
        run.log.sent(vpg_id, task_id),
        wait_task(client, task_id, sent, run.deadline, learnt, run.watch)
    );
    match waited {
        Ok(TaskWait::Terminal(task)) => {
            run.ctx.own.record(vpg_id, task_id, task.started, true);
            Ok(task)
        }
        Ok(TaskWait::StillRunning(last)) => Err(Inserted::Done(Outcome::StillRunning {
            task_id: task_id.to_string(),
            task_state: last.as_ref().and_then(Task::state).map(Code::task_state),
            stage: Stage::Running,
        })),
        Err(e) => Err(Inserted::Done(Outcome::Error {
            task_id: Some(task_id.to_string()),
            kind: e.kind(),
            cause: Some(e.in_brief()),
            message: format!(
                "insert task {task_id} was started but could not be followed: {e}; the insert may still complete, look at the task in the ZVM"
            ),
        })),
    }
}

/// A terminal insert task: Completed settles the VPG; a back-to-back failure is retried (after
/// waiting out an insert it cannot name), until the cap if there is one; any other failure is one.
async fn settle(
    run: &Insert<'_>,
    tries: &mut Tries,
    task_id: String,
    task: Task,
    sent: Instant,
    notes: &mut Vec<GuardNote>,
) -> Turn {
    let (ctx, client, vpg_id) = (run.ctx, run.client, run.vpg.vpg_id.as_str());
    let state = task.state().unwrap_or(-1);
    if state == STATE_COMPLETED {
        client.observe_insert(zvm_duration(&task).unwrap_or_else(|| sent.elapsed()));
        return Turn::Done(Box::new(Inserted::Completed {
            task,
            task_id,
            at: Instant::now(),
        }));
    }
    let reason = task.complete_reason.clone().unwrap_or_default();
    let retry_allowed = ctx
        .settings
        .back_to_back_retries
        .is_none_or(|cap| tries.back_to_back < cap);
    let culprit = match retry_allowed {
        true => back_to_back_culprit(client, vpg_id, &task_id, &task).await,
        false => None,
    };
    let Some(culprit) = culprit else {
        return Turn::Done(Box::new(Inserted::Done(Outcome::Failed {
            task_id,
            task_state: Code::task_state(state),
            complete_reason: reason,
        })));
    };
    tries.back_to_back += 1;
    let unnamed = culprit == Culprit::Unnamed;
    notes.push(GuardNote::BackToBack {
        task_id,
        state: Code::task_state(state),
        culprit,
        reason,
        retry: tries.back_to_back,
    });
    if unnamed {
        // No task to wait for: the insert that ran is waited out for about its length.
        let pause = client.learnt().0.unwrap_or(Duration::from_millis(500));
        tokio::time::sleep(pause.min(run.deadline.saturating_duration_since(Instant::now()))).await;
    }
    Turn::Again
}

/// Waits for every insert running at the VPG (another client's, or one this process left running
/// when an earlier guard's deadline came) before an insert, since ours would fail while it runs.
/// `Ok(true)` when one was waited for; `Err` with the outcome when the deadline came first.
/// `maybe_ours` says that a running insert may be an earlier attempt of this change whose answer
/// was lost with its process.
async fn wait_for_running(
    run: &Insert<'_>,
    maybe_ours: bool,
    notes: &mut Vec<GuardNote>,
) -> Result<bool, Inserted> {
    let Insert {
        ctx,
        client,
        vpg,
        deadline,
        watch,
        ..
    } = *run;
    let vpg_id = vpg.vpg_id.as_str();
    let running = match client.insert_tasks(vpg_id, true).await {
        Ok(running) => running,
        Err(e) => {
            notes.push(GuardNote::RunningUnchecked {
                error: e.to_string(),
            });
            return Ok(false);
        }
    };
    let mut waited = false;
    for other in running {
        let Some(other_id) = other.task_identifier.clone() else {
            continue;
        };
        // One this process saw end is listed only by a read sent before it ended: passed over.
        let initiated_by = initiated_by(&other);
        let whose = match ctx.own.ended(vpg_id, &other_id) {
            Some(true) => continue,
            Some(false) => RunningInsert::EarlierGuardOfThisProcess,
            None if maybe_ours => RunningInsert::AnotherClientOrEarlierAttempt { initiated_by },
            None => RunningInsert::AnotherClient { initiated_by },
        };
        notes.push(GuardNote::WaitedForRunning {
            task_id: other_id.clone(),
            whose: whose.clone(),
        });
        watch.report(Stage::Queued, Some(&other_id), Some(&other));
        let (learnt, _) = client.learnt();
        match wait_task(client, &other_id, Instant::now(), deadline, learnt, watch).await {
            Ok(TaskWait::Terminal(t)) => {
                waited = true;
                if ctx.own.contains(vpg_id, &other_id) {
                    ctx.own.record(vpg_id, &other_id, t.started, true);
                }
            }
            Ok(TaskWait::StillRunning(_)) => {
                return Err(Inserted::Done(Outcome::Error {
                    task_id: None,
                    kind: ErrorKind::Connection,
                    cause: None,
                    message: format!(
                        "the deadline came while waiting for insert task {other_id} of {whose} at this VPG; nothing more was inserted; guard again"
                    ),
                }));
            }
            Err(e) => notes.push(GuardNote::RunningUnfollowed {
                task_id: other_id,
                error: e.to_string(),
            }),
        }
    }
    Ok(waited)
}

/// Who started `task`, as a note names them.
fn initiated_by(task: &Task) -> String {
    task.initiated_by
        .as_deref()
        .unwrap_or("unknown")
        .to_string()
}

/// Finds the insert that was running at the VPG while ours ran (the back-to-back rule): another insert
/// task of the VPG that started no later than ours and had not ended when ours started. Falls back to
/// the reason's words when the ZVM does not relate tasks to VPGs.
async fn back_to_back_culprit(
    client: &ZvmClient,
    vpg_id: &str,
    ours: &str,
    task: &Task,
) -> Option<Culprit> {
    if let Ok(tasks) = client.insert_tasks(vpg_id, false).await {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_insert_is_learnt_by_the_zvms_clock_not_by_when_the_client_saw_it_end() {
        let task = |started: &str, completed: Option<&str>| Task {
            started: crate::zvm::wire::parse_time(started),
            completed: completed.and_then(crate::zvm::wire::parse_time),
            ..Task::default()
        };
        assert_eq!(
            zvm_duration(&task(
                "2026-01-01T00:00:00.000Z",
                Some("2026-01-01T00:00:00.047Z")
            )),
            Some(Duration::from_millis(47))
        );
        assert_eq!(zvm_duration(&task("2026-01-01T00:00:00.000Z", None)), None);
        assert_eq!(
            zvm_duration(&task(
                "2026-01-01T00:00:01.000Z",
                Some("2026-01-01T00:00:00.000Z")
            )),
            None,
            "a completion before the start is not learnt"
        );
    }
}
