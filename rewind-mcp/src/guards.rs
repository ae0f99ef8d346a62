//! `GET /v1/guards`: what a team server's journal says of its recent guards, for the hooks of the
//! machines whose agents guard through it. An agent's host runs its hook locally, and a guard made
//! by the team server is journaled on the server, not on that machine: the hook (`[hook.team]`)
//! asks here, with its user's own access token, and judges the call on this answer and its own
//! journal together ([`rewind_core::GuardLookup::among`]).
//!
//! The answer is a [`rewind_core::audit_journal::GuardsView`], read on from where the last ask
//! left the journal: for each VM, its newest record of each
//! name and address set and its newest `guarded` one of the window; only those answering to `vm`
//! when the hook names the VM of its call. Reading it needs the read role when the server signs callers
//! in; it changes nothing.

use axum::extract::{Query, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rewind_core::audit_journal::JournalError;
use rewind_core::{JournalRecord, Rewind};
use serde::{Deserialize, Serialize};

use crate::local_files::on_files;
use crate::sign_in::Caller;

/// The longest window a hook may ask for: a week.
const MAX_WINDOW_SECS: u64 = 7 * 24 * 60 * 60;

/// The query: the hook's own window, in seconds (the server's hook window when left out), and the
/// VM reference of the call when the hook knows it (only records that answer to it are sent).
#[derive(Debug, Deserialize)]
pub struct GuardsQuery {
    within_secs: Option<u64>,
    vm: Option<String>,
}

/// The answer.
#[derive(Debug, Serialize)]
pub struct GuardsView<'a> {
    /// The window the records were chosen by.
    pub window_secs: u64,
    /// For each VM: its newest record of each name and address set, and its newest `guarded`
    /// record of the window.
    pub records: &'a [JournalRecord],
}

/// What `/v1/guards` serves from: the facade, and the view kept up with its journal.
#[derive(Debug, Clone)]
pub struct GuardsState {
    rewind: Rewind,
    kept: Arc<Mutex<Kept>>,
}

/// The view, and its last answer with what it was made from: how far the view had read, and the
/// window. A hook asks on every mutating call and a guard appends far less often, so most asks are
/// answered from it; after an append, only the lines appended are read.
#[derive(Debug, Default)]
struct Kept {
    view: rewind_core::audit_journal::GuardsView,
    last: Option<Answered>,
}

/// An answer, and what it was made from: how far the view had read, and the window.
type Answered = ((u64, u64), Arc<Vec<JournalRecord>>);

impl GuardsState {
    /// The state of `rewind`'s journal, with nothing read yet.
    pub fn new(rewind: Rewind) -> GuardsState {
        GuardsState {
            rewind,
            kept: Arc::default(),
        }
    }

    /// The view of the last `window_secs`. Safe to keep: the hook judges every record by its own
    /// window again ([`rewind_core::GuardLookup::among`]).
    fn view(&self, window_secs: u64) -> Result<Arc<Vec<JournalRecord>>, JournalError> {
        let journal = self.rewind.journal();
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        journal.refresh_view(&mut kept.view)?;
        let key = (kept.view.read_to(), window_secs);
        if let Some((made_from, records)) = &kept.last
            && *made_from == key
        {
            return Ok(records.clone());
        }
        let records = Arc::new(kept.view.records(Duration::from_secs(window_secs)));
        kept.last = Some((key, records.clone()));
        Ok(records)
    }
}

/// `GET /v1/guards?within_secs=N`.
pub async fn guards(
    State(state): State<GuardsState>,
    Query(query): Query<GuardsQuery>,
    request: Request,
) -> Response {
    if let Some(refused) = refusal(&state.rewind, request.extensions().get::<Caller>()) {
        crate::metrics::server().guards_answered("refused");
        return refused;
    }
    let window_secs = query
        .within_secs
        .unwrap_or_else(|| state.rewind.config().hook.window.as_secs())
        .min(MAX_WINDOW_SECS);
    let rewind = state.rewind.clone();
    match on_files(&rewind, move |_| state.view(window_secs)).await {
        Ok(records) => {
            let of_vm: Vec<JournalRecord>;
            let records: &[JournalRecord] = match query.vm.as_deref() {
                None => &records,
                Some(vm) => {
                    of_vm = answering_to(&records, vm);
                    &of_vm
                }
            };
            crate::metrics::server().guards_answered("served");
            axum::Json(GuardsView {
                window_secs,
                records,
            })
            .into_response()
        }
        Err(e) => {
            crate::metrics::server().guards_answered("error");
            error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
        }
    }
}

/// The records whose VM answers to `vm` as a hook's reference does: all a judgment of it reads.
fn answering_to(records: &[JournalRecord], vm: &str) -> Vec<JournalRecord> {
    let query = rewind_core::vm::VmQuery::new(vm);
    records
        .iter()
        .filter(|r| r.vm.answers_to(&query))
        .cloned()
        .collect()
}

/// 403 for a signed-in caller without the read role; 401 for a request without a caller.
pub(crate) fn refusal(rewind: &Rewind, caller: Option<&Caller>) -> Option<Response> {
    let auth = rewind.config().http.auth.as_ref()?;
    let Some(caller) = caller else {
        // Signed in, every request reaches here with its caller; one without is refused, never read.
        return Some(error(
            StatusCode::UNAUTHORIZED,
            "no signed-in caller: send the issuer's access token as a bearer token".to_owned(),
        ));
    };
    let role = &auth.roles.read;
    if caller.roles.iter().any(|r| r == role) {
        return None;
    }
    let who = caller.who();
    Some(error(
        StatusCode::FORBIDDEN,
        format!(
            "reading the team server's journal needs the role {role:?}, and {who}'s token does not carry it; ask an administrator of the realm to grant it, then sign in again"
        ),
    ))
}

pub(crate) fn error(status: StatusCode, message: String) -> Response {
    (status, axum::Json(serde_json::json!({ "error": message }))).into_response()
}
