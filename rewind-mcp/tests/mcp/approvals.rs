//! Held calls on a team server: what an agent may only propose (a restore, keeping tags) answers at
//! once with where a person approves it; another person approves or denies it over
//! `/v1/approvals`; the requester's identical call then runs once, and only once.

use std::time::Duration;

use reqwest::StatusCode;
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};

use crate::helper::*;
use crate::recovery::APP_CONF;
use crate::sign_in::{signed_in, token_of};

const PEOPLE: &[(&str, &[&str])] = &[
    ("alice", &["rewind-read", "rewind-guard", "rewind-recover"]),
    ("bob", &["rewind-read", "rewind-recover", "rewind-approve"]),
    ("carol", &["rewind-read", "rewind-approve"]),
    (
        "dave",
        &[
            "rewind-read",
            "rewind-guard",
            "rewind-recover",
            "rewind-approve",
        ],
    ),
];

/// A team server of `seed` whose realm holds [`PEOPLE`], with `extra` configuration.
async fn team(seed: u64, extra: &str) -> (TestEnv, HttpServer) {
    let options = zvm_sim::Options {
        world: zvm_sim::test_kit::world_with_people(PEOPLE),
        ..zvm_sim::Options::for_tests(seed)
    };
    let env = TestEnv::start_with(options, Setup::File).await;
    signed_in(&env, "account");
    let text = std::fs::read_to_string(env.config_path()).unwrap();
    std::fs::write(env.config_path(), text + extra).unwrap();
    let server = env.http_server().await;
    (env, server)
}

async fn token(env: &TestEnv, person: &str) -> String {
    token_of(&env.sim.local().url, person, &format!("{person}-password")).await
}

async fn client(
    env: &TestEnv,
    server: &HttpServer,
    person: &str,
) -> RunningService<RoleClient, Human> {
    server
        .client_with_token(Human::unreachable(), &token(env, person).await)
        .await
}

/// `person`'s request to the server's `path` (`POST` with `body`, else `GET`): status and JSON.
async fn api(
    env: &TestEnv,
    server: &HttpServer,
    person: &str,
    path: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let http = reqwest::Client::new();
    let url = server.at(path);
    let request = match body {
        Some(body) => http.post(url).json(&body),
        None => http.get(url),
    };
    let answer = request
        .bearer_auth(token(env, person).await)
        .send()
        .await
        .unwrap();
    let status = answer.status();
    (status, answer.json().await.unwrap_or_default())
}

/// alice guards web-01 for c1 and breaks its app.conf.
async fn guarded_and_broken(env: &TestEnv, alice: &RunningService<RoleClient, Human>) {
    expect_guarded(&guard(alice, "web-01", "edit", "c1").await);
    env.control.put_file("web-01", APP_CONF, b"broken\n").await;
}

fn restore(as_name: &str) -> Value {
    json!({"vm": "web-01", "change_id": "c1", "as_name": as_name})
}

/// The held call a tool answered with.
fn held(result: &rmcp::model::CallToolResult) -> Value {
    assert!(is_error(result), "a held call is an error: {result:?}");
    structured(result).clone()
}

