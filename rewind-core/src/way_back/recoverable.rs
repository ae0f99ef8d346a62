//! [`WayBack`]: how long one tag stays recoverable, said at guard and kept in the journal.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use super::history::VpgHistory;
use super::span::from_now;

/// How long one tag stays recoverable, said at guard and kept in the journal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WayBack {
    /// The tag's time (the ZVM's clock).
    pub tagged_at: DateTime<Utc>,
    /// Until when the tag can be recovered from: its time plus the history its journal keeps.
    pub recoverable_until: DateTime<Utc>,
    /// Whether that is an estimate: the journal holds less than its configured history (see
    /// `estimate_because`), and a journal that keeps filling keeps shrinking.
    pub estimate: bool,
    /// The VPG's configured history, in minutes.
    pub configured_history_minutes: i64,
    /// What the journal held when the tag was written, in minutes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual_history_minutes: Option<i64>,
    /// Why it is an estimate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimate_because: Option<String>,
}

impl WayBack {
    /// The way back of a tag written at `tag_time` into a journal with `history`; `None` when the ZVM
    /// did not say how much history the VPG keeps.
    pub fn of(tag_time: DateTime<Utc>, history: &VpgHistory) -> Option<WayBack> {
        let configured = history.configured_minutes.filter(|m| *m > 0)?;
        let because = history.short_because();
        let minutes = match (&because, history.actual_minutes) {
            (Some(_), Some(actual)) => actual.clamp(0, configured),
            _ => configured,
        };
        Some(WayBack {
            tagged_at: tag_time,
            recoverable_until: tag_time + Duration::minutes(minutes),
            estimate: because.is_some(),
            configured_history_minutes: configured,
            actual_history_minutes: history.actual_minutes,
            estimate_because: because,
        })
    }

    /// How long it has left at `now` (negative once it passed).
    pub fn left(&self, now: DateTime<Utc>) -> Duration {
        self.recoverable_until - now
    }

    /// How long it lasts from the tag's time.
    pub fn lasts(&self) -> Duration {
        self.recoverable_until - self.tagged_at
    }

    /// [`WayBack::describe`] as at the guard: from the tag's time, on the ZVM's clock.
    pub fn describe_at_guard(&self) -> String {
        self.describe(self.tagged_at)
    }

    /// `until 2026-12-05 10:42 UTC (3 h 12 min from now)`, with `about` before an estimate.
    pub fn describe(&self, now: DateTime<Utc>) -> String {
        let about = if self.estimate { "about " } else { "" };
        format!(
            "until {about}{} ({})",
            self.recoverable_until.format("%Y-%m-%d %H:%M UTC"),
            from_now(self.left(now))
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 5, 10, 0, 0).unwrap()
    }

    fn history(status: i64, configured: i64, actual: i64, alerts: &[&str]) -> VpgHistory {
        VpgHistory {
            status: Some(status),
            configured_minutes: Some(configured),
            actual_minutes: Some(actual),
            earliest: None,
            alerts: alerts.iter().map(|a| a.to_string()).collect(),
        }
    }

    #[test]
    fn a_vpg_meeting_its_sla_keeps_a_tag_for_its_configured_history() {
        let w = WayBack::of(at(), &history(1, 60, 60, &[])).unwrap();
        assert_eq!(w.recoverable_until, at() + Duration::minutes(60));
        assert!(!w.estimate);
        assert_eq!(w.estimate_because, None);
    }

    #[test]
    fn a_young_vpg_meeting_its_sla_is_not_a_warning() {
        let w = WayBack::of(at(), &history(1, 120, 7, &[])).unwrap();
        assert_eq!(w.recoverable_until, at() + Duration::minutes(120));
        assert!(!w.estimate);
    }

    #[test]
    fn history_not_meeting_sla_estimates_from_the_actual_history() {
        let w = WayBack::of(at(), &history(4, 240, 35, &[])).unwrap();
        assert_eq!(w.recoverable_until, at() + Duration::minutes(35));
        assert!(w.estimate);
        assert_eq!(
            w.estimate_because.as_deref(),
            Some("its status is HistoryNotMeetingSLA")
        );
    }

    #[test]
    fn a_journal_alert_makes_an_estimate_even_while_the_status_is_met() {
        let w = WayBack::of(at(), &history(1, 240, 200, &["VPG0003"])).unwrap();
        assert_eq!(w.recoverable_until, at() + Duration::minutes(200));
        assert_eq!(w.estimate_because.as_deref(), Some("alert VPG0003 is on"));
    }

    #[test]
    fn an_estimate_never_exceeds_the_configured_history() {
        let w = WayBack::of(at(), &history(2, 60, 90, &[])).unwrap();
        assert_eq!(w.recoverable_until, at() + Duration::minutes(60));
    }

    #[test]
    fn no_configured_history_means_no_way_back_is_claimed() {
        let mut h = history(1, 60, 60, &[]);
        h.configured_minutes = None;
        assert_eq!(WayBack::of(at(), &h), None);
    }

    #[test]
    fn the_description_says_how_long_is_left_and_marks_an_estimate() {
        let w = WayBack::of(at(), &history(4, 240, 75, &[])).unwrap();
        assert_eq!(
            w.describe(at()),
            "until about 2026-12-05 11:15 UTC (1 h 15 min from now)"
        );
        assert_eq!(
            w.describe(at() + Duration::minutes(90)),
            "until about 2026-12-05 11:15 UTC (15 min ago)"
        );
    }
}
