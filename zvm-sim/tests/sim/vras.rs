//! VRA writes (issue 34): a VRA is removed only once it replicates nothing, Removing while its
//! task runs; installed again, Installing until its task ends; edited, upgraded; a cluster's install
//! settings kept without a password; and the VMs a VRA recovers moved to another host by
//! `changerecoveryvra`, which is what frees it.

use reqwest::StatusCode;
use serde_json::{Value, json};
use zvm_sim::test_kit::{Site, spawn_with};
use zvm_sim::{Options, WorldSpec};

use crate::expect::expect_refused;

/// The default world with two more hosts at Denver: a VM runs on a host drawn among its site's,
/// so at least one of them replicates nothing.
async fn with_a_spare_host() -> zvm_sim::test_kit::TestSim {
    let mut world = WorldSpec::default_world();
    let denver = world.sites.iter_mut().find(|s| s.name == "Denver").unwrap();
    denver
        .hosts
        .extend(["esx03".to_owned(), "esx04".to_owned()]);
    spawn_with(Options {
        world,
        time_scale: 0.0,
        ..Options::for_tests(94)
    })
    .await
}

async fn vra_named(site: &Site, host: &str) -> Option<Value> {
    let vras = site.get_ok("/v1/vras").await;
    vras.as_array()
        .unwrap()
        .iter()
        .find(|v| v["VraName"].as_str().unwrap().contains(host))
        .cloned()
}

