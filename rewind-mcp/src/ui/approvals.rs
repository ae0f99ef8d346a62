//! `/ui/approvals`: the held calls for a person with the approve role. The list shows those still
//! held first; each call's page shows what it would do (tool, VM, its arguments escaped, the VPGs a
//! guard of it would tag and the way back of its change's tags), and approves or denies it with a
//! comment, behind a confirmation, each form with the session's CSRF token. A decision is checked
//! as `POST /v1/approvals/{id}/approve` checks it ([`crate::approvals::decide`]): the approve role,
//! the role the tool itself needs, four eyes.

use axum::extract::{Form, Path, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use maud::{Markup, html};
use rewind_core::Rewind;
use rewind_core::approvals::{HeldCall, HeldState};
use serde::Deserialize;

use super::layout::{page, problem};
use super::pages::{Pages, Session, SignedIn};
use crate::paths::UI_APPROVALS_PATH;

/// A decision as the call's page sends it: first unconfirmed, then confirmed.
#[derive(Debug, Deserialize)]
pub(super) struct DecisionForm {
    decision: String,
    #[serde(default)]
    comment: Option<String>,
    #[serde(default)]
    confirmed: Option<String>,
    #[serde(default)]
    csrf: Option<String>,
}

/// The refusal of a person without the approve role, naming it; `None` for an approver.
fn not_approver(pages: &Pages, session: &Session) -> Option<Response> {
    if pages.may(&session.caller, |r| &r.approve) {
        return None;
    }
    let role = &pages.verifier.auth().roles.approve;
    let why = format!(
        "{} does not have the role {role}, which held calls need; ask whoever runs the realm for it.",
        session.caller.who()
    );
    Some(problem(StatusCode::FORBIDDEN, &why))
}

/// `GET /ui/approvals`.
pub(super) async fn list(State(pages): State<Pages>, SignedIn(session): SignedIn) -> Response {
    if let Some(refused) = not_approver(&pages, &session) {
        return refused;
    }
    let listed = crate::local_files::on_files(&pages.rewind, |r| r.held_calls().list()).await;
    let calls = match listed {
        Ok(calls) => calls,
        Err(e) => return problem(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    };
    let body = html! {
        h2 { "Held calls" }
        @if calls.is_empty() { p { "No call is held." } }
        table {
            tr { th { "Call" } th { "State" } th { "Tool" } th { "VM" } th { "For" } th { "Expires" } }
            @for c in &calls {
                tr {
                    td { a href=(format!("{UI_APPROVALS_PATH}/{}", c.id)) { code { (c.id) } } }
                    td { (c.state) } td { (c.tool) " (" (c.server) ")" }
                    td { (c.vm.as_deref().unwrap_or("")) } td { (c.requested_by()) }
                    td { (c.expires.format("%Y-%m-%d %H:%M UTC")) }
                }
            }
        }
    };
    Html(page("Held calls", body).into_string()).into_response()
}

/// `GET /ui/approvals/{id}`: what the call would do, and the approve and deny forms.
pub(super) async fn show(
    State(pages): State<Pages>,
    Path(id): Path<String>,
    SignedIn(session): SignedIn,
) -> Response {
    if let Some(refused) = not_approver(&pages, &session) {
        return refused;
    }
    let key = id.clone();
    let found =
        crate::local_files::on_files(&pages.rewind, move |r| r.held_calls().get(&key)).await;
    let (call, arguments) = match found {
        Ok(found) => found,
        Err(e) => return problem(StatusCode::NOT_FOUND, &e.to_string()),
    };
    let around = surroundings(&pages.rewind, &call, &arguments).await;
    let body = html! {
        (call_view(&call, &arguments))
        (around)
        @if call.state == HeldState::Held {
            h2 { "Decide" }
            form method="post" action=(format!("{UI_APPROVALS_PATH}/{}", call.id)) {
                label for="comment" { "Comment for the agent" }
                input type="text" id="comment" name="comment" size="60";
                input type="hidden" name="csrf" value=(session.csrf);
                button type="submit" name="decision" value="approve" { "Approve…" }
                button type="submit" name="decision" value="deny" { "Deny…" }
            }
        }
    };
    Html(page(&format!("Held call {id}"), body).into_string()).into_response()
}

/// `POST /ui/approvals/{id}`: first the confirmation, then, confirmed, the decision.
pub(super) async fn decide(
    State(pages): State<Pages>,
    Path(id): Path<String>,
    SignedIn(session): SignedIn,
    Form(form): Form<DecisionForm>,
) -> Response {
    if form.csrf.as_deref() != Some(session.csrf.as_str()) {
        return problem(
            StatusCode::FORBIDDEN,
            "this form was not sent by your page; nothing was decided",
        );
    }
    if let Some(refused) = not_approver(&pages, &session) {
        return refused;
    }
    let approve = match form.decision.as_str() {
        "approve" => true,
        "deny" => false,
        _ => {
            return problem(
                StatusCode::BAD_REQUEST,
                "the decision is neither approve nor deny; nothing was decided",
            );
        }
    };
    let comment = form.comment.clone().filter(|c| !c.trim().is_empty());
    if form.confirmed.as_deref() != Some("1") {
        return confirmation(&id, approve, comment.as_deref(), &session);
    }
    let decided =
        crate::approvals::decide(&pages.rewind, Some(&session.caller), &id, approve, comment).await;
    match decided {
        Ok(call) => {
            let body = html! {
                p { "Held call " code { (call.id) } " is " strong { (call.state) } "." }
                @if call.state == HeldState::Approved {
                    p { "The agent's identical call, made again before " (call.expires.format("%Y-%m-%d %H:%M UTC")) ", runs once." }
                }
                p { a href=(UI_APPROVALS_PATH) { "Held calls" } }
            };
            Html(page(&format!("Held call {id}"), body).into_string()).into_response()
        }
        Err(refused) => refused,
    }
}

/// The confirmation of a decision: sent back with `confirmed` and the CSRF token.
fn confirmation(id: &str, approve: bool, comment: Option<&str>, session: &Session) -> Response {
    let (verb, yes) = match approve {
        true => (
            "Approve",
            "Yes: approve it (the agent's identical call then runs once)",
        ),
        false => ("Deny", "Yes: deny it"),
    };
    let body = html! {
        h2 { "Confirm" }
        p { (verb) " held call " code { (id) } "?" @if let Some(c) = comment { " The agent is told: " q { (c) } } }
        form method="post" action=(format!("{UI_APPROVALS_PATH}/{id}")) {
            input type="hidden" name="decision" value=(if approve { "approve" } else { "deny" });
            input type="hidden" name="comment" value=(comment.unwrap_or(""));
            input type="hidden" name="confirmed" value="1";
            input type="hidden" name="csrf" value=(session.csrf);
            button type="submit" { (yes) }
            " " a href=(format!("{UI_APPROVALS_PATH}/{id}")) { "No: go back" }
        }
    };
    Html(page("Confirm", body).into_string()).into_response()
}

/// The call as people read it.
fn call_view(call: &HeldCall, arguments: &serde_json::Value) -> Markup {
    let pretty = serde_json::to_string_pretty(arguments).unwrap_or_default();
    html! {
        h2 { "Held call " code { (call.id) } ": " (call.state) }
        p { (call.what) }
        table {
            tr { th { "Tool" } td { code { (call.tool) } " of " code { (call.server) } } }
            tr { th { "VM" } td { (call.vm.as_deref().unwrap_or("not named")) } }
            tr { th { "For" } td { (call.requested_by()) " (" (call.requester.subject) "), through " (call.agent) } }
            tr { th { "Held" } td { (call.created.format("%Y-%m-%d %H:%M:%S UTC")) } }
            tr { th { "Expires" } td { (call.expires.format("%Y-%m-%d %H:%M:%S UTC")) } }
            @if call.four_eyes { tr { th { "Four eyes" } td { "another person than " (call.requested_by()) " must approve it" } } }
            @if let Some(d) = &call.decision {
                tr { th { "Decided" } td { (if d.approved { "approved" } else { "denied" }) " by " (d.by) " at " (d.at.format("%H:%M:%S UTC"))
                    @if let Some(c) = &d.comment { ": " q { (c) } } } }
            }
            @if call.run.is_some() { tr { th { "Ran" } td { (call.outcome()) } } }
        }
        h3 { "Arguments" }
        pre { (pretty) }
    }
}

/// The VPGs a guard of the call's VM would tag, and the way back of its change's tags; what
/// cannot be read is said so.
async fn surroundings(rewind: &Rewind, call: &HeldCall, arguments: &serde_json::Value) -> Markup {
    let Some(vm) = call.vm.clone() else {
        return html! { p { "The call names no VM: it is not guarded, and runs as it is once approved." } };
    };
    let change = arguments
        .get("change_id")
        .and_then(|c| c.as_str())
        .map(str::to_owned);
    let protection = rewind.find_protection(&vm).await;
    let tags = match &change {
        Some(change) => Some(rewind.list_tags(&vm, Some(change)).await),
        None => None,
    };
    let now = chrono::Utc::now();
    html! {
        h3 { "VPGs of " (vm) }
        @match &protection {
            Ok(p) => table {
                tr { th { "VPG" } th { "Protecting (tagged by a guard)" } th { "Recovery site" } }
                @for v in &p.vpgs { tr { td { (v.vpg_name) } td { (if v.protecting { "yes" } else { "no" }) } td { (v.recovery_site.name) } } }
            },
            Err(e) => p { "They could not be read: " (e) },
        }
        @if let (Some(change), Some(tags)) = (&change, &tags) {
            h3 { "The way back of change " (change) }
            @match tags {
                Ok(list) => table {
                    tr { th { "VPG" } th { "Tag" } th { "State" } }
                    @for v in &list.vpgs { @for t in v.tags.iter().filter(|t| t.is_of_change(change)) {
                        tr { td { (v.vpg_name) } td { code { (t.tag) } } td { (t.state.describe(now)) } }
                    } }
                },
                Err(e) => p { "Its tags could not be read: " (e) },
            }
        }
    }
}
