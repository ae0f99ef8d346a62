//! The `/_sim` control API: resync, status pins, reset, clock, timings, the call log, the task list
//! and guest files.

use reqwest::StatusCode;
use serde_json::{Value, json};
use zvm_sim::test_kit::{TestSim, frozen_with_vpg, spawn, spawn_frozen};

use crate::expect::{
    answer_of, control_ok, expect_ended, expect_refused, get_json, owned_texts, send, status_pair,
    task_ids, vpg_status,
};

#[tokio::test]
async fn a_resync_wipes_every_checkpoint_and_shows_a_sync_until_it_ends() {
    let (t, boston, vpg) = frozen_with_vpg(9, "web-dr").await;
    boston.tag(&t.control, &vpg, "before-resync").await;
    assert_eq!(boston.tagged(&vpg, "before-resync").await.len(), 1);

    let full_sync = json!({ "Seconds": 30, "SubStatus": "FullSync" });
    let body = control_ok(&t, "vpgs/web-dr/resync", full_sync).await;
    assert_eq!(body["VpgIdentifier"], vpg.as_str());
    assert!(boston.checkpoints(&vpg).await.is_empty());
    assert_eq!(vpg_status(&boston, &vpg).await, (Some(2), Some(11)));
    let stats = boston
        .get_ok(&format!("/v1/vpgs/{vpg}/checkpoints/stats"))
        .await;
    assert!(stats["Earliest"].is_null() && stats["Latest"].is_null());

    let refused = boston.insert(&vpg, "during-resync").await;
    t.control.advance(10.0).await;
    expect_ended(&boston.task(&refused).await, 4, &["FullSync"]);
    assert!(
        boston.checkpoints(&vpg).await.is_empty(),
        "no checkpoint during the sync"
    );

    t.control.advance(20.0).await;
    assert_eq!(vpg_status(&boston, &vpg).await, (Some(1), Some(0)));
    t.control.advance(10.0).await;
    let listed = boston.checkpoints(&vpg).await;
    let times: Vec<&str> = listed
        .iter()
        .map(|c| c["TimeStamp"].as_str().unwrap())
        .collect();
    // The resync ended at 00:00:31; checkpoints resume from its end only.
    assert_eq!(
        times,
        ["2026-01-01T00:00:35.000Z", "2026-01-01T00:00:40.000Z"]
    );
    assert!(boston.tagged(&vpg, "before-resync").await.is_empty());
    let ok = boston.insert(&vpg, "after-resync").await;
    t.control.advance(1.0).await;
    assert_eq!(boston.task(&ok).await["Status"]["State"], 6);
}

#[tokio::test]
async fn an_insert_running_when_a_resync_starts_fails() {
    let (t, boston, vpg) = frozen_with_vpg(9, "web-local").await;
    let id = boston.insert(&vpg, "interrupted").await;
    control_ok(&t, "vpgs/web-local/resync", json!({ "Seconds": 5 })).await;
    t.control.advance(10.0).await;
    expect_ended(&boston.task(&id).await, 4, &["web-local"]);
    assert!(boston.tagged(&vpg, "interrupted").await.is_empty());
}

#[tokio::test]
async fn a_resync_refuses_a_substatus_that_is_not_a_sync_and_an_unknown_vpg() {
    let t = spawn_frozen(9).await;
    let none = json!({ "SubStatus": "None" });
    let answer = t.control.try_post("vpgs/web-dr/resync", none).await;
    expect_refused(answer, StatusCode::BAD_REQUEST, &["DeltaSync"]);
    let answer = t
        .control
        .try_post("vpgs/no-such-vpg/resync", json!({}))
        .await;
    expect_refused(answer, StatusCode::NOT_FOUND, &["no-such-vpg"]);
    // No body at all: the defaults (30 s of FullSync).
    let url = format!("{}/_sim/vpgs/web-dr/resync", t.boston_url());
    let response = send(t.http.post(url)).await;
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["SubStatus"], 11);
    assert_eq!(body["ResyncUntil"], "2026-01-01T00:00:30.000Z");
}

