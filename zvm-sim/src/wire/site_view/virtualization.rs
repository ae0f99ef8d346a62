//! The hypervisor's inventory as one site shows it, filled from the world: hosts, the one cluster,
//! datastores, networks, folders, resource pools, devices and the one service profile.

use super::zvm::SiteView;
use crate::decisions::SITE_TYPE_VERSION;
use crate::wire::virtualization::{
    ClusterHostView, DatastoreClusterView, DeviceView, FolderView, HostClusterView, HostView,
    NativeDatastoreView, NativeNetworkView, ResourcePoolView, ServiceProfileView,
};
use crate::world::SiteRole;

/// The one service profile a ZVM without Zerto Cloud Manager offers.
const SYSTEM_PROFILE: &str = "System Service Profile";

/// Its identifier.
const SYSTEM_PROFILE_ID: &str = "ServiceProfile.System";

/// vSphere's moref of a site's one cluster, resource pool and folders.
const CLUSTER_MOREF: &str = "domain-c7";

/// The `ClusterIdentifier` of the one cluster of `site`.
pub fn cluster_identifier(site: &crate::world::Site) -> String {
    format!("{}.{CLUSTER_MOREF}", site.server_id)
}

const RESOURCE_POOL_MOREF: &str = "resgroup-8";

const FOLDERS: [(&str, &str); 2] = [
    ("/", "group-v3"),
    ("Discovered virtual machine", "group-v22"),
];

impl SiteView<'_> {
    fn server_id(&self, site: SiteRole) -> &str {
        &self.world.site(site).server_id
    }

    /// The hosts of `site`.
    pub fn hosts(&self, site: SiteRole) -> Vec<HostView> {
        self.world
            .site(site)
            .hosts
            .iter()
            .map(|host| HostView {
                host_identifier: host.id.clone(),
                host_version: SITE_TYPE_VERSION,
                virtualization_host_name: host.name.clone(),
                connection_status: "Connected",
                associated_datastores: self.native_datastores(site),
                associated_networks: self.networks(site),
            })
            .collect()
    }

    /// The one cluster of `site`, of all its hosts.
    pub fn host_clusters(&self, site: SiteRole) -> Vec<HostClusterView> {
        let s = self.world.site(site);
        vec![HostClusterView {
            cluster_identifier: cluster_identifier(s),
            virtualization_cluster_name: format!("{}-Cluster", s.name),
            associated_hosts: s
                .hosts
                .iter()
                .map(|host| ClusterHostView {
                    host_identifier: host.id.clone(),
                    host_version: SITE_TYPE_VERSION,
                    virtualization_host_name: host.name.clone(),
                    connection_status: "Connected",
                })
                .collect(),
        }]
    }

    /// The datastores of `site`, in no datastore cluster.
    pub fn native_datastores(&self, site: SiteRole) -> Vec<NativeDatastoreView> {
        self.world
            .site(site)
            .datastores
            .iter()
            .map(|datastore| NativeDatastoreView {
                datastore_name: datastore.name.clone(),
                datastore_identifier: datastore.id.clone(),
                owning_datastore_cluster: DatastoreClusterView {
                    datastore_cluster_identifier: None,
                    datastore_cluster_name: None,
                },
            })
            .collect()
    }

    /// The networks of `site`.
    pub fn networks(&self, site: SiteRole) -> Vec<NativeNetworkView> {
        let (identifier, name) = &self.world.site(site).network;
        vec![NativeNetworkView {
            virtualization_network_name: name.clone(),
            network_identifier: identifier.clone(),
        }]
    }

    /// The VM folders of `site`.
    pub fn folders(&self, site: SiteRole) -> Vec<FolderView> {
        FOLDERS
            .iter()
            .map(|(name, moref)| FolderView {
                folder_name: name,
                folder_identifier: format!("{}.{moref}", self.server_id(site)),
            })
            .collect()
    }

    /// The resource pool of `site`'s cluster.
    pub fn resource_pools(&self, site: SiteRole) -> Vec<ResourcePoolView> {
        vec![ResourcePoolView {
            name: "Resources",
            identifier: format!("{}.{RESOURCE_POOL_MOREF}", self.server_id(site)),
        }]
    }

    /// The disk devices of `site`: one behind each datastore, which every host sees.
    pub fn devices(&self, site: SiteRole) -> Vec<DeviceView> {
        let s = self.world.site(site);
        let loads = self.world.datastore_loads(site, self.now);
        s.datastores
            .iter()
            .enumerate()
            .map(|(index, datastore)| {
                let device = datastore_device(&s.server_id, site, index);
                let naa = device.rsplit_once('.').map_or("", |(_, naa)| naa);
                DeviceView {
                    device_name: format!("VMware Fibre Channel Disk ({naa})"),
                    device_identifier: device.clone(),
                    datastore_identifier: Some(datastore.id.clone()),
                    size_in_bytes: loads[index].capacity,
                    host_identifiers: s.hosts.iter().map(|h| h.id.clone()).collect(),
                    vm_identifier: None,
                }
            })
            .collect()
    }

    /// The service profiles: the system one.
    pub fn service_profiles(&self) -> Vec<ServiceProfileView> {
        vec![ServiceProfileView {
            link: self.link(
                &format!("serviceprofiles/{SYSTEM_PROFILE_ID}"),
                SYSTEM_PROFILE_ID,
                "ServiceProfileApi",
            ),
            service_profile_identifier: SYSTEM_PROFILE_ID,
            service_profile_name: SYSTEM_PROFILE,
            rpo: "00:05:00",
            history: "1.00:00:00",
            max_journal_size_in_percent: 100,
            test_interval: "180.00:00:00",
            description: "The default settings of a VPG.",
            journal_warning_threshold_in_percent: 75,
        }]
    }
}

/// The device (`<server>.naa.<id>`) that backs datastore `index` of a site.
pub(super) fn datastore_device(server_id: &str, site: SiteRole, index: usize) -> String {
    format!("{server_id}.naa.6000c29{:025x}", site.index() + 2 * index)
}
