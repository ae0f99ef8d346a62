//! Who holds which MCP session over HTTP, and how much one person may hold.
//!
//! Signed in, a session belongs to the subject whose token opened it: a request of any other
//! subject naming it (a tool call, a resumed stream with `Last-Event-ID`, a `DELETE`) is answered
//! exactly as a request naming a session that does not exist, since it is sent on as one. Session
//! ids reach the log only as [`short_hash`]es.
//!
//! Each person may open a few sessions and run a few guards and recoveries at once under the
//! server's caps: past their own share they are answered 429 with `Retry-After`, and nobody else
//! notices; past the server's cap, everyone is answered 503. Without sign-in there is no person,
//! and only the server's caps apply.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::sign_in::Caller;

/// The header that names a session.
const SESSION_HEADER: &str = "mcp-session-id";

/// What a request naming another person's session is sent on with: no session has this id (rmcp
/// makes UUIDs), so rmcp answers it as it answers any unknown session.
const NO_SESSION: &str = "not-a-session";

/// The largest request body read here, as rmcp reads no larger.
const MAX_BODY: usize = 4 * 1024 * 1024;

/// How long a refused client is told to wait.
const RETRY_AFTER_SECS: &str = "5";

/// How many sessions and long calls the server and each person may hold.
#[derive(Debug, Clone, Copy)]
pub struct Caps {
    /// Sessions open at once, in all.
    pub sessions: usize,
    /// Sessions one person may hold.
    pub sessions_per_person: usize,
    /// Guards and recoveries running at once (as MCP tasks or not), in all.
    pub tasks: usize,
    /// Guards and recoveries one person may run at once.
    pub tasks_per_person: usize,
}

/// A session id as logs name it: the first 8 hex digits of its SHA-256.
pub fn short_hash(id: &str) -> String {
    let digest = Sha256::digest(id.as_bytes());
    format!("session#{}", &hex::encode(digest)[..8])
}

/// The sessions and long calls of the server, by person.
#[derive(Clone)]
pub struct Sessions {
    manager: Arc<LocalSessionManager>,
    book: Arc<Mutex<Book>>,
    caps: Caps,
}

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions")
            .field("caps", &self.caps)
            .finish()
    }
}

/// Who is what; `None` for no person (no sign-in).
#[derive(Debug, Default)]
struct Book {
    /// Each session opened by a signed-in caller, and their subject.
    owners: HashMap<String, String>,
    /// The `initialize` requests still being answered, by person.
    opening: HashMap<Option<String>, usize>,
    /// The guards and recoveries running, by person.
    running: HashMap<Option<String>, usize>,
}

impl Book {
    fn count(map: &HashMap<Option<String>, usize>, person: &Option<String>) -> usize {
        map.get(person).copied().unwrap_or(0)
    }

    fn total(map: &HashMap<Option<String>, usize>) -> usize {
        map.values().sum()
    }

    fn add(map: &mut HashMap<Option<String>, usize>, person: &Option<String>, by: isize) {
        let n = map.entry(person.clone()).or_default();
        *n = n.saturating_add_signed(by);
        if *n == 0 {
            map.remove(person);
        }
    }
}

/// A guard or recovery counted as running until the request's last part is dropped: the call's
/// context lives as long as its work does, on a task of its own when it runs as an MCP task.
#[derive(Debug)]
struct Running {
    book: Arc<Mutex<Book>>,
    person: Option<String>,
}

impl Drop for Running {
    fn drop(&mut self) {
        let mut book = self.book.lock().unwrap_or_else(|p| p.into_inner());
        Book::add(&mut book.running, &self.person, -1);
    }
}

/// What a POST to `/mcp` asks for, as far as the caps care.
enum Asks {
    /// `initialize`: a new session.
    Session,
    /// A guard or a recovery: long work.
    LongCall(Value),
    Other,
}

