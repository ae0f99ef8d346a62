//! A VPG's journal: the checkpoints it lists.
//!
//! Automatic checkpoints are never stored. The journal keeps the spans of simulated time in which the
//! VPG wrote checkpoints; the automatic checkpoints are the 5-second slots inside those spans and
//! inside the history window, computed when asked. So a journal costs the same whether it has kept
//! an hour or a month of history, and a world of 10,000 VMs stays cheap. Tagged checkpoints are
//! stored, since each has a name and a moment it becomes listed.

use crate::decisions::{
    CHECKPOINT_INTERVAL_MS, CHECKPOINT_TYPE_AUTOMATIC, CHECKPOINT_TYPE_TAGGED, MAX_HISTORY_MINUTES,
    TAGS_PER_SLOT,
};

/// The oldest a journal's slot 0 may be, from now: 10,000 years. A run starts it 30 days before
/// its epoch; checkpoint identifiers (slot × VPGs × 1,000) stay far below `u64::MAX` within it.
const MAX_JOURNAL_AGE_MS: i64 = 10_000 * 365 * 24 * 60 * 60 * 1000;
use crate::world::clock::SimTime;
use serde::{Deserialize, Serialize};

/// One listed checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Checkpoint {
    /// `CheckpointIdentifier`, a decimal counter.
    pub id: u64,
    /// `TimeStamp`.
    pub at: SimTime,
    /// `Tag`: the name of a tagged checkpoint, `None` for an automatic one.
    pub tag: Option<String>,
    /// `Type`: 0 automatic, 1 tagged.
    pub kind: u8,
}

/// A tagged checkpoint, listed or about to be.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Tagged {
    id: u64,
    /// The moment the insert was requested: the tag captures the VM as it was then.
    at: SimTime,
    tag: String,
    /// From this moment on it is listed.
    listed_at: SimTime,
}

/// A span of simulated time in which the VPG wrote checkpoints: `[from, to)`, open while `to` is
/// `None`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Span {
    from: SimTime,
    to: Option<SimTime>,
}

/// How checkpoint identifiers are numbered: `((slot × vpg_count) + vpg) × 1000 + n`, where `slot` is
/// the 5-second slot since `origin` and `n` is 0 for the automatic checkpoint of the slot and 1.. for
/// the tagged ones in it. Identifiers are unique in the world and grow with time within a VPG.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Numbering {
    /// Slot 0 starts here (30 days before the epoch).
    pub origin: SimTime,
    /// How many VPGs the world has.
    pub vpg_count: u64,
    /// This VPG's position.
    pub vpg: u64,
}

impl Numbering {
    fn id(&self, slot: i64, n: u64) -> u64 {
        let slot = u64::try_from(slot).unwrap_or(0);
        (slot * self.vpg_count + self.vpg) * (TAGS_PER_SLOT + 1) + n
    }

    fn slot_time(&self, slot: i64) -> SimTime {
        self.origin.plus_millis(slot * CHECKPOINT_INTERVAL_MS)
    }

    /// The slot a moment falls in.
    fn slot_of(&self, at: SimTime) -> i64 {
        at.millis_since(self.origin)
            .div_euclid(CHECKPOINT_INTERVAL_MS)
    }

    /// The first slot whose checkpoint is at or after `at`.
    fn first_slot_from(&self, at: SimTime) -> i64 {
        let since = at.millis_since(self.origin);
        since.div_euclid(CHECKPOINT_INTERVAL_MS)
            + i64::from(since.rem_euclid(CHECKPOINT_INTERVAL_MS) != 0)
    }

    fn automatic(&self, slot: i64) -> Checkpoint {
        Checkpoint {
            id: self.id(slot, 0),
            at: self.slot_time(slot),
            tag: None,
            kind: CHECKPOINT_TYPE_AUTOMATIC,
        }
    }
}

