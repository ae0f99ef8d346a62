//! `/_sim/ui`: the simulated ZVMs at a glance, for a developer without a ZVM: the sites, each VPG
//! (status, RPO, history) and its journal, the VMs, the running and recent tasks, the call log
//! (filterable, with the requests no route matched), the fault rules, the clock, reset and the
//! saved state. Server-rendered (maud), readable with JavaScript off, its style embedded; `?live=1`
//! refreshes it every two seconds.
//!
//! Every form acts through the control API's own functions (advance, add or remove a fault rule,
//! reset), so the pages add no way of changing the world that the control API does not have, and
//! each change goes through its checks. Like the control API, the pages answer loopback clients
//! only; a form posted from a page of another origin is refused (a web page must not reset the
//! simulator through the developer's browser).

use axum::Router;
use axum::extract::{Form, Path, Query, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use maud::{DOCTYPE, Markup, html};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::enums::{TASK_STATE, VPG_STATUS, VPG_SUBSTATUS};
use crate::http::{ApiError, JsonBody, SiteCtx};
use crate::world::World;
use crate::world::clock::SimTime;

/// The page's path.
pub(crate) const UI_PATH: &str = "/_sim/ui";
/// Calls shown at most.
const CALLS_SHOWN: usize = 200;
/// Tasks shown at most.
const TASKS_SHOWN: usize = 50;

/// The pages, nested under `/_sim`.
pub(crate) fn router() -> Router<SiteCtx> {
    Router::new()
        .route("/ui", get(dashboard))
        .route("/ui/vpgs/{vpg}", get(vpg_page))
        .route("/ui/clock", post(advance))
        .route("/ui/faults", post(add_fault))
        .route("/ui/faults/{id}/remove", post(remove_fault))
        .route("/ui/reset", post(reset))
        .route_layer(middleware::from_fn(same_origin))
}

/// Refuses a form posted from another origin: its `Origin` (or `Sec-Fetch-Site`) says so.
async fn same_origin(request: Request, next: Next) -> Response {
    if request.method() != axum::http::Method::POST {
        return next.run(request).await;
    }
    let headers = request.headers();
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    let origin_host = headers
        .get(header::ORIGIN)
        .and_then(|o| o.to_str().ok())
        .map(|o| o.split_once("://").map_or(o, |(_, rest)| rest));
    let cross_site = headers
        .get("sec-fetch-site")
        .and_then(|s| s.to_str().ok())
        .is_some_and(|s| s == "cross-site");
    let foreign = match (origin_host, host) {
        (Some(origin), Some(host)) => !origin.eq_ignore_ascii_case(host),
        (Some(_), None) => true,
        (None, _) => false,
    };
    if foreign || cross_site {
        return ApiError::Forbidden(
            "A form of the simulator's pages was posted from another origin; nothing was done."
                .to_owned(),
        )
        .into_response();
    }
    next.run(request).await
}

/// The filters of the call log, and whether the page refreshes itself.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Filters {
    site: Option<String>,
    method: Option<String>,
    status: Option<String>,
    path: Option<String>,
    unmatched: Option<String>,
    live: Option<String>,
}

impl Filters {
    fn keeps(&self, c: &crate::world::Call) -> bool {
        fn given(v: &Option<String>) -> Option<&str> {
            v.as_deref().map(str::trim).filter(|v| !v.is_empty())
        }
        given(&self.site).is_none_or(|s| c.site.eq_ignore_ascii_case(s))
            && given(&self.method).is_none_or(|m| c.method.eq_ignore_ascii_case(m))
            && given(&self.status).is_none_or(|s| c.status.to_string() == s)
            && given(&self.path).is_none_or(|p| c.path.contains(p))
            && (given(&self.unmatched).is_none() || c.unmatched)
    }

    fn live(&self) -> bool {
        self.live.as_deref() == Some("1")
    }
}

/// `GET /_sim/ui`.
async fn dashboard(State(ctx): State<SiteCtx>, Query(filters): Query<Filters>) -> Html<String> {
    let seed = ctx.shared.seed();
    let page = ctx.with_world(|world, now| {
        let body = html! {
            (clock_section(world, now, seed))
            (sites_section(world))
            (vpgs_section(world, now))
            (vms_section(world))
            (tasks_section(world, now))
            (calls_section(world, &filters))
            (faults_section(world))
        };
        page("zvm-sim", filters.live(), body)
    });
    Html(page.into_string())
}

