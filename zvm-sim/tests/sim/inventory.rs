//! Inventory: sites, VMs, VPGs, enums, PascalCase, case-insensitive queries, 400/404 bodies, and
//! what each site's ZVM can see.

use reqwest::StatusCode;
use serde_json::Value;
use zvm_sim::test_kit::{Site, TestSim, spawn};

use crate::expect::{expect_refused, owned_texts, status_pair};

/// Every object key is PascalCase, except inside link objects (`href`, `identifier`, `rel`,
/// `type`), which the ZVM writes in lowercase.
fn assert_pascal_case(value: &Value, at: &str) {
    match value {
        Value::Object(map) => {
            let is_link = map.contains_key("href") && map.contains_key("identifier");
            for (key, inner) in map {
                if is_link {
                    assert!(
                        ["href", "identifier", "rel", "type"].contains(&key.as_str()),
                        "{at}: unexpected link key {key}"
                    );
                } else {
                    assert!(
                        key.chars().next().is_some_and(|c| c.is_ascii_uppercase()),
                        "{at}: key {key} is not PascalCase"
                    );
                }
                assert_pascal_case(inner, &format!("{at}.{key}"));
            }
        }
        Value::Array(items) => items
            .iter()
            .for_each(|item| assert_pascal_case(item, &format!("{at}[]"))),
        _ => {}
    }
}

/// A fresh simulator of this file's world (seed 3) and Boston, logged in as admin.
async fn at_boston() -> (TestSim, Site) {
    let t = spawn(3).await;
    let boston = t.boston().await;
    (t, boston)
}

/// The VM row of the VPG named `vpg`.
fn row_in<'a>(rows: &'a Value, vpg: &str) -> &'a Value {
    let rows = rows.as_array().unwrap_or_else(|| panic!("a list: {rows}"));
    let row = rows.iter().find(|r| r["VpgName"] == vpg);
    row.unwrap_or_else(|| panic!("a row of {vpg}"))
}

fn names(rows: &Value, key: &str) -> Vec<String> {
    let mut names = owned_texts(rows, key);
    names.sort();
    names
}

#[tokio::test]
async fn every_endpoint_answers_in_pascal_case() {
    let t = spawn(3).await;
    let (boston, vpg) = t.boston_with_vpg("web-dr").await;
    let task = boston.insert(&vpg, "pascal").await;
    boston.wait_task(&task).await;
    let site_id = &t.sim.local().site_identifier;
    let peer_id = &t.sim.peer().site_identifier;
    let vm = boston.get_ok("/v1/vms?vmName=db-01").await[0]["VmIdentifier"]
        .as_str()
        .unwrap()
        .to_owned();
    for path in [
        "/v1/localsite".to_owned(),
        "/v1/peersites".to_owned(),
        format!("/v1/peersites/{peer_id}"),
        "/v1/virtualizationsites".to_owned(),
        format!("/v1/virtualizationsites/{site_id}"),
        format!("/v1/virtualizationsites/{site_id}/vms"),
        "/v1/vms".to_owned(),
        format!("/v1/vms/{vm}"),
        "/v1/vpgs".to_owned(),
        format!("/v1/vpgs/{vpg}"),
        format!("/v1/vpgs/{vpg}/checkpoints"),
        format!("/v1/vpgs/{vpg}/checkpoints/stats"),
        "/v1/tasks".to_owned(),
        format!("/v1/tasks/{task}"),
    ] {
        let body = boston.get_ok(&path).await;
        assert!(!body.is_null(), "{path}");
        assert_pascal_case(&body, &path);
    }
    for path in [
        "/v1/vpgs/statuses",
        "/v1/vpgs/substatuses",
        "/v1/tasks/types",
    ] {
        assert!(
            boston
                .get_ok(path)
                .await
                .as_array()
                .is_some_and(|a| !a.is_empty())
        );
    }
}

