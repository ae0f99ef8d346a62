//! `rewind check-tool`, `rewind catalog ...` and `rewind journal`: local files only, in human and
//! `--json` form.

use crate::env::TestEnv;

#[tokio::test]
async fn check_tool_says_read_only_mutating_or_unknown() {
    let env = TestEnv::start(21).await;
    let run = env.rewind(&["check-tool", "claude-code", "Read"]).await;
    run.expect_code(0);
    assert!(
        run.stdout
            .contains("claude-code/Read: read-only (built in)"),
        "{run:#?}"
    );

    env.catalog(&["add-mutating", "ssh", "run", "--vm-arg", "host"])
        .await;
    let (run, json) = env
        .rewind_json(&["check-tool", "ssh", "run", "--vm", "web-01"])
        .await;
    run.expect_code(0);
    assert_eq!(json["command"], "check-tool");
    assert_eq!(json["result"]["class"], "mutating");
    assert_eq!(json["result"]["vm_arg"], "host");
    assert_eq!(json["result"]["vm"], "web-01");

    let run = env
        .rewind(&["check-tool", "vsphere", "power_off", "--vm", "db-01"])
        .await;
    run.expect_code(3);
    assert!(run.stdout.contains("Ask the human:"), "{run:#?}");
    assert!(run.stdout.contains("VM db-01"), "{run:#?}");
    assert!(
        run.one_error_line()
            .contains("vsphere/power_off is not in the tool catalog")
    );
    let (run, json) = env
        .rewind_json(&["check-tool", "vsphere", "power_off"])
        .await;
    run.expect_code(3);
    assert_eq!(json["ok"], false);
    assert_eq!(json["result"]["class"], "unknown");
    assert!(
        json["result"]["question"]
            .as_str()
            .unwrap()
            .contains("power_off")
    );
    assert_eq!(json["error"]["kind"], "refused");
}

#[tokio::test]
async fn catalog_changes_persist_and_list_in_both_forms() {
    let env = TestEnv::start(22).await;
    let (run, json) = env
        .rewind_json(&[
            "catalog",
            "add-mutating",
            "vsphere",
            "run_in_guest",
            "--vm-arg",
            "vm.name",
        ])
        .await;
    run.expect_code(0);
    assert_eq!(json["command"], "catalog add-mutating");
    assert_eq!(json["result"]["now"]["class"], "mutating");
    assert_eq!(
        json["result"]["catalog"].as_str().unwrap(),
        env.catalog_file().to_str().unwrap()
    );
    let run = env
        .rewind(&["catalog", "add-read-only", "vsphere", "*"])
        .await;
    run.expect_code(0);
    assert!(
        run.stdout.contains("vsphere/*: read-only (catalog)"),
        "{run:#?}"
    );
    let (run, json) = env
        .rewind_json(&["catalog", "add-read-only", "vsphere", "list_vms"])
        .await;
    run.expect_code(0);
    assert_eq!(json["command"], "catalog add-read-only");
    assert_eq!(json["result"]["now"]["class"], "read_only");
    assert_eq!(json["result"]["now"]["source"], "catalog");
    assert!(env.catalog_file().exists());

    let run = env.rewind(&["catalog", "list"]).await;
    run.expect_code(0);
    let mutating = run
        .stdout
        .lines()
        .find(|l| l.starts_with("mutating"))
        .expect("a mutating row");
    assert!(
        mutating.contains("vsphere")
            && mutating.contains("run_in_guest")
            && mutating.contains("vm.name"),
        "{mutating}"
    );
    assert!(run.stdout.contains("built in"), "{run:#?}");

    let (run, json) = env.rewind_json(&["catalog", "list"]).await;
    run.expect_code(0);
    assert_eq!(json["result"]["mutating"][0]["tool"], "run_in_guest");
    assert!(
        json["result"]["read_only"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["server"] == "vsphere" && e["tool"] == "*" && e["builtin"] == false)
    );

    let (run, json) = env
        .rewind_json(&["catalog", "remove", "vsphere", "run_in_guest"])
        .await;
    run.expect_code(0);
    assert_eq!(json["result"]["removed"], true);
    // `vsphere/*` is read-only, so the removed tool falls back to it.
    assert_eq!(json["result"]["now"]["class"], "read_only");
    let run = env
        .rewind(&["catalog", "remove", "nobody", "nothing"])
        .await;
    run.expect_code(0);
    assert!(run.stdout.contains("had no entry"), "{run:#?}");
}

