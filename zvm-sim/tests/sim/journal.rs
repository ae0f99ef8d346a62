//! Journals and tasks: the insert task's lifecycle, back-to-back inserts, tags listed after their
//! task Completed, automatic checkpoints, the history window, and what refuses an insert.
//!
//! Most tests freeze the clock and advance it, so nothing depends on timing luck. `for_tests`
//! durations are 50 ms ± 20 % and the listing lag 20 ms.

use reqwest::StatusCode;
use serde_json::{Value, json};
use zvm_sim::test_kit::{frozen_with_vpg, spawn, spawn_frozen, texts};

use crate::expect::{answer_of, control_ok, expect_ended, expect_refused, send, task_ids};

fn state(task: &Value) -> (u64, u64) {
    (
        task["Status"]["State"].as_u64().unwrap(),
        task["Status"]["Progress"].as_u64().unwrap(),
    )
}

#[tokio::test]
async fn an_insert_task_runs_with_rising_progress_then_completes() {
    let (t, boston, vpg) = frozen_with_vpg(5, "web-local").await;
    let id = boston.insert(&vpg, "lifecycle").await;
    let (guid, site) = id.split_once('.').unwrap();
    assert_eq!(guid.len(), 36);
    assert_eq!(site, t.sim.local().site_identifier);

    let task = boston.task(&id).await;
    assert_eq!(task["Type"], "InsertTaggedCP");
    assert_eq!(task["InitiatedBy"], "admin");
    assert_eq!(state(&task), (1, 0));
    assert!(task["Completed"].is_null());
    assert_eq!(
        task["RelatedEntities"]["Vpgs"][0]["identifier"],
        vpg.as_str()
    );

    t.control.advance(0.025).await;
    let (running, progress) = state(&boston.task(&id).await);
    assert_eq!(running, 1);
    assert!((30..=70).contains(&progress), "progress {progress}");

    t.control.advance(0.1).await;
    let done = boston.task(&id).await;
    assert_eq!(state(&done), (6, 100));
    assert_eq!(done["CompleteReason"], "");
    assert!(done["Completed"].as_str().unwrap() > done["Started"].as_str().unwrap());
}

#[tokio::test]
async fn back_to_back_inserts_complete_the_first_and_fail_the_second_with_a_reason() {
    let (t, boston, vpg) = frozen_with_vpg(5, "web-dr").await;
    let first = boston.insert(&vpg, "first").await;
    let second = boston.insert(&vpg, "second").await;
    assert_ne!(first, second);
    t.control.advance(1.0).await;
    assert_eq!(boston.task_state(&first).await, 6);
    expect_ended(&boston.task(&second).await, 4, &["web-dr", &first]);
    assert_eq!(boston.tagged(&vpg, "first").await.len(), 1);
    assert!(boston.tagged(&vpg, "second").await.is_empty());
}

#[tokio::test]
async fn a_refused_insert_fails_quickly_while_the_first_still_runs() {
    let (t, boston, vpg) = frozen_with_vpg(5, "web-dr").await;
    let first = boston.insert(&vpg, "first").await;
    let second = boston.insert(&vpg, "second").await;
    // A tenth of a 50 ms ± 20 % task has passed; the first is still in its first half.
    t.control.advance(0.012).await;
    assert_eq!(boston.task_state(&first).await, 1);
    assert_eq!(boston.task_state(&second).await, 4);
}

#[tokio::test]
async fn inserts_into_different_vpgs_run_side_by_side() {
    let t = spawn_frozen(5).await;
    let boston = t.boston().await;
    let a = boston.insert(&boston.vpg_id("web-local").await, "a").await;
    let b = boston.insert(&boston.vpg_id("web-dr").await, "b").await;
    t.control.advance(1.0).await;
    assert_eq!(boston.task_state(&a).await, 6);
    assert_eq!(boston.task_state(&b).await, 6);
}

#[tokio::test]
async fn a_tag_is_listed_after_its_task_completed_at_the_moment_of_the_insert() {
    let (t, boston, vpg) = frozen_with_vpg(5, "sql-local").await;
    let tag = "ai:test | migrate | vm=sql-01";
    let started_at = t.control.now().await;
    let id = boston.insert(&vpg, tag).await;
    assert_eq!(boston.task_state(&id).await, 1);
    assert!(
        boston.tagged(&vpg, tag).await.is_empty(),
        "not listed while its task runs"
    );
    t.control.advance(1.0).await;
    let task = boston.task(&id).await;
    assert_eq!(state(&task).0, 6);
    let listed = boston.tagged(&vpg, tag).await;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["Type"], 1);
    assert_eq!(listed[0]["TimeStamp"], started_at.as_str());
    assert_eq!(listed[0]["TimeStamp"], task["Started"]);
    assert!(
        listed[0]["CheckpointIdentifier"]
            .as_str()
            .unwrap()
            .parse::<u64>()
            .is_ok()
    );
    let stats = boston
        .get_ok(&format!("/v1/vpgs/{vpg}/checkpoints/stats"))
        .await;
    assert_eq!(stats["Latest"]["Tag"], tag);
}

