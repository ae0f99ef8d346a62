//! A VPG's journal: the checkpoints it lists.
//!
//! Automatic checkpoints are never stored. The journal keeps the spans of simulated time in which the
//! VPG wrote checkpoints; the automatic checkpoints are the 5-second slots inside those spans and
//! inside the history window, computed when asked. So a journal costs the same whether it has kept
//! an hour or a month of history, and a world of 10,000 VMs stays cheap. Tagged checkpoints are
//! stored, since each has a name and a moment it becomes listed.
//!
//! A journal also has a hard limit on its size. The simulator measures it, and the data in the
//! journal, in time of the VPG's usual writing ("write time"): a journal that holds 180 minutes of
//! write time holds three hours of the VPG's usual changes. At the usual rate, a journal whose room
//! is at least its configured history is never full. A burst of writes (an agent rewriting a
//! database) adds write time at one moment; when what the history window holds no longer fits the
//! room, the oldest checkpoints, automatic and tagged alike, are promoted early: the journal's
//! [`Cut`] moves past them, and the history it holds falls short of the configured history.

use crate::decisions::{
    CHECKPOINT_INTERVAL_MS, CHECKPOINT_TYPE_AUTOMATIC, CHECKPOINT_TYPE_TAGGED, MAX_BURST_MINUTES,
    MAX_HISTORY_MINUTES, MAX_JOURNAL_ROOM_MINUTES, TAGS_PER_SLOT,
};

/// The largest burst, in milliseconds of writing.
const MAX_BURST_MS: i64 = MAX_BURST_MINUTES as i64 * 60_000;

/// The oldest a journal's slot 0 may be, from now: 10,000 years. A run starts it 30 days before
/// its epoch; checkpoint identifiers (slot × VPGs × 1,000) stay far below `u64::MAX` within it.
const MAX_JOURNAL_AGE_MS: i64 = 10_000 * 365 * 24 * 60 * 60 * 1000;
use super::clock::SimTime;
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

/// Data written beyond the VPG's usual rate, at one moment: as much as `ms` of its usual writing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Burst {
    /// When it was written (just after the checkpoint of that moment, if there is one).
    pub at: SimTime,
    /// Its size, in milliseconds of the VPG's usual writing.
    pub ms: i64,
}

/// Where the hard limit cuts the journal: only checkpoints at or after `at` can still be listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    /// The earliest moment whose checkpoint the journal still holds.
    pub at: SimTime,
    /// Whether the journal is full at the cut (its content equals its room). A cut that fell just
    /// past a burst that no longer fits leaves the journal holding less than its room.
    pub full: bool,
}

/// The history a mature journal holds (see [`Journal::judged`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held {
    /// The history it holds, in milliseconds: the configured history, or less once the hard limit
    /// cut into it.
    pub ms: i64,
    /// Whether the journal is at its hard limit.
    pub full: bool,
}

/// What a journal lists at one moment, in brief (the event of a resync names it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contents {
    /// How many checkpoints are listed, automatic and tagged.
    pub count: u64,
    /// The oldest listed.
    pub earliest: Option<Checkpoint>,
    /// The tagged checkpoints listed, oldest first.
    pub tags: Vec<Checkpoint>,
}

/// A span of simulated time in which the VPG wrote checkpoints: `[from, to)`, open while `to` is
/// `None`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Span {
    from: SimTime,
    to: Option<SimTime>,
}

/// How checkpoint identifiers are numbered: `base + ((slot × vpg_count) + vpg) × 1000 + n`, where
/// `slot` is the 5-second slot since `origin` and `n` is 0 for the automatic checkpoint of the slot
/// and 1.. for the tagged ones in it. Identifiers are unique in the world and grow with time within
/// a VPG. The world file's VPGs are numbered from base 0 among themselves; VPGs created through the
/// API from [`CREATED_BASE`] among up to [`CREATED_VPGS`] of them, so that no VPG joining the world
/// changes an identifier already answered.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Numbering {
    /// Slot 0 starts here (30 days before the epoch).
    pub origin: SimTime,
    /// How many VPGs the world has.
    pub vpg_count: u64,
    /// This VPG's position among them.
    pub vpg: u64,
    /// Added to every identifier: 0 for the world file's VPGs, [`CREATED_BASE`] for those created
    /// through the API.
    #[serde(default)]
    pub base: u64,
}

