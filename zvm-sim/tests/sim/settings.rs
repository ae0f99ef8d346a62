//! `/v1/vpgSettings` (issue 34): a VPG's settings taken out, read and written part by part with
//! SW10's camelCase bodies, checked as a ZVM checks them, and committed as an
//! `UpdateProtectionGroup` task that changes the VPG; a new VPG's settings, committed, create a
//! VPG that syncs, then meets its SLA; `DELETE /v1/vpgs/{id}` removes one with its checkpoints.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use zvm_sim::test_kit::{Site, spawn_frozen};

use crate::expect::expect_refused;

async fn put(site: &Site, path: &str, body: &Value) -> (StatusCode, Value) {
    site.request(Method::PUT, path, Some(body)).await
}

/// The identifier of a VM that no VPG protects, at Boston.
async fn unprotected_vm(boston: &Site, name: &str) -> String {
    let local = boston.get_ok("/v1/localsite").await;
    let site = local["SiteIdentifier"].as_str().unwrap();
    let vms = boston
        .get_ok(&format!("/v1/virtualizationsites/{site}/vms"))
        .await;
    let vm = vms.as_array().unwrap().iter().find(|v| v["VmName"] == name);
    vm.unwrap_or_else(|| panic!("{name} is unprotected: {vms}"))["VmIdentifier"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn settings_of_a_vpg_are_edited_part_by_part_and_committed_as_one_task() {
    let t = spawn_frozen(34).await;
    let boston = t.boston().await;
    let vpg = boston.vpg_id("app-tier").await;
    let report = unprotected_vm(&boston, "report-01").await;
    let (status, id) = boston
        .post("/v1/vpgSettings", &json!({"vpgIdentifier": vpg}))
        .await;
    assert_eq!(status, StatusCode::OK, "{id}");
    let id = id.as_str().expect("the settings' identifier").to_owned();
    let path = format!("/v1/vpgSettings/{id}");
    let listed = boston.get_ok("/v1/vpgSettings").await;
    assert_eq!(listed[0]["VpgSettingsIdentifier"], id.as_str());

    let mut basic = boston.get_ok(&format!("{path}/basic")).await;
    assert_eq!(basic["Name"], "app-tier");
    assert_eq!(
        boston
            .get_ok(&format!("{path}/vms"))
            .await
            .as_array()
            .unwrap()
            .len(),
        3
    );
    basic["JournalHistoryInHours"] = json!(0);
    expect_refused(
        put(&boston, &format!("{path}/basic"), &basic).await,
        StatusCode::BAD_REQUEST,
        &["JournalHistoryInHours", "1 to 720"],
    );
    // SW10's camelCase, as a client sends it.
    let written = json!({
        "name": "app-tier-2", "rpoInSeconds": 120, "journalHistoryInHours": 2, "priority": "High",
        "protectedSiteIdentifier": basic["ProtectedSiteIdentifier"],
        "recoverySiteIdentifier": basic["RecoverySiteIdentifier"],
    });
    let (status, _) = put(&boston, &format!("{path}/basic"), &written).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        boston.get_ok(&format!("{path}/basic")).await["RpoInSeconds"],
        120
    );
    assert_eq!(boston.get_ok(&format!("{path}/priority")).await, "High");
    let (status, _) = boston
        .post(&format!("{path}/vms"), &json!({"vmIdentifier": report}))
        .await;
    assert_eq!(status, StatusCode::OK);
    expect_refused(
        boston
            .post(&format!("{path}/vms"), &json!({"vmIdentifier": report}))
            .await,
        StatusCode::CONFLICT,
        &["already"],
    );
    let nics = boston.get_ok(&format!("{path}/vms/{report}/nics")).await;
    assert_eq!(nics[0]["NicIdentifier"], "Network adapter 1");

    let held_before = boston.checkpoints(&vpg).await.len();
    let (status, task) = boston.post(&format!("{path}/commit"), &json!({})).await;
    assert_eq!(status, StatusCode::OK, "{task}");
    t.control.advance(10).await;
    let task = boston.wait_task(task.as_str().unwrap()).await;
    assert_eq!(task["Status"]["State"], 6, "{task}");
    assert_eq!(task["Type"], "UpdateProtectionGroup");
    let changed = boston.get_ok(&format!("/v1/vpgs/{vpg}")).await;
    assert_eq!(changed["VpgName"], "app-tier-2");
    assert_eq!(changed["ConfiguredRpoSeconds"], 120);
    assert_eq!(
        changed["HistoryStatusApi"]["ConfiguredHistoryInMinutes"],
        120
    );
    let members = boston.get_ok("/v1/vms?vmName=report-01").await;
    assert_eq!(
        members[0]["VpgName"], "app-tier-2",
        "the VM joined the VPG: {members}"
    );
    let (status, _) = boston.get(&path).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "a commit ends the settings");
    // A longer history brings back nothing that had aged out; it fills as the journal writes.
    let held = boston.checkpoints(&vpg).await.len();
    assert!(
        (held_before..=held_before + 10 / 5).contains(&held),
        "{held_before} checkpoints before, {held} after"
    );
    t.control.advance(600).await;
    let boston = t.boston().await; // a token of before has expired
    let filled = boston.checkpoints(&vpg).await.len();
    assert_eq!(filled, held + 600 / 5, "ten minutes more");
    // A shorter one drops what is older than it at once.
    let (_, again) = boston
        .post("/v1/vpgSettings", &json!({"vpgIdentifier": vpg}))
        .await;
    let again = format!("/v1/vpgSettings/{}", again.as_str().unwrap());
    let mut basic = boston.get_ok(&format!("{again}/basic")).await;
    basic["JournalHistoryInHours"] = json!(1);
    assert_eq!(
        put(&boston, &format!("{again}/basic"), &basic).await.0,
        StatusCode::OK
    );
    let (_, task) = boston.post(&format!("{again}/commit"), &json!({})).await;
    t.control.advance(10).await;
    boston.wait_task(task.as_str().unwrap()).await;
    let held = boston.checkpoints(&vpg).await.len();
    assert!(
        (3600 / 5..=3600 / 5 + 1).contains(&held),
        "one hour: {held}"
    );
}