#[tokio::test]
async fn a_restore_an_agent_proposes_on_a_team_server_runs_once_after_another_person_approves_it() {
    let (env, server) = team(301, "").await;
    let alice = client(&env, &server, "alice").await;
    guarded_and_broken(&env, &alice).await;
    let first = held(&call(&alice, "zerto_restore_vm", restore("web-01-back")).await);
    assert_eq!(first["state"], "held", "{first}");
    let id = first["approval_id"].as_str().unwrap().to_owned();
    assert!(
        first["url"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/v1/approvals/{id}")),
        "{first}"
    );
    assert!(
        first["headline"]
            .as_str()
            .unwrap()
            .contains("held for a person's approval")
    );
    let again = held(&call(&alice, "zerto_restore_vm", restore("web-01-back")).await);
    assert_eq!(
        again["approval_id"],
        id.as_str(),
        "the same call is the same held call"
    );
    assert!(
        env.control
            .tasks_of_type("JournalVmRestore")
            .await
            .is_empty(),
        "nothing runs while held"
    );

    let (status, listed) = api(&env, &server, "bob", "/v1/approvals", None).await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    assert_eq!(listed["approvals"][0]["id"], id.as_str());
    assert!(
        listed["approvals"][0].get("arguments").is_none(),
        "the list never shows arguments"
    );
    let (status, shown) = api(&env, &server, "bob", &format!("/v1/approvals/{id}"), None).await;
    assert_eq!(
        (status, &shown["arguments"]["as_name"]),
        (StatusCode::OK, &json!("web-01-back"))
    );
    let (status, approved) = api(
        &env,
        &server,
        "bob",
        &format!("/v1/approvals/{id}/approve"),
        Some(json!({"comment": "go"})),
    )
    .await;
    assert_eq!(
        (status, &approved["state"]),
        (StatusCode::OK, &json!("approved")),
        "{approved}"
    );

    let ran = call(&alice, "zerto_restore_vm", restore("web-01-back")).await;
    assert!(!is_error(&ran), "{ran:?}");
    assert_eq!(structured(&ran)["verdict"], "waiting");
    assert_ne!(env.control.file("web-01-back", APP_CONF).await, b"broken\n");
    let record = env.journal_record("c1");
    assert_eq!(
        record["approved_by"]["approval_id"],
        id.as_str(),
        "{record}"
    );
    assert_eq!(record["approved_by"]["person"]["name"], "bob", "{record}");
    assert_eq!(record["person"]["name"], "alice", "{record}");

    let third = held(&call(&alice, "zerto_restore_vm", restore("web-01-back")).await);
    assert_eq!(third["state"], "executed", "{third}");
    assert!(
        third["headline"].as_str().unwrap().contains("already ran"),
        "{third}"
    );
    assert_eq!(
        env.control.tasks_of_type("JournalVmRestore").await.len(),
        1,
        "it ran once"
    );

    let other = held(&call(&alice, "zerto_restore_vm", restore("web-01-other")).await);
    assert_eq!(other["state"], "held");
    assert_ne!(
        other["approval_id"],
        id.as_str(),
        "other arguments are another held call"
    );

    let metrics = reqwest::get(server.at("/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for line in [
        "rewind_held_calls_total{event=\"held\"} 2",
        "rewind_held_calls_total{event=\"approved\"} 1",
        "rewind_approval_decision_seconds_count 1",
    ] {
        assert!(metrics.contains(line), "{line} in {metrics}");
    }
}

#[tokio::test]
async fn a_denial_and_its_comment_reach_the_agent_and_nothing_runs() {
    let (env, server) = team(302, "").await;
    let alice = client(&env, &server, "alice").await;
    guarded_and_broken(&env, &alice).await;
    let id = held(&call(&alice, "zerto_restore_vm", restore("b")).await)["approval_id"].clone();
    let path = format!("/v1/approvals/{}/deny", id.as_str().unwrap());
    let (status, _) = api(
        &env,
        &server,
        "bob",
        &path,
        Some(json!({"comment": "recover app.conf alone"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let answer = held(&call(&alice, "zerto_restore_vm", restore("b")).await);
    assert_eq!(answer["state"], "denied");
    assert_eq!(answer["comment"], "recover app.conf alone");
    assert!(
        answer["headline"]
            .as_str()
            .unwrap()
            .contains("denied by bob"),
        "{answer}"
    );
    assert!(
        env.control
            .tasks_of_type("JournalVmRestore")
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn four_eyes_refuses_the_requester_and_approving_needs_both_roles() {
    let (env, server) = team(303, "").await;
    let dave = client(&env, &server, "dave").await;
    guarded_and_broken(&env, &dave).await;
    let id = held(&call(&dave, "zerto_restore_vm", restore("b")).await)["approval_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let approve = format!("/v1/approvals/{id}/approve");
    let (status, said) = api(&env, &server, "dave", &approve, Some(json!({}))).await;
    assert_eq!(status, StatusCode::CONFLICT, "{said}");
    assert!(
        said["error"].as_str().unwrap().contains("four eyes"),
        "{said}"
    );
    let (status, said) = api(&env, &server, "alice", &approve, Some(json!({}))).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{said}");
    assert!(
        said["error"].as_str().unwrap().contains("rewind-approve"),
        "{said}"
    );
    let (status, said) = api(&env, &server, "carol", &approve, Some(json!({}))).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{said}");
    assert!(
        said["error"].as_str().unwrap().contains("rewind-recover"),
        "the tool's own role: {said}"
    );
    let (status, said) = api(&env, &server, "bob", &approve, Some(json!({}))).await;
    assert_eq!(status, StatusCode::OK, "{said}");
    let (status, said) = api(&env, &server, "bob", &approve, Some(json!({}))).await;
    assert_eq!(
        status,
        StatusCode::CONFLICT,
        "a call no longer held: {said}"
    );
}

#[tokio::test]
async fn a_held_call_outlives_a_restart_and_expires_on_time() {
    let (env, server) = team(304, "\n[approvals]\nexpire_after_secs = 3\n").await;
    let alice = client(&env, &server, "alice").await;
    guarded_and_broken(&env, &alice).await;
    let id = held(&call(&alice, "zerto_restore_vm", restore("b")).await)["approval_id"]
        .as_str()
        .unwrap()
        .to_owned();
    drop(alice);
    drop(server);
    let server = env.http_server().await;
    let (status, shown) = api(&env, &server, "bob", &format!("/v1/approvals/{id}"), None).await;
    assert_eq!(
        (status, &shown["state"]),
        (StatusCode::OK, &json!("held")),
        "{shown}"
    );
    tokio::time::sleep(Duration::from_millis(3_500)).await;
    let (_, shown) = api(&env, &server, "bob", &format!("/v1/approvals/{id}"), None).await;
    assert_eq!(shown["state"], "expired", "{shown}");
    let (status, _) = api(
        &env,
        &server,
        "bob",
        &format!("/v1/approvals/{id}/approve"),
        Some(json!({})),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT);
}

#[tokio::test]
async fn a_hooks_held_call_is_allowed_once_after_approval() {
    let (env, server) = team(305, "").await;
    let body = json!({"server": "vsphere", "tool": "run_in_guest", "vm": "web-01",
        "arguments": {"vm_name": "web-01", "script": "rm -rf /tmp/x"}, "agent": "codex",
        "why": "vsphere/run_in_guest changes VM web-01, which is not guarded"});
    let (status, first) = api(&env, &server, "alice", "/v1/held", Some(body.clone())).await;
    assert_eq!(status, StatusCode::OK, "{first}");
    assert_eq!(
        (&first["state"], &first["allow"]),
        (&json!("held"), &json!(false))
    );
    let id = first["approval_id"].as_str().unwrap().to_owned();
    let (status, _) = api(
        &env,
        &server,
        "dave",
        &format!("/v1/approvals/{id}/approve"),
        Some(json!({})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (_, allowed) = api(&env, &server, "alice", "/v1/held", Some(body.clone())).await;
    assert_eq!(
        (&allowed["state"], &allowed["allow"]),
        (&json!("allowed"), &json!(true)),
        "{allowed}"
    );
    let (_, again) = api(&env, &server, "alice", "/v1/held", Some(body)).await;
    assert_eq!(again["allow"], false, "allowed once: {again}");
}
