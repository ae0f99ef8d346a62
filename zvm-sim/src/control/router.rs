//! The `/_sim` routes, each to its handler, behind the check that lets loopback clients only.

use std::net::SocketAddr;

use axum::Router;
use axum::extract::{ConnectInfo, DefaultBodyLimit, Request};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post, put};

use super::{clock, faults, files, lists, realm, state, ui, vpgs};
use crate::decisions::MAX_STATE_BYTES;
use crate::http::{ApiError, SiteCtx};

/// Guest files up to this size can be written through `PUT /_sim/vms/{id}/files`.
const MAX_FILE_BYTES: usize = 64 * 1024 * 1024;

/// The `/_sim` routes (nested under `/_sim` by the site router).
pub(crate) fn router() -> Router<SiteCtx> {
    Router::new()
        .route("/reset", post(state::reset))
        .route("/clock", get(clock::clock))
        .route("/clock/advance", post(clock::advance))
        .route("/clock/scale", post(clock::scale))
        .route("/timing", get(clock::timing).post(clock::set_timing))
        .route("/vpgs", get(vpgs::vpgs))
        .route("/vpgs/{vpg}/resync", post(vpgs::resync))
        .route("/vpgs/{vpg}/status", post(vpgs::pin_status))
        .route("/vpgs/{vpg}/journal", get(vpgs::journal))
        .route("/vpgs/{vpg}/journal-burst", post(vpgs::journal_burst))
        .route("/calls", get(lists::calls).delete(lists::clear_calls))
        .route("/tasks", get(lists::tasks))
        .route("/retention-sets", get(lists::retention_sets))
        .route(
            "/faults",
            get(faults::list).post(faults::add).delete(faults::clear),
        )
        .route("/faults/{id}", delete(faults::remove))
        .route("/realm", get(realm::show))
        .route("/realm/keys", post(realm::rotate))
        .route("/realm/keys/{kid}", delete(realm::withdraw))
        .route("/realm/discovery", put(realm::discovery))
        .route(
            "/state",
            get(state::save_state)
                .put(state::load_state)
                .layer(DefaultBodyLimit::max(MAX_STATE_BYTES)),
        )
        .route(
            "/vms/{vm}/files",
            get(files::read_files)
                .put(files::write_file)
                .delete(files::delete_file)
                .layer(DefaultBodyLimit::max(MAX_FILE_BYTES)),
        )
        .merge(ui::router())
        .route_layer(middleware::from_fn(loopback_only))
}

/// The control API can reset the world and rewrite guest files: it answers loopback clients only.
/// A router used without a listener (in-process `oneshot` tests) has no peer address and is let
/// through. A site listening on `[::]` sees an IPv4 client as `::ffff:127.0.0.1`, which is
/// loopback too once made canonical.
async fn loopback_only(request: Request, next: Next) -> Response {
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(addr)| *addr);
    match peer {
        Some(addr) if !addr.ip().to_canonical().is_loopback() => ApiError::Forbidden(format!(
            "The /_sim control API answers loopback clients only; {} is not one.",
            addr.ip()
        ))
        .into_response(),
        _ => next.run(request).await,
    }
}
