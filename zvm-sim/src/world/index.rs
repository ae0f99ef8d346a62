//! Lookups of VMs and VPGs by identifier and by name. A world's VMs and VPGs never change once it is
//! built or loaded (their state does, their names and identifiers do not), so the index is made
//! once and a filtered listing of one VM among 100,000 reads that VM's rows, not every row.
//!
//! Keys are ASCII-lowercased: the API matches names and identifiers with `eq_ignore_ascii_case`, and
//! two strings are equal that way exactly when their ASCII-lowercased forms are.

use std::collections::HashMap;

use super::inventory::{Vm, Vpg};

/// Positions in the world's `vms` and `vpgs`, by key.
#[derive(Debug, Default)]
pub(crate) struct Index {
    vms_by_id: HashMap<String, Vec<usize>>,
    vms_by_name: HashMap<String, Vec<usize>>,
    vpg_by_id: HashMap<String, usize>,
    vpg_by_name: HashMap<String, usize>,
}

impl Index {
    /// The index of these VMs and VPGs; where two share a key, the first is the one found, as a
    /// scan from the start would find it.
    pub(crate) fn new(vms: &[Vm], vpgs: &[Vpg]) -> Index {
        let mut index = Index::default();
        for (position, vm) in vms.iter().enumerate() {
            index.add_vm(position, vm);
        }
        for (position, vpg) in vpgs.iter().enumerate().filter(|(_, v)| !v.deleted) {
            index.vpg_by_id.entry(key(&vpg.id)).or_insert(position);
            index.vpg_by_name.entry(key(&vpg.name)).or_insert(position);
        }
        index
    }

    /// Indexes the VM at `position` (a new VM goes after every other, so each list stays in the
    /// world's order).
    pub(crate) fn add_vm(&mut self, position: usize, vm: &Vm) {
        if vm.removed {
            return;
        }
        self.vms_by_id
            .entry(key(&vm.id))
            .or_default()
            .push(position);
        self.vms_by_name
            .entry(key(&vm.name))
            .or_default()
            .push(position);
    }

    /// The VMs with this identifier (one, in any world the simulator builds), in the world's order.
    pub(crate) fn vms_with_id(&self, id: &str) -> &[usize] {
        self.vms_by_id.get(&key(id)).map_or(&[], Vec::as_slice)
    }

    /// The VMs with this name, in the world's order.
    pub(crate) fn vms_named(&self, name: &str) -> &[usize] {
        self.vms_by_name.get(&key(name)).map_or(&[], Vec::as_slice)
    }

    /// The VPG with this identifier.
    pub(crate) fn vpg_by_id(&self, id: &str) -> Option<usize> {
        self.vpg_by_id.get(&key(id)).copied()
    }

    /// The VPG with this name.
    pub(crate) fn vpg_by_name(&self, name: &str) -> Option<usize> {
        self.vpg_by_name.get(&key(name)).copied()
    }
}

fn key(text: &str) -> String {
    text.to_ascii_lowercase()
}
