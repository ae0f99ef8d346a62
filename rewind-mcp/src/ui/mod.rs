//! `/ui`: a team server's page for people, signing them in with the realm's authorization-code
//! flow with PKCE (`[http.auth.ui]`): who guarded what for whom, each change's steps and tags with
//! how long their way back lasts, and the restores that wait for a person's commit. Server-
//! rendered, readable without JavaScript, its style embedded.
//!
//! - `GET /ui/login` sends the browser to the realm with a fresh `state` and an S256 challenge; the
//!   state is also kept in a short-lived `SameSite=Lax` cookie, so a callback started in another
//!   browser (a login forced on someone) is refused.
//! - `GET /ui/callback` takes the code back to the realm's token endpoint with the verifier, checks
//!   the access token as every bearer is checked ([`crate::sign_in::Verifier`]), and keeps a
//!   session: an `HttpOnly`, `SameSite=Strict` cookie of 32 random bytes, for at most eight hours.
//!   It answers a page that goes on to `/ui` itself: a redirect straight from a cross-site
//!   navigation would arrive without the `Strict` cookie.
//! - Every form that acts carries the session's CSRF token; `POST /ui/logout` ends the session.
//! - Looking needs the read role; the actions ([`act`]) need the recover role, and each runs only
//!   when its confirmation is sent back.

mod act;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Form, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use maud::{DOCTYPE, Markup, html};
use rand::RngExt;
use rewind_core::audit_journal::Timeline;
use rewind_core::config::UiSignIn;
use rewind_core::{JournalFilter, Rewind};
use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::sign_in::{Caller, Verifier};

/// The session cookie.
const SESSION_COOKIE: &str = "rewind_ui";
/// The cookie that binds a login's state to the browser that started it.
const LOGIN_COOKIE: &str = "rewind_ui_login";
/// The longest a session lasts.
const SESSION_LIFE: Duration = Duration::from_secs(8 * 3600);
/// The longest a login may take at the realm.
const LOGIN_LIFE: Duration = Duration::from_secs(600);
/// Logins and sessions held at most (older ones go first).
const MAX_HELD: usize = 1000;
/// Changes whose tags are read from the ZVMs for the page (the newest).
const TAGGED_CHANGES: usize = 5;

/// What a signed-in person is, for as long as their session lasts.
#[derive(Debug, Clone)]
struct Session {
    caller: Caller,
    csrf: String,
    until: Instant,
}

/// The pages' state: the facade, the realm, and the logins and sessions under way.
#[derive(Clone)]
pub struct Pages {
    rewind: Rewind,
    verifier: Verifier,
    ui: UiSignIn,
    logins: Arc<Mutex<HashMap<String, (String, Instant)>>>,
    sessions: Arc<Mutex<HashMap<String, Session>>>,
}

impl std::fmt::Debug for Pages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pages")
            .field("client_id", &self.ui.client_id)
            .finish()
    }
}

/// The `/ui` routes, or `None` without `[http.auth.ui]`.
pub fn router(rewind: &Rewind, verifier: Option<&Verifier>) -> Option<Router> {
    let verifier = verifier?.clone();
    let ui = verifier.auth().ui.clone()?;
    let pages = Pages {
        rewind: rewind.clone(),
        verifier,
        ui,
        logins: Arc::default(),
        sessions: Arc::default(),
    };
    Some(
        Router::new()
            .route("/ui", get(home))
            .route("/ui/login", get(login))
            .route("/ui/callback", get(callback))
            .route("/ui/logout", post(logout))
            .route("/ui/diff", get(act::diff))
            .route("/ui/act", get(act::confirm).post(act::act))
            .with_state(pages),
    )
}

/// 32 random bytes, URL-safe.
fn random_token() -> String {
    let bytes: [u8; 32] = rand::rng().random();
    URL_SAFE_NO_PAD.encode(bytes)
}

fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
}

