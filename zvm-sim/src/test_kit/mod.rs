//! The one test kit of the workspace (feature `test-kit`): a fresh seeded simulator on free loopback
//! ports ([`TestSim`], in `sim`, with the worlds a test starts from in `worlds`), a typed client of
//! its `/_sim` control API ([`Control`]), and a small authenticated client of one site's ZVM API
//! ([`Site`]); the steps that need both together live in `steps`, and what every client knows
//! beforehand (credentials, paths, [`DEADLINE`]) in `known`; a throwaway PostgreSQL server for
//! the journal kept there, in `postgres` ([`Postgres`]).
//!
//! Every client here speaks HTTP with `serde_json::Value`, as any ZVM client would: nothing in it
//! shares the simulator's own types, so a test that passes through the kit proves the wire format.
//! Failures panic with what was asked and what came back; the kit is for tests, benches and the
//! acceptance suite, never for the fronts.

mod control;
mod corpus;
mod known;
mod postgres;
mod sim;
mod site;
mod steps;
mod worlds;

pub use control::{Control, assert_no_secret, state_of, strings_in, texts};
pub use corpus::Corpus;
pub use known::{CLIENT_ID, CLIENT_SECRET, DEADLINE, INSERT, TOKEN_PATH};
pub use postgres::{Postgres, self_signed};
pub use sim::{
    TestSim, frozen_with_vpg, init_logging, spawn, spawn_frozen, spawn_with, trusting_client,
};
pub use site::{Site, password_grant, token};
pub use worlds::{world_with_people, world_with_secrets};
