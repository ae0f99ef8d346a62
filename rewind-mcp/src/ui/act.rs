//! What a person does from the page: `GET /ui/diff` lists what changed since a change's tag (the
//! read role, as `zerto_diff_since_tag` without content); `GET /ui/act` asks for a confirmation of
//! an action, and `POST /ui/act`, sent back from that confirmation with the session's CSRF token,
//! runs it. The actions need the recover role: a diff's content, keeping a change's tags past the
//! journal, recovering files, restoring a VM. Each runs through the same facade calls as the MCP
//! tools, with the same checks, journaled as made by [`PAGE_AGENT`] for the person signed in; each
//! runs on its own task, counted in the server's work in flight, so neither a browser that goes
//! away nor the server stopping cuts a restore short.
//!
//! A confirmation sends nothing to a ZVM, but for a file recovery, whose confirmation is its plan:
//! the files as the preview found them, pinned by the plan id the form sends back.

use std::path::PathBuf;

use axum::extract::{Form, Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use maud::{Markup, html};
use rewind_core::{
    CancellationToken, Content, DiffReport, DiffRequest, NoProgress, RecoverFileRequest,
    RecoveryPlan, RestoreRequest, RestoreTarget, Rewind, RewindError,
};
use serde::{Deserialize, Serialize};

use super::layout::{page, problem};
use super::pages::{Pages, Recoverer, Session, SignedIn, given};
use crate::paths::{UI_ACT_PATH, UI_DIFF_PATH, UI_PATH};

/// The agent the journal names for what a person does on the page.
pub(super) const PAGE_AGENT: &str = "rewind-ui";

/// The actions a person with the recover role may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
enum Act {
    /// Show the content of each changed file since the tag.
    DiffContent,
    /// Keep the change's tags past the journal (Extended Journal Copy).
    Keep,
    /// Recover files from the tag into a folder of this server.
    Recover,
    /// Restore the VM to the tag (beside it, or in place), waiting for a commit.
    Restore,
}

impl Act {
    fn yes(self) -> &'static str {
        match self {
            Act::DiffContent => "Yes: show the content",
            Act::Keep => "Yes: keep them past the journal",
            Act::Recover => "Yes: recover these files",
            Act::Restore => "Yes: restore it (it then waits for a commit)",
        }
    }
}

/// An action's fields, as its confirmation shows them and sends them back.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub(super) struct ActForm {
    #[serde(rename = "do")]
    act: Act,
    vm: String,
    change: String,
    #[serde(default, skip_serializing_if = "blank")]
    path: Option<String>,
    #[serde(default, skip_serializing_if = "blank")]
    destination: Option<String>,
    #[serde(default, skip_serializing_if = "blank")]
    as_name: Option<String>,
    #[serde(default, skip_serializing_if = "blank")]
    in_place: Option<String>,
    #[serde(default, skip_serializing_if = "blank")]
    plan: Option<String>,
    #[serde(default, skip_serializing)]
    csrf: Option<String>,
}

/// A field left out of the confirmation's hidden inputs: one the person did not fill in.
fn blank(v: &Option<String>) -> bool {
    given(v).is_none()
}

/// `GET /ui/diff`'s query.
#[derive(Debug, Deserialize)]
pub(super) struct DiffQuery {
    vm: String,
    change: String,
    #[serde(default)]
    path: Option<String>,
}

/// `GET /ui/diff`: what changed since the tag, and what may be done about it.
pub(super) async fn diff(
    State(pages): State<Pages>,
    Query(q): Query<DiffQuery>,
    SignedIn(session): SignedIn,
) -> Response {
    let request = DiffRequest {
        vm: q.vm.clone(),
        change: q.change.clone(),
        paths: given(&q.path).into_iter().collect(),
        against: None,
        content: false,
    };
    let rewind = for_person(&pages, &session);
    let listed = detached(&pages, async move {
        let stop = CancellationToken::new();
        rewind.diff(request, &NoProgress, &stop).await
    })
    .await;
    let body = match listed {
        Ok(report) => html! {
            (diff_view(&report))
            @if pages.may_recover(&session) { (actions(&q)) }
        },
        Err(why) => return failed(&why),
    };
    Html(page(&format!("Change {} of {}", q.change, q.vm), body).into_string()).into_response()
}

