//! The way back: how long a tagged checkpoint stays recoverable.
//!
//! A tag lives only inside its VPG's journal history: Zerto cannot pin a checkpoint, so a tag ages
//! out like its neighbours once it is older than the history the journal holds. While the VPG meets
//! its history SLA that is the configured history (`ConfiguredHistoryInMinutes`); when the journal
//! reached its size limit and dropped its oldest checkpoints early (status HistoryNotMeetingSLA or
//! NotMeetingSLA, alert VPG0003/VPG0004/VRA0039), it is what the journal holds now
//! (`ActualHistoryInMinutes`), an estimate, since a journal that keeps filling keeps shrinking. A
//! young or just-resynced VPG holds less than its configured history too, but it meets its SLA and
//! grows; that is no warning.

mod state;

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

pub use state::{JournaledTag, TagState, Wipe};

/// VPG status NotMeetingSLA: neither the RPO nor the history is met.
const NOT_MEETING_SLA: i64 = 2;
/// VPG status HistoryNotMeetingSLA: the RPO is met, the history is not.
const HISTORY_NOT_MEETING_SLA: i64 = 4;

/// The alerts that say a VPG's journal holds, or soon will hold, less history than configured:
/// low journal history (warning below 85 % of it, error below 75 %) and a journal at its hard limit.
pub const JOURNAL_ALERTS: [&str; 3] = ["VPG0003", "VPG0004", "VRA0039"];

/// How much history one VPG's journal keeps, read from its ZVM ([`crate::ZvmClient::vpg_history`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VpgHistory {
    /// The VPG's status.
    pub status: Option<i64>,
    /// `ConfiguredHistoryInMinutes`.
    pub configured_minutes: Option<i64>,
    /// `ActualHistoryInMinutes`.
    pub actual_minutes: Option<i64>,
    /// The time of the oldest checkpoint the journal holds.
    pub earliest: Option<DateTime<Utc>>,
    /// The journal alerts on for it (`VPG0004`, ...).
    pub alerts: Vec<String>,
}

impl VpgHistory {
    /// The ZVM's time when this was read: its journal's earliest checkpoint plus the history it
    /// holds. Times the ZVM gives are compared with this rather than with this machine's clock.
    pub fn zvm_now(&self) -> Option<DateTime<Utc>> {
        Some(self.earliest? + Duration::minutes(self.actual_minutes?))
    }

    /// Why the journal holds less than its configured history, when it does and is not merely young.
    pub fn short_because(&self) -> Option<String> {
        let status = match self.status {
            Some(HISTORY_NOT_MEETING_SLA) => Some("its status is HistoryNotMeetingSLA"),
            Some(NOT_MEETING_SLA) => Some("its status is NotMeetingSLA"),
            _ => None,
        };
        let alerts =
            (!self.alerts.is_empty()).then(|| format!("alert {} is on", self.alerts.join(", ")));
        match (status, alerts) {
            (Some(s), Some(a)) => Some(format!("{s} and {a}")),
            (Some(s), None) => Some(s.to_string()),
            (None, Some(a)) => Some(a),
            (None, None) => None,
        }
    }
}

/// A tag's checkpoint kept in a retention set (Extended Journal Copy), past its VPG's journal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KeptSet {
    /// The retention set.
    pub retention_set_id: String,
    /// Its repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository_id: Option<String>,
    /// Its repository's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository_name: Option<String>,
    /// The site of its repository, which an FLR of it names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository_site_id: Option<String>,
    /// The moment it holds: the tag's checkpoint's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point_in_time: Option<DateTime<Utc>>,
    /// When Zerto deletes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<DateTime<Utc>>,
}

impl KeptSet {
    /// Whether it is still kept at `now`.
    pub fn is_kept_at(&self, now: DateTime<Utc>) -> bool {
        self.expires.is_none_or(|e| e > now)
    }
}

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

/// `3 h 12 min from now`, `12 min ago`.
pub fn from_now(d: Duration) -> String {
    if d >= Duration::zero() {
        format!("{} from now", span(d))
    } else {
        format!("{} ago", span(-d))
    }
}

/// A span of time in the largest two units that say it: `2 d 4 h`, `3 h 12 min`, `45 min`, `20 s`.
pub fn span(d: Duration) -> String {
    let s = d.num_seconds().max(0);
    let (days, hours, minutes) = (s / 86_400, s / 3600 % 24, s / 60 % 60);
    match (days, hours, minutes) {
        (0, 0, 0) => format!("{s} s"),
        (0, 0, m) => format!("{m} min"),
        (0, h, 0) => format!("{h} h"),
        (0, h, m) => format!("{h} h {m} min"),
        (d, 0, _) => format!("{d} d"),
        (d, h, _) => format!("{d} d {h} h"),
    }
}

/// Reads a span as people write it: `90m`, `2h`, `1d`, `1h30m`, `45s`, or a bare number of
/// minutes.
pub fn parse_span(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    if let Ok(minutes) = t.parse::<i64>() {
        return Ok(Duration::minutes(minutes.max(0)));
    }
    let mut total = Duration::zero();
    let mut number = String::new();
    for c in t.chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let n: i64 = number
            .parse()
            .map_err(|_| format!("{t:?} is not a span; write it like 30m, 2h, 1d or 1h30m"))?;
        number.clear();
        total += match c {
            's' => Duration::seconds(n),
            'm' => Duration::minutes(n),
            'h' => Duration::hours(n),
            'd' => Duration::days(n),
            'w' => Duration::weeks(n),
            _ => {
                return Err(format!(
                    "{t:?}: {c:?} is not a unit; use s, m, h, d or w (like 30m, 2h, 1d)"
                ));
            }
        };
    }
    if !number.is_empty() || t.is_empty() {
        return Err(format!(
            "{t:?} is not a span; write it like 30m, 2h, 1d or 1h30m"
        ));
    }
    Ok(total)
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

    #[test]
    fn spans_read_as_people_write_them() {
        assert_eq!(parse_span("2h"), Ok(Duration::hours(2)));
        assert_eq!(parse_span("1h30m"), Ok(Duration::minutes(90)));
        assert_eq!(parse_span("1d"), Ok(Duration::days(1)));
        assert_eq!(parse_span("45"), Ok(Duration::minutes(45)));
        assert!(parse_span("2x").unwrap_err().contains("not a unit"));
        assert!(parse_span("h").unwrap_err().contains("not a span"));
        assert!(parse_span("").is_err());
    }

    #[test]
    fn spans_are_said_in_their_two_largest_units() {
        assert_eq!(span(Duration::seconds(20)), "20 s");
        assert_eq!(span(Duration::minutes(45)), "45 min");
        assert_eq!(span(Duration::minutes(192)), "3 h 12 min");
        assert_eq!(span(Duration::hours(52)), "2 d 4 h");
    }
}
