//! What became of one tag: still listed (and for how long), not listed yet, aged out, wiped by a
//! sync, or kept in a retention set. A tag the journal holds a guard of is never reported as one
//! that never existed.

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

use super::history::VpgHistory;
use super::kept::KeptSet;
use super::recoverable::WayBack;
use super::span::from_now;

/// What became of one tag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum TagState {
    /// The VPG lists it: it can be recovered from.
    Listed {
        /// Until when, from the history the VPG keeps now; absent when the ZVM did not say.
        #[serde(skip_serializing_if = "Option::is_none")]
        recoverable_until: Option<DateTime<Utc>>,
        /// Whether that is an estimate (the journal holds less than its configured history).
        estimate: bool,
    },
    /// A guard journaled it but the VPG does not list it (yet): its insert is recent, or the
    /// listing lags.
    NotListedYet {
        /// How far back the VPG's journal reaches now.
        #[serde(skip_serializing_if = "Option::is_none")]
        journal_reaches_back_to: Option<DateTime<Utc>>,
    },
    /// It left the journal as it aged: it is older than the history the journal holds.
    AgedOut {
        /// About when it left.
        about: DateTime<Utc>,
    },
    /// Every checkpoint of the VPG was removed (a resync, or a journal emptied), this one with
    /// them, before it would have aged out.
    Wiped {
        /// When, as an event says, or about when the journal starts again.
        #[serde(skip_serializing_if = "Option::is_none")]
        at: Option<DateTime<Utc>>,
        /// What removed it, in the ZVM's words where it said.
        by: String,
    },
    /// Its VPG's journal no longer lists it, and a retention set keeps its checkpoint (Extended
    /// Journal Copy): files can be recovered from the set until it expires.
    Kept {
        /// The retention set.
        retention_set_id: String,
        /// When Zerto deletes the set.
        #[serde(skip_serializing_if = "Option::is_none")]
        until: Option<DateTime<Utc>>,
    },
    /// The VM is no longer in the VPG the guard tagged (the VPG was deleted, or the VM taken out
    /// of it): the tag cannot be recovered from for this VM.
    Gone {
        /// What became of the VPG, as the ZVMs' listings say.
        why: String,
    },
    /// The VPG's checkpoints could not be read, so whether it is still there is not known.
    Unknown {
        /// Why.
        why: String,
    },
}

/// A tagged checkpoint a guard journaled: what the VPG is compared against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournaledTag {
    /// The VPG.
    pub vpg_id: String,
    /// Its name when it was tagged.
    pub vpg_name: String,
    /// The checkpoint.
    pub checkpoint_id: String,
    /// Its time, when the guard read it.
    pub checkpoint_time: Option<DateTime<Utc>>,
    /// The tag.
    pub tag: String,
    /// When the guard journaled its verdict.
    pub guarded_at: DateTime<Utc>,
    /// The way back said at guard.
    pub way_back: Option<WayBack>,
    /// The retention set a keep copied its checkpoint into.
    pub kept: Option<KeptSet>,
}

impl JournaledTag {
    /// The time the tag captured.
    pub fn time(&self) -> DateTime<Utc> {
        self.checkpoint_time.unwrap_or(self.guarded_at)
    }
}

/// A removal of every checkpoint of a VPG, read from its events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wipe {
    /// When.
    pub at: DateTime<Utc>,
    /// What the event says.
    pub by: String,
}

impl TagState {
    /// The state of a tag the VPG lists, given what its journal holds now.
    pub fn listed(time: Option<DateTime<Utc>>, history: Option<&VpgHistory>) -> TagState {
        let way_back = time.zip(history).and_then(|(t, h)| WayBack::of(t, h));
        TagState::Listed {
            recoverable_until: way_back.as_ref().map(|w| w.recoverable_until),
            estimate: way_back.is_some_and(|w| w.estimate),
        }
    }

