//! Every path the HTTP server answers at, in one table: each handler's file serves one of them, and
//! [`crate::http`] mounts them all.

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
