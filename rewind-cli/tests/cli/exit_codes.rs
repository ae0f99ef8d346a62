//! Every exit code, each from a real cause, with one clear line on stderr and the same error in the
//! `--json` document.

use std::time::Duration;

use serde_json::json;

use crate::env::{CLIENT_ID, TestEnv, guard_args};

#[tokio::test]
async fn an_ambiguous_vm_is_refused_with_every_candidate() {
    let env = TestEnv::start(31).await;
    let run = env.rewind(&["find", "build-agent"]).await;
    run.expect_code(3);
    assert!(run.stdout.is_empty(), "{run:#?}");
    let line = run.one_error_line();
    assert!(
        line.contains("matches 2 VMs") && line.contains("ci-boston") && line.contains("ci-denver"),
        "{line}"
    );

    let (run, json) = env
        .rewind_json(&guard_args("build-agent", "a", "b", "c"))
        .await;
    run.expect_code(3);
    assert_eq!(json["command"], "guard");
    assert_eq!(json["ok"], false);
    assert_eq!(json["exit_code"], 3);
    assert_eq!(json["error"]["kind"], "refused");
    assert_eq!(json["error"]["candidates"].as_array().unwrap().len(), 2);
    assert!(json.get("result").is_none());
    assert!(
        !env.journal_file().exists(),
        "nothing was done, nothing journaled"
    );
}

#[tokio::test]
async fn a_vm_protected_by_nothing_or_not_found_is_refused() {
    let env = TestEnv::start(32).await;
    let run = env.rewind(&["find", "report-01"]).await;
    run.expect_code(3);
    assert!(run.one_error_line().contains("no VPG protects it"));
    let (run, json) = env.rewind_json(&["tags", "no-such-vm"]).await;
    run.expect_code(3);
    assert!(
        json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no-such-vm")
    );
}

#[tokio::test]
async fn a_guard_with_no_protecting_vpg_is_refused_and_still_printed() {
    let env = TestEnv::start(33).await;
    let web_dr = env.control.vpg_id("web-dr").await;
    env.control
        .post(
            &format!("vpgs/{web_dr}/status"),
            json!({"Status": 0, "SubStatus": 1}),
        )
        .await;
    let run = env.rewind(&guard_args("db-01", "a", "b", "c")).await;
    run.expect_code(3);
    assert!(run.stdout.starts_with("NOT GUARDED: db-01"), "{run:#?}");
    assert!(run.stdout.contains("skipped"), "{run:#?}");
    assert!(
        run.one_error_line()
            .contains("none of its VPGs is protecting")
    );
}

#[tokio::test]
async fn a_failed_insert_task_exits_with_the_task_failed_code() {
    let env = TestEnv::start(34).await;
    let web_dr = env.control.vpg_id("web-dr").await;
    // Long enough inserts that the resync below lands while the insert runs: a resync wipes the
    // journal the insert was writing to, so its task ends Failed.
    env.control.task_duration(3000).await;
    let guard = env
        .command(&[
            "--json", "guard", "db-01", "--agent", "a", "--action", "b", "--change", "c",
        ])
        .spawn()
        .unwrap();
    let running = |t: &serde_json::Value| {
        t["VpgIdentifier"].as_str() == Some(web_dr.as_str()) && t["State"] == 1
    };
    env.control
        .wait_for_task("web-dr's insert", Duration::from_secs(20), running)
        .await;
    env.control
        .post(&format!("vpgs/{web_dr}/resync"), json!({"Seconds": 1}))
        .await;
    let out = guard.wait_with_output().await.unwrap();
    assert_eq!(out.status.code(), Some(4), "{out:?}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["ok"], false);
    assert_eq!(json["result"]["verdict"], "not_guarded");
    assert_eq!(json["result"]["vpgs"][0]["outcome"], "failed");
    assert_eq!(json["error"]["kind"], "task_failed");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("ended Failed"), "{stderr}");
}

#[tokio::test]
async fn an_insert_the_zvm_refuses_exits_with_the_refused_code_not_the_connection_code() {
    let env = TestEnv::start(33).await;
    env.control.post("faults",
        json!({"Method": "POST", "Path": "/v1/vpgs/*/checkpoints", "Action": "Respond", "Status": 403}),
    )
    .await;
    let (run, json) = env.rewind_json(&guard_args("db-01", "a", "b", "c")).await;
    run.expect_code(3);
    assert_eq!(json["result"]["verdict"], "not_guarded");
    assert_eq!(json["result"]["vpgs"][0]["outcome"], "error");
    assert_eq!(json["result"]["vpgs"][0]["kind"], "refused");
    assert_eq!(json["error"]["kind"], "refused");
    assert!(run.one_error_line().contains("403"), "{run:#?}");
}

#[tokio::test]
async fn a_guard_still_running_at_its_deadline_exits_with_its_own_code_not_the_task_failed_one() {
    let env = TestEnv::start(35).await;
    env.write_config("[guard]\ndeadline_secs = 1\n");
    env.control.task_duration(30000).await;
    let (run, json) = env.rewind_json(&guard_args("db-01", "a", "b", "c")).await;
    run.expect_code(6);
    assert_eq!(json["result"]["verdict"], "still_running");
    assert_eq!(json["error"]["kind"], "still_running");
    let task = json["result"]["vpgs"][0]["task_id"].as_str().unwrap();
    let line = run.one_error_line();
    assert!(
        line.contains(task) && line.contains("have not failed"),
        "{run:#?}"
    );
}

