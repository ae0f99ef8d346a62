//! The simulator's `/_sim` control API, the suite's ground truth (what Zerto really ran, every call
//! each site received, the files inside the guests) and its levers (faults, the clock, timings): the
//! workspace's test kit, over an HTTP client that trusts the sites' own certificates when they serve
//! HTTPS.
//!
//! Like every other client of the simulator, the suite talks to it over HTTP with its own JSON, never
//! through the simulator's types.

use zvm_sim::Simulator;
use zvm_sim::test_kit::trusting_client;
pub use zvm_sim::test_kit::{CLIENT_ID, CLIENT_SECRET, Control, INSERT};

/// A client of the control API `sim` serves at Boston; over HTTPS it trusts exactly the sites' own
/// certificates.
pub fn control(sim: &Simulator) -> Control {
    Control::with_client(trusting_client(sim), &sim.local().url)
}
