use serde_json::json;

use crate::helper::{Answer, Human, Protocol, Setup, TestEnv, call, is_error, line, structured};

#[tokio::test]
async fn over_http_the_tools_run_a_file_is_recovered_and_the_human_is_asked_on_both_protocols() {
    let env = TestEnv::start(41, Setup::Env).await;
    let server = env.http_server().await;

    let human = Human::answering(Answer::Yes);
    let client = server.client(human.clone(), Protocol::Legacy).await;
    let tools = client.list_all_tools().await.unwrap();
    let find = tools
        .iter()
        .find(|t| t.name == "zerto_find_protection")
        .unwrap();
    assert_eq!(
        find.annotations.as_ref().unwrap().read_only_hint,
        Some(true)
    );
    let found = call(&client, "zerto_find_protection", json!({"vm": "web-01"})).await;
    assert!(!is_error(&found), "{}", line(&found));
    let guarded = call(
        &client,
        "zerto_guard_before_mutate",
        json!({"vm": "web-01", "agent": "claude-code", "action": "edit app.conf", "change_id": "http-1"}),
    )
    .await;
    assert_eq!(
        structured(&guarded)["verdict"],
        "guarded",
        "{}",
        line(&guarded)
    );
    let tags = call(
        &client,
        "zerto_list_tags",
        json!({"vm": "web-01", "change_id": "http-1"}),
    )
    .await;
    assert!(
        line(&tags).contains("3 tagged checkpoint(s)"),
        "{}",
        line(&tags)
    );
    let destination = env.dir.path().join("recovered");
    let recovered = call(
        &client,
        "zerto_recover_file",
        json!({"vm": "web-01", "change_id": "http-1", "paths": ["sda1/etc/hostname"],
               "destination": destination.to_str().unwrap()}),
    )
    .await;
    assert!(!is_error(&recovered), "{}", line(&recovered));
    let hostname = std::fs::read_to_string(destination.join("sda1/etc/hostname")).unwrap();
    assert!(hostname.contains("web-01"), "{hostname}");
    let asked = call(
        &client,
        "zerto_check_tool",
        json!({"server": "ssh", "tool": "run", "vm": "web-01"}),
    )
    .await;
    assert_eq!(structured(&asked)["next"], "guard_first");
    assert_eq!(human.times_asked(), 1);
    client.cancel().await.unwrap();

    let human = Human::answering(Answer::No);
    let client = server.client(human.clone(), Protocol::Mrtr).await;
    let asked = call(
        &client,
        "zerto_check_tool",
        json!({"server": "ssh", "tool": "run", "vm": "web-01"}),
    )
    .await;
    assert_eq!(structured(&asked)["next"], "run_unguarded");
    assert_eq!(human.times_asked(), 1);
    client.cancel().await.unwrap();
}

/// A request naming a host other than loopback is refused: a web page cannot reach the server through
/// DNS rebinding.
#[tokio::test]
async fn over_http_a_foreign_host_header_is_refused() {
    let env = TestEnv::start(42, Setup::Env).await;
    let server = env.http_server().await;
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}});
    let http = reqwest::Client::new();
    let post = |host: &'static str| {
        http.post(&server.url)
            .header("Host", host)
            .header("Accept", "application/json, text/event-stream")
            .json(&initialize)
            .send()
    };
    let foreign = post("evil.example").await.unwrap();
    assert!(
        foreign.status().is_client_error(),
        "a foreign Host is refused, got {}",
        foreign.status()
    );
    let local = post("localhost").await.unwrap();
    assert!(
        local.status().is_success(),
        "loopback is served, got {}",
        local.status()
    );
}

#[tokio::test]
async fn a_site_without_tls_verification_is_warned_about_once_at_start() {
    use tokio::io::{AsyncBufReadExt, BufReader};

    let env = TestEnv::start(43, Setup::Env).await;
    let mut child = env
        .command(&["--http", "127.0.0.1:0"])
        .env("ZVM_INSECURE", "1")
        .env_remove("RUST_LOG")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("rewind-mcp starts");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let before_serving = tokio::time::timeout(std::time::Duration::from_secs(60), async {
        let mut seen = Vec::new();
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.starts_with("rewind-mcp: serving MCP on ") {
                return seen;
            }
            seen.push(line);
        }
        panic!("rewind-mcp ended without serving: {seen:?}");
    })
    .await
    .expect("rewind-mcp serves within a minute");
    let warnings: Vec<&String> = before_serving
        .iter()
        .filter(|l| l.contains("verification is OFF"))
        .collect();
    assert_eq!(warnings.len(), 1, "{before_serving:#?}");
    assert!(warnings[0].contains("default"), "{warnings:?}");
}

#[tokio::test]
async fn over_http_sigterm_finishes_a_running_guard_journals_it_and_leaves_with_143() {
    let env = TestEnv::start(44, Setup::File).await;
    env.control.task_duration(3000).await;
    let mut server = env.http_server().await;
    let client = server.client(Human::unreachable(), Protocol::Legacy).await;
    let peer = client.peer().clone();
    let guard = tokio::spawn(async move {
        peer.call_tool(crate::helper::params(
            "zerto_guard_before_mutate",
            json!({"vm": "web-01", "agent": "claude-code", "action": "edit app.conf", "change_id": "http-term"}),
        ))
        .await
    });
    env.control.until_an_insert_started().await;
    // A service manager stops the server while the guard's inserts run at Zerto.
    let pid = server.process().id().expect("a pid").to_string();
    let sent = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = tokio::time::timeout(std::time::Duration::from_secs(60), server.process().wait())
        .await
        .expect("the server leaves once the guard is done")
        .unwrap();
    assert_eq!(status.code(), Some(143), "{status}");
    let record = env.journal_record("http-term");
    assert_eq!(record["verdict"], "guarded", "{record}");
    guard.abort();
    drop(client);
}