    /// The state of a journaled tag the VPG does not list: wiped when an event says a sync removed
    /// the VPG's checkpoints after it, aged out when the journal no longer reaches back to it,
    /// wiped when it should still be there by the configured history yet the journal starts after
    /// it, not listed yet otherwise.
    pub fn unlisted(
        tag: &JournaledTag,
        history: &VpgHistory,
        wipes: &[Wipe],
        now: DateTime<Utc>,
    ) -> TagState {
        let t = tag.time();
        let now = history.zvm_now().unwrap_or(now);
        if let Some(set) = tag.kept.as_ref().filter(|s| s.is_kept_at(now)) {
            return TagState::Kept {
                retention_set_id: set.retention_set_id.clone(),
                until: set.expires,
            };
        }
        if let Some(w) = wipes.iter().filter(|w| w.at >= t).min_by_key(|w| w.at) {
            return TagState::Wiped {
                at: Some(w.at),
                by: w.by.clone(),
            };
        }
        let Some(earliest) = history.earliest else {
            return TagState::Wiped {
                at: None,
                by: "the VPG lists no checkpoint at all now (a sync removes every checkpoint)"
                    .to_string(),
            };
        };
        if earliest <= t {
            return TagState::NotListedYet {
                journal_reaches_back_to: Some(earliest),
            };
        }
        let configured = history.configured_minutes.map(Duration::minutes);
        let within_configured = configured.is_some_and(|c| t + c > now);
        if within_configured && history.short_because().is_none() {
            return TagState::Wiped {
                at: Some(earliest),
                by: format!(
                    "the journal starts again at {} though it keeps {} min, so its checkpoints were removed rather than aged (a resync removes them all)",
                    earliest.format("%Y-%m-%d %H:%M UTC"),
                    history.configured_minutes.unwrap_or_default()
                ),
            };
        }
        let held = history.actual_minutes.map(Duration::minutes);
        let about = held.map_or(earliest, |h| t + h).clamp(t, now);
        TagState::AgedOut { about }
    }

    /// The state of a journaled tag whose VPG the VM is no longer in: kept when a retention set
    /// still holds its checkpoint (a deleted VPG's sets outlive it), gone otherwise.
    pub fn gone(tag: &JournaledTag, why: &str, now: DateTime<Utc>) -> TagState {
        match tag.kept.as_ref().filter(|s| s.is_kept_at(now)) {
            Some(set) => TagState::Kept {
                retention_set_id: set.retention_set_id.clone(),
                until: set.expires,
            },
            None => TagState::Gone {
                why: why.to_owned(),
            },
        }
    }

    /// The state of a journaled tag whose VPG could not be read.
    pub fn unknown(tag: &JournaledTag, why: &str, now: DateTime<Utc>) -> TagState {
        let said = tag
            .way_back
            .as_ref()
            .map(|w| {
                let verb = if w.recoverable_until > now {
                    "was to last"
                } else {
                    "was to last only"
                };
                format!("; at guard it {verb} {}", w.describe(now))
            })
            .unwrap_or_default();
        TagState::Unknown {
            why: format!("{why}{said}"),
        }
    }

    /// Whether a recovery can use it now: listed in the journal, or kept in a retention set (which
    /// only FLR mounts).
    pub fn is_recoverable(&self) -> bool {
        matches!(self, TagState::Listed { .. } | TagState::Kept { .. })
    }

