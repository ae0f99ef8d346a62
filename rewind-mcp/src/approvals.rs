//! The held calls over HTTP, for approvers' scripts and chat bots (a bearer token, as every request
//! to a team server): `GET /v1/approvals` lists them (those still held first), `GET
//! /v1/approvals/{id}` shows one with its arguments, and `POST /v1/approvals/{id}/approve` or
//! `/deny` with `{"comment": "..."}` decides it. And `POST /v1/held`, where a host's hook
//! (`[hook.team]`) holds a call it would deny or ask about, and uses its approval once.
//!
//! Looking and deciding need the approve role (`[http.auth.roles] approve`); deciding also needs
//! the role the held tool itself needs. A refusal is 403 naming the role; an approval by the
//! requester of a call under four eyes, or of a call no longer held, is 409.

use axum::Json;
use axum::extract::{Path, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use rewind_core::Rewind;
use rewind_core::approvals::{ApprovalError, CallToHold, HeldCall, Standing};
use rewind_core::catalog::ZERTO_REWIND;
use serde::Deserialize;

use crate::guards::error;
use crate::held;
use crate::local_files::on_files;
use crate::reply::HeldAnswer;
use crate::sign_in::Caller;

/// A decision's body.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecisionBody {
    /// What the person says, for the agent.
    #[serde(default)]
    pub comment: Option<String>,
}

/// What a hook holds: its call.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeldBody {
    /// The host's MCP server of the tool, or the host itself for its built-in tools.
    pub server: String,
    /// The tool.
    pub tool: String,
    /// The VM the call changes, when the hook knows it.
    #[serde(default)]
    pub vm: Option<String>,
    /// The call's arguments.
    #[serde(default)]
    pub arguments: serde_json::Value,
    /// The host (`claude-code`, `codex`, ...).
    pub agent: String,
    /// Why the hook would not let it through, for the approver.
    #[serde(default)]
    pub why: Option<String>,
}

/// The longest text a hook's field keeps: what a person reads, not what a client may send.
const MAX_FIELD: usize = 2_000;

impl HeldBody {
    /// The call to hold for `requester`, each text field on one line and cut to [`MAX_FIELD`]
    /// characters (the arguments stay exactly as sent: they are what the approval binds).
    fn held_for(self, requester: rewind_core::Person) -> CallToHold {
        let clean = |text: String| -> String {
            let one_line = text.replace(['\n', '\r'], " ");
            one_line
                .chars()
                .filter(|c| !c.is_control())
                .take(MAX_FIELD)
                .collect()
        };
        let (agent, server, tool) = (clean(self.agent), clean(self.server), clean(self.tool));
        let what = self
            .why
            .map(clean)
            .unwrap_or_else(|| format!("{agent} asks to run {tool} of {server}"));
        CallToHold {
            requester,
            agent,
            server,
            tool,
            vm: self.vm.map(clean),
            arguments: self.arguments,
            what,
        }
    }
}

/// `GET /v1/approvals`.
pub async fn list(State(rewind): State<Rewind>, request: Request) -> Response {
    if let Err(refused) = approver(&rewind, request.extensions().get()) {
        return *refused;
    }
    match on_files(&rewind, |r| r.held_calls().list()).await {
        Ok(calls) => Json(serde_json::json!({ "approvals": calls })).into_response(),
        Err(e) => store_error(&e),
    }
}

/// `GET /v1/approvals/{id}`: the call with its arguments.
pub async fn show(
    State(rewind): State<Rewind>,
    Path(id): Path<String>,
    request: Request,
) -> Response {
    if let Err(refused) = approver(&rewind, request.extensions().get()) {
        return *refused;
    }
    match on_files(&rewind, move |r| r.held_calls().get(&id)).await {
        Ok((call, arguments)) => {
            let mut shown = serde_json::to_value(&call).unwrap_or_default();
            shown["arguments"] = arguments;
            Json(shown).into_response()
        }
        Err(e) => store_error(&e),
    }
}

