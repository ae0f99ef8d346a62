//! Recovery and other VPG operations as tasks: failover test (start and stop, with the VPG's
//! `ActiveProcessesApi` and `LastTest` following along), clone (start and abort), failover, move
//! and force sync, their state conflicts, and `GET /v1/vms/{id}/pointsInTime`.
//!
//! Every test freezes the clock, so tasks end only when a test advances it.

use reqwest::StatusCode;
use serde_json::{Value, json};
use zvm_sim::test_kit::{Site, TestSim, frozen_with_vpg, spawn_frozen};

use crate::expect::{expect_ended, expect_refused, expect_string, vpg_status};
use crate::flr::APP_CONF;

async fn act(site: &Site, vpg: &str, action: &str, body: Value) -> (StatusCode, Value) {
    site.post(&format!("/v1/vpgs/{vpg}/{action}"), &body).await
}

async fn started(site: &Site, vpg: &str, action: &str, body: Value) -> String {
    expect_string(act(site, vpg, action, body).await, action)
}

/// The simulator's view of a task, with the checkpoint and VMs it was asked to use.
async fn sim_task(t: &TestSim, task: &str) -> Value {
    let tasks = t.control.get("tasks").await;
    tasks
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["TaskIdentifier"] == task)
        .cloned()
        .unwrap_or_else(|| panic!("task {task} in /_sim/tasks"))
}

async fn stage(site: &Site, vpg: &str) -> Value {
    site.get_ok(&format!("/v1/vpgs/{vpg}")).await["ActiveProcessesApi"]["RunningFailOverTestApi"]
        .clone()
}

#[tokio::test]
async fn a_failover_test_runs_through_its_stages_and_sets_last_test_when_stopped() {
    let (t, boston, vpg) = frozen_with_vpg(41, "app-tier").await;
    let latest = boston
        .get_ok(&format!("/v1/vpgs/{vpg}/checkpoints/stats"))
        .await["Latest"]["CheckpointIdentifier"]
        .clone();
    assert!(stage(&boston, &vpg).await.is_null());

    let start = started(&boston, &vpg, "FailoverTest", json!({"VmIdentifiers": []})).await;
    let task = boston.task(&start).await;
    assert_eq!(task["Type"], "FailOverTest");
    assert_eq!(task["RelatedEntities"]["Vpgs"][0]["identifier"], vpg);
    assert_eq!(stage(&boston, &vpg).await, json!({"Stage": "Starting"}));
    let details = &sim_task(&t, &start).await["Details"];
    assert_eq!(
        details["CheckpointIdentifier"], latest,
        "no checkpoint: the latest"
    );
    assert_eq!(
        details["VmIdentifiers"].as_array().unwrap().len(),
        3,
        "empty: every VM"
    );

    let conflict = act(&boston, &vpg, "FailoverTest", json!({})).await;
    expect_refused(
        conflict,
        StatusCode::CONFLICT,
        &["already in a failover test"],
    );

    t.control.advance(1.0).await;
    assert_eq!(boston.task_state(&start).await, 6);
    assert_eq!(stage(&boston, &vpg).await, json!({"Stage": "InTest"}));

    let summary = json!({"FailoverTestSuccess": true, "FailoverTestSummary": "app came up"});
    let stop = started(&boston, &vpg, "FailoverTestStop", summary).await;
    assert_eq!(boston.task(&stop).await["Type"], "StopFailOverTest");
    assert_eq!(stage(&boston, &vpg).await, json!({"Stage": "Stopping"}));
    let details = &sim_task(&t, &stop).await["Details"];
    assert_eq!(details["FailoverTestSummary"], "app came up");
    t.control.advance(1.0).await;
    assert_eq!(boston.task_state(&stop).await, 6);
    let after = boston.get_ok(&format!("/v1/vpgs/{vpg}")).await;
    assert!(after["ActiveProcessesApi"]["RunningFailOverTestApi"].is_null());
    let last_test = after["LastTest"].as_str().expect("LastTest is set");
    assert_eq!(
        Some(last_test),
        boston.task(&stop).await["Completed"].as_str()
    );
    let rows = boston.get_ok("/v1/vms?vpgName=app-tier").await;
    assert!(
        rows.as_array()
            .unwrap()
            .iter()
            .all(|r| r["LastTest"] == last_test)
    );

    let none = act(&boston, &vpg, "FailoverTestStop", json!({})).await;
    expect_refused(none, StatusCode::CONFLICT, &["no failover test running"]);
}

