//! VPGs joining and leaving the world through the API, as Zerto's automation makes and removes
//! them: a settings document for a new VPG, committed, creates one (a `CreateProtectionGroup` task;
//! the VPG is Initializing through its initial sync, writes no checkpoint until it ends, then meets
//! its SLA); `DELETE /v1/vpgs/{id}` removes one (a `RemoveProtectionGroup` task; Deleting while it
//! runs, then gone from every listing with its checkpoints).
//!
//! A VPG's position in `World::vpgs` is held by tasks, VMs and traces, so a removed VPG keeps its
//! place, marked `deleted`, and is invisible from both sites; a created one goes after every other
//! and numbers its checkpoints from [`CREATED_BASE`], so no identifier answered before changes.

use super::auth::Principal;
use super::clock::SimTime;
use super::ids::{SiteRole, guid};
use super::inventory::Vpg;
use super::journal::{CREATED_BASE, CREATED_VPGS, Journal, Numbering};
use super::model::World;
use super::payloads::{Removal, VpgChange};
use super::refusal::Refusal;
use super::tasks::{Operation, Planned};
use crate::decisions;
use crate::enums::{status, substatus, task_state};

/// How long a created VPG's initial sync runs after its `CreateProtectionGroup` task ends, in
/// simulated milliseconds.
pub const INITIAL_SYNC_MS: i64 = 5_000;

impl World {
    /// The numbering the VPG at `index` must have: among the world file's VPGs, or among those
    /// created through the API after them.
    pub(crate) fn numbering_for(&self, index: usize) -> Numbering {
        // The world file's VPGs come first and every created one after them.
        let from_file = self
            .vpgs
            .partition_point(|v| v.journal.numbering().base == 0);
        let origin = self
            .vpgs
            .first()
            .map_or(self.clock.now(), |v| v.journal.numbering().origin);
        match index < from_file {
            true => Numbering {
                origin,
                vpg_count: from_file as u64,
                vpg: index as u64,
                base: 0,
            },
            false => Numbering {
                origin,
                vpg_count: CREATED_VPGS,
                vpg: (index - from_file) as u64,
                base: CREATED_BASE,
            },
        }
    }

    /// Commits a document for a new VPG: the VPG joins the world Initializing, and the
    /// `CreateProtectionGroup` task that creates it runs; its initial sync ends after the task.
    pub(crate) fn create_vpg(
        &mut self,
        site: SiteRole,
        change: VpgChange,
        by: &Principal,
        now: SimTime,
    ) -> Result<String, Refusal> {
        let index = self.vpgs.len();
        let numbering = self.numbering_for(index);
        if numbering.base == CREATED_BASE && numbering.vpg >= CREATED_VPGS {
            return Err(Refusal::BadRequest(format!(
                "This simulator creates at most {CREATED_VPGS} VPGs through the API in one run; delete one or restart it."
            )));
        }
        let minutes = (change.history_hours * 60) as u32;
        let room = decisions::default_journal_room(minutes).max(1);
        let vpg = new_vpg(
            guid(&mut self.rng),
            &change,
            Journal::new(numbering, minutes, room),
        );
        for &vm in &change.vms {
            self.vms[vm].vpgs.push(index);
        }
        self.vpgs.push(vpg);
        self.reindex();
        let operation = Operation::CreateVpg { name: change.name };
        let key = self.start_task(site, index, operation, Planned::Complete, by, now);
        let until = self.tasks[key].nominal_end.plus_millis(INITIAL_SYNC_MS);
        self.sync(index, until, substatus::INITIAL_SYNC, false, now);
        self.vpgs[index].status = status::INITIALIZING;
        Ok(self.tasks[key].id.clone())
    }

