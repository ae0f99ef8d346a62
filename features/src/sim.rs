//! The simulator's `/_sim` control API, the suite's ground truth: what Zerto really ran (tasks), every
//! call each site received, the files inside the guests, faults, the clock and timings.
//!
//! Like every other client of the simulator, the suite talks to it over HTTP with its own JSON, never
//! through the simulator's types.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The simulator's service client (client credentials, Administrator).
pub const CLIENT_ID: &str = "rewind";
/// Its secret: it must never appear in anything a front prints.
pub const CLIENT_SECRET: &str = "rewind-secret";

/// A client of one running simulator's control API.
#[derive(Debug, Clone)]
pub struct SimControl {
    /// The local site's base URL (Boston); `/_sim` answers on either listener.
    pub boston: String,
    /// The peer site's base URL (Denver).
    pub denver: String,
    http: reqwest::Client,
}

/// The kind of task a tagged-checkpoint insert runs as.
pub const INSERT: &str = "InsertTaggedCP";

impl SimControl {
    /// A client of the simulator whose sites listen at these URLs; over HTTPS it trusts exactly the
    /// sites' own certificates (PEM files).
    pub fn new(boston: &str, denver: &str, certificates: &[std::path::PathBuf]) -> SimControl {
        let http = if certificates.is_empty() {
            reqwest::Client::new()
        } else {
            let certs = certificates.iter().map(|path| {
                let pem = std::fs::read(path)
                    .unwrap_or_else(|e| panic!("the certificate {}: {e}", path.display()));
                reqwest::Certificate::from_pem(&pem).expect("a PEM certificate")
            });
            reqwest::Client::builder()
                .tls_certs_only(certs)
                .build()
                .expect("an HTTPS client of the simulator")
        };
        SimControl {
            boston: boston.to_string(),
            denver: denver.to_string(),
            http,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}/_sim/{}", self.boston, path.trim_start_matches('/'))
    }

