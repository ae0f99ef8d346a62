//! Holding a call for a person's approval ([`rewind_core::approvals`]), as a tool answers it: the
//! call is held and answered at once (a client cancels a call that waits long), a person approves
//! or denies it at its address, and the requester's identical call made again runs once.
//!
//! Rewind's own tools answer with structured content that their `outputSchema` declares
//! (`approval_id`, `state`, `url`, `expires`); an upstream's tool through the gateway answers with
//! text only, as every refusal of an upstream tool does.

use rewind_core::approvals::{Announcement, CallToHold, HeldCall, Standing};
use rewind_core::audit_journal::ApprovedBy;
use rewind_core::{ErrorKind, ErrorReport, Person, Rewind};
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;

use crate::local_files::on_files;
use crate::paths::{APPROVALS_PATH, UI_APPROVALS_PATH};
use crate::reply::{self, HeldAnswer, Said};

/// How a held call's answer is shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// Rewind's own tool: structured content, as its `outputSchema` says.
    Structured,
    /// An upstream's tool: text only.
    Text,
}

/// A call a tool asks a person to approve.
#[derive(Debug, Clone)]
pub(crate) struct Proposal {
    /// The server or upstream.
    pub(crate) server: String,
    /// The tool, as that server names it.
    pub(crate) tool: String,
    /// The VM it changes, when known.
    pub(crate) vm: Option<String>,
    /// Its arguments as sent.
    pub(crate) arguments: Value,
    /// What it would do, in a person's words.
    pub(crate) what: String,
}

/// What asking found.
#[derive(Debug)]
pub(crate) enum Gate {
    /// Run it now, on this approval (its use is on disk); then say how it ended with [`ended`].
    Run(Box<HeldCall>),
    /// Answer this: held, denied, already run, or a store that refused.
    Answer(CallToolResult),
}

impl HeldAnswer {
    /// What `standing` says of its call, approved or denied at `url`.
    pub(crate) fn of(standing: &Standing, url: &str) -> HeldAnswer {
        let call = standing.call();
        HeldAnswer {
            approval_id: call.id.clone(),
            state: call.state,
            url: url.to_owned(),
            expires: call.expires,
            decided_by: call.decision.as_ref().map(|d| d.by.to_string()),
            comment: call.comment().map(str::to_owned),
            outcome: matches!(standing, Standing::AlreadyRan(_)).then(|| call.outcome()),
        }
    }
}

/// Holds `proposal` for the caller of `rewind` (the signed-in person, else the person at this
/// machine), or finds it approved, denied or run.
pub(crate) async fn gate(
    rewind: &Rewind,
    ctx: &RequestContext<RoleServer>,
    proposal: Proposal,
    shape: Shape,
) -> Gate {
    let call = CallToHold {
        requester: requester(rewind),
        agent: crate::peer::agent(ctx),
        server: proposal.server,
        tool: proposal.tool,
        vm: proposal.vm,
        arguments: proposal.arguments,
        what: proposal.what,
    };
    let asked = on_files(rewind, move |r| r.held_calls().ask(call, false)).await;
    let standing = match asked {
        Ok(standing) => standing,
        Err(e) => return Gate::Answer(refused(&e.to_string(), shape)),
    };
    if let Standing::Run(call) = standing {
        return Gate::Run(Box::new(call));
    }
    let url = address(rewind, host_of(ctx).as_deref(), &standing.call().id);
    if let Standing::NewlyHeld(call) = &standing {
        announce(rewind, call, &url);
    }
    Gate::Answer(answer(&standing, &url, shape))
}

/// `rewind` acting on `call`'s approval: what it journals names the approver.
pub(crate) fn approved(rewind: &Rewind, call: &HeldCall) -> Rewind {
    match &call.decision {
        Some(decision) => rewind.on_approval(ApprovedBy {
            approval_id: call.id.clone(),
            person: decision.by.clone(),
        }),
        None => rewind.clone(),
    }
}

/// Records how the call run on `call`'s approval ended: its answer's first line.
pub(crate) async fn ended(rewind: &Rewind, call: &HeldCall, result: &CallToolResult) {
    let summary = result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.chars().take(500).collect::<String>())
        .unwrap_or_else(|| "it ran; its answer had no text".to_owned());
    let failed = result.is_error == Some(true);
    let id = call.id.clone();
    if let Err(e) = on_files(rewind, move |r| r.held_calls().ran(&id, &summary, failed)).await {
        tracing::warn!("the end of held call {} was not recorded: {e}", call.id);
    }
}

