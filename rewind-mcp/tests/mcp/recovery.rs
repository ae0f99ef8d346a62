use serde_json::json;

use crate::helper::{
    Human, Protocol, Setup, TestEnv, call, expect_error_saying, expect_guarded, expect_ok, guard,
    is_error, line, recover_file, structured,
};
use zvm_sim::test_kit::texts;

pub(crate) const APP_CONF: &str = "sda1/etc/app/app.conf";

#[tokio::test]
async fn a_file_changed_after_a_guard_is_recovered_from_its_tag() {
    let (env, client) = TestEnv::with_client(51, Setup::File).await;
    let found = call(&client, "zerto_find_protection", json!({"vm": "web-01"})).await;
    let vm_id = structured(&found)["vm"]["id"].as_str().unwrap().to_string();
    let original = env.control.file(&vm_id, APP_CONF).await;

    expect_guarded(&guard(&client, "web-01", "edit app.conf", "conf-1").await);
    let changed = b"broken = true\n".to_vec();
    env.control.put_file(&vm_id, APP_CONF, &changed).await;

    let destination = env.dir.path().join("recovered");
    let recovered = recover_file(&client, "web-01", "conf-1", APP_CONF, &destination).await;
    expect_ok(&recovered);
    let report = structured(&recovered);
    assert_eq!(report["files"].as_array().unwrap().len(), 1, "{report}");
    assert_eq!(report["unmount"]["unmounted"], true, "{report}");
    let back = std::fs::read(destination.join(APP_CONF)).unwrap();
    assert_eq!(back, original, "the file is back as it was at the tag");
    assert_ne!(back, changed);
    assert!(
        line(&recovered).starts_with("RECOVERED 1 file(s)"),
        "{}",
        line(&recovered)
    );

    // A second recovery into the same folder replaces nothing.
    let again = recover_file(&client, "web-01", "conf-1", APP_CONF, &destination).await;
    assert!(
        is_error(&again),
        "an existing file is never replaced: {}",
        line(&again)
    );
    assert_eq!(std::fs::read(destination.join(APP_CONF)).unwrap(), original);

    let journal = call(&client, "zerto_journal", json!({"change_id": "conf-1"})).await;
    let kinds: Vec<&str> = texts(&structured(&journal)["records"], "kind");
    assert_eq!(kinds.first(), Some(&"guard"), "{kinds:?}");
    assert!(kinds.contains(&"recovery"), "{kinds:?}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn recovery_arguments_are_checked_before_anything_is_sent() {
    let (env, client) = TestEnv::with_client(52, Setup::File).await;
    let relative =
        json!({"vm": "web-01", "change_id": "c", "paths": [APP_CONF], "destination": "recovered"});
    let cases = [
        ("zerto_recover_file", relative, "not an absolute path"),
        (
            "zerto_failover_test",
            json!({"vm": "web-01", "change_id": "c", "action": "stop"}),
            "success was not given",
        ),
        (
            "zerto_clone",
            json!({"vm": "web-01", "change_id": "c", "action": "failover"}),
            "unknown variant `failover`",
        ),
        (
            "zerto_failover_test",
            json!({"vm": "web-01", "change_id": "never-guarded", "action": "start"}),
            "never-guarded",
        ),
    ];
    for (tool, args, words) in cases {
        expect_error_saying(&call(&client, tool, args).await, words);
    }
    let tasks = env.control.get("tasks").await;
    assert!(
        tasks.as_array().unwrap().is_empty(),
        "no Zerto task was started: {tasks}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_failover_test_and_a_clone_run_from_the_tag_and_are_journaled() {
    let (_env, client) = TestEnv::with_client(53, Setup::File).await;
    expect_guarded(&guard(&client, "db-01", "migrate schema", "db-2").await);

    let start = json!({"vm": "db-01", "change_id": "db-2", "action": "start"});
    let started = call(&client, "zerto_failover_test", start).await;
    expect_ok(&started);
    assert_eq!(structured(&started)["operation"], "failover_test_start");
    assert_eq!(structured(&started)["verdict"], "completed");
    let stop = json!({"vm": "db-01", "change_id": "db-2", "action": "stop", "success": true,
                      "summary": "schema looked right"});
    let stopped = call(&client, "zerto_failover_test", stop).await;
    expect_ok(&stopped);
    assert_eq!(structured(&stopped)["operation"], "failover_test_stop");

    let clone = json!({"vm": "db-01", "change_id": "db-2", "action": "start"});
    let cloned = call(&client, "zerto_clone", clone).await;
    expect_ok(&cloned);
    assert_eq!(structured(&cloned)["operation"], "clone_start");

    let journal = call(&client, "zerto_journal", json!({"vm": "db-01"})).await;
    let records = structured(&journal)["records"].as_array().unwrap().len();
    assert_eq!(records, 4, "a guard and three recoveries");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_failover_test_still_running_when_waiting_stops_is_an_error_that_names_its_task() {
    let (env, client) = TestEnv::with_client(57, Setup::File).await;
    expect_ok(&guard(&client, "db-01", "migrate schema", "db-3").await);
    client.cancel().await.unwrap();

    // A server that waits a second for a task, and a ZVM whose tasks take thirty.
    env.edit_config(
        "deadline_secs = 30\n",
        "deadline_secs = 1\n\n[recover]\nwait_floor_secs = 1\n",
    );
    env.control.task_duration(30000).await;
    let client = env.stdio(Human::unreachable(), Protocol::Legacy).await;
    let start = json!({"vm": "db-01", "change_id": "db-3", "action": "start"});
    let started = call(&client, "zerto_failover_test", start).await;
    assert!(is_error(&started), "{}", line(&started));
    let report = structured(&started);
    assert_eq!(report["verdict"], "still_running", "{report}");
    let task = report["task"]["task_id"].as_str().unwrap();
    let said = line(&started);
    for words in [task, "has not failed", "do not start it again"] {
        assert!(said.contains(words), "{words:?} in {said}");
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_recovery_site_not_configured_is_a_one_line_error_with_the_table_to_add_as_a_hint() {
    // Only Boston is configured: db-01's only VPG recovers to Denver.
    let (env, client) = TestEnv::with_client(55, Setup::Env).await;
    expect_ok(&guard(&client, "db-01", "edit", "c1").await);
    let destination = env.dir.path().join("recovered");
    let refused = recover_file(&client, "db-01", "c1", APP_CONF, &destination).await;
    assert!(is_error(&refused), "{}", line(&refused));
    assert!(!line(&refused).contains('\n'), "{}", line(&refused));
    let report = structured(&refused);
    assert_eq!(report["kind"], "refused");
    let hint = report["hint"].as_str().expect("a hint");
    assert!(hint.starts_with("[sites.denver]\n"), "{hint}");
    let shown = refused.content[1]
        .as_text()
        .expect("the hint as text")
        .text
        .clone();
    assert!(shown.contains("[sites.denver]\n"), "{shown}");
    assert!(!destination.exists());
}