impl Pages {
    fn secure(&self) -> &'static str {
        match self.ui.redirect_uri.scheme() {
            "https" => "; Secure",
            _ => "",
        }
    }

    fn session(&self, headers: &HeaderMap) -> Option<Session> {
        let id = cookie(headers, SESSION_COOKIE)?;
        let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        sessions.retain(|_, s| s.until > Instant::now());
        sessions.get(&id).cloned()
    }

    fn may(&self, caller: &Caller, role: fn(&rewind_core::config::ToolRoles) -> &String) -> bool {
        let roles = &self.verifier.auth().roles;
        caller.roles.iter().any(|r| r == role(roles))
    }

    fn may_recover(&self, session: &Session) -> bool {
        self.may(&session.caller, |r| &r.recover)
    }

    /// The session of a person with the recover role, or the answer to anyone else: to the
    /// sign-in when signed out, a refusal naming the role when without it.
    fn recoverer(&self, headers: &HeaderMap) -> Result<Session, Box<Response>> {
        let Some(session) = self.session(headers) else {
            return Err(Box::new(Redirect::to("/ui/login").into_response()));
        };
        if !self.may_recover(&session) {
            let role = &self.verifier.auth().roles.recover;
            let why = format!(
                "{} does not have the role {role}, which this action needs (a diff's content, keeping tags, recovering files, restoring a VM); ask whoever runs the realm for it. Nothing was done.",
                session.caller.who()
            );
            return Err(Box::new(problem(StatusCode::FORBIDDEN, &why)));
        }
        Ok(session)
    }
}

/// `GET /ui/login`: to the realm, with a fresh state and challenge.
async fn login(State(pages): State<Pages>) -> Response {
    let endpoints = match endpoints(&pages).await {
        Ok(e) => e,
        Err(why) => return problem(StatusCode::BAD_GATEWAY, &why),
    };
    let (state, verifier) = (random_token(), random_token());
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    {
        let mut logins = pages.logins.lock().unwrap_or_else(|p| p.into_inner());
        logins.retain(|_, (_, at)| at.elapsed() < LOGIN_LIFE);
        if logins.len() >= MAX_HELD {
            logins.clear();
        }
        logins.insert(state.clone(), (verifier, Instant::now()));
    }
    let mut to = endpoints.authorization;
    to.query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", &pages.ui.client_id)
        .append_pair("redirect_uri", pages.ui.redirect_uri.as_str())
        .append_pair("scope", "openid")
        .append_pair("state", &state)
        .append_pair("code_challenge", &challenge)
        .append_pair("code_challenge_method", "S256");
    let bind = format!(
        "{LOGIN_COOKIE}={state}; HttpOnly; SameSite=Lax; Path=/ui; Max-Age={}{}",
        LOGIN_LIFE.as_secs(),
        pages.secure()
    );
    with_cookies(Redirect::to(to.as_str()).into_response(), [bind])
}

/// `response` setting each of `cookies` (whole `Set-Cookie` values).
fn with_cookies(mut response: Response, cookies: impl IntoIterator<Item = String>) -> Response {
    for c in cookies {
        if let Ok(value) = HeaderValue::from_str(&c) {
            response.headers_mut().append(header::SET_COOKIE, value);
        }
    }
    response
}

/// The realm's authorization and token endpoints, from its OpenID configuration; the token
/// endpoint must be on the issuer's origin (the code and its verifier go nowhere else).
struct Endpoints {
    authorization: url::Url,
    token: url::Url,
}

async fn endpoints(pages: &Pages) -> Result<Endpoints, String> {
    let issuer = pages
        .verifier
        .auth()
        .issuer
        .trim_end_matches('/')
        .to_string();
    let discovery = format!("{issuer}/.well-known/openid-configuration");
    let document: serde_json::Value = pages
        .verifier
        .issuer_http()
        .get(&discovery)
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .map_err(|e| format!("the realm's OpenID configuration could not be read: {e}"))?
        .json()
        .await
        .map_err(|e| format!("the realm's OpenID configuration is not JSON: {e}"))?;
    let url = |key: &str| -> Result<url::Url, String> {
        document[key]
            .as_str()
            .and_then(|u| url::Url::parse(u).ok())
            .ok_or_else(|| format!("the realm's OpenID configuration names no {key}"))
    };
    let (authorization, token) = (url("authorization_endpoint")?, url("token_endpoint")?);
    let issuer_origin = url::Url::parse(&issuer).map(|u| u.origin()).ok();
    if issuer_origin != Some(token.origin()) {
        return Err("the realm's token endpoint is not on the issuer's origin".into());
    }
    Ok(Endpoints {
        authorization,
        token,
    })
}

