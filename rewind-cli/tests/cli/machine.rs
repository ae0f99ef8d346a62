//! The guard's promise when the machine does not keep its own: a process killed mid-guard, the same
//! guard run twice at once, rivals on one VPG, a journal that cannot be written or fills up, another
//! local user. For one VM and one change, every protecting VPG ends with exactly one tagged
//! checkpoint of it, every insert sent is accounted for in the journal, and the verdict never says
//! more than what is on disk and in Zerto. Each test runs the real binary; the simulator's task list
//! is the ground truth.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::env::TestEnv;

/// `rewind guard <vm> --agent ops --action edit --change <change>`.
fn guard_args<'a>(vm: &'a str, change: &'a str) -> Vec<&'a str> {
    vec![
        "guard", vm, "--agent", "ops", "--action", "edit", "--change", change,
    ]
}

/// The insert tasks of `change` the simulator ran: (VPG name, state), oldest first.
async fn inserts_of(env: &TestEnv, change: &str) -> Vec<(String, i64)> {
    let marker = format!("change={change} |");
    env.control
        .get("tasks")
        .await
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|t| {
            t["Type"] == "InsertTaggedCP"
                && t["CheckpointName"]
                    .as_str()
                    .is_some_and(|n| n.contains(&marker))
        })
        .map(|t| {
            let state = match &t["State"] {
                Value::Number(n) => n.as_i64().unwrap_or(-1),
                Value::String(s) if s == "Completed" => 6,
                Value::String(s) if s == "InProgress" => 1,
                Value::String(s) if s == "Failed" => 4,
                _ => -1,
            };
            (t["VpgName"].as_str().unwrap_or_default().to_string(), state)
        })
        .collect()
}

