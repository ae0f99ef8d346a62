//! Journal VM restore: `POST /v1/vms/{id}/Restore` rewinds one VM of a VPG whose journal is at the
//! VM's own site to a checkpoint, in place or as a new VM beside it; `RestoreCommit` keeps what it
//! restored and `RestoreRollback` undoes it. Each is a task.
//!
//! The restore's task runs its duration, then shows `WaitingForUserInput` (state 2): the guest
//! shows the checkpoint's files (in place), or a VM named `restoredVmName` runs at the site with
//! them. A commit ends the restore's task Completed and keeps the files; a rollback ends it Stopped
//! and returns the guest to the files it had when the restore began, or removes the new VM. With
//! commit policy Rollback (0) or Commit (1) and `timeToWaitBeforeContinueInSeconds`, the restore
//! rolls back or commits by itself once that time passes without a person's word; None (2) waits
//! for one. Zerto does not document what a commit does to the journal: the simulator keeps the
//! journal as it is, and the VPG goes on replicating (`decisions`).

use super::auth::Principal;
use super::clock::SimTime;
use super::ids::SiteRole;
use super::inventory::{JournalRestore, Vm};
use super::model::World;
use super::refusal::Refusal;
use super::schedule::Event;
use super::tasks::{Operation, Planned, TaskKey};
use super::traces::RecoveryReport;
use crate::decisions;
use crate::enums::{status, task_state};

/// What `Restore` asks for.
#[derive(Debug, Clone, Default)]
pub struct RestoreRequest {
    /// `vpgIdentifier`.
    pub vpg: String,
    /// `checkpointIdentifier`.
    pub checkpoint: String,
    /// `restoredVmName`: a new VM beside the original; `None` (or empty) restores in place.
    pub restored_vm_name: Option<String>,
    /// `commitPolicy`: 0 Rollback, 1 Commit, 2 None.
    pub commit_policy: u8,
    /// `timeToWaitBeforeContinueInSeconds`.
    pub wait_secs: Option<i64>,
}

/// Commit policy numbers (`JournalVMRestoreCommitPolicyApi`, named as the zvml SDK's
/// `ZertoCommitPolicy` names them).
pub mod commit_policy {
    /// 0: rolls back by itself once the wait passes.
    pub const ROLLBACK: u8 = 0;
    /// 1: commits by itself once the wait passes.
    pub const COMMIT: u8 = 1;
    /// 2: waits for a person.
    pub const NONE: u8 = 2;
}

impl World {
    /// `POST /v1/vms/{vmIdentifier}/Restore`: starts a journal VM restore; the task's identifier.
    pub fn start_restore(
        &mut self,
        site: SiteRole,
        vm_id: &str,
        request: &RestoreRequest,
        by: &Principal,
        now: SimTime,
    ) -> Result<String, Refusal> {
        let vm = self.vm_at(site, vm_id)?;
        let vpg = self.restore_vpg(vm, &request.vpg)?;
        self.refuse_restore(site, vm, vpg)?;
        let checkpoint = self.checkpoint_in_journal(vpg, &request.checkpoint, now)?;
        let name = request
            .restored_vm_name
            .as_deref()
            .map(str::trim)
            .filter(|n| !n.is_empty());
        if let Some(name) = name
            && self
                .vms_named(name)
                .iter()
                .any(|&v| self.vms[v].site == site)
        {
            return Err(Refusal::BadRequest(format!(
                "restoredVmName '{name}' is the name of a VM at site {} already; choose another.",
                self.site(site).name
            )));
        }
        let operation = Operation::JournalVmRestore {
            vm,
            checkpoint: checkpoint.id,
        };
        let task = self.start_task(site, vpg, operation, Planned::Complete, by, now);
        self.vpgs[vpg].restore = Some(JournalRestore {
            vm,
            task,
            checkpoint: checkpoint.id,
            restored_vm_name: name.map(str::to_owned),
            new_vm: None,
            started: now,
            waiting_since: None,
            commit_policy: request.commit_policy,
            wait_ms: request.wait_secs.map(|s| s.saturating_mul(1000)),
            end_task: None,
        });
        Ok(self.tasks[task].id.clone())
    }

