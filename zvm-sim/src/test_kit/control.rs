//! A typed client of the simulator's `/_sim` control API: the ground truth of every test (what
//! Zerto really ran, every call each site received, the files inside the guests) and the levers
//! (faults, the clock, timings, resyncs, status pins).

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::known::{DEADLINE, INSERT, TOKEN_PATH};

/// A client of one running simulator's control API (either site's listener serves it).
#[derive(Debug, Clone)]
pub struct Control {
    http: reqwest::Client,
    base: String,
}

impl Control {
    /// A client of the control API served at `base` (a site's URL).
    pub fn new(base: &str) -> Control {
        Control::with_client(reqwest::Client::new(), base)
    }

    /// The same, over an HTTP client the caller built (for example one that trusts the sites'
    /// certificates over HTTPS).
    pub fn with_client(http: reqwest::Client, base: &str) -> Control {
        Control {
            http,
            base: base.trim_end_matches('/').to_owned(),
        }
    }

    /// The HTTP client it uses.
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// The URL of the site whose listener it uses.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The URL of a control path; `path` may be given as `tasks`, `/tasks` or `/_sim/tasks`.
    fn url(&self, path: &str) -> String {
        let path = path.trim_start_matches('/');
        let path = path.strip_prefix("_sim/").unwrap_or(path);
        format!("{}/_sim/{path}", self.base)
    }

    /// Any control request; its status and JSON body (`Null` when empty or not JSON).
    pub async fn request(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut request = self.http.request(method.clone(), self.url(path));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request
            .send()
            .await
            .unwrap_or_else(|e| panic!("{method} /_sim/{path}: {e}"));
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// A control request that must succeed; its JSON body.
    async fn ok(&self, method: Method, path: &str, body: Option<Value>) -> Value {
        let (status, answer) = self.request(method.clone(), path, body.clone()).await;
        assert!(
            status.is_success(),
            "{method} /_sim/{path} {}: {status} {answer}",
            body.unwrap_or(Value::Null)
        );
        answer
    }

    /// `GET /_sim/<path>`, which must succeed.
    pub async fn get(&self, path: &str) -> Value {
        self.ok(Method::GET, path, None).await
    }

    /// `POST /_sim/<path>` with a JSON body, which must succeed; the answer.
    pub async fn post(&self, path: &str, body: Value) -> Value {
        self.ok(Method::POST, path, Some(body)).await
    }

    /// `POST /_sim/<path>` with a JSON body; status and answer, for tests of refusals.
    pub async fn try_post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.request(Method::POST, path, Some(body)).await
    }

    /// `DELETE /_sim/<path>`, which must succeed.
    pub async fn delete(&self, path: &str) {
        self.ok(Method::DELETE, path, None).await;
    }

    /// The whole world as the simulator saves it (`GET /_sim/state`).
    pub async fn state(&self) -> Value {
        self.get("state").await
    }

    /// Every token the simulator issued since it started, live or revoked, as its saved state
    /// holds them (for tests that prove no token leaks).
    pub async fn issued_tokens(&self) -> Vec<String> {
        let state = self.state().await;
        let mut strings = Vec::new();
        strings_in(&state["Auth"], &mut strings);
        strings.retain(|s| s.len() >= 32);
        strings
    }

    /// Every VPG of both sites (`GET /_sim/vpgs`).
    pub async fn vpgs(&self) -> Vec<Value> {
        list(self.get("vpgs").await)
    }

    /// The identifier of the VPG named `name` (names are unique in a world).
    pub async fn vpg_id(&self, name: &str) -> String {
        let vpgs = self.vpgs().await;
        vpgs.iter()
            .find(|v| v["VpgName"] == name)
            .and_then(|v| v["VpgIdentifier"].as_str())
            .unwrap_or_else(|| panic!("no VPG named {name} in {}", Value::from(vpgs.clone())))
            .to_owned()
    }

