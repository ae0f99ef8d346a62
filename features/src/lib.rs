//! features: the harness of the Gherkin acceptance suite. The feature files live in `specs/`, the
//! runner and the step definitions in `tests/acceptance.rs` and `tests/steps/`; this library is what
//! the steps stand on:
//!
//! - [`world`]: [`RewindWorld`], one per scenario: a fresh seeded simulator, a temporary home, the
//!   configuration, and the fronts (the `rewind` binary, and `rewind-mcp` behind an MCP client).
//! - [`answer`]: what either front answered, in one shape.
//! - [`mcp`]: the agent's MCP client and the [`mcp::Human`] who answers the server's questions.
//! - [`sim`]: the simulator's `/_sim` control API, the ground truth (tasks, calls, guest files).
//! - [`real`]: the `@real-zvm` mode, from `ZVM_URL` and credentials.
//! - [`bins`]: finding and building the two binaries before anything runs.

pub mod answer;
pub mod bins;
pub mod mcp;
pub mod real;
pub mod sim;
pub mod world;

pub use answer::Answer;
pub use bins::{FRONT_DEADLINE, split_command};
pub use world::RewindWorld;
