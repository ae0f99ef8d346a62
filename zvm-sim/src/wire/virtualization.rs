//! A virtualization site's inventory as its ZVM reads it from vCenter (`/v1/virtualizationsites/
//! {id}/hosts`, `hostclusters`, `datastores`, `datastoreclusters`, `networks`, `folders`,
//! `resourcepools`, `devices`), and the service profiles a ZVM offers. Shapes are SW10's, keys as
//! ZertoApiWrapper's recorded answers have them (note `ResourcepoolName`); identifiers are
//! `<vCenter server GUID>.<moref>`. Each site is one cluster of its hosts, in one resource pool,
//! with its datastores (one device each) and one network.

use serde::Serialize;

use super::zvm::Link;

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
