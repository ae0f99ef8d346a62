//! `[[gateway.upstream]]`: the MCP servers `rewind-mcp --gateway` serves the tools of, each guarded
//! before it is called. Serde reads each table's keys as written ([`UpstreamKeys`]); [`upstream`]
//! makes an [`Upstream`] of them, refusing a name that could be confused with another server's and
//! keys that do not go together, each named by its key.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;
use url::Url;

use super::error::ConfigError;
use crate::catalog::{BUILTIN_READ_ONLY, HOSTS, ZERTO_REWIND};
use crate::secret::Secret;

/// The longest upstream name: with `__` and a tool name, a served name must fit in 64 characters.
pub const UPSTREAM_NAME_MAX: usize = 24;

/// `[gateway]`: the upstreams, in the order written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GatewaySettings {
    /// Each `[[gateway.upstream]]` table.
    pub upstreams: Vec<Upstream>,
}

/// One upstream MCP server whose tools the gateway serves as `<name>__<tool>`.
#[derive(Debug, Clone, PartialEq)]
pub struct Upstream {
    /// Letters, digits and `-`: the server the catalog names its tools under.
    pub name: String,
    /// How the gateway reaches it.
    pub reach: Reach,
    /// The one VM every mutating call of this upstream changes, for an upstream that manages one
    /// guest; without it, the catalog entry's `vm_arg` names the VM of each call.
    pub vm: Option<String>,
    /// On a team server: the realm role its tools need, besides the read or guard role.
    pub role: Option<String>,
}

/// How the gateway reaches an upstream.
#[derive(Debug, Clone, PartialEq)]
pub enum Reach {
    /// A child process spoken to over stdio. It gets `PATH`, `HOME` and `LANG` of the gateway's
    /// environment and `env`, nothing else: never the gateway's ZVM credentials.
    Child {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Its own environment.
        env: BTreeMap<String, Secret>,
    },
    /// A streamable HTTP server.
    Http {
        /// Its MCP endpoint.
        url: Url,
        /// Trust only this certificate (bundle) for its TLS.
        ca_cert: Option<PathBuf>,
        /// The gateway's own credential for it; the client's token is never passed on.
        credential: Option<UpstreamCredential>,
    },
}

/// The gateway's credential for an HTTP upstream.
#[derive(Debug, Clone, PartialEq)]
pub enum UpstreamCredential {
    /// A bearer token read from this environment variable when the gateway starts.
    BearerEnv(String),
    /// OAuth client credentials: a token from `token_url` for `client_id`, the secret read from
    /// the environment variable `secret_env`.
    ClientCredentials {
        /// The token endpoint.
        token_url: Url,
        /// The client.
        client_id: String,
        /// The environment variable holding the client secret.
        secret_env: String,
    },
}

impl Upstream {
    /// How it is reached, in a few words for messages: its program or its URL (never a secret).
    pub fn reached_at(&self) -> String {
        match &self.reach {
            Reach::Child { command, .. } => format!("the command {command}"),
            Reach::Http { url, .. } => super::site::redact_url(url.as_str()),
        }
    }
}

/// `[gateway]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(super) struct GatewayKeys {
    #[serde(rename = "upstream")]
    pub(super) upstreams: Vec<UpstreamKeys>,
}

impl GatewayKeys {
    /// Whether an upstream's own environment is written here: it holds the upstream's credentials
    /// as often as not, so the file is held to the rule of a file with a secret.
    pub(super) fn holds_secret(&self) -> bool {
        self.upstreams.iter().any(|u| !u.env.is_empty())
    }
}

/// One `[[gateway.upstream]]` table as written; [`upstream`] says which keys go together.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct UpstreamKeys {
    name: String,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, Secret>,
    url: Option<String>,
    ca_cert: Option<PathBuf>,
    bearer_env: Option<String>,
    token_url: Option<String>,
    client_id: Option<String>,
    client_secret_env: Option<String>,
    vm: Option<String>,
    role: Option<String>,
}

/// Every upstream written, checked, their names distinct.
pub(super) fn settings(written: GatewayKeys) -> Result<GatewaySettings, ConfigError> {
    let mut upstreams: Vec<Upstream> = Vec::new();
    for (at, keys) in written.upstreams.into_iter().enumerate() {
        let up = upstream(at, keys)?;
        if upstreams.iter().any(|u| u.name == up.name) {
            return Err(bad(
                at,
                "name",
                &format!(
                    "{:?} names an earlier upstream too; give each its own name",
                    up.name
                ),
            ));
        }
        upstreams.push(up);
    }
    Ok(GatewaySettings { upstreams })
}

/// The table at `at`, checked.
fn upstream(at: usize, keys: UpstreamKeys) -> Result<Upstream, ConfigError> {
    name(&keys.name).map_err(|problem| bad(at, "name", &problem))?;
    let reach = match (&keys.command, &keys.url) {
        (Some(_), Some(_)) => {
            return Err(bad(
                at,
                "url",
                "an upstream is either a command or a url, not both; keep the one that reaches it",
            ));
        }
        (None, None) => {
            return Err(bad(
                at,
                "command",
                "neither command nor url is set: give the program that serves MCP on stdio (command, args) or its streamable HTTP endpoint (url)",
            ));
        }
        (Some(_), None) => child(at, keys.command.clone(), &keys)?,
        (None, Some(_)) => http(at, &keys)?,
    };
    let words = |key: &'static str, v: Option<String>| -> Result<Option<String>, ConfigError> {
        match v.map(|v| v.trim().to_owned()) {
            Some(v) if v.is_empty() => {
                Err(bad(at, key, "it is empty: leave it out or give a value"))
            }
            v => Ok(v),
        }
    };
    Ok(Upstream {
        name: keys.name.clone(),
        reach,
        vm: words("vm", keys.vm.clone())?,
        role: words("role", keys.role.clone())?,
    })
}

