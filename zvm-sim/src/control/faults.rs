//! `GET|POST|DELETE /_sim/faults` and `DELETE /_sim/faults/{id}`: the fault rules (see
//! `crate::world::faults` for what they do and how they decide).

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderName, HeaderValue, StatusCode};
use serde::Serialize;
use serde_json::Value;

use crate::http::{ApiError, JsonBody, SiteCtx};
use crate::world::faults::{FaultAction, FaultKind, FaultRule, NewRule, PathPattern};
use crate::world::{SiteRole, World};

/// A rule as `/_sim/faults` shows it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub(crate) struct FaultRuleView {
    id: u64,
    method: String,
    path: String,
    site: Option<String>,
    probability: f64,
    count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    after: Option<u64>,
    action: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    body: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    headers: Option<serde_json::Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    latency_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    expires_at: Option<crate::world::clock::SimTime>,
    matched: u64,
    fired: u64,
}

fn view(world: &World, rule: &FaultRule) -> FaultRuleView {
    let (id, matched, fired, rule) = (rule.id, rule.matched, rule.fired, &rule.asked);
    let (status, body, headers, latency_ms) = match &rule.action {
        FaultAction::Respond {
            status,
            body,
            headers,
        } => (
            Some(*status),
            body.clone(),
            Some(
                headers
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                    .collect(),
            ),
            None,
        ),
        FaultAction::Latency { millis } => (None, None, None, Some(*millis)),
        FaultAction::LoseResponse
        | FaultAction::WithholdResponse
        | FaultAction::CutResponse
        | FaultAction::RevokeTokens
        | FaultAction::InsertAsAnotherClient => (None, None, None, None),
    };
    FaultRuleView {
        id,
        method: rule.method.clone().unwrap_or_else(|| "*".to_owned()),
        path: rule.path.as_str().to_owned(),
        site: rule.site.map(|s| world.site(s).name.clone()),
        probability: rule.probability,
        count: rule.count,
        after: rule.after,
        action: rule.action.kind().name(),
        status,
        body,
        headers,
        latency_ms,
        expires_at: rule.expires,
        matched,
        fired,
    }
}

/// `GET /_sim/faults`: every rule, oldest first, with how often it matched and fired.
pub(crate) async fn list(State(ctx): State<SiteCtx>) -> Json<Vec<FaultRuleView>> {
    Json(ctx.with_world(|world, now| {
        world.faults.forget_expired(now);
        world
            .faults
            .rules
            .iter()
            .map(|rule| view(world, rule))
            .collect()
    }))
}

/// `POST /_sim/faults` with one rule: answers it with its `Id`.
pub(crate) async fn add(
    State(ctx): State<SiteCtx>,
    body: JsonBody,
) -> Result<Json<FaultRuleView>, ApiError> {
    add_rule(&ctx, &body).map(Json)
}

/// Checks the rule `body` asks for and adds it: `POST /_sim/faults` and the page's form.
pub(crate) fn add_rule(ctx: &SiteCtx, body: &JsonBody) -> Result<FaultRuleView, ApiError> {
    // A misspelt key (`Cout`, `Latency`) would otherwise be a rule that does something else than
    // asked, quietly: refuse it, naming the keys a rule takes.
    if let Some(key) = body.keys().find(|k| !RULE_KEYS.contains(k)) {
        return Err(ApiError::BadRequest(format!(
            "A fault rule has no key '{key}': it takes Path, Method, Site, Probability, Count, \
             ExpiresInSeconds, After, Action, Status, Body, Headers and LatencyMs."
        )));
    }
    let method = match body.text("Method")? {
        None | Some("*") => None,
        Some(m) if m.bytes().all(|b| b.is_ascii_alphabetic()) && !m.is_empty() => {
            Some(m.to_ascii_uppercase())
        }
        Some(m) => {
            return Err(ApiError::BadRequest(format!(
                "Method '{m}' is not an HTTP method: use GET, POST, DELETE, ... or * for any."
            )));
        }
    };
    let path = PathPattern::parse(body.required_text("Path")?)
        .map_err(|e| ApiError::BadRequest(e.to_string()))?;
    let probability = body.number("Probability")?.unwrap_or(1.0);
    if !(0.0..=1.0).contains(&probability) {
        return Err(ApiError::BadRequest(format!(
            "Probability must be between 0 and 1 (got {probability})."
        )));
    }
    let count = whole(body, "Count")?;
    if count == Some(0) {
        return Err(ApiError::BadRequest(
            "Count must be 1 or more; leave it out for no limit.".to_owned(),
        ));
    }
    let action = action(body)?;
    let after = whole(body, "After")?;
    let expires_in = body.number("ExpiresInSeconds")?;
    if let Some(secs) = expires_in.filter(|s| !(*s > 0.0 && *s <= MAX_EXPIRY_SECS)) {
        return Err(ApiError::BadRequest(format!(
            "ExpiresInSeconds must be more than 0 and at most {MAX_EXPIRY_SECS} (a year; got \
             {secs}); leave it out for a rule that lasts."
        )));
    }
    let site_name = body.text("Site")?.map(str::to_owned);
    ctx.with_world(|world, now| {
        if let Some(after) = after.filter(|&a| !world.faults.contains(a)) {
            return Err(ApiError::BadRequest(format!(
                "After is {after}, and there is no fault rule {after}: give the Id of a rule \
                 added before this one (GET /_sim/faults lists them)."
            )));
        }
        let site = match site_name {
            None => None,
            Some(name) => Some(
                SiteRole::BOTH
                    .into_iter()
                    .find(|&s| world.site(s).name.eq_ignore_ascii_case(&name))
                    .ok_or_else(|| {
                        ApiError::BadRequest(format!(
                            "Site '{name}' is not a site of this world; use {} or {}, or leave \
                             it out for both.",
                            world.site(SiteRole::Local).name,
                            world.site(SiteRole::Peer).name
                        ))
                    })?,
            ),
        };
        let id = world.faults.add(NewRule {
            method,
            path,
            site,
            probability,
            count,
            after,
            action,
            expires: expires_in.map(|s| now.plus_millis((s * 1000.0).round() as i64)),
        });
        let rule = world
            .faults
            .rules
            .iter()
            .find(|r| r.id == id)
            .ok_or_else(|| ApiError::Internal("The rule was not kept; add it again.".to_owned()))?;
        Ok(view(world, rule))
    })
}

