//! Journal VM restore over the real calls: a VM of a VPG whose journal is local, restored in place
//! or as a new VM, its task waiting (state 2) for a commit or a rollback, each a task; what the
//! guest holds at each step; the commit policy's own end; and the refusals a ZVM answers.
//!
//! Every test freezes the clock, so tasks end only when a test advances it.

use reqwest::StatusCode;
use serde_json::{Value, json};
use zvm_sim::test_kit::{Site, TestSim, spawn_frozen};

use crate::expect::{expect_refused, expect_string};
use crate::flr::APP_CONF;

const CHANGED: &[u8] = b"listen = 0.0.0.0:9999\n";

/// A frozen simulator, Boston, web-local's id, web-01's id, the tag's checkpoint, web-01's
/// app.conf at the tag; app.conf changed after it.
async fn tagged_then_changed(seed: u64) -> (TestSim, Site, String, String, String, Vec<u8>) {
    let t = spawn_frozen(seed).await;
    let boston = t.boston().await;
    let vpg = boston.vpg_id("web-local").await;
    let vm = boston.vm_id("web-01", "web-local").await;
    let checkpoint = boston.tag(&t.control, &vpg, "before").await;
    let original = t.control.file(&vm, APP_CONF).await;
    t.control.advance(1.0).await;
    t.control.put_file(&vm, APP_CONF, CHANGED).await;
    (t, boston, vpg, vm, checkpoint, original)
}

async fn restore(site: &Site, vm: &str, body: Value) -> (StatusCode, Value) {
    site.post(&format!("/v1/vms/{vm}/Restore"), &body).await
}

async fn end(site: &Site, vm: &str, verb: &str, vpg: &str) -> String {
    let answer = site
        .post(&format!("/v1/vms/{vm}/{verb}"), &json!(vpg))
        .await;
    expect_string(answer, verb)
}

#[tokio::test]
async fn a_restore_in_place_waits_then_a_commit_keeps_the_tags_files() {
    let (t, boston, vpg, vm, checkpoint, original) = tagged_then_changed(61).await;
    let body = json!({"VpgIdentifier": vpg, "CheckpointIdentifier": checkpoint,
                      "CommitPolicy": 2});
    let task = expect_string(restore(&boston, &vm, body).await, "a task id");
    assert_eq!(boston.task_state(&task).await, 1);
    assert_eq!(t.control.file(&vm, APP_CONF).await, CHANGED, "not yet");
    t.control.advance(1.0).await;
    let waiting = boston.task(&task).await;
    assert_eq!(
        waiting["Status"]["State"], 2,
        "WaitingForUserInput: {waiting}"
    );
    assert_eq!(waiting["Type"], "JournalVmRestore");
    assert_eq!(
        t.control.file(&vm, APP_CONF).await,
        original,
        "the tag's files"
    );
    // Another restore of the VPG waits for this one.
    let again = json!({"VpgIdentifier": vpg, "CheckpointIdentifier": checkpoint});
    expect_refused(
        restore(&boston, &vm, again).await,
        StatusCode::CONFLICT,
        &["under way", "RestoreCommit"],
    );

    let commit = end(&boston, &vm, "RestoreCommit", &vpg).await;
    t.control.advance(1.0).await;
    assert_eq!(boston.task_state(&commit).await, 6);
    assert_eq!(boston.task_state(&task).await, 6, "the restore Completed");
    assert_eq!(t.control.file(&vm, APP_CONF).await, original, "kept");
    let none = boston
        .post(&format!("/v1/vms/{vm}/RestoreRollback"), &json!(vpg))
        .await;
    expect_refused(none, StatusCode::CONFLICT, &["No restore"]);
}