#[tokio::test]
async fn a_new_vpgs_settings_are_checked_and_a_kept_document_is_dropped() {
    let t = spawn_frozen(35).await;
    let boston = t.boston().await;
    let (status, id) = boston.request(Method::POST, "/v1/vpgSettings", None).await;
    assert_eq!(status, StatusCode::OK, "{id}");
    let path = format!("/v1/vpgSettings/{}", id.as_str().unwrap());
    let basic = boston.get_ok(&format!("{path}/basic")).await;
    let local = boston.get_ok("/v1/localsite").await;
    assert_eq!(basic["ProtectedSiteIdentifier"], local["SiteIdentifier"]);
    assert_eq!(
        (basic["RpoInSeconds"].clone(), basic["Priority"].clone()),
        (json!(300), json!("Medium"))
    );
    expect_refused(
        boston
            .post(
                &format!("{path}/vms"),
                &json!({"vmIdentifier": "no-such-vm"}),
            )
            .await,
        StatusCode::NOT_FOUND,
        &["no-such-vm"],
    );
    let report = unprotected_vm(&boston, "report-01").await;
    let (status, _) = boston
        .post(&format!("{path}/vms"), &json!({"vmIdentifier": report}))
        .await;
    assert_eq!(status, StatusCode::OK);
    expect_refused(
        boston.post(&format!("{path}/commit"), &json!({})).await,
        StatusCode::BAD_REQUEST,
        &["Basic.Name is required"],
    );
    let (status, _) = boston.delete(&path).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(boston.get_ok("/v1/vpgSettings").await, json!([]));

    // The parts a POST gives are laid over the defaults, key by key, and checked.
    let given = json!({"basic": {"name": "given-at-post", "rpoInSeconds": 60}});
    let (status, id) = boston.post("/v1/vpgSettings", &given).await;
    assert_eq!(status, StatusCode::OK, "{id}");
    let basic = boston
        .get_ok(&format!("/v1/vpgSettings/{}/basic", id.as_str().unwrap()))
        .await;
    assert_eq!(
        (basic["Name"].clone(), basic["RpoInSeconds"].clone()),
        (json!("given-at-post"), json!(60))
    );
    assert_eq!(basic["Priority"], "Medium", "a default kept");
    expect_refused(
        boston
            .post(
                "/v1/vpgSettings",
                &json!({"Basic": {"JournalHistoryInHours": 1000}}),
            )
            .await,
        StatusCode::BAD_REQUEST,
        &["JournalHistoryInHours"],
    );
}

