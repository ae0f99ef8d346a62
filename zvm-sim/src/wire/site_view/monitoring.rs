//! The monitoring views of one site filled from the world: its VRAs and datastores with what they
//! hold, its volumes, VM statistics and encryption figures, and the pair's license.

use super::virtualization::datastore_device;
use super::zvm::SiteView;
use crate::decisions::{SITE_TYPE_VERSION, ZVM_VERSION};
use crate::wire::monitoring::{
    DatastoreConfigView, DatastoreHealthView, DatastoreSpaceView, DatastoreStatsView,
    DatastoreUsageView, DatastoreView, EncryptionMetricsView, LicenseDetailsView, LicenseUsageView,
    LicenseView, NamedLink, NamedView, SiteUsageView, SiteVolumeView, VmEncryptionView,
    VmStatisticsView, VolumeEncryptionView, VolumePathView, VpgEncryptionView, VraAlertsView,
    VraNetworkView, VraView, ZertoSpaceView,
};
use crate::wire::virtualization::DatastoreClusterView;
use crate::world::placement::{DatastoreLoad, Owner, Space, VraLoad};
use crate::world::vras::vra_status;
use crate::world::{SiteRole, World};

impl SiteView<'_> {
    /// The VRAs of the answering site: one per host that has one (or is having one installed).
    pub fn vras(&self) -> Vec<VraView> {
        let loads = self.world.vra_loads(self.site);
        loads
            .into_iter()
            .enumerate()
            .filter(|&(host, _)| {
                self.world.vra_status(self.site, host) != vra_status::NOT_INSTALLED
            })
            .map(|(host, load)| self.vra(host, load))
            .collect()
    }

    /// The VRA of host `host_index` of the answering site, which replicates `load`.
    fn vra(&self, host_index: usize, load: VraLoad) -> VraView {
        let site = self.world.site(self.site);
        let host = &site.hosts[host_index];
        let identifier = vra_identifier(&site.server_id, host_index);
        let appliance_on = &site.datastores[self.world.vra_datastore(self.site, host_index)];
        let network = site.ip.rsplit_once('.').map_or("10.0.0", |(net, _)| net);
        VraView {
            link: self.link(
                &format!("vras/{identifier}"),
                &identifier.to_string(),
                "VraApi",
            ),
            vra_identifier: identifier,
            vra_identifier_str: identifier.to_string(),
            vra_name: format!("Z-VRA-{}", host.name),
            status: self.world.vra_status(self.site, host_index),
            upgrade_status: 0,
            progress: 0,
            vra_version: ZVM_VERSION,
            vra_display_version: ZVM_VERSION,
            host_version: SITE_TYPE_VERSION,
            vra_network_data_api: VraNetworkView {
                configuration: "Static",
                address: format!("{network}.{}", 20 + host_index),
                range_end: String::new(),
                subnet_mask: "255.255.255.0",
                default_gateway: format!("{network}.1"),
            },
            vra_group: host.vra.settings.group.clone(),
            memory_in_gb: host.vra.settings.memory_gb,
            datastore_name: appliance_on.name.clone(),
            datastore_identifier: appliance_on.id.clone(),
            datastore_cluster_name: None,
            datastore_cluster_identifier: None,
            vm_instance_type: None,
            network_name: site.network.1.clone(),
            network_identifier: site.network.0.clone(),
            host_identifier: host.id.clone(),
            host_display_name: host.name.clone(),
            protected_counters: load.protected.into(),
            recovery_counters: load.recovery.into(),
            self_protected_vpgs: load.self_protected_vpgs,
            vra_alerts: VraAlertsView {
                vra_alerts_status: 0,
            },
            num_of_cpus: host.vra.settings.cpus,
            is_ghost: false,
            is_vaio: false,
            platform_information: None,
        }
    }

    /// The answering site's datastores.
    pub fn datastores(&self) -> Vec<DatastoreView> {
        let loads = self.world.datastore_loads(self.site, self.now);
        loads
            .into_iter()
            .enumerate()
            .map(|(index, load)| self.datastore(index, load))
            .collect()
    }

    /// Datastore `index` of the answering site, which holds `load`.
    fn datastore(&self, index: usize, load: DatastoreLoad) -> DatastoreView {
        let site = self.world.site(self.site);
        let datastore = &site.datastores[index];
        let used = load.used();
        DatastoreView {
            datastore_identifier: datastore.id.clone(),
            datastore_name: datastore.name.clone(),
            config: DatastoreConfigView {
                devices: vec![datastore_device(&site.server_id, self.site, index)],
                kind: "VMFS",
                owning_datastore_cluster: DatastoreClusterView {
                    datastore_cluster_identifier: None,
                    datastore_cluster_name: None,
                },
            },
            stats: DatastoreStatsView {
                num_vras: load.vras,
                num_incoming_vms: load.incoming_vms,
                num_outgoing_vms: load.outgoing_vms,
                availability_status: "Normal",
                usage: DatastoreUsageView {
                    datastore: DatastoreSpaceView {
                        capacity_in_bytes: load.capacity,
                        free_in_bytes: load.capacity - used,
                        used_in_bytes: used,
                        provisioned_in_bytes: load.provisioned(),
                    },
                    zerto: ZertoSpaceView {
                        protected: load.protected.into(),
                        recovery: load.recovery.into(),
                        journal: load.journal.into(),
                        scratch: load.scratch.into(),
                        appliances: load.appliances.into(),
                        unknown: Space::default().into(),
                    },
                },
            },
            health: DatastoreHealthView {
                status: "Normal",
                alerts: Vec::new(),
            },
        }
    }
}

