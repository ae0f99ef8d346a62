//! The one test helper: a fresh seeded simulator on free ports, with a small authenticated client
//! per site and shortcuts for the control API. Tests that need time to pass freeze the clock and
//! advance it; tests that let real time run poll with a generous deadline.

#![allow(
    dead_code,
    reason = "each test binary uses a different part of the helper"
)]

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use zvm_sim::{Options, Simulator};

/// How long a test waits for something that should happen within milliseconds.
pub const DEADLINE: Duration = Duration::from_secs(15);

/// Logs go nowhere unless TEST_LOG is set.
fn init_logging() {
    if std::env::var_os("TEST_LOG").is_some() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter("zvm_sim=debug")
            .with_test_writer()
            .try_init();
    }
}

/// A running simulator and an HTTP client.
pub struct TestSim {
    pub sim: Simulator,
    pub http: reqwest::Client,
}

/// A fresh simulator with `Options::for_tests(seed)`.
pub async fn spawn(seed: u64) -> TestSim {
    spawn_with(Options::for_tests(seed)).await
}

/// A fresh simulator with these options.
pub async fn spawn_with(options: Options) -> TestSim {
    init_logging();
    let sim = zvm_sim::start(options).await.expect("the simulator starts");
    TestSim {
        sim,
        http: reqwest::Client::new(),
    }
}

/// A fresh simulator whose clock is frozen, so time moves only through `advance`.
pub async fn spawn_frozen(seed: u64) -> TestSim {
    spawn_with(Options {
        time_scale: 0.0,
        ..Options::for_tests(seed)
    })
    .await
}

impl TestSim {
    /// Boston's URL.
    pub fn boston_url(&self) -> &str {
        &self.sim.local().url
    }

    /// Denver's URL.
    pub fn denver_url(&self) -> &str {
        &self.sim.peer().url
    }

    /// Boston, logged in as admin.
    pub async fn boston(&self) -> Site {
        Site::login(&self.http, self.boston_url(), "admin", "admin").await
    }

    /// Denver, logged in as admin.
    pub async fn denver(&self) -> Site {
        Site::login(&self.http, self.denver_url(), "admin", "admin").await
    }

    /// `GET /_sim/...` (through Boston).
    pub async fn control_get(&self, path: &str) -> Value {
        let response = self
            .http
            .get(format!("{}/_sim/{path}", self.boston_url()))
            .send()
            .await
            .expect("the control API answers");
        assert_eq!(response.status(), StatusCode::OK, "GET /_sim/{path}");
        response.json().await.expect("control JSON")
    }

    /// `POST /_sim/...` with a JSON body; returns status and body.
    pub async fn control_post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        let response = self
            .http
            .post(format!("{}/_sim/{path}", self.boston_url()))
            .json(&body)
            .send()
            .await
            .expect("the control API answers");
        let status = response.status();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// `POST /_sim/clock/advance`.
    pub async fn advance(&self, seconds: f64) {
        let (status, body) = self
            .control_post("clock/advance", json!({ "Seconds": seconds }))
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }

    /// The simulated time now, as the clock reports it.
    pub async fn now(&self) -> String {
        self.control_get("clock").await["Now"]
            .as_str()
            .expect("Now")
            .to_owned()
    }

    /// A guest file now, through `GET /_sim/vms/{vm}/files`.
    pub async fn read_file(&self, vm: &str, path: &str) -> Vec<u8> {
        let response = self
            .http
            .get(format!("{}/_sim/vms/{vm}/files", self.boston_url()))
            .query(&[("path", path)])
            .send()
            .await
            .expect("the control API answers");
        assert_eq!(response.status(), StatusCode::OK, "read {vm} {path}");
        response.bytes().await.expect("bytes").to_vec()
    }

    /// Writes a guest file now, through `PUT /_sim/vms/{vm}/files`.
    pub async fn write_file(&self, vm: &str, path: &str, content: &[u8]) {
        let response = self
            .http
            .put(format!("{}/_sim/vms/{vm}/files", self.boston_url()))
            .query(&[("path", path)])
            .body(content.to_vec())
            .send()
            .await
            .expect("the control API answers");
        assert_eq!(response.status(), StatusCode::OK, "write {vm} {path}");
    }

    /// `GET /_sim/calls`.
    pub async fn calls(&self) -> Vec<Value> {
        self.control_get("calls")
            .await
            .as_array()
            .expect("calls")
            .clone()
    }
}

/// Requests a token; returns the raw response.
pub async fn token(http: &reqwest::Client, base: &str, form: &[(&str, &str)]) -> reqwest::Response {
    http.post(format!(
        "{base}/auth/realms/zerto/protocol/openid-connect/token"
    ))
    .form(form)
    .send()
    .await
    .expect("the token endpoint answers")
}

/// One site, with a bearer token.
#[derive(Clone)]
pub struct Site {
    pub base: String,
    pub http: reqwest::Client,
    pub token: String,
}

