//! The fronts' own sections: `[hook.team]`, which only the CLI's hook reads, and `[http.auth]`, which
//! only rewind-mcp reads.
//!
//! They are defined here, in the core, and not beside their fronts: both fronts read the one file and
//! each refuses it whole when any of it is wrong (a typo in `[http.auth]` stops the hook as it stops
//! the server, rather than being skipped by one and caught by the other). A front can only check a
//! section whose type it sees, the fronts do not depend on each other, and the core cannot depend on
//! either, so the types live where both fronts see them.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Deserializer};
use url::Url;

use super::values::{seconds, secs};

/// The environment variable the hook reads the user's access token for the team server from, when
/// `[hook.team]` names no `token_command`.
pub const TEAM_TOKEN_ENV: &str = "REWIND_TEAM_TOKEN";

/// `[hook.team]`: a team server (`rewind-mcp --http` with `[http.auth]`) that this machine's agent
/// guards through. The hook asks it for its recent guards (`GET /v1/guards`) with the user's own
/// access token, and judges a call on them and this machine's journal together; a server that
/// does not answer in `timeout`, or refuses the token, blocks the call (fail closed).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TeamServer {
    /// The server's base URL (`https://rewind.example.com`; its MCP endpoint is `<url>/mcp`), or
    /// its replicas' in the order they are tried (`url = ["https://a", "https://b"]`).
    #[serde(rename = "url", deserialize_with = "parsed_urls")]
    pub urls: Vec<Url>,
    /// A command that prints the user's access token on stdout (e.g. an OIDC agent's); without
    /// it, the token is read from [`TEAM_TOKEN_ENV`].
    pub token_command: Option<Vec<String>>,
    /// How long the hook waits for the token command and the server together.
    #[serde(
        rename = "timeout_secs",
        default = "seconds::<3>",
        deserialize_with = "secs"
    )]
    pub timeout: Duration,
    /// Trust only this certificate (bundle) for the server's TLS, instead of the system's roots.
    pub ca_cert: Option<PathBuf>,
}

/// `[http.auth]`: who may use rewind-mcp over HTTP. Every request needs a bearer token signed by
/// this OpenID issuer (its JWKS), naming this audience, not expired (within `leeway`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpAuth {
    /// The issuer exactly as its tokens' `iss` names it (a Keycloak realm's URL): https, or http on
    /// this machine only. Kept as written, but for surrounding blanks.
    #[serde(deserialize_with = "trimmed")]
    pub issuer: String,
    /// The audience its tokens must name (`aud`).
    pub audience: String,
    /// How far the clocks may disagree on `exp`, `nbf` and `iat`.
    #[serde(
        rename = "leeway_secs",
        default = "seconds::<60>",
        deserialize_with = "secs"
    )]
    pub leeway: Duration,
    /// The role (or scope) a token must carry for each kind of tool.
    #[serde(default)]
    pub roles: ToolRoles,
    /// The URL clients reach the MCP endpoint at (`https://rewind.example.com/mcp`), when it is not
    /// `http://<Host>/mcp`: a server behind a TLS proxy. The protected-resource metadata names it.
    #[serde(default, deserialize_with = "some_parsed_url")]
    pub resource: Option<Url>,
    /// The only certificates trusted for the issuer (a PEM bundle): a realm with its own CA.
    pub ca_cert: Option<PathBuf>,
    /// The issuer's JWKS, when it is not where the issuer's OpenID configuration says (or is on
    /// another origin than the issuer, which is followed only when named here).
    #[serde(default, deserialize_with = "some_parsed_url")]
    pub jwks_uri: Option<Url>,
    /// How long keys read from the JWKS are trusted without a fresh read: a key the issuer stops
    /// publishing is distrusted within this long.
    #[serde(
        rename = "jwks_max_age_secs",
        default = "seconds::<300>",
        deserialize_with = "secs"
    )]
    pub jwks_max_age: Duration,
    /// `[http.auth.ui]`: the team server's pages, signing people in with the realm's
    /// authorization-code flow with PKCE. Without it, `/ui` is not served.
    #[serde(default)]
    pub ui: Option<UiSignIn>,
}

/// `[http.auth.ui]`: the realm client the pages sign people in with, and where the realm sends them
/// back.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UiSignIn {
    /// A public client of the realm with the standard flow (authorization code) and PKCE S256.
    #[serde(default = "public_client")]
    pub client_id: String,
    /// The pages' callback as people's browsers reach it (`https://rewind.example.com/ui/callback`),
    /// registered as a valid redirect URI of that client.
    #[serde(deserialize_with = "parsed_url")]
    pub redirect_uri: Url,
}

fn public_client() -> String {
    "zerto-client".to_owned()
}

/// `[http.auth.roles]`: the realm role or scope each kind of tool needs over HTTP.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolRoles {
    /// Finding protection, listing tags, checking a tool, reading the journal.
    pub read: String,
    /// Guarding a VM.
    pub guard: String,
    /// File-level restore, failover tests and clones.
    pub recover: String,
    /// Changing the tool catalog.
    pub catalog: String,
    /// Approving or denying a held call (besides the role the held tool itself needs).
    pub approve: String,
}

impl Default for ToolRoles {
    fn default() -> Self {
        ToolRoles {
            read: "rewind-read".to_owned(),
            guard: "rewind-guard".to_owned(),
            recover: "rewind-recover".to_owned(),
            catalog: "rewind-catalog".to_owned(),
            approve: "rewind-approve".to_owned(),
        }
    }
}

/// A URL key, read as a URL: whether it is one a server may be reached at is [`super::validate`]'s.
fn parsed_url<'de, D: Deserializer<'de>>(d: D) -> Result<Url, D::Error> {
    let raw = String::deserialize(d)?;
    Url::parse(raw.trim()).map_err(|e| {
        serde::de::Error::custom(format!(
            "is not a URL ({e}); write it as https://host[:port]"
        ))
    })
}

/// A URL key that takes one URL or a list of them (at least one).
fn parsed_urls<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Url>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Written {
        One(String),
        Several(Vec<String>),
    }
    let written = Written::deserialize(d).map_err(|_| {
        serde::de::Error::custom(
            "is neither a URL nor a list of URLs; write url = \"https://host\" or url = [\"https://a\", \"https://b\"]",
        )
    })?;
    let raw = match written {
        Written::One(one) => vec![one],
        Written::Several(several) if several.is_empty() => {
            return Err(serde::de::Error::custom(
                "is an empty list; give at least one URL",
            ));
        }
        Written::Several(several) => several,
    };
    raw.iter()
        .map(|r| {
            Url::parse(r.trim()).map_err(|e| {
                serde::de::Error::custom(format!(
                    "holds {r:?}, which is not a URL ({e}); write it as https://host[:port]"
                ))
            })
        })
        .collect()
}

fn some_parsed_url<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Url>, D::Error> {
    parsed_url(d).map(Some)
}

fn trimmed<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    String::deserialize(d).map(|s| s.trim().to_owned())
}