#[derive(Debug, Deserialize)]
struct Callback {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
}

/// `GET /ui/callback`: the code for a token, the token checked, a session kept.
async fn callback(
    State(pages): State<Pages>,
    headers: HeaderMap,
    Query(back): Query<Callback>,
) -> Response {
    if let Some(error) = back.error {
        return problem(
            StatusCode::UNAUTHORIZED,
            &format!("the realm did not sign you in: {error}"),
        );
    }
    let (Some(code), Some(state)) = (back.code, back.state) else {
        return problem(StatusCode::BAD_REQUEST, "the realm sent no code back");
    };
    if cookie(&headers, LOGIN_COOKIE).as_deref() != Some(state.as_str()) {
        return problem(
            StatusCode::BAD_REQUEST,
            "this sign-in was not started in this browser; start again at /ui/login",
        );
    }
    let verifier = {
        let mut logins = pages.logins.lock().unwrap_or_else(|p| p.into_inner());
        logins.remove(&state)
    };
    let Some((verifier, at)) = verifier.filter(|(_, at)| at.elapsed() < LOGIN_LIFE) else {
        return problem(
            StatusCode::BAD_REQUEST,
            "this sign-in is unknown or too old; start again",
        );
    };
    let _ = at;
    let caller = match exchange(&pages, &code, &verifier).await {
        Ok(caller) => caller,
        Err(why) => return problem(StatusCode::UNAUTHORIZED, &why),
    };
    if !pages.may(&caller, |r| &r.read) {
        let role = &pages.verifier.auth().roles.read;
        return problem(
            StatusCode::FORBIDDEN,
            &format!(
                "{} may not look here: the page needs the role {role:?}",
                caller.who()
            ),
        );
    }
    let id = random_token();
    let session = Session {
        caller,
        csrf: random_token(),
        until: Instant::now() + SESSION_LIFE,
    };
    let name = session.caller.who().to_string();
    {
        let mut sessions = pages.sessions.lock().unwrap_or_else(|p| p.into_inner());
        if sessions.len() >= MAX_HELD {
            sessions.retain(|_, s| s.until > Instant::now());
        }
        sessions.insert(id.clone(), session);
    }
    let keep = format!(
        "{SESSION_COOKIE}={id}; HttpOnly; SameSite=Strict; Path=/ui; Max-Age={}{}",
        SESSION_LIFE.as_secs(),
        pages.secure()
    );
    let forget = format!("{LOGIN_COOKIE}=; HttpOnly; SameSite=Lax; Path=/ui; Max-Age=0");
    let body = html! {
        (DOCTYPE)
        html lang="en" { head { meta charset="utf-8"; meta http-equiv="refresh" content="0;url=/ui";
            title { "Signed in" } }
            body { p { "Signed in as " (name) ". " a href="/ui" { "Go on" } } } }
    };
    with_cookies(Html(body.into_string()).into_response(), [keep, forget])
}

/// The code and its verifier for an access token, checked as every bearer is.
async fn exchange(pages: &Pages, code: &str, verifier: &str) -> Result<Caller, String> {
    let endpoints = endpoints(pages).await?;
    let form = [
        ("grant_type", "authorization_code"),
        ("client_id", pages.ui.client_id.as_str()),
        ("code", code),
        ("redirect_uri", pages.ui.redirect_uri.as_str()),
        ("code_verifier", verifier),
    ];
    let answer: serde_json::Value = pages
        .verifier
        .issuer_http()
        .post(endpoints.token)
        .form(&form)
        .send()
        .await
        .map_err(|e| format!("the realm's token endpoint did not answer: {e}"))?
        .json()
        .await
        .map_err(|e| format!("the realm's token endpoint answered no JSON: {e}"))?;
    let Some(token) = answer["access_token"].as_str() else {
        let why = answer["error_description"]
            .as_str()
            .unwrap_or("no access token");
        return Err(format!("the realm refused the sign-in: {why}"));
    };
    pages
        .verifier
        .check(token)
        .await
        .map_err(|refusal| format!("the realm's token was refused: {refusal}"))
}

