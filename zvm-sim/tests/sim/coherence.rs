//! One model behind the figures (issue 18): a VM's load is its own, the same in every VPG that
//! replicates it, and a VPG shows the sum of its VMs'; a VPG that writes no checkpoint shows no load,
//! its RPO growing from its last checkpoint, and no journal beyond the history it holds.

use std::collections::HashMap;

use serde_json::Value;
use zvm_sim::test_kit::{Site, spawn_frozen, spawn_with};
use zvm_sim::{Options, WorldSpec};

/// The VPGs by identifier, and every row of `/v1/vms`, as Boston lists them.
async fn vpgs_and_rows(boston: &Site) -> (HashMap<String, Value>, Vec<Value>) {
    let vpgs = boston.get_ok("/v1/vpgs").await;
    let by_id = vpgs
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["VpgIdentifier"].as_str().unwrap().to_owned(), v.clone()))
        .collect();
    let rows = boston.get_ok("/v1/vms").await.as_array().unwrap().clone();
    (by_id, rows)
}

fn writes(vpg: &Value) -> bool {
    let status = vpg["Status"].as_u64().unwrap();
    let syncing = [1, 3, 4, 6, 11, 12, 13, 23].contains(&vpg["SubStatus"].as_u64().unwrap());
    (1..=4).contains(&status) && !syncing
}

/// Checks the load and journal rules on every VPG and row Boston lists.
fn assert_coherent(vpgs: &HashMap<String, Value>, rows: &[Value]) {
    let mut sums: HashMap<&str, (u64, f64)> = HashMap::new();
    let mut load_of_vm: HashMap<&str, u64> = HashMap::new();
    for row in rows {
        let vpg = &vpgs[row["VpgIdentifier"].as_str().unwrap()];
        let iops = row["IOPs"].as_u64().unwrap();
        let sum = sums
            .entry(row["VpgIdentifier"].as_str().unwrap())
            .or_default();
        sum.0 += iops;
        sum.1 += row["ThroughputInMB"].as_f64().unwrap();
        let vm = row["VmIdentifier"].as_str().unwrap();
        if writes(vpg) {
            let first = *load_of_vm.entry(vm).or_insert(iops);
            assert_eq!(first, iops, "{vm} has one load, the same in each VPG");
            assert!(iops > 0, "{vm} writes in {}", vpg["VpgName"]);
        } else {
            assert_eq!(
                iops, 0,
                "{vm} sends nothing to {}, which writes no checkpoint",
                vpg["VpgName"]
            );
        }
        if vpg["HistoryStatusApi"]["ActualHistoryInMinutes"] == 0 {
            assert_eq!(
                row["JournalUsedStorageMb"], 0,
                "no history, no journal: {vm}"
            );
        }
    }
    for (id, vpg) in vpgs {
        let (iops, throughput) = sums.get(id.as_str()).copied().unwrap_or_default();
        assert_eq!(
            vpg["IOPs"].as_u64().unwrap(),
            iops,
            "{} is its VMs' sum",
            vpg["VpgName"]
        );
        let shown = vpg["ThroughputInMB"].as_f64().unwrap();
        assert!(
            (shown - throughput).abs() < 1e-6,
            "{}: {shown} vs {throughput}",
            vpg["VpgName"]
        );
    }
}

#[tokio::test]
async fn in_the_default_world_each_vm_has_its_own_load_and_each_vpg_the_sum_of_its_vms() {
    let t = spawn_frozen(3).await;
    let (vpgs, rows) = vpgs_and_rows(&t.boston().await).await;
    assert_coherent(&vpgs, &rows);
}

#[tokio::test]
async fn in_a_world_of_ten_thousand_vms_the_same_rules_hold() {
    let t = spawn_with(Options {
        world: WorldSpec::generate(10_000, 4),
        time_scale: 0.0,
        ..Options::for_tests(4)
    })
    .await;
    let (vpgs, rows) = vpgs_and_rows(&t.boston().await).await;
    assert!(rows.len() > 10_000, "{} rows", rows.len());
    assert_coherent(&vpgs, &rows);
}

