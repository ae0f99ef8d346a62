//! A VM query checked before anything is sent, and the one rule by which a row or an inventory's
//! VM answers to it.

use crate::error::RewindError;
use crate::vm::VmQuery;
use crate::zvm::inventory::Inventory;
use crate::zvm::wire::{SiteVm, VmRow};

/// Checks a VM query before anything is sent.
pub fn validate_query(query: &str) -> Result<&str, RewindError> {
    let q = query.trim();
    if q.is_empty() {
        return Err(RewindError::InvalidInput {
            field: "vm",
            problem: "it is empty; give a VM name, host name, IP address or vmIdentifier".into(),
        });
    }
    if q.chars().count() > 255 {
        return Err(RewindError::InvalidInput {
            field: "vm",
            problem: "it is longer than 255 characters; give a VM name, host name or vmIdentifier"
                .into(),
        });
    }
    if q.chars().any(char::is_control) {
        return Err(RewindError::InvalidInput {
            field: "vm",
            problem: "it contains a control character; give the VM's name as Zerto shows it".into(),
        });
    }
    Ok(q)
}

/// Whether a row of `/v1/vms` is a VM `query` means.
pub(super) fn row_matches(query: &VmQuery, row: &VmRow) -> bool {
    query.matches(
        row.vm_identifier.as_deref(),
        row.vm_name.as_deref(),
        row.ip_addresses(),
    )
}

/// The VMs of a site's inventory that `query` means.
pub(super) fn matching<'a>(
    inventory: &'a Inventory,
    query: &VmQuery,
) -> impl Iterator<Item = &'a SiteVm> {
    let candidates = inventory.with_keys(query.keys());
    candidates
        .into_iter()
        .filter(move |v| site_vm_matches(query, v))
}

/// Whether a VM of a site's inventory is one `query` means.
pub(super) fn site_vm_matches(query: &VmQuery, vm: &SiteVm) -> bool {
    query.matches(vm.vm_identifier.as_deref(), vm.vm_name.as_deref(), [])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zvm::wire::VmRow;

    #[test]
    fn host_names_match_by_first_label_and_ips_by_address() {
        let row: VmRow = serde_json::from_str(
            r#"{"VmIdentifier":"s.vm-1","VmName":"Web-01","VmNetworkInformation":{"NetworkAdapters":[{"IpAddresses":["10.1.2.3"]}]}}"#,
        )
        .unwrap();
        assert!(row_matches(&VmQuery::new("web-01"), &row));
        assert!(row_matches(&VmQuery::new("WEB-01.corp.example.com"), &row));
        assert!(row_matches(&VmQuery::new("s.vm-1"), &row));
        assert!(row_matches(&VmQuery::new("10.1.2.3"), &row));
        assert!(!row_matches(&VmQuery::new("10.1.2.4"), &row));
        assert!(!row_matches(&VmQuery::new("web-0"), &row));
        assert!(!row_matches(&VmQuery::new("web-01x.corp"), &row));
    }

    fn named(name: &str) -> VmRow {
        serde_json::from_value(serde_json::json!({ "VmIdentifier": "s.vm-7", "VmName": name }))
            .unwrap()
    }

    #[test]
    fn a_non_ascii_name_matches_whatever_its_case() {
        let row = named("Ärzte-Öffentlich-01");
        for query in [
            "ärzte-öffentlich-01",
            "ÄRZTE-ÖFFENTLICH-01",
            "Ärzte-öffentlich-01.praxis.example",
        ] {
            assert!(row_matches(&VmQuery::new(query), &row), "{query}");
        }
        assert!(!row_matches(&VmQuery::new("arzte-offentlich-01"), &row));
        // A final capital sigma lowercases to ς, as the name's own lowercase has it.
        let greek = named("ΚΌΣΜΟΣ");
        assert!(row_matches(&VmQuery::new("κόσμος"), &greek));
        assert!(row_matches(&VmQuery::new("ΚΌΣΜΟΣ"), &greek));
        assert!(!row_matches(&VmQuery::new("κόσμ"), &greek));
        // The Kelvin sign lowercases to an ASCII k.
        assert!(row_matches(
            &VmQuery::new("kube-01"),
            &named("\u{212A}ube-01")
        ));
        assert!(row_matches(
            &VmQuery::new("\u{212A}UBE-01"),
            &named("kube-01")
        ));
    }

    #[test]
    fn queries_are_checked_before_anything_is_sent() {
        assert!(matches!(
            validate_query("  "),
            Err(RewindError::InvalidInput { field: "vm", .. })
        ));
        assert!(matches!(
            validate_query("a\nb"),
            Err(RewindError::InvalidInput { field: "vm", .. })
        ));
        assert_eq!(validate_query(" web-01 ").unwrap(), "web-01");
    }
}
