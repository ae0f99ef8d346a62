//! What a ZVM keeps of what happened, so that a client that watches alerts and events sees what
//! rewind (or anyone) did: an event for each operation a task ran (a tagged checkpoint, a failover
//! test started and stopped, an FLR mount, a clone, a live operation), whether it worked or not;
//! a resync's event; a recovery report for each failover test stopped and each live operation
//! done; and the lists a site reads of them: the alerts on (RPO alerts from `alerts.rs`, history
//! alerts from `history.rs`) and every event.
//!
//! What is kept is `traces.rs`; this file records it as the world moves.

use super::clock::SimTime;
use super::ids::SiteRole;
use super::inventory::Resync;
use super::journal::Contents;
use super::model::World;
use super::tasks::{Operation, TaskKey};
use super::traces::{Alert, RecoveryReport, Trace};
use crate::decisions::{self, REPORTS_KEPT};
use crate::enums::{VPG_SUBSTATUS, event_type, task_state};

/// The event type of a journal VM restore and its end.
const RESTORE_EVENT: u8 = event_type::RESTORE_PROTECTION_GROUP;

impl World {
    /// Records the event of a task that just ended in `state` (with `reason` when it failed), and
    /// the recovery report of a stopped failover test or a live operation.
    pub(super) fn trace_task(&mut self, index: TaskKey, state: u8, reason: &str, at: SimTime) {
        let task = &self.tasks[index];
        let Some(kind) = event_kind(&task.operation) else {
            return;
        };
        let vpg = &self.vpgs[task.on_vpg()];
        let what = match &task.operation {
            Operation::InsertTaggedCheckpoint { name } => {
                format!("Insert tagged checkpoint '{name}' in VPG {}", vpg.name)
            }
            operation => format!("{} of VPG {}", operation.kind(), vpg.name),
        };
        let succeeded = state == task_state::COMPLETED;
        let description = if succeeded {
            what
        } else {
            format!("{what} failed: {reason}")
        };
        let event = Trace {
            id: self.traces.next_id("event"),
            at,
            kind,
            vpg: task.on_vpg(),
            description,
            succeeded,
            user: task.initiated_by.clone(),
            alert: None,
            flr: task.operation.flr_session().map(str::to_owned),
        };
        self.traces.push_event(event);
    }

    /// Records the event of a resync that started at `at` and wiped `wiped` from the journal, so a
    /// client can tell "removed by a resync at T" from "aged out of the history window".
    pub(super) fn trace_resync(
        &mut self,
        vpg: usize,
        sync_substatus: u8,
        wiped: &Contents,
        resync: Resync,
        at: SimTime,
    ) {
        let tags: Vec<String> = wiped.tags.iter().filter_map(|c| c.tag.clone()).collect();
        let earliest = wiped.earliest.as_ref().map(|c| c.at.to_wire());
        let description = decisions::resync_description(
            &self.vpgs[vpg].name,
            VPG_SUBSTATUS.name(sync_substatus),
            wiped.count,
            earliest.as_deref(),
            &tags,
            &resync.until.to_wire(),
        );
        let event = Trace {
            id: self.traces.next_id("event"),
            at,
            kind: event_type::INIT_FULL_SYNC,
            vpg,
            description,
            succeeded: true,
            user: decisions::SYSTEM_USER.to_owned(),
            alert: None,
            flr: None,
        };
        self.traces.push_event(event);
    }

    /// Records the report of a recovery operation that just ended, under a new identifier.
    pub(super) fn report_recovery(&mut self, mut report: RecoveryReport) {
        report.id = self.traces.next_id("report");
        if self.traces.reports.len() >= REPORTS_KEPT {
            self.traces.reports.drain(..REPORTS_KEPT / 10);
        }
        self.traces.reports.push(report);
    }

    /// Every alert on now at a site that sees its VPG, oldest first.
    pub fn alerts_on(&self, now: SimTime) -> Vec<Alert> {
        let listed = (0..self.vpgs.len()).filter(|&vpg| !self.vpgs[vpg].deleted);
        self.alerts_of(listed, now)
    }