#[tokio::test]
async fn a_syncing_vpg_falls_behind_its_rpo_and_an_initializing_one_has_none_yet() {
    let t = spawn_frozen(3).await;
    let boston = t.boston().await;
    let rpo = |vpg: Value| {
        (
            vpg["ActualRPO"].as_u64().unwrap(),
            vpg["ConfiguredRpoSeconds"].as_u64().unwrap(),
        )
    };
    let files_dr = boston.vpg_id("files-dr").await;
    let (before, configured) = rpo(boston.get_ok(&format!("/v1/vpgs/{files_dr}")).await);
    assert!(
        before > configured,
        "DeltaSync, NotMeetingSLA: {before} s over {configured}"
    );
    t.control.advance(90).await;
    let (after, _) = rpo(boston.get_ok(&format!("/v1/vpgs/{files_dr}")).await);
    assert_eq!(
        after,
        before + 90,
        "it grows while no checkpoint is written"
    );
    let sql_init = boston.vpg_id("sql-init").await;
    let init = boston.get_ok(&format!("/v1/vpgs/{sql_init}")).await;
    assert_eq!(init["ActualRPO"], 0);
    assert_eq!(init["IOPs"], 0);
    assert_eq!(init["HistoryStatusApi"]["ActualHistoryInMinutes"], 0);
}

#[tokio::test]
async fn a_resync_stops_the_journal_and_the_rpo_counts_from_it() {
    let t = spawn_frozen(3).await;
    let boston = t.boston().await;
    let web_dr = boston.vpg_id("web-dr").await;
    t.control.resync(&web_dr, 600).await;
    t.control.advance(45).await;
    let vpg = boston.get_ok(&format!("/v1/vpgs/{web_dr}")).await;
    assert_eq!(vpg["ActualRPO"], 45);
    assert_eq!(vpg["IOPs"], 0);
    let rows = boston.get_ok("/v1/vms?vpgName=web-dr").await;
    for row in rows.as_array().unwrap() {
        assert_eq!(
            row["JournalUsedStorageMb"], 0,
            "a resync removed the history"
        );
    }
}

/// A figure of `Stats` summed over every datastore listed.
fn over_datastores(datastores: &Value, path: &[&str]) -> u64 {
    datastores
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            path.iter()
                .fold(&d["Stats"], |v, key| &v[*key])
                .as_u64()
                .unwrap()
        })
        .sum()
}

/// The rules VRAs and the datastores keep with the VMs and VPGs `site` lists.
async fn assert_placement_adds_up(site: &Site) {
    let local = site.get_ok("/v1/localsite").await["SiteIdentifier"].clone();
    let rows = site.get_ok("/v1/vms").await.as_array().unwrap().clone();
    let vras = site.get_ok("/v1/vras").await.as_array().unwrap().clone();
    let datastores = site.get_ok("/v1/datastores").await;
    let protected_here: Vec<&Value> = rows
        .iter()
        .filter(|r| r["ProtectedSite"]["identifier"] == local)
        .collect();
    let recovering_here: Vec<&Value> = rows
        .iter()
        .filter(|r| r["RecoverySite"]["identifier"] == local)
        .collect();
    let distinct: std::collections::HashSet<&str> = protected_here
        .iter()
        .map(|r| r["VmIdentifier"].as_str().unwrap())
        .collect();
    let sum = |key: &str, field: &str| -> u64 {
        vras.iter().map(|v| v[key][field].as_u64().unwrap()).sum()
    };
    assert_eq!(
        sum("ProtectedCounters", "Vms"),
        distinct.len() as u64,
        "each protected VM has one VRA"
    );
    assert_eq!(
        over_datastores(&datastores, &["NumOutgoingVMs"]),
        distinct.len() as u64
    );
    assert_eq!(
        sum("RecoveryCounters", "Vms"),
        recovering_here.len() as u64,
        "each replica has one VRA"
    );
    assert_eq!(
        over_datastores(&datastores, &["NumIncomingVMs"]),
        recovering_here.len() as u64
    );
    assert_eq!(
        over_datastores(&datastores, &["NumVRAs"]),
        vras.len() as u64
    );
    let ids: std::collections::HashSet<&str> = datastores
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["DatastoreIdentifier"].as_str().unwrap())
        .collect();
    for vra in &vras {
        assert!(
            ids.contains(vra["DatastoreIdentifier"].as_str().unwrap()),
            "{vra}"
        );
    }
    for row in &protected_here {
        assert!(
            ids.contains(row["OwningDatastoreIdentifier"].as_str().unwrap()),
            "{row}"
        );
    }
    let hosts: std::collections::HashSet<&str> = vras
        .iter()
        .map(|v| v["HostDisplayName"].as_str().unwrap())
        .collect();
    for row in &protected_here {
        assert!(
            hosts.contains(row["OwningHostName"].as_str().unwrap()),
            "{row}"
        );
    }
    for row in &recovering_here {
        assert!(
            hosts.contains(row["RecoveryHostName"].as_str().unwrap()),
            "{row}"
        );
    }
    let journal: u64 = recovering_here
        .iter()
        .map(|r| r["JournalUsedStorageMb"].as_u64().unwrap() * 1024 * 1024)
        .sum();
    assert_eq!(
        over_datastores(&datastores, &["Usage", "Zerto", "Journal", "UsedInBytes"]),
        journal
    );
    for datastore in datastores.as_array().unwrap() {
        let usage = &datastore["Stats"]["Usage"];
        let space = &usage["Datastore"];
        let (capacity, used, free) = (
            space["CapacityInBytes"].as_u64().unwrap(),
            space["UsedInBytes"].as_u64().unwrap(),
            space["FreeInBytes"].as_u64().unwrap(),
        );
        assert_eq!(used + free, capacity);
        let zerto: u64 = ["Protected", "Recovery", "Journal", "Scratch", "Appliances"]
            .iter()
            .map(|k| usage["Zerto"][k]["UsedInBytes"].as_u64().unwrap())
            .sum();
        assert!(
            used >= zerto,
            "the datastore holds at least what Zerto put there"
        );
    }
}

