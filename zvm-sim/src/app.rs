//! One site's router, assembled at the top from what the rest of the crate serves: Keycloak and
//! `/v1` (`api`), `/_sim` and `/metrics` (`control`), and the layers around them. Nothing below
//! imports this file, so a handler never depends on the assembly.
//!
//! A request passes, from the outside in:
//! 1. the call log, which records every request but `/_sim` ones;
//! 2. the body deadline: the body arrives in whole within it, or the answer is 408;
//! 3. the fault rules, so a faulted call is still logged with the status the client saw and the
//!    rules that fired;
//! 4. path normalisation: `/v1` paths are matched case-insensitively, as ASP.NET routes them;
//! 5. routing; `/v1` routes then pass the bearer check, `/_sim` routes the loopback check.
//!
//! Outside them all, a served site runs each request on a task of its own, so that a request whose
//! client went away (a timeout, a killed process) still runs to its end and takes effect, as on an
//! appliance; and it closes the connection of a response a fault chose to lose.

use std::sync::Arc;

use axum::extract::Request;
use axum::http::Uri;
use axum::response::{IntoResponse, Response};
use axum::{Router, middleware};

use crate::api;
use crate::control;
use crate::http::{ApiError, Scheme, SiteCtx, Unmatched};
use crate::shared::{Shared, SimState};
use crate::world::SiteRole;

/// One site's router: Keycloak, `/v1` and `/_sim`, with the call log around them. For in-process
/// tests with tower's `oneshot`; [`crate::start`] serves it with peer addresses attached, which the
/// control API uses to stay loopback-only.
pub fn app(state: &SimState, site: SiteRole) -> Router {
    site_app(state.shared.clone(), site, Scheme("http"))
}

/// The router of one site, served with `scheme` (`http` or `https`).
pub(crate) fn site_app(shared: Arc<Shared>, site: SiteRole, scheme: Scheme) -> Router {
    let ctx = SiteCtx { shared, site };
    let v1 = api::v1_routes()
        .router
        .route_layer(middleware::from_fn_with_state(
            ctx.clone(),
            api::require_bearer,
        ));
    let routed = api::keycloak_routes()
        .router
        .merge(v1)
        .nest("/_sim", control::router())
        .route("/metrics", axum::routing::get(control::metrics))
        .fallback(no_such_path)
        .with_state(ctx.clone());
    Router::new()
        .fallback_service(routed)
        .layer(middleware::map_request(lowercase_v1_path))
        .layer(middleware::from_fn_with_state(
            ctx.clone(),
            api::apply_faults,
        ))
        .layer(middleware::from_fn_with_state(
            ctx.clone(),
            api::within_deadline,
        ))
        .layer(middleware::from_fn_with_state(ctx, api::record_call))
        .layer(middleware::from_fn(api::close_lost_connections))
        .layer(axum::Extension(scheme))
}

/// ASP.NET matches routes case-insensitively (SW10 itself spells `FailoverTest` and
/// `moveRollback`), so `/v1` paths are lowercased before routing. Identifiers in them are compared
/// case-insensitively anyway. Keycloak paths stay case-sensitive, as Keycloak's are.
/// The path is kept as the client sent it, for the answer that says no route matched it.
async fn lowercase_v1_path(mut request: Request) -> Request {
    let path = request.uri().path();
    let is_v1 = path.get(..3).is_some_and(|p| p.eq_ignore_ascii_case("/v1"));
    if is_v1 && path.bytes().any(|b| b.is_ascii_uppercase()) {
        let sent = PathAsSent(path.to_owned());
        let lowered = match request.uri().query() {
            Some(query) => format!("{}?{query}", path.to_ascii_lowercase()),
            None => path.to_ascii_lowercase(),
        };
        if let Ok(uri) = lowered.parse::<Uri>() {
            *request.uri_mut() = uri;
            request.extensions_mut().insert(sent);
        }
    }
    request
}

/// A request's path before [`lowercase_v1_path`] lowered it.
#[derive(Debug, Clone)]
struct PathAsSent(String);

async fn no_such_path(uri: Uri, sent: Option<axum::Extension<PathAsSent>>) -> Response {
    let path = sent.map_or_else(|| uri.path().to_owned(), |axum::Extension(p)| p.0);
    let mut response = ApiError::NotFound(format!(
        "No HTTP resource was found that matches the request URI '{path}'."
    ))
    .into_response();
    response.extensions_mut().insert(Unmatched);
    response
}
