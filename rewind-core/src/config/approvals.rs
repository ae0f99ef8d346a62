//! `[approvals]`: how long a held call waits for a person, whose approval it needs, how many a
//! person may have waiting, which catalog entries are always held, and where each new held call is
//! announced.

use std::time::Duration;

use serde::{Deserialize, Deserializer};

use super::values::{count, seconds, secs};
use crate::secret::Secret;

/// The tool whose approval needs a second person unless `four_eyes` says otherwise.
pub const FOUR_EYES_DEFAULT: &str = "zerto_restore_vm";

/// `[approvals]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ApprovalSettings {
    /// How long a held call waits for a decision, and how long an approval waits for its call to
    /// be made again, before either expires.
    #[serde(rename = "expire_after_secs", deserialize_with = "secs")]
    pub expire_after: Duration,
    /// Whose approval a held call needs: under four eyes, never its requester's.
    pub four_eyes: FourEyes,
    /// The most held calls one person may have waiting at once.
    #[serde(deserialize_with = "count")]
    pub max_held_per_person: usize,
    /// Mutating catalog entries whose every call is held for a person, guard or not.
    pub require: Vec<RequiredApproval>,
    /// An incoming webhook (a chat tool's) told of each new held call: its URL is a secret, as a
    /// chat tool's incoming-webhook URL is, and is never logged.
    pub webhook: Option<Secret>,
}

impl Default for ApprovalSettings {
    fn default() -> Self {
        ApprovalSettings {
            expire_after: seconds::<900>(),
            four_eyes: FourEyes::default(),
            max_held_per_person: 20,
            require: Vec::new(),
            webhook: None,
        }
    }
}

impl ApprovalSettings {
    /// Whether a call of `server`'s `tool` is held whatever its catalog class says.
    pub fn requires(&self, server: &str, tool: &str) -> bool {
        self.require
            .iter()
            .any(|r| r.server == server && (r.tool == tool || r.tool == "*"))
    }
}

/// `four_eyes`: `true` (every tool), `false` (none), or the tools whose approval needs a second
/// person (`["zerto_restore_vm"]`, the default).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FourEyes {
    /// Every held call.
    All,
    /// Held calls of these tools (rewind's own names, or an upstream's own).
    Tools(Vec<String>),
}

impl Default for FourEyes {
    fn default() -> Self {
        FourEyes::Tools(vec![FOUR_EYES_DEFAULT.to_owned()])
    }
}

impl FourEyes {
    /// Whether an approval of a call of `tool` must come from someone other than its requester.
    pub fn applies_to(&self, tool: &str) -> bool {
        match self {
            FourEyes::All => true,
            FourEyes::Tools(tools) => tools.iter().any(|t| t == tool),
        }
    }
}

impl<'de> Deserialize<'de> for FourEyes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Every(bool),
            Tools(Vec<String>),
        }
        match Written::deserialize(d).map_err(|_| {
            serde::de::Error::custom(
                "is neither true, false nor a list of tool names; write four_eyes = [\"zerto_restore_vm\"]",
            )
        })? {
            Written::Every(true) => Ok(FourEyes::All),
            Written::Every(false) => Ok(FourEyes::Tools(Vec::new())),
            Written::Tools(tools) => Ok(FourEyes::Tools(tools)),
        }
    }
}

/// One `[[approvals.require]]` table: a catalog entry's server and tool (`*` for each of its
/// tools).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequiredApproval {
    /// The server (an upstream's name, or a host's MCP server) as the catalog names it.
    pub server: String,
    /// The tool, or `*`.
    pub tool: String,
}
