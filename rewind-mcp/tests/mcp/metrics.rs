//! A team server's `/metrics`, `/healthz` and `/readyz`: open without a token, behind the same Host
//! check as every route, naming no person, VM or path; a guard through MCP moves the metrics; and a
//! ZVM that cannot be reached shows in `/readyz` without making the server unready.

use serde_json::json;

use crate::helper::*;
use crate::sign_in::{client_as, signed_in};

/// The value of the first sample of `metric` whose labels hold every one of `labels`.
fn sample(text: &str, metric: &str, labels: &[&str]) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(metric) && !l.starts_with('#'))
        .find(|l| labels.iter().all(|want| l.contains(want)))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0)
}

#[tokio::test]
async fn a_guard_through_mcp_moves_the_metrics_which_need_no_token_and_name_nobody() {
    let world = zvm_sim::test_kit::world_with_people(&[(
        "alice",
        &["rewind-read", "rewind-guard", "rewind-recover"],
    )]);
    let options = zvm_sim::Options {
        world,
        ..zvm_sim::Options::for_tests(81)
    };
    let env = TestEnv::start_with(options, Setup::File).await;
    signed_in(&env, "account");
    let server = env.http_server().await;
    let base = server.url.trim_end_matches("/mcp").to_owned();
    let http = reqwest::Client::new();
    let get = |path: &str, host: &'static str| {
        http.get(format!("{base}{path}"))
            .header("Host", host)
            .send()
    };
    let metrics = || async {
        get("/metrics", "localhost")
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    };
    let guarded = "verdict=\"guarded\"";
    let before = sample(&metrics().await, "rewind_guards_total", &[guarded]);

    let alice = client_as(&env, &server, "alice").await;
    expect_guarded(&guard(&alice, "web-01", "edit app.conf", "m-1").await);
    let _ = call(&alice, "zerto_find_protection", json!({"vm": "no-such-vm"})).await;
    alice.cancel().await.unwrap();

    let text = metrics().await;
    assert_eq!(
        sample(&text, "rewind_guards_total", &[guarded]),
        before + 1.0,
        "{text}"
    );
    assert!(
        sample(&text, "rewind_inserts_total", &["outcome=\"tagged\""]) >= 3.0,
        "{text}"
    );
    let op = "mcp_server_operation_duration_seconds_count";
    let guard_tool = "gen_ai_tool_name=\"zerto_guard_before_mutate\"";
    assert_eq!(
        sample(&text, op, &[guard_tool, "error_type=\"\""]),
        1.0,
        "{text}"
    );
    let find_tool = "gen_ai_tool_name=\"zerto_find_protection\"";
    assert_eq!(
        sample(&text, op, &[find_tool, "error_type=\"tool_error\""]),
        1.0,
        "{text}"
    );
    let insert = "task_type=\"InsertTaggedCP\",state=\"Completed\"";
    assert!(sample(&text, "rewind_zerto_task_duration_seconds_count", &[insert]) >= 3.0);
    assert!(sample(&text, "rewind_journal_write_seconds_count", &[]) >= 1.0);
    for secret in [
        "web-01",
        "alice",
        "m-1",
        env.journal_path().to_str().unwrap(),
    ] {
        assert!(!text.contains(secret), "the metrics name {secret}: {text}");
    }

    // A request without a token is refused, and counted by its reason.
    let refused = http
        .post(&server.url)
        .header("Host", "localhost")
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    let text = metrics().await;
    assert!(
        sample(
            &text,
            "rewind_sign_in_refusals_total",
            &["kind=\"no_token\""]
        ) >= 1.0,
        "{text}"
    );

    // The same Host check as every route.
    assert_eq!(get("/metrics", "evil.example").await.unwrap().status(), 403);
    assert_eq!(get("/readyz", "evil.example").await.unwrap().status(), 403);
    let health = get("/healthz", "localhost").await.unwrap();
    assert_eq!(health.status(), 200);
}

#[tokio::test]
async fn a_zvm_that_cannot_be_reached_shows_in_readyz_and_never_makes_the_server_unready() {
    let env = TestEnv::start(82, Setup::File).await;
    // A DR site whose ZVM refuses every connection.
    let mut config = std::fs::read_to_string(env.config_path()).unwrap();
    config = config.replacen(
        "[guard]",
        "[sites.dr]\nurl = \"http://127.0.0.1:9\"\nclient_id = \"rewind\"\nclient_secret = \"x\"\n\n[guard]",
        1,
    );
    std::fs::write(env.config_path(), config).unwrap();
    let server = env.http_server().await;
    let base = server.url.trim_end_matches("/mcp").to_owned();
    let ready = reqwest::Client::new()
        .get(format!("{base}/readyz"))
        .header("Host", "localhost")
        .send()
        .await
        .unwrap();
    assert_eq!(
        ready.status(),
        200,
        "a DR site down leaves the server ready"
    );
    let body: serde_json::Value = ready.json().await.unwrap();
    assert_eq!(body["ready"], true, "{body}");
    assert_eq!(body["journal_writable"], true, "{body}");
    let zvms = body["zvms"].as_array().unwrap();
    let down = zvms
        .iter()
        .find(|z| z["site"] == "dr")
        .expect("the unreachable site");
    assert_eq!(down["reachable"], false, "{body}");
    let up = zvms
        .iter()
        .find(|z| z["site"] != "dr")
        .expect("the simulator's site");
    assert_eq!(up["reachable"], true, "{body}");
    let text = reqwest::Client::new()
        .get(format!("{base}/metrics"))
        .header("Host", "localhost")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(sample(&text, "rewind_zvm_reachable", &["site=\"dr\""]), 0.0);
    assert!(
        text.contains("rewind_zvm_reachable{site=\"dr\"} 0"),
        "{text}"
    );
}
