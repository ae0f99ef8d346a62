//! The simulator's ground truth, read from `/_sim/calls` and `/_sim/tasks`: what the client really
//! sent and what really happened, whatever the client believes.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use chrono::DateTime;
use serde_json::Value;

/// Keycloak's token path on the appliance.
pub const TOKEN_PATH: &str = "/auth/realms/zerto/protocol/openid-connect/token";
/// The task type of a tagged-checkpoint insert.
pub const INSERT_TASK_TYPE: &str = "InsertTaggedCP";

/// What the simulator saw during one bench.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GroundTruth {
    /// Token requests per site name.
    pub token_requests: BTreeMap<String, usize>,
    /// Answers 401 (a refused or expired token, or refused credentials).
    pub unauthorized: usize,
    /// Insert tasks run.
    pub inserts: usize,
    /// Insert tasks that ended Failed (4) or Stopped (5).
    pub failed_inserts: usize,
    /// Insert tasks still running when the truth was read.
    pub running_inserts: usize,
    /// Each Completed insert task's real duration (its end minus its start, on the simulated clock),
    /// by task identifier (lower case).
    pub insert_durations: HashMap<String, Duration>,
    /// Calls by `METHOD /path` with identifiers replaced by `{id}`, to see what a guard costs.
    pub calls_by_kind: BTreeMap<String, usize>,
}

impl GroundTruth {
    /// Reads the answers of `GET /_sim/calls` and `GET /_sim/tasks` (PascalCase JSON arrays).
    pub fn from_json(calls: &Value, tasks: &Value) -> GroundTruth {
        let mut truth = GroundTruth::default();
        for call in calls.as_array().into_iter().flatten() {
            let path = call["Path"].as_str().unwrap_or_default();
            let method = call["Method"].as_str().unwrap_or_default();
            if path == TOKEN_PATH {
                let site = call["Site"].as_str().unwrap_or("?").to_string();
                *truth.token_requests.entry(site).or_default() += 1;
            }
            if call["Status"].as_u64() == Some(401) {
                truth.unauthorized += 1;
            }
            *truth
                .calls_by_kind
                .entry(format!("{method} {}", call_kind(path)))
                .or_default() += 1;
        }
        for task in tasks.as_array().into_iter().flatten() {
            if task["Type"].as_str() != Some(INSERT_TASK_TYPE) {
                continue;
            }
            truth.inserts += 1;
            match task["State"].as_u64() {
                Some(4 | 5) => truth.failed_inserts += 1,
                Some(1) => truth.running_inserts += 1,
                _ => {}
            }
            let id = task["TaskIdentifier"].as_str().unwrap_or_default();
            let started = task["Started"].as_str().and_then(parse_time);
            let completed = task["Completed"].as_str().and_then(parse_time);
            if let (Some(s), Some(c), Some(6)) = (started, completed, task["State"].as_u64()) {
                let millis = u64::try_from(c - s).unwrap_or(0);
                truth
                    .insert_durations
                    .insert(id.to_lowercase(), Duration::from_millis(millis));
            }
        }
        truth
    }

    /// The real duration of a Completed insert task.
    pub fn duration_of(&self, task_id: &str) -> Option<Duration> {
        self.insert_durations.get(&task_id.to_lowercase()).copied()
    }

    /// All token requests.
    pub fn total_token_requests(&self) -> usize {
        self.token_requests.values().sum()
    }

    /// `Boston 1, Denver 1`.
    pub fn token_requests_text(&self) -> String {
        if self.token_requests.is_empty() {
            return "none".into();
        }
        self.token_requests
            .iter()
            .map(|(site, n)| format!("{site} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Milliseconds since the Unix epoch of an RFC 3339 time.
fn parse_time(text: &str) -> Option<i64> {
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.timestamp_millis())
}

/// A path with its identifiers replaced by `{id}`: a segment with a digit that is not a version
/// (`v1`), or shaped like a GUID, is an identifier (VPG, VM and site GUIDs, task ids, checkpoint ids).
fn call_kind(path: &str) -> String {
    path.split('/')
        .map(|segment| {
            let is_version = segment.len() <= 3
                && segment.starts_with('v')
                && segment[1..].parse::<u8>().is_ok();
            let is_guid = segment.len() >= 32 && segment.contains('-');
            if (segment.chars().any(|c| c.is_ascii_digit()) && !is_version) || is_guid {
                "{id}"
            } else {
                segment
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn token_requests_are_counted_per_site_and_401s_anywhere() {
        let calls = json!([
            {"Site": "Boston", "Method": "POST", "Path": TOKEN_PATH, "Status": 200},
            {"Site": "Denver", "Method": "POST", "Path": TOKEN_PATH, "Status": 200},
            {"Site": "Boston", "Method": "GET", "Path": "/v1/vms", "Status": 200},
            {"Site": "Boston", "Method": "GET", "Path": "/v1/vms", "Status": 401},
            {"Site": "Boston", "Method": "POST", "Path": TOKEN_PATH, "Status": 401},
        ]);
        let truth = GroundTruth::from_json(&calls, &json!([]));
        assert_eq!(truth.token_requests.get("Boston"), Some(&2));
        assert_eq!(truth.token_requests.get("Denver"), Some(&1));
        assert_eq!(truth.total_token_requests(), 3);
        assert_eq!(truth.unauthorized, 2);
        assert_eq!(truth.token_requests_text(), "Boston 2, Denver 1");
        assert_eq!(truth.calls_by_kind.get("GET /v1/vms"), Some(&2));
    }

    #[test]
    fn inserts_are_counted_and_completed_ones_keep_their_real_duration() {
        let tasks = json!([
            {"TaskIdentifier": "A.S", "Type": "InsertTaggedCP", "State": 6,
             "Started": "2026-01-01T00:00:00.000Z", "Completed": "2026-01-01T00:00:00.047Z"},
            {"TaskIdentifier": "B.S", "Type": "InsertTaggedCP", "State": 4,
             "Started": "2026-01-01T00:00:01.000Z", "Completed": "2026-01-01T00:00:01.005Z"},
            {"TaskIdentifier": "C.S", "Type": "InsertTaggedCP", "State": 1,
             "Started": "2026-01-01T00:00:02.000Z", "Completed": null},
            {"TaskIdentifier": "D.S", "Type": "FailOverTest", "State": 4,
             "Started": "2026-01-01T00:00:02.000Z", "Completed": "2026-01-01T00:00:03.000Z"},
        ]);
        let truth = GroundTruth::from_json(&json!([]), &tasks);
        assert_eq!(truth.inserts, 3);
        assert_eq!(truth.failed_inserts, 1);
        assert_eq!(truth.running_inserts, 1);
        assert_eq!(truth.duration_of("a.s"), Some(Duration::from_millis(47)));
        assert_eq!(
            truth.duration_of("B.S"),
            None,
            "a failed insert has no floor"
        );
    }

    #[test]
    fn identifiers_in_paths_are_replaced_but_the_version_is_kept() {
        assert_eq!(
            call_kind("/v1/vpgs/6f1c2a9e-0b1d-4c55-9d2e-3a4b5c6d7e8f/checkpoints"),
            "/v1/vpgs/{id}/checkpoints"
        );
        assert_eq!(call_kind("/v1/tasks/1a2b.3c4d"), "/v1/tasks/{id}");
        assert_eq!(call_kind("/v1/localsite"), "/v1/localsite");
    }
}