/// The host (its position) of the VRA `VraIdentifier` `id` at `site`, whether installed or not.
pub fn vra_host(world: &World, site: SiteRole, id: &str) -> Option<usize> {
    let s = world.site(site);
    (0..s.hosts.len()).find(|&h| vra_identifier(&s.server_id, h).to_string() == id.trim())
}

/// A VRA's `VraIdentifier`: a 63-bit number from its site's vCenter and its host, stable for a seed.
fn vra_identifier(server_id: &str, host: usize) -> u64 {
    (crate::decisions::fnv1a(server_id) ^ host as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 1
}

impl SiteView<'_> {
    /// The volumes on the answering site's datastore.
    pub fn volumes(&self) -> Vec<SiteVolumeView> {
        let site = self.world.site(self.site);
        self.world
            .volumes(self.site, self.now)
            .into_iter()
            .map(|volume| {
                let owner = self.owner(volume.owner);
                let file = match volume.protected_vm {
                    Some(vm) => format!("{}_{}", self.world.vms[vm].name, volume.index),
                    None => owner.name.clone(),
                };
                let folder = volume.kind.name().to_lowercase();
                let on = &site.datastores[volume.datastore];
                let datastore = NamedView {
                    identifier: on.id.clone(),
                    name: on.name.clone(),
                };
                SiteVolumeView {
                    volume_type: volume.kind.name(),
                    is_thin_provisioned: true,
                    volume_identifier: format!("{}.{folder}.{file}", site.server_id),
                    path: VolumePathView {
                        full: format!("[{}] {folder}/{file}.vmdk", datastore.name),
                        relative: format!("{folder}/{file}.vmdk"),
                        file_name: format!("{file}.vmdk"),
                    },
                    size: volume.space.into(),
                    datastore,
                    owning_vm: owner,
                    protected_vm: volume.protected_vm.map(|vm| self.vm_named(vm)),
                    vpg: volume.vpg.map(|vpg| NamedView {
                        identifier: self.world.vpgs[vpg].id.clone(),
                        name: self.world.vpgs[vpg].name.clone(),
                    }),
                    storage_policy: None,
                }
            })
            .collect()
    }

    fn vm_named(&self, vm: usize) -> NamedView {
        let vm = &self.world.vms[vm];
        NamedView {
            identifier: vm.id.clone(),
            name: vm.name.clone(),
        }
    }

    /// A volume's owner: a VM, or the VRA VM of a host of the answering site.
    fn owner(&self, owner: Owner) -> NamedView {
        match owner {
            Owner::Vm(vm) => self.vm_named(vm),
            Owner::Vra(host) => {
                let site = self.world.site(self.site);
                NamedView {
                    identifier: format!("{}.vm-{}", site.server_id, VRA_MOREF_BASE + host),
                    name: format!("Z-VRA-{}", site.hosts[host].name),
                }
            }
        }
    }

    /// One row per VM × VPG visible from the answering site, as `/v1/vms` lists them, with their
    /// counters since the simulation began.
    pub fn vm_statistics(&self) -> Vec<VmStatisticsView> {
        let sample_time = self.now.to_wire();
        self.visible_pairs()
            .map(|(vpg, vm)| {
                let (operations, written) = self.world.vm_counters(vm, vpg, self.now);
                let remote = self.world.vpgs[vpg].protected != self.world.vpgs[vpg].recovery;
                VmStatisticsView {
                    vm_identifier: self.world.vms[vm].id.clone(),
                    vpg_identifier: self.world.vpgs[vpg].id.clone(),
                    io_operations_counter: operations,
                    write_counter_in_mbs: written,
                    sync_counter_in_mbs: 0,
                    network_traffic_counter_in_mbs: if remote { written } else { 0 },
                    sample_time: sample_time.clone(),
                }
            })
            .collect()
    }

    /// Encryption detection's metrics of every VM with a VPG visible from the answering site: what
    /// it wrote, none of it encrypted (the simulator models no attack).
    pub fn vm_encryption(&self) -> Vec<VmEncryptionView> {
        let mut by_vm: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
        for (vpg, vm) in self.visible_pairs() {
            by_vm.entry(vm).or_default().push(vpg);
        }
        by_vm
            .into_iter()
            .map(|(vm, vpgs)| {
                let written: u64 = vpgs
                    .iter()
                    .map(|&vpg| self.world.vm_counters(vm, vpg, self.now).0)
                    .sum();
                let named = self.vm_named(vm);
                VmEncryptionView {
                    link: NamedLink {
                        href: format!("{}/v1/vms/{}", self.base, named.identifier),
                        identifier: named.identifier.clone(),
                        rel: None,
                        kind: "VmApi",
                        name: named.name,
                    },
                    associated_vpgs: vpgs
                        .iter()
                        .map(|&vpg| NamedView {
                            identifier: self.world.vpgs[vpg].id.clone(),
                            name: self.world.vpgs[vpg].name.clone(),
                        })
                        .collect(),
                    encryption_metrics: EncryptionMetricsView {
                        non_encrypted_data: written,
                        encrypted_data: 0,
                        trend_change_level: 0,
                    },
                }
            })
            .collect()
    }

    /// Encryption detection's metrics of each volume of those VMs: a VM's data split evenly over
    /// its volumes.
    pub fn volume_encryption(&self) -> Vec<VolumeEncryptionView> {
        let disks = crate::decisions::VM_VOLUMES.len() as u64;
        self.vm_encryption()
            .into_iter()
            .flat_map(|vm| {
                let data = vm.encryption_metrics.non_encrypted_data;
                crate::decisions::VM_VOLUMES
                    .iter()
                    .enumerate()
                    .map(move |(disk, volume)| VolumeEncryptionView {
                        volume_identifier: format!("{}.{volume}", vm.link.identifier),
                        associated_vm: NamedView {
                            identifier: vm.link.identifier.clone(),
                            name: vm.link.name.clone(),
                        },
                        associated_vpgs: vm.associated_vpgs.clone(),
                        encryption_metrics: EncryptionMetricsView {
                            non_encrypted_data: data / disks
                                + u64::from(disk == 0) * (data % disks),
                            encrypted_data: 0,
                            trend_change_level: 0,
                        },
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Encryption detection's metrics of each VPG visible from the answering site: the sum of its
    /// VMs'.
    pub fn vpg_encryption(&self) -> Vec<VpgEncryptionView> {
        self.world
            .vpgs
            .iter()
            .enumerate()
            .filter(|(_, v)| v.visible_from(self.site))
            .map(|(index, v)| VpgEncryptionView {
                link: NamedLink {
                    href: format!("{}/v1/vpgs/{}", self.base, v.id),
                    identifier: v.id.clone(),
                    rel: None,
                    kind: "VpgApi",
                    name: v.name.clone(),
                },
                encryption_metrics: EncryptionMetricsView {
                    non_encrypted_data: v
                        .vms
                        .iter()
                        .map(|&vm| self.world.vm_counters(vm, index, self.now).0)
                        .sum(),
                    encrypted_data: 0,
                    trend_change_level: 0,
                },
            })
            .collect()
    }

    /// Every (VPG, VM) pair of a VPG visible from the answering site.
    fn visible_pairs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.world
            .vpgs
            .iter()
            .enumerate()
            .filter(|(_, v)| v.visible_from(self.site))
            .flat_map(|(index, v)| v.vms.iter().map(move |&vm| (index, vm)))
    }
}

/// VRA VMs take morefs from here up, above any VM's.
const VRA_MOREF_BASE: usize = 1_000_000;

impl SiteView<'_> {
    /// The pair's license: room for every VM of the world, and the VMs each site protects (a VM
    /// counts once, however many VPGs it is in).
    pub fn license(&self) -> LicenseView {
        let sites_usage: Vec<SiteUsageView> = crate::world::SiteRole::BOTH
            .into_iter()
            .map(|role| {
                let site = self.world.site(role);
                SiteUsageView {
                    site_identifier: site.id.clone(),
                    site_name: site.name.clone(),
                    protected_vms_count: self
                        .world
                        .vms
                        .iter()
                        .filter(|vm| vm.site == role && !vm.vpgs.is_empty())
                        .count(),
                }
            })
            .collect();
        let total = sites_usage.iter().map(|s| s.protected_vms_count).sum();
        LicenseView {
            details: self
                .world
                .site(self.site)
                .license_key
                .clone()
                .map(|key| LicenseDetailsView {
                    license_key: key,
                    license_type: "Enterprise",
                    expiry_time: LICENSE_EXPIRY,
                    max_vms: self.world.vms.len().max(1000),
                }),
            usage: LicenseUsageView {
                sites_usage,
                total_vms_count: total,
            },
        }
    }
}

/// It does not expire within any simulation.
const LICENSE_EXPIRY: &str = "2099-12-31T00:00:00.000Z";