/// Where the identifiers of VPGs created through the API begin: far above any identifier of the
/// world file's VPGs (100,000 VPGs over a year of 5-second slots stay below 2^53 / 2).
pub const CREATED_BASE: u64 = 1 << 52;

/// How many VPGs one world may create through the API.
pub const CREATED_VPGS: u64 = 4096;

impl Numbering {
    fn id(&self, slot: i64, n: u64) -> u64 {
        let slot = u64::try_from(slot).unwrap_or(0);
        self.base + (slot * self.vpg_count + self.vpg) * (TAGS_PER_SLOT + 1) + n
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
    /// The hard limit: how much write time the journal holds, in milliseconds.
    room_ms: i64,
    spans: Vec<Span>,
    tagged: Vec<Tagged>,
    /// The bursts of writes the history window may still hold, oldest first.
    bursts: Vec<Burst>,
    /// When it last wrote a checkpoint, while it writes none (what its RPO counts from); `None`
    /// while it writes, and for a VPG that never wrote one.
    #[serde(default)]
    last_written: Option<SimTime>,
}

impl Journal {
    /// An empty journal that keeps `history_minutes` of checkpoints and whose hard limit holds
    /// `room_minutes` of the VPG's usual writing.
    pub fn new(numbering: Numbering, history_minutes: u32, room_minutes: u32) -> Self {
        Self {
            numbering,
            history_ms: i64::from(history_minutes) * 60_000,
            room_ms: i64::from(room_minutes) * 60_000,
            spans: Vec::new(),
            tagged: Vec::new(),
            bursts: Vec::new(),
            last_written: None,
        }
    }

    /// How much of the VPG's usual writing the journal's hard limit holds, in minutes.
    pub fn room_minutes(&self) -> i64 {
        self.room_ms / 60_000
    }

    /// How its checkpoints are numbered.
    pub fn numbering(&self) -> Numbering {
        self.numbering
    }

    /// The configured history in minutes.
    pub fn history_minutes(&self) -> i64 {
        self.history_ms / 60_000
    }

