//! The pages' state ([`Pages`]): the facade, the realm, and the logins and sessions under way; who
//! a request's session cookie says is signed in, with what they may do; and what a person filled in.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use rewind_core::Rewind;
use rewind_core::config::UiSignIn;

use super::layout::problem;
use crate::in_flight::InFlight;
use crate::paths::UI_LOGIN_PATH;
use crate::sign_in::{Caller, Verifier};

/// The session cookie.
pub(super) const SESSION_COOKIE: &str = "rewind_ui";
/// The longest a session lasts.
pub(super) const SESSION_LIFE: Duration = Duration::from_secs(8 * 3600);
/// Logins and sessions held at most (older ones go first).
pub(super) const MAX_HELD: usize = 1000;

/// What a signed-in person is, for as long as their session lasts.
#[derive(Debug, Clone)]
pub(super) struct Session {
    /// Who signed in, with their roles.
    pub(super) caller: Caller,
    /// The token every form that acts sends back.
    pub(super) csrf: String,
    /// When the session ends.
    pub(super) until: Instant,
}

/// The session of the person signed in, as a handler's argument: a request without one is sent to
/// the sign-in instead. It comes after any query extractor, so that a malformed query is refused as
/// such before the session is looked at; and before a body, which axum takes last.
pub(super) struct SignedIn(pub(super) Session);

impl FromRequestParts<Pages> for SignedIn {
    type Rejection = Redirect;

    async fn from_request_parts(parts: &mut Parts, pages: &Pages) -> Result<Self, Redirect> {
        pages
            .session(&parts.headers)
            .map(SignedIn)
            .ok_or_else(|| Redirect::to(UI_LOGIN_PATH))
    }
}

/// The session of a person with the recover role, as a handler's argument, placed as [`SignedIn`]
/// is: a request without a session is sent to the sign-in, one without the role is refused with
/// the role named.
pub(super) struct Recoverer(pub(super) Session);

impl FromRequestParts<Pages> for Recoverer {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, pages: &Pages) -> Result<Self, Response> {
        let SignedIn(session) = SignedIn::from_request_parts(parts, pages)
            .await
            .map_err(IntoResponse::into_response)?;
        if !pages.may_recover(&session) {
            let role = &pages.verifier.auth().roles.recover;
            let why = format!(
                "{} does not have the role {role}, which this action needs (a diff's content, keeping tags, recovering files, restoring a VM); ask whoever runs the realm for it. Nothing was done.",
                session.caller.who()
            );
            return Err(problem(StatusCode::FORBIDDEN, &why));
        }
        Ok(Recoverer(session))
    }
}

/// The pages' state: the facade, the realm, and the logins and sessions under way.
#[derive(Clone)]
pub struct Pages {
    pub(super) rewind: Rewind,
    pub(super) verifier: Verifier,
    pub(super) ui: UiSignIn,
    /// Each login under way, by its state: its PKCE verifier and when it started.
    pub(super) logins: Arc<Mutex<HashMap<String, (String, Instant)>>>,
    /// Each session, by the id its cookie holds.
    pub(super) sessions: Arc<Mutex<HashMap<String, Session>>>,
    /// The server's work in flight, which the actions started from the page count in, so that the
    /// server finishes them before it exits.
    pub(super) in_flight: InFlight,
}

impl std::fmt::Debug for Pages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pages")
            .field("client_id", &self.ui.client_id)
            .finish()
    }
}

/// A field a person filled in, of a form or a query: trimmed, and absent when blank, as a tool's
/// argument is ([`crate::args::given`]); the spaces typed around a path or a name are no part of it.
pub(super) fn given(field: &Option<String>) -> Option<String> {
    crate::args::given(field.as_deref().map(|v| v.trim().to_owned()))
}

/// The value of the cookie `name` the request carries.
pub(super) fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
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
    /// The pages of `[http.auth.ui]`, with no login or session yet, their actions counted in
    /// `in_flight`.
    pub(super) fn new(
        rewind: &Rewind,
        verifier: Verifier,
        ui: UiSignIn,
        in_flight: InFlight,
    ) -> Pages {
        Pages {
            rewind: rewind.clone(),
            verifier,
            ui,
            logins: Arc::default(),
            sessions: Arc::default(),
            in_flight,
        }
    }

    /// The cookies' `Secure` attribute, when the pages are reached over HTTPS.
    pub(super) fn secure(&self) -> &'static str {
        match self.ui.redirect_uri.scheme() {
            "https" => "; Secure",
            _ => "",
        }
    }

    /// The session of the request's cookie, if it holds one still open.
    pub(super) fn session(&self, headers: &HeaderMap) -> Option<Session> {
        let id = cookie(headers, SESSION_COOKIE)?;
        let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        sessions.retain(|_, s| s.until > Instant::now());
        sessions.get(&id).cloned()
    }

    /// Whether `caller` holds the role `role` picks.
    pub(super) fn may(
        &self,
        caller: &Caller,
        role: fn(&rewind_core::config::ToolRoles) -> &String,
    ) -> bool {
        let roles = &self.verifier.auth().roles;
        caller.roles.iter().any(|r| r == role(roles))
    }

    /// Whether the person signed in holds the recover role.
    pub(super) fn may_recover(&self, session: &Session) -> bool {
        self.may(&session.caller, |r| &r.recover)
    }
}