/// The person a call is held for: the signed-in caller, else the person at this machine.
fn requester(rewind: &Rewind) -> Person {
    rewind
        .person()
        .cloned()
        .or_else(Person::local)
        .unwrap_or_else(|| Person {
            subject: "local:unknown".to_owned(),
            name: None,
        })
}

/// The `Host` an MCP request over HTTP was sent to (checked against the names the server answers
/// to before it got here).
fn host_of(ctx: &RequestContext<RoleServer>) -> Option<String> {
    let parts = ctx.extensions.get::<axum::http::request::Parts>()?;
    let host = parts.headers.get(axum::http::header::HOST)?;
    host.to_str().ok().map(str::to_owned)
}

/// Where a person approves held call `id`: the team server's page, else its API (at its
/// `resource`'s origin, else at the `host` the request reached), else this machine's `rewind
/// approvals approve`.
pub(crate) fn address(rewind: &Rewind, host: Option<&str>, id: &str) -> String {
    let Some(auth) = &rewind.config().http.auth else {
        return format!("this machine: rewind approvals approve {id}");
    };
    let origin = |u: &url::Url| u.origin().ascii_serialization();
    match (&auth.ui, &auth.resource) {
        (Some(ui), _) => format!("{}{UI_APPROVALS_PATH}/{id}", origin(&ui.redirect_uri)),
        (None, Some(resource)) => format!("{}{APPROVALS_PATH}/{id}", origin(resource)),
        (None, None) => match host {
            Some(host) => format!("http://{host}{APPROVALS_PATH}/{id}"),
            None => format!("{APPROVALS_PATH}/{id} on this server"),
        },
    }
}

/// Tells `[approvals] webhook` of a new held call, beside the call: a failure is logged.
pub(crate) fn announce(rewind: &Rewind, call: &HeldCall, url: &str) {
    let Some(webhook) = rewind.config().approvals.webhook.clone() else {
        return;
    };
    let announcement = Announcement::of(call, url);
    tokio::spawn(async move {
        if let Err(e) = rewind_core::approvals::announce(&webhook, &announcement).await {
            tracing::warn!("held call {}: {e}", announcement.id);
        }
    });
}

/// The answer of a call that did not run now.
fn answer(standing: &Standing, url: &str, shape: Shape) -> CallToolResult {
    let call = standing.call();
    let tool = &call.tool;
    let expires = call.expires.format("%Y-%m-%d %H:%M:%S UTC");
    let said = match standing {
        Standing::NewlyHeld(_) | Standing::StillHeld(_) => Said::new(
            format!(
                "{tool} is held for a person's approval (held call {}, until {expires}); nothing was done",
                call.id
            ),
            format!(
                "Tell the human that a person with the approve role must approve it at {url}; once approved, make the identical call again (the same arguments) and it runs once. Do not make the change another way meanwhile."
            ),
        ),
        Standing::Denied(_) => Said::new(
            format!(
                "{tool} was denied by {}{}; nothing was done",
                call.decision.as_ref().map_or("a person", |d| d
                    .by
                    .name
                    .as_deref()
                    .unwrap_or(&d.by.subject)),
                call.comment()
                    .map_or_else(String::new, |c| format!(": {c:?}")),
            ),
            "Do not make the change: tell the human the denial and its comment, and go on only as they say.",
        ),
        Standing::AlreadyRan(_) => Said::new(
            format!(
                "{tool} already ran on its approval (held call {}): {}",
                call.id,
                call.outcome()
            ),
            "It is not run again: tell the human what came of it. A call with other arguments is held anew.",
        ),
        Standing::Run(_) => unreachable!("an approved call runs; it is never answered here"),
    };
    match shape {
        Shape::Text => {
            let mut result = CallToolResult::error(vec![ContentBlock::text(said_line(&said))]);
            result.structured_content = None;
            result
        }
        Shape::Structured => reply::answer(said, &HeldAnswer::of(standing, url), true),
    }
}

fn said_line(said: &Said) -> String {
    format!(
        "{}. {}",
        said.headline.trim_end_matches('.'),
        said.next_step
    )
}

/// A store that refused: nothing held, nothing run.
fn refused(why: &str, shape: Shape) -> CallToolResult {
    let message = format!("the call was not held and did not run: {why}");
    match shape {
        Shape::Structured => reply::report(ErrorReport::new(ErrorKind::Refused, message)),
        Shape::Text => CallToolResult::error(vec![ContentBlock::text(message)]),
    }
}
