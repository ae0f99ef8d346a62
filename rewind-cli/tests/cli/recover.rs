//! `rewind recover file`: the original bytes come back from the tag while the guest keeps the change;
//! what cannot be recovered is refused with its exit code.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::env::{CLIENT_ID, CLIENT_SECRET, TestEnv};
use zvm_sim::test_kit::texts;

const APP_CONF: &str = "sda1/etc/app/app.conf";

/// `rewind recover file <vm> --change <change> --path <path> --to <to>`.
fn recover_file<'a>(vm: &'a str, change: &'a str, path: &'a str, to: &'a Path) -> Vec<&'a str> {
    let to = to.to_str().expect("a UTF-8 path");
    vec![
        "recover", "file", vm, "--change", change, "--path", path, "--to", to,
    ]
}

/// Guards web-01 for change `c1`, then changes its app.conf; returns the VM id and the original bytes.
async fn guard_then_change(env: &TestEnv) -> (String, Vec<u8>) {
    let vm_id = env.vm_id("web-01").await;
    let original = env.control.file(&vm_id, APP_CONF).await;
    env.guard("web-01", "me", "c1").await;
    env.control
        .put_file(&vm_id, APP_CONF, b"broken = true\n")
        .await;
    (vm_id, original)
}

#[tokio::test]
async fn recover_file_brings_back_the_original_bytes_while_the_guest_keeps_the_change() {
    let env = TestEnv::start(71).await;
    let (vm_id, original) = guard_then_change(&env).await;
    let to = env.path("restored");
    let run = env
        .rewind(&recover_file("web-01", "c1", APP_CONF, &to))
        .await;
    run.expect_code(0);
    assert!(
        run.stdout.starts_with("RECOVERED 1 file(s) of web-01"),
        "{run:#?}"
    );
    assert!(run.stdout.contains("via FLR at site boston"), "{run:#?}");
    assert!(run.stdout.contains("unmounted"), "{run:#?}");
    assert_eq!(std::fs::read(to.join(APP_CONF)).unwrap(), original);
    assert_eq!(env.control.file(&vm_id, APP_CONF).await, b"broken = true\n");

    // Again as JSON, into a fresh folder.
    let to = env.path("restored-json");
    let (run, json) = env
        .rewind_json(&recover_file("web-01", "c1", APP_CONF, &to))
        .await;
    run.expect_code(0);
    assert_eq!(json["command"], "recover file");
    let report = &json["result"];
    assert_eq!(report["change_id"], "c1");
    assert_eq!(report["files"][0]["guest_path"], APP_CONF);
    assert_eq!(report["files"][0]["size"], original.len());
    assert_eq!(report["unmount"]["unmounted"], true);
    assert_eq!(std::fs::read(to.join(APP_CONF)).unwrap(), original);

    let (_, journal) = env.rewind_json(&["journal", "--change", "c1"]).await;
    let kinds: Vec<&str> = texts(&journal["result"]["records"], "kind");
    assert_eq!(kinds, ["guard", "recovery", "recovery"]);
}

#[tokio::test]
async fn an_existing_file_is_replaced_only_when_asked() {
    let env = TestEnv::start(72).await;
    let (_, original) = guard_then_change(&env).await;
    let to = env.path("restored");
    std::fs::create_dir_all(to.join("sda1/etc/app")).unwrap();
    std::fs::write(to.join(APP_CONF), b"mine").unwrap();
    let args = recover_file("web-01", "c1", APP_CONF, &to);
    let run = env.rewind(&args).await;
    run.expect_code(2);
    run.one_error_line();
    assert_eq!(std::fs::read(to.join(APP_CONF)).unwrap(), b"mine");

    let mut again = args.clone();
    again.push("--overwrite");
    let (run, json) = env.rewind_json(&again).await;
    run.expect_code(0);
    assert_eq!(json["result"]["files"][0]["replaced"], true);
    assert_eq!(std::fs::read(to.join(APP_CONF)).unwrap(), original);
}

