//! How the world names things: which of the two sites a thing belongs to ([`SiteRole`]), the
//! GUIDs it draws from its seeded generator, and the GUID-shaped identifiers it numbers without
//! drawing ([`stable_guid`]).

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::decisions;

/// Which of the two simulated ZVMs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all_fields = "PascalCase")]
pub enum SiteRole {
    /// The local site: the first site of the world, on the first listener (Boston by default).
    Local,
    /// The peer site: the second site, on the second listener (Denver by default).
    Peer,
}

impl SiteRole {
    /// Both, local first.
    pub const BOTH: [SiteRole; 2] = [SiteRole::Local, SiteRole::Peer];

    /// 0 for the local site, 1 for the peer.
    pub const fn index(self) -> usize {
        match self {
            SiteRole::Local => 0,
            SiteRole::Peer => 1,
        }
    }

    /// The other site of the pair.
    pub const fn other(self) -> SiteRole {
        match self {
            SiteRole::Local => SiteRole::Peer,
            SiteRole::Peer => SiteRole::Local,
        }
    }

    pub(crate) fn from_index(index: usize) -> Self {
        if index == 0 {
            SiteRole::Local
        } else {
            SiteRole::Peer
        }
    }
}

/// A random GUID drawn from a seeded generator.
pub fn guid(rng: &mut ChaCha8Rng) -> String {
    let mut bytes = [0u8; 16];
    rng.fill_bytes(&mut bytes);
    uuid::Builder::from_random_bytes(bytes)
        .into_uuid()
        .to_string()
}

/// A GUID-shaped identifier, the `n`th of its `kind`: stable for a run, and drawn from no random
/// stream, so numbering one (an event, a retention set) shifts no task id or token.
pub fn stable_guid(kind: &str, n: impl std::fmt::Display) -> String {
    let high = decisions::fnv1a(&format!("{kind}/{n}"));
    let low = decisions::fnv1a(&format!("{n}/{kind}"));
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        high >> 32,
        (high >> 16) & 0xffff,
        high & 0xffff,
        low >> 48,
        low & 0xffff_ffff_ffff
    )
}
