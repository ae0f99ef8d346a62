//! Where replication puts things, so that the monitoring figures add up: every VM runs on one host
//! of its site, whose VRA replicates it; every replica (a VM in a VPG) is kept on the host of the
//! VPG's recovery site with the same position, by that host's VRA. A VM's disks are on one datastore
//! of its site, and its replicas and journals on one of each recovery site, chosen by its
//! identifier; a VRA's appliance is on one chosen by its host. A VRA's counters and a datastore's
//! usage are counted from these, never drawn.

use std::collections::BTreeSet;

use super::clock::SimTime;
use super::ids::SiteRole;
use super::model::World;
use crate::decisions::{
    DATASTORE_CAPACITY_BYTES, VM_VOLUMES, VRA_PROVISIONED_BYTES, VRA_USED_BYTES,
};

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
    /// Each kind of space on it.
    fn spaces(&self) -> [Space; 6] {
        [
            self.protected,
            self.recovery,
            self.journal,
            self.scratch,
            self.appliances,
            self.unprotected,
        ]
    }

    /// Everything on it.
    pub fn used(&self) -> u64 {
        self.spaces().iter().map(|s| s.used).sum()
    }

    /// Everything provisioned on it.
    pub fn provisioned(&self) -> u64 {
        self.spaces().iter().map(|s| s.provisioned).sum()
    }
}

impl World {
    /// The position among its site's hosts of the host a VM runs on at `site` (its own site, or a
    /// VPG's recovery site for its replica).
    pub fn host_at(&self, vm: usize, site: SiteRole) -> usize {
        let v = &self.vms[vm];
        let hosts = self.site(site).hosts.len();
        match v.recovery_host.filter(|_| site != v.site) {
            Some(host) => host % hosts,
            None => v.host % hosts,
        }
    }

    /// `JournalUsedStorageMb` of a VM in a VPG: a 64th of its used storage for a full history, in
    /// proportion to the history the journal holds now (none without checkpoints).
    pub fn journal_used_mb(&self, vm: usize, vpg: usize, now: SimTime) -> u64 {
        let journal = &self.vpgs[vpg].journal;
        let configured = journal.history_minutes().max(1) as u64;
        let held = journal
            .earliest(now)
            .map_or(0, |c| (now.millis_since(c.at).max(0) / 60_000) as u64);
        // A burst of writes the window holds takes room too, in proportion to its size.
        let burst = (journal.burst_ms(now) / 60_000) as u64;
        self.vms[vm].used_mb / 64 * (held.min(configured) + burst) / configured
    }

    /// What the VRA of each host at `site` replicates, by host position: one pass over every
    /// replica, whatever the number of hosts.
    pub fn vra_loads(&self, site: SiteRole) -> Vec<VraLoad> {
        let hosts = self.site(site).hosts.len();
        let mut protected: Vec<(BTreeSet<usize>, BTreeSet<usize>)> =
            vec![Default::default(); hosts];
        let mut recovery_vpgs: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); hosts];
        let mut loads = vec![VraLoad::default(); hosts];
        for (index, vpg) in self.vpgs.iter().enumerate() {
            let mut own = BTreeSet::new();
            for &vm in &vpg.vms {
                let host = self.host_at(vm, site);
                if vpg.protected == site {
                    protected[host].0.insert(index);
                    protected[host].1.insert(vm);
                    own.insert(host);
                }
                if vpg.recovery == site {
                    recovery_vpgs[host].insert(index);
                    loads[host].recovery.vms += 1;
                    loads[host].recovery.volumes += VM_VOLUMES.len();
                }
            }
            if vpg.recovery == site {
                own.iter()
                    .for_each(|&host| loads[host].self_protected_vpgs += 1);
            }
        }
        for (host, load) in loads.iter_mut().enumerate() {
            let (vpgs, vms) = &protected[host];
            load.protected = Counters {
                vpgs: vpgs.len(),
                vms: vms.len(),
                volumes: vms.len() * VM_VOLUMES.len(),
            };
            load.recovery.vpgs = recovery_vpgs[host].len();
        }
        loads
    }

    /// The position among the datastores of `site` of the one holding a VM's disks there: its
    /// own (at its site) or its replica's and journal's (at a recovery site). Drawn from its
    /// identifier, so it costs no draw from the seed's streams.
    pub fn datastore_of(&self, vm: usize, site: SiteRole) -> usize {
        let count = self.site(site).datastores.len().max(1) as u64;
        (crate::decisions::fnv1a(&self.vms[vm].id) % count) as usize
    }

    /// The position of the datastore that holds the appliance of host `host`'s VRA.
    pub fn vra_datastore(&self, site: SiteRole, host: usize) -> usize {
        host % self.site(site).datastores.len().max(1)
    }

    /// What each datastore of `site` holds at `now`, by position: the sum of its
    /// [`World::volumes`] and the VMs on it that no VPG protects, in one pass over them.
    pub fn datastore_loads(&self, site: SiteRole, now: SimTime) -> Vec<DatastoreLoad> {
        let count = self.site(site).datastores.len();
        let mut loads = vec![DatastoreLoad::default(); count];
        for host in 0..self.site(site).hosts.len() {
            loads[self.vra_datastore(site, host)].vras += 1;
        }
        for (index, vm) in self
            .vms
            .iter()
            .enumerate()
            .filter(|(_, vm)| vm.site == site)
        {
            let load = &mut loads[self.datastore_of(index, site)];
            if vm.vpgs.is_empty() {
                load.unprotected.add(vm.used_mb, vm.provisioned_mb);
            } else {
                load.outgoing_vms += 1;
            }
        }
        for volume in self.volumes(site, now) {
            let load = &mut loads[volume.datastore];
            let into = match volume.kind {
                VolumeKind::Protected => &mut load.protected,
                VolumeKind::Recovery => &mut load.recovery,
                VolumeKind::Journal => {
                    // Each replica kept here has one journal volume.
                    load.incoming_vms += 1;
                    &mut load.journal
                }
                VolumeKind::Scratch => &mut load.scratch,
                VolumeKind::Appliance => &mut load.appliances,
            };
            into.used += volume.space.used;
            into.provisioned += volume.space.provisioned;
        }
        for load in &mut loads {
            // Sized to what it holds and a third more.
            let tib = 1u64 << 40;
            load.capacity = DATASTORE_CAPACITY_BYTES.max((load.used() * 4 / 3).div_ceil(tib) * tib);
        }
        loads
    }
}

