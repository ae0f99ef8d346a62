//! rewind-mcp: the MCP server an agent calls before it changes a VM. A thin front over rewind-core:
//! it reads arguments, calls the core, and answers; it holds no Zerto logic of its own.
//!
//! - [`server`]: [`RewindServer`], what every session shares; [`handler`]: what it answers (each
//!   tool call behind its role check, the tasks' methods, its identity and instructions);
//!   [`prompt`]: its instructions and the `rewind` prompt.
//! - [`tools`]: the tools, one file per family, each with its handlers, descriptions, arguments
//!   and answers, and what the families share.
//! - [`gateway`]: `--gateway`, the upstream servers' tools served beside the server's own, each
//!   mutating call guarded before it is forwarded.
//! - `form`: asking the human through the client's form, as every question does.
//! - [`args`]: how every tool's arguments are read: their schemas and the checks at the door.
//! - [`reply`]: the shape of every answer (one line, structured JSON, the JSON as text) and of its
//!   `outputSchema`.
//! - [`progress`]: a guard's or a recovery's progress as MCP progress notifications;
//!   [`in_flight`]: the work still running on tasks of its own, which the server waits for before
//!   it exits.
//! - [`local_files`]: the catalog's and the journal's work, run off the async runtime.
//! - [`stdio`] and [`http`]: serving on stdin and stdout, or over HTTP at the [`paths`] it answers;
//!   [`error`]: why serving failed.
//! - [`sign_in`] and [`roles`]: who may call over HTTP, and which tools; [`issuer_keys`]: the
//!   issuer's signing keys, read off the request path.
//! - [`hosts`], [`sessions`] and [`listen`]: what the HTTP server checks first (Host, Origin), who
//!   holds which session and how much each person may hold, and its connections' bounds.
//! - [`tasks`]: guards and recoveries as MCP tasks, for a client that asks for them;
//!   [`task_run`]: a tool call run as one.
//! - [`guards`]: `GET /v1/guards`, the team server's recent guards for its users' hooks.
//! - [`watch`]: `GET /v1/expiring`, the open changes whose way back ends soon, and the watcher that
//!   logs them.
//! - [`metrics`]: `/metrics`; [`health`]: `/healthz` and `/readyz`.
//! - [`ui`]: the team server's page for people.
//! - [`logs`]: the server's log lines, session ids hashed.
//!
//! [`serve_stdio`] and [`HttpService`] (or [`serve_http`]) are what the binary calls once it has a
//! [`Rewind`](rewind_core::Rewind).

pub mod approvals;
pub mod args;
pub mod error;
pub(crate) mod form;
pub mod gateway;
pub mod guards;
pub mod handler;
pub mod health;
pub(crate) mod held;
pub mod hosts;
pub mod http;
pub mod in_flight;
pub mod issuer_keys;
pub mod listen;
pub mod local_files;
pub mod logs;
pub mod metrics;
pub mod paths;
pub(crate) mod peer;
pub mod progress;
pub mod prompt;
pub mod reply;
pub mod roles;
pub mod server;
pub mod sessions;
pub mod sign_in;
pub mod stdio;
pub mod task_run;
pub mod tasks;
pub mod tools;
pub mod ui;
pub mod watch;

pub use error::ServeError;
pub use hosts::{LOOPBACK_HOSTS, LOOPBACK_ORIGINS};
pub use http::{HttpLimits, HttpService, serve_http};
pub use paths::HTTP_PATH;
pub use server::{RewindServer, SERVER_NAME};
pub use stdio::serve_stdio;