    /// The state in a few words: `listed, recoverable until about 2026-12-05 11:15 UTC (1 h 15 min
    /// from now)`, `aged out: left the journal at about 2026-12-05 11:00 UTC`.
    pub fn describe(&self, now: DateTime<Utc>) -> String {
        let at = |t: &DateTime<Utc>| t.format("%Y-%m-%d %H:%M UTC").to_string();
        match self {
            TagState::Listed {
                recoverable_until: Some(until),
                estimate,
            } => format!(
                "listed, recoverable until {}{} ({})",
                if *estimate { "about " } else { "" },
                at(until),
                from_now(*until - now)
            ),
            TagState::Listed { .. } => "listed".to_string(),
            TagState::NotListedYet { .. } => "not listed yet".to_string(),
            TagState::AgedOut { about } => {
                format!("aged out: left the journal at about {}", at(about))
            }
            TagState::Wiped { at: Some(t), by } => format!("wiped at {}: {by}", at(t)),
            TagState::Wiped { at: None, by } => format!("wiped: {by}"),
            TagState::Kept {
                retention_set_id,
                until,
            } => match until {
                Some(until) => format!(
                    "kept in retention set {retention_set_id} until {} ({}); the journal no longer holds it",
                    at(until),
                    from_now(*until - now)
                ),
                None => format!(
                    "kept in retention set {retention_set_id}; the journal no longer holds it"
                ),
            },
            TagState::Gone { why } => format!("gone: {why}"),
            TagState::Unknown { why } => format!("unknown: {why}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn t0() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 5, 10, 0, 0).unwrap()
    }

    fn tag() -> JournaledTag {
        JournaledTag {
            vpg_id: "v".into(),
            vpg_name: "web-dr".into(),
            checkpoint_id: "1".into(),
            checkpoint_time: Some(t0()),
            tag: "ai:x | y | vm=web-01 | change=c | t".into(),
            guarded_at: t0(),
            way_back: None,
            kept: None,
        }
    }

    fn history(status: i64, configured: i64, actual: i64, earliest: DateTime<Utc>) -> VpgHistory {
        VpgHistory {
            status: Some(status),
            configured_minutes: Some(configured),
            actual_minutes: Some(actual),
            earliest: Some(earliest),
            alerts: vec![],
        }
    }

    #[test]
    fn a_tag_older_than_the_history_has_aged_out_about_when_the_history_passed_it() {
        let now = t0() + Duration::minutes(61);
        let h = history(1, 60, 60, now - Duration::minutes(60));
        assert_eq!(
            TagState::unlisted(&tag(), &h, &[], now),
            TagState::AgedOut {
                about: t0() + Duration::minutes(60)
            }
        );
    }

    #[test]
    fn a_wipe_event_after_the_tag_names_when_and_what_removed_it() {
        let now = t0() + Duration::minutes(20);
        let h = history(1, 60, 5, now - Duration::minutes(5));
        let wipe = Wipe {
            at: t0() + Duration::minutes(10),
            by: "resync".into(),
        };
        let older = Wipe {
            at: t0() - Duration::minutes(10),
            by: "an earlier resync".into(),
        };
        assert_eq!(
            TagState::unlisted(&tag(), &h, &[older, wipe.clone()], now),
            TagState::Wiped {
                at: Some(wipe.at),
                by: "resync".into()
            }
        );
    }

    #[test]
    fn a_journal_starting_after_a_tag_that_should_still_be_there_was_wiped() {
        let now = t0() + Duration::minutes(20);
        let h = history(1, 60, 5, now - Duration::minutes(5));
        let state = TagState::unlisted(&tag(), &h, &[], now);
        assert!(
            matches!(state, TagState::Wiped { at: Some(at), .. } if at == now - Duration::minutes(5)),
            "{state:?}"
        );
    }

    #[test]
    fn a_short_journal_ages_a_tag_out_early() {
        let now = t0() + Duration::minutes(40);
        let h = history(4, 240, 30, now - Duration::minutes(30));
        assert_eq!(
            TagState::unlisted(&tag(), &h, &[], now),
            TagState::AgedOut {
                about: t0() + Duration::minutes(30)
            }
        );
    }

    #[test]
    fn a_tag_inside_the_journal_but_not_listed_is_not_listed_yet() {
        let now = t0() + Duration::seconds(3);
        let h = history(1, 60, 60, t0() - Duration::minutes(60));
        assert_eq!(
            TagState::unlisted(&tag(), &h, &[], now),
            TagState::NotListedYet {
                journal_reaches_back_to: Some(t0() - Duration::minutes(60))
            }
        );
    }

    #[test]
    fn a_tag_the_journal_lost_but_a_retention_set_keeps_is_kept_until_the_set_expires() {
        let now = t0() + Duration::minutes(61);
        let h = history(1, 60, 60, now - Duration::minutes(60));
        let mut kept = tag();
        kept.kept = Some(crate::way_back::KeptSet {
            retention_set_id: "rs-1".into(),
            repository_id: None,
            repository_name: None,
            repository_site_id: None,
            point_in_time: Some(t0()),
            expires: Some(t0() + Duration::days(30)),
        });
        let state = TagState::unlisted(&kept, &h, &[], now);
        assert_eq!(
            state,
            TagState::Kept {
                retention_set_id: "rs-1".into(),
                until: Some(t0() + Duration::days(30))
            }
        );
        assert!(state.is_recoverable());
        let later = t0() + Duration::days(31);
        let h = history(1, 60, 60, later - Duration::minutes(60));
        let expired = TagState::unlisted(&kept, &h, &[], later);
        assert!(matches!(expired, TagState::AgedOut { .. }), "{expired:?}");
    }

    #[test]
    fn a_listed_tag_says_until_when_from_the_history_kept_now() {
        let h = history(4, 240, 90, t0());
        assert_eq!(
            TagState::listed(Some(t0()), Some(&h)),
            TagState::Listed {
                recoverable_until: Some(t0() + Duration::minutes(90)),
                estimate: true
            }
        );
        assert_eq!(
            TagState::listed(Some(t0()), Some(&h)).describe(t0() + Duration::minutes(30)),
            "listed, recoverable until about 2026-12-05 11:30 UTC (1 h from now)"
        );
    }

    #[test]
    fn states_serialize_with_their_name_in_a_state_field() {
        let v = serde_json::to_value(TagState::AgedOut { about: t0() }).unwrap();
        assert_eq!(v["state"], "aged_out");
        assert_eq!(v["about"], "2026-12-05T10:00:00Z");
    }
}