#[tokio::test]
async fn the_local_site_and_its_peer_describe_each_other() {
    let (t, boston) = at_boston().await;
    let local = boston.get_ok("/v1/localsite").await;
    assert_eq!(local["SiteName"], "Boston");
    assert_eq!(
        local["SiteIdentifier"],
        t.sim.local().site_identifier.as_str()
    );
    assert_eq!(local["Link"]["type"], "LocalSiteApi");
    assert_eq!(local["SiteType"], "VCenter");
    let peers = boston.get_ok("/v1/peersites").await;
    assert_eq!(names(&peers, "PeerSiteName"), ["Denver"]);
    assert_eq!(
        peers[0]["SiteIdentifier"],
        t.sim.peer().site_identifier.as_str()
    );
    assert_eq!(peers[0]["PairingStatus"], 0);
    // peerName is documented as case-sensitive.
    assert_eq!(
        boston.get_ok("/v1/peersites?peerName=denver").await,
        Value::Array(vec![])
    );
    let sites = boston.get_ok("/v1/virtualizationsites").await;
    assert_eq!(
        names(&sites, "VirtualizationSiteName"),
        ["Boston", "Denver"]
    );
    let denver = t.denver().await;
    assert_eq!(denver.get_ok("/v1/localsite").await["SiteName"], "Denver");
    let answer = boston
        .get("/v1/peersites/00000000-0000-0000-0000-000000000000")
        .await;
    expect_refused(answer, StatusCode::NOT_FOUND, &[]);
}

#[tokio::test]
async fn vms_are_listed_once_per_vm_and_vpg_with_real_enum_numbers() {
    let (_t, boston) = at_boston().await;
    let web = boston.get_ok("/v1/vms?vmName=web-01").await;
    assert_eq!(
        names(&web, "VpgName"),
        ["web-archive", "web-dr", "web-local"]
    );
    let ids: Vec<&Value> = web
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["VmIdentifier"])
        .collect();
    assert!(ids.windows(2).all(|w| w[0] == w[1]), "one VM in three VPGs");
    let archive = row_in(&web, "web-archive");
    assert_eq!(archive["Status"], 3, "RpoNotMeetingSLA is 3");
    assert_eq!(archive["RecoverySiteName"], "Denver");
    assert_eq!(archive["RecoverySite"]["type"], "PeerSiteApi");
    let id = archive["VmIdentifier"].as_str().unwrap();
    let (server, moref) = id.split_once('.').unwrap();
    assert_eq!(server.len(), 36);
    assert!(moref.starts_with("vm-"));

    let sql = boston.get_ok("/v1/vms?vmName=sql-01").await;
    let init = row_in(&sql, "sql-init");
    assert_eq!(status_pair(init), (Some(0), Some(1)));
    let files = boston
        .get_ok("/v1/vms?vmName=files-01&vpgName=files-dr")
        .await;
    assert_eq!(status_pair(&files[0]), (Some(2), Some(6)));
    let app = boston.get_ok("/v1/vms?vpgName=app-tier").await;
    assert_eq!(names(&app, "VmName"), ["app-01", "app-02", "app-03"]);
}

#[tokio::test]
async fn query_keys_and_values_match_case_insensitively() {
    let (_t, boston) = at_boston().await;
    let expected = boston.get_ok("/v1/vms?vmName=web-01").await;
    for query in ["vmname=web-01", "VMNAME=WEB-01", "VmName=Web-01"] {
        assert_eq!(
            boston.get_ok(&format!("/v1/vms?{query}")).await,
            expected,
            "{query}"
        );
    }
    let by_number = boston.get_ok("/v1/vpgs?status=3").await;
    assert_eq!(names(&by_number, "VpgName"), ["web-archive"]);
    for query in ["status=RpoNotMeetingSLA", "STATUS=rponotmeetingsla"] {
        assert_eq!(
            boston.get_ok(&format!("/v1/vpgs?{query}")).await,
            by_number,
            "{query}"
        );
    }
    for (query, expected) in [
        ("subStatus=deltasync", vec!["files-dr"]),
        ("NAME=SQL-INIT", vec!["sql-init"]),
        ("priority=High", vec!["erp-dr", "sql-local", "web-dr"]),
    ] {
        let vpgs = boston.get_ok(&format!("/v1/vpgs?{query}")).await;
        assert_eq!(names(&vpgs, "VpgName"), expected, "{query}");
    }
}

