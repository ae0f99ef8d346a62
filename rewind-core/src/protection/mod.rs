//! find_protection: resolve a VM name, host name or vmIdentifier to exactly one VM and every VPG it is
//! in, across every configured site, and the protecting-VPG rule.
//!
//! Every configured ZVM is asked at once for the rows of `/v1/vms` (one per VM and VPG) that the
//! query's filters keep (`vmName`, and for a dotted query `vmIdentifier` and the host name's first
//! label), and for its own site's inventory (`/v1/virtualizationsites/{site}/vms`), so that a lookup
//! costs what one VM's rows cost, not what the site's thousands of VMs do. Rows are matched by VM name
//! (case-insensitive), vmIdentifier, host name (an FQDN whose first label is the VM name) or IP
//! address, and grouped by VM identifier; a VPG seen from both its sites is kept once. The inventory
//! makes two more answers possible: a VM that exists but is protected by nothing, and a name shared by
//! a protected and an unprotected VM (which is ambiguous, not a match).
//!
//! What no filter answers is looked up in what the client keeps for a bounded time (see
//! [`crate::LookupSettings`]): an IP address, or a name in letters other than ASCII, in the site's
//! whole listing; a VM matched in an inventory or in such a listing has its rows read again by
//! identifier. The rows an answer gives, and so what a guard tags, are always read by this lookup.

//!
//! The folder's rooms: `rule` (the protecting-VPG rule), `model` (what a lookup finds), `note`
//! (what it says beside it), `query` (a query checked, and what answers to it), `lookup` (the
//! sites asked and their answers merged; `answer`, one site's), `not_found` (the names a query may
//! have meant) and `compare` (a VM's VPGs against its newest guard's).

mod answer;
mod compare;
mod lookup;
mod model;
mod not_found;
mod note;
mod query;
mod rule;

pub use crate::vm::{SiteRef, VmQuery, VmRef};
pub(crate) use compare::compared_with_guard;
pub(crate) use lookup::{find_protection, site_client};
pub use model::{FlrAvailability, Protection, VpgProtection};
pub use note::ProtectionNote;
pub use query::validate_query;
pub use rule::{PAUSED_SUBSTATUSES, SYNC_SUBSTATUSES, not_protecting_reason};
