//! rewind-benches: the harness behind `benches/guard.rs`, which measures how long rewind-core takes to
//! guard VMs against the in-process simulator, and how that compares with the floor Zerto itself sets.
//!
//! ## Map
//!
//! - [`world`]: the bench world: the simulator's default world (web-01 in three VPGs) plus VMs that each
//!   have a VPG of their own and VMs that all share one VPG.
//! - [`env`]: a simulator with fixed timings and a [`rewind_core::Rewind`] configured as users run it
//!   (both sites, the service client), plus the `/_sim` reads of the simulator's ground truth.
//! - [`truth`]: that ground truth: token requests per site, 401s, failed inserts and each insert task's
//!   real duration, read from `/_sim/calls` and `/_sim/tasks`.
//! - [`record`]: what each bench iteration did (wall time, each guard's latency and task ids), and the
//!   floors and ratios computed from it.
//! - [`report`]: the summary table printed at the end of a bench run, and the checks of the targets.
//!
//! Nothing here asserts a speed: the bench prints ratios; only the ground-truth invariants (no 401, no
//! failed insert, one token request per site) are checked, and in the smoke run they fail it.

pub mod env;
pub mod record;
pub mod report;
pub mod truth;
pub mod world;

pub use env::{BenchEnv, HarnessError, Timing, Transport};
pub use record::{Batch, GuardRecord, Recorder};
pub use report::{Floor, Row, Summary};
pub use truth::GroundTruth;
