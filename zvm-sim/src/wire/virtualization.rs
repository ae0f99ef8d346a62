//! A virtualization site's inventory as its ZVM reads it from vCenter (`/v1/virtualizationsites/
//! {id}/hosts`, `hostclusters`, `datastores`, `datastoreclusters`, `networks`, `folders`,
//! `resourcepools`, `devices`), and the service profiles a ZVM offers. Shapes are SW10's, keys as
//! ZertoApiWrapper's recorded answers have them (note `ResourcepoolName`); identifiers are
//! `<vCenter server GUID>.<moref>`. Each site is one cluster of its hosts, in one resource pool,
//! with its datastores (one device each) and one network.

use serde::Serialize;

use super::site_view::SiteView;
use super::zvm::Link;
use crate::decisions::SITE_TYPE_VERSION;
use crate::world::SiteRole;

/// `HostNativeApi`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct HostView {
    pub host_identifier: String,
    pub host_version: &'static str,
    pub virtualization_host_name: String,
    pub connection_status: &'static str,
    pub associated_datastores: Vec<NativeDatastoreView>,
    pub associated_networks: Vec<NativeNetworkView>,
}

/// A host as a cluster lists it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ClusterHostView {
    pub host_identifier: String,
    pub host_version: &'static str,
    pub virtualization_host_name: String,
    pub connection_status: &'static str,
}

/// `HostClusterNativeApi`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct HostClusterView {
    pub cluster_identifier: String,
    pub virtualization_cluster_name: String,
    pub associated_hosts: Vec<ClusterHostView>,
}

/// `DatastoreNativeApi`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct NativeDatastoreView {
    pub datastore_name: String,
    pub datastore_identifier: String,
    pub owning_datastore_cluster: DatastoreClusterView,
}

/// The datastore cluster a datastore belongs to (none here: each site's datastores stand alone).
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DatastoreClusterView {
    pub datastore_cluster_identifier: Option<String>,
    pub datastore_cluster_name: Option<String>,
}

/// `NetworkNativeApi`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct NativeNetworkView {
    pub virtualization_network_name: String,
    pub network_identifier: String,
}

/// `FolderNativeApi`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct FolderView {
    pub folder_name: &'static str,
    pub folder_identifier: String,
}

/// `ResourcePoolNativeApi`, with SW10's spelling of its name key.
#[derive(Debug, Serialize)]
pub struct ResourcePoolView {
    #[serde(rename = "ResourcepoolName")]
    pub name: &'static str,
    #[serde(rename = "ResourcePoolIdentifier")]
    pub identifier: String,
}

/// `DeviceNativeApi`: a disk device a host sees.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DeviceView {
    pub device_identifier: String,
    pub datastore_identifier: Option<String>,
    pub device_name: String,
    pub size_in_bytes: u64,
    pub host_identifiers: Vec<String>,
    pub vm_identifier: Option<String>,
}

/// `ServiceProfileApi`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ServiceProfileView {
    pub link: Link,
    pub service_profile_identifier: &'static str,
    pub service_profile_name: &'static str,
    pub rpo: &'static str,
    pub history: &'static str,
    pub max_journal_size_in_percent: u32,
    pub test_interval: &'static str,
    pub description: &'static str,
    pub journal_warning_threshold_in_percent: u32,
}

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
pub fn datastore_device(server_id: &str, site: SiteRole, index: usize) -> String {
    format!("{server_id}.naa.6000c29{:025x}", site.index() + 2 * index)
}
