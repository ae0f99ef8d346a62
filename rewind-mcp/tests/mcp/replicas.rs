//! Team servers as replicas: two `rewind-mcp --http` processes on one journal in PostgreSQL (the
//! test kit's throwaway server). What one acknowledges, the other shows at once; a replica killed
//! between its intent and its verdict is taken over by the other, one tag per VPG; a replica whose
//! database is gone says it is not ready.

use std::time::Duration;

use serde_json::Value;
use zvm_sim::test_kit::Postgres;

use crate::helper::{Human, Protocol, Setup, TestEnv, expect_guarded, guard, structured};

/// `env`'s configuration with its journal in the database at `url`.
fn journal_in(env: &TestEnv, url: &str) {
    let file = format!("journal = {:?}", env.journal_path());
    env.edit_config(&file, &format!("journal = {url:?}"));
}

async fn get_json(url: &str) -> (u16, Value) {
    let answer = reqwest::get(url).await.expect("the server answers");
    let status = answer.status().as_u16();
    (status, answer.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn a_guard_acknowledged_by_one_replica_is_in_the_others_guards_at_once() {
    let env = TestEnv::start(951, Setup::File).await;
    journal_in(&env, &Postgres::shared().fresh_database());
    let (a, b) = (env.http_server().await, env.http_server().await);
    let client = a.client(Human::unreachable(), Protocol::Legacy).await;
    for change in ["r-1", "r-2", "r-3"] {
        let result = guard(&client, "web-01", "edit", change).await;
        expect_guarded(&result);
        let tag = structured(&result)["tag"].as_str().unwrap().to_owned();
        // As the hook asks, right after the guard returns, of whichever replica it reaches.
        let (status, view) = get_json(&b.at("/v1/guards?within_secs=600")).await;
        assert_eq!(status, 200, "{view}");
        let tags: Vec<&str> = view["records"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["verdict"] == "guarded")
            .flat_map(|r| r["vpgs"].as_array().unwrap().iter())
            .filter_map(|v| v["tag"].as_str())
            .collect();
        assert!(tags.contains(&tag.as_str()), "{tag} in {tags:?}");
    }
    assert!(
        !env.journal_path().exists(),
        "the journal is the database's, not a file"
    );
}

#[tokio::test]
async fn a_replica_killed_between_intent_and_verdict_is_taken_over_with_one_tag_per_vpg() {
    let env = TestEnv::start(952, Setup::File).await;
    journal_in(&env, &Postgres::shared().fresh_database());
    // Every insert runs at Zerto, and its answer never comes back to the first replica.
    env.control
        .fault(
            serde_json::json!({"Method": "POST", "Path": "/v1/vpgs/*/checkpoints",
            "Action": "WithholdResponse", "Count": 3}),
        )
        .await;
    let (mut a, b) = (env.http_server().await, env.http_server().await);
    let first = a.client(Human::unreachable(), Protocol::Legacy).await;
    let pending = crate::helper::guard_in_background(&first, "kill-1");
    // The inserts are sent (and run) before the replica dies.
    for _ in 0..100 {
        if env.insert_tasks().await.len() == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(env.insert_tasks().await.len(), 3, "the three inserts ran");
    a.process().start_kill().unwrap();
    let _ = a.process().wait().await;
    drop(pending);
    let second = b.client(Human::unreachable(), Protocol::Legacy).await;
    let result = guard(&second, "web-01", "edit app.conf", "kill-1").await;
    expect_guarded(&result);
    let said = structured(&result).to_string();
    assert!(
        said.contains("took_over") || said.contains("takes_over"),
        "{said}"
    );
    assert_eq!(
        env.insert_tasks().await.len(),
        3,
        "the tags the dead replica inserted are adopted, none inserted twice"
    );
}

#[tokio::test]
async fn a_replica_whose_database_is_gone_is_not_ready_and_counts_the_errors() {
    let server = Postgres::start();
    let env = TestEnv::start(953, Setup::File).await;
    journal_in(&env, &server.fresh_database());
    let replica = env.http_server().await;
    let (status, body) = get_json(&replica.at("/readyz")).await;
    assert_eq!(status, 200, "{body}");
    server.stop_immediately();
    let (status, body) = get_json(&replica.at("/readyz")).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["journal_writable"], false, "{body}");
    let metrics = reqwest::get(replica.at("/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let errors = metrics
        .lines()
        .find(|l| l.starts_with("rewind_journal_store_errors_total"))
        .unwrap_or_else(|| panic!("{metrics}"));
    assert_ne!(errors.split_whitespace().last(), Some("0"), "{errors}");
    assert!(metrics.contains("rewind_journal_store_seconds_bucket"));
    server.up();
    let (status, body) = get_json(&replica.at("/readyz")).await;
    assert_eq!(status, 200, "ready again once the database is back: {body}");
}
