//! What a ZVM keeps of what happened, so that a client that watches alerts and events sees what
//! rewind (or anyone) did: an event for each operation a task ran (a tagged checkpoint, a failover
//! test started and stopped, an FLR mount, a clone, a live operation), whether it worked or not;
//! the RPO alerts of a VPG that writes no checkpoint, with the events that turn them on and off;
//! and a recovery report for each failover test stopped and each live operation done.
//!
//! Alerts are not stored while they hold: a VPG that writes no checkpoint falls behind by one
//! second each second, so when its RPO crossed its target is known from when it last wrote. Only
//! an episode that ended (the VPG writes again) is written down, as its events.
//!
//! What is kept is `traces.rs`; this file records it as the world moves.

use super::clock::SimTime;
use super::ids::{SiteRole, stable_guid};
use super::inventory::Resync;
use super::journal::Contents;
use super::model::World;
use super::restore::RESTORE_EVENT;
use super::tasks::{Operation, TaskKey};
use super::traces::{Alert, AlertRule, RPO_RULES, RecoveryReport, Trace, Trigger};
use crate::decisions::{self, REPORTS_KEPT};
use crate::enums::{VPG_SUBSTATUS, event_type, status, task_state};

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

    /// The RPO alerts of the VPG as of `now`. One that writes no checkpoint falls behind from
    /// when it last wrote: the alerts it crossed, the milder ones ended by a harsher one. One that
    /// writes but lags beyond its target (`RpoNotMeetingSLA`) has the harshest alert its lag
    /// crosses, on since it began writing. None for a VPG that never wrote or protects nothing
    /// (Initializing, Recovered).
    pub fn rpo_alerts(&self, vpg: usize, now: SimTime) -> Vec<Alert> {
        let v = &self.vpgs[vpg];
        let protecting =
            (status::MEETING_SLA..=status::HISTORY_NOT_MEETING_SLA).contains(&v.status);
        let target_ms = i64::from(v.rpo_seconds) * 1000;
        let alert = |rule: &'static AlertRule, on: SimTime, off| self.alert(vpg, rule, on, off);
        if !protecting {
            return Vec::new();
        }
        if let Some(since) = v.journal.writing_since() {
            let lag_ms = i64::from(v.actual_rpo) * 1000;
            return RPO_RULES
                .iter()
                .rev()
                .find(|rule| lag_ms > target_ms * rule.rpo_factor())
                .map(|rule| alert(rule, since, None))
                .into_iter()
                .collect();
        }
        let Some(last) = v.journal.last_written() else {
            return Vec::new();
        };
        let crossed: Vec<(&'static AlertRule, SimTime)> = RPO_RULES
            .iter()
            .map(|rule| (rule, last.plus_millis(target_ms * rule.rpo_factor())))
            .filter(|(_, on)| *on < now)
            .collect();
        crossed
            .iter()
            .enumerate()
            .map(|(position, &(rule, on))| alert(rule, on, crossed.get(position + 1).map(|c| c.1)))
            .collect()
    }

    /// The VPG writes checkpoints again at `at`: the RPO alerts of the episode that ends are
    /// written down as the events that turned them on and off.
    pub(super) fn end_rpo_episode(&mut self, vpg: usize, at: SimTime) {
        if self.vpgs[vpg].journal.is_writing() {
            return;
        }
        for alert in self.rpo_alerts(vpg, at) {
            let off = alert.off.unwrap_or(at);
            for (kind, when) in [
                (event_type::ALERT_TURNED_ON, alert.on),
                (event_type::ALERT_TURNED_OFF, off),
            ] {
                let event = self.alert_event(&alert, kind, when);
                self.traces.push_event(event);
            }
        }
    }

    /// Records the event that turns `alert` on or off at `at`.
    pub(super) fn record_alert_event(&mut self, alert: &Alert, kind: u8, at: SimTime) {
        let event = self.alert_event(alert, kind, at);
        self.traces.push_event(event);
    }

    /// The event that turns `alert` on or off at `at`.
    pub fn alert_event(&self, alert: &Alert, kind: u8, at: SimTime) -> Trace {
        let verb = if kind == event_type::ALERT_TURNED_ON {
            "on"
        } else {
            "off"
        };
        Trace {
            id: stable_guid(&format!("{}/{verb}", alert.rule.help), &alert.id),
            at,
            kind,
            vpg: alert.vpg,
            description: format!(
                "Alert {} turned {verb}: {}",
                alert.rule.help,
                self.alert_description(alert)
            ),
            succeeded: true,
            user: decisions::SYSTEM_USER.to_owned(),
            alert: Some(alert.id.clone()),
            flr: None,
        }
    }

    /// The alert of `rule` on VPG `vpg` from `on`: its identifier is made of the rule, the VPG and
    /// the moment, so it stays the same for as long as the alert is on.
    pub fn alert(
        &self,
        vpg: usize,
        rule: &'static AlertRule,
        on: SimTime,
        off: Option<SimTime>,
    ) -> Alert {
        Alert {
            id: stable_guid(rule.help, format!("{}/{}", self.vpgs[vpg].id, on.millis())),
            vpg,
            rule,
            on,
            off,
        }
    }

    /// What an alert says.
    pub fn alert_description(&self, alert: &Alert) -> String {
        let v = &self.vpgs[alert.vpg];
        match alert.rule.trigger {
            Trigger::Rpo { factor } => format!(
                "VPG {} target RPO exceeded: its RPO is over {} seconds, {} times its target of {} \
                 seconds.",
                v.name,
                i64::from(v.rpo_seconds) * factor,
                factor,
                v.rpo_seconds
            ),
            Trigger::LowHistory { percent } => format!(
                "VPG {} has low journal history: its journal holds less than {percent}% of its \
                 configured history of {} minutes.",
                v.name,
                v.journal.history_minutes()
            ),
            Trigger::JournalFull => format!(
                "Journal reached configured limit: the journal of VPG {} at site {} is at its hard \
                 limit. Older checkpoints may be removed and the history reduced.",
                v.name,
                self.site(v.recovery).name
            ),
        }
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
