//! `GET /ui`: the timeline of guards and recoveries, the tags of the newest open changes with how
//! long their way back lasts, the restores that wait for a person's commit, and for an approver,
//! the held calls that wait for a decision.

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use maud::{Markup, html};
use rewind_core::JournalFilter;
use rewind_core::audit_journal::Timeline;
use serde::Deserialize;

use super::layout::{page, problem};
use super::pages::{Pages, Session, SignedIn, given};
use crate::local_files::on_files;
use crate::paths::{UI_APPROVALS_PATH, UI_DIFF_PATH, UI_LOGOUT_PATH, UI_PATH};

/// Changes whose tags are read from the ZVMs for the page (the newest).
const TAGGED_CHANGES: usize = 5;

/// The filters of the timeline.
#[derive(Debug, Default, Deserialize)]
pub(super) struct Filters {
    person: Option<String>,
    agent: Option<String>,
    vm: Option<String>,
    change: Option<String>,
}

/// `GET /ui`: the timeline, the tags of the newest changes, the restores that wait.
pub(super) async fn home(
    State(pages): State<Pages>,
    Query(f): Query<Filters>,
    SignedIn(session): SignedIn,
) -> Response {
    let filter = JournalFilter {
        vm: given(&f.vm),
        change_id: given(&f.change),
        person: given(&f.person),
        since: Some(chrono::Utc::now() - chrono::Duration::days(30)),
        last: None,
    };
    let rewind = pages.rewind.clone();
    let read = on_files(&rewind, move |r| r.journal().read(&filter)).await;
    let mut timeline = match read {
        Ok(read) => Timeline::of(&read.records),
        Err(e) => return problem(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    };
    if let Some(agent) = given(&f.agent) {
        timeline
            .changes
            .retain(|c| c.agents.iter().any(|a| a.eq_ignore_ascii_case(&agent)));
    }
    let mut tags = Vec::new();
    for c in timeline
        .changes
        .iter()
        .rev()
        .filter(|c| !c.closed())
        .take(TAGGED_CHANGES)
    {
        if let Ok(list) = pages.rewind.list_tags(&c.vm_id, Some(&c.change_id)).await {
            tags.push((c.change_id.clone(), c.vm.clone(), list));
        }
    }
    let waiting = pages.rewind.restore_status().await.ok();
    let held = match pages.may(&session.caller, |r| &r.approve) {
        true => on_files(&rewind, |r| r.held_calls().list()).await.ok(),
        false => None,
    };
    let body = html! {
        (account(&session))
        (held_link(held.as_deref()))
        (filters_form(&f))
        (restores(waiting.as_ref()))
        (tags_section(&tags))
        (timeline_section(&timeline))
    };
    Html(page("rewind", body).into_string()).into_response()
}

/// For an approver: how many calls wait for a person, and the way to them.
fn held_link(held: Option<&[rewind_core::approvals::HeldCall]>) -> Markup {
    let Some(held) = held else {
        return html! {};
    };
    let waiting = held
        .iter()
        .filter(|c| c.state == rewind_core::approvals::HeldState::Held)
        .count();
    html! {
        p { a href=(UI_APPROVALS_PATH) { "Held calls" } ": " (waiting) " waiting for a person's approval" }
    }
}

fn account(s: &Session) -> Markup {
    html! {
        form class="account" method="post" action=(UI_LOGOUT_PATH) {
            "Signed in as " strong { (s.caller.who()) } " "
            input type="hidden" name="csrf" value=(s.csrf);
            button type="submit" { "Sign out" }
        }
    }
}

fn filters_form(f: &Filters) -> Markup {
    let v = |x: &Option<String>| x.clone().unwrap_or_default();
    html! {
        form method="get" action=(UI_PATH) {
            label for="person" { "Person" } input id="person" name="person" value=(v(&f.person));
            label for="agent" { "Agent" } input id="agent" name="agent" value=(v(&f.agent));
            label for="vm" { "VM" } input id="vm" name="vm" value=(v(&f.vm));
            label for="change" { "Change" } input id="change" name="change" value=(v(&f.change));
            button type="submit" { "Filter" }
        }
    }
}

fn restores(waiting: Option<&rewind_core::RestoreStatus>) -> Markup {
    html! {
        section id="restores" {
            h2 { "Restores waiting for a person's commit" }
            @match waiting {
                None => p { "The restores could not be read now." },
                Some(s) if s.waiting.is_empty() => p { "None." },
                Some(s) => table {
                    tr { th { "VM" } th { "Change" } th { "Restore" } th { "State" } th { "Rolls back at" } }
                    @for w in &s.waiting {
                        tr { td { (w.vm) } td { (w.change_id) } td { (w.action) } td { (w.task_state) }
                             td { (w.rolls_back_at.map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string()).unwrap_or_default()) } }
                    }
                },
            }
        }
    }
}

fn tags_section(tags: &[(String, String, rewind_core::TagList)]) -> Markup {
    let now = chrono::Utc::now();
    html! {
        section id="tags" {
            h2 { "How long the way back lasts (the newest open changes)" }
            @if tags.is_empty() { p { "No open change." } }
            @for (change, vm, list) in tags {
                h3 { "Change " (change) " of " (vm) }
                table {
                    tr { th { "VPG" } th { "Tag" } th { "State" } }
                    @for v in &list.vpgs {
                        @for t in v.tags.iter().filter(|t| t.is_of_change(change)) {
                            tr { td { (v.vpg_name) } td { code { (t.tag) } }
                                 td { (t.state.describe(now)) } }
                        }
                    }
                }
            }
        }
    }
}

fn timeline_section(t: &Timeline) -> Markup {
    html! {
        section id="timeline" {
            h2 { "Guards and recoveries, the newest change first" }
            @if t.changes.is_empty() { p { "No record matches." } }
            @for c in t.changes.iter().rev() {
                h3 { "Change " (c.change_id) " of " (c.vm)
                     small { " by " (c.agents.join(", "))
                        @if !c.people.is_empty() { " for " (c.people.join(", ")) }
                        @if c.closed() { " (done)" } }
                     " " a href=(diff_link(&c.vm, &c.change_id)) { "What changed" } }
                table {
                    tr { th { "Time" } th { "Step" } th { "What" } th { "Verdict" } }
                    @for s in &c.steps {
                        tr { td { (s.time.format("%Y-%m-%d %H:%M:%S")) } td { (s.kind) } td { (s.action) }
                             td { (s.verdict) } }
                    }
                }
            }
        }
    }
}

/// The diff page of a change.
fn diff_link(vm: &str, change: &str) -> String {
    let query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("vm", vm)
        .append_pair("change", change)
        .finish();
    format!("{UI_DIFF_PATH}?{query}")
}
