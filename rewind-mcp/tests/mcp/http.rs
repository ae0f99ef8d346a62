use serde_json::json;

use crate::helper::{
    Answer, Human, Protocol, Setup, TestEnv, call, expect_guarded, expect_ok, guard,
    guard_in_background, line, list_tags, recover_file, structured, terminate,
};

#[tokio::test]
async fn over_http_the_tools_run_a_file_is_recovered_and_the_human_is_asked_on_both_protocols() {
    let env = TestEnv::start(41, Setup::Env).await;
    let server = env.http_server().await;

    // A tool the catalog does not know: the human is asked about it.
    let ssh_run = json!({"server": "ssh", "tool": "run", "vm": "web-01"});
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
    expect_ok(&call(&client, "zerto_find_protection", json!({"vm": "web-01"})).await);
    expect_guarded(&guard(&client, "web-01", "edit app.conf", "http-1").await);
    let tags = list_tags(&client, "web-01", "http-1").await;
    assert!(
        line(&tags).contains("3 tagged checkpoint(s)"),
        "{}",
        line(&tags)
    );
    let destination = env.dir.path().join("recovered");
    let recovered = recover_file(
        &client,
        "web-01",
        "http-1",
        "sda1/etc/hostname",
        &destination,
    )
    .await;
    expect_ok(&recovered);
    let hostname = std::fs::read_to_string(destination.join("sda1/etc/hostname")).unwrap();
    assert!(hostname.contains("web-01"), "{hostname}");
    let asked = call(&client, "zerto_check_tool", ssh_run.clone()).await;
    assert_eq!(structured(&asked)["next"], "guard_first");
    assert_eq!(human.times_asked(), 1);
    client.cancel().await.unwrap();

    let human = Human::answering(Answer::No);
    let client = server.client(human.clone(), Protocol::Mrtr).await;
    let asked = call(&client, "zerto_check_tool", ssh_run.clone()).await;
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

    // The hooks' read of the journal answers to the same names.
    let guards = server.url.replace("/mcp", "/v1/guards");
    let get = |host: &'static str| http.get(&guards).header("Host", host).send();
    assert_eq!(get("evil.example").await.unwrap().status(), 403);
    assert_eq!(get("evil.example:80").await.unwrap().status(), 403);
    assert_eq!(get("[::1]junk").await.unwrap().status(), 403);
    let served = get("localhost:1").await.unwrap();
    assert_eq!(served.status(), 200);
    let view: serde_json::Value = served.json().await.unwrap();
    assert_eq!(view["records"], json!([]));

    // After two guards, a hook that names its VM gets that VM's records only.
    let client = server.client(Human::unreachable(), Protocol::Legacy).await;
    expect_guarded(&guard(&client, "web-01", "edit", "v-1").await);
    expect_guarded(&guard(&client, "db-01", "edit", "v-2").await);
    let vms = |view: serde_json::Value| -> Vec<String> {
        let mut names: Vec<String> = view["records"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["vm"]["name"].as_str().unwrap().to_owned())
            .collect();
        names.dedup();
        names
    };
    let all = get("localhost").await.unwrap().json().await.unwrap();
    assert_eq!(vms(all).len(), 2);
    let of_web = http
        .get(format!("{guards}?vm=WEB-01"))
        .header("Host", "localhost")
        .send()
        .await
        .unwrap();
    assert_eq!(vms(of_web.json().await.unwrap()), ["web-01"]);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn the_team_server_answers_which_open_changes_ways_back_end_within_a_span() {
    let env = TestEnv::start(44, Setup::Env).await;
    let server = env.http_server().await;
    let client = server.client(Human::unreachable(), Protocol::Legacy).await;
    expect_guarded(&guard(&client, "web-01", "edit", "soon-1").await);
    let http = reqwest::Client::new();
    let expiring = server.url.replace("/mcp", "/v1/expiring");
    let ask = |within: &'static str| {
        http.get(format!("{expiring}?within={within}"))
            .header("Host", "localhost")
            .send()
    };
    let soon: serde_json::Value = ask("2h").await.unwrap().json().await.unwrap();
    let changes = soon["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{soon}");
    assert_eq!(changes[0]["change_id"], "soon-1", "{soon}");
    assert_eq!(soon["within_minutes"], 120, "{soon}");
    let later: serde_json::Value = ask("30m").await.unwrap().json().await.unwrap();
    assert_eq!(
        later["changes"],
        json!([]),
        "web-01's shortest way back is an hour: {later}"
    );
    let bad = ask("soon").await.unwrap();
    assert_eq!(bad.status(), 400);
    let said: serde_json::Value = bad.json().await.unwrap();
    assert!(
        said["error"].as_str().unwrap().contains("30m, 2h"),
        "{said}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_site_without_tls_verification_is_warned_about_once_at_start() {
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
    let (before_serving, _) = until_serving(&mut child).await;
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
    let guard = guard_in_background(&client, "http-term");
    env.control.until_an_insert_started().await;
    // A service manager stops the server while the guard's inserts run at Zerto.
    let status = terminate(server.process()).await;
    assert_eq!(status.code(), Some(143), "{status}");
    let record = env.journal_record("http-term");
    assert_eq!(record["verdict"], "guarded", "{record}");
    guard.abort();
    drop(client);
}

#[tokio::test]
async fn without_sign_in_the_server_will_not_listen_beyond_loopback() {
    let env = TestEnv::start(44, Setup::File).await;
    let run = |args: &'static [&'static str]| {
        let mut command = env.command(args);
        command
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        async move {
            tokio::time::timeout(std::time::Duration::from_secs(60), command.output())
                .await
                .expect("it answers at once")
                .unwrap()
        }
    };
    let refused = run(&[
        "--http",
        "0.0.0.0:0",
        "--allowed-host",
        "rewind.example.com",
    ])
    .await;
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("[http.auth]") && said.contains("127.0.0.1"),
        "{said}"
    );

    // Signed in, it does.
    crate::sign_in::signed_in(&env, "account");
    let mut child = env
        .command(&[
            "--http",
            "0.0.0.0:0",
            "--allowed-host",
            "rewind.example.com",
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("rewind-mcp starts");
    let (_, serving) = until_serving(&mut child).await;
    assert!(
        serving.starts_with("rewind-mcp: serving MCP on http://0.0.0.0:"),
        "signed in, it listens beyond loopback: {serving}"
    );
}

/// The lines `child` wrote on stderr before it said where it serves, and that line.
async fn until_serving(child: &mut tokio::process::Child) -> (Vec<String>, String) {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    tokio::time::timeout(std::time::Duration::from_secs(60), async {
        let mut seen = Vec::new();
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.starts_with("rewind-mcp: serving MCP on ") {
                return (seen, line);
            }
            seen.push(line);
        }
        panic!("rewind-mcp ended without serving: {seen:?}");
    })
    .await
    .expect("rewind-mcp serves within a minute")
}