/// `GET /_sim/ui/vpgs/{vpg}`: one VPG's journal.
async fn vpg_page(State(ctx): State<SiteCtx>, Path(key): Path<String>) -> Response {
    let found = ctx.with_world(|world, now| {
        let vpg = world.vpg_by_id_or_name(&key)?;
        Some(page(
            &format!("VPG {}", world.vpgs[vpg].name),
            false,
            journal_section(world, vpg, now),
        ))
    });
    match found {
        Some(found) => Html(found.into_string()).into_response(),
        None => {
            let body = html! { p { "There is no VPG " (key) "." } };
            let missing = page("No such VPG", false, body);
            (StatusCode::NOT_FOUND, Html(missing.into_string())).into_response()
        }
    }
}

fn page(title: &str, live: bool, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                @if live { meta http-equiv="refresh" content="2"; }
                title { (title) }
                style { (STYLE) }
            }
            body {
                header {
                    h1 { a href=(UI_PATH) { "zvm-sim" } @if title != "zvm-sim" { " " small { (title) } } }
                    nav {
                        a href=(format!("{UI_PATH}?live=1")) { "live" } " · "
                        a href=(UI_PATH) { "still" } " · "
                        a href="/_sim/state" download="zvm-sim-state.json" { "download the state" }
                    }
                }
                main { (body) }
            }
        }
    }
}

const STYLE: &str = "body{font:14px system-ui,sans-serif;margin:1rem 2rem;color:#1b1b1b}\
h1{font-size:1.3rem}h2{font-size:1.1rem;margin-top:1.6rem;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;margin:.4rem 0}th,td{padding:.2rem .6rem;text-align:left;\
border-bottom:1px solid #eee;vertical-align:top}th{background:#f4f4f4}\
.bad{color:#a40000}.ok{color:#006400}form.inline{display:inline}\
label{margin-right:.3rem}input,select,button{margin-right:.6rem}input[type=number]{width:6rem}\
code{font-size:12px}";

fn time(t: SimTime) -> String {
    t.to_wire()
}

fn clock_section(world: &World, now: SimTime, seed: u64) -> Markup {
    html! {
        section id="clock" {
            h2 { "Clock" }
            p { "Simulated time " strong { (time(now)) } ", " (world.clock.scale())
                " simulated second(s) per second; seed " (seed) "." }
            form method="post" action=(format!("{UI_PATH}/clock")) {
                label for="seconds" { "Advance by (seconds)" }
                input id="seconds" name="seconds" type="number" min="0.001" step="any" value="60" required;
                button type="submit" { "Advance" }
            }
            form method="post" action=(format!("{UI_PATH}/reset")) {
                button type="submit" { "Reset the world to its seed" }
            }
        }
    }
}

fn sites_section(world: &World) -> Markup {
    html! {
        section id="sites" {
            h2 { "Sites" }
            table {
                tr { th { "Site" } th { "Identifier" } th { "Location" } th { "VMs" } }
                @for role in crate::world::SiteRole::BOTH {
                    @let site = world.site(role);
                    tr {
                        td { (site.name) }
                        td { code { (site.id) } }
                        td { (site.location) }
                        td { (world.vms.iter().filter(|v| v.site == role && !v.removed).count()) }
                    }
                }
            }
        }
    }
}

fn vpgs_section(world: &World, now: SimTime) -> Markup {
    html! {
        section id="vpgs" {
            h2 { "VPGs" }
            table {
                tr { th { "VPG" } th { "Protected → recovery" } th { "Status" } th { "RPO (s)" }
                     th { "Journal holds" } th { "Tags" } }
                @for v in world.vpgs.iter().filter(|v| !v.deleted) {
                    @let (from, to) = v.journal.window_at(now);
                    @let contents = v.journal.contents(now);
                    tr {
                        td { a href=(format!("{UI_PATH}/vpgs/{}", v.id)) { (v.name) } }
                        td { (world.site(v.protected).name) " → " (world.site(v.recovery).name) }
                        td class=(if crate::decisions::writes_checkpoints(v.status, v.sub_status) { "ok" } else { "bad" }) {
                            (VPG_STATUS.name(v.status)) " / " (VPG_SUBSTATUS.name(v.sub_status))
                        }
                        td { (v.actual_rpo) " of " (v.rpo_seconds) }
                        td { (time(from)) " to " (time(to)) " (" (contents.count) ")" }
                        td { (contents.tags.len()) }
                    }
                }
            }
        }
    }
}

fn vms_section(world: &World) -> Markup {
    html! {
        section id="vms" {
            h2 { "VMs" }
            table {
                tr { th { "VM" } th { "Identifier" } th { "Site" } th { "Address" } th { "VPGs" } }
                @for vm in world.vms.iter().filter(|v| !v.removed) {
                    tr {
                        td { (vm.name) }
                        td { code { (vm.id) } }
                        td { (world.site(vm.site).name) }
                        td { (vm.ip) }
                        td { @for v in &vm.vpgs { (world.vpgs[*v].name) " " } }
                    }
                }
            }
        }
    }
}

