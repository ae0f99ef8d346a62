//! zvm-sim's tests, one binary: each module is one area of the simulated appliance, driven over
//! HTTP through the workspace's test kit (`zvm_sim::test_kit`).

mod bad_control;
mod binary;
mod coherence;
mod control;
mod coverage;
mod determinism;
mod expect;
mod faults;
mod flr;
mod fuzz_corpus;
mod handlers;
mod history;
mod inventory;
mod jitter;
mod journal;
mod keycloak;
mod lifecycle;
mod ltr;
mod metrics;
mod recovery;
mod restore;
mod scripts;
mod settings;
mod state;
mod surface;
mod tls;
mod traces;
mod ui;
mod vras;
mod worlds;