/// The host name of a VRA that protects and recovers no VM.
async fn idle_vra(site: &Site) -> String {
    let vras = site.get_ok("/v1/vras").await;
    let idle = vras
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["ProtectedCounters"]["Vms"] == 0 && v["RecoveryCounters"]["Vms"] == 0);
    idle.expect("an idle VRA")["HostDisplayName"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn finished(t: &zvm_sim::test_kit::TestSim, site: &Site, task: &Value, kind: &str) {
    t.control.advance(5).await;
    let task = site.wait_task(task.as_str().expect("a task id")).await;
    assert_eq!(
        (task["Type"].as_str(), task["Status"]["State"].as_i64()),
        (Some(kind), Some(6)),
        "{task}"
    );
}

#[tokio::test]
async fn a_vra_leaves_only_once_its_vms_recover_elsewhere_and_comes_back_when_installed() {
    let t = with_a_spare_host().await;
    let denver = t.denver().await;
    let busy = vra_named(&denver, "esx01").await.expect("esx01's VRA");
    let busy_id = busy["VraIdentifierStr"].as_str().unwrap().to_owned();
    expect_refused(
        denver.delete(&format!("/v1/vras/{busy_id}")).await,
        StatusCode::CONFLICT,
        &["recovers", "move them first"],
    );

    // An idle VRA is removed, Removing while its task runs.
    let idle = idle_vra(&denver).await;
    let spare = vra_named(&denver, &idle).await.expect("the idle VRA");
    let spare_id = spare["VraIdentifierStr"].as_str().unwrap().to_owned();
    let host = spare["HostIdentifier"].clone();
    let (status, task) = denver.delete(&format!("/v1/vras/{spare_id}")).await;
    assert_eq!(status, StatusCode::OK, "{task}");
    assert_eq!(
        denver.get_ok(&format!("/v1/vras/{spare_id}")).await["Status"],
        4,
        "Removing"
    );
    finished(&t, &denver, &task, "UninstallVra").await;
    assert!(
        vra_named(&denver, &idle).await.is_none(),
        "no longer listed"
    );

    // Installed again with its own settings: Installing, then Installed.
    let (status, task) = denver
        .post(
            "/v1/vras",
            &json!({"hostIdentifier": host, "memoryInGb": 6, "groupName": "spare"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{task}");
    assert_eq!(
        vra_named(&denver, &idle).await.unwrap()["Status"],
        3,
        "Installing"
    );
    finished(&t, &denver, &task, "InstallVra").await;
    let back = vra_named(&denver, &idle).await.unwrap();
    assert_eq!(
        (
            back["Status"].clone(),
            back["MemoryInGB"].clone(),
            back["VraGroup"].clone()
        ),
        (json!(0), json!(6), json!("spare"))
    );
    expect_refused(
        denver
            .post("/v1/vras", &json!({"hostIdentifier": host}))
            .await,
        StatusCode::CONFLICT,
        &["already has a VRA"],
    );
    let (_, task) = denver
        .request(
            reqwest::Method::PUT,
            &format!("/v1/vras/{spare_id}"),
            Some(&json!({"numOfCpus": 2})),
        )
        .await;
    finished(&t, &denver, &task, "EditVra").await;
    assert_eq!(vra_named(&denver, &idle).await.unwrap()["NumOfCpus"], 2);
    let (_, task) = denver
        .post(&format!("/v1/vras/{spare_id}/upgrade"), &json!({}))
        .await;
    finished(&t, &denver, &task, "UpgradeVra").await;

    // The VMs esx01 recovers for Boston move to other VRAs, as recommended.
    let (_, advice) = denver
        .post(
            &format!("/v1/vras/{busy_id}/changerecoveryvra/recommendation"),
            &json!({}),
        )
        .await;
    let moves: Vec<Value> = advice["Recommendations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| json!({"vmIdentifier": r["VmIdentifier"], "hostIdentifier": r["HostIdentifier"]}))
        .collect();
    assert!(!moves.is_empty(), "{advice}");
    // Each to a VRA that recovered no VM before (the added hosts).
    let recovering = |v: &Value| v["RecoveryCounters"]["Vms"].as_u64().unwrap();
    let before = denver.get_ok("/v1/vras").await;
    let before = before.as_array().unwrap();
    let empty: Vec<&Value> = before
        .iter()
        .filter(|v| recovering(v) == 0)
        .map(|v| &v["HostIdentifier"])
        .collect();
    let advised = advice["Recommendations"].as_array().unwrap();
    assert!(
        advised
            .iter()
            .all(|r| empty.contains(&&r["HostIdentifier"])),
        "the emptiest: {advice}"
    );
    let (_, checked) = denver
        .post(
            &format!("/v1/vras/{busy_id}/changerecoveryvra/validate"),
            &json!({"vmsAllocations": moves}),
        )
        .await;
    assert!(
        checked["VmsValidationsResults"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["Status"] == 0),
        "{checked}"
    );
    let wrong = json!({"vmsAllocations": [{"vmIdentifier": moves[0]["vmIdentifier"], "hostIdentifier": busy["HostIdentifier"]}]});
    expect_refused(
        denver
            .post(
                &format!("/v1/vras/{busy_id}/changerecoveryvra/execute"),
                &wrong,
            )
            .await,
        StatusCode::BAD_REQUEST,
        &["recovers on already"],
    );
    let (_, task) = denver
        .post(
            &format!("/v1/vras/{busy_id}/changerecoveryvra/execute"),
            &json!({"vmsAllocations": moves}),
        )
        .await;
    finished(&t, &denver, &task, "ChangeRecoveryHost").await;
    let freed = vra_named(&denver, "esx01").await.unwrap();
    // Less, not nothing: what it recovers within its own site (local replication) stays with it.
    assert!(recovering(&freed) < recovering(&busy), "{freed}");
    let after = denver.get_ok("/v1/vras").await;
    let total = |list: &Value| list.as_array().unwrap().iter().map(recovering).sum::<u64>();
    assert_eq!(
        total(&after),
        before.iter().map(recovering).sum::<u64>(),
        "each VM recovers somewhere still"
    );
}

#[tokio::test]
async fn a_clusters_install_settings_are_kept_without_a_password_and_cleanup_refuses_busy_vras() {
    let t = with_a_spare_host().await;
    let boston = t.boston().await;
    let cluster = boston
        .get_ok(&format!(
            "/v1/virtualizationsites/{}/hostclusters",
            boston.get_ok("/v1/localsite").await["SiteIdentifier"]
                .as_str()
                .unwrap()
        ))
        .await[0]["ClusterIdentifier"]
        .as_str()
        .unwrap()
        .to_owned();
    let path = format!("/v1/vras/clusters/{cluster}/settings");
    assert_eq!(boston.get_ok(&path).await["MemoryInGb"], 3, "the defaults");
    let (status, _) = boston
        .post(
            &path,
            &json!({"memoryInGb": 8, "groupName": "prod", "hostRootPassword": "s3cret-root"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let kept = boston.get_ok(&path).await;
    assert_eq!(
        (kept["MemoryInGb"].clone(), kept["GroupName"].clone()),
        (json!(8), json!("prod"))
    );
    assert_eq!(kept["HostRootPassword"], Value::Null);
    assert!(!kept.to_string().contains("s3cret-root"));

    expect_refused(
        boston.delete("/v1/vras/cleanup").await,
        StatusCode::CONFLICT,
        &["protects"],
    );
    expect_refused(
        boston
            .post("/v1/vras/clusters", &json!({"clusterIdentifier": cluster}))
            .await,
        StatusCode::CONFLICT,
        &["already has a VRA"],
    );
    let (_, task) = boston
        .request(
            reqwest::Method::PUT,
            &format!("/v1/vras/clusters/{cluster}"),
            None,
        )
        .await;
    finished(&t, &boston, &task, "UpgradeVra").await;
}
