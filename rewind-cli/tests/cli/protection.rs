//! `rewind find`, `guard`, `tags` and `sites`, in human and `--json` form.

use crate::env::{TestEnv, guard_args};

#[tokio::test]
async fn find_shows_web_01_in_three_protecting_vpgs() {
    let env = TestEnv::start(11).await;
    let run = env.rewind(&["find", "web-01"]).await;
    run.expect_code(0);
    assert!(run.stdout.contains("3 VPG(s), 3 protecting"), "{run:#?}");
    for vpg in ["web-local", "web-dr", "web-archive"] {
        assert!(run.stdout.contains(vpg), "{run:#?}");
    }
    assert!(run.stdout.contains("Boston -> Denver"), "{run:#?}");
    assert!(run.stderr.is_empty(), "{run:#?}");

    let (run, json) = env.rewind_json(&["find", "web-01"]).await;
    run.expect_code(0);
    assert_eq!(json["command"], "find");
    assert_eq!(json["ok"], true);
    assert_eq!(json["exit_code"], 0);
    assert_eq!(json["result"]["vm"]["name"], "web-01");
    let vpgs = json["result"]["vpgs"].as_array().unwrap();
    assert_eq!(vpgs.len(), 3);
    assert!(vpgs.iter().all(|v| v["protecting"] == true));
    assert!(json.get("error").is_none());
}

#[tokio::test]
async fn find_names_why_a_vpg_is_not_protecting() {
    let env = TestEnv::start(12).await;
    let run = env.rewind(&["find", "sql-01"]).await;
    run.expect_code(0);
    assert!(run.stdout.contains("2 VPG(s), 1 protecting"), "{run:#?}");
    assert!(
        run.stdout.contains("sql-init: the VPG is Initializing"),
        "{run:#?}"
    );
}

