//! Extended Journal Copy's manual runs and the retention sets they leave: a run started and
//! aborted, the end of its task (a set written from a checkpoint of the VPG's journal to the VPG's
//! repository), which sets a site sees, and the sets forgotten once they expire. Repositories
//! themselves are `repositories.rs`.
//!
//! `POST /v1/ltr/vpgs/{id}/retentionstart` starts a `ManualRetention` task; when it ends, a full
//! retention set of the VPG at the checkpoint's moment is in the VPG's repository, with an expiry
//! of the repository's Keep For after it was written. A retention set outlives its checkpoint
//! (that is what it is for) and is gone once it expires. A VPG without a repository, or a
//! checkpoint the journal no longer lists, fails the task with a reason; `retentionabort` stops a
//! run (task Stopped). A retention set holds each VM of the VPG as it was at its point in time: its
//! files are the guest's files at that moment, which FLR (`Bflr`) mounts.

use super::auth::Principal;
use super::clock::SimTime;
use super::ids::{SiteRole, stable_guid};
use super::inventory::Vpg;
use super::ltr::RetentionSet;
use super::model::World;
use super::refusal::Refusal;
use super::tasks::{Operation, Planned, TaskKey};
use crate::decisions;
use crate::enums::task_state;

/// One day, in milliseconds.
const DAY_MS: i64 = 24 * 60 * 60 * 1000;

impl World {
    /// `POST /v1/ltr/vpgs/{id}/retentionstart {"checkpointId"}`: starts a `ManualRetention` task
    /// at `site` and returns its identifier. Whether it writes a set is only in the task: a VPG
    /// without a repository, a checkpoint the journal does not list (the latest when none is
    /// given) or a run already going end it Failed with the reason.
    pub fn start_retention(
        &mut self,
        site: SiteRole,
        vpg: usize,
        checkpoint: Option<&str>,
        by: &Principal,
        now: SimTime,
    ) -> String {
        let v = &self.vpgs[vpg];
        let chosen = match checkpoint {
            Some(raw) => self.checkpoint_in_journal(vpg, raw, now).ok(),
            None => v.journal.latest(now),
        };
        let planned = if let Some(running) = v.ltr.running {
            Planned::Fail(decisions::reason_retention_running(
                &v.name,
                &self.tasks[running].id,
            ))
        } else if v.ltr.repository.is_none() {
            Planned::Fail(decisions::reason_no_repository(&v.name))
        } else if chosen.is_none() {
            Planned::Fail(decisions::reason_retention_checkpoint(&v.name, checkpoint))
        } else {
            Planned::Complete
        };
        let complete = planned == Planned::Complete;
        let operation = Operation::ManualRetention {
            checkpoint: chosen.map(|c| c.id),
        };
        let key = self.start_task(site, vpg, operation, planned, by, now);
        let ltr = &mut self.vpgs[vpg].ltr;
        ltr.runs += 1;
        ltr.last_run = Some(now);
        if complete {
            ltr.running = Some(key);
        }
        self.tasks[key].id.clone()
    }

    /// `POST /v1/ltr/vpgs/{id}/retentionabort`: the running run's task ends Stopped; 409 when
    /// none runs.
    pub fn abort_retention(
        &mut self,
        vpg: usize,
        by: &Principal,
        now: SimTime,
    ) -> Result<String, Refusal> {
        let running = |v: &mut Vpg| {
            let task = v.ltr.running.take();
            v.ltr.last_failed |= task.is_some();
            task
        };
        let reason = |v: &Vpg| decisions::reason_retention_aborted(&v.name, &by.name);
        self.abort_running(vpg, "Extended Journal Copy", running, reason, now)
    }

    /// The end of a `ManualRetention` task: a full retention set of the VPG at the checkpoint's
    /// moment, unless the run was refused or the checkpoint left the journal while it ran.
    pub(super) fn finish_retention(&mut self, key: TaskKey, at: SimTime) -> (u8, String) {
        let task = &self.tasks[key];
        let vpg = task.on_vpg();
        let v = &mut self.vpgs[vpg];
        if v.ltr.running == Some(key) {
            v.ltr.running = None;
        }
        let checkpoint = match (&task.planned, &task.operation) {
            (Planned::Fail(reason), _) => {
                v.ltr.last_failed = true;
                return (task_state::FAILED, reason.clone());
            }
            (_, Operation::ManualRetention { checkpoint }) => *checkpoint,
            _ => None,
        };
        let found = checkpoint.and_then(|id| v.journal.find(id, at));
        let (Some(checkpoint), Some(repository)) = (found, v.ltr.repository) else {
            v.ltr.last_failed = true;
            let lost = checkpoint.unwrap_or_default();
            return (
                task_state::FAILED,
                decisions::reason_checkpoint_lost(&v.name, lost),
            );
        };
        v.ltr.last_failed = false;
        v.ltr.successes += 1;
        v.ltr.last_success = Some(at);
        let vms = v.vms.clone();
        let size_kb = vms.iter().map(|&vm| self.vms[vm].used_mb * 1024).sum();
        let keep_days = self.ltr.repositories[repository].keep_days;
        self.ltr.issued += 1;
        let set = RetentionSet {
            id: stable_guid("retention-set", self.ltr.issued),
            vpg,
            repository,
            checkpoint,
            vms,
            written: at,
            expires: at.plus_millis(i64::from(keep_days) * DAY_MS),
            size_kb,
            initiated_by: self.tasks[key].initiated_by.clone(),
        };
        self.ltr.sets.push(set);
        (task_state::COMPLETED, String::new())
    }

    /// The retention set `id`, if it is kept at `now` and its VPG is visible from `site`.
    pub fn retention_set(&self, site: SiteRole, id: &str, now: SimTime) -> Option<usize> {
        self.ltr.sets.iter().position(|set| {
            set.id.eq_ignore_ascii_case(id) && set.kept_at(now) && self.set_seen_from(set, site)
        })
    }

    /// The retention sets kept at `now` whose VPG is visible from `site`, oldest first.
    pub fn retention_sets_seen(
        &self,
        site: SiteRole,
        now: SimTime,
    ) -> impl Iterator<Item = &RetentionSet> {
        self.ltr
            .sets
            .iter()
            .filter(move |set| set.kept_at(now) && self.set_seen_from(set, site))
    }

    /// Whether `site` sees the retention set `set`: one of its VPG's sites does, even once the VPG
    /// is deleted (a retention set outlives its VPG, as it outlives its checkpoint).
    fn set_seen_from(&self, set: &RetentionSet, site: SiteRole) -> bool {
        let v = &self.vpgs[set.vpg];
        v.protected == site || v.recovery == site
    }

    /// Forgets the retention sets that expired by `now` (a set an FLR session still mounts is
    /// kept until it is unmounted).
    pub(super) fn forget_expired_sets(&mut self, now: SimTime) {
        let flrs = &self.flrs;
        self.ltr.sets.retain(|set| {
            set.kept_at(now)
                || flrs
                    .iter()
                    .any(|s| s.retention_set.as_deref() == Some(set.id.as_str()))
        });
    }
}
