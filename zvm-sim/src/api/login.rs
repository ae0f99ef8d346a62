//! `GET|POST /auth/realms/zerto/protocol/openid-connect/auth`: the realm's login page, for the
//! authorization-code flow with PKCE (S256) of its public client `zerto-client`, as a team server's
//! page signs people in. The page asks for a user name and a password; a good pair sends the browser
//! to the `redirect_uri` with a code good once, for a minute, for that client, that redirect URI and
//! that challenge; a bad one shows the page again. Any `redirect_uri` is taken (a Keycloak client
//! lists the ones it allows; the simulator's public client allows all).

use axum::extract::{Form, Path, Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use maud::{DOCTYPE, Markup, html};
use serde::Deserialize;

use crate::decisions::REALM;
use crate::http::SiteCtx;
use crate::world::auth::SignIn;

/// The parameters of an authorization request, and on the page's post the person's credentials.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Authorize {
    response_type: Option<String>,
    client_id: Option<String>,
    redirect_uri: Option<String>,
    state: Option<String>,
    code_challenge: Option<String>,
    code_challenge_method: Option<String>,
    scope: Option<String>,
    username: Option<String>,
    password: Option<String>,
}

impl Authorize {
    /// What is wrong with the request, in Keycloak's words, before any page is shown.
    fn problem(&self) -> Option<String> {
        if self.response_type.as_deref() != Some("code") {
            return Some("Invalid parameter: response_type (only code is supported)".into());
        }
        if self.client_id.as_deref().is_none_or(str::is_empty) {
            return Some("Missing parameter: client_id".into());
        }
        let redirect = self.redirect_uri.as_deref().unwrap_or_default();
        if !(redirect.starts_with("http://") || redirect.starts_with("https://")) {
            return Some("Invalid parameter: redirect_uri".into());
        }
        if self.code_challenge.as_deref().is_none_or(str::is_empty)
            || self.code_challenge_method.as_deref() != Some("S256")
        {
            return Some("Missing parameter: code_challenge_method (S256 is required)".into());
        }
        None
    }
}

/// `GET .../auth`: the login page.
pub(crate) async fn page(Path(realm): Path<String>, Query(request): Query<Authorize>) -> Response {
    if realm != REALM {
        return (StatusCode::NOT_FOUND, "Realm does not exist").into_response();
    }
    match request.problem() {
        Some(problem) => (
            StatusCode::BAD_REQUEST,
            Html(error_page(&problem).into_string()),
        )
            .into_response(),
        None => Html(login_page(&request, None).into_string()).into_response(),
    }
}

/// `POST .../auth`: the page's form: to the `redirect_uri` with a code, or the page again.
pub(crate) async fn sign_in(
    State(ctx): State<SiteCtx>,
    Path(realm): Path<String>,
    Form(form): Form<Authorize>,
) -> Response {
    if realm != REALM {
        return (StatusCode::NOT_FOUND, "Realm does not exist").into_response();
    }
    if let Some(problem) = form.problem() {
        return (
            StatusCode::BAD_REQUEST,
            Html(error_page(&problem).into_string()),
        )
            .into_response();
    }
    let (client, redirect) = (
        form.client_id.clone().unwrap_or_default(),
        form.redirect_uri.clone().unwrap_or_default(),
    );
    let code = ctx.with_world(|world, now| {
        let (auth, rng) = world.auth_and_rng();
        let sign_in = SignIn {
            client_id: &client,
            username: form.username.as_deref().unwrap_or_default(),
            password: form.password.as_deref().unwrap_or_default(),
            redirect_uri: &redirect,
            challenge: form.code_challenge.as_deref().unwrap_or_default(),
        };
        auth.sign_in(&sign_in, now, rng)
    });
    match code {
        Ok(code) => {
            let mut to = url::Url::parse(&redirect).expect("checked as http(s) above");
            to.query_pairs_mut().append_pair("code", &code);
            if let Some(state) = &form.state {
                to.query_pairs_mut().append_pair("state", state);
            }
            Redirect::to(to.as_str()).into_response()
        }
        Err(_) => (
            StatusCode::UNAUTHORIZED,
            Html(login_page(&form, Some("Invalid username or password.")).into_string()),
        )
            .into_response(),
    }
}

fn login_page(request: &Authorize, refused: Option<&str>) -> Markup {
    let hidden = [
        ("response_type", &request.response_type),
        ("client_id", &request.client_id),
        ("redirect_uri", &request.redirect_uri),
        ("state", &request.state),
        ("code_challenge", &request.code_challenge),
        ("code_challenge_method", &request.code_challenge_method),
        ("scope", &request.scope),
    ];
    html! {
        (DOCTYPE)
        html lang="en" {
            head { meta charset="utf-8"; title { "Sign in to zerto" } }
            body {
                h1 { "Sign in to zerto" }
                @if let Some(refused) = refused { p role="alert" { (refused) } }
                form method="post" {
                    @for (name, value) in hidden {
                        @if let Some(value) = value { input type="hidden" name=(name) value=(value); }
                    }
                    p { label for="username" { "Username" } " "
                        input id="username" name="username" autocomplete="username" required; }
                    p { label for="password" { "Password" } " "
                        input id="password" name="password" type="password"
                            autocomplete="current-password" required; }
                    button type="submit" { "Sign In" }
                }
            }
        }
    }
}

fn error_page(problem: &str) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" { head { meta charset="utf-8"; title { "We are sorry..." } }
            body { h1 { "We are sorry..." } p { (problem) } } }
    }
}