fn tasks_section(world: &World, now: SimTime) -> Markup {
    html! {
        section id="tasks" {
            h2 { "Tasks, the newest first" }
            table {
                tr { th { "Task" } th { "Type" } th { "VPG" } th { "State" } th { "Started" }
                     th { "Reason" } }
                @for task in world.tasks.iter().rev().take(TASKS_SHOWN) {
                    @let (state, progress) = task.status_at(now);
                    tr {
                        td { code { (task.id) } }
                        td { (task.kind()) }
                        td { (task.vpg.map_or("", |v| world.vpgs[v].name.as_str())) }
                        td { (TASK_STATE.name(state)) " " (progress) "%" }
                        td { (time(task.started)) }
                        td { (task.ended.as_ref().map(|e| e.reason.as_str()).unwrap_or("")) }
                    }
                }
            }
        }
    }
}

fn calls_section(world: &World, f: &Filters) -> Markup {
    let value = |v: &Option<String>| v.clone().unwrap_or_default();
    html! {
        section id="calls" {
            h2 { "Calls, the newest first" }
            form method="get" action=(UI_PATH) {
                label for="f-site" { "Site" } input id="f-site" name="site" value=(value(&f.site));
                label for="f-method" { "Method" } input id="f-method" name="method" size="6" value=(value(&f.method));
                label for="f-status" { "Status" } input id="f-status" name="status" size="4" value=(value(&f.status));
                label for="f-path" { "Path holds" } input id="f-path" name="path" value=(value(&f.path));
                label for="f-unmatched" { "No route matched" }
                input id="f-unmatched" name="unmatched" type="checkbox" value="1" checked[f.unmatched.is_some()];
                button type="submit" { "Filter" }
            }
            table {
                tr { th { "#" } th { "Site" } th { "Method" } th { "Path" } th { "Status" } th { "Faults" } }
                @for c in world.calls.iter().rev().filter(|c| f.keeps(c)).take(CALLS_SHOWN) {
                    tr class=(if c.unmatched { "bad" } else { "" }) {
                        td { (c.seq) }
                        td { (c.site) }
                        td { (c.method) }
                        td { code { (c.path) @if let Some(q) = &c.query { "?" (q) } }
                             @if c.unmatched { " (no route)" } }
                        td { (c.status) }
                        td { @for n in &c.faults { (n.action.name()) " " } }
                    }
                }
            }
        }
    }
}

fn faults_section(world: &World) -> Markup {
    html! {
        section id="faults" {
            h2 { "Fault rules" }
            table {
                tr { th { "Id" } th { "Method" } th { "Path" } th { "Action" } th { "Fired" }
                     th { "Count" } th { "Expires" } th {} }
                @for r in &world.faults.rules {
                    tr {
                        td { (r.id) }
                        td { (r.asked.method.as_deref().unwrap_or("*")) }
                        td { code { (r.asked.path.as_str()) } }
                        td { (r.asked.action.kind().name()) }
                        td { (r.fired) }
                        td { (r.asked.count.map(|c| c.to_string()).unwrap_or_default()) }
                        td { (r.asked.expires.map(time).unwrap_or_default()) }
                        td { form class="inline" method="post" action=(format!("{UI_PATH}/faults/{}/remove", r.id)) {
                            button type="submit" { "Remove" } } }
                    }
                }
            }
            form method="post" action=(format!("{UI_PATH}/faults")) {
                label for="r-method" { "Method" } input id="r-method" name="method" size="6" placeholder="*";
                label for="r-path" { "Path" } input id="r-path" name="path" required placeholder="/v1/vpgs/*/checkpoints";
                label for="r-action" { "Action" }
                select id="r-action" name="action" {
                    @for a in ["Respond", "LoseResponse", "WithholdResponse", "CutResponse", "Latency", "RevokeTokens"] {
                        option value=(a) { (a) }
                    }
                }
                label for="r-status" { "Status" } input id="r-status" name="status" type="number" size="4" placeholder="503";
                label for="r-latency" { "Latency (ms)" } input id="r-latency" name="latency_ms" type="number" size="6";
                label for="r-count" { "Count" } input id="r-count" name="count" type="number" min="1" size="4";
                label for="r-expires" { "Expires in (s)" } input id="r-expires" name="expires_in_seconds" type="number" min="1" size="6";
                button type="submit" { "Add the rule" }
            }
        }
    }
}

