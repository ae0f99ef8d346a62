//! Recovery and other VPG operations, each a task: failover test (start and stop), offsite clone
//! (start and abort), live failover, move and force sync.
//!
//! A conflict known when the request arrives (a second test while one runs, a stop with none
//! running, a clone while one runs, an abort with none running, a failover or move while a test
//! or clone runs) is refused with 409, as ZVM validates an action against the VPG's state before
//! it queues a task. What happens later only shows in the task.

use rand::RngExt;

use super::auth::Principal;
use super::clock::SimTime;
use super::ids::SiteRole;
use super::inventory::{FailoverTestRun, Vm, Vpg};
use super::journal::Checkpoint;
use super::model::World;
use super::refusal::Refusal;
use super::tasks::{Operation, Planned, TaskKey};
use super::traces::RecoveryReport;
use crate::decisions;
use crate::enums::{VPG_STATUS, status, substatus, task_state};

/// What `Failover` asks for.
#[derive(Debug, Clone, Default)]
pub struct FailoverRequest {
    /// `CheckpointIdentifier`; the latest when absent.
    pub checkpoint: Option<String>,
    /// `VmIdentifiers`; every VM when absent or empty.
    pub vms: Option<Vec<String>>,
    /// `CommitPolicy` (0 Rollback, 1 Commit, 2 None).
    pub commit_policy: u8,
}

/// What `CloneStart` asks for.
#[derive(Debug, Clone, Default)]
pub struct CloneRequest {
    /// `CheckpointId`; the latest when absent.
    pub checkpoint: Option<String>,
    /// `DatastoreIdentifier`: the recovery site's datastore when given.
    pub datastore: Option<String>,
    /// `VmIdentifiers`; every VM when absent or empty.
    pub vms: Option<Vec<String>>,
}

/// A change to a VPG's replication a person asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replication {
    /// A sync that keeps the journal's checkpoints (§9): NotMeetingSLA / DeltaSync and no
    /// checkpoint written while the task runs, then MeetingSLA / None. A replicating VPG that is
    /// not syncing already can be force-synced.
    ForceSync,
    /// Replication stops at once (substatus ReplicationPausedUserInitiated): no checkpoint is
    /// written and a tagged insert fails until it is resumed; what the journal holds stays and ages
    /// out as usual. Only a replicating VPG that is not syncing pauses.
    Pause,
    /// A paused VPG syncs what was written meanwhile (NotMeetingSLA / DeltaSync while the task
    /// runs, keeping its checkpoints), then meets its SLA and writes again.
    Resume,
}

impl World {
    /// `CheckpointIdentifier` of a request, or the VPG's latest checkpoint when absent.
    fn checkpoint_or_latest(
        &self,
        vpg: usize,
        raw: Option<&str>,
        now: SimTime,
    ) -> Result<Checkpoint, Refusal> {
        match raw {
            Some(raw) => self.checkpoint_in_journal(vpg, raw, now),
            None => {
                let v = &self.vpgs[vpg];
                v.journal.latest(now).ok_or_else(|| {
                    Refusal::Conflict(format!(
                        "VPG '{}' has no checkpoint in its journal ({}): there is nothing to \
                         recover from until it writes checkpoints.",
                        v.name,
                        v.state()
                    ))
                })
            }
        }
    }

    /// `VmIdentifiers` of a request as VPG members; absent or empty means every VM of the VPG.
    fn members(&self, vpg: usize, ids: Option<&[String]>) -> Result<Vec<usize>, Refusal> {
        let v = &self.vpgs[vpg];
        let ids = ids.unwrap_or_default();
        if ids.is_empty() {
            return Ok(v.vms.clone());
        }
        let mut chosen = Vec::with_capacity(ids.len());
        for id in ids {
            let vm = self
                .vm_by_id(id)
                .filter(|vm| v.vms.contains(vm))
                .ok_or_else(|| {
                    Refusal::BadRequest(format!(
                        "VmIdentifiers names '{id}', which is not a VM of VPG '{}': list its VMs \
                         with GET /v1/vms?vpgName={}.",
                        v.name, v.name
                    ))
                })?;
            if !chosen.contains(&vm) {
                chosen.push(vm);
            }
        }
        Ok(chosen)
    }