/// The journal of one VPG.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Journal {
    numbering: Numbering,
    /// `ConfiguredHistoryInMinutes`, in milliseconds.
    history_ms: i64,
    spans: Vec<Span>,
    tagged: Vec<Tagged>,
    /// When it last wrote a checkpoint, while it writes none (what its RPO counts from); `None`
    /// while it writes, and for a VPG that never wrote one.
    #[serde(default)]
    last_written: Option<SimTime>,
}

impl Journal {
    /// An empty journal that keeps `history_minutes` of checkpoints.
    pub fn new(numbering: Numbering, history_minutes: u32) -> Self {
        Self {
            numbering,
            history_ms: i64::from(history_minutes) * 60_000,
            spans: Vec::new(),
            tagged: Vec::new(),
            last_written: None,
        }
    }

    /// The configured history in minutes.
    pub fn history_minutes(&self) -> i64 {
        self.history_ms / 60_000
    }

    /// Checks a journal read from saved state against what every journal the simulator builds
    /// has: the numbering of VPG `vpg` of `vpg_count`, a history of 1 minute to 30 days, and slot 0
    /// at most [`MAX_JOURNAL_AGE_MS`] before `now`. Identifiers and history windows are computed
    /// from these, and outside these bounds the arithmetic would overflow.
    pub fn check(&self, vpg: usize, vpg_count: usize, now: SimTime) -> Result<(), String> {
        let numbering = &self.numbering;
        if numbering.vpg != vpg as u64 || numbering.vpg_count != vpg_count as u64 {
            return Err(format!(
                "is numbered as VPG {} of {}, but it is VPG {vpg} of {vpg_count}",
                numbering.vpg, numbering.vpg_count
            ));
        }
        let minutes = i64::from(MAX_HISTORY_MINUTES);
        if !(60_000..=minutes * 60_000).contains(&self.history_ms) {
            return Err(format!(
                "keeps {} ms of history; a journal keeps 1 minute to 30 days",
                self.history_ms
            ));
        }
        if !(0..=MAX_JOURNAL_AGE_MS).contains(&now.millis_since(numbering.origin)) {
            return Err(format!(
                "counts its checkpoints from {}, which is not within 10,000 years before Now",
                numbering.origin.to_wire()
            ));
        }
        Ok(())
    }

    /// Whether the VPG writes checkpoints now.
    pub fn is_writing(&self) -> bool {
        self.spans.last().is_some_and(|s| s.to.is_none())
    }

    /// The VPG starts writing checkpoints at `at` (nothing changes if it already does).
    pub fn start_writing(&mut self, at: SimTime) {
        if !self.is_writing() {
            self.spans.push(Span { from: at, to: None });
            self.last_written = None;
        }
    }

    /// Since when the VPG has been writing checkpoints without a break, if it writes now.
    pub fn writing_since(&self) -> Option<SimTime> {
        self.spans.last().filter(|s| s.to.is_none()).map(|s| s.from)
    }

    /// The VPG stops writing checkpoints at `at`; what it wrote stays listed.
    pub fn stop_writing(&mut self, at: SimTime) {
        if let Some(span) = self.spans.last_mut().filter(|s| s.to.is_none()) {
            span.to = Some(at.max(span.from));
            self.last_written = Some(at);
        }
    }

    /// A resync at `at`: every checkpoint, tagged ones included, is removed and writing stops.
    pub fn wipe(&mut self, at: SimTime) {
        self.stop_writing(at);
        self.spans.clear();
        self.tagged.clear();
    }

    /// A VPG built not writing had last written at `at` (before the simulation began).
    pub fn wrote_until(&mut self, at: SimTime) {
        self.last_written = Some(at);
    }

    /// How long, in milliseconds, the VPG has written checkpoints between the simulation's start
    /// and `now`: what its cumulative counters grow with.
    pub fn written_ms(&self, now: SimTime) -> i64 {
        let start = self
            .numbering
            .origin
            .plus_millis(i64::from(MAX_HISTORY_MINUTES) * 60_000);
        self.spans
            .iter()
            .map(|s| {
                let from = s.from.max(start);
                let to = s.to.unwrap_or(now).min(now);
                to.millis_since(from).max(0)
            })
            .sum()
    }

