//! The configuration file as written: each section its own struct, read by serde, unknown keys
//! refused.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use super::approvals::ApprovalSettings;
use super::gateway::GatewayKeys;
use super::sections::{
    DiffSettings, GuardSettings, HookSettings, HttpSettings, LookupSettings, RecoverSettings,
};
use super::site::SiteKeys;

/// The configuration file as written: every section is its own public struct, and each site the keys
/// [`validate`] makes a [`SiteConfig`] of once the environment is read.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(super) struct Written {
    pub(super) catalog: Option<PathBuf>,
    pub(super) journal: Option<PathBuf>,
    pub(super) sites: BTreeMap<String, SiteKeys>,
    pub(super) guard: GuardSettings,
    pub(super) hook: HookSettings,
    pub(super) recover: RecoverSettings,
    pub(super) diff: DiffSettings,
    pub(super) lookup: LookupSettings,
    pub(super) http: HttpSettings,
    pub(super) gateway: GatewayKeys,
    pub(super) approvals: ApprovalSettings,
}
