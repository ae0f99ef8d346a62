//! What every handler of one site holds: the shared world and which site it is ([`SiteCtx`]), and,
//! for a handler that answers with views, the URL of the request that links are made from
//! ([`ViewCtx`], [`BaseUrl`]).

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::header;
use axum::http::request::Parts;

use crate::shared::Shared;
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
