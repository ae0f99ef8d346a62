//! Zerto tasks. A task's state is derived from the simulated clock: State 1 (InProgress) with a
//! Progress that rises with time until its end, then its terminal state.

use crate::world::SiteRole;
use crate::world::clock::SimTime;
use crate::world::enums::task_state;

/// How a task will end, decided when it starts (and checked again when it ends).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Planned {
    /// It will complete, unless the world changed under it meanwhile.
    Complete,
    /// It will fail with this `CompleteReason`.
    Fail(String),
}

/// The terminal state of a task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    /// 4 Failed or 6 Completed.
    pub state: u8,
    /// `CompleteReason`: empty on success.
    pub reason: String,
    /// `Completed`.
    pub at: SimTime,
    /// `Progress` as it stays.
    pub progress: u8,
}

/// One Zerto task.
#[derive(Debug, Clone)]
pub struct Task {
    /// `<guid>.<siteGuid>`.
    pub id: String,
    /// The site whose ZVM received the request and runs the task.
    pub site: SiteRole,
    /// `Type`, e.g. `InsertTaggedCP`.
    pub kind: &'static str,
    /// The VPG it acts on.
    pub vpg: usize,
    /// The tag, for an insert.
    pub checkpoint_name: String,
    /// `InitiatedBy`: the user, or a client's service account.
    pub initiated_by: String,
    /// `Started`.
    pub started: SimTime,
    /// When it would end had it run its whole duration (Progress is measured against this).
    pub nominal_end: SimTime,
    /// What it will do at `ends`.
    pub planned: Planned,
    /// Set when the world reaches `ends`.
    pub ended: Option<Ended>,
}

impl Task {
    /// `Status.State` and `Status.Progress` at `now`.
    pub fn status_at(&self, now: SimTime) -> (u8, u8) {
        match &self.ended {
            Some(ended) => (ended.state, ended.progress),
            None => (task_state::IN_PROGRESS, self.progress_at(now).min(99)),
        }
    }

    /// The share of its nominal duration that has passed at `at`, 0..=100.
    pub fn progress_at(&self, at: SimTime) -> u8 {
        let total = self.nominal_end.millis_since(self.started);
        if total <= 0 {
            return 100;
        }
        let done = at.millis_since(self.started).clamp(0, total);
        u8::try_from(done * 100 / total).unwrap_or(100)
    }

    /// Ends the task at `at`.
    pub fn end(&mut self, state: u8, reason: String, at: SimTime) {
        let progress = if state == task_state::COMPLETED {
            100
        } else {
            self.progress_at(at)
        };
        self.ended = Some(Ended {
            state,
            reason,
            at,
            progress,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task() -> Task {
        Task {
            id: "t".to_owned(),
            site: SiteRole::Local,
            kind: "InsertTaggedCP",
            vpg: 0,
            checkpoint_name: "tag".to_owned(),
            initiated_by: "admin".to_owned(),
            started: SimTime::from_millis(0),
            nominal_end: SimTime::from_millis(1000),
            planned: Planned::Complete,
            ended: None,
        }
    }

    #[test]
    fn progress_rises_while_running_and_is_100_when_completed() {
        let mut t = task();
        assert_eq!(t.status_at(SimTime::from_millis(0)), (1, 0));
        assert_eq!(t.status_at(SimTime::from_millis(500)), (1, 50));
        assert_eq!(t.status_at(SimTime::from_millis(5000)), (1, 99));
        t.end(
            task_state::COMPLETED,
            String::new(),
            SimTime::from_millis(1000),
        );
        assert_eq!(t.status_at(SimTime::from_millis(5000)), (6, 100));
    }

    #[test]
    fn a_failed_task_keeps_the_progress_it_reached() {
        let mut t = task();
        t.end(
            task_state::FAILED,
            "no".to_owned(),
            SimTime::from_millis(100),
        );
        assert_eq!(t.status_at(SimTime::from_millis(5000)), (4, 10));
    }
}
