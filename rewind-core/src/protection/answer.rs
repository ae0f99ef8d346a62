//! What one configured site answered a lookup.

use std::sync::Arc;

use crate::error::RewindError;
use crate::zvm::Site;
use crate::zvm::inventory::Inventory;
use crate::zvm::wire::VmRow;

/// What one configured site contributed.
pub(super) struct SiteAnswer {
    pub(super) site: Arc<Site>,
    pub(super) site_id: String,
    pub(super) site_name: String,
    /// The rows (read by this lookup) of the VMs the query matches.
    pub(super) rows: Vec<VmRow>,
    /// The site's inventory as kept, or why it could not be read.
    pub(super) inventory: Result<Arc<Inventory>, RewindError>,
}
