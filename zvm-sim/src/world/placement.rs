//! Where replication puts things, so that the monitoring figures add up: every VM runs on one host
//! of its site, whose VRA replicates it; every replica (a VM in a VPG) is kept on the host of the
//! VPG's recovery site with the same position, by that host's VRA; each site has one datastore,
//! which holds its own VMs, the replicas and journals of the VPGs that recover to it, and its VRAs.
//! A VRA's counters and the datastore's usage are counted from these, never drawn.

use std::collections::BTreeSet;

use crate::decisions::{
    DATASTORE_CAPACITY_BYTES, VM_VOLUMES, VRA_PROVISIONED_BYTES, VRA_USED_BYTES,
};
use crate::world::clock::SimTime;
use crate::world::{SiteRole, World};

const MIB: u64 = 1024 * 1024;

/// `{Vpgs, Vms, Volumes}` of a VRA.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    pub vpgs: usize,
    pub vms: usize,
    pub volumes: usize,
}

/// What one VRA replicates: as a protected-site VRA, as a recovery-site VRA, and the VPGs that
/// replicate within its own site.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VraLoad {
    pub protected: Counters,
    pub recovery: Counters,
    pub self_protected_vpgs: usize,
}

/// Used and provisioned bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Space {
    pub used: u64,
    pub provisioned: u64,
}

impl Space {
    fn add(&mut self, used_mb: u64, provisioned_mb: u64) {
        self.used += used_mb * MIB;
        self.provisioned += provisioned_mb * MIB;
    }
}

/// What a site's datastore holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DatastoreLoad {
    /// Its own VMs that a VPG protects (`NumOutgoingVMs`).
    pub outgoing_vms: usize,
    /// Replicas of VPGs that recover to it (`NumIncomingVMs`).
    pub incoming_vms: usize,
    pub vras: usize,
    pub protected: Space,
    pub recovery: Space,
    pub journal: Space,
    pub scratch: Space,
    pub appliances: Space,
    /// Its VMs that no VPG protects.
    pub unprotected: Space,
    pub capacity: u64,
}

impl DatastoreLoad {
    /// Everything on it.
    pub fn used(&self) -> u64 {
        [
            self.protected,
            self.recovery,
            self.journal,
            self.scratch,
            self.appliances,
            self.unprotected,
        ]
        .iter()
        .map(|s| s.used)
        .sum()
    }

    /// Everything provisioned on it.
    pub fn provisioned(&self) -> u64 {
        [
            self.protected,
            self.recovery,
            self.journal,
            self.scratch,
            self.appliances,
            self.unprotected,
        ]
        .iter()
        .map(|s| s.provisioned)
        .sum()
    }
}

impl World {
    /// The position among its site's hosts of the host a VM runs on at `site` (its own site, or a
    /// VPG's recovery site for its replica).
    pub fn host_at(&self, vm: usize, site: SiteRole) -> usize {
        self.vms[vm].host % self.site(site).hosts.len()
    }

    /// `JournalUsedStorageMb` of a VM in a VPG: a 64th of its used storage for a full history, in
    /// proportion to the history the journal holds now (none without checkpoints).
    pub fn journal_used_mb(&self, vm: usize, vpg: usize, now: SimTime) -> u64 {
        let journal = &self.vpgs[vpg].journal;
        let configured = journal.history_minutes().max(1) as u64;
        let held = journal
            .earliest(now)
            .map_or(0, |c| (now.millis_since(c.at).max(0) / 60_000) as u64);
        self.vms[vm].used_mb / 64 * held.min(configured) / configured
    }

    /// What the VRA of host `host` at `site` replicates.
    pub fn vra_load(&self, site: SiteRole, host: usize) -> VraLoad {
        let (mut protected_vpgs, mut protected_vms) = (BTreeSet::new(), BTreeSet::new());
        let mut recovery_vpgs = BTreeSet::new();
        let mut load = VraLoad::default();
        for (index, vpg) in self.vpgs.iter().enumerate() {
            let mut own = false;
            for &vm in &vpg.vms {
                if vpg.protected == site && self.host_at(vm, site) == host {
                    protected_vpgs.insert(index);
                    protected_vms.insert(vm);
                    own = true;
                }
                if vpg.recovery == site && self.host_at(vm, site) == host {
                    recovery_vpgs.insert(index);
                    load.recovery.vms += 1;
                    load.recovery.volumes += VM_VOLUMES.len();
                }
            }
            if own && vpg.recovery == site {
                load.self_protected_vpgs += 1;
            }
        }
        load.protected = Counters {
            vpgs: protected_vpgs.len(),
            vms: protected_vms.len(),
            volumes: protected_vms.len() * VM_VOLUMES.len(),
        };
        load.recovery.vpgs = recovery_vpgs.len();
        load
    }

    /// What the datastore of `site` holds at `now`.
    pub fn datastore_load(&self, site: SiteRole, now: SimTime) -> DatastoreLoad {
        let mut load = DatastoreLoad {
            vras: self.site(site).hosts.len(),
            ..DatastoreLoad::default()
        };
        load.appliances = Space {
            used: VRA_USED_BYTES * load.vras as u64,
            provisioned: VRA_PROVISIONED_BYTES * load.vras as u64,
        };
        for vm in self.vms.iter().filter(|vm| vm.site == site) {
            if vm.vpgs.is_empty() {
                load.unprotected.add(vm.used_mb, vm.provisioned_mb);
            } else {
                load.outgoing_vms += 1;
                load.protected.add(vm.used_mb, vm.provisioned_mb);
            }
        }
        for (index, vpg) in self
            .vpgs
            .iter()
            .enumerate()
            .filter(|(_, v)| v.recovery == site)
        {
            for &vm in &vpg.vms {
                let v = &self.vms[vm];
                load.incoming_vms += 1;
                load.recovery.add(v.used_mb, v.provisioned_mb);
                let journal = self.journal_used_mb(vm, index, now);
                load.journal.add(journal, journal);
                if vpg.test.is_some() || vpg.clone_task.is_some() {
                    // A failover test or a clone writes into scratch volumes while it runs.
                    load.scratch.add(v.used_mb / 16, v.used_mb / 16);
                }
            }
        }
        // One datastore stands for all of a site's: sized to what it holds and a third more.
        let tib = 1u64 << 40;
        load.capacity = DATASTORE_CAPACITY_BYTES.max((load.used() * 4 / 3).div_ceil(tib) * tib);
        load
    }
}
