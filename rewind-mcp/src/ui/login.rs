//! Signing people in and out with the realm's authorization-code flow with PKCE: `GET /ui/login`
//! sends the browser to the realm, `GET /ui/callback` trades the code for a checked token and keeps
//! a session, `POST /ui/logout` ends it.

use std::time::{Duration, Instant};

use axum::extract::{Form, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use maud::{DOCTYPE, html};
use rand::RngExt;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::layout::{page, problem};
use super::pages::{MAX_HELD, Pages, SESSION_COOKIE, SESSION_LIFE, Session, cookie};
use crate::paths::{UI_LOGIN_PATH, UI_PATH};
use crate::sign_in::Caller;

/// The cookie that binds a login's state to the browser that started it.
const LOGIN_COOKIE: &str = "rewind_ui_login";
/// The longest a login may take at the realm.
const LOGIN_LIFE: Duration = Duration::from_secs(600);

/// 32 random bytes, URL-safe.
fn random_token() -> String {
    let bytes: [u8; 32] = rand::rng().random();
    URL_SAFE_NO_PAD.encode(bytes)
}

/// `GET /ui/login`: to the realm, with a fresh state and challenge.
pub(super) async fn login(State(pages): State<Pages>) -> Response {
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
        "{LOGIN_COOKIE}={state}; HttpOnly; SameSite=Lax; Path={UI_PATH}; Max-Age={}{}",
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

/// What the realm sends back to `/ui/callback`: a code and the state the login sent, or an error.
#[derive(Debug, Deserialize)]
pub(super) struct Callback {
    /// The authorization code, traded for an access token.
    code: Option<String>,
    /// The state the login sent, which the browser's login cookie must hold too.
    state: Option<String>,
    /// Why the realm did not sign the person in.
    error: Option<String>,
}

/// `GET /ui/callback`: the code for a token, the token checked, a session kept.
pub(super) async fn callback(
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
            &format!(
                "this sign-in was not started in this browser; start again at {UI_LOGIN_PATH}"
            ),
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
        "{SESSION_COOKIE}={id}; HttpOnly; SameSite=Strict; Path={UI_PATH}; Max-Age={}{}",
        SESSION_LIFE.as_secs(),
        pages.secure()
    );
    let forget = format!("{LOGIN_COOKIE}=; HttpOnly; SameSite=Lax; Path={UI_PATH}; Max-Age=0");
    let body = html! {
        (DOCTYPE)
        html lang="en" { head { meta charset="utf-8"; meta http-equiv="refresh" content=(format!("0;url={UI_PATH}"));
            title { "Signed in" } }
            body { p { "Signed in as " (name) ". " a href=(UI_PATH) { "Go on" } } } }
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

/// The sign-out form, with the session's CSRF token.
#[derive(Debug, Deserialize)]
pub(super) struct LogoutForm {
    csrf: String,
}

/// `POST /ui/logout`: the session ends.
pub(super) async fn logout(
    State(pages): State<Pages>,
    headers: HeaderMap,
    Form(form): Form<LogoutForm>,
) -> Response {
    let Some(id) = cookie(&headers, SESSION_COOKIE) else {
        return Redirect::to(UI_PATH).into_response();
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
    let gone = format!("{SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path={UI_PATH}; Max-Age=0");
    let body = page(
        "Signed out",
        html! { p { "Signed out. " a href=(UI_LOGIN_PATH) { "Sign in" } } },
    );
    with_cookies(Html(body.into_string()).into_response(), [gone])
}