#[tokio::test]
async fn paths_match_case_insensitively_as_aspnet_routes_them() {
    let (_t, boston) = at_boston().await;
    let expected = boston.get_ok("/v1/vpgs/statuses").await;
    assert_eq!(boston.get_ok("/v1/VPGs/Statuses").await, expected);
    assert_eq!(boston.get_ok("/V1/LocalSite").await["SiteName"], "Boston");
}

/// GETs each path at Boston and expects a refusal with `status` and a message, one that names
/// what `named` picks out of the path.
async fn refused_at_boston(paths: &[&str], status: StatusCode, named: fn(&str) -> Vec<&str>) {
    let (_t, boston) = at_boston().await;
    for path in paths {
        let message = expect_refused(boston.get(path).await, status, &named(path));
        assert!(!message.is_empty(), "{path}");
    }
}

#[tokio::test]
async fn bad_enum_values_and_dates_are_400_with_a_message() {
    let queries = [
        "/v1/vpgs?status=Healthy",
        "/v1/vpgs?status=9",
        "/v1/vms?subStatus=Resting",
        "/v1/tasks?status=Done",
        "/v1/tasks?startedAfterDate=yesterday",
        "/v1/vms?includeMountedVms=maybe",
    ];
    // The message names the query key that was wrong.
    let key: fn(&str) -> Vec<&str> = |query| vec![query.split(['?', '=']).nth(1).unwrap()];
    refused_at_boston(&queries, StatusCode::BAD_REQUEST, key).await;
}

#[tokio::test]
async fn unknown_identifiers_are_404_with_a_message() {
    let paths = [
        "/v1/vpgs/00000000-0000-0000-0000-000000000000",
        "/v1/vpgs/00000000-0000-0000-0000-000000000000/checkpoints",
        "/v1/vms/nope.vm-1",
        "/v1/tasks/nope.nope",
        "/v1/virtualizationsites/nope/vms",
        "/v1/no-such-resource",
    ];
    refused_at_boston(&paths, StatusCode::NOT_FOUND, |_| Vec::new()).await;
}

#[tokio::test]
async fn a_vm_in_several_vpgs_needs_a_vpg_identifier() {
    let (_t, boston) = at_boston().await;
    let rows = boston.get_ok("/v1/vms?vmName=web-01").await;
    let vm = rows[0]["VmIdentifier"].as_str().unwrap();
    let answer = boston.get(&format!("/v1/vms/{vm}")).await;
    let words = ["web-local", "web-dr", "web-archive", "vpgIdentifier"];
    expect_refused(answer, StatusCode::BAD_REQUEST, &words);
    let dr = boston.vpg_id("web-dr").await;
    let row = boston
        .get_ok(&format!("/v1/vms/{vm}?VpgIdentifier={dr}"))
        .await;
    assert_eq!(row["VpgName"], "web-dr");
    let erp = boston.get_ok("/v1/vms?vmName=erp-01").await;
    let single = boston
        .get_ok(&format!(
            "/v1/vms/{}",
            erp[0]["VmIdentifier"].as_str().unwrap()
        ))
        .await;
    assert_eq!(single["VpgName"], "erp-dr");
}

