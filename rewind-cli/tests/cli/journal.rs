//! `rewind journal --since` and `rewind journal archive`: a journal that grows for years is read
//! from a time without being read whole, and its old records move to an archive that `rewind
//! journal --file` reads, while guards go on.

use serde_json::{Value, json};

use crate::env::TestEnv;

/// Copies the journal's lines of change `change` as change `as_change`, written `days` days ago,
/// before every other line (the journal is in time order).
fn backdate(env: &TestEnv, change: &str, as_change: &str, days: i64) {
    let text = std::fs::read_to_string(env.journal_file()).unwrap();
    let time = json!((chrono::Utc::now() - chrono::Duration::days(days)).to_rfc3339());
    let mut old = String::new();
    for line in text.lines() {
        let mut record: Value = serde_json::from_str(line).unwrap();
        if record["change_id"] == change {
            record["change_id"] = json!(as_change);
            record["time"] = time.clone();
            // An attempt of its own, not folded into the one copied.
            if record["attempt"].is_object() {
                record["attempt"]["id"] = json!(format!("attempt-of-{as_change}"));
            }
            old.push_str(&format!("{record}\n"));
        }
    }
    std::fs::write(env.journal_file(), format!("{old}{text}")).unwrap();
}

/// The change ids `rewind journal args...` shows.
async fn changes(env: &TestEnv, args: &[&str]) -> Vec<String> {
    let mut all = vec!["journal"];
    all.extend_from_slice(args);
    let (run, json) = env.rewind_json(&all).await;
    run.expect_code(0);
    json["result"]["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["change_id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn since_shows_only_the_records_written_from_then() {
    let env = TestEnv::start(61).await;
    env.guard("web-01", "claude-code", "c1").await;
    backdate(&env, "c1", "old-1", 90);
    backdate(&env, "c1", "older-1", 120);
    assert_eq!(changes(&env, &[]).await, ["older-1", "old-1", "c1"]);
    assert_eq!(changes(&env, &["--since", "100d"]).await, ["old-1", "c1"]);
    assert_eq!(changes(&env, &["--since", "7d"]).await, ["c1"]);
    let run = env.rewind(&["journal", "--since", "last tuesday"]).await;
    run.expect_code(2);
    assert!(run.stderr.contains("--since"), "{}", run.stderr);
}

#[tokio::test]
async fn old_records_move_to_an_archive_that_journal_file_reads_and_guards_go_on() {
    let env = TestEnv::start(62).await;
    env.guard("web-01", "claude-code", "c1").await;
    backdate(&env, "c1", "old-1", 90);
    let archive = env.journal_file().with_file_name("archive-2026.jsonl");
    let (run, json) = env
        .rewind_json(&[
            "journal",
            "archive",
            "--before",
            "60d",
            "--to",
            archive.to_str().unwrap(),
        ])
        .await;
    run.expect_code(0);
    assert_eq!(json["command"], "journal archive");
    assert!(
        json["result"]["lines_moved"].as_u64().unwrap() >= 2,
        "{json}"
    );
    assert_eq!(changes(&env, &[]).await, ["c1"]);
    let archived = changes(&env, &["--file", archive.to_str().unwrap()]).await;
    assert_eq!(archived, ["old-1"]);
    // Guards go on in the journal that is left.
    env.guard("db-01", "claude-code", "c2").await;
    assert_eq!(changes(&env, &[]).await, ["c1", "c2"]);
}

#[tokio::test]
async fn records_the_guard_still_reads_are_not_archived_and_the_error_says_how_far_back() {
    let env = TestEnv::start(63).await;
    env.guard("web-01", "claude-code", "c1").await;
    let run = env.rewind(&["journal", "archive", "--before", "7d"]).await;
    run.expect_code(2);
    assert!(
        run.stderr.contains("stay in the journal") && run.stderr.contains("such as"),
        "{}",
        run.stderr
    );
    assert_eq!(changes(&env, &[]).await, ["c1"]);
    let human = env
        .rewind(&["journal", "archive", "--before", "2020-01-01"])
        .await;
    human.expect_code(0);
    assert!(human.stdout.contains("nothing moved"), "{}", human.stdout);
}

/// The lines of the file at `path`.
fn lines_of(path: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn a_teams_file_journal_moves_into_a_database_and_back_out_without_loss_or_doubles() {
    let env = TestEnv::start(64).await;
    env.guard("web-01", "claude-code", "mv-1").await;
    env.guard("db-01", "claude-code", "mv-2").await;
    let file = env.journal_file();
    let written = lines_of(&file);
    let url = zvm_sim::test_kit::Postgres::shared().fresh_database();
    env.write_config_text(&format!("journal = {url:?}\n{}", env.sites_toml()));
    let from = file.to_str().unwrap();
    let (run, json) = env
        .rewind_json(&["journal", "import", "--from", from])
        .await;
    run.expect_code(0);
    assert_eq!(json["result"]["added"], written.len(), "{json}");
    let (run, json) = env
        .rewind_json(&["journal", "import", "--from", from])
        .await;
    run.expect_code(0);
    assert_eq!(json["result"]["added"], 0, "importing twice adds nothing");
    assert_eq!(json["result"]["present"], written.len());
    assert_eq!(
        changes(&env, &[]).await,
        ["mv-1", "mv-2"],
        "read from the database"
    );

    let out = env.dir.path().join("out.jsonl");
    let run = env
        .rewind(&["journal", "export", "--to", out.to_str().unwrap()])
        .await;
    run.expect_code(0);
    assert_eq!(lines_of(&out), written, "the lines come back as written");
    let run = env
        .rewind(&["journal", "export", "--to", out.to_str().unwrap()])
        .await;
    run.expect_code(2);
    assert!(run.stderr.contains("never writes over"), "{}", run.stderr);
    let exported = env.rewind(&["journal", "export"]).await;
    exported.expect_code(0);
    assert_eq!(exported.stdout.lines().count(), written.len());
}

#[tokio::test]
async fn an_import_into_a_journal_file_that_holds_records_is_refused_saying_what_to_do() {
    let env = TestEnv::start(65).await;
    env.guard("web-01", "claude-code", "imp-1").await;
    let copy = env.dir.path().join("copy.jsonl");
    std::fs::copy(env.journal_file(), &copy).unwrap();
    let before = lines_of(&env.journal_file());
    let run = env
        .rewind(&["journal", "import", "--from", copy.to_str().unwrap()])
        .await;
    run.expect_code(2);
    assert!(run.stderr.contains("time order"), "{}", run.stderr);
    assert_eq!(lines_of(&env.journal_file()), before, "nothing was added");
}
