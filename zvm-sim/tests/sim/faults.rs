//! Fault injection through `/_sim/faults`: each kind of fault as a client meets it, the call log
//! showing it, and decisions that are the same for one seed however concurrent requests
//! interleave.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};
use zvm_sim::test_kit::{Site, TestSim, frozen_with_vpg, spawn, spawn_frozen};

use crate::expect::{control_ok, expect_refused, send};

/// An insert of a tagged checkpoint built by hand, for tests that time it out or lose its answer.
fn insert_request(site: &Site, vpg: &str, name: &str) -> reqwest::RequestBuilder {
    let url = format!("{}/v1/vpgs/{vpg}/checkpoints", site.base);
    let request = site.http.post(url).bearer_auth(&site.token);
    request.json(&json!({ "CheckpointName": name }))
}

async fn add_rule(t: &TestSim, rule: Value) -> Value {
    control_ok(t, "faults", rule).await
}

/// The insert whose answer the fault rule `action` kept from the client took effect: the call log
/// shows the rule and the status the handler answered, and the task it started completes with the
/// tag `name` listed.
async fn the_insert_happened(t: &TestSim, boston: &Site, vpg: &str, action: &str, name: &str) {
    let call = t.control.calls().await.pop().unwrap();
    assert_eq!(call["Faults"], json!([{"Rule": 1, "Action": action}]));
    assert_eq!(call["Status"], 200, "the status the handler answered");
    let task = call["TaskId"]
        .as_str()
        .expect("the task it started")
        .to_owned();
    t.control.advance(1.0).await;
    assert_eq!(boston.task(&task).await["Status"]["State"], 6);
    assert_eq!(boston.tagged(vpg, name).await.len(), 1);
}

#[tokio::test]
async fn a_respond_fault_answers_its_status_body_and_headers_instead_of_the_handler() {
    let (t, boston, vpg) = frozen_with_vpg(51, "web-local").await;
    let rule = add_rule(
        &t,
        json!({"Method": "POST", "Path": "/v1/vpgs/*/checkpoints", "Action": "Respond",
               "Status": 503, "Headers": {"Retry-After": "1"}, "Count": 1}),
    )
    .await;
    assert_eq!(rule["Id"], 1);

    let response = send(insert_request(&boston, &vpg, "refused")).await;
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(response.headers()["retry-after"], "1");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body, json!({"Message": "Service Unavailable"}));
    assert!(
        t.control.get("tasks").await.as_array().unwrap().is_empty(),
        "no handler ran"
    );

    let task = boston.insert(&vpg, "accepted").await;
    let calls = t.control.calls().await;
    let inserts: Vec<&Value> = calls
        .iter()
        .filter(|c| c["Path"].as_str().unwrap().ends_with("/checkpoints"))
        .collect();
    assert_eq!(inserts[0]["Status"], 503);
    assert_eq!(
        inserts[0]["Faults"],
        json!([{"Rule": 1, "Action": "Respond"}])
    );
    assert_eq!(inserts[1]["Status"], 200);
    assert_eq!(inserts[1]["TaskId"], task);
    assert_eq!(inserts[1]["Faults"], json!([]));
    let rules = t.control.get("faults").await;
    assert_eq!(
        (rules[0]["Matched"].as_u64(), rules[0]["Fired"].as_u64()),
        (Some(2), Some(1))
    );

    let (_, custom) = t
        .control
        .try_post(
            "faults",
            json!({"Path": "/v1/localsite", "Action": "Respond", "Status": 500,
                   "Body": {"Message": "ZVM internal error"}}),
        )
        .await;
    assert_eq!(custom["Method"], "*");
    let (status, body) = boston.get("/v1/localsite").await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(body["Message"], "ZVM internal error");
}

