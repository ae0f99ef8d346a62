//! Guards and recoveries as MCP tasks: a client that declares the tasks extension gets a task for a
//! guard, follows it to its result and finds it in `tasks/list`; a guard task cancelled while one of
//! its VPGs waits for its turn sends no insert there, reads the inserts it had sent to their end,
//! journals them, and ends `cancelled` saying so. Over HTTP, a signed-in caller's task is its own:
//! another person can neither read, cancel nor list it.

use std::time::Duration;

use rmcp::model::{
    CallToolResponse, CancelTaskParams, ClientCapabilities, ClientRequest, CustomRequest,
    GetTaskParams, GetTaskResult, Implementation, ServerResult, TaskPayload, TaskStatus,
};
use rmcp::service::RunningService;
use rmcp::{ClientHandler, RoleClient};
use serde_json::{Value, json};

use crate::helper::{Protocol, Setup, TestEnv, params};
use crate::sign_in::{signed_in, token_of};

/// A client that declares the tasks extension.
#[derive(Clone, Default)]
struct Tasker;

impl ClientHandler for Tasker {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        rmcp::model::ClientConfig::new(
            ClientCapabilities::builder().enable_tasks().build(),
            Implementation::new("test-tasker", "0.1.0"),
        )
    }
}

/// Starts a guard of `vm` for `change` as a task: its id.
async fn start_guard(
    client: &RunningService<RoleClient, Tasker>,
    vm: &str,
    change: &str,
) -> String {
    let args =
        json!({"vm": vm, "agent": "claude-code", "action": "edit app.conf", "change_id": change});
    match client
        .call_tool_once(params("zerto_guard_before_mutate", args))
        .await
        .expect("the call is answered")
    {
        CallToolResponse::Task(created) => created.task.task_id,
        other => panic!("a task was asked for and not given: {other:?}"),
    }
}

