use rmcp::model::{NumberOrString, ProgressToken, RequestMetaObject};
use serde_json::json;

use crate::helper::{
    CLIENT_SECRET, Human, Protocol, Setup, TestEnv, call, is_error, line, params, structured,
};
use zvm_sim::test_kit::texts;

#[tokio::test]
async fn find_guard_list_tags_and_journal_walk_the_rewind_loop_over_stdio() {
    let env = TestEnv::start(21, Setup::File).await;
    let human = Human::unreachable();
    let client = env.stdio(human.clone(), Protocol::Legacy).await;

    let found = call(&client, "zerto_find_protection", json!({"vm": "web-01"})).await;
    assert!(!is_error(&found), "{}", line(&found));
    let p = structured(&found);
    assert_eq!(p["vm"]["name"], "web-01");
    let mut vpgs: Vec<&str> = p["vpgs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["vpg_name"].as_str().unwrap())
        .collect();
    vpgs.sort();
    assert_eq!(vpgs, ["web-archive", "web-dr", "web-local"]);
    assert!(line(&found).contains("zerto_guard_before_mutate"));
    assert_eq!(found.content.len(), 2, "a line, then the JSON as text");

    // A progress token asks for progress notifications while the Zerto tasks run.
    let mut request = params(
        "zerto_guard_before_mutate",
        json!({"vm": "web-01", "agent": "claude-code", "action": "upgrade nginx", "change_id": "nginx-1"}),
    );
    let mut meta = RequestMetaObject::new();
    meta.set_progress_token(ProgressToken(NumberOrString::String("guard-1".into())));
    request.meta = Some(meta);
    let guarded = client.call_tool(request).await.unwrap();
    assert!(!is_error(&guarded), "{}", line(&guarded));
    let report = structured(&guarded);
    assert_eq!(report["verdict"], "guarded", "{report}");
    let outcomes: Vec<&str> = texts(&report["vpgs"], "outcome");
    assert_eq!(outcomes, ["tagged", "tagged", "tagged"], "{report}");
    assert!(line(&guarded).starts_with("GUARDED"), "{}", line(&guarded));
    assert!(
        !human.progress.lock().unwrap().is_empty(),
        "progress notifications reached the client"
    );

    let tags = call(
        &client,
        "zerto_list_tags",
        json!({"vm": "web-01", "change_id": "nginx-1"}),
    )
    .await;
    assert!(!is_error(&tags), "{}", line(&tags));
    let listed: Vec<String> = structured(&tags)["vpgs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|v| v["tags"].as_array().unwrap().clone())
        .map(|t| t["tag"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(listed.len(), 3, "{listed:?}");
    assert!(
        listed.iter().all(
            |t| t.starts_with("ai:claude-code | upgrade nginx | vm=web-01 | change=nginx-1 | ")
        ),
        "{listed:?}"
    );
    assert!(line(&tags).contains("3 tagged checkpoint(s) of change nginx-1"));

    let journal = call(&client, "zerto_journal", json!({"vm": "web-01"})).await;
    let records = structured(&journal)["records"].as_array().unwrap().clone();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["verdict"], "guarded");
    assert_eq!(records[0]["change_id"], "nginx-1");
    let journal_file = std::fs::read_to_string(env.journal_path()).unwrap();
    assert!(!journal_file.contains(CLIENT_SECRET));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_vm_with_no_protecting_vpg_is_not_guarded_and_the_answer_is_an_error() {
    let env = TestEnv::start(22, Setup::File).await;
    let client = env.stdio(Human::unreachable(), Protocol::Legacy).await;
    let found = call(&client, "zerto_find_protection", json!({"vm": "sql-01"})).await;
    let sql_local = TestEnv::vpg_id(structured(&found), "sql-local");
    // sql-01's other VPG, sql-init, is Initializing: with sql-local Initializing too, nothing protects.
    env.control
        .post(
            &format!("/_sim/vpgs/{sql_local}/status"),
            json!({"Status": 0, "SubStatus": 1}),
        )
        .await;
    let result = call(
        &client,
        "zerto_guard_before_mutate",
        json!({"vm": "sql-01", "agent": "claude-code", "action": "patch sql", "change_id": "sql-1"}),
    )
    .await;
    assert!(
        is_error(&result),
        "not guarded is an error: {}",
        line(&result)
    );
    assert_eq!(structured(&result)["verdict"], "not_guarded");
    assert!(
        line(&result).contains("Do not make the change"),
        "{}",
        line(&result)
    );
    assert!(env.insert_tasks().await.is_empty(), "nothing was inserted");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_ambiguous_or_unknown_vm_is_a_tool_error_that_names_what_was_found() {
    let env = TestEnv::start(23, Setup::File).await;
    let client = env.stdio(Human::unreachable(), Protocol::Legacy).await;
    let two = call(
        &client,
        "zerto_find_protection",
        json!({"vm": "build-agent"}),
    )
    .await;
    assert!(is_error(&two));
    let report = structured(&two);
    assert_eq!(report["kind"], "refused");
    assert_eq!(
        report["candidates"].as_array().unwrap().len(),
        2,
        "{report}"
    );
    assert!(line(&two).contains("vmIdentifier"), "{}", line(&two));

    let none = call(
        &client,
        "zerto_find_protection",
        json!({"vm": "no-such-vm"}),
    )
    .await;
    assert!(is_error(&none));
    assert!(line(&none).contains("no-such-vm"), "{}", line(&none));

    let unprotected = call(
        &client,
        "zerto_guard_before_mutate",
        json!({"vm": "report-01", "agent": "a", "action": "b", "change_id": "c"}),
    )
    .await;
    assert!(is_error(&unprotected));
    assert!(
        line(&unprotected).contains("no VPG protects it"),
        "{}",
        line(&unprotected)
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn bad_arguments_get_a_clear_error_and_insert_nothing() {
    let env = TestEnv::start(24, Setup::File).await;
    let client = env.stdio(Human::unreachable(), Protocol::Legacy).await;
    let guard = |args| call(&client, "zerto_guard_before_mutate", args);
    let cases = [
        (
            json!({"vm": "web-01", "agent": "a", "action": "b"}),
            "missing field `change_id`",
        ),
        (
            json!({"vm": "web-01", "agent": 7, "action": "b", "change_id": "c"}),
            "invalid type",
        ),
        (
            json!({"vm": "web-01", "agent": "a\nb", "action": "b", "change_id": "c"}),
            "control character",
        ),
        (
            json!({"vm": "web-01", "agent": "a", "action": "b", "change_id": "c|d"}),
            "contains `|`",
        ),
        (
            json!({"vm": "web-01", "agent": "a", "action": "b", "change_id": "x".repeat(41)}),
            "41 characters long",
        ),
        (
            json!({"vm": "web-01", "agent": "a", "action": "x".repeat(5000), "change_id": "c"}),
            "at most 1000",
        ),
        (
            json!({"vm": "web-01", "agent": "a", "action": "b", "change_id": "c", "changeId": "d"}),
            "unknown field `changeId`",
        ),
    ];
    for (args, expected) in cases {
        let result = guard(args.clone()).await;
        assert!(is_error(&result), "{args} is refused");
        assert_eq!(structured(&result)["kind"], "usage", "{args}");
        assert!(
            line(&result).contains(expected),
            "{args}: {} should say {expected}",
            line(&result)
        );
    }
    assert!(
        env.insert_tasks().await.is_empty(),
        "no bad call inserted a checkpoint"
    );
    assert!(
        !env.journal_path().exists(),
        "no bad call wrote to the journal"
    );

    // Only a call the protocol cannot route is a protocol error.
    let unknown = client
        .call_tool(params("zerto_no_such_tool", json!({})))
        .await;
    assert!(unknown.is_err(), "an unknown tool is a protocol error");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn the_environment_alone_configures_one_site() {
    let env = TestEnv::start(25, Setup::Env).await;
    let client = env.stdio(Human::unreachable(), Protocol::Legacy).await;
    let found = call(&client, "zerto_find_protection", json!({"vm": "db-01"})).await;
    assert!(!is_error(&found), "{}", line(&found));
    assert_eq!(structured(&found)["vpgs"][0]["zvm_site"], "default");
    let guarded = call(
        &client,
        "zerto_guard_before_mutate",
        json!({"vm": "db-01", "agent": "claude-code", "action": "vacuum", "change_id": "db-1"}),
    )
    .await;
    assert_eq!(
        structured(&guarded)["verdict"],
        "guarded",
        "{}",
        line(&guarded)
    );
    assert!(
        env.journal_path().exists(),
        "the journal is under XDG_STATE_HOME"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn without_any_site_the_server_starts_its_catalog_and_journal_tools_work_and_zvm_tools_say_what_to_configure()
 {
    let env = TestEnv::start(24, Setup::NoSites).await;
    let client = env.stdio(Human::unreachable(), Protocol::Legacy).await;

    let checked = call(
        &client,
        "zerto_check_tool",
        json!({"server": "claude-code", "tool": "Read"}),
    )
    .await;
    assert!(!is_error(&checked), "{}", line(&checked));
    assert_eq!(structured(&checked)["class"], "read_only");
    let journal = call(&client, "zerto_journal", json!({})).await;
    assert!(!is_error(&journal), "{}", line(&journal));

    let found = call(&client, "zerto_find_protection", json!({"vm": "web-01"})).await;
    assert!(is_error(&found), "{}", line(&found));
    assert_eq!(structured(&found)["kind"], "usage");
    assert!(
        line(&found).contains("ZVM_URL") && line(&found).contains("[sites.<name>]"),
        "{}",
        line(&found)
    );
    let guarded = call(
        &client,
        "zerto_guard_before_mutate",
        json!({"vm": "web-01", "agent": "claude-code", "action": "edit", "change_id": "c1"}),
    )
    .await;
    assert!(is_error(&guarded), "{}", line(&guarded));
    assert!(line(&guarded).contains("ZVM_URL"), "{}", line(&guarded));
}

#[tokio::test]
async fn a_guard_still_running_at_its_deadline_says_plainly_which_tasks_run_and_what_to_do() {
    let env = TestEnv::start(25, Setup::File).await;
    let config = std::fs::read_to_string(env.config_path()).unwrap();
    std::fs::write(
        env.config_path(),
        config.replace("deadline_secs = 30", "deadline_secs = 1"),
    )
    .unwrap();
    env.control.task_duration(30000).await;
    let client = env.stdio(Human::unreachable(), Protocol::Legacy).await;
    let guarded = call(
        &client,
        "zerto_guard_before_mutate",
        json!({"vm": "db-01", "agent": "claude-code", "action": "edit", "change_id": "slow-1"}),
    )
    .await;
    assert!(is_error(&guarded), "{}", line(&guarded));
    let report = structured(&guarded);
    assert_eq!(report["verdict"], "still_running", "{report}");
    let task = report["vpgs"][0]["task_id"].as_str().unwrap();
    let said = line(&guarded);
    for words in [
        task,
        "still running",
        "have not failed",
        "Do not make the change yet",
        "zerto_list_tags",
        "slow-1",
    ] {
        assert!(said.contains(words), "{words:?} in {said}");
    }
}

#[tokio::test]
async fn a_tag_list_missing_a_vpg_it_could_not_read_is_an_error_naming_that_vpg() {
    let env = TestEnv::start(29, Setup::File).await;
    let client = env.stdio(Human::unreachable(), Protocol::Legacy).await;
    let guarded = call(
        &client,
        "zerto_guard_before_mutate",
        json!({"vm": "web-01", "agent": "claude-code", "action": "edit app.conf", "change_id": "half-read"}),
    )
    .await;
    assert!(!is_error(&guarded), "{}", line(&guarded));
    let web_dr = TestEnv::vpg_id(structured(&guarded), "web-dr");
    // From now on the ZVM refuses to list web-dr's checkpoints.
    env.control
        .post(
            "faults",
            json!({"Method": "GET", "Path": format!("/v1/vpgs/{web_dr}/checkpoints"),
               "Action": "Respond", "Status": 403}),
        )
        .await;

    let tags = call(
        &client,
        "zerto_list_tags",
        json!({"vm": "web-01", "change_id": "half-read"}),
    )
    .await;
    // The tag is surely in web-dr (the guard saw it listed), but this listing cannot show it: an
    // agent reading the list as complete would take the tag for missing there.
    assert!(is_error(&tags), "{}", line(&tags));
    assert!(line(&tags).contains("web-dr"), "{}", line(&tags));
    let listing = structured(&tags);
    let dr = listing["vpgs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["vpg_name"] == "web-dr")
        .unwrap();
    assert!(dr["error"].is_string(), "{listing}");
    let listed: usize = listing["vpgs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["tags"].as_array().unwrap().len())
        .sum();
    assert_eq!(
        listed, 2,
        "the VPGs that could be read still list their tags: {listing}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_guard_cancelled_when_the_client_goes_away_is_finished_and_journaled_before_the_server_exits()
 {
    let env = TestEnv::start(30, Setup::File).await;
    // Longer than the 5 s rmcp gives in-flight calls to answer once stdin closes.
    env.control.task_duration(8000).await;
    let mut child = env
        .command(&[])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("rewind-mcp starts");
    let transport = (
        child.stdout.take().expect("stdout"),
        child.stdin.take().expect("stdin"),
    );
    let client = rmcp::ServiceExt::serve(Human::unreachable(), transport)
        .await
        .expect("the MCP session starts");
    let request = rmcp::model::ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(
        params(
            "zerto_guard_before_mutate",
            json!({"vm": "web-01", "agent": "claude-code", "action": "edit app.conf", "change_id": "goes-away"}),
        ),
    ));
    let guard = client
        .send_cancellable_request(request, rmcp::service::PeerRequestOptions::no_options())
        .await
        .expect("the guard is sent");
    env.control.until_an_insert_started().await;
    // The human stops the call (the host sends notifications/cancelled), then the host goes away: the
    // session ends and the server's stdin closes, while the guard's insert still runs at Zerto.
    guard
        .cancel(Some("the human stopped it".into()))
        .await
        .unwrap();
    client.cancel().await.unwrap();
    let status = tokio::time::timeout(std::time::Duration::from_secs(60), child.wait())
        .await
        .expect("the server exits once the guard is done")
        .unwrap();
    assert!(status.success(), "{status}");
    let record = env.journal_record("goes-away");
    assert_eq!(record["verdict"], "guarded", "{record}");
}

#[tokio::test]
async fn on_sigterm_a_guard_still_running_is_finished_and_journaled_before_the_server_leaves() {
    let env = TestEnv::start(31, Setup::File).await;
    env.control.task_duration(3000).await;
    let mut child = env
        .command(&[])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("rewind-mcp starts");
    let transport = (
        child.stdout.take().expect("stdout"),
        child.stdin.take().expect("stdin"),
    );
    let client = rmcp::ServiceExt::serve(Human::unreachable(), transport)
        .await
        .expect("the MCP session starts");
    let peer = client.peer().clone();
    let guard = tokio::spawn(async move {
        peer.call_tool(params(
            "zerto_guard_before_mutate",
            json!({"vm": "web-01", "agent": "claude-code", "action": "edit app.conf", "change_id": "terminated"}),
        ))
        .await
    });
    env.control.until_an_insert_started().await;
    // The host stops the server with SIGTERM while the guard's inserts run at Zerto.
    let pid = child.id().expect("a pid").to_string();
    let sent = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = tokio::time::timeout(std::time::Duration::from_secs(60), child.wait())
        .await
        .expect("the server leaves once the guard is done")
        .unwrap();
    assert_eq!(status.code(), Some(143), "{status}");
    let record = env.journal_record("terminated");
    assert_eq!(record["verdict"], "guarded", "{record}");
    guard.abort();
    drop(client);
}
