//! The whole simulated world ([`World`]): the record every area builds on, its lookups (VPGs, VMs,
//! tasks, checkpoints), the tasks it starts and schedules, the calls it logs and the readings
//! derived from it (progress, RPO, write load). How it moves is `advance.rs`, above the areas.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use super::auth::{Auth, Principal};
use super::calls::Call;
use super::clock::{Clock, SimTime};
use super::documents::VpgSettings;
use super::faults::Faults;
use super::flr_session::FlrSession;
use super::ids::{SiteRole, guid};
use super::index::Index;
use super::inventory::{Site, Vm, Vpg};
use super::journal::Checkpoint;
use super::ltr::Ltr;
use super::refusal::Refusal;
use super::schedule::{Event, Scheduled};
use super::setup::Timings;
use super::tasks::{Operation, Planned, Task, TaskKey, Tasks};
use super::traces::Traces;
use crate::decisions::{self, CHECKPOINT_INTERVAL_MS, REFUSED_TASK_FRACTION};
use crate::enums::{status, task_state};

/// The whole simulated world.
#[derive(Debug)]
pub struct World {
    /// The simulated clock.
    pub clock: Clock,
    /// Current timings.
    pub timings: Timings,
    /// The jitter on task durations, a fraction: a start-up option, so not part of the saved state.
    pub task_jitter: f64,
    /// Local, then peer.
    pub sites: [Site; 2],
    /// Every VM.
    pub vms: Vec<Vm>,
    /// Every VPG.
    pub vpgs: Vec<Vpg>,
    /// The tasks of both sites a ZVM still lists, oldest first (see `age_out_tasks`).
    pub tasks: Tasks,
    /// The FLR sessions of both sites, oldest first.
    pub flrs: Vec<FlrSession>,
    /// Keycloak.
    pub auth: Auth,
    /// The call log, its most recent [`decisions::CALLS_KEPT`] calls at least.
    pub calls: Vec<Call>,
    /// Extended Journal Copy: repositories and retention sets.
    pub ltr: Ltr,
    /// The fault rules.
    pub faults: Faults,
    /// Events, recovery reports and dismissed alerts.
    pub traces: Traces,
    /// The VPG settings documents being edited, by lowercased identifier.
    pub vpg_settings: std::collections::BTreeMap<String, VpgSettings>,
    /// VMs and VPGs by identifier and name.
    pub(super) index: Index,
    /// Runtime random choices (task ids, tokens, jitter). The initial world uses a separate stream,
    /// so a change to the world file does not shift every task id.
    pub(super) rng: ChaCha8Rng,
    pub(super) events: BinaryHeap<Reverse<Scheduled>>,
    pub(super) next_event: u64,
    pub(super) trimmed_at: SimTime,
}

impl World {
    /// A new pairing token, from the run-time random stream.
    pub fn new_pairing_token(&mut self) -> String {
        guid(&mut self.rng).replace('-', "")
    }

    /// The site of a role.
    pub fn site(&self, role: SiteRole) -> &Site {
        &self.sites[role.index()]
    }

    /// Keycloak and the random generator, borrowed together to issue a token.
    pub fn auth_and_rng(&mut self) -> (&mut Auth, &mut ChaCha8Rng) {
        (&mut self.auth, &mut self.rng)
    }

    /// Forgets the tasks a ZVM would no longer list: terminal tasks that ended more than
    /// [`decisions::TASK_RETENTION`] ago and, beyond the [`decisions::TASKS_KEPT`] most recently
    /// started terminal tasks, the older ones. A task the world still refers to (running, or named by
    /// a failover test, clone, live operation, FLR session or pending event) is kept whatever its
    /// age. Each task keeps its key, so forgetting one is a removal and no reference changes. Only
    /// simulated time and the requests decide what goes, so a seed's run stays repeatable.
    pub(super) fn age_out_tasks(&mut self, now: SimTime) {
        let retention = i64::try_from(decisions::TASK_RETENTION.as_millis()).unwrap_or(i64::MAX);
        self.forget_tasks(now, retention, decisions::TASKS_KEPT);
    }