    fn refuse_while_live(&self, vpg: usize) -> Result<(), Refusal> {
        let v = &self.vpgs[vpg];
        match v.live_task {
            Some(task) => Err(Refusal::Conflict(format!(
                "VPG '{}' is {} (task {}); wait until that task ends, and commit or roll it back.",
                v.name,
                VPG_STATUS.name(v.status),
                self.tasks[task].id
            ))),
            None => Ok(()),
        }
    }

    /// `POST /v1/vpgs/{id}/FailoverTest`: starts a failover test at a checkpoint (the latest when
    /// absent) of some VMs (all when absent or empty). Returns the `FailOverTest` task id.
    pub fn start_failover_test(
        &mut self,
        site: SiteRole,
        vpg: usize,
        checkpoint: Option<&str>,
        vms: Option<&[String]>,
        by: &Principal,
        now: SimTime,
    ) -> Result<String, Refusal> {
        let v = &self.vpgs[vpg];
        if let Some(test) = &v.test {
            return Err(Refusal::Conflict(format!(
                "VPG '{}' is already in a failover test (task {}); stop it with \
                 POST /v1/vpgs/{}/FailoverTestStop first.",
                v.name, self.tasks[test.start_task].id, v.id
            )));
        }
        self.refuse_while_live(vpg)?;
        let checkpoint = self.checkpoint_or_latest(vpg, checkpoint, now)?;
        let vms = self.members(vpg, vms)?;
        let operation = Operation::FailoverTest {
            checkpoint: checkpoint.id,
            vms: vms.clone(),
        };
        let task = self.start_task(site, vpg, operation, Planned::Complete, by, now);
        self.vpgs[vpg].test = Some(FailoverTestRun {
            start_task: task,
            stop_task: None,
            vms,
        });
        Ok(self.tasks[task].id.clone())
    }

    /// `POST /v1/vpgs/{id}/FailoverTestStop`: stops the running failover test. Asked while the
    /// test is still starting, the start task ends Stopped. Returns the `StopFailOverTest` task id.
    pub fn stop_failover_test(
        &mut self,
        site: SiteRole,
        vpg: usize,
        success: bool,
        summary: String,
        by: &Principal,
        now: SimTime,
    ) -> Result<String, Refusal> {
        let v = &self.vpgs[vpg];
        let Some(test) = &v.test else {
            return Err(Refusal::Conflict(format!(
                "VPG '{}' has no failover test running; start one with \
                 POST /v1/vpgs/{}/FailoverTest.",
                v.name, v.id
            )));
        };
        if let Some(stop) = test.stop_task {
            return Err(Refusal::Conflict(format!(
                "The failover test of VPG '{}' is already stopping (task {}); wait until that \
                 task ends.",
                v.name, self.tasks[stop].id
            )));
        }
        let start = test.start_task;
        if self.tasks[start].is_running() {
            let reason = decisions::reason_test_stopped_while_starting(&v.name);
            self.tasks[start].end(task_state::STOPPED, reason, now);
        }
        let operation = Operation::StopFailoverTest { success, summary };
        let task = self.start_task(site, vpg, operation, Planned::Complete, by, now);
        if let Some(test) = self.vpgs[vpg].test.as_mut() {
            test.stop_task = Some(task);
        }
        Ok(self.tasks[task].id.clone())
    }

