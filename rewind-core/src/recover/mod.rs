//! Bounded recover: file-level recovery (FLR), failover test and offsite clone, each from a tagged
//! checkpoint. They leave the production VM running. Failover Live and Move are never rewind tools: no
//! code path of this crate calls them.
//!
//! Every recovery starts the same way:
//! 1. the request is checked before anything is sent;
//! 2. the VM is resolved ([`crate::Rewind::find_protection`]) and its tagged checkpoints read
//!    ([`crate::Rewind::list_tags`]); [`recovery_points`] keeps, per VPG, the newest checkpoint of the
//!    change (its change id, or its exact tag);
//! 3. one VPG is picked: a locally replicated one first (its recovery site is the VM's own site),
//!    otherwise one whose recovery site's ZVM is configured. FLR runs at the recovery site, so when no
//!    VPG with the tag has its recovery site configured, FLR is refused before anything is sent, naming
//!    the site and showing the `[sites.<name>]` block that would make it work. A failover test or a clone
//!    goes to the recovery site's ZVM when it is configured, else to the protected site's (every ZVM of
//!    a VPG's two sites can run them).
//!
//! Then each runs its Zerto tasks and reads each until it is terminal: only `Status.State` says what
//! happened. A task that ends Failed or Stopped is an error of kind `task_failed` carrying its
//! `CompleteReason`. Every recovery that sent anything is appended to the audit journal as one record of
//! kind `recovery`, linked to the guard by the change id; its `agent` is the user or client the ZVM saw.
//!
//! - `flr`: mount, wait, browse, download, unmount (always, also after an error).
//! - `destination`: guest paths, and writing into the destination folder without ever leaving it.
//! - `vpg_task`: failover test start / stop and clone start / abort.
//! - `keep`: an Extended Journal Copy of each VPG's tagged checkpoint, so a file-level recovery can
//!   use the tag once the journal no longer holds it.
//!
//! Waiting: each recovery task is waited for up to [`crate::RecoverSettings::wait`]: the guard
//! deadline, but never less than the configuration's `[recover] wait_floor_secs` (ten minutes by
//! default: a mount or a test takes longer than a tag). A task still running then is not dropped: a
//! failover test or clone reports it `still_running` with its task id; an FLR that cannot finish its
//! mount in that time is an error, and the session is unmounted.

//!
//! The folder's rooms: `context` (what a recovery needs from the facade), `request` (what it is
//! asked), `point` (where it recovers from), `task` (waiting for its Zerto task), `report` (what
//! it says), `record` (its journal line), and the recoveries themselves: `flr` with `session` and
//! `plan`, `diff`, `restore`, `vpg_task`, `keep`; `note` and `destination` beside them.

mod context;
mod destination;
mod diff;
mod flr;
mod keep;
mod note;
mod plan;
mod point;
mod record;
mod report;
mod request;
mod restore;
mod session;
mod task;
mod vpg_task;

pub(crate) use context::RecoverContext;
pub use destination::{GuestPath, MAX_GUEST_PATH, RecoveredFile, parse_paths};
pub use diff::{
    Content, DiffCounts, DiffEntry, DiffKind, DiffReport, DiffRequest, FileState, LaterPoint,
    SessionEnd, WalkStop, time_text,
};
pub use keep::{KeepOutcome, KeepReport, KeptVpg};
pub use note::RecoveryNote;
pub use plan::{PlannedFile, RecoveryPlan};
pub use point::{RecoveryPoint, recovery_points, site_table};
pub use report::{
    CloneReport, CloneVm, FailoverTestReport, RecoverFileReport, RecoveryOperation,
    RecoveryTaskReport, RecoveryVerdict, RestoreTarget, Unmount,
};
pub use request::{CloneAction, FailoverTestAction, MAX_CHANGE, RecoverFileRequest, check_change};
pub use restore::{MAX_RESTORED_NAME, RestoreRequest, RestoreStatus, WaitingRestore};
pub use session::FlrCalls;
pub use task::RecoveryTask;

pub(crate) use diff::diff;
pub(crate) use flr::recover_file;
pub(crate) use keep::keep;
pub(crate) use plan::preview;
pub(crate) use restore::{declined as restore_declined, end_restore, restore_status, restore_vm};
pub(crate) use vpg_task::{clone, failover_test};