#[tokio::test]
async fn each_zvm_sees_the_vpgs_of_its_protected_and_recovery_sites() {
    let t = spawn(3).await;
    let (boston, denver) = t.both_sites().await;
    let at_boston = names(&boston.get_ok("/v1/vpgs").await, "VpgName");
    let at_denver = names(&denver.get_ok("/v1/vpgs").await, "VpgName");
    assert!(!at_boston.contains(&"ci-denver".to_owned()));
    assert!(!at_denver.contains(&"web-local".to_owned()));
    for shared in ["web-dr", "web-archive", "sql-init", "files-dr", "erp-dr"] {
        assert!(at_boston.contains(&shared.to_owned()), "{shared}");
        assert!(at_denver.contains(&shared.to_owned()), "{shared}");
    }
    assert_eq!(at_boston.len(), 10);
    assert_eq!(at_denver.len(), 6);
    let web_at_denver = denver.get_ok("/v1/vms?vmName=web-01").await;
    assert_eq!(names(&web_at_denver, "VpgName"), ["web-archive", "web-dr"]);
    // FLR runs at the recovery site: only its ZVM offers it.
    let dr_at_boston = boston.get_ok("/v1/vms?vmName=web-01&vpgName=web-dr").await;
    let dr_at_denver = denver.get_ok("/v1/vms?vmName=web-01&vpgName=web-dr").await;
    assert_eq!(dr_at_boston[0]["EnabledActions"]["IsFlrEnabled"], false);
    assert_eq!(dr_at_denver[0]["EnabledActions"]["IsFlrEnabled"], true);
    assert_eq!(dr_at_denver[0]["ProtectedSite"]["type"], "PeerSiteApi");
    assert_eq!(dr_at_denver[0]["RecoverySite"]["type"], "LocalSiteApi");
}

#[tokio::test]
async fn two_vms_share_one_name_and_unprotected_vms_are_only_in_the_virtualization_site() {
    let (t, boston) = at_boston().await;
    let denver = t.denver().await;
    let at_boston = boston.get_ok("/v1/vms?vmName=build-agent").await;
    let at_denver = denver.get_ok("/v1/vms?vmName=build-agent").await;
    assert_eq!(at_boston.as_array().unwrap().len(), 1);
    assert_eq!(at_denver.as_array().unwrap().len(), 1);
    assert_ne!(at_boston[0]["VmIdentifier"], at_denver[0]["VmIdentifier"]);

    assert_eq!(
        boston.get_ok("/v1/vms?vmName=report-01").await,
        Value::Array(vec![])
    );
    let unprotected = |site: &Site, id: String| {
        let site = site.clone();
        async move {
            names(
                &site
                    .get_ok(&format!("/v1/virtualizationsites/{id}/vms"))
                    .await,
                "VmName",
            )
        }
    };
    let local = t.sim.local().site_identifier.clone();
    let peer = t.sim.peer().site_identifier.clone();
    assert_eq!(unprotected(&boston, local).await, ["report-01"]);
    assert_eq!(unprotected(&boston, peer).await, ["scratch-01"]);
    let report = &boston
        .get_ok(&format!(
            "/v1/virtualizationsites/{}/vms",
            t.sim.local().site_identifier
        ))
        .await[0];
    assert_eq!(report["GuestOs"], "Microsoft Windows Server 2022 (64-bit)");
}

#[tokio::test]
async fn vpgs_report_history_and_their_enum_lists() {
    let (_t, boston) = at_boston().await;
    let statuses = boston.get_ok("/v1/vpgs/statuses").await;
    assert_eq!(statuses[3], "RpoNotMeetingSLA");
    assert_eq!(statuses[4], "HistoryNotMeetingSLA");
    let substatuses = boston.get_ok("/v1/vpgs/substatuses").await;
    assert_eq!(substatuses[23], "BitmapSync");
    let types = boston.get_ok("/v1/tasks/types").await;
    assert!(
        types
            .as_array()
            .unwrap()
            .contains(&Value::from("InsertTaggedCP"))
    );
    let dr = boston
        .get_ok(&format!("/v1/vpgs/{}", boston.vpg_id("web-dr").await))
        .await;
    assert_eq!(dr["VmsCount"], 2);
    assert_eq!(dr["HistoryStatusApi"]["ConfiguredHistoryInMinutes"], 120);
    assert!(dr["HistoryStatusApi"]["EarliestCheckpoint"]["CheckpointIdentifier"].is_string());
    let init = boston
        .get_ok(&format!("/v1/vpgs/{}", boston.vpg_id("sql-init").await))
        .await;
    assert!(init["HistoryStatusApi"]["EarliestCheckpoint"].is_null());
    assert_eq!(init["StatusDescription"], "Initializing");
}

