//! The first check of every HTTP request, before any token is read: the `Host` header must name a
//! host this server answers to, and a browser's `Origin`, when sent, must be one it serves. A web
//! page reached through DNS rebinding reads nothing (not even a 401 or metadata naming a host of
//! its choosing), and a cross-site page cannot drive a signed-in browser's session.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The host names the HTTP server answers to without being told: loopback only.
pub const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// The browser origins the HTTP server accepts: pages served from this machine only. Requests without
/// an `Origin` header (every non-browser client) are not affected.
pub const LOOPBACK_ORIGINS: [&str; 3] =
    ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

/// The host names and origins a server accepts.
#[derive(Debug, Clone)]
pub struct Accepted {
    hosts: Arc<Vec<String>>,
    origins: Arc<Vec<String>>,
}

impl Accepted {
    /// [`LOOPBACK_HOSTS`] and `extra_hosts`; [`LOOPBACK_ORIGINS`] and `extra_origins`
    /// (`scheme://host[:port]`, a port of `*` for any).
    pub fn new(extra_hosts: &[String], extra_origins: &[String]) -> Accepted {
        let hosts = LOOPBACK_HOSTS
            .iter()
            .map(|h| h.to_string())
            .chain(extra_hosts.iter().cloned())
            .collect();
        let origins = LOOPBACK_ORIGINS
            .iter()
            .map(|o| o.to_string())
            .chain(extra_origins.iter().cloned())
            .collect();
        Accepted {
            hosts: Arc::new(hosts),
            origins: Arc::new(origins),
        }
    }

    /// The host names, for rmcp's own check of `/mcp`.
    pub fn hosts(&self) -> impl Iterator<Item = &String> {
        self.hosts.iter()
    }

    /// The origins, for rmcp's own check of `/mcp`.
    pub fn origins(&self) -> impl Iterator<Item = &String> {
        self.origins.iter()
    }

    /// Whether a `Host` header names one of the hosts (a name whatever its port, a host:port only
    /// that).
    fn host(&self, header: &str) -> bool {
        let named = |h: &String| {
            h.eq_ignore_ascii_case(header) || h.eq_ignore_ascii_case(host_name(header))
        };
        !header.is_empty() && self.hosts.iter().any(named)
    }

    /// Whether an `Origin` header is one of the origins.
    fn origin(&self, origin: &str) -> bool {
        self.origins
            .iter()
            .any(|pattern| match pattern.strip_suffix(":*") {
                Some(base) => same_with_any_port(origin, base),
                None => origin.eq_ignore_ascii_case(pattern),
            })
    }
}

/// Whether `origin` is `base`, or `base` with a port.
fn same_with_any_port(origin: &str, base: &str) -> bool {
    let Some((head, port)) = origin.rsplit_once(':') else {
        return false;
    };
    if origin.eq_ignore_ascii_case(base) {
        return true;
    }
    head.eq_ignore_ascii_case(base) && !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit())
}

/// Answers 403 to a request whose `Host` names none of the accepted hosts, or whose `Origin` is
/// not an accepted origin; the others go on.
pub async fn first_check(
    State(accepted): State<Accepted>,
    request: Request,
    next: Next,
) -> Response {
    let headers = request.headers();
    let (host, origin) = (text(headers, header::HOST), text(headers, header::ORIGIN));
    if !accepted.host(&host.unwrap_or_default()) {
        return (
            StatusCode::FORBIDDEN,
            "this host name is not one rewind-mcp answers to; add it with --allowed-host",
        )
            .into_response();
    }
    if let Some(origin) = origin
        && !accepted.origin(&origin)
    {
        return (
            StatusCode::FORBIDDEN,
            "pages of this origin may not call rewind-mcp",
        )
            .into_response();
    }
    next.run(request).await
}

/// A header's value as text (a value that is not is no name this server answers to).
fn text(headers: &header::HeaderMap, name: header::HeaderName) -> Option<String> {
    let value = headers.get(name)?;
    Some(value.to_str().unwrap_or("\u{fffd}").to_owned())
}

/// The host of a `Host` header, without its port or an IPv6 address's brackets.
fn host_name(header: &str) -> &str {
    if let Some(rest) = header.strip_prefix('[') {
        return match rest.split_once(']') {
            Some((address, port)) if port.is_empty() || port.starts_with(':') => address,
            _ => "",
        };
    }
    header.split(':').next().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_header_is_read_without_its_port_or_brackets_and_a_malformed_one_names_nothing() {
        assert_eq!(host_name("rewind.example.com:8443"), "rewind.example.com");
        assert_eq!(host_name("localhost"), "localhost");
        assert_eq!(host_name("[::1]:8765"), "::1");
        assert_eq!(host_name("[::1]"), "::1");
        assert_eq!(host_name("[::1]junk"), "");
    }

    #[test]
    fn an_origin_matches_its_pattern_with_any_port_only_where_the_pattern_says_so() {
        let accepted = Accepted::new(&[], &["https://rewind.example.com".to_owned()]);
        for good in [
            "http://localhost:5173",
            "http://127.0.0.1",
            "http://[::1]:8080",
            "https://rewind.example.com",
        ] {
            assert!(accepted.origin(good), "{good}");
        }
        for bad in [
            "http://localhost.evil.example",
            "http://localhost:80x",
            "https://localhost:5173",
            "https://rewind.example.com:8443",
            "null",
        ] {
            assert!(!accepted.origin(bad), "{bad}");
        }
    }
}
