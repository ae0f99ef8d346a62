//! The ZVM's REST resources as the client reads and writes them, one file a resource, each an
//! `impl ZvmClient` block over the transport of [`super::client`]:
//!
//! - `local_site`: the site's own identity, read once.
//! - `vms`: the protected VMs' rows, a site's inventory and its virtualization sites.
//! - `vpgs`: VPGs, their checkpoints, and how much history a journal keeps (with its alerts and
//!   events).
//! - `tasks`: Zerto tasks, and the insert of a tagged checkpoint.
//! - `recovery`: failover tests, clones and journal VM restores.
//! - `flr`: FLR sessions: mount, browse, download, unmount.
//! - `ltr`: Extended Journal Copy: retention sets and their runs.
//! - `raw`: answers read as the ZVM wrote them, for the capture, the parity report and probes.

pub(super) mod flr;
mod local_site;
mod ltr;
mod raw;
mod recovery;
mod tasks;
mod vms;
mod vpgs;

pub(crate) use tasks::Sent;
