//! The projection of the world onto the views of one site at one moment ([`SiteView`]), apart from
//! the view types it fills (the tables of `wire/`), one file per area as `wire/` has them:
//!
//! - [`zvm`]: `SiteView` itself and its links; sites, VMs, VPGs, tasks and FLR sessions;
//! - [`ltr`], [`monitoring`], [`traces`], [`virtualization`]: Extended Journal Copy, VRAs and
//!   datastores with the license, alerts, events and reports, and the hypervisor's inventory;
//! - [`sim`]: the `/_sim` views of tasks and retention sets.

mod ltr;
mod monitoring;
mod sim;
mod traces;
mod virtualization;
mod zvm;

pub use monitoring::vra_host;
pub use sim::{sim_retention_set, sim_task};
pub use traces::report_status;
pub use virtualization::cluster_identifier;
pub use zvm::{SiteView, pairing_statuses};
