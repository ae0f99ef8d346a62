//! The bearer check in front of every `/v1` route: a token this site issued, not expired on the
//! simulated clock and not revoked, or 401 with an empty body and
//! `WWW-Authenticate: Bearer error="invalid_token"`. Clients treat the token as opaque, as they
//! always did; the site reads the `jti` of the signed token it issued.

use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::Response;

use crate::http::{ApiError, SiteCtx};
use crate::world::auth::Principal;

/// Checks the bearer token and hands the caller to the handler as a request extension.
pub(crate) async fn require_bearer(
    State(ctx): State<SiteCtx>,
    mut request: Request,
    next: Next,
) -> Result<Response, ApiError> {
    let token = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, token) = v.split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
        })
        .ok_or(ApiError::Unauthorized)?;
    // The sites keep a signed token by its `jti`; an opaque one (a saved state's) as it is.
    let key = crate::realm::jwt_id(token).unwrap_or_else(|| token.to_owned());
    let principal: Principal = ctx
        .with_world(|world, now| world.auth.check(ctx.site, &key, now))
        .ok_or(ApiError::Unauthorized)?;
    request.extensions_mut().insert(principal);
    Ok(next.run(request).await)
}