    /// [`World::age_out_tasks`] with its bounds given: `retention_ms` after their end, `kept` terminal
    /// tasks at most.
    fn forget_tasks(&mut self, now: SimTime, retention_ms: i64, kept: usize) {
        let referred: HashSet<TaskKey> = self.task_references().collect();
        let mut terminal_kept = 0;
        let mut forgotten = Vec::new();
        for (key, task) in self.tasks.keyed().rev() {
            let Some(ended) = &task.ended else {
                continue;
            };
            if referred.contains(&key) {
                continue;
            }
            if now.millis_since(ended.at) > retention_ms || terminal_kept >= kept {
                forgotten.push(key);
            } else {
                terminal_kept += 1;
            }
        }
        for key in forgotten {
            self.tasks.remove(key);
        }
    }

    /// Every task the rest of the world holds: running inserts, failover tests, clones and live
    /// operations of VPGs, FLR sessions, and task ends still to come.
    fn task_references(&self) -> impl Iterator<Item = TaskKey> + '_ {
        let of_vpgs = self.vpgs.iter().flat_map(Vpg::tasks);
        let of_flrs = self
            .flrs
            .iter()
            .flat_map(|session| std::iter::once(session.mount_task).chain(session.unmount_task));
        let of_events = self
            .events
            .iter()
            .filter_map(|Reverse(scheduled)| match scheduled.event {
                Event::TaskEnds(task)
                | Event::RestoreTimeout { task, .. }
                | Event::LiveTimeout { task, .. } => Some(task),
                Event::ResyncEnds { .. } => None,
            });
        of_vpgs.chain(of_flrs).chain(of_events)
    }

    pub(super) fn schedule(&mut self, at: SimTime, event: Event) {
        self.next_event += 1;
        self.events.push(Reverse(Scheduled {
            at,
            seq: self.next_event,
            event,
        }));
    }

    /// A VPG by identifier (case-insensitive).
    pub fn vpg_by_id(&self, id: &str) -> Option<usize> {
        self.index.vpg_by_id(id)
    }

    /// A VPG by identifier or, failing that, by name (case-insensitive): the control API's lookup.
    pub fn vpg_by_id_or_name(&self, key: &str) -> Option<usize> {
        self.vpg_by_id(key).or_else(|| self.index.vpg_by_name(key))
    }

    /// A VPG visible from `site` (its protected or its recovery site), or 404.
    pub fn visible_vpg(&self, site: SiteRole, id: &str) -> Result<usize, Refusal> {
        self.vpg_by_id(id)
            .filter(|&v| self.vpgs[v].visible_from(site))
            .ok_or_else(|| {
                Refusal::NotFound(format!(
                    "There is no VPG '{id}' at site {}: list the VPGs with GET /v1/vpgs.",
                    self.site(site).name
                ))
            })
    }

    /// The checkpoint `raw` of a VPG, if its journal lists it now; else 400 naming the window.
    pub fn checkpoint_in_journal(
        &self,
        vpg: usize,
        raw: &str,
        now: SimTime,
    ) -> Result<Checkpoint, Refusal> {
        let v = &self.vpgs[vpg];
        let (from, to) = v.journal.window_at(now);
        raw.trim()
            .parse::<u64>()
            .ok()
            .and_then(|id| v.journal.find(id, now))
            .ok_or_else(|| {
                Refusal::BadRequest(format!(
                    "Checkpoint '{raw}' is not in the journal of VPG '{}' (its history window is \
                     {} to {}): list its checkpoints with GET /v1/vpgs/{}/checkpoints.",
                    v.name,
                    from.to_wire(),
                    to.to_wire(),
                    v.id
                ))
            })
    }

    /// A VM by identifier (case-insensitive).
    pub fn vm_by_id(&self, id: &str) -> Option<usize> {
        self.index.vms_with_id(id).first().copied()
    }

    /// The VMs with this identifier (case-insensitive), in the world's order.
    pub fn vms_with_id(&self, id: &str) -> &[usize] {
        self.index.vms_with_id(id)
    }

    /// Builds the index of VMs and VPGs again (a VM removed).
    pub(crate) fn reindex(&mut self) {
        self.index = Index::new(&self.vms, &self.vpgs);
    }

    /// Adds a VM (an offsite clone's, a restored one) after every other, and indexes it.
    pub fn add_vm(&mut self, vm: Vm) {
        self.index.add_vm(self.vms.len(), &vm);
        self.vms.push(vm);
    }

    /// The VMs with this name (case-insensitive), in the world's order.
    pub fn vms_named(&self, name: &str) -> &[usize] {
        self.index.vms_named(name)
    }

    /// A task by identifier (case-insensitive).
    pub fn task_by_id(&self, id: &str) -> Option<&Task> {
        self.tasks.by_id(id)
    }

    /// Whether the VPG writes checkpoints now (and so can take a tagged one).
    pub fn writes_checkpoints(&self, vpg: usize) -> bool {
        let v = &self.vpgs[vpg];
        decisions::writes_checkpoints(v.status, v.sub_status)
    }

    /// Starts a task at `site` for `vpg` and schedules its end; returns its key. A task planned to
    /// fail runs a fraction of its duration (the refusal is only visible to a client that reads the
    /// task).
    pub(crate) fn start_task(
        &mut self,
        site: SiteRole,
        vpg: usize,
        operation: Operation,
        planned: Planned,
        by: &Principal,
        now: SimTime,
    ) -> TaskKey {
        self.add_task(site, (Some(vpg), None), operation, planned, by, now)
    }

    /// [`World::start_task`] for the VPG or the VRA (its host) of `on`: a VRA's task has no VPG.
    pub(crate) fn add_task(
        &mut self,
        site: SiteRole,
        (vpg, vra): (Option<usize>, Option<usize>),
        operation: Operation,
        planned: Planned,
        by: &Principal,
        now: SimTime,
    ) -> TaskKey {
        // The count bound of the task history, applied in bulk: past twice the kept count, down to it.
        if self.tasks.len() >= 2 * decisions::TASKS_KEPT {
            self.age_out_tasks(now);
        }
        let duration = self.jittered_task_duration();
        let runs_for = match planned {
            Planned::Complete => duration,
            Planned::Fail(_) => (duration as f64 * REFUSED_TASK_FRACTION).round() as i64,
        };
        let id = self.new_task_id(site);
        let key = self.tasks.add(Task {
            id,
            site,
            operation,
            vpg,
            vra,
            initiated_by: by.name.clone(),
            started: now,
            nominal_end: now.plus_millis(duration),
            planned,
            ended: None,
            waiting: None,
        });
        self.schedule(now.plus_millis(runs_for), Event::TaskEnds(key));
        key
    }

    /// Ends the VPG's running task that `running` takes from it Stopped, with the reason `reason`
    /// gives, and returns its identifier; 409 when no `what` runs.
    pub(super) fn abort_running(
        &mut self,
        vpg: usize,
        what: &str,
        running: impl FnOnce(&mut Vpg) -> Option<TaskKey>,
        reason: impl FnOnce(&Vpg) -> String,
        now: SimTime,
    ) -> Result<String, Refusal> {
        let v = &mut self.vpgs[vpg];
        let Some(task) = running(v) else {
            return Err(Refusal::Conflict(format!(
                "VPG '{}' has no {what} running; nothing to abort.",
                v.name
            )));
        };
        let reason = reason(v);
        self.tasks[task].end(task_state::STOPPED, reason, now);
        Ok(self.tasks[task].id.clone())
    }

    /// Records an API call; past twice [`decisions::CALLS_KEPT`] calls, the oldest are forgotten
    /// down to that many.
    pub fn record_call(&mut self, call: Call) {
        self.record_call_keeping(call, decisions::CALLS_KEPT);
    }

    fn record_call_keeping(&mut self, mut call: Call, kept: usize) {
        call.seq = self.calls.last().map_or(1, |c| c.seq + 1);
        if self.calls.len() >= 2 * kept {
            self.calls.drain(..self.calls.len() - kept + 1);
        }
        self.calls.push(call);
    }

    /// `ProgressPercentage` of a VPG: a resync's progress, 0 while Initializing, else 100.
    pub fn vpg_progress(&self, vpg: usize, now: SimTime) -> f64 {
        let v = &self.vpgs[vpg];
        match v.resync {
            Some(r) => {
                let total = r.until.millis_since(r.started).max(1) as f64;
                (now.millis_since(r.started) as f64 / total * 100.0).clamp(0.0, 100.0)
            }
            None if v.status == status::INITIALIZING => 0.0,
            None => 100.0,
        }
    }

    /// `ActualRPO` of a VPG now: while it writes checkpoints, its replication lag and the time since
    /// the last one; while it writes none, the time since it last did.
    pub fn actual_rpo(&self, vpg: usize, now: SimTime) -> u32 {
        let v = &self.vpgs[vpg];
        if !self.writes_checkpoints(vpg) {
            // A VPG that writes no checkpoint falls further behind each second (one that never
            // wrote has no RPO yet).
            return v.journal.last_written().map_or(0, |at| {
                u32::try_from(now.millis_since(at).max(0) / 1000).unwrap_or(u32::MAX)
            });
        }
        // The time since the last checkpoint, on top of the VPG's replication lag.
        let since_slot = now.millis().rem_euclid(CHECKPOINT_INTERVAL_MS) / 1000;
        v.actual_rpo + u32::try_from(since_slot).unwrap_or(0)
    }

    /// A VM's own write load, `(IOPs, ThroughputInMB)`: the same in each of its VPGs, while that VPG
    /// replicates (see [`decisions::vm_load`]).
    pub fn vm_load(&self, vm: usize, vpg: usize) -> (u32, f64) {
        if self.writes_checkpoints(vpg) {
            decisions::vm_load(&self.vms[vm].id)
        } else {
            (0, 0.0)
        }
    }

    /// A VPG's write load: the sum of its VMs' (nothing while it writes no checkpoint).
    pub fn vpg_load(&self, vpg: usize) -> (u32, f64) {
        self.vpgs[vpg]
            .vms
            .iter()
            .map(|&vm| self.vm_load(vm, vpg))
            .fold((0, 0.0), |(i, t), (vi, vt)| (i + vi, t + vt))
    }

    /// The nominal duration times a seeded factor in `1 ± task_jitter`. The factor is drawn even at a
    /// jitter of 0 (where it is exactly 1), so the random stream, and with it every later task id and
    /// token, is the same whatever the jitter.
    fn jittered_task_duration(&mut self) -> i64 {
        let base = self.timings.task_duration_ms as f64;
        let jitter = self.task_jitter;
        let factor = 1.0 + self.rng.random_range(-jitter..=jitter);
        (base * factor).round().max(0.0) as i64
    }

    fn new_task_id(&mut self, site: SiteRole) -> String {
        let task_guid = guid(&mut self.rng);
        format!("{task_guid}.{}", self.sites[site.index()].id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::auth::Lifetimes;
    use crate::world::setup::Setup;
    use crate::world::spec::Role;
    use crate::world::spec::WorldSpec;

    const HOUR_MS: i64 = 60 * 60 * 1000;

    fn world(task_duration_ms: i64) -> World {
        World::new(&Setup {
            spec: WorldSpec::default_world(),
            seed: 7,
            epoch: SimTime::from_millis(0),
            time_scale: 0.0,
            timings: Timings {
                task_duration_ms,
                listing_lag_ms: 0,
            },
            task_jitter: 0.0,
            lifetimes: Lifetimes {
                access_ms: HOUR_MS,
                refresh_ms: HOUR_MS,
                session_limit: false,
            },
        })
        .unwrap()
    }

    fn admin() -> Principal {
        Principal {
            name: "admin".to_owned(),
            role: Role::Administrator,
            realm_roles: Vec::new(),
        }
    }

    fn vpg(world: &World, name: &str) -> usize {
        world.vpgs.iter().position(|v| v.name == name).unwrap()
    }

    /// Inserts a tagged checkpoint at Boston as admin; the task's id.
    fn insert(world: &mut World, vpg: usize, name: &str, at_ms: i64) -> String {
        let at = SimTime::from_millis(at_ms);
        world.insert_tagged_checkpoint(SiteRole::Local, vpg, name, &admin(), at)
    }

    fn listed(world: &World) -> Vec<String> {
        world.tasks.iter().map(|t| t.id.clone()).collect()
    }

    #[test]
    fn a_terminal_task_is_forgotten_a_day_after_it_ended_and_a_running_one_is_kept() {
        let mut w = world(1_000);
        let web_local = vpg(&w, "web-local");
        let old = insert(&mut w, web_local, "old", 0);
        w.advance(SimTime::from_millis(2_000));
        // A task that runs for two days, started after the first one ended.
        w.timings.task_duration_ms = 48 * HOUR_MS;
        let web_dr = vpg(&w, "web-dr");
        let long = insert(&mut w, web_dr, "long", 2_000);
        let key = w.vpgs[web_dr].running_inserts[0];
        // The first one ended at 1 s: it is kept a day after that, to the millisecond.
        w.advance(SimTime::from_millis(1_000 + 24 * HOUR_MS));
        assert!(w.task_by_id(&old).is_some(), "within a day of its end");
        w.advance(SimTime::from_millis(1_000 + 24 * HOUR_MS + 60_000));
        assert!(
            w.task_by_id(&old).is_none(),
            "forgotten a day after its end"
        );
        assert_eq!(listed(&w), [long.as_str()]);
        // What refers to the task kept still names it: the VPG's running insert, and the end still
        // to come.
        assert_eq!(
            w.vpgs[web_dr].running_inserts,
            [key],
            "its key did not change"
        );
        assert_eq!(w.tasks[key].id, long);
        w.advance(SimTime::from_millis(2_000 + 49 * HOUR_MS));
        let ended = w.task_by_id(&long).unwrap().ended.clone().unwrap();
        assert_eq!(ended.state, task_state::COMPLETED);
        assert!(w.vpgs[web_dr].running_inserts.is_empty());
    }

    #[test]
    fn beyond_the_kept_count_the_oldest_terminal_tasks_are_forgotten_and_referred_ones_kept() {
        let mut w = world(1_000);
        let app_tier = vpg(&w, "app-tier");
        let web_local = vpg(&w, "web-local");
        let test = w
            .start_failover_test(
                SiteRole::Local,
                app_tier,
                None,
                None,
                &admin(),
                SimTime::from_millis(0),
            )
            .unwrap();
        let mut inserts = Vec::new();
        for i in 0..6 {
            inserts.push(insert(&mut w, web_local, &format!("tag-{i}"), i * 2_000));
            w.advance(SimTime::from_millis(i * 2_000 + 1_500));
        }
        let now = SimTime::from_millis(12_000);
        w.forget_tasks(now, 24 * HOUR_MS, 3);
        let mut expected = vec![test.clone()];
        expected.extend(inserts[3..].iter().cloned());
        assert_eq!(
            listed(&w),
            expected,
            "the test's task, then the three newest inserts"
        );
        for task in w.tasks.iter() {
            assert_eq!(
                w.task_by_id(&task.id.to_uppercase()).map(|t| &t.id),
                Some(&task.id)
            );
        }
        for forgotten in &inserts[..3] {
            assert!(
                w.task_by_id(forgotten).is_none(),
                "{forgotten} is forgotten"
            );
        }
        let start = w.vpgs[app_tier].test.as_ref().unwrap().start_task;
        assert_eq!(
            w.tasks[start].id, test,
            "the failover test still names its task"
        );
        // Nothing more to forget: the same bounds change nothing.
        w.forget_tasks(now, 24 * HOUR_MS, 3);
        assert_eq!(listed(&w), expected);
    }

    #[test]
    fn the_call_log_forgets_its_oldest_calls_in_bulk_and_keeps_numbering() {
        let mut w = world(1_000);
        let call = |path: &str| Call {
            seq: 0,
            site: "Boston".to_owned(),
            method: "GET".to_owned(),
            path: path.to_owned(),
            query: None,
            status: 200,
            task_id: None,
            faults: Vec::new(),
            unmatched: false,
        };
        for i in 0..8 {
            w.record_call_keeping(call(&format!("/v1/{i}")), 3);
        }
        // Held up to twice the kept count, then cut back to the kept count.
        let seqs: Vec<u64> = w.calls.iter().map(|c| c.seq).collect();
        assert_eq!(seqs, [5, 6, 7, 8]);
        assert_eq!(w.calls[0].path, "/v1/4");
    }
}
