//! A VPG's alerts, as the ZVM shows them: one alert's identifier, its description and the events
//! that turn it on and off; and the RPO alerts of a VPG, derived from when it last wrote.
//!
//! An RPO alert is not stored while it holds: a VPG that writes no checkpoint falls behind by one
//! second each second, so when its RPO crossed its target is known from when it last wrote. Only
//! an episode that ended (the VPG writes again) is written down, as its events. The history
//! alerts are judged in `history.rs`, which builds its alerts here.

use super::clock::SimTime;
use super::ids::stable_guid;
use super::model::World;
use super::traces::{Alert, AlertRule, RPO_RULES, Trace, Trigger};
use crate::decisions;
use crate::enums::{event_type, status};

impl World {
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

    /// Records the event that turns `alert` on or off at `at`.
    pub(super) fn record_alert_event(&mut self, alert: &Alert, kind: u8, at: SimTime) {
        let event = self.alert_event(alert, kind, at);
        self.traces.push_event(event);
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
}
