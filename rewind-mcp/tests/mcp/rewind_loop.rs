use rmcp::model::{NumberOrString, ProgressToken, RequestMetaObject};
use serde_json::json;

use crate::helper::{
    CLIENT_SECRET, Human, Protocol, Setup, TestEnv, call, expect_error_saying, expect_guarded,
    expect_ok, guard, guard_in_background, is_error, leaves, line, list_tags, params, structured,
    terminate,
};
use zvm_sim::test_kit::texts;

#[tokio::test]
async fn find_guard_list_tags_and_journal_walk_the_rewind_loop_over_stdio() {
    let env = TestEnv::start(21, Setup::File).await;
    let human = Human::unreachable();
    let client = env.stdio(human.clone(), Protocol::Legacy).await;

    let found = call(&client, "zerto_find_protection", json!({"vm": "web-01"})).await;
    expect_ok(&found);
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
    expect_ok(&guarded);
    let report = structured(&guarded);
    assert_eq!(report["verdict"], "guarded", "{report}");
    let outcomes: Vec<&str> = texts(&report["vpgs"], "outcome");
    assert_eq!(outcomes, ["tagged", "tagged", "tagged"], "{report}");
    assert!(line(&guarded).starts_with("GUARDED"), "{}", line(&guarded));
    assert!(
        !human.progress.lock().unwrap().is_empty(),
        "progress notifications reached the client"
    );

    let tags = list_tags(&client, "web-01", "nginx-1").await;
    expect_ok(&tags);
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
    let (env, client) = TestEnv::with_client(22, Setup::File).await;
    let found = call(&client, "zerto_find_protection", json!({"vm": "sql-01"})).await;
    let sql_local = TestEnv::vpg_id(structured(&found), "sql-local");
    // sql-01's other VPG, sql-init, is Initializing: with sql-local Initializing too, nothing protects.
    env.control
        .post(
            &format!("/_sim/vpgs/{sql_local}/status"),
            json!({"Status": 0, "SubStatus": 1}),
        )
        .await;
    let result = guard(&client, "sql-01", "patch sql", "sql-1").await;
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
    let (_env, client) = TestEnv::with_client(23, Setup::File).await;
    let find = |vm: &str| call(&client, "zerto_find_protection", json!({ "vm": vm }));
    let two = find("build-agent").await;
    assert!(is_error(&two));
    let report = structured(&two);
    assert_eq!(report["kind"], "refused");
    assert_eq!(
        report["candidates"].as_array().unwrap().len(),
        2,
        "{report}"
    );
    assert!(line(&two).contains("vmIdentifier"), "{}", line(&two));

    expect_error_saying(&find("no-such-vm").await, "no-such-vm");

    let unprotected = call(
        &client,
        "zerto_guard_before_mutate",
        json!({"vm": "report-01", "agent": "a", "action": "b", "change_id": "c"}),
    )
    .await;
    expect_error_saying(&unprotected, "no VPG protects it");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn bad_arguments_get_a_clear_error_and_insert_nothing() {
    let (env, client) = TestEnv::with_client(24, Setup::File).await;
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
    let (env, client) = TestEnv::with_client(25, Setup::Env).await;
    let found = call(&client, "zerto_find_protection", json!({"vm": "db-01"})).await;
    expect_ok(&found);
    assert_eq!(structured(&found)["vpgs"][0]["zvm_site"], "default");
    expect_guarded(&guard(&client, "db-01", "vacuum", "db-1").await);
    assert!(
        env.journal_path().exists(),
        "the journal is under XDG_STATE_HOME"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn without_any_site_the_server_starts_its_catalog_and_journal_tools_work_and_zvm_tools_say_what_to_configure()
 {
    let (_env, client) = TestEnv::with_client(24, Setup::NoSites).await;

    let read = json!({"server": "claude-code", "tool": "Read"});
    let checked = call(&client, "zerto_check_tool", read).await;
    expect_ok(&checked);
    assert_eq!(structured(&checked)["class"], "read_only");
    expect_ok(&call(&client, "zerto_journal", json!({})).await);

    let found = call(&client, "zerto_find_protection", json!({"vm": "web-01"})).await;
    assert!(is_error(&found), "{}", line(&found));
    assert_eq!(structured(&found)["kind"], "usage");
    assert!(
        line(&found).contains("ZVM_URL") && line(&found).contains("[sites.<name>]"),
        "{}",
        line(&found)
    );
    expect_error_saying(&guard(&client, "web-01", "edit", "c1").await, "ZVM_URL");
}

#[tokio::test]
async fn a_guard_still_running_at_its_deadline_says_plainly_which_tasks_run_and_what_to_do() {
    let env = TestEnv::start(25, Setup::File).await;
    env.edit_config("deadline_secs = 30", "deadline_secs = 1");
    env.control.task_duration(30000).await;
    let client = env.stdio(Human::unreachable(), Protocol::Legacy).await;
    let guarded = guard(&client, "db-01", "edit", "slow-1").await;
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
    let (env, client) = TestEnv::with_client(29, Setup::File).await;
    let guarded = guard(&client, "web-01", "edit app.conf", "half-read").await;
    expect_ok(&guarded);
    let web_dr = TestEnv::vpg_id(structured(&guarded), "web-dr");
    // From now on the ZVM refuses to list web-dr's checkpoints.
    env.control
        .post(
            "faults",
            json!({"Method": "GET", "Path": format!("/v1/vpgs/{web_dr}/checkpoints"),
               "Action": "Respond", "Status": 403}),
        )
        .await;

    let tags = list_tags(&client, "web-01", "half-read").await;
    // The tag is surely in web-dr (the guard saw it listed), but this listing cannot show it: an
    // agent reading the list as complete would take the tag for missing there.
    expect_error_saying(&tags, "web-dr");
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
        .filter(|v| v["error"].is_null())
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
    let (mut child, client) = env.stdio_child().await;
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
    let status = leaves(&mut child).await;
    assert!(status.success(), "{status}");
    let record = env.journal_record("goes-away");
    assert_eq!(record["verdict"], "guarded", "{record}");
}

#[tokio::test]
async fn on_sigterm_a_guard_still_running_is_finished_and_journaled_before_the_server_leaves() {
    let env = TestEnv::start(31, Setup::File).await;
    env.control.task_duration(3000).await;
    let (mut child, client) = env.stdio_child().await;
    let guard = guard_in_background(&client, "terminated");
    env.control.until_an_insert_started().await;
    // The host stops the server with SIGTERM while the guard's inserts run at Zerto.
    let status = terminate(&mut child).await;
    assert_eq!(status.code(), Some(143), "{status}");
    let record = env.journal_record("terminated");
    assert_eq!(record["verdict"], "guarded", "{record}");
    guard.abort();
    drop(client);
}

#[tokio::test]
async fn with_a_site_down_the_agent_is_told_the_way_on_and_sites_takes_it() {
    let env = TestEnv::start(38, Setup::File).await;
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://127.0.0.1:{}", free.local_addr().unwrap().port());
    drop(free);
    env.edit_config(&env.sim.peer().url, &dead);
    let client = env.stdio(Human::unreachable(), Protocol::Legacy).await;
    let refused = guard(&client, "web-01", "edit app.conf", "down-1").await;
    expect_error_saying(&refused, "--site boston");
    let args = json!({"vm": "web-01", "agent": "claude-code", "action": "edit app.conf",
                      "change_id": "down-1", "sites": ["boston"]});
    let guarded = call(&client, "zerto_guard_before_mutate", args).await;
    expect_guarded(&guarded);
    assert_eq!(structured(&guarded)["sites"], json!(["boston"]));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_vm_whose_only_vpg_is_syncing_is_told_to_guard_again_when_the_sync_is_over() {
    let (env, client) = TestEnv::with_client(39, Setup::File).await;
    env.control.resync("app-tier", 600).await;
    let refused = guard(&client, "app-01", "upgrade", "sync-1").await;
    assert!(is_error(&refused), "{}", line(&refused));
    let next = structured(&refused)["next_step"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        next.contains("app-tier is syncing") && next.contains("When the sync is over"),
        "{next}"
    );
    assert!(!next.contains("cannot rewind"), "{next}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn no_tagged_checkpoint_is_not_answered_with_a_recovery() {
    let (_env, client) = TestEnv::with_client(40, Setup::File).await;
    let listed = list_tags(&client, "web-01", "never-guarded").await;
    expect_ok(&listed);
    let next = structured(&listed)["next_step"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(next.contains("nothing to recover from"), "{next}");
    assert!(!next.contains("zerto_recover_file"), "{next}");
    client.cancel().await.unwrap();
}