#[tokio::test]
async fn guard_tags_every_protecting_vpg_and_journals_it() {
    let env = TestEnv::start(13).await;
    let run = env
        .rewind(&guard_args(
            "web-01",
            "claude-code",
            "edit app.conf",
            "chg-1",
        ))
        .await;
    run.expect_code(0);
    assert!(run.stdout.starts_with("GUARDED: web-01"), "{run:#?}");
    assert_eq!(run.stdout.matches(" tagged ").count(), 3, "{run:#?}");
    assert!(
        run.stdout
            .contains("tag: ai:claude-code | edit app.conf | vm=web-01 | change=chg-1 |"),
        "{run:#?}"
    );
    // stderr is not a terminal here: no progress line, nothing at all.
    assert!(run.stderr.is_empty(), "{run:#?}");
    // One guard: its intent, one line per insert task, and its verdict, read back as one record.
    let (read, journal) = env.rewind_json(&["journal"]).await;
    read.expect_code(0);
    let records = journal["result"]["records"].as_array().unwrap();
    assert_eq!(records.len(), 1, "{journal}");
    assert_eq!(records[0]["verdict"], "guarded", "{journal}");

    let (run, json) = env
        .rewind_json(&guard_args("sql-01", "claude-code", "vacuum", "chg-2"))
        .await;
    run.expect_code(0);
    assert_eq!(json["command"], "guard");
    let report = &json["result"];
    assert_eq!(report["verdict"], "guarded");
    assert_eq!(report["change_id"], "chg-2");
    let outcomes: Vec<(&str, &str)> = report["vpgs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["vpg_name"].as_str().unwrap(),
                v["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    assert!(outcomes.contains(&("sql-local", "tagged")), "{outcomes:?}");
    assert!(outcomes.contains(&("sql-init", "skipped")), "{outcomes:?}");
}

#[tokio::test]
async fn guard_takes_the_agent_from_rewind_agent() {
    let env = TestEnv::start(14).await;
    let run = env
        .command(&["guard", "db-01", "--action", "x", "--change", "c"])
        .env("REWIND_AGENT", "ci-bot")
        .output()
        .await
        .unwrap();
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert!(String::from_utf8_lossy(&run.stdout).contains("ai:ci-bot | x | vm=db-01"));
}

#[tokio::test]
async fn tags_lists_the_checkpoints_of_a_change_only_when_asked() {
    let env = TestEnv::start(15).await;
    for change in ["chg-a", "chg-b"] {
        env.guard("web-01", "me", change).await;
    }
    let run = env.rewind(&["tags", "web-01"]).await;
    run.expect_code(0);
    assert_eq!(run.stdout.matches("chg-a").count(), 3, "{run:#?}");
    assert_eq!(run.stdout.matches("chg-b").count(), 3, "{run:#?}");

    let (run, json) = env
        .rewind_json(&["tags", "web-01", "--change", "chg-b"])
        .await;
    run.expect_code(0);
    assert_eq!(json["command"], "tags");
    assert_eq!(json["result"]["change_id"], "chg-b");
    let vpgs = json["result"]["vpgs"].as_array().unwrap();
    assert_eq!(vpgs.len(), 3);
    for v in vpgs {
        let tags = v["tags"].as_array().unwrap();
        assert_eq!(tags.len(), 1, "{v}");
        assert_eq!(tags[0]["parts"]["change_id"], "chg-b");
        assert_eq!(tags[0]["parts"]["agent"], "me");
    }
}

#[tokio::test]
async fn tags_missing_a_vpg_it_could_not_read_exits_5_naming_it_and_still_prints_the_rest() {
    let env = TestEnv::start(19).await;
    env.guard("web-01", "me", "half").await;
    let web_dr = env.control.vpg_id("web-dr").await;
    env.control
        .post(
            "faults",
            serde_json::json!({"Method": "GET", "Path": format!("/v1/vpgs/{web_dr}/checkpoints"),
            "Action": "Respond", "Status": 403}),
        )
        .await;
    let (run, json) = env
        .rewind_json(&["tags", "web-01", "--change", "half"])
        .await;
    run.expect_code(5);
    assert_eq!(json["error"]["kind"], "connection", "{json}");
    let message = json["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("incomplete") && message.contains("web-dr"),
        "{message}"
    );
    let vpgs = json["result"]["vpgs"].as_array().unwrap();
    let listed: usize = vpgs
        .iter()
        .filter(|v| v["error"].is_null())
        .map(|v| v["tags"].as_array().unwrap().len())
        .sum();
    assert_eq!(
        listed, 2,
        "the VPGs that were read still list their tags: {json}"
    );
    let unread = vpgs.iter().find(|v| v["vpg_name"] == "web-dr").unwrap();
    assert_eq!(
        unread["tags"][0]["state"], "unknown",
        "the tag the journal holds at the VPG that could not be read is unknown, not absent: {json}"
    );
    assert_eq!(run.stderr.lines().count(), 1, "{run:#?}");
}

#[tokio::test]
async fn sites_shows_each_zvm_reachable_with_its_version_and_local_site() {
    let env = TestEnv::start(16).await;
    let run = env.rewind(&["sites"]).await;
    run.expect_code(0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(lines[0].starts_with("SITE"), "{run:#?}");
    assert!(
        lines[1].starts_with("boston") && lines[1].contains("Boston"),
        "{run:#?}"
    );
    assert!(
        lines[2].starts_with("denver") && lines[2].contains("Denver"),
        "{run:#?}"
    );
    assert!(lines[1].contains(" yes "), "{run:#?}");

    let (run, json) = env.rewind_json(&["sites"]).await;
    run.expect_code(0);
    let sites = json["result"].as_array().unwrap();
    assert_eq!(sites.len(), 2);
    assert_eq!(sites[0]["reachable"], true);
    assert_eq!(sites[0]["site_name"], "Boston");
    assert_eq!(
        sites[1]["site_id"].as_str(),
        Some(env.sim.peer().site_identifier.as_str())
    );
    assert!(sites[0]["version"].is_string());
}

#[tokio::test]
async fn zvm_flag_configures_the_default_site_with_credentials_from_the_environment() {
    let env = TestEnv::start(17).await;
    env.write_config_text("");
    let out = env
        .command(&["--zvm", &env.sim.local().url, "--json", "sites"])
        .env("ZVM_CLIENT_ID", crate::env::CLIENT_ID)
        .env("ZVM_CLIENT_SECRET", crate::env::CLIENT_SECRET)
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let sites = json["result"].as_array().unwrap();
    assert_eq!(sites.len(), 1);
    assert_eq!(sites[0]["name"], "default");
    assert_eq!(sites[0]["site_name"], "Boston");
}

#[tokio::test]
async fn a_first_ctrl_c_lets_the_guard_finish_and_journal() {
    first_signal_lets_the_guard_finish_and_journal("-INT", 18).await;
}

#[tokio::test]
async fn a_first_sigterm_lets_the_guard_finish_and_journal() {
    first_signal_lets_the_guard_finish_and_journal("-TERM", 20).await;
}

/// Sends `signal` (as `kill` takes it) to a guard whose insert runs, and checks that the guard ends
/// guarded and journaled, saying it was interrupted.
async fn first_signal_lets_the_guard_finish_and_journal(signal: &str, seed: u64) {
    let env = TestEnv::start(seed).await;
    env.control.task_duration(1500).await;
    let guard = env
        .command(&guard_args("db-01", "a", "b", "c"))
        .spawn()
        .unwrap();
    let within = std::time::Duration::from_secs(20);
    env.control
        .wait_for_task("an insert's start", within, |t| t["State"] == 1)
        .await;
    self::signal(&guard, signal);
    let out = guard.wait_with_output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        stderr.contains("interrupted: finishing what was started"),
        "{stderr}"
    );
    assert!(stdout.starts_with("GUARDED: db-01"), "{stdout}");
    let journal = std::fs::read_to_string(env.journal_file()).unwrap();
    assert!(journal.contains("\"verdict\":\"guarded\""), "{journal}");
}

/// Sends `signal` (as `kill` takes it) to `child`.
fn signal(child: &tokio::process::Child, signal: &str) {
    let pid = child.id().expect("the child runs").to_string();
    let sent = std::process::Command::new("kill")
        .args([signal, &pid])
        .status()
        .unwrap();
    assert!(sent.success());
}

#[tokio::test]
async fn a_first_ctrl_c_sends_no_insert_the_guard_had_not_sent() {
    let env = TestEnv::start(21).await;
    // Another client's insert into web-dr runs for long: db-01's guard waits for it.
    env.control.task_duration(30_000).await;
    env.control
        .insert_as_another_client("web-dr", "someone-elses-change")
        .await;
    env.control.clear_calls().await;
    let guard = env
        .command(&guard_args("db-01", "a", "b", "waits"))
        .spawn()
        .unwrap();
    // The guard has looked for inserts running at the VPG: it now waits for theirs.
    env.control.until_a_call_to("/v1/tasks").await;
    signal(&guard, "-INT");
    let out = guard.wait_with_output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stderr.contains("sending nothing new"), "{stderr}");
    assert!(stdout.contains("told to stop"), "{stdout}");
    assert_eq!(
        env.control.inserts(None).await.len(),
        1,
        "only theirs: the guard sent none after the Ctrl-C"
    );
}

#[tokio::test]
async fn a_site_without_tls_verification_is_warned_about_once_per_run() {
    let env = TestEnv::start(19).await;
    let insecure = env.sites_toml().replacen(
        "client_secret = \"rewind-secret\"\n",
        "client_secret = \"rewind-secret\"\ninsecure = true\n",
        1,
    );
    env.write_config_text(&insecure);
    let run = env.rewind(&["sites"]).await;
    run.expect_code(0);
    let warnings: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(warnings.len(), 1, "{run:#?}");
    assert!(
        warnings[0].starts_with("rewind: warning: site boston") && warnings[0].contains("OFF"),
        "{run:#?}"
    );
    assert!(run.stdout.contains("(TLS verification OFF)"), "{run:#?}");
    // Logging more shows no second copy from the core.
    let run = env.rewind(&["-vv", "sites"]).await;
    run.expect_code(0);
    let warned = run
        .stderr
        .lines()
        .filter(|l| l.contains("verification is OFF"))
        .count();
    assert_eq!(warned, 1, "{run:#?}");
}

#[tokio::test]
async fn with_denver_down_a_guard_says_the_way_on_and_site_boston_takes_it_which_the_journal_shows()
{
    let env = TestEnv::start(19).await;
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://127.0.0.1:{}", free.local_addr().unwrap().port());
    drop(free);
    let text = env.sites_toml().replace(&env.sim.peer().url, &dead);
    env.write_config_text(&text);

    let refused = env
        .rewind(&guard_args("web-01", "me", "edit app.conf", "down-1"))
        .await;
    refused.expect_code(5);
    let said = refused.one_error_line();
    assert!(
        said.contains("site denver") && said.contains("--site boston"),
        "{said}"
    );

    let mut args = vec!["--site", "boston"];
    args.extend(guard_args("web-01", "me", "edit app.conf", "down-1"));
    let guarded = env.rewind(&args).await;
    guarded.expect_code(0);
    assert!(
        guarded.stdout.starts_with("GUARDED: web-01"),
        "{guarded:#?}"
    );
    assert!(
        guarded.stdout.contains("only boston was asked"),
        "{guarded:#?}"
    );

    let journal = env.rewind(&["journal"]).await;
    journal.expect_code(0);
    assert!(journal.stdout.contains("SITES ASKED"), "{journal:#?}");
    assert!(journal.stdout.contains("boston"), "{journal:#?}");
}

#[tokio::test]
async fn a_zvm_lost_in_the_middle_of_a_guard_is_said_once_in_a_short_line_with_the_way_on() {
    let out = guard_losing_its_zvm("lost-1").await;
    assert_eq!(out.status.code(), Some(5), "{out:?}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    let line = lines[0];
    assert!(
        line.chars().count() <= 400,
        "{} characters: {line}",
        line.len()
    );
    assert_eq!(line.matches("nothing listens at").count(), 1, "{line}");
    assert!(
        line.contains("web-archive, web-dr, web-local"),
        "the VPGs are named once: {line}"
    );
    assert!(line.contains("guard again with --change lost-1"), "{line}");
}

#[tokio::test]
async fn a_zvm_lost_in_the_middle_of_a_guard_names_each_task_once_in_its_row() {
    let out = guard_losing_its_zvm("lost-2").await;
    let stdout = String::from_utf8(out.stdout).unwrap();
    let header = stdout
        .lines()
        .find(|l| l.starts_with("VPG") && l.contains(" TASK "))
        .expect("the table's header");
    let column = header.find(" TASK ").unwrap() + 1..header.find(" CHECKPOINT ").unwrap() + 1;
    let rows: Vec<&str> = stdout.lines().filter(|l| l.contains(" ERROR ")).collect();
    assert!(!rows.is_empty(), "{stdout}");
    for row in rows {
        let task = row.get(column.clone()).unwrap_or_default().trim();
        if !task.is_empty() {
            assert_eq!(row.matches(task).count(), 1, "the task once: {row}");
        }
        assert!(!row.contains("/v1/"), "no request URL in a row: {row}");
        assert!(
            row.chars().count() <= 250,
            "{} characters: {row}",
            row.len()
        );
    }
}

/// What `rewind guard` of web-01 for `change` ends with when the appliance goes away while its
/// inserts run.
async fn guard_losing_its_zvm(change: &str) -> std::process::Output {
    let env = TestEnv::start(20).await;
    env.control.task_duration(4000).await;
    let guard = env
        .command(&guard_args("web-01", "me", "edit app.conf", change))
        .spawn()
        .expect("rewind starts");
    env.control.until_an_insert_started().await;
    let TestEnv { sim, dir, control } = env;
    drop(sim);
    let out = tokio::time::timeout(
        std::time::Duration::from_secs(120),
        guard.wait_with_output(),
    )
    .await
    .expect("the guard ends")
    .unwrap();
    drop((dir, control));
    out
}

#[tokio::test]
async fn a_change_id_reused_for_another_action_exits_2_naming_the_earlier_guard() {
    let env = TestEnv::start(21).await;
    env.rewind(&guard_args("web-01", "me", "edit app.conf", "time-1"))
        .await
        .expect_code(0);
    let refused = env
        .rewind(&guard_args("web-01", "other", "drop table", "time-1"))
        .await;
    refused.expect_code(2);
    let said = refused.one_error_line();
    assert!(
        said.contains("change id \"time-1\" is taken") && said.contains("\"edit app.conf\""),
        "{said}"
    );
    assert!(said.contains("choose a new one"), "{said}");
    // Every CLI guard names the person at this machine beside the agent.
    let journal = env
        .rewind(&["--json", "journal", "--change", "time-1"])
        .await;
    let person = &journal.json()["result"]["records"][0]["person"];
    assert!(
        person["subject"]
            .as_str()
            .is_some_and(|s| s.starts_with("local:")),
        "{person}"
    );
}