/// `GET /ui/act`: the confirmation of an action, which does nothing yet.
pub(super) async fn confirm(
    State(pages): State<Pages>,
    Query(form): Query<ActForm>,
    Recoverer(session): Recoverer,
) -> Response {
    let rewind = for_person(&pages, &session);
    let (question, form) = match question(&rewind, form).await {
        Ok(asked) => asked,
        Err(why) => return failed(&why),
    };
    let body = html! {
        h2 { "Confirm" }
        (question)
        form method="post" action=(UI_ACT_PATH) {
            @for (name, value) in fields(&form) {
                input type="hidden" name=(name) value=(value);
            }
            input type="hidden" name="csrf" value=(session.csrf);
            button type="submit" { (form.act.yes()) }
            " " a href=(format!("{UI_DIFF_PATH}?{}", back_query(&form))) { "No: go back" }
        }
    };
    Html(page("Confirm", body).into_string()).into_response()
}

/// `POST /ui/act`: runs a confirmed action.
pub(super) async fn act(
    State(pages): State<Pages>,
    Recoverer(session): Recoverer,
    Form(form): Form<ActForm>,
) -> Response {
    if form.csrf.as_deref() != Some(session.csrf.as_str()) {
        return problem(StatusCode::FORBIDDEN, "this form was not sent by your page");
    }
    let rewind = for_person(&pages, &session);
    let title = format!("Change {} of {}", form.change, form.vm);
    match detached(&pages, run(rewind, form)).await {
        Ok(done) => Html(page(&title, done).into_string()).into_response(),
        Err(why) => failed(&why),
    }
}

/// The facade acting for the person signed in, as the page.
fn for_person(pages: &Pages, session: &Session) -> Rewind {
    pages
        .rewind
        .acting_for(session.caller.person.clone())
        .as_agent(PAGE_AGENT)
}

/// Runs `work` on its own task, counted in the server's work in flight: a browser that stops
/// waiting does not stop it, and the server finishes it before it exits.
async fn detached<T: Send + 'static>(
    pages: &Pages,
    work: impl Future<Output = Result<T, RewindError>> + Send + 'static,
) -> Result<T, String> {
    match pages.in_flight.spawn(work).await {
        Ok(done) => done.map_err(|e| e.to_string()),
        Err(e) => Err(format!("the action stopped before it ended: {e}")),
    }
}

/// What the confirmation asks, and the form it sends back (a recovery's with its plan id).
async fn question(rewind: &Rewind, mut form: ActForm) -> Result<(Markup, ActForm), String> {
    let (vm, change) = (&form.vm, &form.change);
    let asked = match form.act {
        Act::DiffContent => html! {
            p { "Show the content of each file of VM " strong { (vm) } " that changed since the tag of change "
                strong { (change) } @if let Some(p) = given(&form.path) { " under " code { (p) } } "? "
                "rewind mounts the tag and the latest checkpoint at the VPG's recovery site (file-level restore), "
                "reads each changed file, and unmounts both. Nothing on the VM changes." }
        },
        Act::Keep => html! {
            p { "Keep the tagged checkpoints of change " strong { (change) } " on VM " strong { (vm) }
                " past the journal? Zerto copies each into its VPG's Extended Journal Copy repository "
                "(a retention set, kept for the repository's retention), using repository space. "
                "Nothing on the VM changes." }
        },
        Act::Recover => {
            let plan = rewind
                .preview_recover_file(
                    recover_request(&form)?,
                    &NoProgress,
                    &CancellationToken::new(),
                )
                .await
                .map_err(|e| e.to_string())?;
            form.plan = Some(plan.plan_id.clone());
            plan_view(&plan)
        }
        Act::Restore => restore_question(rewind, &form).await?,
    };
    Ok((asked, form))
}