#[tokio::test]
async fn a_latency_fault_delays_the_answer_by_at_least_its_latency() {
    let t = spawn(52).await;
    let boston = t.boston().await;
    add_rule(
        &t,
        json!({"Method": "GET", "Path": "/v1/vpgs", "Action": "Latency", "LatencyMs": 300}),
    )
    .await;
    let started = Instant::now();
    let vpgs = boston.get_ok("/v1/vpgs").await;
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert!(
        !vpgs.as_array().unwrap().is_empty(),
        "the answer itself is unchanged"
    );
    let call = t.control.calls().await.pop().unwrap();
    assert_eq!(call["Faults"], json!([{"Rule": 1, "Action": "Latency"}]));

    let error = t
        .http
        .get(format!("{}/v1/vpgs", boston.base))
        .bearer_auth(&boston.token)
        .timeout(Duration::from_millis(100))
        .send()
        .await
        .unwrap_err();
    assert!(error.is_timeout(), "{error}");
}

#[tokio::test]
async fn a_lost_response_is_a_transport_error_after_the_handler_took_effect() {
    let (t, boston, vpg) = frozen_with_vpg(53, "web-dr").await;
    add_rule(
        &t,
        json!({"Method": "POST", "Path": "/v1/vpgs/*/checkpoints", "Action": "LoseResponse",
               "Count": 1}),
    )
    .await;
    let error = insert_request(&boston, &vpg, "lost answer")
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .expect_err("the client gets no answer");
    assert!(
        !error.is_timeout(),
        "the connection closes at once: {error}"
    );
    assert!(
        error.status().is_none(),
        "no HTTP status was received: {error}"
    );

    // The insert happened: its task exists, completes, and its tag is listed.
    the_insert_happened(&t, &boston, &vpg, "LoseResponse", "lost answer").await;

    // The count is spent: the next insert is answered normally.
    boston.insert(&vpg, "answered").await;
}

#[tokio::test]
async fn a_withheld_response_keeps_the_client_waiting_until_its_timeout_after_the_handler_took_effect()
 {
    let (t, boston, vpg) = frozen_with_vpg(59, "web-dr").await;
    add_rule(
        &t,
        json!({"Method": "POST", "Path": "/v1/vpgs/*/checkpoints", "Action": "WithholdResponse",
               "Count": 1}),
    )
    .await;
    let started = Instant::now();
    let error = insert_request(&boston, &vpg, "withheld answer")
        .timeout(Duration::from_millis(500))
        .send()
        .await
        .expect_err("no answer comes");
    assert!(
        error.is_timeout(),
        "the client's own timeout ended it: {error}"
    );
    assert!(started.elapsed() >= Duration::from_millis(500));

    // The insert happened: its task exists, completes, and its tag is listed.
    the_insert_happened(&t, &boston, &vpg, "WithholdResponse", "withheld answer").await;
    boston.insert(&vpg, "answered").await;
}

#[tokio::test]
async fn a_cut_response_sends_half_its_body_with_the_whole_length_then_drops_the_connection() {
    let t = spawn_frozen(60).await;
    let boston = t.boston().await;
    add_rule(
        &t,
        json!({"Method": "GET", "Path": "/v1/vpgs", "Action": "CutResponse", "Count": 1}),
    )
    .await;
    let read = || {
        t.http
            .get(format!("{}/v1/vpgs", boston.base))
            .bearer_auth(&boston.token)
            .send()
    };
    let cut = read().await.expect("the status and headers arrive");
    assert_eq!(cut.status(), StatusCode::OK);
    let announced = cut.content_length().expect("a length is announced");
    cut.bytes().await.expect_err("the body breaks off");
    let call = t.control.calls().await.pop().unwrap();
    assert_eq!(
        call["Faults"],
        json!([{"Rule": 1, "Action": "CutResponse"}])
    );
    assert_eq!(call["Status"], 200);

    // The count is spent: the next answer is whole, and as long as the cut one announced.
    let whole = read().await.unwrap().bytes().await.unwrap();
    assert_eq!(whole.len() as u64, announced);
    let vpgs: Value = serde_json::from_slice(&whole).unwrap();
    assert!(!vpgs.as_array().unwrap().is_empty());
}

