//! The read-only surface public ZVM clients list (issue 18: Zerto's Python SDK, the Prometheus
//! exporter): every shape and filter they rely on, pinned by key so a renamed field fails here; and
//! the paths the SDK calls that ZVM 10's API does not have, which answer 404 as an appliance's
//! router does.

use std::collections::BTreeSet;

use reqwest::StatusCode;
use serde_json::{Value, json};
use zvm_sim::test_kit::{Site, spawn_frozen, texts};

/// The keys of an object.
fn keys(value: &Value) -> BTreeSet<&str> {
    value
        .as_object()
        .unwrap_or_else(|| panic!("an object: {value}"))
        .keys()
        .map(String::as_str)
        .collect()
}

fn set<'a>(names: &[&'a str]) -> BTreeSet<&'a str> {
    names.iter().copied().collect()
}

async fn list(site: &Site, path: &str) -> Vec<Value> {
    let answer = site.get_ok(path).await;
    answer
        .as_array()
        .unwrap_or_else(|| panic!("{path} lists: {answer}"))
        .clone()
}

#[tokio::test]
async fn each_virtualization_site_lists_its_hosts_cluster_datastores_networks_folders_and_devices()
{
    let t = spawn_frozen(18).await;
    let boston = t.boston().await;
    let vras = list(&boston, "/v1/vras").await;
    for site in list(&boston, "/v1/virtualizationsites").await {
        let at = |rest: &str| {
            format!(
                "/v1/virtualizationsites/{}/{rest}",
                site["SiteIdentifier"].as_str().unwrap()
            )
        };
        let hosts = list(&boston, &at("hosts")).await;
        assert!(!hosts.is_empty());
        for host in &hosts {
            assert_eq!(
                keys(host),
                set(&[
                    "HostIdentifier",
                    "HostVersion",
                    "VirtualizationHostName",
                    "ConnectionStatus",
                    "AssociatedDatastores",
                    "AssociatedNetworks"
                ])
            );
            let id = host["HostIdentifier"].as_str().unwrap();
            assert_eq!(&boston.get_ok(&at(&format!("hosts/{id}"))).await, host);
            let devices = list(&boston, &format!("{}?hostIdentifier={id}", at("devices"))).await;
            let datastores = list(&boston, &at("datastores")).await;
            assert_eq!(
                devices.len(),
                datastores.len(),
                "each host sees every datastore's device"
            );
        }
        let clusters = list(&boston, &at("hostclusters")).await;
        assert_eq!(
            clusters[0]["AssociatedHosts"].as_array().unwrap().len(),
            hosts.len()
        );
        let datastores = list(&boston, &at("datastores")).await;
        assert_eq!(
            keys(&datastores[0]),
            set(&[
                "DatastoreName",
                "DatastoreIdentifier",
                "OwningDatastoreCluster"
            ])
        );
        assert_eq!(
            keys(&list(&boston, &at("networks")).await[0]),
            set(&["VirtualizationNetworkName", "NetworkIdentifier"])
        );
        assert_eq!(
            keys(&list(&boston, &at("folders")).await[0]),
            set(&["FolderName", "FolderIdentifier"])
        );
        assert_eq!(
            keys(&list(&boston, &at("resourcepools")).await[0]),
            set(&["ResourcepoolName", "ResourcePoolIdentifier"]),
            "SW10 spells it ResourcepoolName"
        );
        let device = &list(&boston, &at("devices")).await[0];
        assert_eq!(
            device["DatastoreIdentifier"],
            datastores[0]["DatastoreIdentifier"]
        );
        assert!(device["SizeInBytes"].as_u64().unwrap() > 0);
        let none = list(&boston, &format!("{}?deviceName=nothing", at("devices"))).await;
        assert!(none.is_empty());
        // The default world's one Extended Journal Copy repository is at Denver.
        let repositories = list(&boston, &at("repositories")).await;
        let expected: &[&str] = match site["VirtualizationSiteName"].as_str().unwrap() {
            "Denver" => &["denver-ltr"],
            _ => &[],
        };
        assert_eq!(
            texts(&Value::from(repositories.clone()), "RepositoryName"),
            expected
        );
        for repository in &repositories {
            assert_eq!(
                keys(repository),
                set(&[
                    "RepositoryIdentifier",
                    "RepositoryName",
                    "Path",
                    "ConnectionType",
                    "StorageType"
                ])
            );
        }
        for empty in [
            "datastoreclusters",
            "vcdvapps",
            "orgvdcs",
            "publiccloud/virtualNetworks",
        ] {
            assert!(
                list(&boston, &at(empty)).await.is_empty(),
                "{empty}: a vSphere site has none"
            );
        }
    }
    let local = boston.get_ok("/v1/localsite").await;
    let at_boston = format!(
        "/v1/virtualizationsites/{}/hosts",
        local["SiteIdentifier"].as_str().unwrap()
    );
    let hosts = list(&boston, &at_boston).await;
    let host_names: BTreeSet<&str> = hosts
        .iter()
        .map(|h| h["VirtualizationHostName"].as_str().unwrap())
        .collect();
    let vra_hosts: BTreeSet<&str> = vras
        .iter()
        .map(|v| v["HostDisplayName"].as_str().unwrap())
        .collect();
    assert_eq!(host_names, vra_hosts, "a VRA on every host of the site");
    let (status, body) = boston
        .get("/v1/virtualizationsites/no-such-site/hosts")
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
}

