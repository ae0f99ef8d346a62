//! A tag's checkpoint kept in a retention set (Extended Journal Copy), past its VPG's journal.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// A tag's checkpoint kept in a retention set (Extended Journal Copy), past its VPG's journal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KeptSet {
    /// The retention set.
    pub retention_set_id: String,
    /// Its repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository_id: Option<String>,
    /// Its repository's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository_name: Option<String>,
    /// The site of its repository, which an FLR of it names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository_site_id: Option<String>,
    /// The moment it holds: the tag's checkpoint's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point_in_time: Option<DateTime<Utc>>,
    /// When Zerto deletes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<DateTime<Utc>>,
}

impl KeptSet {
    /// Whether it is still kept at `now`.
    pub fn is_kept_at(&self, now: DateTime<Utc>) -> bool {
        self.expires.is_none_or(|e| e > now)
    }
}