#[tokio::test]
async fn the_listing_lag_holds_a_completed_tag_back() {
    let (t, boston, vpg) = frozen_with_vpg(5, "web-local").await;
    control_ok(&t, "timing", json!({ "ListingLagMs": 10_000 })).await;
    let id = boston.insert(&vpg, "lagging").await;
    t.control.advance(1.0).await;
    assert_eq!(boston.task_state(&id).await, 6);
    assert!(boston.tagged(&vpg, "lagging").await.is_empty());
    t.control.advance(10.0).await;
    assert_eq!(boston.tagged(&vpg, "lagging").await.len(), 1);
}

#[tokio::test]
async fn inserts_into_an_initializing_or_syncing_vpg_fail_with_a_reason() {
    let t = spawn_frozen(5).await;
    let boston = t.boston().await;
    for (vpg_name, words) in [("sql-init", "Initializing"), ("files-dr", "DeltaSync")] {
        let vpg = boston.vpg_id(vpg_name).await;
        let id = boston.insert(&vpg, "refused").await;
        t.control.advance(1.0).await;
        expect_ended(&boston.task(&id).await, 4, &[vpg_name, words]);
        assert!(boston.checkpoints(&vpg).await.is_empty());
    }
}

#[tokio::test]
async fn checkpoint_name_is_read_case_insensitively_and_bad_bodies_are_400() {
    let (t, boston, vpg) = frozen_with_vpg(5, "app-tier").await;
    let path = format!("/v1/vpgs/{vpg}/checkpoints");
    for (i, key) in ["checkpointName", "checkpointname", "CHECKPOINTNAME"]
        .iter()
        .enumerate()
    {
        let (status, body) = boston.post(&path, &json!({ *key: format!("k{i}") })).await;
        assert_eq!(status, StatusCode::OK, "{key}: {body}");
        t.control.advance(1.0).await;
        assert_eq!(
            boston.tagged(&vpg, &format!("k{i}")).await.len(),
            1,
            "{key}"
        );
    }
    for bad in [
        json!({}),
        json!({ "CheckpointName": "" }),
        json!({ "CheckpointName": 7 }),
        json!(["x"]),
    ] {
        let answer = boston.post(&path, &bad).await;
        expect_refused(answer, StatusCode::BAD_REQUEST, &["CheckpointName"]);
    }
    let post = || {
        let url = format!("{}{path}", boston.base);
        boston.http.post(url).bearer_auth(&boston.token)
    };
    let malformed = post()
        .header("Content-Type", "application/json")
        .body("{\"CheckpointName\": ");
    let answer = answer_of(send(malformed).await).await;
    expect_refused(answer, StatusCode::BAD_REQUEST, &["not valid JSON"]);
    let form = send(post().form(&[("CheckpointName", "x")])).await;
    assert_eq!(form.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let answer = boston
        .post(
            "/v1/vpgs/00000000-0000-0000-0000-000000000000/checkpoints",
            &json!({ "CheckpointName": "x" }),
        )
        .await;
    expect_refused(answer, StatusCode::NOT_FOUND, &[]);
    assert_eq!(t.control.get("tasks").await.as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn automatic_checkpoints_come_every_five_seconds_within_the_history_window() {
    let (t, boston, vpg) = frozen_with_vpg(5, "web-local").await;
    let listed = boston.checkpoints(&vpg).await;
    // 60 minutes of history at one checkpoint every 5 s, both ends included.
    assert_eq!(listed.len(), 721);
    assert!(listed.iter().all(|c| c["Tag"].is_null() && c["Type"] == 0));
    assert_eq!(
        listed.first().unwrap()["TimeStamp"],
        "2025-12-31T23:00:00.000Z"
    );
    assert_eq!(
        listed.last().unwrap()["TimeStamp"],
        "2026-01-01T00:00:00.000Z"
    );
    let ids: Vec<u64> = listed
        .iter()
        .map(|c| c["CheckpointIdentifier"].as_str().unwrap().parse().unwrap())
        .collect();
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "identifiers grow with time"
    );

    t.control.advance(12.0).await;
    let stats = boston
        .get_ok(&format!("/v1/vpgs/{vpg}/checkpoints/stats"))
        .await;
    assert_eq!(stats["Latest"]["TimeStamp"], "2026-01-01T00:00:10.000Z");
    assert_eq!(stats["Earliest"]["TimeStamp"], "2025-12-31T23:00:15.000Z");

    t.control.advance(3.0 * 3600.0).await;
    // Tokens live 300 s of simulated time: log in again after hours.
    let boston = t.boston().await;
    let later = boston.checkpoints(&vpg).await;
    assert_eq!(later.len(), 720);
    assert_eq!(
        later.first().unwrap()["TimeStamp"],
        "2026-01-01T02:00:15.000Z"
    );
}

#[tokio::test]
async fn a_tag_leaves_the_list_with_the_history_window() {
    let (t, boston, vpg) = frozen_with_vpg(5, "web-local").await;
    boston.tag(&t.control, &vpg, "old-tag").await;
    assert_eq!(boston.tagged(&vpg, "old-tag").await.len(), 1);
    t.control.advance(59.0 * 60.0).await;
    let boston = t.boston().await;
    assert_eq!(
        boston.tagged(&vpg, "old-tag").await.len(),
        1,
        "still in the window"
    );
    t.control.advance(61.0).await;
    assert!(
        boston.tagged(&vpg, "old-tag").await.is_empty(),
        "older than 60 minutes"
    );
    let history = boston.get_ok(&format!("/v1/vpgs/{vpg}")).await["HistoryStatusApi"].clone();
    assert_eq!(history["ActualHistoryInMinutes"], 60);
}

#[tokio::test]
async fn start_and_end_dates_bound_the_checkpoint_list() {
    let (_t, boston, vpg) = frozen_with_vpg(5, "web-local").await;
    let window = boston
        .get_ok(&format!(
            "/v1/vpgs/{vpg}/checkpoints?startDate=2025-12-31T23:59:40Z&EndDate=2025-12-31T23:59:50.000Z"
        ))
        .await;
    let times: Vec<&str> = texts(&window, "TimeStamp");
    assert_eq!(
        times,
        [
            "2025-12-31T23:59:40.000Z",
            "2025-12-31T23:59:45.000Z",
            "2025-12-31T23:59:50.000Z"
        ]
    );
    let by_day = boston
        .get_ok(&format!("/v1/vpgs/{vpg}/checkpoints?startdate=2026-01-01"))
        .await;
    assert_eq!(by_day.as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn tasks_are_filtered_by_status_type_and_dates() {
    let (t, boston, vpg) = frozen_with_vpg(5, "web-dr").await;
    let first = boston.insert(&vpg, "one").await;
    let second = boston.insert(&vpg, "two").await;
    assert_eq!(
        task_ids(&boston.get_ok("/v1/tasks?status=InProgress").await),
        [first.clone(), second.clone()]
    );
    t.control.advance(1.0).await;
    assert_eq!(
        task_ids(&boston.get_ok("/v1/tasks?status=6").await),
        [first.as_str()]
    );
    assert_eq!(
        task_ids(&boston.get_ok("/v1/tasks?Status=failed").await),
        [second.as_str()]
    );
    assert_eq!(
        task_ids(&boston.get_ok("/v1/tasks?type=inserttaggedcp").await).len(),
        2
    );
    assert!(task_ids(&boston.get_ok("/v1/tasks?type=FailOver").await).is_empty());
    assert!(
        task_ids(
            &boston
                .get_ok("/v1/tasks?startedAfterDate=2026-01-01T00:00:01Z")
                .await
        )
        .is_empty()
    );
    assert_eq!(
        task_ids(
            &boston
                .get_ok("/v1/tasks?completedBeforeDate=2026-01-01T00:00:01Z")
                .await
        )
        .len(),
        2
    );
    // Each ZVM lists the tasks it ran.
    let denver = t.denver().await;
    assert!(task_ids(&denver.get_ok("/v1/tasks").await).is_empty());
    assert_eq!(
        denver.get(&format!("/v1/tasks/{first}")).await.0,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn an_insert_at_the_recovery_sites_zvm_runs_there() {
    let t = spawn_frozen(5).await;
    let denver = t.denver().await;
    let vpg = denver.vpg_id("web-dr").await;
    let id = denver.insert(&vpg, "from-denver").await;
    assert!(id.ends_with(&t.sim.peer().site_identifier));
    t.control.advance(1.0).await;
    assert_eq!(denver.task_state(&id).await, 6);
    let boston = t.boston().await;
    assert_eq!(
        boston.tagged(&vpg, "from-denver").await.len(),
        1,
        "one journal, two views"
    );
}

#[tokio::test]
async fn with_the_clock_running_a_tag_completes_and_is_listed_in_real_time() {
    let t = spawn(5).await;
    let (boston, vpg) = t.boston_with_vpg("web-local").await;
    let id = boston.insert(&vpg, "real-time").await;
    let task = boston.wait_task(&id).await;
    assert_eq!(state(&task), (6, 100));
    let give_up = tokio::time::Instant::now() + zvm_sim::test_kit::DEADLINE;
    while boston.tagged(&vpg, "real-time").await.is_empty() {
        assert!(
            tokio::time::Instant::now() < give_up,
            "the tag was never listed"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}