#[derive(Debug, Deserialize)]
struct LogoutForm {
    csrf: String,
}

/// `POST /ui/logout`: the session ends.
async fn logout(
    State(pages): State<Pages>,
    headers: HeaderMap,
    Form(form): Form<LogoutForm>,
) -> Response {
    let Some(id) = cookie(&headers, SESSION_COOKIE) else {
        return Redirect::to("/ui").into_response();
    };
    {
        let mut sessions = pages.sessions.lock().unwrap_or_else(|p| p.into_inner());
        match sessions.get(&id) {
            Some(s) if s.csrf == form.csrf => {
                sessions.remove(&id);
            }
            _ => return problem(StatusCode::FORBIDDEN, "this form was not sent by your page"),
        }
    }
    let gone = format!("{SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/ui; Max-Age=0");
    let body = page(
        "Signed out",
        html! { p { "Signed out. " a href="/ui/login" { "Sign in" } } },
    );
    with_cookies(Html(body.into_string()).into_response(), [gone])
}

/// The filters of the timeline.
#[derive(Debug, Default, Deserialize)]
struct Filters {
    person: Option<String>,
    agent: Option<String>,
    vm: Option<String>,
    change: Option<String>,
}

/// `GET /ui`: the timeline, the tags of the newest changes, the restores that wait.
async fn home(
    State(pages): State<Pages>,
    headers: HeaderMap,
    Query(f): Query<Filters>,
) -> Response {
    let Some(session) = pages.session(&headers) else {
        return Redirect::to("/ui/login").into_response();
    };
    let given = |v: &Option<String>| {
        v.as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
    };
    let filter = JournalFilter {
        vm: given(&f.vm),
        change_id: given(&f.change),
        person: given(&f.person),
        since: Some(chrono::Utc::now() - chrono::Duration::days(30)),
        last: None,
    };
    let rewind = pages.rewind.clone();
    let read = crate::local_files::on_files(&rewind, move |r| r.journal().read(&filter)).await;
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
    let body = html! {
        (account(&session))
        (filters_form(&f))
        (restores(waiting.as_ref()))
        (tags_section(&tags))
        (timeline_section(&timeline))
    };
    Html(page("rewind", body).into_string()).into_response()
}

fn account(s: &Session) -> Markup {
    html! {
        form class="account" method="post" action="/ui/logout" {
            "Signed in as " strong { (s.caller.who()) } " "
            input type="hidden" name="csrf" value=(s.csrf);
            button type="submit" { "Sign out" }
        }
    }
}

fn filters_form(f: &Filters) -> Markup {
    let v = |x: &Option<String>| x.clone().unwrap_or_default();
    html! {
        form method="get" action="/ui" {
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
    format!("/ui/diff?{query}")
}

fn page(title: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head { meta charset="utf-8"; title { (title) } style { (STYLE) } }
            body { header { h1 { a href="/ui" { "rewind" } } } main { (body) } }
        }
    }
}

const STYLE: &str = "body{font:14px system-ui,sans-serif;margin:1rem 2rem;color:#1b1b1b}\
h1{font-size:1.3rem}h2{font-size:1.1rem;margin-top:1.6rem;border-bottom:1px solid #ccc}\
h3{font-size:1rem;margin:.9rem 0 .2rem}table{border-collapse:collapse}th,td{padding:.2rem .6rem;\
text-align:left;border-bottom:1px solid #eee}th{background:#f4f4f4}label{margin-right:.3rem}\
input,button{margin-right:.6rem}.account{float:right}code{font-size:12px}\
form{margin:.4rem 0}pre{background:#f7f7f7;padding:.5rem;overflow:auto}";

fn problem(status: StatusCode, why: &str) -> Response {
    let title = match status {
        StatusCode::FORBIDDEN => "Not allowed",
        _ => "Not signed in",
    };
    let body = page(
        title,
        html! { p { (why) } p { a href="/ui/login" { "Sign in" } } },
    );
    (status, Html(body.into_string())).into_response()
}
