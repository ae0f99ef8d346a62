//! The server when the machine does not help: identical guard calls at once, a catalog lock another
//! process holds, a journal that cannot be written, more sessions than it serves.

use std::time::Duration;

use serde_json::json;

use crate::helper::{
    Answer, Human, Protocol, Setup, TestEnv, call, expect_error_saying, expect_guarded, expect_ok,
    guard, is_error, line, structured,
};

#[tokio::test]
async fn two_identical_guard_calls_to_one_server_share_one_checkpoint_per_vpg() {
    let env = TestEnv::start(81, Setup::File).await;
    env.control.task_duration(600).await;
    let client = env
        .stdio(Human::answering(Answer::Yes), Protocol::Legacy)
        .await;
    let args =
        json!({"vm": "app-01", "agent": "claude-code", "action": "edit", "change_id": "twice"});
    let (a, b) = tokio::join!(
        call(&client, "zerto_guard_before_mutate", args.clone()),
        call(&client, "zerto_guard_before_mutate", args),
    );
    for r in [&a, &b] {
        expect_guarded(r);
    }
    let checkpoint =
        |r: &rmcp::model::CallToolResult| structured(r)["vpgs"][0]["checkpoint_id"].clone();
    assert_eq!(checkpoint(&a), checkpoint(&b));
    assert_eq!(
        env.insert_tasks().await.len(),
        1,
        "one insert into app-tier"
    );
    drop(client);
}

#[tokio::test]
async fn a_catalog_lock_held_by_another_process_stalls_no_other_request_and_is_named() {
    let env = TestEnv::start(82, Setup::File).await;
    let server = env.http_server().await;
    let client = server
        .client(Human::answering(Answer::Yes), Protocol::Legacy)
        .await;
    // Another process holds the catalog's lock, and four calls that change the catalog wait for it.
    let lock_path = env.dir.path().join("catalog.toml.lock");
    let lock = std::fs::File::create(&lock_path).unwrap();
    lock.lock().unwrap();
    let add = |i: u32| {
        call(
            &client,
            "zerto_add_mutating_tool",
            json!({"server": "ssh", "tool": format!("run-{i}")}),
        )
    };
    let adds = async { tokio::join!(add(0), add(1), add(2), add(3)) };
    tokio::pin!(adds);
    // Every other request is still answered while they wait, the lock still held.
    let tools = tokio::select! {
        tools = client.list_all_tools() => tools.unwrap(),
        _ = &mut adds => panic!("the catalog changes ended while the lock was still held"),
    };
    assert!(tools.iter().any(|t| t.name == "zerto_guard_before_mutate"));
    expect_ok(&call(&client, "zerto_journal", json!({})).await);
    // The waits are bounded: each change ends as a tool error naming the lock file.
    let (a, b, c, d) = tokio::time::timeout(Duration::from_secs(60), adds)
        .await
        .unwrap();
    for result in [a, b, c, d] {
        expect_error_saying(&result, "catalog.toml.lock");
    }
    lock.unlock().unwrap();
    let ssh_run = json!({"server": "ssh", "tool": "run"});
    let added = call(&client, "zerto_add_mutating_tool", ssh_run).await;
    expect_ok(&added);
}

#[tokio::test]
async fn a_journal_that_cannot_be_written_is_a_tool_error_and_nothing_is_inserted() {
    let env = TestEnv::start(83, Setup::File).await;
    let blocked = env.dir.path().join("blocked");
    std::fs::write(&blocked, "not a folder").unwrap();
    let config = std::fs::read_to_string(env.config_path()).unwrap();
    let journal = blocked.join("journal.jsonl");
    let config = config.replace(
        &format!("journal = {:?}", env.journal_path()),
        &format!("journal = {journal:?}"),
    );
    std::fs::write(env.config_path(), config).unwrap();
    let client = env
        .stdio(Human::answering(Answer::Yes), Protocol::Legacy)
        .await;
    let result = guard(&client, "web-01", "edit", "ro-1").await;
    assert!(is_error(&result), "{}", line(&result));
    let said = line(&result);
    assert!(
        said.contains("nothing was inserted") && said.contains(&*journal.to_string_lossy()),
        "{said}"
    );
    assert!(env.insert_tasks().await.is_empty());
    drop(client);
}

#[tokio::test]
async fn past_its_session_cap_the_http_server_answers_503_and_keeps_the_open_sessions() {
    let env = TestEnv::start(84, Setup::File).await;
    let server = env.http_server_with(&["--max-sessions", "2"]).await;
    let first = server
        .client(Human::answering(Answer::Yes), Protocol::Legacy)
        .await;
    let second = server
        .client(Human::answering(Answer::Yes), Protocol::Legacy)
        .await;
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "one-too-many", "version": "0"}}});
    let refused = reqwest::Client::new()
        .post(&server.url)
        .header("Accept", "application/json, text/event-stream")
        .json(&initialize)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 503);
    assert!(refused.headers().contains_key("retry-after"));
    let body: serde_json::Value = refused.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("at most 2 sessions"),
        "{body}"
    );
    // The sessions already open go on working.
    for client in [&first, &second] {
        expect_ok(&call(client, "zerto_journal", json!({})).await);
    }
    drop(first);
}