#[tokio::test]
async fn a_change_without_a_tag_or_a_path_leaving_the_folder_is_refused() {
    let env = TestEnv::start(73).await;
    guard_then_change(&env).await;
    let to = env.path("restored");
    let (run, json) = env
        .rewind_json(&recover_file("web-01", "never-guarded", APP_CONF, &to))
        .await;
    run.expect_code(3);
    assert_eq!(json["error"]["kind"], "refused");
    assert!(run.one_error_line().contains("never-guarded"), "{run:#?}");

    let run = env
        .rewind(&recover_file("web-01", "c1", "sda1/etc/../../../x", &to))
        .await;
    run.expect_code(2);
    run.one_error_line();
    assert!(!env.path("x").exists());
}

#[tokio::test]
async fn a_missing_guest_path_names_what_the_nearest_folder_holds() {
    let env = TestEnv::start(74).await;
    guard_then_change(&env).await;
    let to = env.path("restored");
    let run = env
        .rewind(&recover_file("web-01", "c1", "sda1/etc/app/nope.conf", &to))
        .await;
    run.expect_code(2);
    let line = run.one_error_line();
    assert!(
        line.contains("nope.conf") && line.contains("app.conf"),
        "{line}"
    );
}

#[tokio::test]
async fn a_failover_test_starts_and_stops_with_its_result_recorded() {
    let env = TestEnv::start(75).await;
    env.guard("web-01", "me", "c1").await;
    let run = env
        .rewind(&["recover", "test", "web-01", "--change", "c1", "start"])
        .await;
    run.expect_code(0);
    assert!(
        run.stdout
            .starts_with("COMPLETED: failover test start of web-01"),
        "{run:#?}"
    );

    let (run, json) = env
        .rewind_json(&[
            "recover",
            "test",
            "web-01",
            "--change",
            "c1",
            "stop",
            "--failed",
            "--summary",
            "app did not start",
        ])
        .await;
    run.expect_code(0);
    assert_eq!(json["command"], "recover test");
    let report = &json["result"];
    assert_eq!(report["operation"], "failover_test_stop");
    assert_eq!(report["success"], false);
    assert_eq!(report["summary"], "app did not start");
    assert_eq!(report["verdict"], "completed");
    assert_eq!(report["task"]["state"]["code"], 6);

    // Nothing runs any more: a second stop is refused.
    let run = env
        .rewind(&[
            "recover", "test", "web-01", "--change", "c1", "stop", "--passed",
        ])
        .await;
    run.expect_code(3);
    assert!(run.one_error_line().contains("nothing to stop"), "{run:#?}");
    // The result of a stop must be given.
    env.rewind(&["recover", "test", "web-01", "--change", "c1", "stop"])
        .await
        .expect_code(2);

    let run = env
        .rewind(&["recover", "clone", "web-01", "--change", "c1", "start"])
        .await;
    run.expect_code(0);
    assert!(
        run.stdout.starts_with("COMPLETED: clone start of web-01"),
        "{run:#?}"
    );
}

#[tokio::test]
async fn a_running_clone_is_aborted_and_its_start_ends_with_the_task_code() {
    let env = TestEnv::start(76).await;
    env.guard("web-01", "me", "c1").await;
    // A clone that runs long enough to be aborted; the abort itself runs short.
    env.control.task_duration(20000).await;
    let start = env
        .command(&[
            "--json", "recover", "clone", "web-01", "--change", "c1", "start",
        ])
        .spawn()
        .unwrap();
    let started = |t: &Value| t["Type"] == "Clone" && t["State"] == 1;
    env.control
        .wait_for_task("the clone's start", Duration::from_secs(20), started)
        .await;
    env.control.task_duration(50).await;
    let (run, json) = env
        .rewind_json(&["recover", "clone", "web-01", "--change", "c1", "abort"])
        .await;
    run.expect_code(0);
    assert_eq!(json["result"]["operation"], "clone_abort");
    assert_eq!(json["result"]["verdict"], "completed");

    let out = start.wait_with_output().await.unwrap();
    assert_eq!(out.status.code(), Some(4), "{out:?}");
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["error"]["kind"], "task_failed");
}

