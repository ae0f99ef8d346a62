//! The call log: every request to either site (the token endpoint included, `/_sim` excluded) with
//! its method, path, query, status, the task it started and the fault rules that fired, so tests
//! can prove what was and was not called. It never holds a token, a password or a secret: those
//! travel in headers and form bodies, which are not recorded, and query parameters that look like
//! secrets are redacted.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;

use crate::http::{FaultsApplied, SiteCtx, StartedTask, Unmatched, is_control_path};
use crate::world::Call;

/// Query keys whose values never reach the log.
const SECRET_KEYS: [&str; 7] = [
    "password",
    "client_secret",
    "secret",
    "token",
    "access_token",
    "refresh_token",
    "code",
];

/// Records the call after the inner service answered.
pub(crate) async fn record(State(ctx): State<SiteCtx>, request: Request, next: Next) -> Response {
    let path = request.uri().path().to_owned();
    if is_control_path(&path) {
        return next.run(request).await;
    }
    let method = request.method().to_string();
    let query = request.uri().query().map(redact);
    let response = next.run(request).await;
    let status = response.status().as_u16();
    let task_id = response
        .extensions()
        .get::<StartedTask>()
        .map(|t| t.0.clone());
    let faults = response
        .extensions()
        .get::<FaultsApplied>()
        .map(|f| f.0.clone())
        .unwrap_or_default();
    let unmatched = response.extensions().get::<Unmatched>().is_some();
    tracing::debug!(%method, %path, status, "call");
    let site = ctx.site;
    let mut world = ctx.shared.lock();
    let site_name = world.site(site).name.clone();
    ctx.shared
        .metrics
        .answered(&site_name, &method, status, !unmatched);
    world.record_call(Call {
        seq: 0,
        site: site_name,
        method,
        path,
        query,
        status,
        task_id,
        faults,
        unmatched,
    });
    response
}

/// The query string with the values of secret-looking keys replaced by `***`.
fn redact(query: &str) -> String {
    query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((key, _))
                if SECRET_KEYS
                    .iter()
                    .any(|secret| secret.eq_ignore_ascii_case(key)) =>
            {
                format!("{key}=***")
            }
            _ => pair.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_looking_query_values_are_redacted() {
        assert_eq!(
            redact("vmName=web-01&Password=hunter2&access_token=abc"),
            "vmName=web-01&Password=***&access_token=***"
        );
    }
}
