//! The face a ZVM client sees: Keycloak's token endpoint and the `/v1` API, one file per resource,
//! with the layers the site's router (`crate::app`) puts around every request.
//!
//! - Layers: the call log ([`call_log`]), which records every request but `/_sim` ones; the body
//!   deadline ([`body`]); the fault rules ([`faults`]); and, on `/v1` routes, the bearer check
//!   ([`bearer`]).
//! - Handlers: [`keycloak`] and [`login`], [`sites`], [`vms`], [`vpgs`] and [`vpg_settings`],
//!   [`checkpoints`], [`tasks`], [`flrs`], the VPG actions in [`actions`] and [`restore`], the
//!   Extended Journal Copy in [`ltr`], VRAs in [`vras`], datastores and VRA statistics in
//!   [`monitoring`], the hypervisor's inventory in [`virtualization`], alerts and events in
//!   [`traces`], and the recovery scripts in [`scripts`].
//! - [`routes`]: the route table, each route with its coverage (the coverage matrix).
//!
//! What handlers share with the control API (errors, extractors, the site context) is the HTTP
//! kit, `crate::http`.

mod actions;
mod bearer;
mod body;
mod call_log;
mod checkpoints;
mod faults;
mod flrs;
mod keycloak;
mod login;
mod ltr;
mod monitoring;
mod restore;
mod routes;
mod scripts;
mod sites;
mod tasks;
mod traces;
mod virtualization;
mod vms;
mod vpg_settings;
mod vpgs;
mod vras;

pub(crate) use bearer::require_bearer;
pub(crate) use body::within_deadline;
pub(crate) use call_log::record as record_call;
pub(crate) use faults::{apply as apply_faults, close_lost_connections};
pub use routes::coverage_matrix;
pub(crate) use routes::{keycloak as keycloak_routes, v1 as v1_routes};