/// Runs a confirmed action: what it did, as the page shows it.
async fn run(rewind: Rewind, form: ActForm) -> Result<Markup, RewindError> {
    let summary = |text: String| html! { pre { (text) } };
    Ok(match form.act {
        Act::DiffContent => {
            let request = DiffRequest {
                vm: form.vm.clone(),
                change: form.change.clone(),
                paths: given(&form.path).into_iter().collect(),
                against: None,
                content: true,
            };
            diff_view(
                &rewind
                    .diff(request, &NoProgress, &CancellationToken::new())
                    .await?,
            )
        }
        Act::Keep => summary(
            rewind
                .keep(&form.vm, &form.change, &NoProgress)
                .await?
                .summary(),
        ),
        Act::Recover => {
            let request = recover_request(&form).map_err(invalid)?;
            summary(rewind.recover_file(request, &NoProgress).await?.summary())
        }
        Act::Restore => {
            let request = restore_request(&form).map_err(invalid)?;
            summary(rewind.restore_vm(request, &NoProgress).await?.summary())
        }
    })
}

fn invalid(problem: String) -> RewindError {
    RewindError::InvalidInput {
        field: "form",
        problem,
    }
}

/// A file recovery's request: one guest path into an absolute folder of this server, never
/// replacing a file (as `zerto_recover_file` does).
fn recover_request(form: &ActForm) -> Result<RecoverFileRequest, String> {
    let path = given(&form.path).ok_or("give the guest path of a file or folder to recover")?;
    let destination = given(&form.destination).map(PathBuf::from);
    let Some(destination) = destination.filter(|d| d.is_absolute()) else {
        return Err("give the destination as an absolute folder of this server, e.g. /srv/recovered; nothing was done".into());
    };
    Ok(RecoverFileRequest {
        vm: form.vm.clone(),
        change: form.change.clone(),
        paths: vec![path],
        destination,
        overwrite: false,
        plan: given(&form.plan),
    })
}

/// A restore's request: beside the VM as a new VM, or in place; exactly one.
fn restore_request(form: &ActForm) -> Result<RestoreRequest, String> {
    let target = match (given(&form.as_name), form.in_place.as_deref() == Some("1")) {
        (Some(name), false) => RestoreTarget::Alongside { name },
        (None, true) => RestoreTarget::InPlace,
        _ => return Err("give exactly one of a new VM's name (beside the VM, which keeps running) and in place; nothing was done".into()),
    };
    Ok(RestoreRequest {
        vm: form.vm.clone(),
        change: form.change.clone(),
        target,
    })
}

/// A restore's question: the VM, the tag's time when it can be read, and what is lost.
async fn restore_question(rewind: &Rewind, form: &ActForm) -> Result<Markup, String> {
    let request = restore_request(form)?;
    let tags = rewind.list_tags(&form.vm, Some(&form.change)).await.ok();
    let at = tags.and_then(|t| t.newest()).map_or_else(
        || "its tag".to_owned(),
        |t| format!("its tag of {}", t.format("%Y-%m-%d %H:%M UTC")),
    );
    let (vm, change) = (&form.vm, &form.change);
    Ok(match request.target {
        RestoreTarget::Alongside { name } => html! {
            p { "Restore VM " strong { (vm) } " to " (at) " (change " (change) ") as a new VM " strong { (name) }
                ", beside it? " (vm) " keeps running as it is. The restore then waits for a commit or a "
                "rollback (" code { "rewind restore commit " (vm) } "); if nobody commits it, Zerto rolls it back by itself." }
        },
        RestoreTarget::InPlace => html! {
            p { "Restore VM " strong { (vm) } " IN PLACE to " (at) " (change " (change) ")? Every write to "
                (vm) " after that is lost once the restore is committed; until then "
                code { "rewind restore rollback " (vm) } " undoes it." }
        },
    })
}

/// The fields of `form` as hidden inputs carry them.
fn fields(form: &ActForm) -> Vec<(String, String)> {
    let value = serde_json::to_value(form).unwrap_or_default();
    let Some(map) = value.as_object() else {
        return Vec::new();
    };
    map.iter()
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
        .collect()
}

/// The query of the diff page an action started from.
fn back_query(form: &ActForm) -> String {
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    query
        .append_pair("vm", &form.vm)
        .append_pair("change", &form.change);
    if let Some(p) = given(&form.path) {
        query.append_pair("path", &p);
    }
    query.finish()
}