#[tokio::test]
async fn a_pinned_status_holds_and_decides_whether_inserts_work() {
    let (t, boston, vpg) = frozen_with_vpg(9, "web-local").await;
    let initializing = json!({ "status": "Initializing", "subStatus": 1 });
    control_ok(&t, &format!("vpgs/{vpg}/status"), initializing).await;
    let refused = boston.insert(&vpg, "while-initializing").await;
    t.control.advance(60.0).await;
    assert_eq!(boston.task(&refused).await["Status"]["State"], 4);
    assert_eq!(vpg_status(&boston, &vpg).await, (Some(0), Some(1)));

    let history_not_met = json!({ "Status": 4, "SubStatus": 0 });
    control_ok(&t, "vpgs/web-local/status", history_not_met).await;
    let accepted = boston.insert(&vpg, "history-not-met").await;
    t.control.advance(1.0).await;
    assert_eq!(boston.task(&accepted).await["Status"]["State"], 6);
    let sleeping = json!({ "Status": "Sleeping" });
    let answer = t.control.try_post("vpgs/web-local/status", sleeping).await;
    expect_refused(answer, StatusCode::BAD_REQUEST, &["Status"]);
}

#[tokio::test]
async fn reset_brings_back_the_initial_world_of_the_seed() {
    let (t, boston, vpg) = frozen_with_vpg(9, "web-dr").await;
    let before_ids = boston.get_ok("/v1/vms").await;
    let first_task = boston.insert(&vpg, "gone-after-reset").await;
    t.control.try_post("vpgs/web-local/resync", json!({})).await;
    t.control
        .try_post("timing", json!({ "TaskDurationMs": 5000 }))
        .await;
    t.control.advance(100.0).await;

    let body = control_ok(&t, "reset", json!({})).await;
    assert_eq!(body["Seed"], 9);
    assert_eq!(body["Now"], "2026-01-01T00:00:00.000Z");
    assert!(t.control.calls().await.is_empty());
    assert!(t.control.get("tasks").await.as_array().unwrap().is_empty());
    assert_eq!(t.control.get("timing").await["TaskDurationMs"], 50);
    // Tokens are part of the world: they are gone too.
    assert_eq!(boston.get("/v1/vpgs").await.0, StatusCode::UNAUTHORIZED);
    let boston = t.boston().await;
    assert_eq!(
        boston.get_ok("/v1/vms").await,
        before_ids,
        "same identifiers"
    );
    assert!(boston.tagged(&vpg, "gone-after-reset").await.is_empty());
    // The runtime random stream starts over too: the first task id repeats.
    assert_eq!(boston.insert(&vpg, "again").await, first_task);
}

#[tokio::test]
async fn the_clock_can_be_read_advanced_frozen_and_restarted() {
    let t = spawn(9).await;
    let frozen = control_ok(&t, "clock/scale", json!({ "Scale": 0 })).await;
    assert_eq!(frozen["Scale"], 0.0);
    let now = t.control.now().await;
    assert_eq!(t.control.now().await, now, "a frozen clock stands still");
    let (_, advanced) = t
        .control
        .try_post("clock/advance", json!({ "seconds": 3600 }))
        .await;
    let expected = chrono::DateTime::parse_from_rfc3339(&now).unwrap() + chrono::Duration::hours(1);
    assert_eq!(
        chrono::DateTime::parse_from_rfc3339(advanced["Now"].as_str().unwrap()).unwrap(),
        expected
    );
    for bad in [
        json!({ "Seconds": -1 }),
        json!({}),
        json!({ "Seconds": "soon" }),
    ] {
        let answer = t.control.try_post("clock/advance", bad).await;
        expect_refused(answer, StatusCode::BAD_REQUEST, &["Seconds"]);
    }
    let (status, _) = t
        .control
        .try_post("clock/scale", json!({ "Scale": -2 }))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (_, running) = t
        .control
        .try_post("clock/scale", json!({ "Scale": 1000 }))
        .await;
    assert_eq!(running["Scale"], 1000.0);
}