#[tokio::test]
async fn vras_and_datastores_add_up_to_the_vms_and_vpgs_of_each_site() {
    let t = spawn_frozen(3).await;
    assert_placement_adds_up(&t.boston().await).await;
    assert_placement_adds_up(&t.denver().await).await;
    let big = spawn_with(Options {
        world: WorldSpec::generate(10_000, 4),
        time_scale: 0.0,
        ..Options::for_tests(4)
    })
    .await;
    assert_placement_adds_up(&big.boston().await).await;
    assert_placement_adds_up(&big.denver().await).await;
}

#[tokio::test]
async fn a_vra_and_a_datastore_are_read_by_identifier_and_vras_by_their_filters() {
    let t = spawn_frozen(3).await;
    let boston = t.boston().await;
    let vras = boston.get_ok("/v1/vras").await;
    let first = &vras[0];
    // The fields a Prometheus exporter of ZVM 10 reads, each present and of its type.
    for number in [
        "VraIdentifier",
        "MemoryInGB",
        "NumOfCpus",
        "SelfProtectedVpgs",
        "Status",
    ] {
        assert!(first[number].is_u64(), "{number}: {first}");
    }
    for text in [
        "VraIdentifierStr",
        "VraName",
        "VraVersion",
        "HostVersion",
        "HostDisplayName",
    ] {
        assert!(first[text].is_string(), "{text}: {first}");
    }
    assert_eq!(
        first["VraIdentifierStr"],
        first["VraIdentifier"].to_string().as_str()
    );
    let id = first["VraIdentifierStr"].as_str().unwrap();
    assert_eq!(&boston.get_ok(&format!("/v1/vras/{id}")).await, first);
    let name = first["VraName"].as_str().unwrap();
    let named = boston
        .get_ok(&format!("/v1/vras?vraName={}", name.to_uppercase()))
        .await;
    assert_eq!(named.as_array().unwrap().len(), 1);
    let installing = boston.get_ok("/v1/vras?status=Installing").await;
    assert!(installing.as_array().unwrap().is_empty());
    assert_eq!(boston.get_ok("/v1/vras/statuses").await[0], "Installed");
    let datastore = boston.get_ok("/v1/datastores").await[0].clone();
    let ds = datastore["DatastoreIdentifier"].as_str().unwrap();
    assert_eq!(
        boston.get_ok(&format!("/v1/datastores/{ds}")).await,
        datastore
    );
    let (status, _) = boston.get("/v1/datastores/no-such-datastore").await;
    assert_eq!(status, reqwest::StatusCode::NOT_FOUND);
    let (status, _) = boston.get("/v1/vras/42").await;
    assert_eq!(status, reqwest::StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn volumes_add_up_to_the_datastore_and_statistics_cover_every_row_of_vms() {
    let t = spawn_frozen(3).await;
    let boston = t.boston().await;
    let datastores = boston.get_ok("/v1/datastores").await;
    assert!(
        datastores.as_array().unwrap().len() > 1,
        "Boston has two datastores"
    );
    for datastore in datastores.as_array().unwrap() {
        let zerto = &datastore["Stats"]["Usage"]["Zerto"];
        let id = datastore["DatastoreIdentifier"].as_str().unwrap();
        let volumes = boston
            .get_ok(&format!("/v1/volumes?datastoreIdentifier={id}"))
            .await;
        for (kind, usage) in [
            ("Protected", "Protected"),
            ("Recovery", "Recovery"),
            ("Journal", "Journal"),
            ("Scratch", "Scratch"),
            ("Appliance", "Appliances"),
        ] {
            let sum: u64 = volumes
                .as_array()
                .unwrap()
                .iter()
                .filter(|v| v["VolumeType"] == kind)
                .map(|v| v["Size"]["UsedInBytes"].as_u64().unwrap())
                .sum();
            assert_eq!(
                sum,
                zerto[usage]["UsedInBytes"].as_u64().unwrap(),
                "{id} {kind}"
            );
        }
    }
    let journals = boston.get_ok("/v1/volumes?volumetype=journal").await;
    let journals = journals.as_array().unwrap();
    assert_eq!(
        journals.len() as u64,
        over_datastores(&datastores, &["NumIncomingVMs"])
    );
    assert!(
        journals
            .iter()
            .all(|v| v["VolumeType"] == "Journal" && v["ProtectedVm"]["Name"].is_string())
    );

    let rows = boston.get_ok("/v1/vms").await;
    let pairs = |list: &Value| -> std::collections::BTreeSet<(String, String)> {
        list.as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["VmIdentifier"].as_str().unwrap().to_owned(),
                    r["VpgIdentifier"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    let before = boston.get_ok("/v1/statistics/vms").await;
    assert_eq!(
        pairs(&before),
        pairs(&rows),
        "one statistics row per row of /v1/vms"
    );
    let encryption = boston.get_ok("/v1/encryptionDetection/metrics/vms").await;
    for (vm, _) in pairs(&before) {
        let entry = encryption
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["Link"]["identifier"] == vm.as_str());
        let entry = entry.unwrap_or_else(|| panic!("{vm} has encryption metrics"));
        assert!(entry["Link"]["name"].is_string());
        assert!(entry["EncryptionMetrics"]["EncryptedData"].is_u64());
    }
    t.control.advance(100).await;
    let after = boston.get_ok("/v1/statistics/vms").await;
    let vpgs = boston.get_ok("/v1/vpgs").await;
    for row in after.as_array().unwrap() {
        let earlier = before
            .as_array()
            .unwrap()
            .iter()
            .find(|r| {
                r["VmIdentifier"] == row["VmIdentifier"]
                    && r["VpgIdentifier"] == row["VpgIdentifier"]
            })
            .unwrap();
        let vpg = vpgs
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["VpgIdentifier"] == row["VpgIdentifier"])
            .unwrap();
        let grew = row["IoOperationsCounter"].as_u64() > earlier["IoOperationsCounter"].as_u64();
        assert_eq!(
            grew,
            writes(vpg),
            "{row}: counters grow exactly while the VPG writes"
        );
    }
}

#[tokio::test]
async fn the_license_counts_each_sites_protected_vms_as_the_datastores_do() {
    let t = spawn_frozen(3).await;
    let boston = t.boston().await;
    let license = boston.get_ok("/v1/license").await;
    let mut total = 0;
    for site in [boston, t.denver().await] {
        let id = site.get_ok("/v1/localsite").await["SiteIdentifier"].clone();
        let datastores = site.get_ok("/v1/datastores").await;
        let outgoing = Value::from(over_datastores(&datastores, &["NumOutgoingVMs"]));
        let usage = license["Usage"]["SitesUsage"]
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["SiteIdentifier"] == id)
            .unwrap_or_else(|| panic!("{id} in {license}"))
            .clone();
        assert_eq!(usage["ProtectedVmsCount"], outgoing);
        total += outgoing.as_u64().unwrap();
    }
    assert_eq!(license["Usage"]["TotalVmsCount"], total);
    assert!(license["Details"]["MaxVms"].as_u64().unwrap() >= total);
    assert!(license["Details"]["ExpiryTime"].is_string());
}

#[tokio::test]
async fn the_server_reads_a_date_time_argument_as_milliseconds_or_a_time_and_none_as_now() {
    let t = spawn_frozen(3).await;
    let boston = t.boston().await;
    let path = "/v1/serverDateTime/dateTimeArgument";
    let millis = boston
        .get_ok(&format!("{path}?dateTime=1767225600000"))
        .await;
    assert_eq!(millis, "2026-01-01T00:00:00.000Z");
    let text = boston
        .get_ok(&format!("{path}?dateTime=2026-01-01T00:00:00Z"))
        .await;
    assert_eq!(text, millis);
    assert_eq!(boston.get_ok(path).await, t.control.now().await);
    let (status, body) = boston.get(&format!("{path}?dateTime=yesterday")).await;
    assert_eq!(status, reqwest::StatusCode::BAD_REQUEST);
    assert!(
        body["Message"].as_str().unwrap().contains("dateTime"),
        "{body}"
    );
}