#[tokio::test]
async fn the_server_time_is_the_simulated_clock() {
    let t = zvm_sim::test_kit::spawn_frozen(3).await;
    let boston = t.boston().await;
    let now = boston.get_ok("/v1/serverDateTime/serverDateTimeUtc").await;
    assert_eq!(now, "2026-01-01T00:00:00.000Z");
    t.control.advance(90.0).await;
    let later = boston.get_ok("/v1/serverDateTime/serverDateTimeUtc").await;
    assert_eq!(later, "2026-01-01T00:01:30.000Z");
}

/// The rows of the whole listing whose `key` equals `value`, ignoring ASCII case.
fn rows_where<'a>(rows: &'a [Value], key: &str, value: &str) -> Vec<&'a Value> {
    let same = |r: &&Value| {
        r[key]
            .as_str()
            .is_some_and(|v| v.eq_ignore_ascii_case(value))
    };
    rows.iter().filter(same).collect()
}

#[tokio::test]
async fn a_vm_asked_for_by_name_or_identifier_gets_the_rows_the_whole_listing_has_for_it() {
    // Filters are answered from the world's index, not a scan: they must agree with the scan.
    let world = zvm_sim::WorldSpec::generate(300, 5);
    let options = zvm_sim::Options {
        world,
        ..zvm_sim::Options::for_tests(5)
    };
    let t = zvm_sim::test_kit::spawn_with(options).await;
    let boston = t.boston().await;
    let all = boston.get_ok("/v1/vms").await;
    let rows = all.as_array().expect("a list");
    assert!(rows.len() > 300, "every VM's rows: {}", rows.len());
    for row in rows
        .iter()
        .step_by(23)
        .chain(rows.iter().filter(|r| r["VmName"] == "web-01"))
    {
        let (name, id) = (
            row["VmName"].as_str().unwrap(),
            row["VmIdentifier"].as_str().unwrap(),
        );
        let by_name = boston
            .get_ok(&format!("/v1/vms?vmName={}", name.to_uppercase()))
            .await;
        let by_id = boston
            .get_ok(&format!("/v1/vms?vmIdentifier={}", id.to_uppercase()))
            .await;
        let by_name: Vec<&Value> = by_name.as_array().unwrap().iter().collect();
        let by_id: Vec<&Value> = by_id.as_array().unwrap().iter().collect();
        assert_eq!(by_name, rows_where(rows, "VmName", name), "{name}");
        assert_eq!(by_id, rows_where(rows, "VmIdentifier", id), "{id}");
    }
}

#[tokio::test]
async fn the_vpg_enumerations_list_their_names_in_value_order() {
    let (_t, boston) = at_boston().await;
    for (path, first, count) in [
        ("/v1/vpgs/entitytypes", "VCVpg", 5),
        ("/v1/vpgs/failovercommitpolicies", "Rollback", 3),
        ("/v1/vpgs/failovershutdownpolicies", "None", 3),
        ("/v1/vpgs/retentionpolicies", "Standard", 2),
    ] {
        let names = boston.get_ok(path).await;
        let names = names.as_array().unwrap_or_else(|| panic!("{path}: a list"));
        assert_eq!(
            (names[0].as_str(), names.len()),
            (Some(first), count),
            "{path}"
        );
    }
}

