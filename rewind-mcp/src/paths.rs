//! Every path the HTTP server answers at, in one table: each handler's file serves one of them, and
//! [`crate::http`] mounts them all, the page's through [`crate::ui::router`]. The page's own links,
//! forms, redirects and cookies name its paths from here too.

/// The path the MCP endpoint is served at over HTTP.
pub const HTTP_PATH: &str = "/mcp";

/// The path of the protected-resource metadata ([`crate::sign_in`]).
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// The path hooks ask for a team server's recent guards ([`crate::guards`]).
pub const GUARDS_PATH: &str = "/v1/guards";

/// The path the open changes are read at ([`crate::watch`]).
pub const EXPIRING_PATH: &str = "/v1/expiring";

/// `GET /metrics` ([`crate::metrics`]).
pub const METRICS_PATH: &str = "/metrics";
/// `GET /healthz` ([`crate::health`]).
pub const HEALTH_PATH: &str = "/healthz";
/// `GET /readyz` ([`crate::health`]).
pub const READY_PATH: &str = "/readyz";

/// `GET /ui`: the team server's page for people ([`crate::ui`]), and the path its cookies are
/// scoped to.
pub const UI_PATH: &str = "/ui";
/// `GET /ui/login`: where a person signs in, sent on to the realm.
pub const UI_LOGIN_PATH: &str = "/ui/login";
/// `GET /ui/callback`: where the realm sends the browser back with a code (`[http.auth.ui]`'s
/// `redirect_uri` names it).
pub const UI_CALLBACK_PATH: &str = "/ui/callback";
/// `POST /ui/logout`: a session ended.
pub const UI_LOGOUT_PATH: &str = "/ui/logout";
/// `GET /ui/diff`: what changed since a change's tag.
pub const UI_DIFF_PATH: &str = "/ui/diff";
/// `GET /ui/act` asks for a confirmation of an action, `POST /ui/act` runs it.
pub const UI_ACT_PATH: &str = "/ui/act";

/// The held calls, for approvers' scripts and chat bots (bearer token): `GET` lists them,
/// `GET {id}` shows one, `POST {id}/approve` and `{id}/deny` decide it.
pub const APPROVALS_PATH: &str = "/v1/approvals";

/// Where a host's hook holds a call it would deny or ask about (`[hook.team]`), and uses its
/// approval.
pub const HELD_PATH: &str = "/v1/held";

/// The page of held calls, for people.
pub const UI_APPROVALS_PATH: &str = "/ui/approvals";
