//! How long the way back lasts: the history a VPG's journal holds against the history it is
//! configured to hold, the status that shows it (`HistoryNotMeetingSLA`), and the alerts that
//! announce it (`VPG0003` and `VPG0004` "VPG has low journal history", `VRA0039` "Journal reached
//! configured limit"), with the events that turn them on and off.
//!
//! The journal ([`crate::world::journal`]) says what it holds at any moment. Alerts need more: the
//! moment each turned on and off. Between two changes to a journal (a burst of writes, a resync, a
//! status pin, a sync's end) and its moment of maturity (when it has written for its configured
//! history), the history a journal holds only grows and its fill only drops, so an alert can only
//! turn off or give way to a milder one; the moment it does is found by bisection. Each VPG keeps
//! a [`HistoryWatch`](crate::world::traces::HistoryWatch): the alerts on, and up to when they are
//! known. The world settles every watch to each moment it reaches (`World::advance`), and a change
//! to a journal is settled before and judged right after it (`World::changing_journal`), so every
//! transition is recorded at its own moment, as an event.

use super::clock::SimTime;
use super::journal::Journal;
use super::model::World;
use super::refusal::Refusal;
use super::traces::{Alert, AlertOn, HISTORY_RULES, JOURNAL_FULL, Trigger};
use crate::decisions;
use crate::enums::{VPG_STATUS, VPG_SUBSTATUS, event_type, status};

/// The alerts a journal calls for at one moment: the low-history rule it breaks (the harshest),
/// and whether it is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Level {
    low: Option<usize>,
    full: bool,
}

/// What `journal` calls for at `at`.
fn level(journal: &Journal, at: SimTime) -> Level {
    let Some(held) = journal.judged(at) else {
        return Level {
            low: None,
            full: false,
        };
    };
    let history_ms = journal.history_minutes() * 60_000;
    let low = HISTORY_RULES.iter().rposition(|rule| match rule.trigger {
        Trigger::LowHistory { percent } => held.ms * 100 < percent * history_ms,
        _ => false,
    });
    Level {
        low,
        full: held.full,
    }
}

/// The first moment in `(after, until]` at which `fell` holds, if it holds at `until`: `fell` must
/// hold from some moment on and never again stop (the history only grows between changes).
fn first_moment(after: SimTime, until: SimTime, fell: impl Fn(SimTime) -> bool) -> Option<SimTime> {
    if until <= after || !fell(until) {
        return None;
    }
    let (mut low, mut high) = (after, until);
    while high.millis_since(low) > 1 {
        let middle = low.plus_millis(high.millis_since(low) / 2);
        if fell(middle) {
            high = middle;
        } else {
            low = middle;
        }
    }
    Some(high)
}

impl World {
    /// The status a VPG shows at `now`: its own, except that a mature journal holding less history
    /// than configured (to the minute, as `ActualHistoryInMinutes` shows it) turns `MeetingSLA`
    /// into `HistoryNotMeetingSLA` and `RpoNotMeetingSLA` into `NotMeetingSLA`.
    pub fn shown_status(&self, vpg: usize, now: SimTime) -> u8 {
        let v = &self.vpgs[vpg];
        let short = v
            .journal
            .judged(now)
            .is_some_and(|held| (held.ms + 30_000) / 60_000 < v.journal.history_minutes());
        match v.status {
            status::MEETING_SLA if short => status::HISTORY_NOT_MEETING_SLA,
            status::RPO_NOT_MEETING_SLA if short => status::NOT_MEETING_SLA,
            other => other,
        }
    }

    /// `ActualHistoryInMinutes` of a VPG at `now`: from its earliest listed checkpoint to now,
    /// rounded to the minute (0 without a checkpoint).
    pub fn actual_history_minutes(&self, vpg: usize, now: SimTime) -> i64 {
        self.vpgs[vpg]
            .journal
            .earliest(now)
            .map_or(0, |c| (now.millis_since(c.at) + 30_000) / 60_000)
    }

    /// The history alerts of a VPG that are on (as of the moment its watch is settled to).
    pub fn watched_alerts(&self, vpg: usize) -> Vec<Alert> {
        let watch = &self.vpgs[vpg].watch;
        let low = watch
            .low
            .map(|on| self.alert(vpg, &HISTORY_RULES[on.rule], on.since, None));
        let full = watch
            .full
            .map(|since| self.alert(vpg, &JOURNAL_FULL, since, None));
        low.into_iter().chain(full).collect()
    }

    /// Settles the watch of every VPG whose journal can fall short, or that has an alert on, to
    /// `at`. The others have nothing to settle: their journals hold their whole history.
    pub(super) fn settle_history_all(&mut self, at: SimTime) {
        for vpg in 0..self.vpgs.len() {
            let v = &self.vpgs[vpg];
            if v.deleted {
                continue;
            }
            if v.journal.may_fall_short() || v.watch.low.is_some() || v.watch.full.is_some() {
                self.settle_history(vpg, at);
            }
        }
    }