    /// When the VPG last wrote a checkpoint, while it writes none.
    pub fn last_written(&self) -> Option<SimTime> {
        self.last_written
    }

    /// Whether one unbroken writing span covers `[from, to]`: a checkpoint requested at `from` is
    /// still in the journal at `to`.
    pub fn covers(&self, from: SimTime, to: SimTime) -> bool {
        self.spans
            .iter()
            .any(|s| s.from <= from && s.to.is_none_or(|end| end >= to))
    }

    /// Adds a tagged checkpoint of the moment `at`, listed from `listed_at`. Returns its identifier,
    /// or `None` when its 5-second slot already holds [`TAGS_PER_SLOT`] tags.
    pub fn add_tagged(&mut self, at: SimTime, tag: &str, listed_at: SimTime) -> Option<u64> {
        let slot = self.numbering.slot_of(at);
        let taken = self
            .tagged
            .iter()
            .filter(|t| self.numbering.slot_of(t.at) == slot)
            .count() as u64;
        if taken >= TAGS_PER_SLOT {
            return None;
        }
        let id = self.numbering.id(slot, taken + 1);
        let position = self.tagged.partition_point(|t| (t.at, t.id) <= (at, id));
        self.tagged.insert(
            position,
            Tagged {
                id,
                at,
                tag: tag.to_owned(),
                listed_at,
            },
        );
        Some(id)
    }

    /// The checkpoints listed at `now` whose time is within `[from, to]` (both optional), oldest
    /// first. Only the history window (`now - history` to `now`) is ever listed.
    pub fn list(
        &self,
        now: SimTime,
        from: Option<SimTime>,
        to: Option<SimTime>,
    ) -> Vec<Checkpoint> {
        let Some((low, high)) = self.window(now, from, to) else {
            return Vec::new();
        };
        let mut listed: Vec<Checkpoint> = self
            .slot_ranges(low, high)
            .flat_map(|(first, last)| (first..=last).map(|slot| self.numbering.automatic(slot)))
            .collect();
        listed.extend(
            self.tagged
                .iter()
                .filter(|t| t.listed_at <= now && t.at >= low && t.at <= high)
                .map(tagged_checkpoint),
        );
        listed.sort_by_key(|c| (c.at, c.id));
        listed
    }

    /// The oldest listed checkpoint at `now`.
    pub fn earliest(&self, now: SimTime) -> Option<Checkpoint> {
        self.window_end(now, End::Oldest)
    }

    /// The newest listed checkpoint at `now`.
    pub fn latest(&self, now: SimTime) -> Option<Checkpoint> {
        self.window_end(now, End::Newest)
    }

    /// The listed checkpoint at one end of the window: the automatic and the tagged checkpoint
    /// nearest that end, whichever is nearer.
    fn window_end(&self, now: SimTime, end: End) -> Option<Checkpoint> {
        let (low, high) = self.window(now, None, None)?;
        let mut slots = self.slot_ranges(low, high);
        let slot = match end {
            End::Oldest => slots.next().map(|(first, _)| first),
            End::Newest => slots.last().map(|(_, last)| last),
        };
        let automatic = slot.map(|slot| self.numbering.automatic(slot));
        let listed = |t: &&Tagged| t.listed_at <= now && t.at >= low && t.at <= high;
        let tagged = match end {
            End::Oldest => self.tagged.iter().find(listed),
            End::Newest => self.tagged.iter().rev().find(listed),
        };
        let candidates = [automatic, tagged.map(tagged_checkpoint)]
            .into_iter()
            .flatten();
        match end {
            End::Oldest => candidates.min_by_key(|c| (c.at, c.id)),
            End::Newest => candidates.max_by_key(|c| (c.at, c.id)),
        }
    }