    /// Waits ([`DEADLINE`] at most) until either site received a call whose path starts with
    /// `prefix`.
    pub async fn until_a_call_to(&self, prefix: &str) {
        let start = Instant::now();
        while self.calls_to(prefix).await.is_empty() {
            assert!(
                start.elapsed() < DEADLINE,
                "no call to {prefix} within {DEADLINE:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Every task of both sites that a ZVM still lists, oldest first.
    pub async fn tasks(&self) -> Vec<Value> {
        list(self.get("tasks").await)
    }

    /// The task with this identifier, of either site; it must exist.
    pub async fn task(&self, id: &str) -> Value {
        let tasks = self.tasks().await;
        let found = tasks.into_iter().find(|t| t["TaskIdentifier"] == id);
        found.unwrap_or_else(|| panic!("Zerto has no task {id}"))
    }

    /// The tasks of one type (`InsertTaggedCP`, `FlrJournalMount`, `FailOverTest`, `Clone`, ...).
    pub async fn tasks_of_type(&self, kind: &str) -> Vec<Value> {
        let mut tasks = self.tasks().await;
        tasks.retain(|t| t["Type"] == kind);
        tasks
    }

    /// The tagged-checkpoint insert tasks, of one VPG (by name) when named.
    pub async fn inserts(&self, vpg: Option<&str>) -> Vec<Value> {
        let mut tasks = self.tasks_of_type(INSERT).await;
        tasks.retain(|t| vpg.is_none_or(|v| t["VpgName"] == v));
        tasks
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
            if let Some(task) = tasks.iter().find(|t| pred(t)) {
                return task.clone();
            }
            assert!(
                Instant::now() < deadline,
                "{what} did not happen within {within:?}; the tasks: {}",
                Value::from(tasks)
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits ([`DEADLINE`] at most) until a first insert task exists: a guard is under way.
    pub async fn until_an_insert_started(&self) {
        self.wait_for_task("an insert", DEADLINE, |t| t["Type"] == INSERT)
            .await;
    }

    /// Every retention set of Extended Journal Copy still kept, of both sites, oldest first
    /// (`GET /_sim/retention-sets`): `RetentionSetIdentifier`, `VpgName`, `RepositoryName`, `Site`,
    /// `CheckpointIdentifier`, `Tag`, `PointInTime`, `Written`, `ExpiryDate`, `VmIdentifiers`.
    pub async fn retention_sets(&self) -> Vec<Value> {
        list(self.get("retention-sets").await)
    }

    /// The retention sets of the VPG named `vpg`.
    pub async fn retention_sets_of(&self, vpg: &str) -> Vec<Value> {
        let mut sets = self.retention_sets().await;
        sets.retain(|s| s["VpgName"] == vpg);
        sets
    }

    /// Every call either site received (the token endpoint included), oldest first.
    pub async fn calls(&self) -> Vec<Value> {
        list(self.get("calls").await)
    }

    /// Empties the call log.
    pub async fn clear_calls(&self) {
        self.delete("calls").await;
    }

    /// The calls whose path starts with `prefix` (case-insensitive), as `(Site, Method, Path, Status)`.
    pub async fn calls_to(&self, prefix: &str) -> Vec<(String, String, String, i64)> {
        let prefix = prefix.to_lowercase();
        let text = |c: &Value, key: &str| c[key].as_str().unwrap_or_default().to_owned();
        self.calls()
            .await
            .into_iter()
            .filter(|c| text(c, "Path").to_lowercase().starts_with(&prefix))
            .map(|c| {
                let status = c["Status"].as_i64().unwrap_or(-1);
                (
                    text(&c, "Site"),
                    text(&c, "Method"),
                    text(&c, "Path"),
                    status,
                )
            })
            .collect()
    }

    /// How many token requests reached either site.
    pub async fn token_requests(&self) -> usize {
        self.count_calls(|c| c["Method"] == "POST" && path_of(c).eq_ignore_ascii_case(TOKEN_PATH))
            .await
    }

    /// How many calls answered 401.
    pub async fn unauthorized_calls(&self) -> usize {
        self.count_calls(|c| c["Status"] == 401).await
    }

    /// How many insert POSTs reached either site.
    pub async fn insert_posts(&self) -> usize {
        self.count_calls(|c| {
            let path = path_of(c).to_lowercase();
            c["Method"] == "POST" && path.starts_with("/v1/vpgs/") && path.ends_with("/checkpoints")
        })
        .await
    }

    async fn count_calls(&self, pred: impl Fn(&Value) -> bool) -> usize {
        self.calls().await.iter().filter(|c| pred(c)).count()
    }

    /// The fault rules with their `Matched` and `Fired` counts.
    pub async fn faults(&self) -> Value {
        self.get("faults").await
    }

    /// Adds a fault rule (`Method`, `Path` pattern, `Probability`, `Count`, `Action`, ...); the
    /// rule as the simulator took it.
    pub async fn fault(&self, rule: Value) -> Value {
        self.post("faults", rule).await
    }

    /// Removes every fault rule.
    pub async fn clear_faults(&self) {
        self.delete("faults").await;
    }

    /// The realm's keys (`Kid`, `Published`, `Signing`) and its discovery overrides.
    pub async fn realm(&self) -> Value {
        self.get("realm").await
    }

    /// Rotates the realm to a new signing key (the older ones stay published); the new key's id.
    pub async fn rotate_realm_key(&self) -> String {
        let realm = self.ok(Method::POST, "realm/keys", None).await;
        let signing = realm["Keys"].as_array().and_then(|keys| {
            keys.iter()
                .find(|k| k["Signing"] == true)
                .and_then(|k| k["Kid"].as_str())
        });
        signing.expect("a signing key after rotation").to_owned()
    }

    /// Takes the realm's key `kid` out of its JWKS.
    pub async fn withdraw_realm_key(&self, kid: &str) {
        self.delete(&format!("realm/keys/{kid}")).await;
    }

    /// Makes the realm's OpenID configuration name `issuer` and `jwks_uri` instead of its own
    /// (`None`: its own).
    pub async fn realm_discovery(&self, issuer: Option<&str>, jwks_uri: Option<&str>) {
        let body = json!({"Issuer": issuer, "JwksUri": jwks_uri});
        self.ok(Method::PUT, "realm/discovery", Some(body)).await;
    }

    /// Task duration and listing lag, in milliseconds, for tasks started from now on.
    pub async fn timing(&self, task_ms: u64, lag_ms: u64) {
        self.post(
            "timing",
            json!({"TaskDurationMs": task_ms, "ListingLagMs": lag_ms}),
        )
        .await;
    }

    /// The task duration alone, for tasks started from now on.
    pub async fn task_duration(&self, ms: u64) {
        self.post("timing", json!({"TaskDurationMs": ms})).await;
    }

    /// Moves simulated time forward and processes what fell due on the way.
    pub async fn advance(&self, seconds: impl Into<f64>) {
        self.post("clock/advance", json!({"Seconds": seconds.into()}))
            .await;
    }

    /// The simulated time now.
    pub async fn now(&self) -> String {
        let clock = self.get("clock").await;
        clock["Now"].as_str().expect("Now").to_owned()
    }

    /// Starts a resync of a VPG (name or identifier) for `seconds`, with the default substatus.
    pub async fn resync(&self, vpg: &str, seconds: u64) -> Value {
        self.post(&format!("vpgs/{vpg}/resync"), json!({"Seconds": seconds}))
            .await
    }

    /// Starts a resync of a VPG for `seconds`, showing `substatus` (a name such as `FullSync`).
    pub async fn resync_as(&self, vpg: &str, seconds: u64, substatus: &str) -> Value {
        let body = json!({"Seconds": seconds, "SubStatus": substatus});
        self.post(&format!("vpgs/{vpg}/resync"), body).await
    }

    /// A burst of writes at a VPG (name or identifier) now, as much as `minutes` of its usual
    /// writing, as an agent rewriting a database makes one; the journal after it, as
    /// [`Control::journal`] shows it. A burst past the journal's headroom promotes its oldest
    /// checkpoints (tags included) early.
    pub async fn journal_burst(&self, vpg: &str, minutes: f64) -> Value {
        let body = json!({"Minutes": minutes});
        self.post(&format!("vpgs/{vpg}/journal-burst"), body).await
    }

    /// The journal of a VPG (name or identifier): `ConfiguredHistoryInMinutes`,
    /// `ActualHistoryInMinutes`, `LimitInMinutes` (its hard limit, in minutes of usual writing),
    /// `BurstMinutes`, `Full`, the `Status` the VPG shows and its `EarliestCheckpoint`.
    pub async fn journal(&self, vpg: &str) -> Value {
        self.get(&format!("vpgs/{vpg}/journal")).await
    }

    /// Pins a VPG's status and substatus (numbers or names).
    pub async fn pin_status(&self, vpg: &str, status: Value, substatus: Value) -> Value {
        let body = json!({"Status": status, "SubStatus": substatus});
        self.post(&format!("vpgs/{vpg}/status"), body).await
    }

    /// A guest file of a VM (name or identifier) as it is now, or `None` when there is none.
    pub async fn try_file(&self, vm: &str, path: &str) -> Option<Vec<u8>> {
        let response = self.files_request(Method::GET, vm, path).send().await;
        let response = response.expect("the control API answers");
        if response.status() == StatusCode::NOT_FOUND {
            return None;
        }
        assert!(
            response.status().is_success(),
            "GET {path} of {vm}: {}",
            response.status()
        );
        Some(response.bytes().await.expect("the file's bytes").to_vec())
    }

    /// A guest file of a VM as it is now; it must exist.
    pub async fn file(&self, vm: &str, path: &str) -> Vec<u8> {
        let file = self.try_file(vm, path).await;
        file.unwrap_or_else(|| panic!("{vm} has no file {path}"))
    }

    /// Writes a guest file of a VM now, as an agent acting in the guest would.
    pub async fn put_file(&self, vm: &str, path: &str, content: &[u8]) {
        let request = self
            .files_request(Method::PUT, vm, path)
            .body(content.to_vec());
        let response = request.send().await.expect("the control API answers");
        assert!(
            response.status().is_success(),
            "PUT {path} of {vm}: {}",
            response.status()
        );
    }

    /// Deletes a guest file of a VM now, as an agent acting in the guest would (earlier checkpoints
    /// keep it).
    pub async fn delete_file(&self, vm: &str, path: &str) {
        let response = self.files_request(Method::DELETE, vm, path).send().await;
        let response = response.expect("the control API answers");
        assert!(
            response.status().is_success(),
            "DELETE {path} of {vm}: {}",
            response.status()
        );
    }

    fn files_request(&self, method: Method, vm: &str, path: &str) -> reqwest::RequestBuilder {
        let url = self.url(&format!("vms/{vm}/files"));
        self.http.request(method, url).query(&[("path", path)])
    }
}

/// A task's state in `/_sim/tasks`: a number, or a name.
pub fn state_of(task: &Value) -> i64 {
    match &task["State"] {
        Value::Number(n) => n.as_i64().unwrap_or(-1),
        Value::String(s) => match s.as_str() {
            "InProgress" => 1,
            "Failed" => 4,
            "Stopped" => 5,
            "Completed" => 6,
            other => other.parse().unwrap_or(-1),
        },
        _ => -1,
    }
}

/// Every string inside `value`, depth first.
pub fn strings_in(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings_in(v, out)),
        Value::Object(fields) => fields.values().for_each(|v| strings_in(v, out)),
        _ => {}
    }
}

fn path_of(call: &Value) -> &str {
    call["Path"].as_str().unwrap_or_default()
}

fn list(value: Value) -> Vec<Value> {
    match value {
        Value::Array(items) => items,
        other => panic!("expected a list, got {other}"),
    }
}

/// The text under `key` of each item of a JSON list (`["sda1", "sdb1"]` of `PathItems` by `Path`).
pub fn texts<'a>(list: &'a Value, key: &str) -> Vec<&'a str> {
    let items = list.as_array().unwrap_or_else(|| panic!("a list: {list}"));
    let text = |item: &'a Value| {
        item[key]
            .as_str()
            .unwrap_or_else(|| panic!("{key} in {item}"))
    };
    items.iter().map(text).collect()
}

/// Asserts that no secret appears in any of the places (named, with their text); a failure shows
/// only the secret's first eight characters.
pub fn assert_no_secret(secrets: &[String], places: &[(&str, &str)]) {
    for secret in secrets {
        for (place, text) in places {
            let shown = &secret[..8.min(secret.len())];
            assert!(
                !text.contains(secret.as_str()),
                "a secret ({shown}...) reached {place}"
            );
        }
    }
}
