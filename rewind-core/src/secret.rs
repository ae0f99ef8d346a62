//! [`Secret`]: a password, client secret or token, which no formatting prints.

use std::fmt;

use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;

/// A secret (password, client secret, token). Its `Debug` and `Display` print `<redacted>`; the only way
/// to read it is [`Secret::expose`], so a secret cannot slip into a log line or an error by formatting.
///
/// The value is held in secrecy's [`SecretString`], which wipes it from memory when dropped and reads
/// only through `expose_secret`. This wrapper keeps what the project's messages rely on: the one word
/// `<redacted>` in `Debug` and `Display` (secrecy's own `Debug` names its type), and equality, so that
/// two [`Credentials`](crate::config::Credentials) compare.
#[derive(Clone, Deserialize)]
#[serde(transparent)]
pub struct Secret(SecretString);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(SecretString::from(value.into()))
    }

    /// The secret itself. Call it only where the value goes on the wire.
    pub fn expose(&self) -> &str {
        self.0.expose_secret()
    }
}

impl PartialEq for Secret {
    fn eq(&self, other: &Self) -> bool {
        self.expose() == other.expose()
    }
}

impl Eq for Secret {}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}
