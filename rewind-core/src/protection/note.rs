//! [`ProtectionNote`]: what a lookup says beside its answer.

/// Something a find_protection answer could not check. It reads (and serializes) as one sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProtectionNote {
    /// A site's inventory could not be read, so an unprotected VM of the same name there would not
    /// have been seen (and the answer may miss an ambiguity).
    InventoryUnreadable {
        /// The configured site.
        site: String,
        /// Why it could not be read.
        error: String,
    },
    /// Only some configured sites were asked, as the caller chose (`--site`).
    OnlyAsked {
        /// The sites asked.
        asked: Vec<String>,
        /// The configured sites left out.
        left_out: Vec<String>,
    },
    /// Some sites could not answer; the VM was found by its identifier at the others.
    FoundWithoutThem {
        /// The sites that could not answer, each with what it met.
        down: Vec<String>,
    },
    /// The VM's VPGs differ from those its newest guard saw (journaled as `protection_changed`).
    ProtectionChanged {
        /// What changed, and what it means for the guard.
        said: String,
    },
    /// The VM's VPGs could not be compared with its newest guard's: the journal could not be read
    /// or written.
    NotCompared {
        /// Why.
        error: String,
    },
}

impl std::fmt::Display for ProtectionNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProtectionNote::InventoryUnreadable { site, error } => write!(
                f,
                "the inventory of site {site} could not be read, so an unprotected VM of the same name there would not be seen: {error}"
            ),
            ProtectionNote::OnlyAsked { asked, left_out } => write!(
                f,
                "only {} was asked (--site): a VM of the same name, or a VPG only {} lists, would not be seen",
                asked.join(" and "),
                left_out.join(" and ")
            ),
            ProtectionNote::FoundWithoutThem { down } => write!(
                f,
                "{} could not be asked; the VM was found by its identifier without it, and a VPG only it lists would not be seen",
                down.join(", ")
            ),
            ProtectionNote::ProtectionChanged { said } => {
                write!(f, "protection changed since the VM's guard: {said}")
            }
            ProtectionNote::NotCompared { error } => write!(
                f,
                "the VM's VPGs could not be compared with its last guard's, so a VPG added since would not be said: {error}"
            ),
        }
    }
}

serialize_as_text!(ProtectionNote);