    /// Checks a journal read from saved state against what every journal the simulator builds
    /// has: the numbering `expected` (its origin aside), a history of 1 minute to 30 days, and slot 0
    /// at most [`MAX_JOURNAL_AGE_MS`] before `now`. Identifiers and history windows are computed
    /// from these, and outside these bounds the arithmetic would overflow.
    pub fn check(&self, expected: Numbering, now: SimTime) -> Result<(), String> {
        let numbering = &self.numbering;
        let place = |n: &Numbering| (n.vpg, n.vpg_count, n.base);
        if place(numbering) != place(&expected) {
            return Err(format!(
                "is numbered as VPG {} of {} from {}, but it is VPG {} of {} from {}",
                numbering.vpg,
                numbering.vpg_count,
                numbering.base,
                expected.vpg,
                expected.vpg_count,
                expected.base
            ));
        }
        let minutes = i64::from(MAX_HISTORY_MINUTES);
        if !(60_000..=minutes * 60_000).contains(&self.history_ms) {
            return Err(format!(
                "keeps {} ms of history; a journal keeps 1 minute to 30 days",
                self.history_ms
            ));
        }
        if !(60_000..=i64::from(MAX_JOURNAL_ROOM_MINUTES) * 60_000).contains(&self.room_ms) {
            return Err(format!(
                "has room for {} ms of writes; a journal holds 1 minute to {MAX_JOURNAL_ROOM_MINUTES} \
                 minutes of them",
                self.room_ms
            ));
        }
        if let Some(burst) = self
            .bursts
            .iter()
            .find(|b| !(1..=MAX_BURST_MS).contains(&b.ms))
        {
            return Err(format!(
                "holds a burst of {} ms of writes; a burst is 1 ms to {MAX_BURST_MS} ms",
                burst.ms
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
        self.bursts.clear();
    }

    /// A burst of writes at `at`, as much as `ms` of the VPG's usual writing (at most
    /// [`MAX_BURST_MINUTES`]).
    pub fn burst(&mut self, at: SimTime, ms: i64) {
        let ms = ms.clamp(1, MAX_BURST_MS);
        let position = self.bursts.partition_point(|b| b.at <= at);
        self.bursts.insert(position, Burst { at, ms });
    }

    /// Whether the hard limit can ever cut into the history window: only with a burst in it, or a
    /// room smaller than the configured history. Otherwise the journal holds its whole history.
    pub fn may_fall_short(&self) -> bool {
        !self.bursts.is_empty() || self.room_ms < self.history_ms
    }

    /// Where the hard limit cuts the journal at `now`, when the cut is later than the start of the
    /// history window. Walking back from `now`, the journal holds the VPG's writing (while it
    /// wrote) and each burst, until their sum would pass its room: that is the cut. A burst that
    /// does not fit moves the cut just past it.
    pub fn cut(&self, now: SimTime) -> Option<Cut> {
        if !self.may_fall_short() {
            return None;
        }
        let window_start = now.plus_millis(-self.history_ms);
        let mut budget = self.room_ms;
        let mut upper = now;
        for burst in self.bursts.iter().rev() {
            if burst.at > now {
                continue;
            }
            if burst.at < window_start {
                break;
            }
            match self.back_by_writing(upper, budget, burst.at) {
                Ok(at) => return Some(Cut { at, full: true }),
                Err(left) => budget = left - burst.ms,
            }
            if budget < 0 {
                return Some(Cut {
                    at: burst.at.plus_millis(1),
                    full: false,
                });
            }
            upper = burst.at;
        }
        self.back_by_writing(upper, budget, window_start)
            .ok()
            .map(|at| Cut { at, full: true })
    }

    /// Walks back from `upper` towards `stop` through the time the VPG wrote, until `budget`
    /// milliseconds of writing are behind: the moment reached, if it is after `stop`; else what is
    /// left of the budget once `[stop, upper]` is behind.
    fn back_by_writing(&self, upper: SimTime, budget: i64, stop: SimTime) -> Result<SimTime, i64> {
        let mut left = budget;
        for span in self.spans.iter().rev() {
            let end = span.to.map_or(upper, |to| to.min(upper));
            let start = span.from.max(stop);
            if end <= start {
                continue;
            }
            let length = end.millis_since(start);
            if length > left {
                return Ok(end.plus_millis(-left));
            }
            left -= length;
        }
        Err(left)
    }

    /// The history the journal holds at `now`, once it is judged: while it writes and has written
    /// without a break for at least its configured history. A younger journal is still filling
    /// (after its initial sync or a resync), and its short history is no shortfall.
    pub fn judged(&self, now: SimTime) -> Option<Held> {
        let since = self.writing_since()?;
        if now.millis_since(since) < self.history_ms {
            return None;
        }
        Some(match self.cut(now) {
            Some(cut) => Held {
                ms: now.millis_since(cut.at),
                full: cut.full,
            },
            None => Held {
                ms: self.history_ms,
                full: false,
            },
        })
    }

    /// The write time of the bursts the history window holds at `now`, in milliseconds.
    pub fn burst_ms(&self, now: SimTime) -> i64 {
        let Some((low, high)) = self.window(now, None, None) else {
            return 0;
        };
        self.bursts
            .iter()
            .filter(|b| b.at >= low && b.at <= high)
            .map(|b| b.ms)
            .sum()
    }

    /// How many checkpoints are listed at `now`, the earliest, and the tagged ones.
    pub fn contents(&self, now: SimTime) -> Contents {
        let tags: Vec<Checkpoint> = match self.window(now, None, None) {
            Some((low, high)) => self
                .tagged
                .iter()
                .filter(|t| t.listed_at <= now && t.at >= low && t.at <= high)
                .map(tagged_checkpoint)
                .collect(),
            None => Vec::new(),
        };
        let automatic: u64 = match self.window(now, None, None) {
            Some((low, high)) => self
                .slot_ranges(low, high)
                .map(|(first, last)| u64::try_from(last - first + 1).unwrap_or(0))
                .sum(),
            None => 0,
        };
        Contents {
            count: automatic + tags.len() as u64,
            earliest: self.earliest(now),
            tags,
        }
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
        let numbered = id.checked_sub(self.numbering.base)?;
        let (sequence, slot_and_vpg) = (numbered % per_slot, numbered / per_slot);
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

    /// The earliest and latest moments a listed checkpoint can have at `now`: the history window,
    /// cut short by the hard limit.
    pub fn window_at(&self, now: SimTime) -> (SimTime, SimTime) {
        (self.window_start(now), now)
    }

    /// The earliest moment a listed checkpoint can have at `now`.
    fn window_start(&self, now: SimTime) -> SimTime {
        let start = now.plus_millis(-self.history_ms);
        self.cut(now).map_or(start, |cut| cut.at.max(start))
    }

    /// `ConfiguredHistoryInMinutes` set at `at`: a shorter history drops the checkpoints older than
    /// it at once; a longer one starts from what the old window held and fills as the journal
    /// writes (what had aged out stays gone).
    pub fn set_history_minutes(&mut self, minutes: u32, at: SimTime) {
        let low = self.window_start(at);
        self.tagged.retain(|t| t.at >= low);
        self.spans.retain(|s| s.to.is_none_or(|end| end > low));
        for span in &mut self.spans {
            span.from = span.from.max(low);
        }
        self.bursts.retain(|b| b.at >= low);
        self.history_ms = i64::from(minutes) * 60_000;
    }

    /// Forgets what has left the history window, so a long run does not grow without bound.
    pub fn trim(&mut self, now: SimTime) {
        let low = now.plus_millis(-self.history_ms);
        self.tagged.retain(|t| t.at >= low);
        self.spans.retain(|s| s.to.is_none_or(|end| end > low));
        self.bursts.retain(|b| b.at >= low);
    }

    fn window(
        &self,
        now: SimTime,
        from: Option<SimTime>,
        to: Option<SimTime>,
    ) -> Option<(SimTime, SimTime)> {
        let low = self
            .window_start(now)
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
        journal_with_room(history_minutes, history_minutes * 3 / 2)
    }

    fn journal_with_room(history_minutes: u32, room_minutes: u32) -> Journal {
        Journal::new(
            Numbering {
                origin: ORIGIN,
                vpg_count: 3,
                vpg: 1,
                base: 0,
            },
            history_minutes,
            room_minutes,
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

    const MINUTE: i64 = 60;

    #[test]
    fn a_burst_that_fits_the_headroom_changes_nothing() {
        // 60 minutes of history in room for 90: a burst of 30 minutes of writes still fits.
        let mut j = written_from_zero(60);
        let now = at(2 * 60 * MINUTE);
        j.burst(now, 30 * 60_000);
        assert_eq!(j.cut(now), None);
        assert_eq!(j.earliest(now).unwrap().at, at(60 * MINUTE));
        assert_eq!(
            j.judged(now),
            Some(Held {
                ms: 60 * 60_000,
                full: false
            })
        );
    }

    #[test]
    fn a_burst_past_the_headroom_promotes_the_oldest_checkpoints_tags_included() {
        let mut j = written_from_zero(60);
        let now = at(2 * 60 * MINUTE);
        j.add_tagged(at(70 * MINUTE), "early", at(70 * MINUTE))
            .unwrap();
        let late = j
            .add_tagged(at(100 * MINUTE), "late", at(100 * MINUTE))
            .unwrap();
        // 60 minutes of writing and 45 of burst in room for 90: the oldest 15 minutes go.
        j.burst(now, 45 * 60_000);
        let cut = j.cut(now).unwrap();
        assert_eq!(
            cut,
            Cut {
                at: at(75 * MINUTE),
                full: true
            }
        );
        assert_eq!(j.earliest(now).unwrap().at, at(75 * MINUTE));
        let tags: Vec<_> = j
            .list(now, None, None)
            .into_iter()
            .filter_map(|c| c.tag)
            .collect();
        assert_eq!(tags, ["late"]);
        assert!(j.find(late, now).is_some());
        assert_eq!(
            j.judged(now),
            Some(Held {
                ms: 45 * 60_000,
                full: true
            })
        );
        assert_eq!(j.burst_ms(now), 45 * 60_000);
    }

    #[test]
    fn the_history_a_burst_cost_comes_back_once_the_burst_is_promoted() {
        let mut j = written_from_zero(60);
        let burst_at = at(2 * 60 * MINUTE);
        j.burst(burst_at, 45 * 60_000);
        // The journal stays full, holding 45 minutes, until the cut reaches the burst ...
        let later = at(2 * 60 * MINUTE + 30 * MINUTE);
        assert_eq!(
            j.judged(later).unwrap(),
            Held {
                ms: 45 * 60_000,
                full: true
            }
        );
        let reached = at(2 * 60 * MINUTE + 45 * MINUTE);
        assert_eq!(j.judged(reached).unwrap().ms, 45 * 60_000);
        // ... then the burst itself goes, and what came after it grows back to the full hour.
        let after = at(2 * 60 * MINUTE + 50 * MINUTE);
        let held = j.judged(after).unwrap();
        assert!(!held.full);
        assert_eq!(held.ms, 50 * 60_000 - 1);
        assert_eq!(j.judged(at(4 * 60 * MINUTE)).unwrap().ms, 60 * 60_000);
        j.trim(at(4 * 60 * MINUTE));
        assert!(
            !j.may_fall_short(),
            "the burst left the window and was forgotten"
        );
    }

    #[test]
    fn a_burst_bigger_than_the_whole_room_leaves_only_what_came_after_it() {
        let mut j = written_from_zero(60);
        let burst_at = at(2 * 60 * MINUTE);
        j.burst(burst_at, 200 * 60_000);
        assert!(j.list(burst_at, None, None).is_empty());
        let now = burst_at.plus_millis(12_000);
        let times: Vec<_> = j.list(now, None, None).iter().map(|c| c.at).collect();
        assert_eq!(
            times,
            [burst_at.plus_millis(5_000), burst_at.plus_millis(10_000)]
        );
    }

    #[test]
    fn a_room_smaller_than_the_history_keeps_the_journal_short_of_it() {
        let mut j = journal_with_room(60, 40);
        j.start_writing(at(0));
        let now = at(3 * 60 * MINUTE);
        assert_eq!(j.earliest(now).unwrap().at, at(140 * MINUTE));
        assert_eq!(
            j.judged(now),
            Some(Held {
                ms: 40 * 60_000,
                full: true
            })
        );
        assert_eq!(j.window_at(now).0, at(140 * MINUTE));
    }

    #[test]
    fn a_young_journal_is_not_judged_and_a_wipe_forgets_its_bursts() {
        let mut j = written_from_zero(60);
        j.burst(at(10 * MINUTE), 100 * 60_000);
        assert_eq!(
            j.judged(at(30 * MINUTE)),
            None,
            "written for 30 of 60 minutes"
        );
        j.wipe(at(40 * MINUTE));
        assert!(!j.may_fall_short());
        j.start_writing(at(50 * MINUTE));
        assert_eq!(j.judged(at(100 * MINUTE)), None);
        assert_eq!(j.judged(at(110 * MINUTE)).unwrap().ms, 60 * 60_000);
    }

    #[test]
    fn contents_count_every_listed_checkpoint_and_name_the_tags() {
        let mut j = written_from_zero(1);
        j.add_tagged(at(62), "t", at(63)).unwrap();
        let contents = j.contents(at(100));
        assert_eq!(contents.count, j.list(at(100), None, None).len() as u64);
        assert_eq!(contents.earliest, j.earliest(at(100)));
        assert_eq!(contents.tags.len(), 1);
        assert_eq!(contents.tags[0].tag.as_deref(), Some("t"));
    }
}