    /// The alerts on at `now` about the VPGs `vpgs`, oldest first: a filter by VPG reads only its
    /// own, as a guard of one VM does, rather than every VPG's.
    pub fn alerts_of(&self, vpgs: impl Iterator<Item = usize> + Clone, now: SimTime) -> Vec<Alert> {
        let mut alerts: Vec<Alert> = vpgs
            .clone()
            .flat_map(|vpg| self.rpo_alerts(vpg, now))
            .filter(|alert| alert.off.is_none())
            .chain(vpgs.flat_map(|vpg| self.watched_alerts(vpg)))
            .collect();
        alerts.sort_by_key(|alert| alert.on);
        alerts
    }

    /// Every event up to `now`, oldest first: those recorded, and those of the RPO episodes still
    /// going on.
    pub fn events(&self, now: SimTime) -> Vec<Trace> {
        let mut events = self.traces.events.clone();
        for vpg in (0..self.vpgs.len()).filter(|&vpg| !self.vpgs[vpg].deleted) {
            for alert in self.rpo_alerts(vpg, now) {
                events.push(self.alert_event(&alert, event_type::ALERT_TURNED_ON, alert.on));
                if let Some(off) = alert.off {
                    events.push(self.alert_event(&alert, event_type::ALERT_TURNED_OFF, off));
                }
            }
        }
        events.sort_by_key(|event| event.at);
        events
    }

    /// Dismisses (or undismisses) alert `alert` if it is on now at a site `site` sees; whether it
    /// was.
    pub fn set_dismissed(
        &mut self,
        site: SiteRole,
        alert: &str,
        dismissed: bool,
        now: SimTime,
    ) -> bool {
        let Some(alert) = self
            .alerts_on(now)
            .into_iter()
            .find(|a| a.id.eq_ignore_ascii_case(alert) && self.vpgs[a.vpg].visible_from(site))
        else {
            return false;
        };
        if dismissed {
            self.traces.dismissed.insert(alert.id);
        } else {
            self.traces.dismissed.remove(&alert.id);
        }
        true
    }
}

/// The `EventTypeApi` of the event a task leaves, if it leaves one.
fn event_kind(operation: &Operation) -> Option<u8> {
    Some(match operation {
        Operation::InsertTaggedCheckpoint { .. } => event_type::INSERT_TAGGED_CP,
        Operation::FlrMount { .. } | Operation::FlrBackupMount { .. } => {
            event_type::FLR_JOURNAL_MOUNT
        }
        Operation::FlrUnmount { .. } | Operation::FlrBackupUnmount { .. } => {
            event_type::FLR_JOURNAL_UNMOUNT
        }
        Operation::ManualRetention { .. } => event_type::BACKUP_PROTECTION_GROUP,
        Operation::FailoverTest { .. } => event_type::FAIL_OVER_TEST,
        Operation::StopFailoverTest { .. } => event_type::STOP_FAIL_OVER_TEST,
        Operation::Clone { .. } => event_type::CLONE,
        Operation::Failover { .. } => event_type::FAIL_OVER,
        Operation::Move { .. } => event_type::MOVE,
        Operation::JournalVmRestore { .. }
        | Operation::RestoreFromRetentionSet { .. }
        | Operation::JournalVmRestoreCommit { .. }
        | Operation::JournalVmRestoreRollback { .. } => RESTORE_EVENT,
        // A force sync shows as the VPG's status and, past its target, as its RPO alerts.
        Operation::ForceSync { .. } => return None,
        Operation::UpdateVpg { .. } => event_type::UPDATE_PROTECTION_GROUP,
        // A VRA's task is of no VPG; the simulator records events of VPGs only.
        Operation::InstallVras { .. }
        | Operation::UninstallVras { .. }
        | Operation::EditVra { .. }
        | Operation::UpgradeVras { .. }
        | Operation::ChangeRecoveryHost { .. } => return None,
        Operation::CreateVpg { .. } => event_type::CREATE_PROTECTION_GROUP,
        Operation::DeleteVpg { removal } if removal.force => {
            event_type::FORCE_REMOVE_PROTECTION_GROUP
        }
        Operation::DeleteVpg { .. } => event_type::REMOVE_PROTECTION_GROUP,
        Operation::Pause => event_type::PAUSE_PROTECTION_GROUP,
        Operation::LiveCommit { failover: true, .. } => event_type::FAILOVER_COMMIT,
        Operation::LiveCommit { .. } => event_type::MOVE_COMMIT,
        Operation::LiveRollback { failover: true, .. } => event_type::FAILOVER_ROLLBACK,
        Operation::LiveRollback { .. } => event_type::MOVE_ROLLBACK,
        Operation::Resume => event_type::RESUME_PROTECTION_GROUP,
    })
}
