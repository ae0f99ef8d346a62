//! The simulator's own JSON views of its model, shaped as a ZVM 10.x writes them: PascalCase keys
//! (with the API's own spellings such as `IOPs`, `ActualRPO`, `ProvisionedStorageInMB`), lowercase
//! keys inside link objects, the real enum numbers, ISO 8601 UTC times.
//!
//! These types are deliberately not shared with any client: a client that reads a wrong field name
//! must fail against the simulator, not agree with it.
//!
//! - [`zvm`]: the ZVM's views of sites, VMs, VPGs, points in time, checkpoints, tasks and FLR
//!   sessions; [`ltr`], [`monitoring`], [`traces`], [`virtualization`]: those of Extended Journal
//!   Copy, VRAs and datastores, alerts and events, and the hypervisor's inventory;
//! - [`sim`]: the views of the `/_sim` control API, apart from the ZVM's;
//! - [`site_view`]: the projection that fills them: [`SiteView`], the world seen from one site at
//!   one moment, one file per area as here, and the `/_sim` views of tasks and retention sets.
//!
//! The view files are tables (one list of shapes each); the projection's logic is all in
//! `site_view/`.

mod ltr;
mod monitoring;
mod sim;
mod site_view;
mod traces;
mod virtualization;
mod zvm;

pub use ltr::*;
pub use monitoring::*;
pub use sim::*;
pub use site_view::*;
pub use traces::*;
pub use virtualization::*;
pub use zvm::*;