    /// `POST /v1/vpgs/{id}/CloneStart`: clones some VMs (all when absent or empty) at a
    /// checkpoint (the latest when absent) to the recovery site. Returns the `Clone` task id.
    pub fn start_clone(
        &mut self,
        site: SiteRole,
        vpg: usize,
        request: &CloneRequest,
        by: &Principal,
        now: SimTime,
    ) -> Result<String, Refusal> {
        let v = &self.vpgs[vpg];
        if let Some(task) = v.clone_task {
            return Err(Refusal::Conflict(format!(
                "VPG '{}' is already being cloned (task {}); abort it with \
                 POST /v1/vpgs/{}/CloneAbort or wait until it ends.",
                v.name, self.tasks[task].id, v.id
            )));
        }
        self.refuse_while_live(vpg)?;
        let recovery = self.site(v.recovery);
        if let Some(datastore) = &request.datastore
            && !recovery
                .datastores
                .iter()
                .any(|d| d.id.eq_ignore_ascii_case(datastore))
        {
            let known: Vec<String> = recovery
                .datastores
                .iter()
                .map(|d| format!("{} ({})", d.id, d.name))
                .collect();
            return Err(Refusal::BadRequest(format!(
                "DatastoreIdentifier '{datastore}' is not a datastore of the recovery site {} of \
                 VPG '{}'; its datastores are {}.",
                recovery.name,
                v.name,
                known.join(", ")
            )));
        }
        let checkpoint = self.checkpoint_or_latest(vpg, request.checkpoint.as_deref(), now)?;
        let vms = self.members(vpg, request.vms.as_deref())?;
        let operation = Operation::Clone {
            checkpoint: checkpoint.id,
            vms,
        };
        let task = self.start_task(site, vpg, operation, Planned::Complete, by, now);
        self.vpgs[vpg].clone_task = Some(task);
        Ok(self.tasks[task].id.clone())
    }

    /// `POST /v1/vpgs/{id}/CloneAbort`: the running clone's task ends Stopped; returns its id.
    pub fn abort_clone(
        &mut self,
        vpg: usize,
        by: &Principal,
        now: SimTime,
    ) -> Result<String, Refusal> {
        let reason = |_: &Vpg| decisions::reason_clone_aborted(&by.name);
        self.abort_running(vpg, "clone", |v| v.clone_task.take(), reason, now)
    }

    /// `POST /v1/vpgs/{id}/Failover`: a live failover. The VPG shows FailingOver while the task
    /// runs and Recovered after it, and writes no checkpoints from the start.
    pub fn failover(
        &mut self,
        site: SiteRole,
        vpg: usize,
        request: &FailoverRequest,
        by: &Principal,
        now: SimTime,
    ) -> Result<String, Refusal> {
        self.refuse_live_conflicts(vpg)?;
        let checkpoint = self.checkpoint_or_latest(vpg, request.checkpoint.as_deref(), now)?;
        let vms = self.members(vpg, request.vms.as_deref())?;
        let operation = Operation::Failover {
            checkpoint: checkpoint.id,
            vms,
            commit_policy: request.commit_policy,
        };
        let task = self.start_task(site, vpg, operation, Planned::Complete, by, now);
        self.pin_status(
            vpg,
            status::FAILING_OVER,
            substatus::FAILING_OVER_COMMITTING,
            now,
        );
        self.vpgs[vpg].live_task = Some(task);
        Ok(self.tasks[task].id.clone())
    }

    /// `POST /v1/vpgs/{id}/Move`: a planned move. The VPG shows Moving while the task runs and
    /// Recovered after it.
    pub fn move_vpg(
        &mut self,
        site: SiteRole,
        vpg: usize,
        commit_policy: u8,
        by: &Principal,
        now: SimTime,
    ) -> Result<String, Refusal> {
        self.refuse_live_conflicts(vpg)?;
        if !self.writes_checkpoints(vpg) {
            let v = &self.vpgs[vpg];
            return Err(Refusal::Conflict(format!(
                "VPG '{}' cannot be moved while it is {}: it writes no checkpoints in this \
                 state. Wait until it meets its SLA again.",
                v.name,
                v.state()
            )));
        }
        let operation = Operation::Move { commit_policy };
        let task = self.start_task(site, vpg, operation, Planned::Complete, by, now);
        self.pin_status(vpg, status::MOVING, substatus::MOVING_COMMITTING, now);
        self.vpgs[vpg].live_task = Some(task);
        Ok(self.tasks[task].id.clone())
    }

