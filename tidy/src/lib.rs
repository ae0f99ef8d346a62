//! The workspace's layout rules, checked by reading its sources as Rust (`tests/workspace.rs`).
//!
//! A file is a node; a file uses another when its code (test code left out) names an item the other
//! defines: through a `use`, a path such as `crate::guard::Verdict` or `super::x::f`, a glob's name,
//! or a `macro_rules!` macro. Names are followed through re-exports to the file that defines them,
//! so a face (`mod.rs`, `lib.rs`, `main.rs`) that only declares and re-exports is used by nobody.
//!
//! - `source`: one file parsed, what of it is test code, how many lines are not;
//! - `scan`: what a module's code names (paths, macro calls, identifiers) and its `use` trees;
//! - `tree`: the crates of the workspace, each root's tree of modules with what each defines;
//! - `resolve`: a path followed through modules and re-exports to the file that defines its item;
//! - `graph`: the strongly connected files (Tarjan), each a circle;
//! - `rules`: `Workspace`, read once, and its three reports: circles, faces used by their own
//!   children, long files.

mod graph;
mod resolve;
mod rules;
mod scan;
mod source;
mod tree;

pub use rules::{Circle, FaceUse, LongFile, Workspace};
