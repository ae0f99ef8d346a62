//! What a load balancer asks a team server, with no token: `/healthz` (the process answers) and
//! `/readyz` (it can take calls: the realm's keys are held when sign-in is on, and the journal is
//! writable). Each ZVM's reachability is in `/readyz`'s body and in the metrics, and never makes
//! the server unready: a DR site down must not take the team server out of its load balancer. No
//! field names a person, a VM or a path.

use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use rewind_core::Rewind;
use serde::Serialize;

use crate::sign_in::Verifier;

/// How long `/readyz` waits for the ZVMs.
const ZVM_CHECK: Duration = Duration::from_secs(2);

/// What `/readyz` reads: the facade (its journal and sites) and the realm's keys when signed in.
#[derive(Clone)]
pub struct Health {
    rewind: Rewind,
    verifier: Option<Verifier>,
}

impl std::fmt::Debug for Health {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Health")
            .field("signs_in", &self.verifier.is_some())
            .finish()
    }
}

impl Health {
    /// The routes' state.
    pub fn new(rewind: Rewind, verifier: Option<Verifier>) -> Health {
        Health { rewind, verifier }
    }
}

/// `GET /healthz`: the process answers.
pub async fn healthz() -> Response {
    (
        StatusCode::OK,
        axum::Json(serde_json::json!({"status": "ok"})),
    )
        .into_response()
}

/// The body of `/readyz`.
#[derive(Debug, Serialize)]
pub struct Readiness {
    /// Whether the server can take calls.
    pub ready: bool,
    /// The realm's keys are held (`null` without sign-in).
    pub keys_held: Option<bool>,
    /// The journal can be written.
    pub journal_writable: bool,
    /// Each configured ZVM, reachable or not; never part of `ready`.
    pub zvms: Vec<ZvmReach>,
}

/// One ZVM's reachability.
#[derive(Debug, Serialize)]
pub struct ZvmReach {
    /// The site's name in the configuration.
    pub site: String,
    /// It answered within [`ZVM_CHECK`].
    pub reachable: bool,
}

/// `GET /readyz`: 200 when ready, 503 otherwise; the checks in the body.
pub async fn readyz(State(health): State<Health>) -> Response {
    let keys_held = health.verifier.as_ref().map(|v| v.keys_held());
    let journal = health.rewind.journal().clone();
    let journal_writable = tokio::task::spawn_blocking(move || journal.writable())
        .await
        .unwrap_or(false);
    // Each site is read at once, each within its own time: one ZVM down cannot hide the others.
    let names: Vec<String> = health
        .rewind
        .config()
        .sites
        .iter()
        .map(|s| s.name.clone())
        .collect();
    let reads = names.iter().map(|name| {
        let one = health.rewind.only_sites(std::slice::from_ref(name));
        async move {
            let reachable = match one {
                Ok(one) => tokio::time::timeout(ZVM_CHECK, one.sites())
                    .await
                    .is_ok_and(|s| s.iter().all(|s| s.reachable)),
                Err(_) => false,
            };
            ZvmReach {
                site: name.clone(),
                reachable,
            }
        }
    });
    let zvms: Vec<ZvmReach> = futures::future::join_all(reads).await;
    for z in &zvms {
        crate::metrics::server().zvm_seen(&z.site, z.reachable);
    }
    let ready = keys_held != Some(false) && journal_writable;
    let body = Readiness {
        ready,
        keys_held,
        journal_writable,
        zvms,
    };
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, axum::Json(body)).into_response()
}