/// The kind of a volume (`VolumeType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VolumeKind {
    Protected,
    Recovery,
    Journal,
    Scratch,
    Appliance,
}

impl VolumeKind {
    /// Its name on the wire.
    pub fn name(self) -> &'static str {
        match self {
            VolumeKind::Protected => "Protected",
            VolumeKind::Recovery => "Recovery",
            VolumeKind::Journal => "Journal",
            VolumeKind::Scratch => "Scratch",
            VolumeKind::Appliance => "Appliance",
        }
    }
}

/// Who owns a volume: a VM of the world, or the VRA of a host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    Vm(usize),
    Vra(usize),
}

/// One volume on a site's datastore.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Volume {
    pub kind: VolumeKind,
    /// Its position among the VM's volumes ([`VM_VOLUMES`]), 0 for a journal or an appliance.
    pub index: usize,
    pub owner: Owner,
    /// The VM it protects or replicates, and the VPG it belongs to.
    pub protected_vm: Option<usize>,
    pub vpg: Option<usize>,
    pub space: Space,
    /// The position of its datastore among its site's.
    pub datastore: usize,
}

/// `size_mb` split over a VM's volumes: the first takes the remainder.
fn share_mb(size_mb: u64, index: usize) -> u64 {
    let n = VM_VOLUMES.len() as u64;
    size_mb / n + if index == 0 { size_mb % n } else { 0 }
}

impl World {
    /// Every volume on the datastores of `site`: what [`World::datastore_loads`] adds up.
    pub fn volumes(&self, site: SiteRole, now: SimTime) -> Vec<Volume> {
        let mut volumes = Vec::new();
        for (index, vm) in self
            .vms
            .iter()
            .enumerate()
            .filter(|(_, vm)| vm.site == site)
        {
            let Some(&vpg) = vm.vpgs.first() else {
                continue;
            };
            for i in 0..VM_VOLUMES.len() {
                let mut space = Space::default();
                space.add(share_mb(vm.used_mb, i), share_mb(vm.provisioned_mb, i));
                let owner = Owner::Vm(index);
                volumes.push(Volume {
                    kind: VolumeKind::Protected,
                    index: i,
                    owner,
                    protected_vm: Some(index),
                    vpg: Some(vpg),
                    space,
                    datastore: self.datastore_of(index, site),
                });
            }
        }
        for (vpg_index, vpg) in self
            .vpgs
            .iter()
            .enumerate()
            .filter(|(_, v)| v.recovery == site)
        {
            for &vm in &vpg.vms {
                let v = &self.vms[vm];
                let owner = Owner::Vra(self.host_at(vm, site));
                let datastore = self.datastore_of(vm, site);
                let of = |kind, index, space| Volume {
                    kind,
                    index,
                    owner,
                    protected_vm: Some(vm),
                    vpg: Some(vpg_index),
                    space,
                    datastore,
                };
                for i in 0..VM_VOLUMES.len() {
                    let mut space = Space::default();
                    space.add(share_mb(v.used_mb, i), share_mb(v.provisioned_mb, i));
                    volumes.push(of(VolumeKind::Recovery, i, space));
                }
                let journal = self.journal_used_mb(vm, vpg_index, now);
                let mut space = Space::default();
                space.add(journal, journal);
                volumes.push(of(VolumeKind::Journal, 0, space));
                if vpg.test.is_some() || vpg.clone_task.is_some() {
                    let mut space = Space::default();
                    space.add(v.used_mb / 16, v.used_mb / 16);
                    volumes.push(of(VolumeKind::Scratch, 0, space));
                }
            }
        }
        for host in 0..self.site(site).hosts.len() {
            let space = Space {
                used: VRA_USED_BYTES,
                provisioned: VRA_PROVISIONED_BYTES,
            };
            volumes.push(Volume {
                kind: VolumeKind::Appliance,
                index: 0,
                owner: Owner::Vra(host),
                protected_vm: None,
                vpg: None,
                space,
                datastore: self.vra_datastore(site, host),
            });
        }
        volumes
    }

    /// A VM's cumulative counters in a VPG since the simulation began: I/O operations and MB
    /// written, from its load and the time the VPG has written checkpoints.
    pub fn vm_counters(&self, vm: usize, vpg: usize, now: SimTime) -> (u64, u64) {
        let (iops, throughput) = crate::decisions::vm_load(&self.vms[vm].id);
        let seconds = self.vpgs[vpg].journal.written_ms(now) as f64 / 1000.0;
        (
            (f64::from(iops) * seconds) as u64,
            (throughput * seconds) as u64,
        )
    }
}
