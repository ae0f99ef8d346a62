//! A small authenticated client of one site's ZVM API, speaking JSON as any ZVM client would.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::known::{CLIENT_ID, CLIENT_SECRET, DEADLINE, TOKEN_PATH};

/// Requests a token; returns the raw response.
pub async fn token(http: &reqwest::Client, base: &str, form: &[(&str, &str)]) -> reqwest::Response {
    http.post(format!("{base}{TOKEN_PATH}"))
        .form(form)
        .send()
        .await
        .expect("the token endpoint answers")
}

/// Requests a token with the password grant through the public client `zerto-client`, as an
/// operator would with curl; returns the raw response.
pub async fn password_grant(
    http: &reqwest::Client,
    base: &str,
    user: &str,
    password: &str,
) -> reqwest::Response {
    let form = [
        ("grant_type", "password"),
        ("client_id", "zerto-client"),
        ("username", user),
        ("password", password),
    ];
    token(http, base, &form).await
}

/// One site, with a bearer token.
#[derive(Clone)]
pub struct Site {
    /// The site's URL.
    pub base: String,
    /// The HTTP client it uses.
    pub http: reqwest::Client,
    /// Its bearer token (never printed: `Debug` leaves it out).
    pub token: String,
}

impl std::fmt::Debug for Site {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Site")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl Site {
    /// Logs in with the password grant.
    pub async fn login(http: &reqwest::Client, base: &str, user: &str, password: &str) -> Site {
        let response = password_grant(http, base, user, password).await;
        Site::from_token_response(http, base, response).await
    }

    /// Logs in as the service client, with the client-credentials grant.
    pub async fn service(http: &reqwest::Client, base: &str) -> Site {
        let form = [
            ("grant_type", "client_credentials"),
            ("client_id", CLIENT_ID),
            ("client_secret", CLIENT_SECRET),
        ];
        let response = token(http, base, &form).await;
        Site::from_token_response(http, base, response).await
    }

    async fn from_token_response(
        http: &reqwest::Client,
        base: &str,
        response: reqwest::Response,
    ) -> Site {
        assert_eq!(response.status(), StatusCode::OK, "a token for {base}");
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

    /// A request with the bearer token; status and JSON body (`Null` when empty).
    pub async fn request(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> (StatusCode, Value) {
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.bearer_auth(&self.token).send().await;
        let response = response.expect("the site answers");
        let status = response.status();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// `GET` with the bearer token; status and JSON body (`Null` when empty).
    pub async fn get(&self, path_and_query: &str) -> (StatusCode, Value) {
        self.request(Method::GET, path_and_query, None).await
    }

    /// `GET` that must answer 200.
    pub async fn get_ok(&self, path_and_query: &str) -> Value {
        let (status, body) = self.get(path_and_query).await;
        assert_eq!(status, StatusCode::OK, "GET {path_and_query}: {body}");
        body
    }

    /// `POST` a JSON body with the bearer token.
    pub async fn post(&self, path: &str, body: &Value) -> (StatusCode, Value) {
        self.request(Method::POST, path, Some(body)).await
    }

    /// `DELETE` with the bearer token; status and JSON body (`Null` when empty).
    pub async fn delete(&self, path: &str) -> (StatusCode, Value) {
        self.request(Method::DELETE, path, None).await
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

    /// The state of a task (`Status.State`: 1 running, 4 failed, 5 stopped, 6 completed).
    pub async fn task_state(&self, id: &str) -> u64 {
        let task = self.task(id).await;
        let state = task["Status"]["State"].as_u64();
        state.unwrap_or_else(|| panic!("a State in task {id}: {task}"))
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

    /// Asks for an FLR session of `vm` in `vpg` at `checkpoint` (`POST /v1/flrs`); status and
    /// answer (the session id, as a JSON string, when accepted).
    pub async fn start_flr(&self, vpg: &str, vm: &str, checkpoint: &str) -> (StatusCode, Value) {
        let body = json!({"Jflr": {"VpgIdentifier": vpg, "VmIdentifier": vm,
                                   "CheckpointIdentifier": checkpoint}});
        self.post("/v1/flrs", &body).await
    }

    /// Starts a manual Extended Journal Copy run of a VPG from `checkpoint` (its latest without
    /// one), `POST /v1/ltr/vpgs/{id}/retentionstart`; returns the `ManualRetention` task id.
    pub async fn start_retention(&self, vpg_id: &str, checkpoint: Option<&str>) -> String {
        let body = match checkpoint {
            Some(id) => json!({ "checkpointId": id }),
            None => json!({}),
        };
        let path = format!("/v1/ltr/vpgs/{vpg_id}/retentionstart");
        let (status, answer) = self.post(&path, &body).await;
        assert_eq!(status, StatusCode::OK, "{path}: {answer}");
        answer.as_str().expect("a JSON string task id").to_owned()
    }

    /// The full retention sets this site lists for a VPG
    /// (`GET /v1/ltr/catalog/fullretentionsets?vpgIdentifier=`), oldest first.
    pub async fn retention_sets(&self, vpg_id: &str) -> Vec<Value> {
        let answer = self
            .get_ok(&format!(
                "/v1/ltr/catalog/fullretentionsets?vpgIdentifier={vpg_id}"
            ))
            .await;
        answer["RetentionSets"]
            .as_array()
            .unwrap_or_else(|| panic!("RetentionSets in {answer}"))
            .clone()
    }

    /// Asks for an FLR session of `vm` from a retention set of `vpg` (`POST /v1/flrs` with
    /// `Bflr`); status and answer (the session id, as a JSON string, when accepted).
    pub async fn start_bflr(
        &self,
        vpg: &str,
        vm: &str,
        retention_set: &str,
    ) -> (StatusCode, Value) {
        let body = json!({"Bflr": {"VpgIdentifier": vpg, "VmIdentifier": vm,
                                   "RetentionSetIdentifier": retention_set}});
        self.post("/v1/flrs", &body).await
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
