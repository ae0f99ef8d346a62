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
    /// The query as given (trimmed): what a ZVM's filters are asked for.
    typed: String,
    /// The query lowercased: what names and identifiers are compared with.
    query: String,
    ip: Option<IpAddr>,
    first_label: Option<String>,
}

impl VmQuery {
    /// The query, trimmed. An IP address matches only addresses; a dotted name that is not one also
    /// matches by its first label (`web-01.corp.example` means the VM named `web-01`).
    pub fn new(query: &str) -> VmQuery {
        let typed = query.trim().to_string();
        let query = typed.to_lowercase();
        let ip = query.parse::<IpAddr>().ok();
        let first_label = match (ip, query.split_once('.')) {
            (None, Some((label, rest))) if !label.is_empty() && !rest.is_empty() => {
                Some(label.to_string())
            }
            _ => None,
        };
        VmQuery {
            typed,
            query,
            ip,
            first_label,
        }
    }

    /// The `/v1/vms` filters that return every row this query can match, or `None` when the ZVM
    /// cannot filter on what it is: an IP address (no filter takes one), or a query with letters
    /// other than ASCII, since the ZVM compares names ignoring ASCII case only and would miss
    /// `Ärzte-01` asked for as `ärzte-01`. The query is sent as typed; a dotted one is also asked
    /// for as an identifier, and a host name for its first label as a name.
    pub fn filters(&self) -> Option<Vec<(&'static str, String)>> {
        if self.ip.is_some() || !self.typed.is_ascii() {
            return None;
        }
        let mut filters = vec![("vmName", self.typed.clone())];
        // A vmIdentifier is `<serverGuid>.<moref>`: a query without a dot is none.
        if let Some((label, _)) = self.typed.split_once('.') {
            filters.push(("vmIdentifier", self.typed.clone()));
            if self.first_label.is_some() {
                filters.push(("vmName", label.to_string()));
            }
        }
        Some(filters)
    }

    /// The lowercase names and identifiers a VM the query means by name or identifier has one of:
    /// the query, and a host name's first label. (An IP address matches by address as well.)
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.query.as_str()).chain(self.first_label.as_deref())
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
    fn a_query_is_filtered_on_as_typed_and_a_host_name_also_by_its_first_label() {
        let filters = |q: &str| VmQuery::new(q).filters();
        assert_eq!(
            filters(" Web-01 ").unwrap(),
            vec![("vmName", "Web-01".into())]
        );
        assert_eq!(
            filters("WEB-01.corp.example").unwrap(),
            vec![
                ("vmName", "WEB-01.corp.example".into()),
                ("vmIdentifier", "WEB-01.corp.example".into()),
                ("vmName", "WEB-01".into()),
            ]
        );
        assert_eq!(filters("10.1.2.3"), None, "no filter takes an address");
        assert_eq!(filters("fe80::1"), None);
        assert_eq!(filters("Ärzte-01"), None, "the ZVM folds ASCII case only");
    }

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
