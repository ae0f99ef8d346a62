//! Tagged checkpoint inserts: a client's (`POST /v1/vpgs/{id}/checkpoints`), another client's as an
//! `InsertAsAnotherClient` fault makes it, and the end of their `InsertTaggedCP` task.

use super::auth::Principal;
use super::clock::SimTime;
use super::ids::SiteRole;
use super::model::World;
use super::spec::Role;
use super::tasks::{Operation, Planned, TaskKey};
use crate::decisions;
use crate::enums::{VPG_STATUS, VPG_SUBSTATUS, task_state};

impl World {
    /// `POST /v1/vpgs/{id}/checkpoints`: starts an `InsertTaggedCP` task at `site` and returns its
    /// identifier. The HTTP answer is always the task id; whether the insert worked is only in the
    /// task (another insert running, a VPG that writes no checkpoints: the task ends Failed).
    pub fn insert_tagged_checkpoint(
        &mut self,
        site: SiteRole,
        vpg: usize,
        name: &str,
        by: &Principal,
        now: SimTime,
    ) -> String {
        let v = &self.vpgs[vpg];
        let running = v.running_inserts.first().map(|&task| &self.tasks[task]);
        let planned = if let Some(running) = running {
            Planned::Fail(decisions::reason_insert_running(&v.name, &running.id))
        } else if !self.writes_checkpoints(vpg) {
            Planned::Fail(decisions::reason_not_writing(
                &v.name,
                VPG_STATUS.name(v.status),
                VPG_SUBSTATUS.name(v.sub_status),
            ))
        } else {
            Planned::Complete
        };
        let operation = Operation::InsertTaggedCheckpoint {
            name: name.to_owned(),
        };
        let key = self.start_task(site, vpg, operation, planned, by, now);
        self.vpgs[vpg].running_inserts.push(key);
        self.tasks[key].id.clone()
    }

    /// Another client's tagged checkpoint insert into the VPG `vpg_id` at `site`, as an
    /// `InsertAsAnotherClient` fault makes it just before a client's own: its task identifier, or
    /// `None` when no VPG of that identifier is visible there (the client's request then meets the
    /// 404 it would have met anyway).
    pub fn insert_as_another_client(
        &mut self,
        site: SiteRole,
        vpg_id: &str,
        now: SimTime,
    ) -> Option<String> {
        let vpg = self.visible_vpg(site, vpg_id).ok()?;
        let another = Principal {
            name: decisions::ANOTHER_CLIENT.to_owned(),
            role: Role::Administrator,
            realm_roles: Vec::new(),
        };
        let name = decisions::ANOTHER_CLIENTS_CHECKPOINT;
        Some(self.insert_tagged_checkpoint(site, vpg, name, &another, now))
    }

    /// The end of an `InsertTaggedCP` task: the tagged checkpoint is in the journal, listed after
    /// the listing lag, unless the task was planned to fail, the journal no longer covers its start
    /// or its slot is taken.
    pub(super) fn finish_insert(&mut self, key: TaskKey, name: &str, at: SimTime) -> (u8, String) {
        let task = &self.tasks[key];
        let vpg = &mut self.vpgs[task.on_vpg()];
        vpg.running_inserts.retain(|&t| t != key);
        match &task.planned {
            Planned::Fail(reason) => (task_state::FAILED, reason.clone()),
            Planned::Complete if !vpg.journal.covers(task.started, at) => (
                task_state::FAILED,
                decisions::reason_journal_lost(&vpg.name),
            ),
            Planned::Complete => {
                let listed_at = at.plus_millis(self.timings.listing_lag_ms);
                match vpg.journal.add_tagged(task.started, name, listed_at) {
                    Some(_) => (task_state::COMPLETED, String::new()),
                    None => (task_state::FAILED, decisions::reason_slot_full(&vpg.name)),
                }
            }
        }
    }
}
