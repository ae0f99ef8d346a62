//! Bad control requests (`/_sim`) get a 400 that names what is wrong and change nothing: bad JSON, bad
//! fault rules, bad clock and timing values, a bad state document, huge values (echoed cut, with their
//! length). "Nothing" is checked on the fault list, the clock, the timings, the tasks and the call log.

use serde_json::{Value, json};

use crate::expect::get_json;

/// A fault rule to post, as one case of the table.
fn fault(rule: Value) -> (&'static str, &'static str, String) {
    ("faults", "POST", rule.to_string())
}

async fn control_state(http: &reqwest::Client, base: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for path in ["faults", "clock", "timing", "tasks", "calls"] {
        out.push(get_json(http, &format!("{base}/_sim/{path}")).await);
    }
    out
}

/// Every bad control request: path, method and body. `huge` is a million characters, for values
/// the 400 must echo cut.
fn bad_requests(huge: &str) -> Vec<(&'static str, &'static str, String)> {
    vec![
        ("faults", "POST", "{not json".into()),
        ("faults", "POST", "[]".into()),
        fault(json!({"Action": "Respond", "Status": 503})),
        fault(json!({"Path": "/v1/**"})),
        fault(json!({"Path": "/v1/**", "Action": "Explode"})),
        fault(json!({"Path": "/v1/**", "Action": "Respond"})),
        fault(json!({"Path": "/v1/**", "Action": "Respond", "Status": 99})),
        fault(json!({"Path": "/v1/**", "Action": "Respond", "Status": "503"})),
        // What hyper cannot send as asked: a 1xx as the answer, a header it cannot carry.
        fault(json!({"Path": "/v1/**", "Action": "Respond", "Status": 100})),
        fault(json!({"Path": "/v1/**", "Action": "Respond", "Status": 503,
                     "Headers": {"Retry After": "1"}})),
        fault(json!({"Path": "/v1/**", "Action": "Respond", "Status": 503,
                     "Headers": {"Retry-After": "1\r\nX-Evil: 1"}})),
        fault(json!({"Path": "/v1/**", "Action": "Latency", "LatencyMs": -1})),
        fault(json!({"Path": "/v1/**", "Action": "Latency", "LatencyMs": 99_999_999_999u64})),
        fault(json!({"Path": "/v1/**", "Action": "Latency"})),
        fault(json!({"Path": "/v1/**", "Action": "LoseResponse", "Probability": 1.5})),
        fault(json!({"Path": "/v1/**", "Action": "LoseResponse", "Count": -2})),
        fault(json!({"Path": "/v1/**", "Action": "LoseResponse", "Site": "Paris"})),
        fault(json!({"Path": "/v1/**", "Action": "LoseResponse", "Method": "GE T"})),
        fault(json!({"Path": "", "Action": "LoseResponse"})),
        fault(json!({"Path": "/v1/**", "Action": "RevokeTokens", "Bogus": 1})),
        // Huge values that the 400 names: each is echoed cut, with its length.
        fault(json!({"Path": huge, "Action": "LoseResponse"})),
        fault(json!({"Path": "/v1/**", "Action": huge})),
        fault(json!({"Path": "/v1/**", "Action": "LoseResponse", "Site": huge})),
        fault(json!({"Path": "/v1/**", "Action": "LoseResponse", huge.to_owned(): 1})),
        ("clock/advance", "POST", json!({"Seconds": -5}).to_string()),
        (
            "clock/advance",
            "POST",
            json!({"Seconds": "soon"}).to_string(),
        ),
        (
            "clock/advance",
            "POST",
            json!({"Seconds": 1e308}).to_string(),
        ),
        ("clock/advance", "POST", "{}".into()),
        ("clock/scale", "POST", json!({"Scale": -1}).to_string()),
        ("clock/scale", "POST", json!({"Scale": "fast"}).to_string()),
        ("timing", "POST", json!({"TaskDurationMs": -1}).to_string()),
        ("timing", "POST", json!({"ListingLagMs": "x"}).to_string()),
        ("state", "PUT", "{\"Format\": \"something-else/9\"}".into()),
        ("state", "PUT", huge.to_owned()),
    ]
}

#[tokio::test]
async fn bad_control_requests_are_refused_with_400_naming_the_problem_and_change_nothing() {
    let sim = zvm_sim::start(zvm_sim::Options {
        time_scale: 0.0,
        ..zvm_sim::Options::for_tests(5)
    })
    .await
    .unwrap();
    let base = sim.local().url.clone();
    let http = reqwest::Client::new();
    let before = control_state(&http, &base).await;
    let huge = "x".repeat(1_000_000);
    let cases = bad_requests(&huge);
    let mut accepted = Vec::new();
    for (path, method, body) in &cases {
        let req = match *method {
            "PUT" => http.put(format!("{base}/_sim/{path}")),
            _ => http.post(format!("{base}/_sim/{path}")),
        };
        let resp = req
            .header("Content-Type", "application/json")
            .body(body.clone())
            .send()
            .await
            .unwrap();
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap();
        let shown: String = body.chars().take(80).collect();
        if !(400..500).contains(&status) {
            accepted.push(format!("{method} /_sim/{path} {shown}: {status} {text}"));
            continue;
        }
        assert!(
            !text.trim().is_empty(),
            "{method} /_sim/{path} {shown}: the 4xx says why"
        );
        assert!(
            text.len() < 2_000,
            "{method} /_sim/{path} {shown}: the message does not echo the body"
        );
        if text.contains(&huge[..100]) {
            assert!(
                text.contains("… (1000000 characters)"),
                "{method} /_sim/{path} {shown}: a huge value is echoed cut, with its length: {text}"
            );
        }
    }
    assert!(
        accepted.is_empty(),
        "bad control requests were accepted: {accepted:#?}"
    );
    assert_eq!(control_state(&http, &base).await, before, "nothing changed");
    sim.shutdown().await;
}