/// `POST /v1/approvals/{id}/approve`.
pub async fn approve(
    State(rewind): State<Rewind>,
    Path(id): Path<String>,
    request: Request,
) -> Response {
    decided(rewind, id, true, request).await
}

/// `POST /v1/approvals/{id}/deny`.
pub async fn deny(
    State(rewind): State<Rewind>,
    Path(id): Path<String>,
    request: Request,
) -> Response {
    decided(rewind, id, false, request).await
}

async fn decided(rewind: Rewind, id: String, approved: bool, request: Request) -> Response {
    let caller = request.extensions().get::<Caller>().cloned();
    let body = match body::<DecisionBody>(request).await {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    match decide(&rewind, caller.as_ref(), &id, approved, body.comment).await {
        Ok(call) => Json(call).into_response(),
        Err(refused) => refused,
    }
}

/// `caller`'s decision on held call `id`, checked for the approve role and the tool's own role;
/// the page decides through it too.
pub(crate) async fn decide(
    rewind: &Rewind,
    caller: Option<&Caller>,
    id: &str,
    approved: bool,
    comment: Option<String>,
) -> Result<HeldCall, Response> {
    let caller = approver(rewind, caller).map_err(|r| *r)?.clone();
    let key = id.to_owned();
    let (call, _) = on_files(rewind, move |r| r.held_calls().get(&key))
        .await
        .map_err(|e| store_error(&e))?;
    if let Some(role) = lacking_tool_role(rewind, &caller, &call) {
        return Err(error(
            StatusCode::FORBIDDEN,
            format!(
                "deciding a call of {} needs the role {role:?} too, and {}'s token does not carry it; ask an administrator of the realm for it",
                call.tool,
                caller.who()
            ),
        ));
    }
    let (key, by) = (id.to_owned(), caller.person.clone());
    let decided = on_files(rewind, move |r| {
        r.held_calls().decide(&key, &by, approved, comment)
    })
    .await;
    decided.map_err(|e| store_error(&e))
}

/// `POST /v1/held`: the hook's call held, or its approval used once (state `allowed`).
pub async fn hold(State(rewind): State<Rewind>, request: Request) -> Response {
    let Some(caller) = request.extensions().get::<Caller>().cloned() else {
        return error(StatusCode::UNAUTHORIZED, "holding a call needs a signed-in person: send the issuer's access token as a bearer token".to_owned());
    };
    if let Some(auth) = &rewind.config().http.auth
        && !caller.roles.contains(&auth.roles.guard)
    {
        let role = &auth.roles.guard;
        return error(
            StatusCode::FORBIDDEN,
            format!(
                "holding a call that changes a VM needs the role {role:?}, and {}'s token does not carry it",
                caller.who()
            ),
        );
    }
    let host = request
        .headers()
        .get(axum::http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_owned);
    let body = match body::<HeldBody>(request).await {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    let call = body.held_for(caller.person.clone());
    match on_files(&rewind, move |r| r.held_calls().ask(call, true)).await {
        Ok(standing) => Json(held_view(&rewind, host.as_deref(), &standing)).into_response(),
        Err(e) => store_error(&e),
    }
}

/// A hook's standing, as `/v1/held` answers it: the held call, and `allow` when this very call
/// uses its approval now.
fn held_view(rewind: &Rewind, host: Option<&str>, standing: &Standing) -> serde_json::Value {
    let url = held::address(rewind, host, &standing.call().id);
    let mut view = serde_json::to_value(HeldAnswer::of(standing, &url)).unwrap_or_default();
    view["allow"] = serde_json::Value::Bool(matches!(standing, Standing::Run(_)));
    if let Standing::NewlyHeld(call) = standing {
        held::announce(rewind, call, &url);
    }
    view
}

/// The signed-in caller when they hold the approve role; else the refusal.
fn approver<'c>(rewind: &Rewind, caller: Option<&'c Caller>) -> Result<&'c Caller, Box<Response>> {
    let refused = |status, why: String| Err(Box::new(error(status, why)));
    let Some(auth) = &rewind.config().http.auth else {
        return refused(
            StatusCode::FORBIDDEN,
            "approving needs a person signed in: this server has no [http.auth]; approve on its machine with `rewind approvals approve ID`".to_owned(),
        );
    };
    let Some(caller) = caller else {
        return refused(
            StatusCode::UNAUTHORIZED,
            "no signed-in caller: send the issuer's access token as a bearer token".to_owned(),
        );
    };
    let role = &auth.roles.approve;
    match caller.roles.contains(role) {
        true => Ok(caller),
        false => refused(
            StatusCode::FORBIDDEN,
            format!(
                "held calls need the role {role:?}, and {}'s token does not carry it; ask an administrator of the realm to grant it, then sign in again",
                caller.who()
            ),
        ),
    }
}

