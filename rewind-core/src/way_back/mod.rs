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
//!
//! The folder's rooms: `history` (what a VPG's journal holds, its journal alerts), `recoverable`
//! ([`WayBack`]: a tag's recoverable-until, an estimate when the journal is short), `kept`
//! ([`KeptSet`]: a retention set a keep wrote), `state` ([`TagState`]: listed, not listed yet, aged
//! out, wiped, kept, unknown, judged on the ZVM's clock) and `span` (spans as people write them).

mod history;
mod kept;
mod recoverable;
mod span;
mod state;

pub use history::{JOURNAL_ALERTS, VpgHistory};
pub use kept::KeptSet;
pub use recoverable::WayBack;
pub use span::{from_now, parse_span, span};
pub use state::{JournaledTag, TagState, Wipe};
