//! Step definitions, one module per capability, plus the steps every feature shares:
//!
//! - [`fronts`]: running `rewind` as the operator, calling tools as the agent, and what they answered.
//! - [`zerto`]: the simulated ZVM: setting it up (timings, statuses, resyncs, faults, the clock) and
//!   reading its ground truth (tasks, calls, guest files).
//! - [`protection`], [`guard`], [`tools`], [`recover`], [`hook`], [`auth`], [`appliance`]: one per
//!   feature file.

mod appliance;
mod auth;
mod fronts;
mod guard;
mod hook;
mod protection;
mod recover;
mod tools;
mod zerto;

/// Reads a scenario's list of names: `web-local, web-dr, web-archive`.
pub fn names(list: &str) -> Vec<String> {
    list.split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}