#[tokio::test]
async fn a_failover_test_of_one_vm_at_a_tagged_checkpoint_marks_only_that_vm() {
    let (t, boston, vpg) = frozen_with_vpg(42, "app-tier").await;
    let app_02 = boston.vm_id("app-02", "app-tier").await;
    let tag = boston.tag(&t.control, &vpg, "before-upgrade").await;
    t.control.advance(10.0).await;

    let unknown = json!({"CheckpointIdentifier": "42"});
    let refused = act(&boston, &vpg, "FailoverTest", unknown).await;
    expect_refused(refused, StatusCode::BAD_REQUEST, &["not in the journal"]);
    let (status, _) = act(
        &boston,
        &vpg,
        "FailoverTest",
        json!({"VmIdentifiers": ["no-such-vm"]}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    let one_vm = json!({"checkpointIdentifier": tag, "vmIdentifiers": [app_02]});
    let start = started(&boston, &vpg, "failovertest", one_vm).await;
    let details = &sim_task(&t, &start).await["Details"];
    assert_eq!(details["CheckpointIdentifier"], tag.as_str());
    assert_eq!(details["VmIdentifiers"], json!([app_02]));
    t.control.advance(1.0).await;
    // A stop without a body: success is assumed.
    let stop = started(&boston, &vpg, "FailoverTestStop", Value::Null).await;
    t.control.advance(1.0).await;
    assert_eq!(
        sim_task(&t, &stop).await["Details"]["FailoverTestSuccess"],
        true
    );
    let rows = boston.get_ok("/v1/vms?vpgName=app-tier").await;
    for row in rows.as_array().unwrap() {
        assert_eq!(
            row["LastTest"].is_string(),
            row["VmName"] == "app-02",
            "{row}"
        );
    }
}

#[tokio::test]
async fn stopping_a_test_that_is_still_starting_stops_its_start_task() {
    let (t, boston, vpg) = frozen_with_vpg(43, "web-local").await;
    let start = started(&boston, &vpg, "FailoverTest", json!({})).await;
    let stop = started(&boston, &vpg, "FailoverTestStop", json!({})).await;
    assert_eq!(boston.task_state(&start).await, 5, "Stopped");
    assert_eq!(stage(&boston, &vpg).await, json!({"Stage": "Stopping"}));
    let (status, _) = act(&boston, &vpg, "FailoverTestStop", json!({})).await;
    assert_eq!(status, StatusCode::CONFLICT, "already stopping");
    t.control.advance(1.0).await;
    assert_eq!(boston.task_state(&stop).await, 6);
}

#[tokio::test]
async fn a_clone_at_a_tag_makes_a_copy_at_the_recovery_site_with_the_files_of_that_moment() {
    let (t, boston, vpg) = frozen_with_vpg(44, "web-dr").await;
    let db = boston.vm_id("db-01", "web-dr").await;
    let original = t.control.file(&db, APP_CONF).await;
    let tag = boston.tag(&t.control, &vpg, "before-migration").await;
    t.control.advance(10.0).await;
    t.control.put_file(&db, APP_CONF, b"migrated").await;

    let at_tag = json!({"CheckpointId": tag, "VmIdentifiers": [db]});
    let denver = t.denver().await;
    let clone = started(&denver, &vpg, "CloneStart", at_tag).await;
    assert_eq!(denver.task(&clone).await["Type"], "Clone");
    assert_eq!(
        sim_task(&t, &clone).await["Details"]["CheckpointIdentifier"],
        tag.as_str()
    );
    let (status, busy) = act(&denver, &vpg, "CloneStart", json!({})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{busy}");
    t.control.advance(1.0).await;
    assert_eq!(denver.task_state(&clone).await, 6);

    let unprotected = denver
        .get_ok(&format!(
            "/v1/virtualizationsites/{}/vms",
            t.sim.peer().site_identifier
        ))
        .await;
    let copy = unprotected
        .as_array()
        .unwrap()
        .iter()
        .find(|vm| vm["VmName"] == "db-01-clone")
        .unwrap_or_else(|| panic!("the clone runs at Denver: {unprotected}"));
    let copy_id = copy["VmIdentifier"].as_str().unwrap();
    assert_eq!(t.control.file(copy_id, APP_CONF).await, original);

    let none = act(&denver, &vpg, "CloneAbort", Value::Null).await;
    expect_refused(none, StatusCode::CONFLICT, &["no clone running"]);
}

#[tokio::test]
async fn clone_reads_checkpoint_id_and_ignores_checkpoint_identifier_as_an_unknown_key() {
    let (t, boston, vpg) = frozen_with_vpg(45, "web-local").await;
    let tag = boston.tag(&t.control, &vpg, "tagged").await;
    t.control.advance(10.0).await;
    let latest = boston
        .get_ok(&format!("/v1/vpgs/{vpg}/checkpoints/stats"))
        .await["Latest"]["CheckpointIdentifier"]
        .clone();
    assert_ne!(latest, tag.as_str());
    let unknown_key = json!({"CheckpointIdentifier": tag});
    let clone = started(&boston, &vpg, "CloneStart", unknown_key).await;
    assert_eq!(
        sim_task(&t, &clone).await["Details"]["CheckpointIdentifier"],
        latest
    );
}

#[tokio::test]
async fn aborting_a_clone_stops_its_task_and_answers_its_id() {
    let (t, boston, vpg) = frozen_with_vpg(46, "app-tier").await;
    let (status, _) = act(
        &boston,
        &vpg,
        "CloneStart",
        json!({"DatastoreIdentifier": "not-a-datastore"}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let clone = started(&boston, &vpg, "CloneStart", Value::Null).await;
    let aborted = started(&boston, &vpg, "CloneAbort", Value::Null).await;
    assert_eq!(aborted, clone);
    expect_ended(&boston.task(&clone).await, 5, &["aborted by admin"]);
    t.control.advance(1.0).await;
    assert_eq!(
        boston.task_state(&clone).await,
        5,
        "a stopped task stays stopped"
    );
}

#[tokio::test]
async fn failover_and_move_wait_before_commit_then_commit_or_roll_back_and_are_in_the_call_log() {
    let t = spawn_frozen(47).await;
    let (boston, denver) = t.both_sites().await;
    let erp = denver.vpg_id("erp-dr").await;
    let web = boston.vpg_id("web-dr").await;

    let test = started(&boston, &web, "FailoverTest", json!({})).await;
    let (status, busy) = act(&boston, &web, "Failover", json!({})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{busy}");
    assert_eq!(boston.task_state(&test).await, 1);

    let (status, _) = act(&boston, &erp, "FailoverCommit", json!({})).await;
    assert_eq!(status, StatusCode::CONFLICT, "no failover to commit");
    let commit = json!({"CommitPolicy": "Commit", "IsReverseProtection": false});
    let failover = started(&boston, &erp, "Failover", commit).await;
    assert_eq!(boston.task(&failover).await["Type"], "FailOver");
    assert_eq!(vpg_status(&boston, &erp).await, (Some(5), Some(14)));
    let (status, _) = act(&boston, &erp, "Failover", json!({})).await;
    assert_eq!(status, StatusCode::CONFLICT, "one at a time");
    t.control.advance(1.0).await;
    assert_eq!(boston.task_state(&failover).await, 2, "waits for a commit");
    assert_eq!(
        vpg_status(&boston, &erp).await,
        (Some(5), Some(15)),
        "BeforeCommit"
    );
    let committed = started(&boston, &erp, "FailoverCommit", json!({})).await;
    assert_eq!(boston.task(&committed).await["Type"], "FailoverCommit");
    t.control.advance(1.0).await;
    assert_eq!(boston.task_state(&committed).await, 6);
    assert_eq!(boston.task_state(&failover).await, 6);
    let vpg = boston.get_ok(&format!("/v1/vpgs/{erp}")).await;
    assert_eq!(vpg["Status"], 8, "Recovered");
    let insert = boston.insert(&erp, "after failover").await;
    t.control.advance(1.0).await;
    assert_eq!(
        boston.task_state(&insert).await,
        4,
        "a recovered VPG takes no tags"
    );

    let sql = boston.vpg_id("sql-local").await;
    let (status, bad) = act(&boston, &sql, "Move", json!({"CommitPolicy": "Later"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
    let moved = started(&boston, &sql, "Move", json!({})).await;
    assert_eq!(boston.task(&moved).await["Type"], "Move");
    assert_eq!(boston.get_ok(&format!("/v1/vpgs/{sql}")).await["Status"], 6);
    t.control.advance(1.0).await;
    assert_eq!(
        vpg_status(&boston, &sql).await,
        (Some(6), Some(19)),
        "MovingBeforeCommit"
    );
    let back = started(&boston, &sql, "moveRollback", Value::Null).await;
    assert_eq!(boston.task(&back).await["Type"], "MoveRollback");
    t.control.advance(1.0).await;
    expect_ended(&boston.task(&moved).await, 5, &["rolled back by"]);
    assert_eq!(
        vpg_status(&boston, &sql).await,
        (Some(1), Some(0)),
        "replicates again"
    );
    let tagged = boston.insert(&sql, "after the rollback").await;
    t.control.advance(1.0).await;
    assert_eq!(boston.task_state(&tagged).await, 6, "and takes tags again");

    let calls = t.control.calls().await;
    let logged = |suffix: &str, task: &str| {
        calls.iter().any(|c| {
            c["Method"] == "POST"
                && c["Path"].as_str().unwrap().ends_with(suffix)
                && c["TaskId"] == task
        })
    };
    assert!(logged("/Failover", &failover));
    assert!(logged("/Move", &moved));
}

#[tokio::test]
async fn a_failover_nobody_commits_follows_its_commit_policy_after_an_hour() {
    let t = spawn_frozen(51).await;
    let boston = t.boston().await;
    let sql = boston.vpg_id("sql-local").await;
    let web = boston.vpg_id("web-local").await;
    let rolled = started(
        &boston,
        &sql,
        "Failover",
        json!({"CommitPolicy": "Rollback"}),
    )
    .await;
    let waits = started(&boston, &web, "Failover", json!({"CommitPolicy": "None"})).await;
    t.control.advance(1.0).await;
    t.control.advance(3600.0).await;
    let boston = t.boston().await; // a token of before has expired
    expect_ended(&boston.task(&rolled).await, 5, &["rolled back by System"]);
    assert_eq!(vpg_status(&boston, &sql).await, (Some(1), Some(0)));
    assert_eq!(
        boston.task_state(&waits).await,
        2,
        "None waits for a person"
    );
    assert_eq!(vpg_status(&boston, &web).await, (Some(5), Some(15)));
}

#[tokio::test]
async fn a_force_sync_keeps_the_checkpoints_and_shows_a_delta_sync_while_it_runs() {
    let (t, boston, vpg) = frozen_with_vpg(48, "web-local").await;
    boston.tag(&t.control, &vpg, "kept").await;
    let before = boston.checkpoints(&vpg).await;

    let sync = started(&boston, &vpg, "forcesync", Value::Null).await;
    assert_eq!(boston.task(&sync).await["Type"], "ForceSync");
    assert_eq!(vpg_status(&boston, &vpg).await, (Some(2), Some(6)));
    let (status, _) = act(&boston, &vpg, "forcesync", Value::Null).await;
    assert_eq!(status, StatusCode::CONFLICT, "already syncing");
    let refused = boston.insert(&vpg, "during sync").await;

    t.control.advance(1.0).await;
    assert_eq!(boston.task_state(&sync).await, 6);
    assert_eq!(boston.task_state(&refused).await, 4);
    assert_eq!(vpg_status(&boston, &vpg).await, (Some(1), Some(0)));
    let after = boston.checkpoints(&vpg).await;
    for checkpoint in &before {
        assert!(after.contains(checkpoint), "kept: {checkpoint}");
    }
    assert_eq!(boston.tagged(&vpg, "kept").await.len(), 1);

    let init = boston.vpg_id("sql-init").await;
    let (status, _) = act(&boston, &init, "forcesync", Value::Null).await;
    assert_eq!(
        status,
        StatusCode::CONFLICT,
        "an Initializing VPG cannot be force-synced"
    );
}

#[tokio::test]
async fn a_paused_vpg_writes_no_checkpoint_and_takes_no_tag_until_resumed() {
    let (t, boston, vpg) = frozen_with_vpg(50, "web-local").await;
    let pause = started(&boston, &vpg, "pause", Value::Null).await;
    assert_eq!(boston.task(&pause).await["Type"], "PauseProtectionGroup");
    assert_eq!(
        vpg_status(&boston, &vpg).await,
        (Some(1), Some(25)),
        "paused at once"
    );
    let (status, _) = act(&boston, &vpg, "pause", Value::Null).await;
    assert_eq!(status, StatusCode::CONFLICT, "already paused");
    let held = boston.checkpoints(&vpg).await.len();
    let refused = boston.insert(&vpg, "while paused").await;
    t.control.advance(60.0).await;
    assert_eq!(boston.task_state(&pause).await, 6);
    expect_ended(
        &boston.task(&refused).await,
        4,
        &["ReplicationPausedUserInitiated"],
    );
    let paused = boston.checkpoints(&vpg).await.len();
    assert!(
        paused <= held,
        "no checkpoint written while paused: {held} then {paused}"
    );

    let resume = started(&boston, &vpg, "resume", Value::Null).await;
    assert_eq!(boston.task(&resume).await["Type"], "ResumeProtectionGroup");
    assert_eq!(
        vpg_status(&boston, &vpg).await,
        (Some(2), Some(6)),
        "a delta sync"
    );
    let (status, _) = act(&boston, &vpg, "resume", Value::Null).await;
    assert_eq!(status, StatusCode::CONFLICT, "not paused any more");
    t.control.advance(1.0).await;
    assert_eq!(boston.task_state(&resume).await, 6);
    assert_eq!(vpg_status(&boston, &vpg).await, (Some(1), Some(0)));
    let tagged = boston.insert(&vpg, "after resume").await;
    t.control.advance(1.0).await;
    assert_eq!(boston.task_state(&tagged).await, 6, "a tag is taken again");
}

#[tokio::test]
async fn points_in_time_are_the_vpg_checkpoints_with_can_mount_at_the_recovery_site_only() {
    let t = spawn_frozen(49).await;
    let boston = t.boston().await;
    let web = boston.vm_id("web-01", "web-local").await;
    let local = boston.vpg_id("web-local").await;
    let dr = boston.vpg_id("web-dr").await;

    let ambiguous = boston.get(&format!("/v1/vms/{web}/pointsInTime")).await;
    expect_refused(ambiguous, StatusCode::BAD_REQUEST, &["vpgIdentifier"]);

    let here = boston
        .get_ok(&format!("/v1/vms/{web}/pointsInTime?vpgIdentifier={local}"))
        .await;
    let checkpoints = boston.checkpoints(&local).await;
    assert_eq!(here.as_array().unwrap().len(), checkpoints.len());
    assert_eq!(here[0]["Checkpoint"], checkpoints[0]);
    assert_eq!(
        here[0]["CanMount"],
        json!({"IsAllowed": true, "Reason": ""})
    );
    assert!(here[0]["RetentionSet"].is_null());

    let there = boston
        .get_ok(&format!(
            "/v1/vms/{web}/pointsInTime/stats?vpgIdentifier={dr}"
        ))
        .await;
    assert_eq!(
        there["Latest"]["Checkpoint"],
        boston
            .get_ok(&format!("/v1/vpgs/{dr}/checkpoints/stats"))
            .await["Latest"]
    );
    assert_eq!(there["Latest"]["CanMount"]["IsAllowed"], false);
    assert!(
        there["Latest"]["CanMount"]["Reason"]
            .as_str()
            .unwrap()
            .contains("Denver")
    );
}
