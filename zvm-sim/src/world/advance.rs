//! How the world moves: [`World::advance`] brings it to the simulated "now", processing in time
//! order what fell due, and a task that reaches its end hands its operation to the file of its
//! area.
//!
//! This file stands above the areas, as it calls each one's end of a task; `model.rs` below them
//! holds the record they all build on.

use std::cmp::Reverse;

use super::clock::SimTime;
use super::model::World;
use super::schedule::{Event, Scheduled};
use super::tasks::{Operation, TaskKey};
use crate::enums::task_state;

impl World {
    /// Brings the world to `now`: processes, in time order, everything due at or before it.
    pub fn advance(&mut self, now: SimTime) {
        while let Some(Reverse(next)) = self.events.peek() {
            if next.at > now {
                break;
            }
            let Some(Reverse(Scheduled { at, event, .. })) = self.events.pop() else {
                break;
            };
            self.settle_history_all(at);
            match event {
                Event::TaskEnds(task) => self.end_task(task, at),
                Event::ResyncEnds { vpg, generation } => self.end_resync(vpg, generation, at),
                Event::RestoreTimeout { vpg, task } => self.restore_timeout(vpg, task, at),
                Event::LiveTimeout { vpg, task } => self.live_timeout(vpg, task, at),
            }
        }
        self.settle_history_all(now);
        if now.millis_since(self.trimmed_at) >= 60_000 {
            for vpg in &mut self.vpgs {
                vpg.journal.trim(now);
            }
            self.forget_expired_sets(now);
            self.age_out_tasks(now);
            self.trimmed_at = now;
        }
    }

    /// A task reaches its end: the world carries out its operation and the task records the
    /// outcome. A task that was stopped earlier (its end already recorded) changes nothing.
    fn end_task(&mut self, key: TaskKey, at: SimTime) {
        if !self.tasks[key].is_running() {
            return;
        }
        let operation = self.tasks[key].operation.clone();
        let (state, reason) = match &operation {
            Operation::InsertTaggedCheckpoint { name } => self.finish_insert(key, name, at),
            Operation::FlrMount { session } | Operation::FlrBackupMount { session } => {
                self.finish_flr_mount(session, at)
            }
            Operation::FlrUnmount { session } | Operation::FlrBackupUnmount { session } => {
                self.finish_flr_unmount(session)
            }
            Operation::ManualRetention { .. } => self.finish_retention(key, at),
            Operation::FailoverTest { .. } => self.finish_failover_test(),
            Operation::StopFailoverTest { .. } => self.finish_stop_failover_test(key, at),
            Operation::Clone { checkpoint, vms } => {
                self.finish_clone(self.tasks[key].on_vpg(), *checkpoint, vms, at)
            }
            Operation::Failover { .. } | Operation::Move { .. } => {
                // Done its part: it waits before commit.
                self.live_waits(key, at);
                return;
            }
            Operation::LiveCommit { .. } | Operation::LiveRollback { .. } => {
                self.finish_live_end(key, at)
            }
            Operation::ForceSync { generation } => {
                self.finish_force_sync(self.tasks[key].on_vpg(), *generation)
            }
            Operation::JournalVmRestore { .. } => {
                match self.finish_restore(self.tasks[key].on_vpg(), at) {
                    Some(ended) => ended,
                    // Done its part: it waits for a commit or a rollback.
                    None => return,
                }
            }
            Operation::UpdateVpg { change } => {
                self.finish_update(self.tasks[key].on_vpg(), change, at)
            }
            // The VPG joined the world when its document was committed; its sync ends on its own.
            Operation::CreateVpg { .. } => (task_state::COMPLETED, String::new()),
            Operation::DeleteVpg { .. } => self.finish_delete(self.tasks[key].on_vpg(), at),
            Operation::InstallVras { .. }
            | Operation::UninstallVras { .. }
            | Operation::EditVra { .. }
            | Operation::UpgradeVras { .. }
            | Operation::ChangeRecoveryHost { .. } => self.finish_vra_task(key),
            Operation::RestoreFromRetentionSet { .. } => self.finish_set_restore(key, at),
            // Each took effect when it started (a resume's sync ends on its own).
            Operation::Pause | Operation::Resume => (task_state::COMPLETED, String::new()),
            Operation::JournalVmRestoreCommit { .. } => self.finish_restore_end(key, true, at),
            Operation::JournalVmRestoreRollback { .. } => self.finish_restore_end(key, false, at),
        };
        self.trace_task(key, state, &reason, at);
        self.tasks[key].end(state, reason, at);
    }
}