/// A document for a new VPG at Boston, recovering at Denver, with `vms`, named `name`.
async fn new_vpg_settings(boston: &Site, name: &str, vms: &[&str]) -> String {
    let (_, id) = boston.request(Method::POST, "/v1/vpgSettings", None).await;
    let path = format!("/v1/vpgSettings/{}", id.as_str().unwrap());
    let basic = boston.get_ok(&format!("{path}/basic")).await;
    let peer = boston.get_ok("/v1/peersites").await;
    let written = json!({"name": name, "protectedSiteIdentifier": basic["ProtectedSiteIdentifier"],
                         "recoverySiteIdentifier": peer[0]["SiteIdentifier"],
                         "journalHistoryInHours": 1});
    assert_eq!(
        put(boston, &format!("{path}/basic"), &written).await.0,
        StatusCode::OK
    );
    for vm in vms {
        let vm = unprotected_vm(boston, vm).await;
        let (status, _) = boston
            .post(&format!("{path}/vms"), &json!({"vmIdentifier": vm}))
            .await;
        assert_eq!(status, StatusCode::OK);
    }
    path
}

#[tokio::test]
async fn a_committed_new_vpg_syncs_then_meets_its_sla_and_takes_tags_of_its_own() {
    let t = spawn_frozen(36).await;
    let boston = t.boston().await;
    let path = new_vpg_settings(&boston, "made-by-api", &["report-01"]).await;
    let before = t.control.vpgs().await.len();
    let (status, task) = boston.post(&format!("{path}/commit"), &json!({})).await;
    assert_eq!(status, StatusCode::OK, "{task}");
    let vpg = t.control.vpg_id("made-by-api").await;
    let made = boston.get_ok(&format!("/v1/vpgs/{vpg}")).await;
    assert_eq!(
        (made["Status"].clone(), made["SubStatus"].clone()),
        (json!(0), json!(1)),
        "Initializing / InitialSync: {made}"
    );
    assert_eq!(t.control.vpgs().await.len(), before + 1);
    assert!(
        boston.checkpoints(&vpg).await.is_empty(),
        "no checkpoint before its sync ends"
    );

    t.control.advance(10).await;
    let task = boston.wait_task(task.as_str().unwrap()).await;
    assert_eq!(
        (task["Type"].clone(), task["Status"]["State"].clone()),
        (json!("CreateProtectionGroup"), json!(6)),
        "{task}"
    );
    let made = boston.get_ok(&format!("/v1/vpgs/{vpg}")).await;
    assert_eq!(
        (made["Status"].clone(), made["SubStatus"].clone()),
        (json!(1), json!(0)),
        "MeetingSLA: {made}"
    );
    let members = boston.get_ok("/v1/vms?vmName=report-01").await;
    assert_eq!(members[0]["VpgName"], "made-by-api", "{members}");

    // Its checkpoints are its own: none shares an identifier with another VPG's.
    t.control.advance(60).await;
    let boston = t.boston().await;
    let (status, insert) = boston
        .post(
            &format!("/v1/vpgs/{vpg}/checkpoints"),
            &json!({"checkpointName": "mine"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{insert}");
    t.control.advance(5).await;
    assert_eq!(
        boston.wait_task(insert.as_str().unwrap()).await["Status"]["State"],
        6
    );
    let own = boston.checkpoints(&vpg).await;
    let mine = own
        .iter()
        .find(|c| c["Tag"] == "mine")
        .expect("the tag is listed");
    let (status, test) = boston
        .post(
            &format!("/v1/vpgs/{vpg}/FailoverTest"),
            &json!({"checkpointIdentifier": mine["CheckpointIdentifier"]}),
        )
        .await;
    assert_eq!(
        status,
        StatusCode::OK,
        "the tag is found by its identifier: {test}"
    );
    let other = boston.checkpoints(&t.control.vpg_id("web-dr").await).await;
    let ids = |list: &[Value]| {
        list.iter()
            .map(|c| c["CheckpointIdentifier"].as_str().unwrap().to_owned())
            .collect::<std::collections::BTreeSet<_>>()
    };
    assert!(ids(&own).is_disjoint(&ids(&other)), "identifiers collide");
    let state = t.control.get("state").await;
    let (status, answer) = t.control.request(Method::PUT, "state", Some(state)).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "a world with a created VPG loads: {answer}"
    );
    assert_eq!(
        boston.checkpoints(&vpg).await,
        own,
        "and lists the same checkpoints"
    );
}

#[tokio::test]
async fn a_deleted_vpg_leaves_every_listing_with_its_checkpoints_and_unprotects_its_vms() {
    let t = spawn_frozen(37).await;
    let boston = t.boston().await;
    let vpg = boston.vpg_id("web-dr").await;
    let members = boston.get_ok(&format!("/v1/vpgs/{vpg}")).await["VmsCount"].clone();
    assert!(members.as_u64().unwrap() >= 1);
    let (status, insert) = boston
        .post(
            &format!("/v1/vpgs/{vpg}/checkpoints"),
            &json!({"checkpointName": "doomed"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    expect_refused(
        boston.delete(&format!("/v1/vpgs/{vpg}")).await,
        StatusCode::CONFLICT,
        &["checkpoint insert", "Force"],
    );
    t.control.advance(5).await;
    boston.wait_task(insert.as_str().unwrap()).await;

    let (status, task) = boston
        .request(
            Method::DELETE,
            &format!("/v1/vpgs/{vpg}"),
            Some(&json!({"keepRecoveryVolumes": true})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{task}");
    assert_eq!(
        boston.get_ok(&format!("/v1/vpgs/{vpg}")).await["Status"],
        7,
        "Deleting"
    );
    t.control.advance(10).await;
    let task = boston.wait_task(task.as_str().unwrap()).await;
    assert_eq!(
        (task["Type"].clone(), task["Status"]["State"].clone()),
        (json!("RemoveProtectionGroup"), json!(6)),
        "{task}"
    );
    assert_eq!(
        boston.get(&format!("/v1/vpgs/{vpg}")).await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        boston.get(&format!("/v1/vpgs/{vpg}/checkpoints")).await.0,
        StatusCode::NOT_FOUND
    );
    let listed = boston.get_ok("/v1/vpgs").await;
    assert!(
        listed
            .as_array()
            .unwrap()
            .iter()
            .all(|v| v["VpgIdentifier"] != vpg.as_str()),
        "{listed}"
    );
    let rows = boston.get_ok("/v1/vms").await;
    assert!(
        rows.as_array()
            .unwrap()
            .iter()
            .all(|r| r["VpgIdentifier"] != vpg.as_str())
    );
    let state = t.control.get("state").await;
    let (status, answer) = t.control.request(Method::PUT, "state", Some(state)).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "a world with a deleted VPG loads: {answer}"
    );
}

#[tokio::test]
async fn a_vpg_exported_deleted_and_imported_comes_back_with_its_vms_and_settings() {
    let t = spawn_frozen(38).await;
    let boston = t.boston().await;
    let vpg = boston.vpg_id("app-tier").await;
    let (status, export) = boston
        .post(
            "/v1/vpgSettings/exportSettings",
            &json!({"vpgNames": ["app-tier"]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{export}");
    let at = export["TimeStamp"].as_str().unwrap().to_owned();
    assert_eq!(export["ExportResult"]["Result"], "Success");
    assert_eq!(
        boston.get_ok("/v1/vpgSettings/exportedSettings").await,
        json!([{"TimeStamp": at}])
    );
    let info = boston
        .get_ok(&format!("/v1/vpgSettings/exportedSettings/{at}/vpgsinfo"))
        .await;
    assert_eq!(
        info,
        json!([{"VpgName": "app-tier", "SourceSiteName": "Boston", "TargetSiteName": "Boston"}])
    );
    let (_, read) = boston
        .post(
            &format!("/v1/vpgSettings/exportedSettings/{at}"),
            &json!({}),
        )
        .await;
    let exported = read["ExportedVpgSettingsApi"].clone();
    assert_eq!(exported[0]["Vms"].as_array().unwrap().len(), 3, "{read}");
    expect_refused(
        boston
            .post(
                "/v1/vpgSettings/exportSettings",
                &json!({"vpgNames": ["no-such-vpg"]}),
            )
            .await,
        StatusCode::NOT_FOUND,
        &["no-such-vpg"],
    );

    // Importing it while the VPG exists is a validation failure: names are unique.
    let (_, result) = boston
        .post(
            "/v1/vpgSettings/import",
            &json!({"exportedVpgSettingsApi": exported}),
        )
        .await;
    assert_eq!(
        result["ValidationFailedResults"][0]["VpgName"], "app-tier",
        "{result}"
    );
    assert_eq!(result["ImportTaskIdentifiers"], json!([]));

    let (_, removal) = boston.delete(&format!("/v1/vpgs/{vpg}")).await;
    t.control.advance(10).await;
    assert_eq!(
        boston.wait_task(removal.as_str().unwrap()).await["Status"]["State"],
        6
    );
    let (status, result) = boston
        .post(
            "/v1/vpgSettings/import",
            &json!({"exportedVpgSettingsApi": exported, "vpgNames": ["app-tier"]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{result}");
    let task = result["ImportTaskIdentifiers"][0]["TaskIdentifier"]
        .as_str()
        .expect("a task")
        .to_owned();
    t.control.advance(20).await;
    let task = boston.wait_task(&task).await;
    assert_eq!(
        (task["Type"].clone(), task["Status"]["State"].clone()),
        (json!("CreateProtectionGroup"), json!(6))
    );
    let back = t.control.vpg_id("app-tier").await;
    assert_ne!(back, vpg, "a new VPG");
    let again = boston.get_ok(&format!("/v1/vpgs/{back}")).await;
    assert_eq!(
        (again["VmsCount"].clone(), again["Status"].clone()),
        (json!(3), json!(1)),
        "{again}"
    );
}

#[tokio::test]
async fn copied_settings_are_a_new_vpgs_with_the_settings_but_no_vm() {
    let t = spawn_frozen(39).await;
    let boston = t.boston().await;
    let vpg = boston.vpg_id("web-dr").await;
    let (status, id) = boston
        .post(
            "/v1/vpgSettings/copyVpgSettings",
            &json!({"vpgIdentifier": vpg}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{id}");
    let doc = boston
        .get_ok(&format!("/v1/vpgSettings/{}", id.as_str().unwrap()))
        .await;
    assert_eq!(doc["VpgIdentifier"], Value::Null);
    assert_eq!(doc["Vms"], json!([]));
    assert_eq!(
        (
            doc["Basic"]["Name"].clone(),
            doc["Basic"]["Priority"].clone()
        ),
        (json!("web-dr"), json!("High"))
    );
    expect_refused(
        boston
            .post("/v1/vpgSettings/copyVpgSettings", &json!({}))
            .await,
        StatusCode::BAD_REQUEST,
        &["vpgIdentifier is required"],
    );
}

#[tokio::test]
async fn a_vpg_created_empty_takes_its_vms_after_and_syncs_them_as_zertos_own_sdk_example_does() {
    let t = spawn_frozen(40).await;
    let boston = t.boston().await;
    let path = new_vpg_settings(&boston, "empty-first", &[]).await;
    let (status, task) = boston.post(&format!("{path}/commit"), &json!({})).await;
    assert_eq!(status, StatusCode::OK, "{task}");
    t.control.advance(10).await;
    assert_eq!(
        boston.wait_task(task.as_str().unwrap()).await["Status"]["State"],
        6
    );
    let vpg = t.control.vpg_id("empty-first").await;
    assert_eq!(
        boston.get_ok(&format!("/v1/vpgs/{vpg}")).await["VmsCount"],
        0
    );

    let (_, id) = boston
        .post("/v1/vpgSettings", &json!({"vpgIdentifier": vpg}))
        .await;
    let path = format!("/v1/vpgSettings/{}", id.as_str().unwrap());
    let vm = unprotected_vm(&boston, "report-01").await;
    let (status, _) = boston
        .post(&format!("{path}/vms"), &json!({"vmIdentifier": vm}))
        .await;
    assert_eq!(status, StatusCode::OK);
    let (_, task) = boston.post(&format!("{path}/commit"), &json!({})).await;
    t.control.advance(1).await;
    assert_eq!(
        boston.wait_task(task.as_str().unwrap()).await["Status"]["State"],
        6
    );
    let syncing = boston.get_ok(&format!("/v1/vpgs/{vpg}")).await;
    assert_eq!(
        (
            syncing["VmsCount"].clone(),
            syncing["Status"].clone(),
            syncing["SubStatus"].clone()
        ),
        (json!(1), json!(2), json!(3)),
        "the VM added syncs first (NotMeetingSLA / VolumeInitialSync): {syncing}"
    );
    t.control.advance(10).await;
    let synced = boston.get_ok(&format!("/v1/vpgs/{vpg}")).await;
    assert_eq!(
        (synced["Status"].clone(), synced["SubStatus"].clone()),
        (json!(1), json!(0))
    );
}