#[tokio::test]
async fn a_recovery_site_not_configured_is_one_error_line_then_the_table_to_add() {
    let env = TestEnv::start(77).await;
    env.write_config_text(&format!(
        "[sites.boston]\nurl = \"{}\"\nclient_id = \"{CLIENT_ID}\"\nclient_secret = \"{CLIENT_SECRET}\"\n",
        env.sim.local().url
    ));
    env.guard("db-01", "me", "c1").await;
    let to = env.path("restored");
    let args = recover_file("db-01", "c1", "sda1/etc/app/app.conf", &to);
    let run = env.rewind(&args).await;
    run.expect_code(3);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert!(
        lines[0].starts_with("rewind: FLR of VM db-01") && lines[0].contains("[sites.denver]"),
        "{run:#?}"
    );
    assert_eq!(lines[1], "  [sites.denver]", "{run:#?}");
    assert!(
        lines[2..].iter().all(|l| l.starts_with("  ")) && run.stderr.contains("client_secret"),
        "{run:#?}"
    );

    let mut json_args = vec!["--json"];
    json_args.extend_from_slice(&args);
    let run = env.rewind(&json_args).await;
    run.expect_code(3);
    run.one_error_line();
    let json = run.json();
    assert_eq!(json["error"]["kind"], "refused");
    let hint = json["error"]["hint"].as_str().unwrap();
    assert!(hint.starts_with("[sites.denver]\n"), "{hint}");
    assert!(!json["error"]["message"].as_str().unwrap().contains('\n'));
}

#[tokio::test]
async fn a_recovery_journals_its_agent_from_rewind_agent_beside_the_person_at_this_machine() {
    let env = TestEnv::start(39).await;
    guard_then_change(&env).await;
    let to = env.dir.path().join("back");
    let to = to.to_str().unwrap();
    let mut recover = env.command(&[
        "recover",
        "file",
        "web-01",
        "--change",
        "c1",
        "--path",
        "sda1/etc/hostname",
        "--to",
        to,
    ]);
    let out = recover
        .env("REWIND_AGENT", "fixer-bot")
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let journal = env.rewind(&["--json", "journal", "--change", "c1"]).await;
    let json = journal.json();
    let records = json["result"]["records"].as_array().unwrap();
    let recovery = records.iter().find(|r| r["kind"] == "recovery").unwrap();
    assert_eq!(recovery["agent"], "fixer-bot", "{recovery}");
    assert!(
        recovery["person"]["subject"]
            .as_str()
            .is_some_and(|s| s.starts_with("local:")),
        "{recovery}"
    );
}

#[tokio::test]
async fn a_clone_from_the_vpg_named_says_which_vm_it_made_and_an_unknown_vpg_is_refused() {
    let env = TestEnv::start(40).await;
    env.guard("web-01", "me", "c1").await;
    let (run, json) = env
        .rewind_json(&[
            "recover", "clone", "web-01", "--change", "c1", "--vpg", "web-dr", "start",
        ])
        .await;
    run.expect_code(0);
    let result = &json["result"];
    assert_eq!(result["from"]["vpg_name"], "web-dr", "{json:#}");
    assert_eq!(result["clone_vm"]["name"], "web-01-clone", "{json:#}");
    assert_eq!(result["clone_vm"]["site"], "Denver", "{json:#}");
    assert!(result["clone_vm"]["vm_id"].is_string(), "{json:#}");

    let refused = env
        .rewind(&[
            "recover",
            "test",
            "web-01",
            "--change",
            "c1",
            "--vpg",
            "no-such-vpg",
            "start",
        ])
        .await;
    refused.expect_code(2);
    let said = refused.one_error_line();
    assert!(said.contains("web-archive, web-dr, web-local"), "{said}");
}