#[tokio::test]
async fn the_login_banner_is_off_until_set_and_is_per_site() {
    let (t, boston) = at_boston().await;
    let path = "/v1/localsite/settings/loginBanner";
    let off = boston.get_ok(path).await;
    assert_eq!(off["IsLoginBannerEnabled"], false);
    assert!(off["LoginBanner"].is_null(), "{off}");

    let on_without_text = serde_json::json!({"isLoginBannerEnabled": true});
    let (status, refused) = boston
        .request(reqwest::Method::PUT, path, Some(&on_without_text))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert!(refused.to_string().contains("loginBanner"), "{refused}");

    let banner =
        serde_json::json!({"isLoginBannerEnabled": true, "loginBanner": "Authorized use only"});
    let (status, _) = boston
        .request(reqwest::Method::PUT, path, Some(&banner))
        .await;
    assert_eq!(status, StatusCode::OK);
    let set = boston.get_ok(path).await;
    assert_eq!(set["IsLoginBannerEnabled"], true);
    assert_eq!(set["LoginBanner"], "Authorized use only");
    let denver = t.denver().await;
    assert_eq!(
        denver.get_ok(path).await["IsLoginBannerEnabled"],
        false,
        "Denver's own"
    );
    let misspelt = boston.get_ok("/v1/localsite/settings/logingbanner").await;
    assert_eq!(
        misspelt["LoginBanner"], "Authorized use only",
        "the wrapper's spelling"
    );
}

#[tokio::test]
async fn encryption_detection_license_and_pairing_tokens_are_set_per_site() {
    let (t, boston) = at_boston().await;
    let state = "/v1/encryptionDetection/state";
    assert_eq!(
        boston.get_ok(state).await["EncryptionDetectionEnabled"],
        true
    );
    let off = serde_json::json!({"encryptionDetectionEnabled": false});
    assert_eq!(boston.post(state, &off).await.0, StatusCode::OK);
    assert_eq!(
        boston.get_ok(state).await["EncryptionDetectionEnabled"],
        false
    );
    let denver = t.denver().await;
    assert_eq!(
        denver.get_ok(state).await["EncryptionDetectionEnabled"],
        true
    );
    // Without a body, as zvma10-api-wrapper sends it, the query says.
    let (status, _) = boston
        .request(
            reqwest::Method::POST,
            &format!("{state}?encryptionDetectionEnabled=true"),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        boston.get_ok(state).await["EncryptionDetectionEnabled"],
        true
    );
    let vpg = boston.vpg_id("web-local").await;
    let dismiss = "/v1/encryptionDetection/dismissEvent";
    let known = serde_json::json!({"vpgIdentifiers": [vpg]});
    assert_eq!(boston.post(dismiss, &known).await.0, StatusCode::OK);
    let unknown = serde_json::json!({"vpgIdentifiers": ["no-such-vpg"]});
    assert_eq!(
        boston.post(dismiss, &unknown).await.0,
        StatusCode::NOT_FOUND
    );

    let license = boston.get_ok("/v1/license").await;
    assert_eq!(license["Details"]["LicenseKey"], "SIMULATED-ZVM-LICENSE");
    let (status, _) = boston.delete("/v1/license").await;
    assert_eq!(status, StatusCode::OK);
    assert!(boston.get_ok("/v1/license").await["Details"].is_null());
    assert_eq!(boston.delete("/v1/license").await.0, StatusCode::NOT_FOUND);
    let key = serde_json::json!({"licenseKey": "ABCD-1234"});
    let (status, _) = boston
        .request(reqwest::Method::PUT, "/v1/license", Some(&key))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        boston.get_ok("/v1/license").await["Details"]["LicenseKey"],
        "ABCD-1234"
    );

    let (status, first) = boston
        .post("/v1/peersites/generatetoken", &serde_json::json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{first}");
    assert!(
        first["Token"].as_str().is_some_and(|t| t.len() >= 16),
        "{first}"
    );
    assert!(first["UtcExpirationDate"].is_string(), "{first}");
    let (_, second) = boston
        .post("/v1/peersites/generatetoken", &serde_json::json!({}))
        .await;
    assert_ne!(first["Token"], second["Token"], "a new token each time");

    let session = serde_json::json!({"zorgIdentifier": "z", "zsspAddress": "https://zssp"});
    let (status, refused) = boston.post("/v1/zsspsessions", &session).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        refused.to_string().contains("Zerto Cloud Manager"),
        "{refused}"
    );
}
