//! `/_sim`: the control API that no real ZVM has. It is served by both sites, answers only to
//! loopback clients, needs no token, and speaks PascalCase JSON (keys matched case-insensitively).
//! Its calls are not in the call log, which records what a ZVM client did.
//!
//! VPGs and VMs are named by identifier or, for convenience, by name (a VM name only when exactly
//! one VM has it).
//!
//! - [`router`](mod@router): the routes, and the check that lets loopback clients only;
//! - [`state`]: reset and the saved state; [`clock`]: the clock and the timings;
//! - [`vpgs`]: VPGs, resync, pinned status, journals and their bursts;
//! - [`lists`]: the call log, the tasks, the retention sets; [`files`]: guest files;
//! - [`faults`]: the fault rules; [`realm`]: the Keycloak realm's keys and OpenID configuration;
//! - [`ui`]: the pages at `/_sim/ui`, whose forms act through the functions above;
//! - [`metrics`](mod@metrics): `GET /metrics`, which like the control API is not in the call log.

mod clock;
mod faults;
mod files;
mod lists;
mod metrics;
mod realm;
mod router;
mod state;
mod ui;
mod vpgs;

pub(crate) use metrics::metrics;
pub(crate) use router::router;
