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