impl Site {
    /// Logs in with the password grant.
    pub async fn login(http: &reqwest::Client, base: &str, user: &str, password: &str) -> Site {
        let response = token(
            http,
            base,
            &[
                ("grant_type", "password"),
                ("client_id", "zerto-client"),
                ("username", user),
                ("password", password),
            ],
        )
        .await;
        assert_eq!(response.status(), StatusCode::OK);
        let body: Value = response.json().await.expect("token JSON");
        Site {
            base: base.to_owned(),
            http: http.clone(),
            token: body["access_token"]
                .as_str()
                .expect("access_token")
                .to_owned(),
        }
    }

    /// `GET` with the bearer token; status and JSON body (`Null` when empty).
    pub async fn get(&self, path_and_query: &str) -> (StatusCode, Value) {
        let response = self
            .http
            .get(format!("{}{path_and_query}", self.base))
            .bearer_auth(&self.token)
            .send()
            .await
            .expect("the site answers");
        let status = response.status();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// `GET` that must answer 200.
    pub async fn get_ok(&self, path_and_query: &str) -> Value {
        let (status, body) = self.get(path_and_query).await;
        assert_eq!(status, StatusCode::OK, "GET {path_and_query}: {body}");
        body
    }

    /// `POST` a JSON body with the bearer token.
    pub async fn post(&self, path: &str, body: &Value) -> (StatusCode, Value) {
        let response = self
            .http
            .post(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .json(body)
            .send()
            .await
            .expect("the site answers");
        let status = response.status();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// `DELETE` with the bearer token; status and JSON body (`Null` when empty).
    pub async fn delete(&self, path: &str) -> (StatusCode, Value) {
        let response = self
            .http
            .delete(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .send()
            .await
            .expect("the site answers");
        let status = response.status();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// `GET` of a full URL with the bearer token; the raw response.
    pub async fn fetch(&self, url: &str) -> reqwest::Response {
        self.http
            .get(url)
            .bearer_auth(&self.token)
            .send()
            .await
            .expect("the site answers")
    }

    /// The `VmIdentifier` of the VM with this name in this VPG.
    pub async fn vm_id(&self, vm: &str, vpg: &str) -> String {
        let rows = self
            .get_ok(&format!("/v1/vms?vmName={vm}&vpgName={vpg}"))
            .await;
        rows[0]["VmIdentifier"]
            .as_str()
            .unwrap_or_else(|| panic!("{vm} in {vpg} is visible here: {rows}"))
            .to_owned()
    }

    /// The identifier of the VPG with this name.
    pub async fn vpg_id(&self, name: &str) -> String {
        let vpgs = self.get_ok(&format!("/v1/vpgs?name={name}")).await;
        vpgs[0]["VpgIdentifier"]
            .as_str()
            .unwrap_or_else(|| panic!("VPG {name} is visible here: {vpgs}"))
            .to_owned()
    }

    /// Inserts a tagged checkpoint; returns the task id.
    pub async fn insert(&self, vpg_id: &str, name: &str) -> String {
        let (status, body) = self
            .post(
                &format!("/v1/vpgs/{vpg_id}/checkpoints"),
                &json!({ "CheckpointName": name }),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body.as_str().expect("a JSON string task id").to_owned()
    }

    /// `GET /v1/tasks/{id}`.
    pub async fn task(&self, id: &str) -> Value {
        self.get_ok(&format!("/v1/tasks/{id}")).await
    }

    /// Polls the task until it is terminal (4, 5 or 6).
    pub async fn wait_task(&self, id: &str) -> Value {
        let give_up = tokio::time::Instant::now() + DEADLINE;
        loop {
            let task = self.task(id).await;
            let state = task["Status"]["State"].as_u64().expect("State");
            if matches!(state, 4..=6) {
                return task;
            }
            assert!(
                tokio::time::Instant::now() < give_up,
                "task {id} still running after {DEADLINE:?}: {task}"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// The VPG's listed checkpoints.
    pub async fn checkpoints(&self, vpg_id: &str) -> Vec<Value> {
        self.get_ok(&format!("/v1/vpgs/{vpg_id}/checkpoints"))
            .await
            .as_array()
            .expect("an array")
            .clone()
    }

    /// Inserts a tagged checkpoint, lets it complete and be listed (on a frozen clock), and
    /// returns its `CheckpointIdentifier`.
    pub async fn tag(&self, t: &TestSim, vpg_id: &str, name: &str) -> String {
        let task = self.insert(vpg_id, name).await;
        t.advance(1.0).await;
        assert_eq!(self.task(&task).await["Status"]["State"], 6);
        let tagged = self.tagged(vpg_id, name).await;
        tagged[0]["CheckpointIdentifier"]
            .as_str()
            .expect("a listed tag")
            .to_owned()
    }

    /// The listed checkpoints with this tag.
    pub async fn tagged(&self, vpg_id: &str, tag: &str) -> Vec<Value> {
        self.checkpoints(vpg_id)
            .await
            .into_iter()
            .filter(|c| c["Tag"] == tag)
            .collect()
    }
}
