//! A call the hook would block, held on the team server for a person's approval (`POST
//! <url>/v1/held`, the user's own token): the deny then names the held call and where a person
//! approves it, and once approved, the identical call is allowed once.

use reqwest::Url;
use rewind_core::config::TeamServer;
use rewind_core::hook::{Allowed, Decision, Denied};
use serde::Deserialize;

use super::reach::{self, Tried};

/// The team server's answer to `POST /v1/held`.
#[derive(Debug, Deserialize)]
struct HeldView {
    approval_id: String,
    state: String,
    url: String,
    expires: String,
    #[serde(default)]
    decided_by: Option<String>,
    #[serde(default)]
    comment: Option<String>,
    #[serde(default)]
    allow: bool,
}

/// A call the hook would block (`blocked`), held on the team server for a person's approval; what
/// the hook answers: allowed once when a person approved this identical call, else a deny that
/// names the held call and where it is approved. A server that cannot hold it leaves it blocked,
/// saying why.
pub fn held(team: &TeamServer, call: HeldCall<'_>, blocked: Decision) -> Decision {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            return not_held(
                blocked,
                &format!("cannot start the hook's HTTP client: {e}"),
            );
        }
    };
    let body = serde_json::json!({
        "server": call.server, "tool": call.tool, "vm": call.vm, "arguments": call.arguments,
        "agent": call.agent, "why": blocked.to_string(),
    });
    let asked = runtime.block_on(reach::each_url(team, |url, client, token| {
        hold(url, client, token, &body)
    }));
    match asked {
        Ok(view) => decision_of(view, &call, &blocked),
        Err(why) => not_held(blocked, &why),
    }
}

/// The call the hook holds.
#[derive(Debug)]
pub struct HeldCall<'a> {
    /// The host, as the agent.
    pub agent: &'a str,
    /// The catalog's server of the tool.
    pub server: &'a str,
    /// The tool.
    pub tool: &'a str,
    /// The VM the call changes, when the catalog names its argument.
    pub vm: Option<&'a str>,
    /// The call's arguments.
    pub arguments: &'a serde_json::Value,
}

async fn hold(
    base: Url,
    client: reqwest::Client,
    token: String,
    body: &serde_json::Value,
) -> Result<HeldView, Tried> {
    let url = base
        .join("v1/held")
        .map_err(|e| Tried::Refused(format!("its URL cannot take the path v1/held: {e}")))?;
    let answer = client
        .post(url)
        .bearer_auth(token)
        .json(body)
        .send()
        .await
        .map_err(Tried::sending)?;
    let status = answer.status();
    if !status.is_success() {
        let said: serde_json::Value = answer.json().await.unwrap_or_default();
        return Err(Tried::answered(status, &said));
    }
    answer.json().await.map_err(|e| {
        Tried::Refused(format!(
            "its answer is not a held call ({e}); is the URL a rewind-mcp?"
        ))
    })
}

fn decision_of(view: HeldView, call: &HeldCall<'_>, blocked: &Decision) -> Decision {
    let (server, tool, id) = (call.server, call.tool, &view.approval_id);
    if view.allow {
        return Decision::Allow(Allowed::Approved {
            server: server.to_owned(),
            tool: tool.to_owned(),
            approval_id: id.clone(),
            by: view.decided_by.unwrap_or_else(|| "a person".to_owned()),
        });
    }
    let by = view.decided_by.as_deref().unwrap_or("a person");
    let message = match view.state.as_str() {
        "held" => format!(
            "{blocked} It is held on the team server as {id} for a person's approval: a person with the approve role approves or denies it at {} (before {}); once approved, make the identical call again and it is allowed once.",
            view.url, view.expires
        ),
        "denied" => format!(
            "{server}/{tool} was held as {id} and denied by {by}{}. Do not make the change; tell the human.",
            view.comment
                .as_deref()
                .map_or_else(String::new, |c| format!(": {c:?}"))
        ),
        _ => format!(
            "{server}/{tool} was already let through once on held call {id} ({}); it is not allowed again. A call with other arguments is held anew.",
            view.state
        ),
    };
    Decision::Deny(Denied::Held {
        approval_id: id.clone(),
        url: view.url,
        message,
    })
}

/// The blocked decision, saying why it could not be held for a person.
fn not_held(blocked: Decision, why: &str) -> Decision {
    let message =
        format!("{blocked} (The team server could not hold it for a person's approval: {why}.)");
    Decision::Deny(Denied::Held {
        approval_id: String::new(),
        url: String::new(),
        message,
    })
}
