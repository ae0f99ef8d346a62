//! The settings documents the world keeps as a ZVM answers them: a VPG settings document being
//! edited ([`VpgSettings`], `settings.rs`) and an export of VPG settings ([`Export`],
//! `exported.rs`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::clock::SimTime;
use super::ids::SiteRole;

/// One document being edited.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct VpgSettings {
    /// `VpgSettingsIdentifier`.
    pub id: String,
    /// The site whose ZVM made it (and commits it).
    pub site: SiteRole,
    /// The document, SW10's `VpgSettingsApi` in PascalCase.
    pub doc: Value,
}

/// One export: when, and the settings of each VPG it holds (SW10's `ExportedVpgSettingsApi`, in
/// PascalCase).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Export {
    /// Its time, which names it.
    pub at: SimTime,
    /// The VPGs' settings.
    pub vpgs: Vec<Value>,
}
