//! Faults the model-based tests (tests/model.rs) found, each pinned by one focused test: tokens revoked
//! again right after the client got a new one.

mod common;

use common::{CLIENT_SECRET, Sites, TestEnv};
use rewind_core::{GuardRequest, NoProgress, Verdict};
use serde_json::json;

fn request(vm: &str, change: &str) -> GuardRequest {
    GuardRequest {
        vm: vm.into(),
        agent: "claude-code".into(),
        action: "edit app.conf".into(),
        change_id: change.into(),
    }
}

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
