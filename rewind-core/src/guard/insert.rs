//! The insert into one VPG, as one machine over [`InsertPort`] alone (its tests script the port):
//! an enum of steps and one loop that checks the deadline and the stop signal once per step.
//!
//! 1. [`Step::Queued`]: take the VPG's place in this process's queue; the VPG is held from the
//!    insert until its task is terminal, so one process never inserts twice at once into one VPG.
//! 2. [`Step::MayExist`]: when a checkpoint with this tag may exist (an earlier attempt inserted here,
//!    our answer was lost, an insert that may be ours ran meanwhile), follow the inserts that may be
//!    ours to their end and look for the tag before any insert: never two of one tag in one VPG.
//! 3. [`Step::Wait`]: wait for every insert running at the VPG (another client's, or one this
//!    process left running at an earlier deadline), since ours would fail while it runs.
//! 4. [`Step::Send`], [`Step::Follow`], [`Step::Settle`]: insert, read the task to its end; a
//!    back-to-back failure goes round again (bounded), any other failure ends the VPG.
//! 5. [`Step::Listing`]: release the VPG and wait until the checkpoint is listed.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use tokio::sync::OwnedMutexGuard;

use super::context::GuardContext;
use super::hold;
use super::note::{Culprit, GuardNote, RunningInsert};
use super::problem::{Met, VpgProblem};
use super::queue::{back_to_back_culprit, initiated_by, maybe_ours};
use super::record::{AttemptLog, Earlier};
use super::report::Outcome;
use crate::audit_journal::JournalOutcome;
use crate::codes::{Code, STATE_COMPLETED, STATE_IN_PROGRESS};
use crate::error::RewindError;
use crate::progress::{ProgressSink, Stage};
use crate::protection::VpgProtection;
use crate::zvm::port::{InsertPort, Sent};
use crate::zvm::task::{ListedFrom, Pace, TaskWait, Watch, wait_listed, wait_task};
use crate::zvm::timings::SiteTimings;
use crate::zvm::wire::{INSERT_TASK_TYPE, Task};

/// Runs the machine for one VPG through `port`: its outcome and its notes, in order.
pub(super) async fn run(
    at: &Place<'_>,
    port: &impl InsertPort,
    timings: &SiteTimings,
    earlier: Option<&Earlier>,
    sink: &dyn ProgressSink,
) -> (Outcome, Vec<GuardNote>) {
    let watch = Watch {
        sink,
        site: port.site(),
        vpg_id: &at.vpg.vpg_id,
        vpg_name: &at.vpg.vpg_name,
        task_type: INSERT_TASK_TYPE,
        began: Instant::now(),
    };
    let mut machine = Machine::new(at, port, timings, earlier, &watch);
    let outcome = machine.run().await;
    watch.report(Stage::Done, outcome.task_id(), None);
    (outcome, machine.notes)
}

/// Where the insert happens: the guard, the VPG, the tag, the attempt's journal lines, the deadline.
pub(super) struct Place<'a> {
    pub(super) ctx: &'a GuardContext<'a>,
    pub(super) vpg: &'a VpgProtection,
    pub(super) tag: &'a str,
    pub(super) log: &'a AttemptLog<'a>,
    pub(super) deadline: Instant,
    /// Set once Zerto has the insert (its task is followed); dropped with the place when the
    /// insert ends.
    pub(super) sent: tokio::sync::watch::Sender<bool>,
}

/// The steps of one VPG's insert.
#[derive(Debug)]
enum Step {
    /// Waiting for this process's turn at the VPG.
    Queued,
    /// A checkpoint with this tag may already exist: follow what may be ours, then look for it.
    MayExist(MayExist),
    /// Waiting for every insert running at the VPG.
    Wait,
    /// Sending the insert.
    Send,
    /// Reading the insert task, sent at `sent`, to its end.
    Follow { task_id: String, sent: Instant },
    /// The insert task, sent at `at`, is terminal.
    Settle(Ended),
    /// The insert Completed `at`; the VPG is released and its checkpoint is waited for.
    Listing(Ended),
    /// The VPG is settled.
    Done(Outcome),
}

/// An insert task read to its end, and when.
#[derive(Debug)]
struct Ended {
    task_id: String,
    task: Box<Task>,
    at: Instant,
}