    fn refuse_live_conflicts(&self, vpg: usize) -> Result<(), Refusal> {
        self.refuse_while_live(vpg)?;
        let v = &self.vpgs[vpg];
        let busy = v
            .test
            .as_ref()
            .map(|t| ("a failover test", t.start_task))
            .or(v.clone_task.map(|t| ("a clone", t)));
        match busy {
            Some((what, task)) => Err(Refusal::Conflict(format!(
                "VPG '{}' is running {what} (task {}); end it first.",
                v.name, self.tasks[task].id
            ))),
            None => Ok(()),
        }
    }

    /// `POST /v1/vpgs/{id}/forcesync`, `/pause` and `/resume`: the VPG's replication changed by a
    /// `ForceSync`, `Pause` or `Resume` task, refused (409) when the VPG is not in a state that
    /// allows it (see [`Replication`]).
    pub fn change_replication(
        &mut self,
        site: SiteRole,
        vpg: usize,
        change: Replication,
        by: &Principal,
        now: SimTime,
    ) -> Result<String, Refusal> {
        if let Some(why) = self.replication_refused(vpg, change) {
            return Err(Refusal::Conflict(why));
        }
        let operation = match change {
            Replication::ForceSync => Operation::ForceSync {
                generation: self.vpgs[vpg].generation + 1,
            },
            Replication::Pause => Operation::Pause,
            Replication::Resume => Operation::Resume,
        };
        let task = self.start_task(site, vpg, operation, Planned::Complete, by, now);
        match change {
            Replication::Pause => {
                let status = self.vpgs[vpg].status;
                self.pin_status(
                    vpg,
                    status,
                    substatus::REPLICATION_PAUSED_USER_INITIATED,
                    now,
                );
            }
            Replication::ForceSync | Replication::Resume => {
                let until = self.tasks[task].nominal_end;
                self.sync(vpg, until, substatus::DELTA_SYNC, false, now);
            }
        }
        Ok(self.tasks[task].id.clone())
    }

    /// Why the VPG's replication cannot change so now, if it cannot.
    fn replication_refused(&self, vpg: usize, change: Replication) -> Option<String> {
        let v = &self.vpgs[vpg];
        match change {
            Replication::ForceSync => match v.resync {
                Some(resync) => Some(format!(
                    "VPG '{}' is already syncing until {}; force a sync again once that one ended.",
                    v.name,
                    resync.until.to_wire()
                )),
                None if !(status::MEETING_SLA..=status::HISTORY_NOT_MEETING_SLA)
                    .contains(&v.status) =>
                {
                    Some(format!(
                        "VPG '{}' cannot be force-synced while it is {}: only a replicating VPG \
                         (MeetingSLA, NotMeetingSLA, RpoNotMeetingSLA or HistoryNotMeetingSLA) can be.",
                        v.name,
                        v.state()
                    ))
                }
                None => None,
            },
            Replication::Pause if !decisions::writes_checkpoints(v.status, v.sub_status) => {
                Some(format!(
                    "VPG '{}' cannot be paused while it is {}: only a replicating VPG that is not \
                     syncing or paused already can be.",
                    v.name,
                    v.state()
                ))
            }
            Replication::Resume if v.sub_status != substatus::REPLICATION_PAUSED_USER_INITIATED => {
                Some(format!(
                    "VPG '{}' is not paused (it is {}): only a paused VPG resumes.",
                    v.name,
                    v.state()
                ))
            }
            Replication::Pause | Replication::Resume => None,
        }
    }

    /// The end of a `FailOverTest` task: the test is up (Stage InTest).
    pub(super) fn finish_failover_test(&mut self) -> (u8, String) {
        (task_state::COMPLETED, String::new())
    }

