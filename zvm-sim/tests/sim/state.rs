//! Saved state: the whole world saved at shutdown and restored at start (`state_file`, `--state`),
//! and read and replaced through `GET|PUT /_sim/state`, with bad documents refused.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use zvm_sim::Options;
use zvm_sim::test_kit::{Site, TestSim, spawn_with};

use crate::binary::{start_binary, stop_with_ctrl_c};
use crate::expect::{answer_of, control_ok, expect_refused, get_json, send};

fn frozen_with_state(seed: u64, file: &Path) -> Options {
    Options {
        time_scale: 0.0,
        state_file: Some(file.to_owned()),
        ..Options::for_tests(seed)
    }
}

async fn state_json(t: &TestSim) -> Value {
    t.control.get("state").await
}

/// A world with some history: a tag, a changed guest file, a mounted FLR session, a fault rule
/// and an insert still running. Returns the tag's checkpoint, the session and the running task.
async fn make_history(t: &TestSim, boston: &Site) -> (String, String, String) {
    let vpg = boston.vpg_id("web-local").await;
    let vm = boston.vm_id("web-01", "web-local").await;
    let checkpoint = boston.tag(&t.control, &vpg, "saved").await;
    t.control.advance(1.0).await;
    t.control
        .put_file(&vm, "sda1/etc/app/app.conf", b"changed after the tag")
        .await;
    let (_, session) = boston.start_flr(&vpg, &vm, &checkpoint).await;
    t.control.advance(1.0).await;
    let rule = json!({"Path": "/v1/localsite", "Action": "Respond", "Status": 503,
                      "Probability": 0.5});
    control_ok(t, "faults", rule).await;
    let running = boston.insert(&vpg, "running at shutdown").await;
    (checkpoint, session.as_str().unwrap().to_owned(), running)
}

#[tokio::test]
async fn a_run_saved_at_shutdown_is_restored_at_start_as_it_was() {
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("state.json");
    let t = spawn_with(frozen_with_state(81, &file)).await;
    let boston = t.boston().await;
    let (checkpoint, session, running) = make_history(&t, &boston).await;
    let before = state_json(&t).await;
    let identifiers = (
        t.sim.local().site_identifier.clone(),
        t.sim.peer().site_identifier.clone(),
    );
    t.sim.shutdown().await;
    assert!(file.is_file(), "shutdown writes the state file");

    // Another seed, to show the world comes from the file and not from the seed.
    let t = spawn_with(frozen_with_state(82, &file)).await;
    assert_eq!(
        state_json(&t).await,
        before,
        "the same world, byte for byte"
    );
    assert_eq!(
        (
            t.sim.local().site_identifier.clone(),
            t.sim.peer().site_identifier.clone()
        ),
        identifiers
    );
    // The same token still works at the new address.
    let boston = Site {
        base: t.boston_url().to_owned(),
        ..boston
    };
    assert_eq!(boston.task(&running).await["Status"]["State"], 1);
    t.control.advance(1.0).await;
    assert_eq!(
        boston.task(&running).await["Status"]["State"],
        6,
        "it ran on after the restart"
    );
    let tagged = boston
        .tagged(&boston.vpg_id("web-local").await, "saved")
        .await;
    assert_eq!(tagged[0]["CheckpointIdentifier"], checkpoint.as_str());
    let (_, url) = boston
        .post(
            &format!("/v1/flrs/{session}/download"),
            &json!({"PathList": ["sda1/etc/app/app.conf"]}),
        )
        .await;
    let old = boston
        .fetch(url.as_str().unwrap())
        .await
        .text()
        .await
        .unwrap();
    assert!(
        old.contains("[server]"),
        "the journal kept the old bytes: {old}"
    );
    assert_eq!(t.control.get("faults").await[0]["Probability"], 0.5);
}

#[tokio::test]
async fn a_restored_run_draws_the_same_task_ids_as_one_that_never_stopped() {
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("state.json");
    let uninterrupted = spawn_with(frozen_with_state(83, &folder.path().join("other.json"))).await;
    let boston = uninterrupted.boston().await;
    make_history(&uninterrupted, &boston).await;
    let vpg = boston.vpg_id("app-tier").await;
    let expected = boston.insert(&vpg, "next").await;

    let saved = spawn_with(frozen_with_state(83, &file)).await;
    let boston = saved.boston().await;
    make_history(&saved, &boston).await;
    saved.sim.shutdown().await;
    let restored = spawn_with(frozen_with_state(83, &file)).await;
    let boston = Site {
        base: restored.boston_url().to_owned(),
        ..boston
    };
    assert_eq!(boston.insert(&vpg, "next").await, expected);
}