impl Sessions {
    /// The book of `manager`'s sessions under `caps`.
    pub fn new(manager: Arc<LocalSessionManager>, caps: Caps) -> Sessions {
        Sessions {
            manager,
            book: Arc::default(),
            caps,
        }
    }

    fn book(&self) -> std::sync::MutexGuard<'_, Book> {
        self.book.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Opens a session for `person` if the caps allow; the refusal otherwise.
    async fn open(&self, person: &Option<String>, who: &str) -> Result<(), Busy> {
        let live: Vec<String> = self
            .manager
            .sessions
            .read()
            .await
            .keys()
            .map(|id| id.to_string())
            .collect();
        let mut book = self.book();
        book.owners.retain(|id, _| live.contains(id));
        let open = live.len() + Book::total(&book.opening);
        crate::metrics::server().sessions_open(live.len());
        if open >= self.caps.sessions {
            return Err(Busy::new(
                StatusCode::SERVICE_UNAVAILABLE,
                Value::Null,
                format!(
                    "rewind-mcp serves at most {} sessions at once and all are open; try again in a while, or close sessions you no longer use (DELETE with their Mcp-Session-Id)",
                    self.caps.sessions
                ),
            ));
        }
        if let Some(subject) = person {
            let theirs = book.owners.values().filter(|s| *s == subject).count()
                + Book::count(&book.opening, person);
            if theirs >= self.caps.sessions_per_person {
                return Err(Busy::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    Value::Null,
                    format!(
                        "rewind-mcp serves at most {} sessions per person, and {who} has them all open; close the sessions you no longer use (DELETE with their Mcp-Session-Id), or wait until one has been idle long enough to be closed",
                        self.caps.sessions_per_person
                    ),
                ));
            }
        }
        Book::add(&mut book.opening, person, 1);
        Ok(())
    }

    /// Records who opened the session a response names, and that the opening is over.
    fn opened(&self, person: &Option<String>, response: &Response) {
        let mut book = self.book();
        Book::add(&mut book.opening, person, -1);
        let id = response
            .headers()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok());
        if let (Some(id), Some(subject)) = (id, person) {
            tracing::info!("{} opened {}", subject, short_hash(id));
            book.owners.insert(id.to_owned(), subject.clone());
        }
    }

    /// Counts a guard or a recovery for `person` if the caps allow; the refusal otherwise.
    fn start_long_call(
        &self,
        person: &Option<String>,
        who: &str,
        id: Value,
    ) -> Result<Running, Busy> {
        let mut book = self.book();
        if Book::total(&book.running) >= self.caps.tasks {
            return Err(Busy::new(
                StatusCode::SERVICE_UNAVAILABLE,
                id,
                format!(
                    "rewind-mcp runs at most {} guards and recoveries at once and all are running; nothing was started: try again in a while",
                    self.caps.tasks
                ),
            ));
        }
        if person.is_some() && Book::count(&book.running, person) >= self.caps.tasks_per_person {
            return Err(Busy::new(
                StatusCode::TOO_MANY_REQUESTS,
                id,
                format!(
                    "{who} already runs {} guards and recoveries here, the most one person may; nothing was started: wait for one to end (tasks/get shows it), then call again",
                    self.caps.tasks_per_person
                ),
            ));
        }
        Book::add(&mut book.running, person, 1);
        Ok(Running {
            book: self.book.clone(),
            person: person.clone(),
        })
    }

    /// Whether `id` is a session of a subject other than `person`.
    fn someone_elses(&self, id: &str, person: &Option<String>) -> bool {
        let Some(subject) = person else { return false };
        self.book()
            .owners
            .get(id)
            .is_some_and(|owner| owner != subject)
    }
}