    /// The end of a `StopFailOverTest` task: the test is over, `LastTest` records it and a
    /// recovery report tells how it went.
    pub(super) fn finish_stop_failover_test(&mut self, stop: TaskKey, at: SimTime) -> (u8, String) {
        let vpg = self.tasks[stop].on_vpg();
        let v = &mut self.vpgs[vpg];
        if let Some(test) = v.test.take() {
            v.last_test = Some(at);
            for &vm in &test.vms {
                v.vm_last_test.insert(vm, at);
            }
            let start = &self.tasks[test.start_task];
            let point_in_time = match &start.operation {
                Operation::FailoverTest { checkpoint, .. } => {
                    v.journal.find(*checkpoint, at).map(|c| c.at)
                }
                _ => None,
            };
            let (succeeded, notes) = match &self.tasks[stop].operation {
                Operation::StopFailoverTest { success, summary } => (*success, summary.clone()),
                _ => (true, String::new()),
            };
            let report = RecoveryReport {
                id: String::new(),
                vpg,
                kind: "FailoverTest".to_owned(),
                started: start.started,
                ended: at,
                point_in_time,
                succeeded,
                initiated_by: start.initiated_by.clone(),
                notes,
                vms: test.vms,
            };
            self.report_recovery(report);
        }
        (task_state::COMPLETED, String::new())
    }

    /// The end of a `Clone` task: a copy of each VM, named `<vm>-clone`, runs at the recovery
    /// site with the VM's files as they were at the checkpoint, protected by no VPG. A checkpoint
    /// that left the journal before the clone finished (a resync) fails it.
    pub(super) fn finish_clone(
        &mut self,
        vpg: usize,
        checkpoint: u64,
        vms: &[usize],
        at: SimTime,
    ) -> (u8, String) {
        let v = &mut self.vpgs[vpg];
        v.clone_task = None;
        let recovery = v.recovery;
        let Some(moment) = v.journal.find(checkpoint, at).map(|c| c.at) else {
            return (
                task_state::FAILED,
                decisions::reason_checkpoint_lost(&v.name, checkpoint),
            );
        };
        for &source in vms {
            self.copy_vm(source, recovery, moment, decisions::CLONE_SUFFIX, at);
        }
        (task_state::COMPLETED, String::new())
    }

    /// Adds a copy of VM `source` as it was at `moment` to `site`, named with `suffix` (a clone's,
    /// or a VM restored from a retention set), on a new address.
    pub(crate) fn copy_vm(
        &mut self,
        source: usize,
        site: SiteRole,
        moment: SimTime,
        suffix: &str,
        at: SimTime,
    ) {
        let moref = self.free_moref(site);
        let octets = (
            self.rng.random_range(1..250u32),
            self.rng.random_range(10..250u32),
        );
        let vm = &self.vms[source];
        let copy = Vm {
            id: format!("{}.vm-{moref}", self.site(site).server_id),
            name: format!("{}{suffix}", vm.name),
            site,
            os: vm.os,
            cpus: vm.cpus,
            memory_mb: vm.memory_mb,
            provisioned_mb: vm.provisioned_mb,
            used_mb: vm.used_mb,
            host: vm.host,
            ip: format!("10.{}.{}.{}", 10 * (site.index() + 1), octets.0, octets.1),
            vpgs: Vec::new(),
            files: vm.files.copy_at(moment, at),
            removed: false,
            recovery_host: None,
        };
        self.add_vm(copy);
    }

    pub(super) fn free_moref(&mut self, site: SiteRole) -> u32 {
        loop {
            let moref = self.rng.random_range(1000..100_000u32);
            let id = format!("{}.vm-{moref}", self.site(site).server_id);
            if self.vm_by_id(&id).is_none() {
                return moref;
            }
        }
    }

    /// The end of a `ForceSync` task: Completed unless a resync or a status pin replaced the sync.
    pub(super) fn finish_force_sync(&mut self, vpg: usize, generation: u64) -> (u8, String) {
        let v = &self.vpgs[vpg];
        if v.generation == generation {
            (task_state::COMPLETED, String::new())
        } else {
            (
                task_state::FAILED,
                decisions::reason_sync_interrupted(&v.name),
            )
        }
    }
}
