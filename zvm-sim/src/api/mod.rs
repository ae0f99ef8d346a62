//! The HTTP face of one simulated ZVM: Keycloak's token endpoint, the `/v1` API and the `/_sim`
//! control API, with the layers around them.
//!
//! A request passes, from the outside in:
//! 1. the call log ([`call_log`]), which records every request but `/_sim` ones;
//! 2. the body deadline ([`body`]): the body arrives in whole within it, or the answer is 408;
//! 3. the fault rules ([`faults`]), so a faulted call is still logged with the status the client
//!    saw and the rules that fired;
//! 4. path normalisation: `/v1` paths are matched case-insensitively, as ASP.NET routes them;
//! 5. routing; `/v1` routes then pass the bearer check ([`bearer`]), `/_sim` routes the loopback
//!    check.
//!
//! Outside them all, a served site runs each request on a task of its own, so that a request whose
//! client went away (a timeout, a killed process) still runs to its end and takes effect, as on an
//! appliance; and it closes the connection of a response a fault chose to lose.
//!
//! Handlers live one file per resource: [`keycloak`], [`sites`], [`vms`], [`vpgs`],
//! [`checkpoints`], [`tasks`], [`flrs`], the VPG actions in [`actions`], and VRAs and datastores
//! in [`monitoring`].

mod actions;
mod bearer;
mod body;
mod call_log;
mod checkpoints;
mod error;
pub(crate) mod extract;
mod faults;
mod flrs;
mod keycloak;
mod login;
mod ltr;
mod monitoring;
mod restore;
mod routes;
mod scripts;
mod sites;
mod tasks;
mod traces;
mod virtualization;
mod vms;
mod vpg_settings;
mod vpgs;
mod vras;

use std::sync::Arc;

use axum::extract::{FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{Uri, header};
use axum::response::{IntoResponse, Response};
use axum::{Router, middleware};

pub(crate) use error::ApiError;
pub(crate) use extract::{JsonBody, Params};
pub use routes::coverage_matrix;

use crate::Shared;
use crate::wire::SiteView;
use crate::world::clock::SimTime;
use crate::world::{SiteRole, World};

/// What every handler of one site needs: the shared world and which site it is.
#[derive(Debug, Clone)]
pub(crate) struct SiteCtx {
    pub shared: Arc<Shared>,
    pub site: SiteRole,
}

impl SiteCtx {
    /// Locks the world, brings it to the simulated "now", and runs `f` on it. `f` is synchronous,
    /// so the lock is never held across an `.await`.
    pub fn with_world<R>(&self, f: impl FnOnce(&mut World, SimTime) -> R) -> R {
        let mut world = self.shared.lock();
        let now = world.clock.now();
        world.advance(now);
        f(&mut world, now)
    }

    /// Like [`SiteCtx::with_world`], for reading views of this site.
    pub fn with_view<R>(&self, base: &BaseUrl, f: impl FnOnce(&SiteView<'_>) -> R) -> R {
        self.with_world(|world, now| {
            f(&SiteView {
                world,
                site: self.site,
                base: &base.0,
                now,
            })
        })
    }
}

/// What a handler that answers with views of its site needs: the site, and the URL of the request,
/// which links and download URLs are made from.
#[derive(Debug, Clone)]
pub(crate) struct ViewCtx {
    /// Which site the request reached.
    pub site: SiteRole,
    ctx: SiteCtx,
    base: BaseUrl,
}

impl FromRequestParts<SiteCtx> for ViewCtx {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, ctx: &SiteCtx) -> Result<Self, Self::Rejection> {
        let base = BaseUrl::from_request_parts(parts, ctx).await?;
        Ok(ViewCtx {
            site: ctx.site,
            ctx: ctx.clone(),
            base,
        })
    }
}

impl ViewCtx {
    /// [`SiteCtx::with_view`], with the request's URL.
    pub fn view<R>(&self, f: impl FnOnce(&SiteView<'_>) -> R) -> R {
        self.ctx.with_view(&self.base, f)
    }

    /// [`SiteCtx::with_world`].
    pub fn with_world<R>(&self, f: impl FnOnce(&mut World, SimTime) -> R) -> R {
        self.ctx.with_world(f)
    }

    /// `http://host:port` (or `https://`) of the request.
    pub fn base_url(&self) -> &str {
        &self.base.0
    }
}

/// `http://host:port` (or `https://`) of the request, for the `href` of links and download URLs.
#[derive(Debug, Clone)]
pub(crate) struct BaseUrl(pub String);

/// The scheme a site is served with, attached to every request by its router.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Scheme(pub &'static str);

impl<S: Send + Sync> FromRequestParts<S> for BaseUrl {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let host = parts
            .headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .or_else(|| parts.uri.authority().map(|a| a.as_str()))
            .unwrap_or("localhost");
        let scheme = parts.extensions.get::<Scheme>().map_or("http", |s| s.0);
        Ok(BaseUrl(format!("{scheme}://{host}")))
    }
}

/// The router of one site, served with `scheme` (`http` or `https`).
pub(crate) fn site_app(shared: Arc<Shared>, site: SiteRole, scheme: Scheme) -> Router {
    let ctx = SiteCtx { shared, site };
    let v1 = routes::v1()
        .router
        .route_layer(middleware::from_fn_with_state(
            ctx.clone(),
            bearer::require_bearer,
        ));
    let routed = routes::keycloak()
        .router
        .merge(v1)
        .nest("/_sim", crate::control::router())
        .route("/metrics", axum::routing::get(crate::metrics::metrics))
        .fallback(no_such_path)
        .with_state(ctx.clone());
    Router::new()
        .fallback_service(routed)
        .layer(middleware::map_request(lowercase_v1_path))
        .layer(middleware::from_fn_with_state(ctx.clone(), faults::apply))
        .layer(middleware::from_fn_with_state(
            ctx.clone(),
            body::within_deadline,
        ))
        .layer(middleware::from_fn_with_state(ctx, call_log::record))
        .layer(middleware::from_fn(faults::close_lost_connections))
        .layer(axum::Extension(scheme))
}

/// Whether a path belongs to the control API or is `/metrics`, which the call log and the fault
/// rules leave alone.
pub(crate) fn is_control_path(path: &str) -> bool {
    path == "/_sim" || path.starts_with("/_sim/") || path == "/metrics"
}

/// Marks the answer to a request no route matched, for the call log and the metrics.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Unmatched;

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
