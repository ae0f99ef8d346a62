//! The guard: pin a tagged checkpoint in every protecting VPG of one VM before it is changed.
//!
//! For each protecting VPG, in parallel across VPGs:
//! 1. take the VPG's place in this process's queue (a VPG's lock is held from the insert until its task
//!    is terminal, so two guards of VMs that share a VPG never insert at once), and on a journal
//!    that a team server's replicas share, the VPG's lease there too (`hold`); no insert is sent
//!    once a lease may have run out;
//! 2. if another insert is running at the VPG (another client's, or one this process left running
//!    when an earlier guard's deadline came), wait for it first;
//! 3. `POST /v1/vpgs/{id}/checkpoints` and read the task until it is terminal; refuse unless it
//!    Completed. If it failed because another client's insert was running (the back-to-back rule), wait
//!    for that insert and try again, a bounded number of times, and say so;
//! 4. if the insert's outcome is unknown (no answer came, or one that could not be read, or a 5xx), look
//!    for the tag among the VPG's checkpoints and recent insert tasks before deciding to insert again:
//!    never two checkpoints for one guard;
//! 5. release the VPG, then wait until the checkpoint is listed.
//!
//! One deadline bounds the whole guard; when it comes, the task ids still running are returned, never
//! dropped. The verdict is `guarded` only when at least one VPG is protecting and every protecting VPG
//! was tagged.

mod context;
mod hold;
mod insert;
mod note;
mod problem;
mod queue;
mod record;
mod report;
#[cfg(test)]
mod scripted;
mod vpg;
mod walk;

pub(crate) use context::GuardContext;
pub use context::GuardRequest;
pub use note::{Culprit, GuardNote, RunningInsert};
pub use problem::{InRow, Met, VpgProblem};
pub(crate) use queue::{OwnTasks, VpgQueue};
pub use report::{GuardNext, GuardReport, Outcome, Verdict, VpgGuard, verdict};
pub(crate) use walk::guard;