/// The forms that lead to each action's confirmation.
fn actions(q: &DiffQuery) -> Markup {
    let path = given(&q.path).unwrap_or_default();
    let keys = |act: &str| {
        html! {
            input type="hidden" name="do" value=(act);
            input type="hidden" name="vm" value=(q.vm);
            input type="hidden" name="change" value=(q.change);
        }
    };
    html! {
        section id="actions" {
            h2 { "Actions (each asks you to confirm first)" }
            form method="get" action=(UI_ACT_PATH) {
                (keys("diff_content"))
                input type="hidden" name="path" value=(path);
                button type="submit" { "Show the content of the changed files" }
            }
            form method="get" action=(UI_ACT_PATH) {
                (keys("recover"))
                label for="recover-path" { "Guest path" }
                input id="recover-path" name="path" value=(path) required;
                label for="recover-destination" { "Into this server's folder" }
                input id="recover-destination" name="destination" placeholder="/srv/recovered" required;
                button type="submit" { "Recover from the tag" }
            }
            form method="get" action=(UI_ACT_PATH) {
                (keys("keep"))
                button type="submit" { "Keep the tags past the journal" }
            }
            form method="get" action=(UI_ACT_PATH) {
                (keys("restore"))
                label for="restore-name" { "Restore as a new VM named" }
                input id="restore-name" name="as_name" placeholder=(format!("{}-restored", q.vm));
                label for="restore-in-place" { "or in place" }
                input id="restore-in-place" type="checkbox" name="in_place" value="1";
                button type="submit" { "Restore the VM to the tag" }
            }
        }
    }
}

/// A diff: its headline, each path that differs, and the content when it was read.
fn diff_view(report: &DiffReport) -> Markup {
    let size = |s: &Option<rewind_core::FileState>| {
        s.as_ref()
            .and_then(|s| s.size)
            .map(|b| format!("{b} B"))
            .unwrap_or_default()
    };
    html! {
        section id="diff" {
            h2 { (report.headline()) }
            @if !report.entries.is_empty() {
                table {
                    tr { th { "Path" } th { "How" } th { "At the tag" } th { "Now" } }
                    @for e in &report.entries {
                        tr { td { code { (e.path) } } td { (e.kind.word()) }
                             td { (size(&e.before)) } td { (size(&e.after)) } }
                    }
                }
            }
            @for e in report.entries.iter().filter(|e| e.content.is_some()) {
                h3 { code { (e.path) } }
                @match &e.content {
                    Some(Content::Text { unified }) => pre class="diff" { (unified) },
                    Some(Content::Binary) => p { "Binary: not shown." },
                    Some(Content::TooLarge { cap }) => p { "Larger than " (cap) " bytes: not shown." },
                    None => {},
                }
            }
        }
    }
}

/// A file recovery's plan: what would be written where.
fn plan_view(plan: &RecoveryPlan) -> Markup {
    let size = |s: Option<u64>| s.map(|b| format!("{b} B")).unwrap_or_default();
    html! {
        p { "Recover these files of VM " strong { (plan.vm.name) } " from the tag of change "
            strong { (plan.change_id) } " into " code { (plan.destination.display()) }
            " on this server? No file there is replaced. The recovery runs only while the files are as listed (plan "
            code { (plan.plan_id) } ")." }
        table {
            tr { th { "Guest path" } th { "Written to" } th { "At the tag" } th { "Now" } }
            @for f in &plan.files {
                tr { td { code { (f.guest_path) } } td { code { (f.written_to.display()) } }
                     td { (size(f.at_tag.size)) } td { (size(f.now.as_ref().and_then(|n| n.size))) } }
            }
        }
    }
}

/// An action that did not run, or failed, with what the facade said.
fn failed(why: &str) -> Response {
    let body = html! {
        h2 { "Not done" }
        p { (why) }
        p { a href=(UI_PATH) { "Back to the page" } }
    };
    (
        StatusCode::CONFLICT,
        Html(page("Not done", body).into_string()),
    )
        .into_response()
}
