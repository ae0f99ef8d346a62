//! Why one HTTP exchange with a ZVM failed ([`CallError`]), and what follows from it: whether a write
//! may still have happened, whether and within which budget the exchange may be sent again, and the
//! words a note uses. Naming the site and the request comes later, from the client
//! (`CallError::at`).

use reqwest::StatusCode;

use crate::error::Unreached;

/// Why one HTTP exchange with a ZVM failed, before it is given a site and a request to name.
#[derive(Debug, Clone)]
pub(crate) enum CallError {
    /// The request never reached the ZVM (connection refused, no such host, no connection in
    /// time, TLS to a plain-HTTP server): nothing happened there.
    NotSent {
        cause: Unreached,
        /// The URL asked.
        url: String,
        detail: String,
    },
    /// The ZVM's TLS certificate is not trusted: the handshake failed before anything was sent, and
    /// trying again cannot change that.
    Untrusted { detail: String },
    /// The request may have reached the ZVM, but no answer came back (timeout, connection reset).
    Lost { detail: String },
    /// The ZVM answered with an error status.
    Status { status: u16, message: String },
    /// Authentication failed: the token endpoint refused the credentials, or the ZVM answered 401 even
    /// to a fresh token.
    Auth { detail: String },
    /// The token URL answered with a status that no Keycloak token endpoint answers (404, 405).
    NotTokenEndpoint { url: String, status: u16 },
    /// The answer could not be read.
    Decode { detail: String },
}

/// When a failed exchange may be sent again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Retry {
    /// Not at all: trying again cannot change the outcome, or could do the thing twice.
    Never,
    /// Within the connect budget (`[http] connect_retry_secs`): nothing was sent.
    Connect,
    /// Within the read budget (`[http] read_retry_secs`): an answer was started, and lost or refused
    /// for now.
    Read,
}

impl CallError {
    /// A failure to send `url`, by what reqwest met.
    pub(crate) fn from_reqwest(e: &reqwest::Error, url: &str) -> CallError {
        let detail = describe(e);
        if e.is_connect() {
            // reqwest does not expose the TLS library's error as a type; its message names the
            // certificate (rustls: "invalid peer certificate: UnknownIssuer", native TLS: "certificate
            // verify failed").
            if detail.to_lowercase().contains("certificate") {
                return CallError::Untrusted { detail };
            }
            return CallError::NotSent {
                cause: unreached(e, &detail),
                url: url.to_owned(),
                detail,
            };
        }
        if e.is_builder() {
            return CallError::Decode { detail };
        }
        CallError::Lost { detail }
    }

    /// An answer that stopped arriving.
    pub(crate) fn lost(e: &reqwest::Error) -> CallError {
        CallError::Lost {
            detail: describe(e),
        }
    }

    /// Whether a write that failed this way may nevertheless have happened at the ZVM: its answer was
    /// lost, unreadable, or a server error (a gateway's 502/504 in particular says nothing about
    /// whether the request went through).
    pub(crate) fn outcome_unknown(&self) -> bool {
        match self {
            CallError::Lost { .. } | CallError::Decode { .. } => true,
            CallError::Status { status, .. } => *status >= 500,
            CallError::NotSent { .. }
            | CallError::Untrusted { .. }
            | CallError::Auth { .. }
            | CallError::NotTokenEndpoint { .. } => false,
        }
    }

    /// What happened to a write, in words for a note or a message: no answer at all, an answer that
    /// could not be read, or an error status after which the write may still have happened. `write`
    /// names it, e.g. "the insert".
    pub(crate) fn what_happened_to(&self, write: &str) -> String {
        match self {
            CallError::Lost { detail } => format!("no answer to {write} came back ({detail})"),
            CallError::Decode { detail } => {
                format!("the answer to {write} could not be read ({detail})")
            }
            CallError::Status { status, message } if *status >= 500 => {
                let said = if message.is_empty() {
                    String::new()
                } else {
                    format!(" ({message})")
                };
                format!(
                    "the ZVM answered {write} with HTTP {status}{said}, after which whether it happened is unknown"
                )
            }
            CallError::Status { status, message } => {
                format!("the ZVM refused {write} with HTTP {status} ({message})")
            }
            CallError::NotSent { detail, .. } | CallError::Untrusted { detail } => {
                format!("{write} could not be sent ({detail})")
            }
            CallError::NotTokenEndpoint { url, status } => {
                format!("{write} could not be sent: {url} is no token endpoint (HTTP {status})")
            }
            CallError::Auth { detail } => {
                format!("{write} was refused for authentication ({detail})")
            }
        }
    }

    /// A short description for notes.
    pub(crate) fn detail(&self) -> String {
        match self {
            CallError::NotTokenEndpoint { url, status } => format!("{url} answered HTTP {status}"),
            CallError::NotSent { detail, .. }
            | CallError::Untrusted { detail }
            | CallError::Lost { detail }
            | CallError::Auth { detail }
            | CallError::Decode { detail } => detail.clone(),
            CallError::Status { status, message } => format!("HTTP {status}: {message}"),
        }
    }