#[tokio::test]
async fn paths_the_sdk_calls_that_zvm_10_does_not_serve_answer_404_naming_the_path() {
    let t = spawn_frozen(18).await;
    let boston = t.boston().await;
    for path in [
        "/v1/sessions",
        "/v1/sessions/types",
        "/v1/repositories",
        "/v1/repositories/types",
        "/v1/encryptiondetection",
        "/v1/encryptiondetection/types",
        "/v1/serverDateTime",
    ] {
        let (status, body) = boston.get(path).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}: {body}");
        assert!(body["Message"].as_str().unwrap().contains(path), "{body}");
    }
}

#[tokio::test]
async fn encryption_detection_metrics_of_volumes_and_vpgs_add_up_to_those_of_their_vms() {
    let t = spawn_frozen(18).await;
    let boston = t.boston().await;
    t.control.advance(60.0).await;
    let data = |v: &Value| v["EncryptionMetrics"]["NonEncryptedData"].as_u64().unwrap();
    let vms = list(&boston, "/v1/encryptionDetection/metrics/vms").await;
    let volumes = list(&boston, "/v1/encryptionDetection/metrics/volumes").await;
    for vm in &vms {
        let id = &vm["Link"]["identifier"];
        let own: u64 = volumes
            .iter()
            .filter(|v| &v["AssociatedVm"]["Identifier"] == id)
            .map(data)
            .sum();
        assert_eq!(own, data(vm), "{id}: its volumes hold its data");
    }
    let vpgs = list(&boston, "/v1/encryptionDetection/metrics/vpgs").await;
    assert_eq!(vpgs.len(), list(&boston, "/v1/vpgs").await.len());
    assert_eq!(keys(&vpgs[0]), set(&["Link", "EncryptionMetrics"]));
    assert!(vpgs.iter().map(data).sum::<u64>() > 0);
    for kind in ["vms", "volumes", "vpgs"] {
        let suspected = list(
            &boston,
            &format!("/v1/encryptionDetection/suspected/{kind}"),
        )
        .await;
        assert!(suspected.is_empty(), "nothing suspected: {kind}");
    }
    let state = boston.get_ok("/v1/encryptionDetection/state").await;
    assert_eq!(state["EncryptionDetectionEnabled"], true);
}

#[tokio::test]
async fn service_profiles_zorgs_sessions_and_vra_lists_answer_as_a_site_without_zcm() {
    let t = spawn_frozen(18).await;
    let boston = t.boston().await;
    let local = boston.get_ok("/v1/localsite").await;
    let site = local["SiteIdentifier"].as_str().unwrap();
    let profiles = list(
        &boston,
        &format!("/v1/serviceprofiles?siteIdentifier={site}"),
    )
    .await;
    assert_eq!(profiles.len(), 1);
    for key in [
        "ServiceProfileName",
        "Rpo",
        "History",
        "MaxJournalSizeInPercent",
        "TestInterval",
        "Description",
        "JournalWarningThresholdInPercent",
        "ServiceProfileIdentifier",
    ] {
        assert!(profiles[0].get(key).is_some(), "{key} in {}", profiles[0]);
    }
    let id = profiles[0]["ServiceProfileIdentifier"].as_str().unwrap();
    assert_eq!(
        boston.get_ok(&format!("/v1/serviceprofiles/{id}")).await,
        profiles[0]
    );
    assert!(
        list(&boston, "/v1/serviceprofiles?siteIdentifier=elsewhere")
            .await
            .is_empty()
    );
    assert!(list(&boston, "/v1/zorgs").await.is_empty());
    assert!(list(&boston, "/v1/zsspsessions").await.is_empty());
    let zero = "00000000-0000-0000-0000-000000000000";
    assert_eq!(
        boston.get(&format!("/v1/zorgs/{zero}")).await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        boston.get_ok("/v1/vras/ipconfigurationtypes").await,
        serde_json::json!(["Dhcp", "Static"])
    );
    let vras = list(&boston, "/v1/vras").await;
    let id = vras[0]["VraIdentifierStr"].as_str().unwrap();
    let potentials = list(
        &boston,
        &format!("/v1/vras/{id}/changerecoveryvra/potentials"),
    )
    .await;
    assert_eq!(potentials.len(), vras.len() - 1, "every other host");
    assert!(
        potentials
            .iter()
            .all(|p| p["HostIdentifier"] != vras[0]["HostIdentifier"])
    );
}