/// Letters, digits and `-`, at most [`UPSTREAM_NAME_MAX`], and not a name the catalog already
/// gives another server's tools (rewind's own, an agent host's, a built-in entry's): the catalog
/// classifies an upstream's tools under its name, so a borrowed name would borrow their class.
pub fn name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > UPSTREAM_NAME_MAX {
        return Err(format!(
            "{name:?} must be 1 to {UPSTREAM_NAME_MAX} characters, so that <name>__<tool> fits the 64 characters MCP clients allow"
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '-'))
    {
        return Err(format!(
            "{name:?} holds {c:?}: use letters, digits and - only (the gateway joins the name and a tool with __)"
        ));
    }
    let taken = name == ZERTO_REWIND
        || HOSTS.contains(&name)
        || BUILTIN_READ_ONLY.iter().any(|(server, _)| *server == name);
    if taken {
        return Err(format!(
            "{name:?} is a server the tool catalog already knows; an upstream under it would be classified as that server: choose another name"
        ));
    }
    Ok(())
}

/// `command`, `args`, `env`: a child over stdio; the HTTP keys are refused beside them.
fn child(at: usize, command: Option<String>, keys: &UpstreamKeys) -> Result<Reach, ConfigError> {
    let command = command.unwrap_or_default();
    if command.trim().is_empty() {
        return Err(bad(at, "command", "it is empty: give the program to run"));
    }
    let http_only = [
        ("ca_cert", keys.ca_cert.is_some()),
        ("bearer_env", keys.bearer_env.is_some()),
        ("token_url", keys.token_url.is_some()),
        ("client_id", keys.client_id.is_some()),
        ("client_secret_env", keys.client_secret_env.is_some()),
    ];
    if let Some((key, _)) = http_only.iter().find(|(_, set)| *set) {
        return Err(bad(
            at,
            key,
            "it is for an upstream reached by url; a command's upstream takes its credentials in env",
        ));
    }
    if let Some(key) = keys.env.keys().find(|k| !env_name(k)) {
        return Err(bad(
            at,
            "env",
            &format!("{key:?} is not an environment variable's name (letters, digits and _)"),
        ));
    }
    Ok(Reach::Child {
        command,
        args: keys.args.clone(),
        env: keys.env.clone(),
    })
}

/// `url`, `ca_cert` and one credential: `bearer_env`, or `token_url`, `client_id` and
/// `client_secret_env` together.
fn http(at: usize, keys: &UpstreamKeys) -> Result<Reach, ConfigError> {
    if !keys.args.is_empty() || !keys.env.is_empty() {
        let key = if keys.args.is_empty() { "env" } else { "args" };
        return Err(bad(
            at,
            key,
            "it is for an upstream run as a command, not one reached by url",
        ));
    }
    let url = endpoint(at, "url", keys.url.as_deref().unwrap_or_default())?;
    let client = [
        keys.token_url.as_ref(),
        keys.client_id.as_ref(),
        keys.client_secret_env.as_ref(),
    ];
    let credential = match (&keys.bearer_env, client) {
        (Some(_), [None, None, None]) | (None, [None, None, None]) => match &keys.bearer_env {
            Some(name) => Some(UpstreamCredential::BearerEnv(variable(
                at,
                "bearer_env",
                name,
            )?)),
            None => None,
        },
        (Some(_), _) => {
            return Err(bad(
                at,
                "bearer_env",
                "give either bearer_env or the client credentials (token_url, client_id, client_secret_env), not both",
            ));
        }
        (None, [Some(token_url), Some(client_id), Some(secret_env)]) => {
            Some(UpstreamCredential::ClientCredentials {
                token_url: endpoint(at, "token_url", token_url)?,
                client_id: client_id.clone(),
                secret_env: variable(at, "client_secret_env", secret_env)?,
            })
        }
        (None, _) => {
            return Err(bad(
                at,
                "token_url",
                "client credentials need token_url, client_id and client_secret_env together",
            ));
        }
    };
    Ok(Reach::Http {
        url,
        ca_cert: keys.ca_cert.clone(),
        credential,
    })
}

/// An http or https URL.
fn endpoint(at: usize, key: &'static str, raw: &str) -> Result<Url, ConfigError> {
    Url::parse(raw.trim())
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
        .ok_or_else(|| {
            bad(
                at,
                key,
                &format!(
                    "{raw:?} is not an http or https URL; write it as https://host[:port]/mcp"
                ),
            )
        })
}

/// The name of an environment variable that holds a credential (never the credential itself).
fn variable(at: usize, key: &'static str, name: &str) -> Result<String, ConfigError> {
    if env_name(name) {
        Ok(name.to_owned())
    } else {
        Err(bad(
            at,
            key,
            "it names the environment variable that holds the credential (letters, digits and _), not the credential itself",
        ))
    }
}

fn env_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn bad(at: usize, key: &str, problem: &str) -> ConfigError {
    ConfigError::BadValue {
        key: format!("gateway.upstream[{at}].{key}"),
        problem: problem.to_owned(),
    }
}