#[tokio::test]
async fn another_clients_insert_goes_first_and_the_back_to_back_rule_fails_the_clients_own() {
    let (t, boston, vpg) = frozen_with_vpg(61, "web-local").await;
    add_rule(
        &t,
        json!({"Path": "/v1/vpgs/*/checkpoints", "Action": "InsertAsAnotherClient", "Count": 1}),
    )
    .await;
    // A read of the same path is no insert: the rule does not match it.
    boston.get_ok(&format!("/v1/vpgs/{vpg}/checkpoints")).await;
    let ours = boston.insert(&vpg, "ours").await;
    let tasks = t.control.get("tasks").await;
    let tasks = tasks.as_array().unwrap();
    assert_eq!(tasks.len(), 2, "{tasks:?}");
    let theirs = tasks[0]["TaskIdentifier"].as_str().unwrap().to_owned();
    assert_eq!(tasks[0]["CheckpointName"], "another client's checkpoint");
    assert_eq!(tasks[1]["TaskIdentifier"], ours.as_str());

    t.control.advance(1.0).await;
    let their_task = boston.task(&theirs).await;
    assert_eq!(their_task["InitiatedBy"], "admin");
    assert_eq!(their_task["Status"]["State"], 6);
    let our_task = boston.task(&ours).await;
    assert_eq!(our_task["Status"]["State"], 4, "{our_task}");
    let reason = our_task["CompleteReason"].as_str().unwrap();
    assert!(reason.contains(&theirs), "{reason}");

    // Another client's insert is no call this site received; ours shows the rule.
    let calls = t.control.calls().await;
    let inserts: Vec<&Value> = calls
        .iter()
        .filter(|c| c["Method"] == "POST" && c["Path"].as_str().unwrap().starts_with("/v1/"))
        .collect();
    assert_eq!(inserts.len(), 1, "{calls:?}");
    assert_eq!(inserts[0]["TaskId"], ours.as_str());
    assert_eq!(
        inserts[0]["Faults"],
        json!([{"Rule": 1, "Action": "InsertAsAnotherClient"}])
    );
    let rules = t.control.get("faults").await;
    assert_eq!(
        (rules[0]["Matched"].as_u64(), rules[0]["Fired"].as_u64()),
        (Some(1), Some(1))
    );
}

#[tokio::test]
async fn a_rule_after_another_matches_nothing_until_that_one_fired() {
    let t = spawn_frozen(62).await;
    let boston = t.boston().await;
    let first = add_rule(
        &t,
        json!({"Method": "GET", "Path": "/v1/localsite", "Action": "Respond", "Status": 503,
               "Count": 1}),
    )
    .await;
    let waiting = add_rule(
        &t,
        json!({"Method": "GET", "Path": "/v1/vpgs", "Action": "Respond", "Status": 500,
               "After": first["Id"]}),
    )
    .await;
    assert_eq!(waiting["After"], first["Id"]);
    assert_eq!(
        boston.get("/v1/vpgs").await.0,
        StatusCode::OK,
        "not armed yet"
    );
    assert_eq!(
        boston.get("/v1/localsite").await.0,
        StatusCode::SERVICE_UNAVAILABLE
    );
    assert_eq!(
        boston.get("/v1/vpgs").await.0,
        StatusCode::INTERNAL_SERVER_ERROR
    );
    let rules = t.control.get("faults").await;
    assert_eq!(
        (rules[1]["Matched"].as_u64(), rules[1]["Fired"].as_u64()),
        (Some(1), Some(1)),
        "the read before it was armed is not counted"
    );
}

#[tokio::test]
async fn a_revoke_tokens_fault_revokes_every_token_of_the_site_that_received_it() {
    let t = spawn_frozen(54).await;
    let boston = t.boston().await;
    let other_boston = t.boston().await;
    let denver = t.denver().await;
    add_rule(
        &t,
        json!({"Method": "GET", "Path": "/v1/localsite", "Site": "boston",
               "Action": "RevokeTokens", "Count": 1}),
    )
    .await;
    let (status, _) = boston.get("/v1/localsite").await;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "its own token was revoked first"
    );
    assert_eq!(
        other_boston.get("/v1/vpgs").await.0,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        denver.get("/v1/vpgs").await.0,
        StatusCode::OK,
        "Denver's tokens stay"
    );
    let fresh = t.boston().await;
    assert_eq!(fresh.get("/v1/localsite").await.0, StatusCode::OK);
}

