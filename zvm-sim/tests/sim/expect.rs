//! What the tests expect of an answer, in one place: a refusal with its status and message, a task
//! that ended with a reason, a VPG's status pair. Every area of the simulator checks these the same
//! way, so the checks live here once and each test names only what differs.

use reqwest::StatusCode;
use serde_json::Value;
use zvm_sim::test_kit::{Site, TestSim, texts};

/// Asserts that `answer` is a refusal with `status` whose `Message` names each of `words`; returns
/// the message.
pub fn expect_refused(answer: (StatusCode, Value), status: StatusCode, words: &[&str]) -> String {
    let (got, body) = answer;
    assert_eq!(got, status, "{body}");
    let message = body["Message"]
        .as_str()
        .unwrap_or_else(|| panic!("a Message in {body}"));
    for word in words {
        assert!(message.contains(word), "{word:?} in {message}");
    }
    message.to_owned()
}

/// Asserts that a ZVM task ended in `state` (4 Failed, 5 Stopped) with a `CompleteReason` naming
/// each of `words`.
pub fn expect_ended(task: &Value, state: u64, words: &[&str]) {
    assert_eq!(task["Status"]["State"], state, "{task}");
    let reason = task["CompleteReason"]
        .as_str()
        .unwrap_or_else(|| panic!("a CompleteReason in {task}"));
    for word in words {
        assert!(reason.contains(word), "{word:?} in {reason}");
    }
}

/// The status and substatus numbers of a VPG or VM row.
pub fn status_pair(row: &Value) -> (Option<u64>, Option<u64>) {
    (row["Status"].as_u64(), row["SubStatus"].as_u64())
}

/// The status and substatus numbers the site shows for the VPG with this identifier.
pub async fn vpg_status(site: &Site, vpg: &str) -> (Option<u64>, Option<u64>) {
    status_pair(&site.get_ok(&format!("/v1/vpgs/{vpg}")).await)
}

/// Sends a request the test built itself; the raw response.
pub async fn send(request: reqwest::RequestBuilder) -> reqwest::Response {
    request.send().await.expect("the simulator answers")
}

/// The status and JSON body of a raw response (`Null` when the body is not JSON).
pub async fn answer_of(response: reqwest::Response) -> (StatusCode, Value) {
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// `GET` of a URL without a token; its JSON body.
pub async fn get_json(http: &reqwest::Client, url: &str) -> Value {
    let response = send(http.get(url)).await;
    response.json().await.expect("a JSON body")
}

/// The text under `key` of each item of a JSON list, owned (the kit's `texts` borrows the list).
pub fn owned_texts(list: &Value, key: &str) -> Vec<String> {
    texts(list, key).into_iter().map(str::to_owned).collect()
}

/// The identifiers of a task list, in its order.
pub fn task_ids(tasks: &Value) -> Vec<String> {
    owned_texts(tasks, "TaskIdentifier")
}

/// Asserts that `answer` is a 200 whose body is a JSON string (a task id, a session id, a URL);
/// returns it.
pub fn expect_string(answer: (StatusCode, Value), what: &str) -> String {
    let (status, body) = answer;
    assert_eq!(status, StatusCode::OK, "{what}: {body}");
    let text = body.as_str();
    text.unwrap_or_else(|| panic!("{what} as a JSON string: {body}"))
        .to_owned()
}

/// Asserts that `answer` is a 200; returns its body.
pub fn expect_ok(answer: (StatusCode, Value)) -> Value {
    let (status, body) = answer;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

/// `POST /_sim/<path>`, which must answer 200 (exactly: the kit's `Control::post` takes any
/// success); the answer.
pub async fn control_ok(t: &TestSim, path: &str, body: Value) -> Value {
    expect_ok(t.control.try_post(path, body).await)
}