/// Polls the task until it ends (a minute at most).
async fn until_ended(client: &RunningService<RoleClient, Tasker>, id: &str) -> GetTaskResult {
    for _ in 0..600 {
        let got = client
            .peer()
            .get_task(GetTaskParams::new(id))
            .await
            .expect("tasks/get answers");
        if got.task.task.status.is_terminal() {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("task {id} did not end within a minute");
}

#[tokio::test]
async fn a_guard_started_as_a_task_is_followed_to_its_result_and_listed() {
    let env = TestEnv::start(61, Setup::File).await;
    let client = env.stdio(Tasker, Protocol::Legacy).await;
    let id = start_guard(&client, "web-01", "task-1").await;
    let ended = until_ended(&client, &id).await;
    let TaskPayload::Completed { result } = &ended.task.payload else {
        panic!("the guard task did not complete: {:?}", ended.task);
    };
    let result = Value::Object(result.clone());
    assert_eq!(
        result["structuredContent"]["verdict"], "guarded",
        "{result}"
    );
    assert_eq!(env.journal_record("task-1")["verdict"], "guarded");

    assert_eq!(listed(&client).await, [id.as_str()]);

    // A read tool answers at once, even to a client that can take tasks.
    let found = client
        .call_tool_once(params("zerto_find_protection", json!({"vm": "web-01"})))
        .await
        .unwrap();
    assert!(matches!(found, CallToolResponse::Complete(_)), "{found:?}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_cancelled_guard_task_sends_nothing_more_and_journals_the_inserts_it_sent() {
    // Frozen time: no insert ends until the test moves the clock.
    let options = zvm_sim::Options {
        time_scale: 0.0,
        ..zvm_sim::Options::for_tests(62)
    };
    let env = TestEnv::start_with(options, Setup::File).await;
    let client = env.stdio(Tasker, Protocol::Legacy).await;

    // db-01's guard holds web-dr, the VPG it shares with web-01, so web-01's insert there waits.
    let first = start_guard(&client, "db-01", "db-change").await;
    env.control.until_an_insert_started().await;
    let id = start_guard(&client, "web-01", "web-change").await;
    for _ in 0..200 {
        if env.control.inserts(None).await.len() >= 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let before = env.control.inserts(None).await.len();
    assert_eq!(before, 3, "db-01's, and web-01's into its two free VPGs");

    client
        .peer()
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .expect("tasks/cancel answers");
    // Let the inserts sent end, and their checkpoints be listed.
    for _ in 0..20 {
        env.control.advance(5).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let ended = until_ended(&client, &id).await;
    assert_eq!(ended.task.task.status, TaskStatus::Cancelled);
    let said = ended.task.task.status_message.clone().unwrap_or_default();
    assert!(said.contains("journaled"), "{said}");
    assert_eq!(
        env.control.inserts(None).await.len(),
        before,
        "nothing was inserted after the cancel"
    );

    let record = env.journal_record("web-change");
    assert_eq!(record["verdict"], "not_guarded", "{record}");
    let outcome = |vpg: &str| -> Value {
        record["vpgs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["vpg_name"] == vpg)
            .cloned()
            .unwrap_or_else(|| panic!("{vpg} in {record}"))
    };
    for sent in ["web-local", "web-archive"] {
        let line = outcome(sent);
        assert_eq!(line["outcome"], "tagged", "{line}");
        assert!(line["task_id"].is_string(), "{line}");
    }
    let stopped = outcome("web-dr");
    assert!(
        stopped["detail"].as_str().unwrap().contains("cancelled"),
        "{stopped}"
    );

    let first = until_ended(&client, &first).await;
    assert_eq!(
        first.task.task.status,
        TaskStatus::Completed,
        "the other guard is untouched"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn over_http_a_signed_in_caller_follows_its_own_guard_task_and_no_one_else_sees_it() {
    let guard: &[&str] = &["rewind-read", "rewind-guard"];
    let world = zvm_sim::test_kit::world_with_people(&[("alice", guard), ("bob", guard)]);
    let options = zvm_sim::Options {
        world,
        ..zvm_sim::Options::for_tests(63)
    };
    let env = TestEnv::start_with(options, Setup::File).await;
    signed_in(&env, "account");
    let server = env.http_server().await;
    let site = env.sim.local().url.clone();
    let alice = server
        .client_with_token(Tasker, &token_of(&site, "alice", "alice-password").await)
        .await;
    let bob = server
        .client_with_token(Tasker, &token_of(&site, "bob", "bob-password").await)
        .await;

    let id = start_guard(&alice, "web-01", "http-task").await;
    let peeked = bob.peer().get_task(GetTaskParams::new(id.clone())).await;
    assert!(peeked.is_err(), "bob reads alice's task: {peeked:?}");
    let cancelled = bob
        .peer()
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await;
    assert!(cancelled.is_err(), "bob cancels alice's task");
    assert!(listed(&bob).await.is_empty());
    assert_eq!(listed(&alice).await, [id.as_str()]);

    let ended = until_ended(&alice, &id).await;
    assert_eq!(ended.task.task.status, TaskStatus::Completed);
    let record = env.journal_record("http-task");
    assert_eq!(record["verdict"], "guarded");
    assert_eq!(record["person"]["name"], "alice");
    alice.cancel().await.unwrap();
    bob.cancel().await.unwrap();
}

/// The ids `tasks/list` gives this client.
async fn listed(client: &RunningService<RoleClient, Tasker>) -> Vec<String> {
    let answer = client
        .peer()
        .send_request(ClientRequest::CustomRequest(CustomRequest::new(
            "tasks/list",
            None,
        )))
        .await
        .expect("tasks/list answers");
    let ServerResult::CustomResult(listed) = answer else {
        panic!("tasks/list answered {answer:?}");
    };
    listed.0["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["taskId"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_guard_task_cancelled_while_it_waits_for_another_clients_insert_stops_waiting() {
    // Frozen time: another client's insert into web-dr runs until the test moves the clock.
    let options = zvm_sim::Options {
        time_scale: 0.0,
        ..zvm_sim::Options::for_tests(64)
    };
    let env = TestEnv::start_with(options, Setup::File).await;
    let theirs = env
        .control
        .insert_as_another_client("web-dr", "someone-elses-change")
        .await;
    let client = env.stdio(Tasker, Protocol::Legacy).await;

    let id = start_guard(&client, "db-01", "waits").await;
    // The guard sees their insert running and waits for it.
    env.control.until_a_call_to("/v1/tasks").await;
    client
        .peer()
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .expect("tasks/cancel answers");
    let ended = until_ended(&client, &id).await;
    assert_eq!(ended.task.task.status, TaskStatus::Cancelled);
    assert_eq!(
        env.control.inserts(None).await.len(),
        1,
        "only theirs: the guard sent none"
    );
    assert_eq!(
        zvm_sim::test_kit::state_of(&env.control.task(&theirs).await),
        1,
        "theirs still runs"
    );
    let record = env.journal_record("waits");
    let detail = record["vpgs"][0]["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("cancelled"), "{record}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_recovery_task_cancelled_runs_to_its_end_and_keeps_its_answer() {
    let env = TestEnv::start(65, Setup::File).await;
    let client = env.stdio(Tasker, Protocol::Legacy).await;
    let guard = start_guard(&client, "web-01", "ft-task").await;
    until_ended(&client, &guard).await;

    let start = json!({"vm": "web-01", "change_id": "ft-task", "action": "start"});
    let CallToolResponse::Task(created) = client
        .call_tool_once(params("zerto_failover_test", start))
        .await
        .unwrap()
    else {
        panic!("a failover test runs as a task");
    };
    let id = created.task.task_id;
    client
        .peer()
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .unwrap();
    let ended = until_ended(&client, &id).await;
    assert_eq!(ended.task.task.status, TaskStatus::Completed);
    let TaskPayload::Completed { result } = &ended.task.payload else {
        panic!("{:?}", ended.task);
    };
    let next = result["structuredContent"]["next_step"]
        .as_str()
        .unwrap_or_default();
    assert!(
        next.contains("stop"),
        "the answer says how to stop the test: {result:?}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn over_http_without_sign_in_a_session_sees_only_its_own_tasks() {
    let env = TestEnv::start(66, Setup::File).await;
    let server = env.http_server().await;
    let mine = server.client(Tasker, Protocol::Legacy).await;
    let theirs = server.client(Tasker, Protocol::Legacy).await;
    let id = start_guard(&mine, "web-01", "session-task").await;
    assert!(
        theirs
            .peer()
            .get_task(GetTaskParams::new(id.clone()))
            .await
            .is_err(),
        "another session reads the task"
    );
    assert!(listed(&theirs).await.is_empty());
    assert_eq!(listed(&mine).await, [id.as_str()]);
    let ended = until_ended(&mine, &id).await;
    assert_eq!(ended.task.task.status, TaskStatus::Completed);
    mine.cancel().await.unwrap();
    theirs.cancel().await.unwrap();
}
