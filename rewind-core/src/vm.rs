//! The VM a query means, and the site it runs at: the values find_protection answers with and the
//! audit journal records, and the one rule by which a query (a name, a host name, an IP address or a
//! vmIdentifier) matches a VM. A leaf: it knows nothing of how a ZVM is asked.

use std::net::IpAddr;

use serde::Serialize;

/// A site as a VPG names it, with the configured site that reaches its ZVM, if any.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SiteRef {
    /// The site's identifier.
    pub id: String,
    /// The site's name.
    pub name: String,
    /// The name under which this site's ZVM is configured, if it is.
    pub configured_as: Option<String>,
}

impl std::fmt::Display for SiteRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.name.is_empty() {
            &self.id
        } else {
            &self.name
        })
    }
}

/// The one VM a query resolved to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct VmRef {
    /// Its identifier.
    pub id: String,
    /// Its name.
    pub name: String,
    /// The site it runs at (its VPGs' protected site).
    pub site: SiteRef,
    /// Its IP addresses, as its ZVM lists them (empty when none is listed).
    pub ip_addresses: Vec<String>,
}

/// How a VM query (name, host name, IP address or vmIdentifier) matches a VM. It is the one rule of
/// find_protection, and the audit journal finds a VM's records with it too, so the PreToolUse hook
/// recognises a guarded VM by every name find_protection accepts.
#[derive(Debug, Clone)]
pub struct VmQuery {
    query: String,
    ip: Option<IpAddr>,
    first_label: Option<String>,
}

impl VmQuery {
    /// The query, trimmed. An IP address matches only addresses; a dotted name that is not one also
    /// matches by its first label (`web-01.corp.example` means the VM named `web-01`).
    pub fn new(query: &str) -> VmQuery {
        let query = query.trim().to_lowercase();
        let ip = query.parse::<IpAddr>().ok();
        let first_label = match (ip, query.split_once('.')) {
            (None, Some((label, rest))) if !label.is_empty() && !rest.is_empty() => {
                Some(label.to_string())
            }
            _ => None,
        };
        VmQuery {
            query,
            ip,
            first_label,
        }
    }

    /// Whether the VM with this identifier, name and IP addresses is one the query means: its
    /// identifier or its name (case-insensitive) is the query, its name is the first label of the
    /// query (a host name), or one of its addresses is the query's IP address.
    pub fn matches<'a>(
        &self,
        id: Option<&str>,
        name: Option<&str>,
        ips: impl IntoIterator<Item = &'a str>,
    ) -> bool {
        id.is_some_and(|id| lowercases_to(id, &self.query))
            || name.is_some_and(|n| {
                lowercases_to(n, &self.query)
                    || self
                        .first_label
                        .as_deref()
                        .is_some_and(|l| lowercases_to(n, l))
            })
            || self.ip.is_some_and(|ip| {
                ips.into_iter()
                    .any(|a| a.trim().parse::<IpAddr>().is_ok_and(|a| a == ip))
            })
    }
}

/// Whether `text` lowercased (as [`str::to_lowercase`] lowercases it) is `lower`, which is already
/// lowercase, without building the lowercased text. A lookup compares the query with every row of
/// every site's listing, and under 64 concurrent guards lowercasing each name into a new string was
/// most of the lookup's cost.
pub(crate) fn lowercases_to(text: &str, lower: &str) -> bool {
    if text.is_ascii() && lower.is_ascii() {
        // `lower` has no ASCII capital, so ignoring ASCII case is lowercasing `text`.
        return text.eq_ignore_ascii_case(lower);
    }
    // A capital sigma lowercases by its place in the word (σ, or ς at a word's end), the one mapping
    // that a character cannot make on its own; every other character lowercases alone, as here.
    if text.contains('Σ') {
        return text.to_lowercase() == lower;
    }
    text.chars().flat_map(char::to_lowercase).eq(lower.chars())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_exactly_when_their_lowercase_is_the_querys() {
        // The comparison that skips building lowercase strings agrees with comparing them, also for
        // the characters whose lowercase is longer, shorter, ASCII or depends on their place.
        let texts = [
            "web-01",
            "WEB-01",
            "Web-01",
            "web-0",
            "",
            "Ärzte",
            "ärzte",
            "ÄRZTE",
            "arzte",
            "STRASSE",
            "Straße",
            "straße",
            "İstanbul",
            "i̇stanbul",
            "istanbul",
            "ıstanbul",
            "ΣΊΣΥΦΟΣ",
            "σίσυφος",
            "σίσυφοσ",
            "ΟΔΟΣ-1",
            "οδος-1",
            "οδοσ-1",
            "Σ",
            "σ",
            "ς",
            "\u{212A}elvin",
            "kelvin",
            "KELVIN",
            "ǅemal",
            "ǆemal",
            "ǄEMAL",
            "ﬁle",
            "FILE",
            "サーバー01",
            "サーバー01",
        ];
        for text in texts {
            for query in texts {
                let lower = query.to_lowercase();
                assert_eq!(
                    lowercases_to(text, &lower),
                    text.to_lowercase() == lower,
                    "{text:?} against {query:?}"
                );
            }
        }
    }
}
