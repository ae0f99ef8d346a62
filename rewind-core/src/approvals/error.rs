//! Why a held call could not be held, decided or found.

use super::call::HeldState;

/// Why the held-call store refused.
#[derive(Debug, thiserror::Error)]
pub enum ApprovalError {
    /// No held call has this id.
    #[error(
        "no held call has the id {0}; `rewind approvals list` (or GET /v1/approvals) lists them"
    )]
    NotFound(String),
    /// The call was decided, used or expired already.
    #[error("held call {id} is {state}, no longer held: nothing was changed")]
    NotHeld {
        /// The call.
        id: String,
        /// What it is now.
        state: HeldState,
    },
    /// Under four eyes, the requester may not approve their own call.
    #[error(
        "held call {id} was asked for by {requester}, and a call of {tool} needs another person's approval (four eyes): ask someone else with the approve role"
    )]
    FourEyes {
        /// The call.
        id: String,
        /// Who asked for it.
        requester: String,
        /// Its tool.
        tool: String,
    },
    /// The requester has as many calls waiting as they may.
    #[error(
        "{who} already has {max} held calls waiting for a person ([approvals] max_held_per_person): nothing more is held until one of them is approved, denied or expires"
    )]
    TooMany {
        /// The requester.
        who: String,
        /// The limit.
        max: usize,
    },
    /// A comment too long to keep.
    #[error("the comment has {0} characters; keep it under 2,000")]
    LongComment(usize),
    /// The store could not be read or written.
    #[error("the held-call store {path}: {why}")]
    Store {
        /// The file.
        path: String,
        /// What went wrong.
        why: String,
    },
}
