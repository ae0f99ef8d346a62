//! A live failover or move to its end: once its task has brought the VMs up at the recovery site,
//! it waits before commit (FailingOverBeforeCommit, MovingBeforeCommit; its task WaitingForUserInput)
//! until `FailoverCommit` / `MoveCommit` or `FailoverRollback` / `moveRollback`, or its commit
//! policy's timeout: Commit commits and Rollback rolls back by itself then, None waits for a person.
//! A commit leaves the VPG Recovered; a rollback leaves it replicating as before, writing again.
//! Never a rewind tool: here so that clients of Zerto's whole API can run against the simulator.

use super::auth::Principal;
use super::clock::SimTime;
use super::ids::SiteRole;
use super::model::World;
use super::refusal::Refusal;
use super::restore::commit_policy;
use super::schedule::Event;
use super::tasks::{Operation, Planned, TaskKey};
use super::traces::RecoveryReport;
use crate::decisions;
use crate::enums::{status, substatus, task_state};

/// What is asked of a live operation that waits before commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiveEnd {
    /// `FailoverCommit`, `MoveCommit`.
    Commit,
    /// `FailoverRollback`, `moveRollback`.
    Rollback,
}

impl World {
    /// The end of a `FailOver` or `Move` task: the VPG waits before commit, and, unless its policy is
    /// None, its timeout is scheduled.
    pub(super) fn live_waits(&mut self, key: TaskKey, at: SimTime) {
        let vpg = self.tasks[key].on_vpg();
        let (before_commit, policy) = match &self.tasks[key].operation {
            Operation::Failover { commit_policy, .. } => {
                (substatus::FAILING_OVER_BEFORE_COMMIT, *commit_policy)
            }
            Operation::Move { commit_policy } => (substatus::MOVING_BEFORE_COMMIT, *commit_policy),
            _ => return,
        };
        self.vpgs[vpg].sub_status = before_commit;
        self.tasks[key].wait(at);
        if policy != commit_policy::NONE {
            let timeout = at.plus_millis(decisions::LIVE_COMMIT_TIMEOUT_SECS * 1000);
            self.schedule(timeout, Event::LiveTimeout { vpg, task: key });
        }
    }

    /// `POST /v1/vpgs/{id}/FailoverCommit`, `FailoverRollback`, `MoveCommit`, `moveRollback`: the
    /// task that ends the VPG's failover (`failover`) or move waiting before commit.
    pub fn end_live(
        &mut self,
        site: SiteRole,
        vpg: usize,
        failover: bool,
        end: LiveEnd,
        by: &Principal,
        now: SimTime,
    ) -> Result<String, Refusal> {
        let of = self.waiting_live(vpg, failover)?;
        let operation = match end {
            LiveEnd::Commit => Operation::LiveCommit { of, failover },
            LiveEnd::Rollback => Operation::LiveRollback { of, failover },
        };
        let task = self.start_task(site, vpg, operation, Planned::Complete, by, now);
        let v = &mut self.vpgs[vpg];
        v.sub_status = match (failover, end) {
            (true, LiveEnd::Commit) => substatus::FAILING_OVER_COMMITTING,
            (true, LiveEnd::Rollback) => substatus::FAILING_OVER_ROLLING_BACK,
            (false, LiveEnd::Commit) => substatus::MOVING_COMMITTING,
            (false, LiveEnd::Rollback) => substatus::MOVING_ROLLING_BACK,
        };
        Ok(self.tasks[task].id.clone())
    }

    /// The VPG's failover (or move) task that waits before commit, with no commit or rollback asked.
    fn waiting_live(&self, vpg: usize, failover: bool) -> Result<TaskKey, Refusal> {
        let v = &self.vpgs[vpg];
        let waiting = v.live_task.filter(|&key| {
            let task = &self.tasks[key];
            let kind = matches!(task.operation, Operation::Failover { .. }) == failover;
            kind && task.waiting.is_some() && task.ended.is_none() && !self.live_end_asked(key)
        });
        let what = if failover { "failover" } else { "move" };
        waiting.ok_or_else(|| {
            Refusal::Conflict(format!(
                "VPG '{}' has no {what} waiting for a commit or a rollback (it is {}).",
                v.name,
                v.state()
            ))
        })
    }

    fn live_end_asked(&self, of_task: TaskKey) -> bool {
        self.tasks.iter().any(|t| {
            t.ended.is_none()
                && matches!(t.operation,
                    Operation::LiveCommit { of, .. } | Operation::LiveRollback { of, .. } if of == of_task)
        })
    }

    /// The end of a `FailoverCommit`, `FailoverRollback`, `MoveCommit` or `MoveRollback` task.
    pub(super) fn finish_live_end(&mut self, key: TaskKey, at: SimTime) -> (u8, String) {
        let (of, commit) = match self.tasks[key].operation {
            Operation::LiveCommit { of, .. } => (of, true),
            Operation::LiveRollback { of, .. } => (of, false),
            _ => return (task_state::FAILED, String::new()),
        };
        let by = self.tasks[key].initiated_by.clone();
        self.close_live(of, commit, &by, at);
        (task_state::COMPLETED, String::new())
    }

    /// A failover or move whose commit-policy timeout passed without a person's word: committed or
    /// rolled back, as its policy says.
    pub(super) fn live_timeout(&mut self, vpg: usize, task: TaskKey, at: SimTime) {
        if self.vpgs[vpg].live_task != Some(task) || self.live_end_asked(task) {
            return;
        }
        let commit = match &self.tasks[task].operation {
            Operation::Failover { commit_policy, .. } | Operation::Move { commit_policy } => {
                *commit_policy == commit_policy::COMMIT
            }
            _ => return,
        };
        self.close_live(task, commit, decisions::SYSTEM_USER, at);
    }

    /// Commits (Recovered) or rolls back (replicating again) the live operation of task `key`, ends
    /// its task, and reports it.
    fn close_live(&mut self, key: TaskKey, commit: bool, by: &str, at: SimTime) {
        let task = &self.tasks[key];
        let vpg = task.on_vpg();
        let (kind, point_in_time, vms) = match &task.operation {
            Operation::Failover {
                checkpoint, vms, ..
            } => (
                "Failover",
                self.vpgs[vpg].journal.find(*checkpoint, at).map(|c| c.at),
                vms.clone(),
            ),
            _ => ("Move", task.waiting, self.vpgs[vpg].vms.clone()),
        };
        let (state, reason, notes) = match commit {
            true => (
                task_state::COMPLETED,
                String::new(),
                format!("Committed by {by}."),
            ),
            false => (
                task_state::STOPPED,
                decisions::reason_live_rolled_back(kind, by),
                format!("Rolled back by {by}."),
            ),
        };
        let report = RecoveryReport {
            id: String::new(),
            vpg,
            kind: kind.to_owned(),
            started: task.started,
            ended: at,
            point_in_time,
            succeeded: commit,
            initiated_by: task.initiated_by.clone(),
            notes,
            vms,
        };
        self.trace_task(key, state, &reason, at);
        self.tasks[key].end(state, reason, at);
        self.report_recovery(report);
        self.vpgs[vpg].live_task = None;
        let (after, sub) = match commit {
            true => (status::RECOVERED, substatus::NONE),
            false => (status::MEETING_SLA, substatus::NONE),
        };
        self.pin_status(vpg, after, sub, at);
    }
}
