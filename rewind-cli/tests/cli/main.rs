//! The real `rewind` binary against a fresh seeded simulator: every command in human and `--json`
//! form, every exit code, the hook's decisions, and the demo. One helper ([`env::TestEnv`]) starts
//! each test's own simulator and temporary home.

mod env;

mod capture;
mod demo;
mod doctor;
mod documented;
mod exit_codes;
mod hook;
mod hosts;
mod journal;
mod logging;
mod machine;
mod output;
mod protection;
mod recover;
mod team;
mod tools;
mod trust;