impl Ended {
    fn now(task_id: String, task: Task) -> Ended {
        let (task, at) = (Box::new(task), Instant::now());
        Ended { task_id, task, at }
    }
}

/// Why a checkpoint with this tag may already exist.
#[derive(Debug, Clone, PartialEq, Eq)]
enum MayExist {
    /// An earlier attempt of this change inserted here: the task it learnt is followed first.
    EarlierAttempt,
    /// No answer to our insert could be read (what happened, in words): the inserts that may be
    /// ours are followed to their end first.
    LostAnswer(String),
    /// An insert that may be an earlier attempt's ran at the VPG meanwhile.
    RanMeanwhile,
    /// An earlier look missed, and a ZVM may still be working on what may be ours: one look more.
    StillMay,
}

/// One VPG's insert in progress.
struct Machine<'a, P> {
    at: &'a Place<'a>,
    port: &'a P,
    timings: &'a SiteTimings,
    earlier: Option<&'a Earlier>,
    watch: &'a Watch<'a>,
    /// The VPG's place in this process's queue, held from the insert until its task is terminal.
    held: Option<OwnedMutexGuard<()>>,
    /// The VPG's lease in the journal's database, held as `held` is, across a team's replicas.
    leased: Option<crate::audit_journal::ChangeHold>,
    /// Until when a checkpoint with this tag may still show up; `None` while none can exist.
    may_exist: Option<Instant>,
    /// Whether the tag was looked for since the last insert, so the next send needs no look.
    looked: bool,
    /// How far back the VPG's checkpoints are read when the tag is looked for.
    since: Option<DateTime<Utc>>,
    /// Retries after another insert made ours fail.
    back_to_back: u32,
    /// Inserts sent again after one whose outcome was unknown turned out not to have happened.
    resent: u32,
    /// After a lost answer, the insert tasks that may be ours, all ended.
    candidates: Vec<Task>,
    notes: Vec<GuardNote>,
}

