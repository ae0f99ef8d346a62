//! A site's inventory (`/v1/virtualizationsites/{id}/vms`: every VM it has, protected or not) with an
//! index by lowercase name and identifier. A lookup asks it for one query's VMs on every call, and a
//! long-lived client keeps it: scanning 75,000 names on each lookup was most of a lookup's cost at
//! 100,000 VMs, while the index is built once per read.

use std::collections::HashMap;

use super::wire::SiteVm;

/// A site's VMs, and where each lowercase name and identifier is among them.
#[derive(Debug, Default)]
pub struct Inventory {
    vms: Vec<SiteVm>,
    by_key: HashMap<String, Vec<usize>>,
}

impl Inventory {
    /// Indexes `vms`.
    pub fn new(vms: Vec<SiteVm>) -> Inventory {
        let mut by_key: HashMap<String, Vec<usize>> = HashMap::with_capacity(vms.len() * 2);
        for (i, vm) in vms.iter().enumerate() {
            for key in [&vm.vm_name, &vm.vm_identifier].into_iter().flatten() {
                let places = by_key.entry(key.to_lowercase()).or_default();
                if places.last() != Some(&i) {
                    places.push(i);
                }
            }
        }
        Inventory { vms, by_key }
    }

    /// How many VMs the site has.
    pub fn len(&self) -> usize {
        self.vms.len()
    }

    /// Whether the site has no VM.
    pub fn is_empty(&self) -> bool {
        self.vms.is_empty()
    }

    /// The names of its VMs.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.vms.iter().filter_map(|v| v.vm_name.as_deref())
    }

    /// The VMs whose lowercase name or identifier is one of `keys` (each already lowercase), each
    /// once, in the inventory's order.
    pub fn with_keys<'a>(&self, keys: impl IntoIterator<Item = &'a str>) -> Vec<&SiteVm> {
        let mut places: Vec<usize> = keys
            .into_iter()
            .filter_map(|k| self.by_key.get(k))
            .flatten()
            .copied()
            .collect();
        places.sort_unstable();
        places.dedup();
        places.into_iter().map(|i| &self.vms[i]).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vm(id: &str, name: &str) -> SiteVm {
        SiteVm {
            vm_identifier: Some(id.into()),
            vm_name: Some(name.into()),
        }
    }

    #[test]
    fn a_vm_is_found_by_its_lowercase_name_or_identifier_once_and_in_order() {
        let inventory = Inventory::new(vec![
            vm("s.vm-1", "Web-01"),
            vm("s.vm-2", "ÄRZTE-01"),
            vm("s.vm-3", "web-01"),
            vm("s.vm-4", "s.vm-4"),
        ]);
        assert_eq!(inventory.len(), 4);
        let ids = |keys: &[&str]| -> Vec<String> {
            inventory
                .with_keys(keys.iter().copied())
                .into_iter()
                .filter_map(|v| v.vm_identifier.clone())
                .collect()
        };
        assert_eq!(ids(&["web-01"]), ["s.vm-1", "s.vm-3"]);
        assert_eq!(ids(&["ärzte-01"]), ["s.vm-2"]);
        assert_eq!(ids(&["s.vm-3", "web-01"]), ["s.vm-1", "s.vm-3"]);
        assert_eq!(
            ids(&["s.vm-4"]),
            ["s.vm-4"],
            "a name that is its identifier, once"
        );
        assert!(ids(&["WEB-01"]).is_empty(), "keys are given lowercase");
    }
}
