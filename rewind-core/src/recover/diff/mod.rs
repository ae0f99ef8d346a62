//! What the agent changed: the files under the paths asked for, compared between the change's
//! tagged checkpoint and a later one (the VPG's latest by default). Zerto has no diff of its own;
//! its FLR browse answers each file's size and last write time, so two checkpoints mounted and
//! browsed are a diff.
//!
//! The two checkpoints are mounted in turn, never at once (a ZVM may allow one FLR session per VM),
//! at the VPG's recovery site as a file recovery is, and each session is unmounted before the next
//! is mounted, after an error too. With `content`, the changed files are downloaded: the later
//! versions while the later checkpoint is mounted, then the tag's versions in a third session. A
//! diff sends no write to the VM and none to its VPG.

//!
//! The folder's rooms: `report` (what a diff says), `run` (the diff itself: sessions, the later
//! point), `walk` (the trees walked and compared) and `content` (changed files read and compared).

mod content;
mod report;
mod run;
mod walk;

pub use report::{
    Content, DiffCounts, DiffEntry, DiffKind, DiffReport, DiffRequest, FileState, LaterPoint,
    SessionEnd, WalkStop, time_text,
};
pub(crate) use run::diff;
pub(super) use run::{Sessions, both_stops, later};
pub(super) use walk::{Limits, Tree, walk};