impl<'a, P: InsertPort> Machine<'a, P> {
    fn new(
        at: &'a Place<'a>,
        port: &'a P,
        timings: &'a SiteTimings,
        earlier: Option<&'a Earlier>,
        watch: &'a Watch<'a>,
    ) -> Self {
        let from = match earlier {
            Some(e) => {
                e.at - chrono::Duration::from_std(at.ctx.settings.deadline).unwrap_or_default()
            }
            None => Utc::now(),
        };
        Machine {
            at,
            port,
            timings,
            earlier,
            watch,
            held: None,
            leased: None,
            may_exist: earlier.map(|e| earlier_look_until(timings, e)),
            looked: false,
            since: Some(from - chrono::Duration::minutes(10)),
            back_to_back: 0,
            resent: 0,
            candidates: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// The one loop: each step is checked against the deadline and the stop signal, then taken.
    async fn run(&mut self) -> Outcome {
        let mut step = Step::Queued;
        loop {
            step = match self.check(step) {
                Step::Done(outcome) => return outcome,
                Step::Queued => self.queued().await,
                Step::MayExist(why) => self.may_exist(why).await,
                Step::Wait => self.wait().await,
                Step::Send => self.send().await,
                Step::Follow { task_id, sent } => self.follow(task_id, sent).await,
                Step::Settle(ended) => self.settle(ended).await,
                Step::Listing(ended) => self.listing(ended).await,
            };
        }
    }

    /// Reads the insert task `task_id`, sent at `sent`, to its end or the deadline.
    async fn wait_for(&self, task_id: &str, sent: Instant) -> Result<TaskWait, RewindError> {
        let pace = self.pace(self.timings.learnt().insert);
        wait_task(self.port, task_id, sent, self.at.deadline, pace, self.watch).await
    }

    /// How a wait is paced: with what was `learnt`, and the settings' polling floor.
    fn pace(&self, learnt: Option<Duration>) -> Pace {
        Pace::of(learnt, self.at.ctx.settings.poll_floor)
    }

    /// The step itself, or what the deadline or the stop signal makes of it. Only steps before the
    /// insert is sent are stopped; a sent insert is followed (up to the deadline), since what it
    /// inserted is this guard's to account for. Looks bound themselves and look at least once.
    fn check(&self, step: Step) -> Step {
        let late = Instant::now() >= self.at.deadline;
        let stopped = self.at.ctx.stop.is_cancelled();
        match step {
            Step::Queued | Step::Wait | Step::Send if stopped => self.stopped(),
            Step::Wait | Step::Send if late => Step::Done(VpgProblem::DeadlineBeforeInsert.into()),
            Step::Send => self.lost_lock().unwrap_or(Step::Send),
            Step::Follow { task_id, .. } if late => Step::Done(still_running(task_id, None)),
            step => step,
        }
    }

    fn stopped(&self) -> Step {
        let vpg = self.at.vpg.vpg_name.clone();
        Step::Done(VpgProblem::Stopped { vpg }.into())
    }

    /// Takes the VPG's place in the queue, then follows an earlier attempt or waits for inserts.
    async fn queued(&mut self) -> Step {
        self.watch.report(Stage::Queued, None, None);
        let slot = self.at.ctx.queue.slot(&self.at.vpg.vpg_id);
        let turn = tokio::select! {
            held = tokio::time::timeout_at(self.at.deadline.into(), slot.lock_owned()) => held.ok(),
            () = self.at.ctx.stop.cancelled() => return self.stopped(),
        };
        let Some(held) = turn else {
            let vpg = self.at.vpg.vpg_name.clone();
            return Step::Done(VpgProblem::BusyInThisProcess { vpg }.into());
        };
        self.held = Some(held);
        if let Err(step) = self.lease_vpg().await {
            return step;
        }
        match self.earlier {
            Some(_) => Step::MayExist(MayExist::EarlierAttempt),
            None => Step::Wait,
        }
    }

    /// Takes the VPG's lease when the journal is shared by replicas, until the deadline.
    async fn lease_vpg(&mut self) -> Result<(), Step> {
        self.leased = hold::vpg_lease(self.at.ctx.journal, self.at.vpg, self.at.deadline)
            .await
            .map_err(|problem| Step::Done(problem.into()))?;
        Ok(())
    }

    /// The lock this guard no longer holds, when it has lost one: no insert may be sent then.
    fn lost_lock(&self) -> Option<Step> {
        let (journal, fence) = (self.at.ctx.journal, &self.at.log.fence);
        hold::lost(journal, fence, self.leased.as_ref(), self.at.vpg)
            .map(|problem| Step::Done(problem.into()))
    }

    /// Follows the inserts that may be ours to their end, then looks for the tag.
    async fn may_exist(&mut self, why: MayExist) -> Step {
        let followed = match &why {
            MayExist::EarlierAttempt => self.follow_earlier().await,
            MayExist::LostAnswer(what) => self.follow_maybe_ours(what).await,
            MayExist::RanMeanwhile | MayExist::StillMay => Ok(self.since),
        };
        let since = match followed {
            Ok(since) => since,
            Err(step) => return step,
        };
        let until = match &why {
            MayExist::EarlierAttempt | MayExist::StillMay => {
                self.may_exist.unwrap_or_else(Instant::now)
            }
            MayExist::LostAnswer(_) | MayExist::RanMeanwhile => {
                Instant::now() + listing_grace(self.timings)
            }
        };
        let pace = self.pace(self.timings.learnt().listing);
        let (vpg_id, tag) = (self.at.vpg.vpg_id.as_str(), self.at.tag);
        let deadline = until.min(self.at.deadline);
        // The lag a look sees is not learnt: it does not start at a completion.
        let found = wait_listed(
            self.port,
            vpg_id,
            tag,
            since,
            ListedFrom::Now,
            deadline,
            pace,
        )
        .await;
        self.looked = true;
        match found {
            Ok(Some((cp, _))) => Step::Done(self.found(&why, cp)),
            Ok(None) => self.missed(why),
            Err(e) => Step::Done(self.unread(why, &e)),
        }
    }

    /// The earlier attempt's insert task, when it learnt one, read to its end: `Err` with the next
    /// step when that settles the VPG (it Completed: its checkpoint is adopted; it still runs).
    async fn follow_earlier(&mut self) -> Result<Option<DateTime<Utc>>, Step> {
        let Some(earlier) = self.earlier else {
            return Ok(self.since);
        };
        let Some(id) = earlier.task_id.clone() else {
            return Ok(self.since);
        };
        let (attempt, task_id) = (earlier.attempt.clone(), id.clone());
        let vpg_id = self.at.vpg.vpg_id.as_str();
        let waited = self.wait_for(&id, Instant::now()).await;
        match waited {
            Ok(TaskWait::Terminal(task)) => {
                self.at.ctx.own.record(vpg_id, &id, task.started, true);
                if task.state() == Some(STATE_COMPLETED) {
                    self.notes
                        .push(GuardNote::EarlierInsertCompleted { attempt, task_id });
                    return Err(Step::Listing(Ended::now(id, task)));
                }
                self.notes.push(GuardNote::EarlierInsertEnded {
                    attempt,
                    task_id,
                    state: task.state().map(Code::task_state),
                    reason: task.complete_reason.clone().unwrap_or_default(),
                });
            }
            Ok(TaskWait::StillRunning(last)) => {
                self.notes
                    .push(GuardNote::EarlierInsertStillRunning { attempt, task_id });
                return Err(Step::Done(still_running(id, last.as_ref())));
            }
            Err(e) => self.notes.push(GuardNote::EarlierInsertUnreadable {
                attempt,
                task_id,
                error: e.to_string(),
            }),
        }
        Ok(self.since)
    }

    /// After an insert of unknown outcome: the VPG's insert tasks that may be ours, each still
    /// running read to its end. `Ok` with how far back to look for the tag; `Err` with the next step
    /// when one still runs at the deadline, or cannot be read or followed.
    async fn follow_maybe_ours(&mut self, what: &str) -> Result<Option<DateTime<Utc>>, Step> {
        let vpg_id = self.at.vpg.vpg_id.as_str();
        let tasks = match self.port.inserts(vpg_id).await {
            Ok(tasks) => tasks,
            Err(e) => {
                return Err(Step::Done(
                    self.unread(MayExist::LostAnswer(what.into()), &e),
                ));
            }
        };
        let newest = tasks.iter().filter_map(|t| t.started).max();
        let mut candidates = maybe_ours(self.at.ctx.own, vpg_id, tasks, newest);
        for c in candidates
            .iter_mut()
            .filter(|c| c.state() == Some(STATE_IN_PROGRESS))
        {
            let id = c.task_identifier.clone().unwrap_or_default();
            match self.wait_for(&id, Instant::now()).await {
                Ok(TaskWait::Terminal(t)) => *c = t,
                Ok(TaskWait::StillRunning(last)) => {
                    self.notes.push(GuardNote::MaybeOursStillRunning {
                        task_id: id.clone(),
                    });
                    let last = last.unwrap_or_else(|| c.clone());
                    return Err(Step::Done(still_running(id, Some(&last))));
                }
                Err(e) => {
                    let (tag, vpg) = (self.at.tag.to_string(), self.at.vpg.vpg_name.clone());
                    let (what, met) = (what.to_string(), Met::from(&e));
                    let problem = VpgProblem::MaybeOursUnfollowed {
                        what,
                        task_id: id,
                        tag,
                        vpg,
                        met,
                    };
                    return Err(Step::Done(problem.into()));
                }
            }
        }
        let since = candidates.iter().filter_map(|t| t.started).min();
        self.candidates = candidates;
        Ok(since.or(newest).map(|t| t - chrono::Duration::seconds(60)))
    }

    /// The tag was found: the VPG is tagged.
    fn found(&mut self, why: &MayExist, cp: crate::zvm::wire::Checkpoint) -> Outcome {
        let task_id = match why {
            MayExist::LostAnswer(_) => {
                let task_id = self.newest_completed();
                self.notes.push(GuardNote::FoundAfterUnknown {
                    checkpoint_id: cp.checkpoint_identifier.clone(),
                    task_id: task_id.clone(),
                });
                task_id
            }
            _ => {
                self.notes.push(GuardNote::TagAlreadyListed {
                    checkpoint_id: cp.checkpoint_identifier.clone(),
                });
                None
            }
        };
        Outcome::Tagged {
            task_id,
            task_state: Some(Code::task_state(STATE_COMPLETED)),
            checkpoint_id: cp.checkpoint_identifier.unwrap_or_default(),
            timestamp: cp.time_stamp,
        }
    }

    /// The tag was not found: after a lost answer, the insert did not happen and is sent again (a
    /// bounded number of times); else the insert goes ahead.
    fn missed(&mut self, why: MayExist) -> Step {
        self.may_exist = Some(Instant::now());
        let MayExist::LostAnswer(what) = why else {
            return match why {
                MayExist::EarlierAttempt => Step::Wait,
                _ => Step::Send,
            };
        };
        let cap = self.at.ctx.settings.lost_response_retries;
        if self.resent >= cap {
            let (sent, site) = (self.resent + 1, self.port.site().to_string());
            return Step::Done(VpgProblem::UnknownEachTime { sent, what, site }.into());
        }
        self.resent += 1;
        self.notes.push(GuardNote::InsertingAgain {
            resent: self.resent,
            of: cap,
        });
        // A ZVM may still be working on the lost request: look once more first.
        self.looked = false;
        Step::Wait
    }

    /// Looking for the tag failed: nothing more is inserted, so that the tag is not inserted twice.
    fn unread(&self, why: MayExist, e: &RewindError) -> Outcome {
        let (tag, vpg, met) = (
            self.at.tag.to_string(),
            self.at.vpg.vpg_name.clone(),
            Met::from(e),
        );
        match why {
            MayExist::LostAnswer(what) => VpgProblem::UnknownAndUnread {
                what,
                tag,
                vpg,
                met,
            },
            _ => VpgProblem::MayExistUnread { tag, vpg, met },
        }
        .into()
    }

    /// Waits for every insert running at the VPG; then, after a pause, goes round again when another
    /// started meanwhile, looks for the tag when it may exist, or sends.
    async fn wait(&mut self) -> Step {
        let maybe_ours = self.may_exist.is_some();
        let stop = self.at.ctx.stop;
        // Another client's insert need not be waited for once told to stop; one that may be an
        // earlier attempt of this change is followed to its end, as what it inserted is this
        // guard's to account for.
        let waited = if maybe_ours {
            self.wait_for_running(true).await
        } else {
            tokio::select! {
                waited = self.wait_for_running(false) => waited,
                () = stop.cancelled() => return self.stopped(),
            }
        };
        let waited = match waited {
            Ok(waited) => waited,
            Err(step) => return step,
        };
        if waited && self.another_insert_after_a_pause().await {
            return Step::Wait;
        }
        match (maybe_ours, waited, self.looked) {
            (true, true, _) => Step::MayExist(MayExist::RanMeanwhile),
            (true, false, false) => Step::MayExist(MayExist::StillMay),
            _ => Step::Send,
        }
    }

    /// Waits for each insert running at the VPG that this process did not see end. `Ok(true)` when
    /// one was waited for; `Err` with the next step when the deadline came first.
    async fn wait_for_running(&mut self, maybe_ours: bool) -> Result<bool, Step> {
        let (ctx, vpg_id) = (self.at.ctx, self.at.vpg.vpg_id.as_str());
        let running = match self.port.running_inserts(vpg_id).await {
            Ok(running) => running,
            Err(e) => {
                self.notes.push(GuardNote::RunningUnchecked {
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
            self.notes.push(GuardNote::WaitedForRunning {
                task_id: other_id.clone(),
                whose: whose.clone(),
            });
            self.watch
                .report(Stage::Queued, Some(&other_id), Some(&other));
            match self.wait_for(&other_id, Instant::now()).await {
                Ok(TaskWait::Terminal(t)) => {
                    waited = true;
                    if ctx.own.contains(vpg_id, &other_id) {
                        ctx.own.record(vpg_id, &other_id, t.started, true);
                    }
                }
                Ok(TaskWait::StillRunning(_)) => {
                    let problem = VpgProblem::DeadlineWaitingFor {
                        task_id: other_id,
                        whose,
                    };
                    return Err(Step::Done(problem.into()));
                }
                Err(e) => self.notes.push(GuardNote::RunningUnfollowed {
                    task_id: other_id,
                    error: e.to_string(),
                }),
            }
        }
        Ok(waited)
    }

    /// After waiting for another client's insert: every guard that waited for the same insert
    /// (other processes', other machines') wakes when it ends, so a random pause spreads them out,
    /// and the first to insert is seen running by the others instead of all inserting at once and
    /// all but one failing. True when an insert runs again after the pause.
    async fn another_insert_after_a_pause(&self) -> bool {
        let typical = self
            .timings
            .learnt()
            .insert
            .unwrap_or(Duration::from_millis(500))
            .clamp(Duration::from_millis(20), Duration::from_secs(2));
        let pause = typical.mul_f64(rand::random::<f64>() * 0.5);
        tokio::time::sleep(pause.min(self.at.deadline.saturating_duration_since(Instant::now())))
            .await;
        let vpg_id = self.at.vpg.vpg_id.as_str();
        self.port
            .running_inserts(vpg_id)
            .await
            .is_ok_and(|running| {
                running
                    .iter()
                    .filter_map(|t| t.task_identifier.as_deref())
                    .any(|id| self.at.ctx.own.ended(vpg_id, id) != Some(true))
            })
    }

    /// Sends the insert. An answer of unknown outcome makes the tag one that may exist.
    async fn send(&mut self) -> Step {
        self.watch.report(Stage::Inserting, None, None);
        let sent = Instant::now();
        self.looked = false;
        match self.port.insert(&self.at.vpg.vpg_id, self.at.tag).await {
            Ok(Sent::Task(task_id)) => Step::Follow { task_id, sent },
            Ok(Sent::Unknown(what)) => {
                self.notes
                    .push(GuardNote::OutcomeUnknown { what: what.clone() });
                Step::MayExist(MayExist::LostAnswer(what))
            }
            Err(e) => Step::Done(VpgProblem::Refused { met: Met::from(&e) }.into()),
        }
    }

    /// Reads the insert task to its end, journaling its id meanwhile.
    async fn follow(&mut self, task_id: String, sent: Instant) -> Step {
        let (ctx, vpg_id) = (self.at.ctx, self.at.vpg.vpg_id.as_str());
        self.at.sent.send_replace(true);
        ctx.own.record(vpg_id, &task_id, None, false);
        // The task id is journaled while the task is followed: the intent, synced before the
        // insert, already accounts for it, and the task line only saves a later attempt a look.
        let (_, waited) = tokio::join!(
            self.at.log.sent(vpg_id, &task_id),
            self.wait_for(&task_id, sent)
        );
        match waited {
            Ok(TaskWait::Terminal(task)) => {
                ctx.own.record(vpg_id, &task_id, task.started, true);
                Step::Settle(Ended {
                    task_id,
                    task: Box::new(task),
                    at: sent,
                })
            }
            Ok(TaskWait::StillRunning(last)) => Step::Done(still_running(task_id, last.as_ref())),
            Err(e) => Step::Done(
                VpgProblem::Unfollowed {
                    task_id,
                    met: Met::from(&e),
                }
                .into(),
            ),
        }
    }

    /// A terminal insert task: Completed goes on to listing; a back-to-back failure goes round again
    /// (after waiting out an insert it cannot name), until the cap if there is one; any other
    /// failure ends the VPG.
    async fn settle(&mut self, ended: Ended) -> Step {
        let Ended {
            task_id,
            task,
            at: sent,
        } = ended;
        let state = task.state().unwrap_or(-1);
        if state == STATE_COMPLETED {
            self.timings
                .observe_insert(zvm_duration(&task).unwrap_or_else(|| sent.elapsed()));
            return Step::Listing(Ended::now(task_id, *task));
        }
        let reason = task.complete_reason.clone().unwrap_or_default();
        let settings = self.at.ctx.settings;
        let retry_allowed = settings
            .back_to_back_retries
            .is_none_or(|cap| self.back_to_back < cap);
        let culprit = match retry_allowed {
            true => back_to_back_culprit(self.port, &self.at.vpg.vpg_id, &task_id, &task).await,
            false => None,
        };
        let Some(culprit) = culprit else {
            let task_state = Code::task_state(state);
            return Step::Done(Outcome::Failed {
                task_id,
                task_state,
                complete_reason: reason,
            });
        };
        self.back_to_back += 1;
        let unnamed = culprit == Culprit::Unnamed;
        let (state, retry) = (Code::task_state(state), self.back_to_back);
        self.notes.push(GuardNote::BackToBack {
            task_id,
            state,
            culprit,
            reason,
            retry,
        });
        if unnamed {
            // No task to wait for: the insert that ran is waited out for about its length.
            let pause = self
                .timings
                .learnt()
                .insert
                .unwrap_or(Duration::from_millis(500));
            tokio::time::sleep(
                pause.min(self.at.deadline.saturating_duration_since(Instant::now())),
            )
            .await;
        }
        Step::Wait
    }

    /// Releases the VPG (the next insert may go as soon as this one's task is terminal) and waits
    /// until the checkpoint is listed.
    async fn listing(&mut self, ended: Ended) -> Step {
        let Ended { task_id, task, at } = ended;
        self.held = None;
        self.leased = None;
        self.watch
            .report(Stage::Listing, Some(&task_id), Some(&task));
        let since = task.started.map(|t| t - chrono::Duration::seconds(60));
        let insert_took = zvm_duration(&task).or(self.timings.learnt().insert);
        let from = ListedFrom::Completion { at, insert_took };
        let (vpg_id, lag) = (
            self.at.vpg.vpg_id.as_str(),
            self.pace(self.timings.learnt().listing),
        );
        let task_state = task.state().map(Code::task_state);
        match wait_listed(
            self.port,
            vpg_id,
            self.at.tag,
            since,
            from,
            self.at.deadline,
            lag,
        )
        .await
        {
            Ok(Some((cp, lag))) => {
                self.timings.observe_listing(lag);
                Step::Done(Outcome::Tagged {
                    task_id: Some(task_id),
                    task_state,
                    checkpoint_id: cp.checkpoint_identifier.unwrap_or_default(),
                    timestamp: cp.time_stamp,
                })
            }
            Ok(None) => {
                self.notes.push(GuardNote::NotListedYet {
                    task_id: task_id.clone(),
                });
                Step::Done(Outcome::StillRunning {
                    task_id,
                    task_state,
                    stage: Stage::Listing,
                })
            }
            Err(e) => Step::Done(
                VpgProblem::NotLookedFor {
                    task_id,
                    met: Met::from(&e),
                }
                .into(),
            ),
        }
    }

    /// The newest Completed insert that may be ours, taken as ours and recorded as this process's.
    fn newest_completed(&self) -> Option<String> {
        // The first of the newest, as they are listed.
        let newest = self
            .candidates
            .iter()
            .rev()
            .filter(|t| t.state() == Some(STATE_COMPLETED))
            .max_by_key(|t| t.started)?;
        let id = newest.task_identifier.clone()?;
        self.at
            .ctx
            .own
            .record(&self.at.vpg.vpg_id, &id, newest.started, true);
        Some(id)
    }
}

/// A VPG whose insert task `task_id` still runs at the deadline, last read as `last`.
fn still_running(task_id: String, last: Option<&Task>) -> Outcome {
    let task_state = last.and_then(Task::state).map(Code::task_state);
    Outcome::StillRunning {
        task_id,
        task_state,
        stage: Stage::Running,
    }
}

/// How long a task ran by the ZVM's own clock, when it says. Insert durations are learnt from this
/// rather than from how long it took to see the task end: that includes the client's own lateness,
/// and under load late polls would teach it to place the next first poll later still (with 256
/// concurrent guards, a task's end was seen 41 ms late at the median; learning the ZVM's duration,
/// 13 ms).
pub(super) fn zvm_duration(task: &Task) -> Option<Duration> {
    (task.completed? - task.started?).to_std().ok()
}

/// How long a checkpoint that may be this guard's can take to show after its insert: four times the
/// listing lag learnt, within 2 to 30 s.
fn listing_grace(timings: &SiteTimings) -> Duration {
    timings
        .learnt()
        .listing
        .map(|l| l * 4)
        .unwrap_or_default()
        .clamp(Duration::from_secs(2), Duration::from_secs(30))
}

/// Until when a look for an earlier attempt's tag waits: a grace after its last line, when that is
/// recent (its insert may still be on its way to being listed); else one look.
fn earlier_look_until(timings: &SiteTimings, earlier: &Earlier) -> Instant {
    let grace = if earlier.outcome == JournalOutcome::Pending {
        // The insert may have been sent just before the process died, so it may still run.
        listing_grace(timings) + timings.learnt().insert.unwrap_or_default()
    } else {
        listing_grace(timings)
    };
    earlier.written() + grace
}
