//! Held calls: what an agent may not do alone waits for a person's approval, bound to the exact
//! call, and runs once.
//!
//! A call that must be approved (an unknown tool through the gateway, a catalog entry
//! `[approvals] require` names, a restore an agent proposes on a team server) is *held*: recorded
//! with who asked, the server and tool, the VM, an HMAC of its arguments and the catalog file's
//! SHA-256, and answered at once. A person approves or denies it; the requester's identical call
//! made again then uses the approval and runs (its use synced to disk first, so a crash leaves
//! "may have run", never a second run), and a later identical call is answered with what came of
//! it. Different arguments, another requester, or a changed catalog make another call, held anew.
//!
//! ```text
//! held ──approve──▶ approved ──its call made again──▶ executed (run here) | allowed (run by a hook's host)
//!   │                   └──unused for expire_after──▶ expired
//!   ├──deny──▶ denied
//!   └──undecided for expire_after──▶ expired
//! ```
//!
//! The store is a file of its own beside the journal (`held-calls.jsonl`, 0600): every transition
//! is a line naming the person who made it, synced before it is acted on. It holds each call's raw
//! arguments, which only approvers are shown; the audit journal, read more widely, never holds them.
//!
//! The folder's rooms: `call` (a held call and its standing), `store` (the file, its lock, its
//! lines folded), `webhook` (announcing a new held call) and `error`.

mod call;
mod error;
mod store;
mod webhook;

pub use call::{CallToHold, Decision, HeldCall, HeldState, Run, Standing};
pub use error::ApprovalError;
pub use store::{HELD_CALLS_FILE, HeldCalls, catalog_digest};
pub use webhook::{Announcement, announce};

#[cfg(test)]
mod tests;