    /// The checkpoint with this identifier, if it is listed at `now`. Identifiers encode their slot,
    /// VPG and per-slot sequence (see [`Numbering`]), so this is a lookup, not a scan of the window.
    pub fn find(&self, id: u64, now: SimTime) -> Option<Checkpoint> {
        let per_slot = TAGS_PER_SLOT + 1;
        let vpg_count = self.numbering.vpg_count.max(1);
        let (sequence, slot_and_vpg) = (id % per_slot, id / per_slot);
        if slot_and_vpg % vpg_count != self.numbering.vpg {
            return None;
        }
        let slot = i64::try_from(slot_and_vpg / vpg_count).ok()?;
        let (low, high) = self.window(now, None, None)?;
        if sequence == 0 {
            self.slot_ranges(low, high)
                .any(|(first, last)| (first..=last).contains(&slot))
                .then(|| self.numbering.automatic(slot))
        } else {
            self.tagged
                .iter()
                .find(|t| t.id == id && t.listed_at <= now && t.at >= low && t.at <= high)
                .map(tagged_checkpoint)
        }
    }

    /// The earliest and latest moments a listed checkpoint can have at `now`: the history window.
    pub fn window_at(&self, now: SimTime) -> (SimTime, SimTime) {
        (now.plus_millis(-self.history_ms), now)
    }

    /// Forgets what has left the history window, so a long run does not grow without bound.
    pub fn trim(&mut self, now: SimTime) {
        let low = now.plus_millis(-self.history_ms);
        self.tagged.retain(|t| t.at >= low);
        self.spans.retain(|s| s.to.is_none_or(|end| end > low));
    }

    fn window(
        &self,
        now: SimTime,
        from: Option<SimTime>,
        to: Option<SimTime>,
    ) -> Option<(SimTime, SimTime)> {
        let low = now
            .plus_millis(-self.history_ms)
            .max(from.unwrap_or(SimTime::from_millis(i64::MIN)));
        let high = now.min(to.unwrap_or(now));
        (low <= high).then_some((low, high))
    }

    /// For each writing span, the first and last slot whose automatic checkpoint lies in the span
    /// (half-open) and in `[low, high]`; empty ranges are skipped.
    fn slot_ranges(&self, low: SimTime, high: SimTime) -> impl Iterator<Item = (i64, i64)> + '_ {
        self.spans.iter().filter_map(move |span| {
            let start = span.from.max(low);
            let end = match span.to {
                Some(to) => to.plus_millis(-1).min(high),
                None => high,
            };
            let first = self.numbering.first_slot_from(start);
            let last = self.numbering.slot_of(end);
            (start <= end && first <= last).then_some((first, last))
        })
    }
}

/// Which end of the history window [`Journal::window_end`] looks at.
#[derive(Debug, Clone, Copy)]
enum End {
    Oldest,
    Newest,
}

