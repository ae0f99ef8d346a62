//! Faults the model-based tests (tests/model.rs) found, each pinned by one focused test: tokens revoked
//! again right after the client got a new one, and a lost insert answer whose task could not then be
//! followed. Also how a guard words an insert answered with a 5xx, which is not a lost answer, and
//! when it reads its VPG's history: once Zerto has the insert, never when the insert was refused.

mod common;

use common::{CLIENT_SECRET, Sites, TestEnv, request};
use rewind_core::{GuardNote, NoProgress, Outcome, Verdict};
use serde_json::json;

#[tokio::test]
async fn tokens_revoked_twice_in_a_row_while_a_task_is_followed_surface_no_401() {
    let env = TestEnv::start_with(zvm_sim::Options::for_tests(0), Sites::Both).await;
    // Keycloak restarts at the first task poll, and again at the poll sent with the new token.
    env.control
        .fault(
            json!({"Method": "GET", "Path": "/v1/tasks/*", "Site": "Boston",
            "Action": "RevokeTokens", "Count": 2}),
        )
        .await;
    let report = env
        .rewind
        .guard(request("app-01", "chg-revoked"), &NoProgress)
        .await
        .unwrap();
    assert_eq!(report.verdict, Verdict::Guarded, "{}", report.summary());
    let text = report.summary();
    assert!(
        !text.contains("401") && !text.contains(CLIENT_SECRET),
        "{text}"
    );
}

#[tokio::test]
async fn a_lost_insert_answer_whose_task_cannot_be_followed_keeps_the_task_id_in_the_outcome() {
    let env = TestEnv::start_with(zvm_sim::Options::for_tests(0), Sites::Both).await;
    env.control
        .fault(json!({"Method": "POST", "Path": "/v1/vpgs/*/checkpoints",
            "Action": "LoseResponse", "Count": 1}))
        .await;
    env.control
        .fault(
            json!({"Method": "GET", "Path": "/v1/tasks/*", "Action": "Respond",
            "Status": 500, "Count": 1}),
        )
        .await;
    let report = env
        .rewind
        .guard(request("db-01", "chg-unfollowed"), &NoProgress)
        .await
        .unwrap();
    let inserts = env.insert_tasks().await;
    assert_eq!(inserts.len(), 1, "one insert, never two: {inserts:?}");
    let (task_id, ..) = &inserts[0];
    let web_dr = report.vpgs.iter().find(|v| v.vpg_name == "web-dr").unwrap();
    match &web_dr.outcome {
        Outcome::Error { problem } => {
            assert_eq!(
                problem.task_id(),
                Some(task_id.as_str()),
                "{}",
                report.summary()
            )
        }
        other => panic!("the insert's task id is kept: {other:?}"),
    }
    assert_eq!(report.verdict, Verdict::NotGuarded, "{}", report.summary());
    // The journal has it too.
    let journal = env
        .rewind
        .journal()
        .read(&rewind_core::JournalFilter::default())
        .unwrap();
    assert_eq!(
        journal.records[0].vpgs[0].task_id.as_deref(),
        Some(task_id.as_str())
    );
}

#[tokio::test]
async fn an_insert_answered_503_is_noted_as_an_error_status_and_sent_at_most_once_more() {
    let env = TestEnv::start_with(zvm_sim::Options::for_tests(0), Sites::Both).await;
    env.control
        .fault(json!({"Method": "POST", "Path": "/v1/vpgs/*/checkpoints",
            "Action": "Respond", "Status": 503, "Count": 1}))
        .await;
    let report = env
        .rewind
        .guard(request("db-01", "chg-503"), &NoProgress)
        .await
        .unwrap();
    assert_eq!(report.verdict, Verdict::Guarded, "{}", report.summary());
    let unknown: Vec<&str> = report
        .vpgs
        .iter()
        .flat_map(|v| v.notes.iter())
        .filter_map(|n| match n {
            GuardNote::OutcomeUnknown { what } => Some(what.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        unknown,
        [
            "the ZVM answered the insert with HTTP 503 (Service Unavailable), after which whether it happened is unknown"
        ],
        "an answer that came is noted as an error status, not as lost"
    );
    // The 503 came instead of the insert, so it was sent once more, and only once.
    assert_eq!(env.control.insert_posts().await, 2);
    assert_eq!(env.insert_tasks().await.len(), 1);
}

/// The positions in the call log of one VPG's insert and of its history read (`GET /v1/vpgs/{id}`).
async fn insert_and_history_calls(env: &TestEnv) -> (Vec<usize>, Vec<usize>) {
    let calls = env.control.calls().await;
    let at = |method: &str, tail: &str| -> Vec<usize> {
        let matches = |c: &serde_json::Value| {
            let path = c["Path"].as_str().unwrap_or_default();
            let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
            c["Method"] == method
                && parts.len() == 3 + usize::from(!tail.is_empty())
                && parts[..2] == ["v1", "vpgs"]
                && parts.get(3).is_none_or(|t| *t == tail)
        };
        (0..calls.len()).filter(|i| matches(&calls[*i])).collect()
    };
    (at("POST", "checkpoints"), at("GET", ""))
}

#[tokio::test]
async fn a_vpgs_history_is_read_once_its_insert_is_sent_and_never_when_the_insert_is_refused() {
    let env = TestEnv::start_with(zvm_sim::Options::for_tests(0), Sites::Both).await;
    env.control
        .fault(json!({"Method": "POST", "Path": "/v1/vpgs/*/checkpoints",
            "Action": "Respond", "Status": 400, "Count": 1}))
        .await;
    let refused = env
        .rewind
        .guard(request("app-01", "chg-refused"), &NoProgress)
        .await
        .unwrap();
    assert_eq!(
        refused.verdict,
        Verdict::NotGuarded,
        "{}",
        refused.summary()
    );
    let (inserts, history) = insert_and_history_calls(&env).await;
    assert_eq!(inserts.len(), 1, "the refused insert was sent once");
    assert!(history.is_empty(), "no history read for a refused insert");

    env.control.clear_calls().await;
    let report = env
        .rewind
        .guard(request("app-01", "chg-history"), &NoProgress)
        .await
        .unwrap();
    assert_eq!(report.verdict, Verdict::Guarded, "{}", report.summary());
    assert!(report.vpgs[0].way_back.is_some(), "{}", report.summary());
    let (inserts, history) = insert_and_history_calls(&env).await;
    assert_eq!((inserts.len(), history.len()), (1, 1));
    assert!(
        history[0] > inserts[0],
        "history read after the insert was sent"
    );
}