    /// `POST /v1/vms/{vmIdentifier}/RestoreCommit` (`commit`) or `RestoreRollback`, the body the
    /// VPG's identifier: ends the restore waiting for it; the task's identifier.
    pub fn end_restore(
        &mut self,
        site: SiteRole,
        vm_id: &str,
        vpg_id: Option<&str>,
        commit: bool,
        by: &Principal,
        now: SimTime,
    ) -> Result<String, Refusal> {
        let vm = self.vm_at(site, vm_id)?;
        let vpg = match vpg_id.map(str::trim).filter(|v| !v.is_empty()) {
            Some(id) => self.restore_vpg(vm, id)?,
            None => self.vms[vm]
                .vpgs
                .iter()
                .copied()
                .find(|&v| self.vpgs[v].restore.as_ref().is_some_and(|r| r.vm == vm))
                .ok_or_else(|| self.nothing_waits(vm))?,
        };
        let waiting = self.vpgs[vpg]
            .restore
            .as_ref()
            .filter(|r| r.vm == vm && r.waiting_since.is_some() && r.end_task.is_none());
        if waiting.is_none() {
            return Err(self.nothing_waits(vm));
        }
        let operation = match commit {
            true => Operation::JournalVmRestoreCommit { vm },
            false => Operation::JournalVmRestoreRollback { vm },
        };
        let task = self.start_task(site, vpg, operation, Planned::Complete, by, now);
        if let Some(r) = self.vpgs[vpg].restore.as_mut() {
            r.end_task = Some(task);
        }
        Ok(self.tasks[task].id.clone())
    }

    /// The VM `id` runs at `site`, or 404.
    fn vm_at(&self, site: SiteRole, id: &str) -> Result<usize, Refusal> {
        self.vm_by_id(id)
            .filter(|&vm| self.vms[vm].site == site)
            .ok_or_else(|| {
                Refusal::NotFound(format!(
                    "There is no VM '{id}' at site {}: list its VMs with GET /v1/vms.",
                    self.site(site).name
                ))
            })
    }

    /// The VPG `id` of VM `vm`, or 400.
    fn restore_vpg(&self, vm: usize, id: &str) -> Result<usize, Refusal> {
        self.vpg_by_id(id.trim())
            .filter(|v| self.vms[vm].vpgs.contains(v))
            .ok_or_else(|| {
                Refusal::BadRequest(format!(
                    "vpgIdentifier '{id}' is not a VPG of VM '{}': list its VPGs with \
                     GET /v1/vms?vmIdentifier={}.",
                    self.vms[vm].name, self.vms[vm].id
                ))
            })
    }

    /// Why a restore of `vm` from `vpg` cannot start now, if it cannot.
    fn refuse_restore(&self, site: SiteRole, vm: usize, vpg: usize) -> Result<(), Refusal> {
        let v = &self.vpgs[vpg];
        if v.recovery != site || v.protected != site {
            return Err(Refusal::BadRequest(format!(
                "VPG '{}' keeps its journal at site {}, not at {} where VM '{}' runs: a journal \
                 VM restore needs a VPG whose journal is at the VM's own site.",
                v.name,
                self.site(v.recovery).name,
                self.site(site).name,
                self.vms[vm].name
            )));
        }
        let syncing = v.resync.is_some()
            || v.status == status::INITIALIZING
            || !decisions::writes_checkpoints(v.status, v.sub_status);
        if syncing {
            return Err(Refusal::Conflict(format!(
                "VPG '{}' is {} ({}): a VM cannot be restored from it until it meets its SLA again.",
                v.name,
                crate::enums::VPG_STATUS.name(v.status),
                crate::enums::VPG_SUBSTATUS.name(v.sub_status)
            )));
        }
        if let Some(r) = &v.restore {
            return Err(Refusal::Conflict(format!(
                "A restore of VM '{}' from VPG '{}' is under way (task {}): commit it or roll it \
                 back (POST /v1/vms/{}/RestoreCommit or RestoreRollback) first.",
                self.vms[r.vm].name, v.name, self.tasks[r.task].id, self.vms[r.vm].id
            )));
        }
        if v.test.is_some() || v.clone_task.is_some() || v.live_task.is_some() {
            return Err(Refusal::Conflict(format!(
                "VPG '{}' runs a failover test, a clone or a live operation; wait until it ends.",
                v.name
            )));
        }
        Ok(())
    }

    fn nothing_waits(&self, vm: usize) -> Refusal {
        Refusal::Conflict(format!(
            "No restore of VM '{}' waits for a commit or a rollback.",
            self.vms[vm].name
        ))
    }

