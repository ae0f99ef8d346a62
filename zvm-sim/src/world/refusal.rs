//! Why the world refuses a request ([`Refusal`]), in the terms of the HTTP answer it becomes.

/// Why the world refuses a request, in the terms of the HTTP answer it becomes (§9: 400 for a
/// malformed request, 404 for an unknown identifier, 409 for a state conflict).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// 400, with the message.
    BadRequest(String),
    /// 404, with the message.
    NotFound(String),
    /// 409, with the message.
    Conflict(String),
}

impl std::fmt::Display for Refusal {
    /// The message alone, as a result list (an import's) quotes it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::BadRequest(m) | Refusal::NotFound(m) | Refusal::Conflict(m) => f.write_str(m),
        }
    }
}