    /// `GET /_sim/<path>` as JSON.
    pub async fn get(&self, path: &str) -> Value {
        let resp = self
            .http
            .get(self.url(path))
            .send()
            .await
            .unwrap_or_else(|e| panic!("GET /_sim/{path}: {e}"));
        let status = resp.status();
        let body = resp.text().await.unwrap_or_default();
        assert!(status.is_success(), "GET /_sim/{path}: {status} {body}");
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("GET /_sim/{path}: {e}: {body}"))
    }

    /// `POST /_sim/<path>` with a JSON body; the answer as JSON (`null` when empty).
    pub async fn post(&self, path: &str, body: Value) -> Value {
        let resp = self
            .http
            .post(self.url(path))
            .json(&body)
            .send()
            .await
            .unwrap_or_else(|e| panic!("POST /_sim/{path}: {e}"));
        let status = resp.status();
        let text = resp.text().await.unwrap_or_default();
        assert!(
            status.is_success(),
            "POST /_sim/{path} {body}: {status} {text}"
        );
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }

    /// Every task of both sites, oldest first.
    pub async fn tasks(&self) -> Vec<Value> {
        as_list(self.get("tasks").await)
    }

    /// The tagged-checkpoint insert tasks, of one VPG when named.
    pub async fn inserts(&self, vpg: Option<&str>) -> Vec<Value> {
        self.tasks()
            .await
            .into_iter()
            .filter(|t| t["Type"] == INSERT)
            .filter(|t| vpg.is_none_or(|v| t["VpgName"] == v))
            .collect()
    }

    /// The tasks of a type (`FlrJournalMount`, `FailOverTest`, `Clone`, ...).
    pub async fn tasks_of_type(&self, kind: &str) -> Vec<Value> {
        self.tasks()
            .await
            .into_iter()
            .filter(|t| t["Type"] == kind)
            .collect()
    }

    /// Every call either site received (the token endpoint included), oldest first.
    pub async fn calls(&self) -> Vec<Value> {
        as_list(self.get("calls").await)
    }

    /// Adds a fault rule and returns its id.
    pub async fn add_fault(&self, rule: Value) -> Value {
        self.post("faults", rule).await
    }

    /// Task duration and listing lag for tasks started from now on.
    pub async fn timing(&self, task_ms: Option<u64>, listing_lag_ms: Option<u64>) {
        let mut body = json!({});
        if let Some(ms) = task_ms {
            body["TaskDurationMs"] = json!(ms);
        }
        if let Some(ms) = listing_lag_ms {
            body["ListingLagMs"] = json!(ms);
        }
        self.post("timing", body).await;
    }

    /// Moves simulated time forward.
    pub async fn advance(&self, seconds: u64) {
        self.post("clock/advance", json!({"Seconds": seconds}))
            .await;
    }

    /// Starts a resync of a VPG (by name or id) lasting `seconds` of simulated time.
    pub async fn resync(&self, vpg: &str, seconds: u64) {
        self.post(
            &format!("vpgs/{vpg}/resync"),
            json!({"Seconds": seconds, "SubStatus": "FullSync"}),
        )
        .await;
    }

    /// Pins a VPG's status and substatus.
    pub async fn pin_status(&self, vpg: &str, status: i64, substatus: i64) {
        self.post(
            &format!("vpgs/{vpg}/status"),
            json!({"Status": status, "SubStatus": substatus}),
        )
        .await;
    }

    /// A guest file of a VM (by name or id) as it is now, or `None` when there is none.
    pub async fn guest_file(&self, vm: &str, path: &str) -> Option<Vec<u8>> {
        let resp = self
            .http
            .get(self.url(&format!("vms/{vm}/files")))
            .query(&[("path", path)])
            .send()
            .await
            .expect("the control API answers");
        if resp.status() == reqwest::StatusCode::NOT_FOUND {
            return None;
        }
        assert!(
            resp.status().is_success(),
            "GET file {path} of {vm}: {}",
            resp.status()
        );
        Some(resp.bytes().await.expect("the file's bytes").to_vec())
    }

    /// Writes a guest file of a VM now, as an agent's change would.
    pub async fn change_guest_file(&self, vm: &str, path: &str, content: &[u8]) {
        let resp = self
            .http
            .put(self.url(&format!("vms/{vm}/files")))
            .query(&[("path", path)])
            .body(content.to_vec())
            .send()
            .await
            .expect("the control API answers");
        assert!(
            resp.status().is_success(),
            "PUT file {path} of {vm}: {}",
            resp.status()
        );
    }

    /// A VPG's identifier, read from the local site's `/v1/vpgs` with a token of the service client
    /// (the control API names VPGs by name, but fault paths need the identifier).
    pub async fn vpg_id(&self, name: &str) -> String {
        let token: Value = self
            .http
            .post(format!(
                "{}/auth/realms/zerto/protocol/openid-connect/token",
                self.boston
            ))
            .form(&[
                ("grant_type", "client_credentials"),
                ("client_id", CLIENT_ID),
                ("client_secret", CLIENT_SECRET),
            ])
            .send()
            .await
            .expect("Keycloak answers")
            .json()
            .await
            .expect("a token");
        let vpgs: Value = self
            .http
            .get(format!("{}/v1/vpgs", self.boston))
            .query(&[("name", name)])
            .bearer_auth(token["access_token"].as_str().expect("an access token"))
            .send()
            .await
            .expect("the ZVM answers")
            .json()
            .await
            .expect("a list of VPGs");
        vpgs[0]["VpgIdentifier"]
            .as_str()
            .unwrap_or_else(|| panic!("no VPG named {name}: {vpgs}"))
            .to_string()
    }

    /// Inserts a tagged checkpoint as another client would (a ZVM user, `admin`), and returns its
    /// task id.
    pub async fn insert_as_another_client(&self, vpg: &str, name: &str) -> String {
        let token: Value = self
            .http
            .post(format!(
                "{}/auth/realms/zerto/protocol/openid-connect/token",
                self.boston
            ))
            .form(&[
                ("grant_type", "password"),
                ("client_id", "zerto-client"),
                ("username", "admin"),
                ("password", "admin"),
            ])
            .send()
            .await
            .expect("Keycloak answers")
            .json()
            .await
            .expect("a token");
        let id = self.vpg_id(vpg).await;
        let task: Value = self
            .http
            .post(format!("{}/v1/vpgs/{id}/checkpoints", self.boston))
            .bearer_auth(token["access_token"].as_str().expect("an access token"))
            .json(&json!({"CheckpointName": name}))
            .send()
            .await
            .expect("the ZVM answers")
            .json()
            .await
            .expect("a task id");
        task.as_str().expect("a task id").to_string()
    }

    /// Polls the tasks until `pred` holds for one of them, and returns it; panics with what was seen
    /// when `within` runs out.
    pub async fn wait_for_task(
        &self,
        what: &str,
        within: Duration,
        pred: impl Fn(&Value) -> bool,
    ) -> Value {
        let deadline = Instant::now() + within;
        loop {
            let tasks = self.tasks().await;
            if let Some(t) = tasks.iter().find(|t| pred(t)) {
                return t.clone();
            }
            assert!(
                Instant::now() < deadline,
                "{what} did not happen within {within:?}; the tasks: {}",
                Value::from(tasks)
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

fn as_list(v: Value) -> Vec<Value> {
    match v {
        Value::Array(items) => items,
        other => panic!("expected a list, got {other}"),
    }
}