    /// When an exchange that failed this way may be sent again; `idempotent` says whether sending
    /// it twice does no harm.
    pub(crate) fn retry(&self, idempotent: bool) -> Retry {
        match self {
            // Refused, or another failure to connect: a ZVM that is restarting comes back soon. A
            // name that does not resolve, TLS to plain HTTP or a connect timeout already waited
            // will not change in seconds.
            CallError::NotSent {
                cause: Unreached::Refused | Unreached::Other,
                ..
            } => Retry::Connect,
            CallError::NotSent { .. } => Retry::Never,
            CallError::Lost { .. } if idempotent => Retry::Read,
            CallError::Status { status, .. }
                if idempotent && StatusCode::from_u16(*status).is_ok_and(is_transient) =>
            {
                Retry::Read
            }
            _ => Retry::Never,
        }
    }
}

/// What a failed connection met, from reqwest's error and its sources.
fn unreached(e: &reqwest::Error, detail: &str) -> Unreached {
    if e.is_timeout() {
        return Unreached::ConnectTimeout;
    }
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::ConnectionRefused
        {
            return Unreached::Refused;
        }
        source = s.source();
    }
    // hyper-util and rustls say these only in words.
    let said = detail.to_ascii_lowercase();
    if said.contains("dns error") || said.contains("failed to lookup address") {
        Unreached::NoSuchHost
    } else if said.contains("invalidcontenttype") || said.contains("corrupt message") {
        Unreached::PlainHttp
    } else if said.contains("connection refused") {
        Unreached::Refused
    } else {
        Unreached::Other
    }
}

/// Whether a status is worth retrying a read for.
pub(crate) fn is_transient(status: StatusCode) -> bool {
    matches!(
        status,
        StatusCode::BAD_GATEWAY | StatusCode::SERVICE_UNAVAILABLE | StatusCode::GATEWAY_TIMEOUT
    )
}

/// A reqwest error as a sentence, with its sources (which name the cause, e.g. "Connection refused"),
/// never with a request body.
pub fn describe(e: &reqwest::Error) -> String {
    // reqwest names the whole URL; the request is named beside this detail (method and path), and a
    // row or a note has no room for the address twice.
    let mut out = match e.url() {
        Some(url) => e.to_string().replace(&format!(" for url ({url})"), ""),
        None => e.to_string(),
    };
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::error::RewindError;

    /// A read that failed, for the tests of what shares or keeps reads.
    pub(crate) fn failure() -> RewindError {
        RewindError::UnexpectedResponse {
            site: "boston".into(),
            request: "GET /v1/vms".into(),
            detail: "test".into(),
        }
    }

    #[tokio::test]
    async fn a_lost_answer_is_described_without_the_requests_url() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!(
            "http://{}/v1/vpgs/v-1/checkpoints",
            listener.local_addr().unwrap()
        );
        drop(listener);
        let e = reqwest::Client::new().post(&url).send().await.unwrap_err();
        let detail = describe(&e);
        assert!(!detail.contains("/v1/"), "{detail}");
        assert!(detail.starts_with("error sending request"), "{detail}");
    }

    #[test]
    fn a_write_with_an_unknown_outcome_is_worded_for_what_happened() {
        let lost = CallError::Lost {
            detail: "operation timed out".into(),
        };
        assert_eq!(
            lost.what_happened_to("the insert"),
            "no answer to the insert came back (operation timed out)"
        );
        let status = CallError::Status {
            status: 503,
            message: "Service Unavailable".into(),
        };
        assert_eq!(
            status.what_happened_to("the insert"),
            "the ZVM answered the insert with HTTP 503 (Service Unavailable), after which whether it happened is unknown"
        );
        let silent = CallError::Status {
            status: 502,
            message: String::new(),
        };
        assert_eq!(
            silent.what_happened_to("the mount"),
            "the ZVM answered the mount with HTTP 502, after which whether it happened is unknown"
        );
        let unreadable = CallError::Decode {
            detail: "expected value".into(),
        };
        assert_eq!(
            unreadable.what_happened_to("the insert"),
            "the answer to the insert could not be read (expected value)"
        );
        for e in [lost, status, silent, unreadable] {
            assert!(e.outcome_unknown());
            assert!(!e.what_happened_to("the insert").contains("lost"));
        }
    }

    #[test]
    fn a_refused_connection_is_retried_within_the_connect_budget_and_a_lost_read_within_the_read_one()
     {
        let not_sent = |cause| CallError::NotSent {
            cause,
            url: String::new(),
            detail: String::new(),
        };
        let status = |status| CallError::Status {
            status,
            message: String::new(),
        };
        let lost = CallError::Lost {
            detail: String::new(),
        };
        assert_eq!(not_sent(Unreached::Refused).retry(false), Retry::Connect);
        for settled in [
            Unreached::NoSuchHost,
            Unreached::PlainHttp,
            Unreached::ConnectTimeout,
        ] {
            assert_eq!(not_sent(settled).retry(true), Retry::Never, "{settled:?}");
        }
        assert_eq!(status(503).retry(true), Retry::Read);
        assert_eq!(lost.retry(true), Retry::Read);
        assert_eq!(lost.retry(false), Retry::Never, "a write may have happened");
        assert_eq!(status(503).retry(false), Retry::Never);
        assert_eq!(status(500).retry(true), Retry::Never);
        assert_eq!(status(404).retry(true), Retry::Never);
    }
}