#[tokio::test]
async fn a_rollback_returns_the_guest_to_its_files_before_the_restore() {
    let (t, boston, vpg, vm, checkpoint, original) = tagged_then_changed(62).await;
    let body = json!({"vpgIdentifier": vpg, "checkpointIdentifier": checkpoint});
    let task = expect_string(restore(&boston, &vm, body).await, "a task id");
    t.control.advance(1.0).await;
    assert_eq!(t.control.file(&vm, APP_CONF).await, original);
    let rollback = end(&boston, &vm, "RestoreRollback", &vpg).await;
    t.control.advance(1.0).await;
    assert_eq!(boston.task_state(&rollback).await, 6);
    let restore_task = boston.task(&task).await;
    assert_eq!(restore_task["Status"]["State"], 5, "{restore_task}");
    assert_eq!(
        t.control.file(&vm, APP_CONF).await,
        CHANGED,
        "the damage is back"
    );
}

#[tokio::test]
async fn a_restore_beside_the_vm_makes_a_new_vm_a_rollback_removes() {
    let (t, boston, vpg, vm, checkpoint, original) = tagged_then_changed(63).await;
    let body = json!({"VpgIdentifier": vpg, "CheckpointIdentifier": checkpoint,
                      "RestoredVmName": "web-01-restored"});
    expect_string(restore(&boston, &vm, body).await, "a task id");
    t.control.advance(1.0).await;
    assert_eq!(t.control.file("web-01-restored", APP_CONF).await, original);
    assert_eq!(
        t.control.file(&vm, APP_CONF).await,
        CHANGED,
        "the VM keeps the damage"
    );
    let site = boston.get_ok("/v1/localsite").await;
    let site_id = site["SiteIdentifier"].as_str().unwrap().to_owned();
    let unprotected = |list: Value| -> Vec<String> {
        let rows = list.as_array().unwrap().iter();
        rows.map(|v| v["VmName"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    let path = format!("/v1/virtualizationsites/{site_id}/vms");
    assert!(unprotected(boston.get_ok(&path).await).contains(&"web-01-restored".to_owned()));
    end(&boston, &vm, "RestoreRollback", &vpg).await;
    t.control.advance(1.0).await;
    assert!(!unprotected(boston.get_ok(&path).await).contains(&"web-01-restored".to_owned()));
    assert!(
        t.control
            .try_file("web-01-restored", APP_CONF)
            .await
            .is_none()
    );
}

#[tokio::test]
async fn the_commit_policy_rollback_ends_a_restore_nobody_committed_once_its_wait_passes() {
    let (t, boston, vpg, vm, checkpoint, _) = tagged_then_changed(64).await;
    let body = json!({"VpgIdentifier": vpg, "CheckpointIdentifier": checkpoint,
                      "CommitPolicy": 0, "TimeToWaitBeforeContinueInSeconds": 60});
    let task = expect_string(restore(&boston, &vm, body).await, "a task id");
    t.control.advance(30.0).await;
    assert_eq!(boston.task_state(&task).await, 2);
    t.control.advance(40.0).await;
    assert_eq!(boston.task_state(&task).await, 5, "rolled back by itself");
    assert_eq!(t.control.file(&vm, APP_CONF).await, CHANGED);
}

#[tokio::test]
async fn a_vpg_whose_journal_is_at_the_peer_or_a_checkpoint_outside_it_is_refused() {
    let t = spawn_frozen(65).await;
    let boston = t.boston().await;
    let dr = boston.vpg_id("web-dr").await;
    let vm = boston.vm_id("web-01", "web-dr").await;
    let checkpoint = boston.tag(&t.control, &dr, "dr-tag").await;
    let body = json!({"VpgIdentifier": dr, "CheckpointIdentifier": checkpoint});
    expect_refused(
        restore(&boston, &vm, body).await,
        StatusCode::BAD_REQUEST,
        &["journal", "Denver"],
    );
    let local = boston.vpg_id("web-local").await;
    let body = json!({"VpgIdentifier": local, "CheckpointIdentifier": "12345"});
    expect_refused(
        restore(&boston, &vm, body).await,
        StatusCode::BAD_REQUEST,
        &["not in the journal"],
    );
    let body = json!({"VpgIdentifier": "no-such-vpg", "CheckpointIdentifier": "1"});
    expect_refused(
        restore(&boston, &vm, body).await,
        StatusCode::BAD_REQUEST,
        &["not a VPG of VM"],
    );
}