#[tokio::test]
async fn check_tool_refuses_an_empty_or_overlong_name_as_bad_usage_instead_of_calling_it_unknown() {
    let env = TestEnv::start(26).await;
    let (run, json) = env.rewind_json(&["check-tool", " ", "Bash"]).await;
    run.expect_code(2);
    assert_eq!(json["error"]["kind"], "usage");
    assert!(
        run.one_error_line().contains("invalid catalog server"),
        "{run:#?}"
    );
    let long = "x".repeat(201);
    let run = env.rewind(&["check-tool", "ssh", &long]).await;
    run.expect_code(2);
    assert!(
        run.one_error_line().contains("invalid catalog tool"),
        "{run:#?}"
    );
}

#[tokio::test]
async fn catalog_and_journal_work_with_no_site_configured() {
    let env = TestEnv::start(23).await;
    std::fs::remove_file(env.config_file()).unwrap();
    env.catalog(&["add-read-only", "ssh", "cat"]).await;
    env.rewind(&["check-tool", "ssh", "cat"])
        .await
        .expect_code(0);
    let run = env.rewind(&["journal"]).await;
    run.expect_code(0);
    assert!(run.stdout.contains("no matching record"), "{run:#?}");
    // What needs a ZVM says what to configure.
    let run = env.rewind(&["sites"]).await;
    run.expect_code(2);
    assert!(run.one_error_line().contains("ZVM_URL"), "{run:#?}");
}

#[tokio::test]
async fn a_config_file_without_sites_still_places_the_catalog_and_journal() {
    let env = TestEnv::start(24).await;
    let catalog = env.path("elsewhere/catalog.toml");
    let journal = env.path("elsewhere/journal.jsonl");
    env.write_config_text(&format!(
        "catalog = \"{}\"\njournal = \"{}\"\n",
        catalog.display(),
        journal.display()
    ));
    env.catalog(&["add-mutating", "ssh", "run"]).await;
    assert!(catalog.exists());
    assert!(!env.catalog_file().exists());
    let (run, json) = env.rewind_json(&["journal"]).await;
    run.expect_code(0);
    assert_eq!(json["result"]["path"].as_str(), journal.to_str());
}

#[tokio::test]
async fn journal_reads_back_guards_filtered_by_vm_change_and_last_and_refuses_last_0() {
    let env = TestEnv::start(25).await;
    for (vm, change) in [("web-01", "c1"), ("db-01", "c1"), ("web-01", "c2")] {
        env.guard(vm, "me", change).await;
    }
    let run = env.rewind(&["journal"]).await;
    run.expect_code(0);
    let rows: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.contains(" guard "))
        .collect();
    assert_eq!(rows.len(), 3, "{run:#?}");
    assert!(
        rows[0].contains("web-01") && rows[0].contains("3 tagged"),
        "{rows:?}"
    );
    assert!(run.stdout.contains("3 journal record(s) from "), "{run:#?}");

    let (run, json) = env.rewind_json(&["journal", "--vm", "web-01"]).await;
    run.expect_code(0);
    assert_eq!(json["command"], "journal");
    assert_eq!(json["result"]["records"].as_array().unwrap().len(), 2);
    let (_, json) = env.rewind_json(&["journal", "--change", "c1"]).await;
    assert_eq!(json["result"]["records"].as_array().unwrap().len(), 2);
    let (_, json) = env.rewind_json(&["journal", "--last", "1"]).await;
    let records = json["result"]["records"].as_array().unwrap();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["change_id"], "c2");
    assert_eq!(records[0]["verdict"], "guarded");
    assert_eq!(records[0]["kind"], "guard");
    // --last 0 would print nothing, as an empty journal does: it is a usage error.
    let (run, json) = env.rewind_json(&["journal", "--last", "0"]).await;
    run.expect_code(2);
    let message = json["error"]["message"].as_str().unwrap();
    assert!(message.contains("give 1 or more"), "{message}");
}