fn journal_section(world: &World, vpg: usize, now: SimTime) -> Markup {
    let v = &world.vpgs[vpg];
    let (from, to) = v.journal.window_at(now);
    let contents = v.journal.contents(now);
    html! {
        section id="journal" {
            h2 { "The journal of " (v.name) }
            p { (VPG_STATUS.name(v.status)) " / " (VPG_SUBSTATUS.name(v.sub_status)) ". "
                "It holds " (contents.count) " checkpoint(s), from " strong { (time(from)) }
                " (the history edge, moving with the clock) to " strong { (time(to)) } "." }
            table {
                tr { th { "Checkpoint" } th { "Time" } th { "Tag" } th { "Change" } }
                @if let Some(first) = &contents.earliest {
                    tr { td { (first.id) } td { (time(first.at)) } td { "(the oldest, automatic or tagged)" } td {} }
                }
                @for c in &contents.tags {
                    tr {
                        td { (c.id) }
                        td { (time(c.at)) }
                        td { code { (c.tag.as_deref().unwrap_or("")) } }
                        td { (change_of(c.tag.as_deref().unwrap_or(""))) }
                    }
                }
            }
        }
    }
}

/// The change a rewind tag names (`... | change=<id> | ...`), else nothing.
fn change_of(tag: &str) -> &str {
    tag.split(" | ")
        .find_map(|part| part.strip_prefix("change="))
        .unwrap_or("")
}

/// A form's fields, the empty ones left out.
#[derive(Debug, Deserialize)]
pub(crate) struct FaultForm {
    method: Option<String>,
    path: Option<String>,
    action: Option<String>,
    status: Option<String>,
    latency_ms: Option<String>,
    count: Option<String>,
    expires_in_seconds: Option<String>,
}

/// `POST /_sim/ui/faults`: the rule, added as `POST /_sim/faults` adds it.
async fn add_fault(State(ctx): State<SiteCtx>, Form(form): Form<FaultForm>) -> Response {
    let mut rule = Map::new();
    let mut put = |key: &str, value: &Option<String>, number: bool| {
        if let Some(v) = value.as_deref().map(str::trim).filter(|v| !v.is_empty()) {
            let value = match number {
                true => v
                    .parse::<f64>()
                    .map_or_else(|_| Value::from(v), Value::from),
                false => Value::from(v),
            };
            rule.insert(key.to_owned(), value);
        }
    };
    put("Method", &form.method, false);
    put("Path", &form.path, false);
    put("Action", &form.action, false);
    put("Status", &form.status, true);
    put("LatencyMs", &form.latency_ms, true);
    put("Count", &form.count, true);
    put("ExpiresInSeconds", &form.expires_in_seconds, true);
    let added = JsonBody::from_fields(rule).and_then(|body| super::faults::add_rule(&ctx, &body));
    done(added.map(|_| ()))
}

/// `POST /_sim/ui/faults/{id}/remove`.
async fn remove_fault(State(ctx): State<SiteCtx>, Path(id): Path<u64>) -> Response {
    let removed = ctx.with_world(|world, _| world.faults.remove(id));
    match removed {
        true => Redirect::to(UI_PATH).into_response(),
        false => done(Err(ApiError::NotFound(format!(
            "There is no fault rule {id}."
        )))),
    }
}

#[derive(Debug, Deserialize)]
pub(crate) struct ClockForm {
    seconds: String,
}

/// `POST /_sim/ui/clock`: advances the clock as `POST /_sim/clock/advance` does.
async fn advance(State(ctx): State<SiteCtx>, Form(form): Form<ClockForm>) -> Response {
    let advanced = match form.seconds.trim().parse::<f64>() {
        Ok(seconds) => super::clock::advance_by(&ctx, seconds).map(|_| ()),
        Err(_) => Err(ApiError::BadRequest(format!(
            "{:?} is not a number of seconds.",
            form.seconds
        ))),
    };
    done(advanced)
}

/// `POST /_sim/ui/reset`: the initial world of this seed, as `POST /_sim/reset` makes it.
async fn reset(State(ctx): State<SiteCtx>) -> Response {
    done(super::state::reset_world(&ctx).map(|_| ()))
}

/// Back to the page after a change; the refusal, readable, otherwise.
fn done(result: Result<(), ApiError>) -> Response {
    match result {
        Ok(()) => Redirect::to(UI_PATH).into_response(),
        Err(e) => {
            let message = e.message();
            let body = html! { p class="bad" { (message) } p { a href=(UI_PATH) { "Back" } } };
            (
                StatusCode::BAD_REQUEST,
                Html(page("Not done", false, body).into_string()),
            )
                .into_response()
        }
    }
}