/// The longest a rule may last: a year of simulated time.
const MAX_EXPIRY_SECS: f64 = 365.0 * 86_400.0;

/// The keys of a fault rule, lowercased (body keys are matched case-insensitively).
const RULE_KEYS: [&str; 12] = [
    "path",
    "method",
    "site",
    "probability",
    "count",
    "expiresinseconds",
    "after",
    "action",
    "status",
    "body",
    "headers",
    "latencyms",
];

/// The longest latency a rule may add: an hour, in milliseconds.
const MAX_LATENCY_MS: u64 = 3_600_000;

/// A count, a status or a latency: a whole number of 0 or more (up to 9e15, which an f64 holds
/// exactly).
fn whole(body: &JsonBody, key: &str) -> Result<Option<u64>, ApiError> {
    body.whole_number(key, 0, 9e15)
}

fn action(body: &JsonBody) -> Result<FaultAction, ApiError> {
    let name = body.required_text("Action")?;
    match name.to_ascii_lowercase().as_str() {
        "respond" => {
            let status = whole(body, "Status")?.ok_or_else(|| {
                ApiError::BadRequest(
                    "Status is required for Respond: send {\"Action\": \"Respond\", \"Status\": \
                     503}."
                        .to_owned(),
                )
            })?;
            // A 1xx is no final answer: hyper would send a 500 (or switch protocols) instead.
            if !(200..=599).contains(&status) {
                return Err(ApiError::BadRequest(format!(
                    "Status must be an HTTP status from 200 to 599 (got {status})."
                )));
            }
            let headers = match body.value("Headers") {
                None => Vec::new(),
                Some(Value::Object(map)) => map
                    .iter()
                    .map(|(k, v)| match v {
                        // Checked now, so a rule never answers without a header it was given.
                        Value::String(_) if HeaderName::from_bytes(k.as_bytes()).is_err() => {
                            Err(ApiError::BadRequest(format!(
                                "Headers has '{k}', which is not an HTTP header name: use \
                                 letters, digits and '-', such as Retry-After."
                            )))
                        }
                        Value::String(s) if HeaderValue::from_str(s).is_err() => {
                            Err(ApiError::BadRequest(format!(
                                "Headers.{k} is not a value an HTTP header can carry: use visible \
                                 characters and spaces, no line breaks."
                            )))
                        }
                        Value::String(s) => Ok((k.clone(), s.clone())),
                        other => Err(ApiError::BadRequest(format!(
                            "Headers.{k} must be a string; the body has {other}."
                        ))),
                    })
                    .collect::<Result<_, _>>()?,
                Some(other) => {
                    return Err(ApiError::BadRequest(format!(
                        "Headers must be an object of strings, such as {{\"Retry-After\": \"1\"}}; \
                         the body has {other}."
                    )));
                }
            };
            Ok(FaultAction::Respond {
                status: status as u16,
                body: body.value("Body").cloned(),
                headers,
            })
        }
        "latency" => {
            let millis = whole(body, "LatencyMs")?.ok_or_else(|| {
                ApiError::BadRequest(
                    "LatencyMs is required for Latency: send {\"Action\": \"Latency\", \
                     \"LatencyMs\": 1500}."
                        .to_owned(),
                )
            })?;
            // Past an hour no client is still waiting, and the request would hold its connection
            // until the simulator stops.
            if millis > MAX_LATENCY_MS {
                return Err(ApiError::BadRequest(format!(
                    "LatencyMs is {millis}, and a latency is at most {MAX_LATENCY_MS} (an hour): \
                     give a shorter one, or a Respond rule with Status 504 for a ZVM that never answers."
                )));
            }
            Ok(FaultAction::Latency { millis })
        }
        "loseresponse" => Ok(FaultAction::LoseResponse),
        "withholdresponse" => Ok(FaultAction::WithholdResponse),
        "cutresponse" => Ok(FaultAction::CutResponse),
        "revoketokens" => Ok(FaultAction::RevokeTokens),
        "insertasanotherclient" => Ok(FaultAction::InsertAsAnotherClient),
        _ => {
            let names: Vec<&str> = FaultKind::ALL.iter().map(|k| k.name()).collect();
            let (last, others) = names.split_last().unwrap_or((&"", &[]));
            Err(ApiError::BadRequest(format!(
                "Action '{name}' is not a fault: use {} or {last}.",
                others.join(", ")
            )))
        }
    }
}

/// `DELETE /_sim/faults`: removes every rule.
pub(crate) async fn clear(State(ctx): State<SiteCtx>) -> StatusCode {
    ctx.shared.lock().faults.clear();
    StatusCode::NO_CONTENT
}

/// `DELETE /_sim/faults/{id}`: removes one rule.
pub(crate) async fn remove(
    State(ctx): State<SiteCtx>,
    Path(id): Path<u64>,
) -> Result<StatusCode, ApiError> {
    if ctx.shared.lock().faults.remove(id) {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::NotFound(format!(
            "There is no fault rule {id}: list them with GET /_sim/faults."
        )))
    }
}
