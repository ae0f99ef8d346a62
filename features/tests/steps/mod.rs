//! Step definitions, one module per capability, plus the steps every feature shares:
//!
//! - [`fronts`]: running `rewind` as the operator, calling tools as the agent, and what they answered.
//! - [`zerto`]: the simulated ZVM: setting it up (timings, statuses, resyncs, faults, the clock) and
//!   reading its ground truth (tasks, calls, guest files).
//! - [`protection`], [`guard`], [`tools`], [`agent_tools`], [`recover`], [`hook`], [`auth`],
//!   [`trust`], [`appliance`], [`way_back`]: one per feature file (`zerto` also holds the steps of `faults.feature`).

mod agent_tools;
mod appliance;
mod auth;
mod diff;
mod fronts;
mod guard;
mod hook;
mod protection;
mod recover;
mod restore;
mod tools;
mod trust;
mod way_back;
mod words;
mod zerto;