#[tokio::test]
async fn put_state_replaces_the_world_and_a_refused_document_changes_nothing() {
    let source = spawn_with(Options {
        time_scale: 0.0,
        ..Options::for_tests(84)
    })
    .await;
    let boston = source.boston().await;
    make_history(&source, &boston).await;
    let saved = state_json(&source).await;

    let target = spawn_with(Options {
        time_scale: 0.0,
        ..Options::for_tests(85)
    })
    .await;
    let put = |body: Vec<u8>| {
        target
            .http
            .put(format!("{}/_sim/state", target.boston_url()))
            .body(body)
            .send()
    };
    let fresh = state_json(&target).await;
    let mut wrong_format = saved.clone();
    wrong_format["Format"] = json!("zvm-sim-state/0");
    let mut dangling = saved.clone();
    dangling["Vms"][0]["Vpgs"] = json!([9999]);
    for (document, says) in [
        (b"not json".to_vec(), "not valid"),
        (
            serde_json::to_vec(&wrong_format).unwrap(),
            "Format 'zvm-sim-state/0'",
        ),
        (
            serde_json::to_vec(&dangling).unwrap(),
            "refers to position 9999",
        ),
    ] {
        let answer = answer_of(put(document).await.unwrap()).await;
        expect_refused(answer, StatusCode::BAD_REQUEST, &[says]);
        assert_eq!(
            state_json(&target).await,
            fresh,
            "a refused state changes nothing"
        );
    }

    let response = put(serde_json::to_vec(&saved).unwrap()).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(state_json(&target).await, saved);
    let token = boston.token.clone();
    let restored = Site {
        base: target.boston_url().to_owned(),
        http: target.http.clone(),
        token,
    };
    let vpg = restored.vpg_id("web-local").await;
    assert_eq!(restored.tagged(&vpg, "saved").await.len(), 1);
}

#[tokio::test]
async fn the_binary_saves_its_state_on_ctrl_c_and_restores_it_at_start() {
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("state.json");
    let args = [
        OsStr::new("--time-scale"),
        OsStr::new("0"),
        OsStr::new("--seed"),
        OsStr::new("9"),
        OsStr::new("--state"),
        file.as_os_str(),
    ];
    let start = || {
        let (child, mut lines) = start_binary(&args, Stdio::null());
        async move {
            let _seed = lines.next_line().await.unwrap();
            let boston = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
                .await
                .expect("the binary prints where it listens")
                .unwrap()
                .unwrap();
            let url = boston.split(" listening on ").nth(1).unwrap().to_owned();
            let _denver = lines.next_line().await.unwrap();
            (child, url)
        }
    };
    let http = reqwest::Client::new();
    let (child, url) = start().await;
    let advance = http.post(format!("{url}/_sim/clock/advance"));
    let advanced: Value = send(advance.json(&json!({"Seconds": 3600})))
        .await
        .json()
        .await
        .unwrap();
    let status = stop_with_ctrl_c(child).await.status;
    assert!(status.success(), "{status}");
    assert!(file.is_file(), "Ctrl-C wrote the state file");

    let (_child, url) = start().await;
    let clock = get_json(&http, &format!("{url}/_sim/clock")).await;
    assert_eq!(
        clock["Now"], advanced["Now"],
        "the clock resumes where it stopped"
    );
    assert_eq!(clock["Now"], "2026-01-01T01:00:00.000Z");
}

#[tokio::test]
async fn the_binary_exits_with_an_error_naming_the_file_when_ctrl_c_cannot_save_its_state() {
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("gone").join("state.json");
    let args = [OsStr::new("--state"), file.as_os_str()];
    let (child, mut lines) = start_binary(&args, Stdio::piped());
    for _ in 0..3 {
        tokio::time::timeout(Duration::from_secs(60), lines.next_line())
            .await
            .expect("the binary prints its seed and where it listens")
            .unwrap();
    }
    let output = stop_with_ctrl_c(child).await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success(),
        "a lost state is an error: {stderr}"
    );
    assert!(stderr.contains("could not save its state"), "{stderr}");
    assert!(stderr.contains(&file.display().to_string()), "{stderr}");
    assert!(!file.exists());
}