/// The check in front of rmcp's `/mcp`, after the token's: sessions bound to their person, and
/// the caps.
pub async fn admit(State(sessions): State<Sessions>, mut request: Request, next: Next) -> Response {
    let caller = request.extensions().get::<Caller>().cloned();
    let person = caller.as_ref().map(|c| c.person.subject.clone());
    let who = caller
        .as_ref()
        .map_or("this caller", |c| c.who())
        .to_owned();
    let named = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    if let Some(id) = named.as_deref()
        && sessions.someone_elses(id, &person)
    {
        tracing::info!(
            "{who} named {}, which is another person's: answered as an unknown session",
            short_hash(id)
        );
        request
            .headers_mut()
            .insert(SESSION_HEADER, HeaderValue::from_static(NO_SESSION));
    }
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY).await else {
        return (
            StatusCode::PAYLOAD_TOO_LARGE,
            "the request body is larger than rewind-mcp reads (4 MiB)",
        )
            .into_response();
    };
    let asks = asks(&bytes);
    let mut request = Request::from_parts(parts, Body::from(bytes));
    match asks {
        Asks::Session => {
            if let Err(refused) = sessions.open(&person, &who).await {
                return refused.into_response();
            }
            let response = next.run(request).await;
            sessions.opened(&person, &response);
            response
        }
        Asks::LongCall(id) => match sessions.start_long_call(&person, &who, id) {
            Ok(running) => {
                request.extensions_mut().insert(Arc::new(running));
                next.run(request).await
            }
            Err(refused) => refused.into_response(),
        },
        Asks::Other => next.run(request).await,
    }
}

/// What a JSON-RPC message (or batch) asks for.
fn asks(body: &[u8]) -> Asks {
    let Ok(message) = serde_json::from_slice::<Value>(body) else {
        return Asks::Other;
    };
    let one = |m: &Value| match m["method"].as_str() {
        Some("initialize") => Some(Asks::Session),
        Some("tools/call")
            if m["params"]["name"]
                .as_str()
                .is_some_and(|name| crate::tasks::TASK_TOOLS.contains(&name)) =>
        {
            Some(Asks::LongCall(m["id"].clone()))
        }
        _ => None,
    };
    match &message {
        Value::Array(batch) => batch.iter().find_map(one),
        single => one(single),
    }
    .unwrap_or(Asks::Other)
}

/// A refusal for now: 429 or 503, answered as a JSON-RPC error with `Retry-After`.
#[derive(Debug)]
struct Busy {
    status: StatusCode,
    /// The request's JSON-RPC id (null for a request that opens a session).
    id: Value,
    message: String,
}

impl Busy {
    fn new(status: StatusCode, id: Value, message: String) -> Busy {
        Busy {
            status,
            id,
            message,
        }
    }
}

impl IntoResponse for Busy {
    fn into_response(self) -> Response {
        let body = json!({
            "jsonrpc": "2.0",
            "id": self.id,
            "error": { "code": -32000, "message": self.message },
        });
        (
            self.status,
            [(header::RETRY_AFTER, RETRY_AFTER_SECS)],
            axum::Json(body),
        )
            .into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_id_is_logged_as_a_short_hash_that_does_not_hold_it() {
        let id = "3f2b8c1e-6a4d-4c1b-9e7f-2a5d8c9b0e1f";
        let hashed = short_hash(id);
        assert_eq!(hashed, short_hash(id), "the same id, the same hash");
        assert!(
            hashed.starts_with("session#") && hashed.len() == 16,
            "{hashed}"
        );
        assert!(!hashed.contains("3f2b8c1e"));
    }

    #[test]
    fn initialize_opens_a_session_and_a_guard_or_recovery_is_a_long_call() {
        let asks_of = |v: Value| asks(v.to_string().as_bytes());
        assert!(matches!(
            asks_of(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize"})),
            Asks::Session
        ));
        let guard = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "zerto_guard_before_mutate"}});
        assert!(matches!(asks_of(guard.clone()), Asks::LongCall(id) if id == 7));
        assert!(matches!(asks_of(json!([guard])), Asks::LongCall(_)));
        let find = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
            "params": {"name": "zerto_find_protection"}});
        assert!(matches!(asks_of(find), Asks::Other));
        assert!(matches!(asks(b"not json"), Asks::Other));
    }
}