    /// `DELETE /v1/vpgs/{id}`: starts the `RemoveProtectionGroup` task. Refused while an operation
    /// runs on the VPG, unless `force`.
    pub fn delete_vpg(
        &mut self,
        site: SiteRole,
        vpg: usize,
        removal: Removal,
        by: &Principal,
        now: SimTime,
    ) -> Result<String, Refusal> {
        let v = &self.vpgs[vpg];
        if v.status == status::DELETING {
            return Err(Refusal::Conflict(format!(
                "VPG {} is already being deleted.",
                v.name
            )));
        }
        if let Some(running) = running_operation(v)
            && !removal.force
        {
            return Err(Refusal::Conflict(format!(
                "VPG {} has {running} running; wait for it to end, or delete with Force.",
                v.name
            )));
        }
        self.changing_journal(vpg, now, |world| {
            world.vpgs[vpg].journal.stop_writing(now);
        });
        let v = &mut self.vpgs[vpg];
        v.status = status::DELETING;
        v.sub_status = substatus::NONE;
        v.resync = None;
        v.generation += 1;
        let operation = Operation::DeleteVpg { removal };
        let key = self.start_task(site, vpg, operation, Planned::Complete, by, now);
        Ok(self.tasks[key].id.clone())
    }

    /// The end of a `RemoveProtectionGroup` task: the VPG leaves every listing, its VMs are
    /// unprotected by it, and what ran on it is stopped.
    pub(crate) fn finish_delete(&mut self, vpg: usize, at: SimTime) -> (u8, String) {
        for task in self.tasks_running_at(vpg) {
            self.tasks[task].end(
                task_state::STOPPED,
                format!("VPG {} was deleted.", self.vpgs[vpg].name),
                at,
            );
        }
        for vm in std::mem::take(&mut self.vpgs[vpg].vms) {
            self.vms[vm].vpgs.retain(|&v| v != vpg);
        }
        let v = &mut self.vpgs[vpg];
        (v.test, v.clone_task, v.live_task, v.restore) = (None, None, None, None);
        v.running_inserts.clear();
        v.ltr.running = None;
        v.watch = Default::default();
        v.deleted = true;
        self.reindex();
        (task_state::COMPLETED, String::new())
    }

    /// The tasks still running that act on VPG `vpg`, but its own removal.
    fn tasks_running_at(&self, vpg: usize) -> Vec<super::tasks::TaskKey> {
        self.tasks
            .keyed()
            .filter(|(_, t)| t.vpg == Some(vpg) && t.is_running())
            .filter(|(_, t)| !matches!(t.operation, Operation::DeleteVpg { .. }))
            .map(|(key, _)| key)
            .collect()
    }
}

/// What runs on a VPG that its removal would cut short, in words.
fn running_operation(v: &Vpg) -> Option<&'static str> {
    if v.test.is_some() {
        Some("a failover test")
    } else if v.clone_task.is_some() {
        Some("a clone")
    } else if v.live_task.is_some() {
        Some("a failover or move")
    } else if v.restore.is_some() {
        Some("a journal VM restore")
    } else if !v.running_inserts.is_empty() {
        Some("a checkpoint insert")
    } else if v.ltr.running.is_some() {
        Some("an Extended Journal Copy run")
    } else {
        None
    }
}

/// A VPG as a committed document for a new one describes it, before its initial sync.
fn new_vpg(id: String, change: &VpgChange, journal: Journal) -> Vpg {
    Vpg {
        id,
        name: change.name.clone(),
        protected: change.protected,
        recovery: change.recovery,
        vms: change.vms.clone(),
        status: status::INITIALIZING,
        sub_status: substatus::INITIAL_SYNC,
        resync: None,
        test: None,
        last_test: None,
        vm_last_test: Default::default(),
        clone_task: None,
        live_task: None,
        generation: 0,
        running_inserts: Vec::new(),
        priority: change.priority,
        rpo_seconds: change.rpo_seconds,
        actual_rpo: 0,
        journal,
        watch: Default::default(),
        ltr: Default::default(),
        restore: None,
        deleted: false,
    }
}