    /// The end of a `Restore` task: the checkpoint's files in place, or a new VM with them; then
    /// the task waits for a person (state 2). Returns `None` while it waits.
    pub(super) fn finish_restore(&mut self, vpg: usize, at: SimTime) -> Option<(u8, String)> {
        let v = &self.vpgs[vpg];
        let r = v.restore.clone()?;
        let Some(moment) = v.journal.find(r.checkpoint, at).map(|c| c.at) else {
            let reason = decisions::reason_checkpoint_lost(&v.name, r.checkpoint);
            self.vpgs[vpg].restore = None;
            return Some((task_state::FAILED, reason));
        };
        let new_vm = match &r.restored_vm_name {
            Some(name) => Some(self.restored_vm(r.vm, name, moment, at)),
            None => {
                self.rewrite_files(r.vm, moment, at);
                None
            }
        };
        if let Some(restore) = self.vpgs[vpg].restore.as_mut() {
            restore.new_vm = new_vm;
            restore.waiting_since = Some(at);
        }
        self.tasks[r.task].wait(at);
        if let (Some(wait), true) = (r.wait_ms, r.commit_policy != commit_policy::NONE) {
            self.schedule(
                at.plus_millis(wait),
                Event::RestoreTimeout { vpg, task: r.task },
            );
        }
        None
    }

    /// A restore whose commit-policy wait passed without a person's word: rolled back or
    /// committed, as its policy says.
    pub(super) fn restore_timeout(&mut self, vpg: usize, task: TaskKey, at: SimTime) {
        let Some(r) = self.vpgs[vpg].restore.clone() else {
            return;
        };
        if r.task != task || r.end_task.is_some() {
            return;
        }
        let commit = r.commit_policy == commit_policy::COMMIT;
        self.close_restore(vpg, commit, decisions::SYSTEM_USER, at);
    }

    /// The end of a `RestoreCommit` or `RestoreRollback` task.
    pub(super) fn finish_restore_end(
        &mut self,
        key: TaskKey,
        commit: bool,
        at: SimTime,
    ) -> (u8, String) {
        let vpg = self.tasks[key].on_vpg();
        let by = self.tasks[key].initiated_by.clone();
        self.close_restore(vpg, commit, &by, at);
        (task_state::COMPLETED, String::new())
    }

    /// Commits or rolls back the VPG's restore, ends its task, and reports it.
    fn close_restore(&mut self, vpg: usize, commit: bool, by: &str, at: SimTime) {
        let Some(r) = self.vpgs[vpg].restore.take() else {
            return;
        };
        if !commit {
            match r.new_vm {
                Some(new_vm) => self.remove_restored_vm(new_vm),
                None => self.rewrite_files(r.vm, r.started, at),
            }
        }
        let (state, reason) = match commit {
            true => (task_state::COMPLETED, String::new()),
            false => (
                task_state::STOPPED,
                decisions::reason_restore_rolled_back(by),
            ),
        };
        self.trace_task(r.task, state, &reason, at);
        self.tasks[r.task].end(state, reason, at);
        let point_in_time = self.vpgs[vpg].journal.find(r.checkpoint, at).map(|c| c.at);
        let report = RecoveryReport {
            id: String::new(),
            vpg,
            kind: "JournalVmRestore".to_owned(),
            started: r.started,
            ended: at,
            point_in_time,
            succeeded: commit,
            initiated_by: self.tasks[r.task].initiated_by.clone(),
            notes: match commit {
                true => format!("Committed by {by}."),
                false => format!("Rolled back by {by}."),
            },
            vms: vec![r.vm],
        };
        self.report_recovery(report);
    }

    /// Makes the guest of `vm` hold, as written at `at`, the files it held at `moment`: each file
    /// that differs is written again, and each file it did not hold then is deleted.
    fn rewrite_files(&mut self, vm: usize, moment: SimTime, at: SimTime) {
        let files = &mut self.vms[vm].files;
        let then = files.list_at(moment);
        let now = files.list_at(at);
        for f in &now {
            if !then.iter().any(|t| t.path == f.path) {
                let _ = files.delete(&f.path, at);
            }
        }
        for t in then {
            let same = now
                .iter()
                .any(|f| f.path == t.path && f.content == t.content);
            if !same {
                let _ = files.write(&t.path, t.content, at);
            }
        }
    }

    /// A new VM beside `source`, named `name`, with `source`'s files as they were at `moment`.
    fn restored_vm(&mut self, source: usize, name: &str, moment: SimTime, at: SimTime) -> usize {
        let site = self.vms[source].site;
        let moref = self.free_moref(site);
        let vm = &self.vms[source];
        let restored = Vm {
            id: format!("{}.vm-{moref}", self.site(site).server_id),
            name: name.to_owned(),
            site,
            vpgs: Vec::new(),
            files: vm.files.copy_at(moment, at),
            removed: false,
            recovery_host: None,
            ..vm.clone()
        };
        self.add_vm(restored);
        self.vms.len() - 1
    }

    /// A VM a rolled-back restore made goes: no listing or lookup shows it again.
    fn remove_restored_vm(&mut self, vm: usize) {
        self.vms[vm].removed = true;
        self.reindex();
    }
}