/// The role the held call's tool needs that `caller` lacks, if any: a rewind tool's own role, an
/// upstream's role and the guard role, or for a host's tool the guard role.
fn lacking_tool_role(rewind: &Rewind, caller: &Caller, call: &HeldCall) -> Option<String> {
    let auth = rewind.config().http.auth.as_ref()?;
    let mut needed = vec![];
    if call.server == ZERTO_REWIND {
        let role = crate::roles::needed(&auth.roles, &call.tool).unwrap_or(&auth.roles.recover);
        needed.push(role.to_owned());
    } else {
        needed.push(auth.roles.guard.clone());
        let upstream = rewind
            .config()
            .gateway
            .upstreams
            .iter()
            .find(|u| u.name == call.server);
        if let Some(role) = upstream.and_then(|u| u.role.clone()) {
            needed.push(role);
        }
    }
    needed.into_iter().find(|role| !caller.roles.contains(role))
}

/// The request's JSON body; an empty one reads as `{}`.
async fn body<T: serde::de::DeserializeOwned>(request: Request) -> Result<T, Response> {
    let bytes = axum::body::to_bytes(request.into_body(), 64 * 1024)
        .await
        .map_err(|e| {
            error(
                StatusCode::BAD_REQUEST,
                format!("the body could not be read: {e}"),
            )
        })?;
    let bytes: &[u8] = match bytes.iter().all(u8::is_ascii_whitespace) {
        true => b"{}",
        false => &bytes,
    };
    serde_json::from_slice(bytes).map_err(|e| {
        error(
            StatusCode::BAD_REQUEST,
            format!("the body is not the JSON expected: {e}"),
        )
    })
}

fn store_error(e: &ApprovalError) -> Response {
    let status = match e {
        ApprovalError::NotFound(_) => StatusCode::NOT_FOUND,
        ApprovalError::NotHeld { .. } | ApprovalError::FourEyes { .. } => StatusCode::CONFLICT,
        ApprovalError::TooMany { .. } => StatusCode::TOO_MANY_REQUESTS,
        ApprovalError::LongComment(_) => StatusCode::BAD_REQUEST,
        ApprovalError::Store { .. } => StatusCode::INTERNAL_SERVER_ERROR,
    };
    error(status, e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hooks_words_reach_an_approver_on_one_line_and_cut_but_its_arguments_exactly() {
        let body = HeldBody {
            server: "vsphere".into(),
            tool: "run\nscript".into(),
            vm: Some("web-01\u{7}".into()),
            arguments: serde_json::json!({"script": "line 1\nline 2"}),
            agent: "codex".into(),
            why: Some(format!("denied:\r\n{}", "x".repeat(5_000))),
        };
        let person = rewind_core::Person {
            subject: "s".into(),
            name: None,
        };
        let call = body.held_for(person);
        assert_eq!(call.tool, "run script");
        assert_eq!(call.vm.as_deref(), Some("web-01"));
        assert!(!call.what.contains(['\n', '\r']), "{}", call.what);
        assert_eq!(call.what.chars().count(), MAX_FIELD);
        assert_eq!(call.arguments["script"], "line 1\nline 2");
    }
}