    /// Brings a VPG's watch from the moment it is settled to up to `at`, recording each alert that
    /// turned off or gave way on the way, at its moment. Call it before a change to the journal.
    fn settle_history(&mut self, vpg: usize, at: SimTime) {
        let Some(mut from) = self.vpgs[vpg].watch.settled_at else {
            self.vpgs[vpg].watch.settled_at = Some(at);
            return;
        };
        if at <= from {
            return;
        }
        // The one moment between changes at which alerts can turn on: the journal's maturity.
        let journal = &self.vpgs[vpg].journal;
        let mature = journal
            .writing_since()
            .map(|since| since.plus_millis(journal.history_minutes() * 60_000))
            .filter(|&m| m > from && m <= at);
        if let Some(mature) = mature {
            self.decline(vpg, from, mature);
            self.judge_history(vpg, mature);
            from = mature;
        }
        self.decline(vpg, from, at);
        self.vpgs[vpg].watch.settled_at = Some(at);
    }

    /// Between `from` and `until` the alerts on can only turn off or give way to milder ones:
    /// records each such moment.
    fn decline(&mut self, vpg: usize, mut from: SimTime, until: SimTime) {
        while let Some(on) = self.vpgs[vpg].watch.low {
            let journal = &self.vpgs[vpg].journal;
            let fell = |t| level(journal, t).low < Some(on.rule);
            let Some(moment) = first_moment(from, until, fell) else {
                break;
            };
            let now_low = level(journal, moment).low;
            self.set_low(vpg, now_low, moment);
            from = moment;
        }
        if let Some(since) = self.vpgs[vpg].watch.full {
            let journal = &self.vpgs[vpg].journal;
            if let Some(moment) = first_moment(since.max(from), until, |t| !level(journal, t).full)
            {
                self.set_full(vpg, false, moment);
            }
        }
    }

    /// Runs `change` on the VPG's journal at `at`: its history alerts are settled up to `at`
    /// before, and judged again after, so each transition is recorded at its moment.
    pub(crate) fn changing_journal<R>(
        &mut self,
        vpg: usize,
        at: SimTime,
        change: impl FnOnce(&mut Self) -> R,
    ) -> R {
        self.settle_history(vpg, at);
        let result = change(self);
        self.judge_history(vpg, at);
        result
    }

    /// Judges a VPG's journal at `at`, just after a change to it (or at its maturity): the alerts
    /// it calls for turn on, those it no longer calls for turn off.
    pub(super) fn judge_history(&mut self, vpg: usize, at: SimTime) {
        let now = level(&self.vpgs[vpg].journal, at);
        self.set_low(vpg, now.low, at);
        self.set_full(vpg, now.full, at);
        let watch = &mut self.vpgs[vpg].watch;
        watch.settled_at = Some(watch.settled_at.map_or(at, |s| s.max(at)));
    }

    /// The low-history alert becomes `rule` at `at`, with the events of what turned off and on.
    fn set_low(&mut self, vpg: usize, rule: Option<usize>, at: SimTime) {
        let was = self.vpgs[vpg].watch.low;
        if was.map(|on| on.rule) == rule {
            return;
        }
        if let Some(on) = was {
            let alert = self.alert(vpg, &HISTORY_RULES[on.rule], on.since, Some(at));
            self.record_alert_event(&alert, event_type::ALERT_TURNED_OFF, at);
        }
        self.vpgs[vpg].watch.low = rule.map(|rule| AlertOn { rule, since: at });
        if let Some(rule) = rule {
            let alert = self.alert(vpg, &HISTORY_RULES[rule], at, None);
            self.record_alert_event(&alert, event_type::ALERT_TURNED_ON, at);
        }
    }

    /// The journal-full alert turns on or off at `at`, with its event.
    fn set_full(&mut self, vpg: usize, full: bool, at: SimTime) {
        let was = self.vpgs[vpg].watch.full;
        match (was, full) {
            (None, true) => {
                self.vpgs[vpg].watch.full = Some(at);
                let alert = self.alert(vpg, &JOURNAL_FULL, at, None);
                self.record_alert_event(&alert, event_type::ALERT_TURNED_ON, at);
            }
            (Some(since), false) => {
                self.vpgs[vpg].watch.full = None;
                let alert = self.alert(vpg, &JOURNAL_FULL, since, Some(at));
                self.record_alert_event(&alert, event_type::ALERT_TURNED_OFF, at);
            }
            _ => {}
        }
    }

    /// A burst of writes at the VPG now (`POST /_sim/vpgs/{id}/journal-burst`), as much as
    /// `minutes` of its usual writing. Only a VPG that writes checkpoints journals its writes.
    pub fn journal_burst(&mut self, vpg: usize, minutes: f64, now: SimTime) -> Result<(), Refusal> {
        let v = &self.vpgs[vpg];
        if !v.journal.is_writing() {
            return Err(Refusal::Conflict(decisions::refusal_burst_not_writing(
                &v.name,
                VPG_STATUS.name(v.status),
                VPG_SUBSTATUS.name(v.sub_status),
            )));
        }
        let ms = (minutes * 60_000.0).round() as i64;
        self.changing_journal(vpg, now, |world| world.vpgs[vpg].journal.burst(now, ms));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_moment_finds_the_edge_to_the_millisecond() {
        let edge = SimTime::from_millis(12_345);
        let fell = |t: SimTime| t >= edge;
        assert_eq!(
            first_moment(SimTime::from_millis(0), SimTime::from_millis(99_999), fell),
            Some(edge)
        );
        assert_eq!(
            first_moment(SimTime::from_millis(0), SimTime::from_millis(10_000), fell),
            None
        );
    }
}