#[tokio::test]
async fn resource_reports_sample_each_vm_in_each_vpg_a_site_sees() {
    let t = spawn_frozen(18).await;
    let boston = t.boston().await;
    let rows = list(&boston, "/v1/vms").await;
    let reports = list(&boston, "/v1/reports/resources").await;
    assert_eq!(reports.len(), rows.len(), "one per /v1/vms row");
    let cpu = &reports[0]["ProtectedSite"]["VmInfo"]["Cpu"];
    assert!(cpu.get("NumberOfvCpus").is_some(), "SW10's spelling: {cpu}");
    let web = list(&boston, "/v1/reports/resources?vmName=web-01").await;
    assert_eq!(
        web.len(),
        rows.iter().filter(|r| r["VmName"] == "web-01").count()
    );
    let paged = list(&boston, "/v1/reports/resources?pageNumber=2&pageSize=5").await;
    assert_eq!(paged.len(), 5.min(rows.len().saturating_sub(5)));
    assert!(
        list(&boston, "/v1/reports/resources?zorgName=any")
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn sites_unpair_only_without_vpgs_between_them_and_pair_again_with_the_peers_token() {
    let t = zvm_sim::test_kit::spawn_frozen(93).await;
    let (boston, denver) = (t.boston().await, t.denver().await);
    let peer = boston.get_ok("/v1/peersites").await[0].clone();
    let denver_id = peer["SiteIdentifier"].as_str().unwrap().to_owned();
    crate::expect::expect_refused(
        boston.delete(&format!("/v1/peersites/{denver_id}")).await,
        reqwest::StatusCode::CONFLICT,
        &["web-dr", "delete them first"],
    );
    let token = denver
        .post("/v1/peersites/generatetoken", &json!({}))
        .await
        .1["Token"]
        .clone();
    let pair = json!({"hostName": peer["HostName"], "port": peer["Port"], "token": token});
    crate::expect::expect_refused(
        boston.post("/v1/peersites", &pair).await,
        reqwest::StatusCode::CONFLICT,
        &["already paired"],
    );

    // Every VPG between the sites deleted, the pairing can go.
    let between: Vec<String> = boston
        .get_ok("/v1/vpgs")
        .await
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["ProtectedSite"]["identifier"] != v["RecoverySite"]["identifier"])
        .map(|v| v["VpgIdentifier"].as_str().unwrap().to_owned())
        .collect();
    assert!(between.len() >= 2, "{between:?}");
    for vpg in &between {
        let (status, _) = boston.delete(&format!("/v1/vpgs/{vpg}")).await;
        assert_eq!(status, reqwest::StatusCode::OK, "{vpg}");
    }
    t.control.advance(10).await;
    let (status, _) = boston.delete(&format!("/v1/peersites/{denver_id}")).await;
    assert_eq!(status, reqwest::StatusCode::OK);
    assert_eq!(boston.get_ok("/v1/peersites").await, json!([]));
    assert_eq!(
        denver.get_ok("/v1/peersites").await,
        json!([]),
        "both sides"
    );

    let wrong = json!({"hostName": peer["HostName"], "port": peer["Port"], "token": "not-it"});
    crate::expect::expect_refused(
        boston.post("/v1/peersites", &wrong).await,
        reqwest::StatusCode::BAD_REQUEST,
        &["generatetoken"],
    );
    let (status, answer) = boston.post("/v1/peersites", &pair).await;
    assert_eq!(status, reqwest::StatusCode::OK, "{answer}");
    assert_eq!(
        boston.get_ok("/v1/peersites").await[0]["SiteIdentifier"],
        denver_id.as_str()
    );
}
