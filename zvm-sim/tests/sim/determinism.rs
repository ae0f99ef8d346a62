//! Determinism: one seed and one sequence of requests give the same answers and the same call log.

use serde_json::{Value, json};
use zvm_sim::test_kit::{TestSim, spawn_frozen};

/// A fixed script of requests touching every random choice: identifiers, tokens, task ids and
/// task-duration jitter. Returns every answer, with the listener's address taken out of links.
async fn script(t: &TestSim) -> Vec<Value> {
    let (boston, denver) = t.both_sites().await;
    let mut answers = vec![
        json!(t.sim.local().site_identifier),
        json!(t.sim.peer().site_identifier),
    ];
    let web_dr = boston.vpg_id("web-dr").await;
    let first = boston.insert(&web_dr, "one").await;
    let second = boston.insert(&web_dr, "two").await;
    let erp = denver.insert(&denver.vpg_id("erp-dr").await, "three").await;
    t.control.advance(0.02).await;
    answers.push(boston.task(&first).await);
    t.control.advance(1.0).await;
    for (site, id) in [(&boston, &first), (&boston, &second), (&denver, &erp)] {
        answers.push(site.task(id).await);
    }
    answers.push(boston.get_ok("/v1/vms").await);
    answers.push(denver.get_ok("/v1/vpgs").await);
    answers.push(
        boston
            .get_ok(&format!("/v1/vpgs/{web_dr}/checkpoints/stats"))
            .await,
    );
    answers.push(t.control.get("tasks").await);
    answers.push(json!(t.control.calls().await));
    let text = serde_json::to_string(&answers).unwrap();
    let text = text
        .replace(t.boston_url(), "http://boston")
        .replace(t.denver_url(), "http://denver");
    serde_json::from_str(&text).unwrap()
}

#[tokio::test]
async fn two_runs_with_one_seed_give_identical_answers_and_call_logs() {
    let first = script(&spawn_frozen(42).await).await;
    let second = script(&spawn_frozen(42).await).await;
    assert_eq!(first, second);
    let calls = first.last().unwrap().as_array().unwrap();
    assert!(calls.len() >= 10, "the script was logged: {calls:?}");
}

#[tokio::test]
async fn another_seed_gives_other_identifiers() {
    let first = script(&spawn_frozen(42).await).await;
    let other = script(&spawn_frozen(43).await).await;
    assert_ne!(first[0], other[0], "site identifiers come from the seed");
}

#[tokio::test]
async fn the_seed_is_reported() {
    let t = spawn_frozen(1234).await;
    assert_eq!(t.sim.seed(), 1234);
}
