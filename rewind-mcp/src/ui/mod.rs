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
//! - Looking needs the read role, checked once at sign-in ([`login`]); the actions ([`act`]) need
//!   the recover role, and each runs only when its confirmation is sent back.
//!
//! - `/ui/approvals` lists the held calls for a person with the approve role, and approves or
//!   denies one behind a confirmation ([`approvals`]).
//!
//! [`login`] signs people in and out; [`pages`] holds the pages' state and who is signed in;
//! [`layout`] is how every page looks.

mod act;
mod approvals;
mod home;
mod layout;
mod login;
mod pages;

use axum::Router;
use axum::routing::{get, post};
use rewind_core::Rewind;

use crate::in_flight::InFlight;
use crate::paths::{
    UI_ACT_PATH, UI_APPROVALS_PATH, UI_CALLBACK_PATH, UI_DIFF_PATH, UI_LOGIN_PATH, UI_LOGOUT_PATH,
    UI_PATH,
};
use crate::sign_in::Verifier;
use pages::Pages;

/// The `/ui` routes, or `None` without `[http.auth.ui]`; what a person starts from them is counted
/// in `in_flight`, which the server waits for before it exits.
pub fn router(
    rewind: &Rewind,
    verifier: Option<&Verifier>,
    in_flight: &InFlight,
) -> Option<Router> {
    let verifier = verifier?.clone();
    let ui = verifier.auth().ui.clone()?;
    let pages = Pages::new(rewind, verifier, ui, in_flight.clone());
    Some(
        Router::new()
            .route(UI_PATH, get(home::home))
            .route(UI_LOGIN_PATH, get(login::login))
            .route(UI_CALLBACK_PATH, get(login::callback))
            .route(UI_LOGOUT_PATH, post(login::logout))
            .route(UI_DIFF_PATH, get(act::diff))
            .route(UI_ACT_PATH, get(act::confirm).post(act::act))
            .route(UI_APPROVALS_PATH, get(approvals::list))
            .route(
                &format!("{UI_APPROVALS_PATH}/{{id}}"),
                get(approvals::show).post(approvals::decide),
            )
            .with_state(pages),
    )
}