/// Fires `copies` concurrent GETs for each of `identities` request identities at a fresh simulator
/// with a 50 % Respond rule; returns, per identity, how many were faulted.
async fn faulted_under_load(seed: u64, identities: usize, copies: usize) -> BTreeMap<usize, usize> {
    let t = spawn_frozen(seed).await;
    let boston = t.boston().await;
    add_rule(
        &t,
        json!({"Method": "GET", "Path": "/v1/vpgs", "Action": "Respond", "Status": 502,
               "Probability": 0.5}),
    )
    .await;
    let requests = (0..identities).flat_map(|i| (0..copies).map(move |_| i));
    let handles: Vec<_> = requests
        .map(|i| {
            let site = boston.clone();
            tokio::spawn(async move { (i, site.get(&format!("/v1/vpgs?probe={i}")).await.0) })
        })
        .collect();
    let mut faulted = BTreeMap::new();
    for handle in handles {
        let (i, status) = handle.await.unwrap();
        let count = faulted.entry(i).or_insert(0);
        if status == StatusCode::BAD_GATEWAY {
            *count += 1;
        } else {
            assert_eq!(status, StatusCode::OK);
        }
    }
    let logged = t
        .control
        .calls()
        .await
        .iter()
        .filter(|c| c["Faults"] != json!([]))
        .count();
    assert_eq!(
        logged,
        faulted.values().sum::<usize>(),
        "every fault is in the call log"
    );
    faulted
}

#[tokio::test]
async fn one_seed_gives_the_same_fault_decisions_under_concurrent_load() {
    let first = faulted_under_load(55, 24, 4).await;
    let second = faulted_under_load(55, 24, 4).await;
    assert_eq!(first, second);
    let total: usize = first.values().sum();
    assert!(
        (20..=76).contains(&total),
        "about half of 96 fault: {total}"
    );
    let other = faulted_under_load(56, 24, 4).await;
    assert_ne!(first, other, "another seed decides otherwise");
}

/// Each rule that is not valid is refused with a 400 that says what is wrong.
async fn bad_rules_are_refused(t: &TestSim) {
    for (bad, says) in [
        (
            json!({"Path": "v1/vpgs", "Action": "LoseResponse"}),
            "start it with '/'",
        ),
        (
            json!({"Path": "/v1/vpgs", "Action": "Explode"}),
            "Respond, Latency, LoseResponse, WithholdResponse, CutResponse, RevokeTokens or InsertAsAnotherClient",
        ),
        (
            json!({"Path": "/v1/vpgs", "Action": "Respond"}),
            "Status is required",
        ),
        (
            json!({"Path": "/v1/vpgs", "Action": "Latency"}),
            "LatencyMs is required",
        ),
        (
            json!({"Path": "/v1/vpgs", "Action": "RevokeTokens", "Probability": 2}),
            "between 0 and 1",
        ),
        (
            json!({"Path": "/v1/vpgs", "Action": "RevokeTokens", "Site": "Paris"}),
            "Boston or Denver",
        ),
        (
            json!({"Path": "/v1/vpgs", "Action": "RevokeTokens", "After": 99}),
            "no fault rule 99",
        ),
    ] {
        let answer = t.control.try_post("faults", bad).await;
        expect_refused(answer, StatusCode::BAD_REQUEST, &[says]);
    }
}

