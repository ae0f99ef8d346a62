//! `GET /metrics`: the requests each site answered, a request no route matched told apart (in the
//! metrics and the call log), and the world's tasks by type and state; not itself a call.

use zvm_sim::test_kit::spawn_frozen;

#[tokio::test]
async fn the_metrics_count_requests_and_tasks_and_tell_a_request_no_route_matched() {
    let t = spawn_frozen(91).await;
    let boston = t.boston().await;
    let vpg = boston.vpg_id("web-local").await;
    boston.tag(&t.control, &vpg, "metrics-1").await;
    let (status, _) = boston.get("/v1/no/such/path").await;
    assert_eq!(status, 404);
    let text = reqwest::get(format!("{}/metrics", t.boston_url()))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let has = |needle: &str| {
        text.lines()
            .any(|l| !l.starts_with('#') && l.contains(needle))
    };
    assert!(
        has(
            "zvm_sim_requests_total{site=\"Boston\",method=\"POST\",status=\"200\",matched=\"true\"}"
        ),
        "{text}"
    );
    assert!(has("status=\"404\",matched=\"false\"}"), "{text}");
    assert!(
        has("zvm_sim_tasks{task_type=\"InsertTaggedCP\",state=\"Completed\"} 1"),
        "{text}"
    );
    assert!(has("zvm_sim_vpgs{status=\"MeetingSLA\"}"), "{text}");
    let calls = t.control.get("calls").await;
    let calls = calls.as_array().unwrap();
    let unmatched: Vec<_> = calls.iter().filter(|c| c["Unmatched"] == true).collect();
    assert_eq!(unmatched.len(), 1, "{calls:?}");
    assert_eq!(unmatched[0]["Path"], "/v1/no/such/path");
    assert!(!calls.iter().any(|c| c["Path"] == "/metrics"), "not a call");
}