/// Waits until no task of the simulator runs.
async fn settle(env: &TestEnv) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let tasks = env.control.get("tasks").await;
        let running = tasks
            .as_array()
            .into_iter()
            .flatten()
            .any(|t| t["State"] == 1 || t["State"] == "InProgress");
        if !running || Instant::now() > deadline {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Completed inserts of `change` per VPG, once every task has ended.
async fn completed_per_vpg(env: &TestEnv, change: &str) -> BTreeMap<String, usize> {
    settle(env).await;
    let mut per_vpg = BTreeMap::new();
    for (vpg, state) in inserts_of(env, change).await {
        *per_vpg.entry(vpg).or_insert(0) += usize::from(state == 6);
    }
    per_vpg
}

/// The names of the VPGs a guard report tagged.
fn tagged(report: &Value) -> Vec<String> {
    report["vpgs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|v| v["outcome"] == "tagged")
        .map(|v| v["vpg_name"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Polls `until` every 10 ms for at most 20 s.
async fn wait_for(what: &str, mut until: impl AsyncFnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !until().await {
        assert!(Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The journal records of `change`, as `rewind journal --json` reads them.
async fn journal_of(env: &TestEnv, change: &str) -> Vec<Value> {
    let (run, json) = env.rewind_json(&["journal", "--change", change]).await;
    run.expect_code(0);
    json["result"]["records"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// Kills a guard once `when` holds, runs the same command again, and checks the promise: the rerun is
/// guarded, took the killed attempt over, and every VPG it tagged holds exactly one Completed insert
/// of the change; the journal shows the killed attempt interrupted and taken over.
async fn killed_then_run_again(env: &TestEnv, change: &str, when: impl AsyncFnMut() -> bool) {
    env.control.task_duration(1500).await;
    let args = guard_args("web-01", change);
    let mut first = env.command(&args).spawn().unwrap();
    wait_for("the moment to kill the guard", when).await;
    first.start_kill().unwrap();
    let status = first.wait().await.unwrap();
    assert_eq!(status.code(), None, "killed by a signal: {status}");

    let (run, json) = env.rewind_json(&args).await;
    run.expect_code(0);
    let report = &json["result"];
    assert_eq!(report["verdict"], "guarded", "{report:#}");
    let notes = report.to_string();
    assert!(notes.contains("took over attempt"), "{report:#}");
    let per_vpg = completed_per_vpg(env, change).await;
    for vpg in tagged(report) {
        assert_eq!(per_vpg.get(&vpg), Some(&1), "{vpg}: {per_vpg:?}");
    }
    assert!(per_vpg.values().all(|n| *n <= 1), "{per_vpg:?}");

    let records = journal_of(env, change).await;
    let verdicts: Vec<&str> = records
        .iter()
        .filter_map(|r| r["verdict"].as_str())
        .collect();
    assert_eq!(verdicts, ["interrupted", "guarded"], "{records:#?}");
    assert_eq!(
        records[0]["attempt"]["taken_over_by"], records[1]["attempt"]["id"],
        "{records:#?}"
    );
}

#[tokio::test]
async fn a_guard_killed_while_its_inserts_run_and_run_again_adopts_them_and_inserts_none_twice() {
    let env = TestEnv::start(71).await;
    killed_then_run_again(&env, "k2", async || {
        !inserts_of(&env, "k2").await.is_empty()
    })
    .await;
}

#[tokio::test]
async fn a_guard_killed_as_soon_as_its_intent_is_journaled_and_run_again_inserts_none_twice() {
    let env = TestEnv::start(72).await;
    let journal = env.journal_file();
    killed_then_run_again(&env, "k3", async || {
        std::fs::read_to_string(&journal).is_ok_and(|j| j.contains("\"phase\":\"intent\""))
    })
    .await;
}

#[tokio::test]
async fn two_identical_guards_at_once_share_one_checkpoint_per_vpg() {
    let env = TestEnv::start(73).await;
    env.control.task_duration(600).await;
    let mut args = vec!["--json"];
    args.extend(guard_args("app-01", "same"));
    let runs: Vec<_> = (0..2)
        .map(|_| tokio::spawn(env.command(&args).spawn().unwrap().wait_with_output()))
        .collect();
    let mut checkpoints = Vec::new();
    for run in runs {
        let out = run.await.unwrap().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        assert_eq!(out.status.code(), Some(0), "{stdout}");
        let json: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(json["result"]["verdict"], "guarded", "{json:#}");
        let ids: Vec<(Value, Value)> = json["result"]["vpgs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| (v["vpg_name"].clone(), v["checkpoint_id"].clone()))
            .collect();
        checkpoints.push(ids);
    }
    assert_eq!(
        checkpoints[0], checkpoints[1],
        "both name the same checkpoints"
    );
    let inserts = inserts_of(&env, "same").await;
    assert_eq!(inserts.len(), 1, "one insert into app-tier: {inserts:?}");
}

#[tokio::test]
async fn eight_rival_processes_on_one_vpg_all_end_guarded() {
    let env = TestEnv::start(74).await;
    env.control.task_duration(300).await;
    // web-01 and db-01 share web-dr: every one of these guards needs it.
    let changes: Vec<(String, &str)> = (0..8)
        .map(|i| {
            (
                format!("rival-{i}"),
                if i % 2 == 0 { "web-01" } else { "db-01" },
            )
        })
        .collect();
    let runs: Vec<_> = changes
        .iter()
        .map(|(change, vm)| {
            let child = env.command(&guard_args(vm, change)).spawn().unwrap();
            tokio::spawn(child.wait_with_output())
        })
        .collect();
    for (run, (change, vm)) in runs.into_iter().zip(&changes) {
        let out = run.await.unwrap().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{vm} {change}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for (change, _) in &changes {
        let per_vpg = completed_per_vpg(&env, change).await;
        assert_eq!(per_vpg.get("web-dr"), Some(&1), "{change}: {per_vpg:?}");
    }
}

#[tokio::test]
async fn a_journal_that_cannot_be_written_stops_the_guard_before_any_insert() {
    let env = TestEnv::start(75).await;
    // A folder that cannot be made (a file stands where it should be): unwritable, even for root.
    let blocked = env.path("blocked");
    std::fs::write(&blocked, "not a folder").unwrap();
    let journal = blocked.join("journal.jsonl");
    env.write_config_text(&format!(
        "journal = \"{}\"\n{}",
        journal.display(),
        env.sites_toml()
    ));
    let (run, json) = env.rewind_json(&guard_args("web-01", "ro-1")).await;
    run.expect_code(1);
    assert_eq!(json["ok"], false, "{json:#}");
    assert_eq!(json["error"]["kind"], "internal", "{json:#}");
    let message = json["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("nothing was inserted") && message.contains(&*journal.to_string_lossy()),
        "{message}"
    );
    assert!(inserts_of(&env, "ro-1").await.is_empty());
}

#[tokio::test]
async fn a_journal_that_fills_mid_guard_keeps_no_torn_record_and_the_guard_says_it_is_not_guarded()
{
    let env = TestEnv::start(76).await;
    env.control.task_duration(1500).await;
    // The guard runs under a file-size limit; once its intent is journaled, the journal is filled
    // to 300 bytes short of that limit, as a disk that fills up while the inserts run.
    let limit: u64 = 64 * 1024;
    let journal = env.journal_file();
    let fsize = format!("--fsize={limit}");
    let child = env
        .wrapped(&["prlimit", &fsize, "--"], &guard_args("app-03", "full3"))
        .spawn()
        .expect("prlimit (util-linux) runs");
    wait_for("the intent is journaled", async || {
        std::fs::read_to_string(&journal).is_ok_and(|j| j.contains("\"phase\":\"intent\""))
    })
    .await;
    let mut filler = json!({"time": chrono::Utc::now(), "kind": "recovery", "agent": "ops",
        "action": "filler", "change_id": "filler", "vm": {"id": "x.vm-1", "name": "filler", "site": "Boston"},
        "verdict": "completed", "vpgs": [], "notes": [""]});
    {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&journal)
            .unwrap();
        file.lock().unwrap();
        let used = file.metadata().unwrap().len();
        let empty_len = filler.to_string().len() as u64 + 1;
        filler["notes"][0] = json!("x".repeat((limit - 300 - used - empty_len) as usize));
        file.write_all(format!("{filler}\n").as_bytes()).unwrap();
    }

    let out = child.wait_with_output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("NOT GUARDED") && stdout.contains("not journaled"),
        "{stdout}"
    );
    assert!(
        stderr.contains("audit journal") && stderr.contains("hook denies changes to app-03"),
        "{stderr}"
    );
    let bytes = std::fs::read(&journal).unwrap();
    assert!(bytes.ends_with(b"\n"), "no torn record is left");

    // Without the limit, the next guard of another change journals as usual, and nothing is skipped.
    let (run, json) = env.rewind_json(&guard_args("app-03", "full4")).await;
    run.expect_code(0);
    assert_eq!(json["result"]["verdict"], "guarded");
    let (run, read) = env.rewind_json(&["journal"]).await;
    run.expect_code(0);
    assert_eq!(read["result"]["skipped_lines"], 0, "{read:#}");
    let changes: Vec<&str> = read["result"]["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["change_id"].as_str())
        .collect();
    assert!(changes.contains(&"full4"), "{changes:?}");

    // And the change that was not journaled is guarded again without a second insert.
    let (run, json) = env.rewind_json(&guard_args("app-03", "full3")).await;
    run.expect_code(0);
    assert_eq!(json["result"]["verdict"], "guarded", "{json:#}");
    assert_eq!(
        completed_per_vpg(&env, "full3").await.get("app-tier"),
        Some(&1)
    );
}

#[cfg(unix)]
#[tokio::test]
async fn with_umask_000_the_journal_catalog_and_locks_stay_private_to_their_owner() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::start(77).await;
    let run_with_umask = async |args: &[&str]| {
        let out = env
            .wrapped(&["sh", "-c", "umask 000 && exec \"$@\"", "sh"], args)
            .output()
            .await
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
    };
    run_with_umask(&guard_args("app-01", "umask-1")).await;
    run_with_umask(&["catalog", "add-mutating", "ssh", "run", "--vm-arg", "host"]).await;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let journal = env.journal_file();
    assert_eq!(mode(&journal), 0o600);
    assert_eq!(mode(journal.parent().unwrap()), 0o700);
    assert_eq!(mode(&journal.parent().unwrap().join("locks")), 0o700);
    assert_eq!(mode(&env.catalog_file()), 0o600);
    let lock = env.catalog_file().with_extension("toml.lock");
    assert_eq!(mode(&lock), 0o600);
    // Another local user cannot hold the catalog's lock (when the tests can become one).
    let is_root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    if is_root {
        let other = std::process::Command::new("setpriv")
            .args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "flock",
                "-n",
            ])
            .arg(&lock)
            .arg("true")
            .output()
            .expect("setpriv (util-linux) runs");
        assert!(!other.status.success(), "another user locked {lock:?}");
    }
}

#[tokio::test]
async fn a_configuration_holding_a_secret_that_others_can_read_is_warned_about_on_every_run() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::start(78).await;
    let config = env.config_file();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o644)).unwrap();
    for args in [&["sites"][..], &["journal"][..]] {
        let run = env.rewind(args).await;
        assert!(
            run.stderr.contains(&*config.to_string_lossy()) && run.stderr.contains("chmod 600"),
            "{args:?}: {run:#?}"
        );
    }
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o600)).unwrap();
    let run = env.rewind(&["sites"]).await;
    assert!(!run.stderr.contains("chmod 600"), "{run:#?}");
}

#[tokio::test]
async fn a_journal_lock_held_by_another_process_is_waited_for_a_bounded_time_and_named() {
    let env = TestEnv::start(79).await;
    let journal = env.journal_file();
    std::fs::create_dir_all(journal.parent().unwrap()).unwrap();
    let holder = std::fs::File::create(&journal).unwrap();
    holder.lock_shared().unwrap();
    let (run, json) = env.rewind_json(&guard_args("app-02", "held-1")).await;
    run.expect_code(1);
    let message = json["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("nothing was inserted") && message.contains("journal.jsonl"),
        "{message}"
    );
    assert!(inserts_of(&env, "held-1").await.is_empty());
    holder.unlock().unwrap();
    let (run, json) = env.rewind_json(&guard_args("app-02", "held-1")).await;
    run.expect_code(0);
    assert_eq!(json["result"]["verdict"], "guarded");
}