#[tokio::test]
async fn rules_are_checked_listed_removed_and_cleared_and_never_touch_the_control_api() {
    let t = spawn_frozen(57).await;
    bad_rules_are_refused(&t).await;
    let respond_500 = json!({"Path": "/**", "Action": "Respond", "Status": 500});
    add_rule(&t, respond_500.clone()).await;
    add_rule(&t, json!({"Path": "/v1/tasks", "Action": "LoseResponse"})).await;
    assert_eq!(t.control.get("faults").await.as_array().unwrap().len(), 2);
    assert_eq!(
        t.control.now().await.len(),
        24,
        "the control API is never faulted"
    );
    let token = zvm_sim::test_kit::token(
        &t.http,
        t.boston_url(),
        &[
            ("grant_type", "password"),
            ("client_id", "zerto-client"),
            ("username", "admin"),
            ("password", "admin"),
        ],
    )
    .await;
    assert_eq!(
        token.status(),
        StatusCode::INTERNAL_SERVER_ERROR,
        "the token endpoint is"
    );

    let delete = |path: &str| {
        t.http
            .delete(format!("{}/_sim/{path}", t.boston_url()))
            .send()
    };
    assert_eq!(
        delete("faults/1").await.unwrap().status(),
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        delete("faults/1").await.unwrap().status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(t.control.get("faults").await[0]["Id"], 2);
    assert_eq!(
        delete("faults").await.unwrap().status(),
        StatusCode::NO_CONTENT
    );
    assert!(t.control.get("faults").await.as_array().unwrap().is_empty());

    add_rule(&t, respond_500).await;
    control_ok(&t, "reset", Value::Null).await;
    assert!(
        t.control.get("faults").await.as_array().unwrap().is_empty(),
        "reset clears them"
    );
}

#[tokio::test]
async fn an_insert_whose_client_gave_up_during_a_latency_fault_still_takes_effect() {
    // "The ZVM took 400 ms, and the client had given up after 50 ms": as on an appliance, the write
    // is done all the same.
    let t = spawn(58).await;
    let (boston, vpg) = t.boston_with_vpg("web-local").await;
    add_rule(
        &t,
        json!({"Method": "POST", "Path": "/v1/vpgs/*/checkpoints", "Action": "Latency",
               "LatencyMs": 400, "Count": 1}),
    )
    .await;
    let gave_up = insert_request(&boston, &vpg, "sent, then given up on")
        .timeout(Duration::from_millis(50))
        .send()
        .await;
    assert!(gave_up.is_err_and(|e| e.is_timeout()), "the client gave up");
    let deadline = Instant::now() + Duration::from_secs(10);
    let task = loop {
        let tasks = t.control.get("tasks").await;
        if let Some(task) = tasks
            .as_array()
            .unwrap()
            .iter()
            .find(|task| task["CheckpointName"] == "sent, then given up on")
        {
            break task.clone();
        }
        assert!(
            Instant::now() < deadline,
            "the insert never happened: {tasks}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let done = boston
        .wait_task(task["TaskIdentifier"].as_str().unwrap())
        .await;
    assert_eq!(done["Status"]["State"], 6, "{done}");
    // Past the listing lag (20 ms here), the checkpoint is listed.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(boston.tagged(&vpg, "sent, then given up on").await.len(), 1);
}

#[tokio::test]
async fn a_rule_with_an_expiry_acts_until_that_much_simulated_time_passed_then_is_forgotten() {
    let (t, boston, _) = frozen_with_vpg(57, "web-local").await;
    let rule = add_rule(
        &t,
        json!({"Method": "GET", "Path": "/v1/vpgs", "Action": "Respond", "Status": 503,
               "ExpiresInSeconds": 60}),
    )
    .await;
    assert!(rule["ExpiresAt"].is_string(), "{rule}");
    let (status, _) = boston.get("/v1/vpgs").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    t.control.advance(59.0).await;
    assert_eq!(
        boston.get("/v1/vpgs").await.0,
        StatusCode::SERVICE_UNAVAILABLE
    );
    t.control.advance(2.0).await;
    assert_eq!(boston.get("/v1/vpgs").await.0, StatusCode::OK, "expired");
    assert_eq!(t.control.get("faults").await, json!([]), "and forgotten");
    let refused = t
        .control
        .try_post(
            "faults",
            json!({"Path": "/v1/**", "Action": "LoseResponse", "ExpiresInSeconds": 0}),
        )
        .await;
    expect_refused(refused, StatusCode::BAD_REQUEST, &["ExpiresInSeconds"]);
}