#[tokio::test]
async fn timings_change_at_run_time() {
    let t = spawn_frozen(9).await;
    let slow = json!({ "TaskDurationMs": 10_000, "ListingLagMs": 0 });
    let timing = control_ok(&t, "timing", slow.clone()).await;
    assert_eq!(timing, slow);
    let boston = t.boston().await;
    let vpg = boston.vpg_id("web-local").await;
    let id = boston.insert(&vpg, "slow").await;
    t.control.advance(5.0).await;
    assert_eq!(boston.task(&id).await["Status"]["State"], 1);
    t.control.advance(10.0).await;
    assert_eq!(boston.task(&id).await["Status"]["State"], 6);
    assert_eq!(boston.tagged(&vpg, "slow").await.len(), 1);
    let (status, _) = t
        .control
        .try_post("timing", json!({ "ListingLagMs": -5 }))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn the_call_log_records_every_api_call_of_both_sites_but_no_control_call() {
    let t = spawn_frozen(9).await;
    let (boston, denver) = t.both_sites().await;
    let vpg = boston.vpg_id("web-dr").await;
    let task = boston.insert(&vpg, "logged").await;
    denver.get("/v1/vpgs?Status=1").await;
    boston.get("/v1/nowhere").await;
    t.control.get("clock").await;
    let calls = t.control.calls().await;
    let summary: Vec<(u64, &str, &str, &str, u64)> = calls
        .iter()
        .map(|c| {
            (
                c["Seq"].as_u64().unwrap(),
                c["Site"].as_str().unwrap(),
                c["Method"].as_str().unwrap(),
                c["Path"].as_str().unwrap(),
                c["Status"].as_u64().unwrap(),
            )
        })
        .collect();
    let token_path = "/auth/realms/zerto/protocol/openid-connect/token";
    let insert_path = format!("/v1/vpgs/{vpg}/checkpoints");
    assert_eq!(
        summary,
        [
            (1, "Boston", "POST", token_path, 200),
            (2, "Denver", "POST", token_path, 200),
            (3, "Boston", "GET", "/v1/vpgs", 200),
            (4, "Boston", "POST", insert_path.as_str(), 200),
            (5, "Denver", "GET", "/v1/vpgs", 200),
            (6, "Boston", "GET", "/v1/nowhere", 404),
        ]
    );
    assert_eq!(calls[2]["Query"], "name=web-dr");
    assert_eq!(calls[3]["TaskId"], task.as_str());
    assert!(calls[4]["TaskId"].is_null());
    assert_eq!(calls[4]["Query"], "Status=1");
    let cleared = send(t.http.delete(format!("{}/_sim/calls", t.denver_url()))).await;
    assert_eq!(cleared.status(), StatusCode::NO_CONTENT);
    assert!(t.control.calls().await.is_empty());
    boston.get("/v1/vpgs").await;
    assert_eq!(t.control.calls().await[0]["Seq"], 1);
}

#[tokio::test]
async fn the_task_list_holds_every_task_of_both_sites() {
    let t = spawn_frozen(9).await;
    let (boston, denver) = t.both_sites().await;
    let a = boston.insert(&boston.vpg_id("web-local").await, "a").await;
    let b = denver.insert(&denver.vpg_id("ci-denver").await, "b").await;
    t.control.advance(1.0).await;
    let tasks = t.control.get("tasks").await;
    let rows = tasks.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["TaskIdentifier"], a.as_str());
    assert_eq!(rows[0]["Site"], "Boston");
    assert_eq!(rows[0]["VpgName"], "web-local");
    assert_eq!(rows[0]["CheckpointName"], "a");
    assert_eq!(rows[1]["TaskIdentifier"], b.as_str());
    assert_eq!(rows[1]["Site"], "Denver");
    for row in rows {
        for key in [
            "Type",
            "VpgIdentifier",
            "State",
            "CompleteReason",
            "Started",
            "Completed",
        ] {
            assert!(row.get(key).is_some(), "{key} in {row}");
        }
        assert_eq!(row["State"], 6);
    }
}

