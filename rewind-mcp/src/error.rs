//! [`ServeError`]: why serving MCP, on stdio or over HTTP, failed.

/// Serving failed.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The MCP session could not start (the client went away, or did not speak MCP).
    #[error("the MCP session did not start: {0}")]
    Start(String),
    /// The MCP session ended abnormally.
    #[error("the MCP session ended abnormally: {0}")]
    Session(String),
    /// `[http.auth]` cannot be put to use (its `ca_cert` cannot be read, say).
    #[error("[http.auth] cannot be used: {0}")]
    SignIn(String),
    /// The HTTP listener failed.
    #[error("the HTTP server on {addr} failed: {source}")]
    Http {
        /// The address it listened on.
        addr: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}
