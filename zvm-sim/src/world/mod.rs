//! The model: sites, VMs, VPGs with their journals, guest files, tasks, Keycloak, the call log, the
//! fault rules and the simulated clock, all in one [`World`] behind one mutex.
//!
//! Nothing here runs on its own. Each request first calls [`World::advance`], which brings the world
//! to the simulated "now" by processing, in time order, everything that fell due since the last
//! request: tasks reaching their end, resyncs ending. Everything else (task progress, automatic
//! checkpoints, tags becoming listed, token expiry) is derived from the clock when it is read.
//!
//! The files stand in four layers, each using only those below it:
//! - what everything names: [`ids`] (`SiteRole`, GUIDs), [`refusal`], [`clock`] (simulated time),
//!   [`spec`] (the world as a file describes it) with [`resolve`] (its validation) and
//!   [`generate`] (large worlds made from a seed), [`files`] (guest files with their history);
//! - what the world holds: [`journal`] (a VPG's checkpoints, automatic ones computed lazily),
//!   `inventory` (sites, hosts with their VRAs, VMs, VPGs), [`tasks`] (Zerto tasks and the
//!   operations they carry out) with [`payloads`] (what an operation carries), [`flr_session`],
//!   [`ltr`] (Extended Journal Copy's repositories and retention sets), [`traces`] (events,
//!   reports, alerts), [`documents`] (settings documents), [`scripts`], [`auth`] (Keycloak users,
//!   clients and tokens), [`faults`] (fault rules), [`calls`] (the call log), `index`, and
//!   [`setup`], `schedule`;
//! - [`model`]: the [`World`] that holds them all: the record, its lookups, the tasks it starts
//!   and the calls it logs; and, each adding to `World` the requests of one area on top of it:
//!   `build` (the initial world of a seed), `alerts` (an alert and its events, the RPO alerts),
//!   [`history`] (the history a journal holds and its alerts), [`recorder`] (events, reports and
//!   the lists a site reads of them), `status` (a status pinned, syncs and their end), `inserts`
//!   (tagged checkpoint inserts), [`flr`] (file-level recovery), [`recovery`] (failover test,
//!   clone, failover, move, force sync), [`live`] (a live operation's commit and rollback),
//!   [`restore`] (journal VM restore), [`retention`] and [`repositories`] (Extended Journal Copy),
//!   [`settings`], [`exported`] and [`lifecycle`] (VPG settings, their export, VPGs created and
//!   removed), [`vras`], [`pairing`], [`placement`] (which host and VRA replicate each VM, and
//!   what each datastore holds), and [`state`] (the whole world as a saved JSON document);
//! - `advance`, above every area: the world brought to the simulated "now", each task's end
//!   handed to the area of its operation.

mod advance;
mod alerts;
pub mod auth;
mod build;
pub mod calls;
pub mod clock;
pub mod documents;
pub mod exported;
pub mod faults;
pub mod files;
pub mod flr;
pub mod flr_session;
pub mod generate;
pub mod history;
pub mod ids;
mod index;
mod inserts;
mod inventory;
pub mod journal;
pub mod lifecycle;
pub mod live;
pub mod ltr;
pub mod model;
pub mod pairing;
pub mod payloads;
pub mod placement;
pub mod recorder;
pub mod recovery;
pub mod refusal;
pub mod repositories;
pub mod resolve;
pub mod restore;
pub mod retention;
mod schedule;
pub mod scripts;
pub mod settings;
pub mod setup;
pub mod spec;
pub mod state;
mod status;
pub mod tasks;
pub mod traces;
pub mod vras;

pub use calls::Call;
pub use ids::SiteRole;
pub use inventory::{LoginBanner, Site, Vm};
pub use model::World;
pub use refusal::Refusal;
pub use setup::{Setup, Timings};