#[tokio::test]
async fn an_unreachable_zvm_exits_with_the_connection_code() {
    let env = TestEnv::start(36).await;
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    env.write_config(&format!(
        "[sites.gone]\nurl = \"http://127.0.0.1:{port}\"\nclient_id = \"{CLIENT_ID}\"\nclient_secret = \"x\"\n\n[http]\nread_retry_secs = 0.3\nconnect_timeout_secs = 1\n"
    ));
    let run = env.rewind(&["find", "web-01"]).await;
    run.expect_code(5);
    assert!(run.one_error_line().contains("gone"), "{run:#?}");

    let (run, json) = env.rewind_json(&["sites"]).await;
    run.expect_code(5);
    let sites = json["result"].as_array().unwrap();
    assert_eq!(sites.len(), 3, "every site is still listed");
    assert!(
        sites
            .iter()
            .any(|s| s["name"] == "gone" && s["reachable"] == false && s["error"].is_string())
    );
    assert_eq!(json["error"]["kind"], "connection");
}

#[tokio::test]
async fn a_wrong_secret_exits_with_the_connection_code_and_never_shows_the_secret() {
    let env = TestEnv::start(37).await;
    env.write_config_text(&format!(
        "[sites.boston]\nurl = \"{}\"\nclient_id = \"{CLIENT_ID}\"\nclient_secret = \"hunter2-wrong\"\n",
        env.sim.local().url
    ));
    let (run, json) = env.rewind_json(&["find", "web-01"]).await;
    run.expect_code(5);
    assert!(
        run.one_error_line().contains("did not authenticate"),
        "{run:#?}"
    );
    assert_eq!(json["error"]["kind"], "connection");
    assert!(!run.stdout.contains("hunter2") && !run.stderr.contains("hunter2"));
}

#[tokio::test]
async fn bad_usage_exits_2_from_clap_and_from_the_configuration() {
    let env = TestEnv::start(38).await;
    let run = env.rewind(&["guard", "web-01"]).await;
    run.expect_code(2);
    assert!(run.stderr.contains("--action"), "{run:#?}");

    std::fs::remove_file(env.config_file()).unwrap();
    let (run, json) = env.rewind_json(&["find", "web-01"]).await;
    run.expect_code(2);
    assert_eq!(json["error"]["kind"], "usage");
    assert!(run.one_error_line().contains("ZVM_URL"), "{run:#?}");

    env.write_config_text(
        "[sites.boston]\nurl = \"ftp://x\"\nclient_id = \"a\"\nclient_secret = \"b\"\n",
    );
    let run = env.rewind(&["sites"]).await;
    run.expect_code(2);
    assert!(run.one_error_line().contains("boston"), "{run:#?}");

    env.write_config("");
    let run = env.rewind(&guard_args("web-01", "a|b", "x", "c")).await;
    run.expect_code(2);
    assert!(run.one_error_line().contains("agent"), "{run:#?}");
}

#[tokio::test]
async fn with_json_a_command_line_clap_refuses_is_still_one_json_document() {
    let env = TestEnv::start(40).await;
    let (run, json) = env.rewind_json(&["guard", "web-01"]).await;
    run.expect_code(2);
    assert_eq!(json["command"], "guard", "{json}");
    assert_eq!(json["ok"], false);
    assert_eq!(json["exit_code"], 2);
    assert_eq!(json["error"]["kind"], "usage");
    let message = json["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("--agent") && message.contains("rewind guard --help"),
        "{message}"
    );
    assert_eq!(run.one_error_line(), format!("rewind: {message}"));

    let (run, json) = env
        .rewind_json(&["recover", "test", "web-01", "--change", "c", "stop"])
        .await;
    run.expect_code(2);
    assert_eq!(json["command"], "recover test", "{json}");
    let message = json["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("--passed") && message.contains("--failed"),
        "both outcomes are named: {message}"
    );

    // A value's own refusal has no usage block: the line still ends with the command's help, once.
    let (run, json) = env.rewind_json(&["journal", "--last", "x"]).await;
    run.expect_code(2);
    let message = json["error"]["message"].as_str().unwrap();
    assert!(!message.contains("For more information"), "{message}");
    assert!(
        message.ends_with("`rewind journal --help` lists what it takes"),
        "{message}"
    );

    // Help is not a refusal: it stays text, with code 0.
    let run = env.rewind(&["--json", "--help"]).await;
    run.expect_code(0);
    assert!(run.stdout.contains("Exit codes:"), "{run:#?}");
}

#[tokio::test]
async fn an_unreadable_journal_exits_with_the_internal_code() {
    let env = TestEnv::start(39).await;
    std::fs::create_dir_all(env.journal_file()).unwrap();
    let (run, json) = env.rewind_json(&["journal"]).await;
    run.expect_code(1);
    assert_eq!(json["error"]["kind"], "internal");
    assert!(run.one_error_line().contains("journal"), "{run:#?}");
}
