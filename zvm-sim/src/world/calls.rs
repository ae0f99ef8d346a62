//! One recorded API call ([`Call`]): what the call log holds of each request to either site.

use serde::{Deserialize, Serialize};

use super::faults::FaultNote;

/// One recorded API call (token endpoint included, `/_sim` excluded).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Call {
    /// 1, 2, ... across both sites.
    pub seq: u64,
    /// The site name.
    pub site: String,
    /// HTTP method.
    pub method: String,
    /// The path as the client sent it.
    pub path: String,
    /// The query string with secrets redacted, if any.
    pub query: Option<String>,
    /// Response status.
    pub status: u16,
    /// The task the call started, if any.
    pub task_id: Option<String>,
    /// The fault rules that fired on it.
    pub faults: Vec<FaultNote>,
    /// No route matched it (a path no ZVM 10 serves, or one the simulator does not).
    #[serde(default)]
    pub unmatched: bool,
}