fn tagged_checkpoint(tagged: &Tagged) -> Checkpoint {
    Checkpoint {
        id: tagged.id,
        at: tagged.at,
        tag: Some(tagged.tag.clone()),
        kind: CHECKPOINT_TYPE_TAGGED,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ORIGIN: SimTime = SimTime::from_millis(0);

    fn journal(history_minutes: u32) -> Journal {
        Journal::new(
            Numbering {
                origin: ORIGIN,
                vpg_count: 3,
                vpg: 1,
            },
            history_minutes,
        )
    }

    fn at(seconds: i64) -> SimTime {
        SimTime::from_millis(seconds * 1000)
    }

    /// A journal of `history_minutes` that has been written since 0 s.
    fn written_from_zero(history_minutes: u32) -> Journal {
        let mut j = journal(history_minutes);
        j.start_writing(at(0));
        j
    }

    /// The times of listed checkpoints, in order.
    fn times(listed: &[Checkpoint]) -> Vec<SimTime> {
        listed.iter().map(|c| c.at).collect()
    }

    #[test]
    fn automatic_checkpoints_fall_every_five_seconds_of_a_writing_span() {
        let mut j = journal(60);
        j.start_writing(at(3));
        let listed = j.list(at(21), None, None);
        let times: Vec<_> = listed.iter().map(|c| c.at).collect();
        assert_eq!(times, vec![at(5), at(10), at(15), at(20)]);
        assert!(listed.iter().all(|c| c.tag.is_none() && c.kind == 0));
        assert!(listed.windows(2).all(|w| w[0].id < w[1].id));
    }

    #[test]
    fn only_the_history_window_is_listed() {
        let j = written_from_zero(1);
        let listed = j.list(at(600), None, None);
        assert_eq!(listed.first().unwrap().at, at(540));
        assert_eq!(listed.last().unwrap().at, at(600));
        assert_eq!(listed.len(), 13);
        assert_eq!(j.earliest(at(600)).unwrap().at, at(540));
        assert_eq!(j.latest(at(600)).unwrap().at, at(600));
    }

    #[test]
    fn a_tag_is_listed_from_its_listing_time_at_its_request_time() {
        let mut j = written_from_zero(60);
        let id = j.add_tagged(at(7), "before-change", at(9)).unwrap();
        assert!(j.list(at(8), None, None).iter().all(|c| c.tag.is_none()));
        let listed = j.list(at(9), None, None);
        let tag = listed.iter().find(|c| c.id == id).unwrap();
        assert_eq!(tag.at, at(7));
        assert_eq!(tag.tag.as_deref(), Some("before-change"));
        assert_eq!(tag.kind, 1);
        // Ordered between the automatic checkpoints of 5 s and 10 s... of which only 5 s exists yet.
        let position = listed.iter().position(|c| c.id == id).unwrap();
        assert_eq!(listed[position - 1].at, at(5));
        assert_eq!(j.latest(at(9)).unwrap().id, id);
    }

    #[test]
    fn a_wipe_removes_everything_and_writing_resumes_from_a_new_span() {
        let mut j = written_from_zero(60);
        j.add_tagged(at(7), "t", at(7)).unwrap();
        j.wipe(at(20));
        assert!(j.list(at(30), None, None).is_empty());
        assert!(j.earliest(at(30)).is_none());
        assert_eq!(j.last_written(), Some(at(20)), "what the RPO counts from");
        j.start_writing(at(40));
        assert_eq!(j.last_written(), None);
        let listed = j.list(at(50), None, None);
        assert_eq!(times(&listed), vec![at(40), at(45), at(50)]);
    }

    #[test]
    fn date_filters_bound_the_list() {
        let j = written_from_zero(60);
        let listed = j.list(at(100), Some(at(20)), Some(at(30)));
        assert_eq!(times(&listed), vec![at(20), at(25), at(30)]);
    }

    #[test]
    fn covers_needs_one_unbroken_span() {
        let mut j = written_from_zero(60);
        j.stop_writing(at(10));
        j.start_writing(at(20));
        assert!(j.covers(at(1), at(9)));
        assert!(!j.covers(at(5), at(25)));
        assert!(j.covers(at(21), at(1000)));
    }

    #[test]
    fn find_returns_exactly_the_listed_checkpoints() {
        let mut j = written_from_zero(1);
        let tag = j.add_tagged(at(62), "t", at(63)).unwrap();
        let now = at(100);
        for listed in j.list(now, None, None) {
            assert_eq!(j.find(listed.id, now), Some(listed));
        }
        assert!(j.find(tag, at(62)).is_none(), "not listed yet");
        let oldest = j.earliest(now).unwrap();
        assert!(j.find(oldest.id, at(200)).is_none(), "left the window");
        assert!(
            j.find(oldest.id + 1000, now).is_none(),
            "another VPG's identifier"
        );
        assert!(j.find(tag + 1, now).is_none(), "no such tag");
    }

    #[test]
    fn trimming_drops_tags_older_than_the_window() {
        let mut j = written_from_zero(1);
        j.add_tagged(at(7), "old", at(7)).unwrap();
        j.trim(at(120));
        assert!(j.list(at(120), None, None).iter().all(|c| c.tag.is_none()));
    }
}