#[tokio::test]
async fn a_task_is_listed_for_a_day_after_it_ended_then_forgotten_as_a_zvm_ages_them_out() {
    let t = spawn_frozen(9).await;
    let boston = t.boston().await;
    let old = boston
        .insert(&boston.vpg_id("web-local").await, "old")
        .await;
    t.control.advance(1.0).await;
    t.control.advance(24.0 * 3600.0 - 1.0).await;
    let boston = t.boston().await;
    let recent = boston
        .insert(&boston.vpg_id("web-dr").await, "recent")
        .await;
    t.control.advance(1.0).await;
    assert_eq!(
        task_ids(&t.control.get("tasks").await),
        [old.clone(), recent.clone()]
    );
    assert_eq!(boston.task(&old).await["Status"]["State"], 6);

    t.control.advance(3600.0).await;
    let boston = t.boston().await;
    assert_eq!(task_ids(&t.control.get("tasks").await), [recent.as_str()]);
    assert_eq!(
        task_ids(&boston.get_ok("/v1/tasks").await),
        [recent.as_str()]
    );
    let (status, _) = boston.get(&format!("/v1/tasks/{old}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "a task aged out is unknown");
    // The call log still names it as it was.
    assert!(
        t.control
            .calls()
            .await
            .iter()
            .any(|c| c["TaskId"] == old.as_str())
    );
}

async fn vm_id(t: &TestSim, name: &str) -> String {
    let boston = t.boston().await;
    boston.get_ok(&format!("/v1/vms?vmName={name}")).await[0]["VmIdentifier"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn guest_files_can_be_read_written_and_deleted() {
    let t = spawn_frozen(9).await;
    let web = vm_id(&t, "web-01").await;
    let url = |path: &str| format!("{}/_sim/vms/{web}/files?path={path}", t.boston_url());
    let conf = send(t.http.get(url("sda1/etc/app/app.conf"))).await;
    assert_eq!(conf.status(), StatusCode::OK);
    let text = conf.text().await.unwrap();
    assert!(text.contains("name = web-01"), "{text}");
    assert!(
        !text.to_lowercase().contains("password ="),
        "no real secret: {text}"
    );

    let written = url("sda1/etc/app/app.conf");
    let written = send(t.http.put(written).body("changed by an agent\n")).await;
    assert_eq!(written.status(), StatusCode::OK);
    let written: Value = written.json().await.unwrap();
    assert_eq!(written["Size"], 20);
    let now = send(t.http.get(url("sda1/etc/app/app.conf"))).await;
    assert_eq!(now.text().await.unwrap(), "changed by an agent\n");

    let deleted = send(t.http.delete(url("sda1/etc/hostname"))).await;
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
    let gone = send(t.http.get(url("sda1/etc/hostname"))).await;
    assert_eq!(gone.status(), StatusCode::NOT_FOUND);
    let again = send(t.http.delete(url("sda1/etc/hostname"))).await;
    assert_eq!(again.status(), StatusCode::NOT_FOUND);

    for bad in ["/etc/hosts", "sda1/../etc", "C:/Windows/x"] {
        let answer = answer_of(send(t.http.get(url(bad))).await).await;
        expect_refused(answer, StatusCode::BAD_REQUEST, &["sda1"]);
    }
}

#[tokio::test]
async fn every_guest_starts_with_its_partitions_and_files() {
    let t = spawn_frozen(9).await;
    let linux = guest_paths(&t, "db-01").await;
    for path in [
        "sda1/etc/hostname",
        "sda1/etc/hosts",
        "sda1/etc/app/app.conf",
        "sda1/var/www/html/index.html",
        "sda1/var/www/html/health.json",
    ] {
        assert!(linux.contains(&path.to_owned()), "{path} in {linux:?}");
    }
    assert!(linux.iter().any(|p| p.starts_with("sdb1/data/")));
    let windows = guest_paths(&t, "sql-01").await;
    for path in [
        "C:/Windows/System32/drivers/etc/hosts",
        "C:/ProgramData/App/app.ini",
        "C:/inetpub/wwwroot/web.config",
    ] {
        assert!(windows.contains(&path.to_owned()), "{path} in {windows:?}");
    }
    assert!(windows.iter().any(|p| p.starts_with("D:/Data/")));
    // The control API also takes a unique VM name, and Windows paths ignore case.
    let ini = format!(
        "{}/_sim/vms/report-01/files?path=c:/programdata/app/APP.INI",
        t.boston_url()
    );
    let ini = send(t.http.get(ini)).await;
    assert_eq!(ini.status(), StatusCode::OK);
    assert!(ini.text().await.unwrap().contains("Name=report-01"));
}

#[tokio::test]
async fn a_shared_vm_name_is_ambiguous_in_the_control_api() {
    let t = spawn_frozen(9).await;
    let url = format!("{}/_sim/vms/build-agent/files", t.boston_url());
    let answer = answer_of(send(t.http.get(url)).await).await;
    expect_refused(answer, StatusCode::CONFLICT, &["Boston", "Denver"]);
}

#[tokio::test]
async fn the_clock_refuses_to_move_past_the_year_9999_instead_of_wrapping_to_1970() {
    let t = zvm_sim::test_kit::spawn_frozen(77).await;
    let mut last = t.control.now().await;
    let mut refused = None;
    for _ in 0..100 {
        let (status, body) = t
            .control
            .try_post("clock/advance", serde_json::json!({"Seconds": 3.15e9}))
            .await;
        let now = t.control.now().await;
        assert!(now >= last, "the clock went back from {last} to {now}");
        last = now;
        if status != reqwest::StatusCode::OK {
            refused = Some((status, body));
            break;
        }
    }
    let answer = refused.expect("a move past the year 9999 is refused");
    expect_refused(
        answer,
        StatusCode::BAD_REQUEST,
        &["9999-12-31T23:59:59.999Z"],
    );
    assert!(last.starts_with("99"), "{last}");
}

#[tokio::test]
async fn a_request_body_that_never_arrives_in_whole_is_answered_408() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let t = zvm_sim::test_kit::spawn_with(zvm_sim::Options {
        body_deadline: std::time::Duration::from_millis(200),
        ..zvm_sim::Options::for_tests(78)
    })
    .await;
    let addr = t.boston_url().trim_start_matches("http://").to_string();
    let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "POST /auth/realms/zerto/protocol/openid-connect/token HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\ngrant_type="
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    let read = tokio::time::timeout(std::time::Duration::from_secs(30), async {
        loop {
            let n = stream.read(&mut buf).await.unwrap();
            answer.extend_from_slice(&buf[..n]);
            if n == 0 || answer.windows(4).any(|w| w == b"\r\n\r\n") {
                break;
            }
        }
    })
    .await;
    assert!(read.is_ok(), "no answer to a body that never ends");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
}

#[tokio::test]
async fn the_vpg_list_names_every_vpg_of_both_sites_with_the_identifier_the_zvm_shows() {
    let t = spawn_frozen(12).await;
    let (boston, denver) = t.both_sites().await;
    let listed = t.control.vpgs().await;
    assert_eq!(
        listed.len(),
        11,
        "the default world has eleven VPGs: {listed:?}"
    );
    for (name, site) in [
        ("web-dr", &boston),
        ("erp-dr", &denver),
        ("ci-denver", &denver),
    ] {
        assert_eq!(
            t.control.vpg_id(name).await,
            site.vpg_id(name).await,
            "{name}"
        );
    }
    let syncing = listed.iter().find(|v| v["VpgName"] == "files-dr").unwrap();
    assert_eq!(status_pair(syncing), (Some(2), Some(6)));
}

/// The paths of a guest's files, as the control API lists them.
async fn guest_paths(t: &TestSim, vm: &str) -> Vec<String> {
    let url = format!("{}/_sim/vms/{}/files", t.boston_url(), vm_id(t, vm).await);
    let files = get_json(&t.http, &url).await;
    owned_texts(&files, "Path")
}
