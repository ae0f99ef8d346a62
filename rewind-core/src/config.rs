//! Configuration: the ZVM sites to talk to, their credentials and TLS trust, where the catalog and the
//! journal live, and the guard's and the hook's settings.
//!
//! A configuration comes from a TOML file (an explicit path, else
//! `$XDG_CONFIG_HOME/zerto-ai-rewind/config.toml` when it exists) merged with the environment
//! (`ZVM_URL`, `ZVM_CLIENT_ID` + `ZVM_CLIENT_SECRET` or `ZVM_USERNAME` + `ZVM_PASSWORD`, `ZVM_CA_CERT`,
//! `ZVM_INSECURE=1`), which makes or overrides a site named `default`. Tests and the demo build one with
//! [`Config::builder`], which reads neither.
//!
//! Sites are optional: the tool catalog, the audit journal and the PreToolUse hook need no ZVM, so a
//! configuration without sites loads. What needs a ZVM asks [`Config::require_sites`] first, which
//! refuses with [`ConfigError::NoSites`], naming what to set.
//!
//! ```toml
//! catalog = "/home/me/.config/zerto-ai-rewind/catalog.toml"   # optional
//! journal = "/home/me/.local/state/zerto-ai-rewind/journal.jsonl"   # optional
//!
//! [sites.boston]
//! url = "https://zvm-boston.example.com"
//! client_id = "rewind"
//! client_secret = "..."
//! ca_cert = "/etc/zerto/boston-ca.pem"   # optional: trust only this certificate (bundle)
//! insecure = false                        # optional: accept any certificate (last resort)
//!
//! [guard]
//! deadline_secs = 60
//! back_to_back_retries = 3                # optional cap; by default retried until the deadline
//! lost_response_retries = 1
//!
//! [hook]
//! window_secs = 900
//!
//! [hook.team]                             # optional: guards made through a team server count too
//! url = "https://rewind.example.com"
//! token_command = ["oidc-token", "rewind"] # prints the user's access token; else $REWIND_TEAM_TOKEN
//! timeout_secs = 3
//!
//! [recover]
//! wait_floor_secs = 600                   # each recovery task is waited for at least this long
//!
//! [lookup]
//! inventory_max_age_secs = 30             # 0 reads the inventories for every lookup
//!
//! [http]
//! connect_timeout_secs = 3
//! request_timeout_secs = 30
//! connect_retry_secs = 3
//! read_retry_secs = 15
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use url::Url;

pub use crate::secret::Secret;

/// The folder name under the XDG config and state directories.
pub const APP_DIR: &str = "zerto-ai-rewind";

/// The name of the site that the `ZVM_*` environment variables make or override.
pub const ENV_SITE: &str = "default";

/// How rewind authenticates to one ZVM's Keycloak.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credentials {
    /// A Keycloak service client (`client_credentials` grant): Zerto's recommended path for scripts.
    Client {
        /// The Keycloak client id, e.g. `rewind`.
        id: String,
        /// The client's secret.
        secret: Secret,
    },
    /// A ZVM user (`password` grant with `client_id=zerto-client`).
    Password {
        /// The user name, e.g. `admin`.
        username: String,
        /// The user's password.
        password: Secret,
    },
}

impl Credentials {
    /// Who these credentials act as (client id or user name): safe to show, never the secret.
    pub fn principal(&self) -> &str {
        match self {
            Credentials::Client { id, .. } => id,
            Credentials::Password { username, .. } => username,
        }
    }
}

/// One ZVM (one site) that rewind talks to.
#[derive(Debug, Clone)]
pub struct SiteConfig {
    /// The name this configuration gives the site (`[sites.<name>]`), used in messages.
    pub name: String,
    /// The ZVM's base URL, e.g. `https://zvm-boston.example.com` (the appliance serves `/v1` and
    /// `/auth` there).
    pub url: Url,
    /// How to obtain a bearer token.
    pub credentials: Credentials,
    /// A PEM file (certificate or bundle) to trust instead of the platform's roots: the appliance's own
    /// self-signed certificate or its CA.
    pub ca_cert: Option<PathBuf>,
    /// Accept any TLS certificate. An explicit last resort, warned about on every run.
    pub insecure: bool,
    /// Which of its settings the `ZVM_*` environment gave, so messages name what to fix where it
    /// was set.
    pub from_env: FromEnv,
}

/// Which settings of the site `default` came from the `ZVM_*` environment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FromEnv {
    /// `ZVM_URL`.
    pub url: bool,
    /// `ZVM_CLIENT_ID` and `ZVM_CLIENT_SECRET`, or `ZVM_USERNAME` and `ZVM_PASSWORD`.
    pub credentials: bool,
}

impl SiteConfig {
    /// Where the site's URL is set, as a message names it: `ZVM_URL` or `[sites.<name>] url`.
    pub fn url_setting(&self) -> String {
        match self.from_env.url {
            true => "ZVM_URL".to_owned(),
            false => format!("[sites.{}] url", self.name),
        }
    }

    /// Where the site's credentials are set, as a message names them.
    pub fn credentials_setting(&self) -> String {
        let (id, secret) = match self.credentials {
            Credentials::Client { .. } => ("client_id", "client_secret"),
            Credentials::Password { .. } => ("username", "password"),
        };
        match self.from_env.credentials {
            true => format!(
                "ZVM_{} and ZVM_{}",
                id.to_ascii_uppercase(),
                secret.to_ascii_uppercase()
            ),
            false => format!("{id} and {secret} in [sites.{}]", self.name),
        }
    }
}

/// How the guard waits and retries.
#[derive(Debug, Clone, PartialEq)]
pub struct GuardSettings {
    /// How long one guard may take in all, from resolving the VM to the last checkpoint listed. When it
    /// runs out, the guard returns the task ids still running; it never drops them.
    pub deadline: Duration,
    /// At most how many times an insert that failed because another client's insert was running at
    /// the same VPG is retried (after waiting for that insert and a random pause). `None`, the
    /// default, retries until the deadline: N rivals at one VPG then all end guarded, one after the
    /// other, within about N inserts' time.
    pub back_to_back_retries: Option<u32>,
    /// How many times an insert whose outcome was unknown (no answer came, or one that could not be
    /// read, or a 5xx), and of which no trace was found, is sent again.
    pub lost_response_retries: u32,
    /// How far back a change id's earlier uses are looked for: a guard is refused when, within it,
    /// the id was used by another agent, action or person, or by a recovery.
    pub change_id_horizon: Duration,
}

impl Default for GuardSettings {
    fn default() -> Self {
        GuardSettings {
            deadline: Duration::from_secs(60),
            back_to_back_retries: None,
            lost_response_retries: 1,
            change_id_horizon: Duration::from_secs(30 * 24 * 60 * 60),
        }
    }
}

/// Settings of the pre-tool hook (`rewind hook pre-tool-use`) of every agent host.
#[derive(Debug, Clone, PartialEq)]
pub struct HookSettings {
    /// How long a guard of a VM lets mutating tool calls on that VM through without a new guard.
    pub window: Duration,
    /// The team server whose guards count too (`[hook.team]`), when this machine's agent guards
    /// through one.
    pub team: Option<TeamServer>,
}

impl Default for HookSettings {
    fn default() -> Self {
        HookSettings {
            window: Duration::from_secs(15 * 60),
            team: None,
        }
    }
}

/// The environment variable the hook reads the user's access token for the team server from, when
/// `[hook.team]` names no `token_command`.
pub const TEAM_TOKEN_ENV: &str = "REWIND_TEAM_TOKEN";

/// `[hook.team]`: a team server (`rewind-mcp --http` with `[http.auth]`) that this machine's agent
/// guards through. The hook asks it for its recent guards (`GET /v1/guards`) with the user's own
/// access token, and judges a call on them and this machine's journal together; a server that
/// does not answer in `timeout`, or refuses the token, blocks the call (fail closed).
#[derive(Debug, Clone, PartialEq)]
pub struct TeamServer {
    /// The server's base URL (`https://rewind.example.com`; its MCP endpoint is `<url>/mcp`).
    pub url: Url,
    /// A command that prints the user's access token on stdout (e.g. an OIDC agent's); without
    /// it, the token is read from [`TEAM_TOKEN_ENV`].
    pub token_command: Option<Vec<String>>,
    /// How long the hook waits for the token command and the server together.
    pub timeout: Duration,
    /// Trust only this certificate (bundle) for the server's TLS, instead of the system's roots.
    pub ca_cert: Option<PathBuf>,
}

/// How long a bounded recover waits for its Zerto tasks.
#[derive(Debug, Clone, PartialEq)]
pub struct RecoverSettings {
    /// The shortest time each recovery task (an FLR mount or unmount, a failover test, a clone) is
    /// waited for; the guard deadline is used instead when it is longer. A mount or a test takes
    /// longer than a tag. A task still running then is reported with its id, never dropped.
    pub wait_floor: Duration,
}

impl Default for RecoverSettings {
    fn default() -> Self {
        RecoverSettings {
            wait_floor: Duration::from_secs(10 * 60),
        }
    }
}

impl RecoverSettings {
    /// How long each recovery task is waited for under `guard`: the guard deadline, but at least
    /// [`RecoverSettings::wait_floor`].
    pub fn wait(&self, guard: &GuardSettings) -> Duration {
        guard.deadline.max(self.wait_floor)
    }
}

/// How a VM lookup reuses what it read.
#[derive(Debug, Clone, PartialEq)]
pub struct LookupSettings {
    /// How old a site's inventory (every VM it has, protected or not) and its whole listing of
    /// protected VMs may be when a lookup uses them again; past half of it, one is read again in the
    /// background. Only what no ZVM filter answers comes from them: an unprotected VM of the same
    /// name, an IP address, a name in letters other than ASCII. The rows of the VM found, and so the
    /// VPGs a guard tags, are always read at the time of the lookup. Zero reads them every time.
    pub inventory_max_age: Duration,
}

impl Default for LookupSettings {
    fn default() -> Self {
        LookupSettings {
            inventory_max_age: Duration::from_secs(30),
        }
    }
}

/// `[http.auth]`: who may use rewind-mcp over HTTP. Every request needs a bearer token signed by
/// this OpenID issuer (its JWKS), naming this audience, not expired (within `leeway`).
#[derive(Debug, Clone, PartialEq)]
pub struct HttpAuth {
    /// The issuer exactly as its tokens' `iss` names it (a Keycloak realm's URL): https, or http on
    /// this machine only.
    pub issuer: String,
    /// The audience its tokens must name (`aud`).
    pub audience: String,
    /// How far the clocks may disagree on `exp`, `nbf` and `iat`.
    pub leeway: Duration,
    /// The role (or scope) a token must carry for each kind of tool.
    pub roles: ToolRoles,
    /// The URL clients reach the MCP endpoint at (`https://rewind.example.com/mcp`), when it is not
    /// `http://<Host>/mcp`: a server behind a TLS proxy. The protected-resource metadata names it.
    pub resource: Option<Url>,
    /// The only certificates trusted for the issuer (a PEM bundle): a realm with its own CA.
    pub ca_cert: Option<PathBuf>,
    /// The issuer's JWKS, when it is not where the issuer's OpenID configuration says (or is on
    /// another origin than the issuer, which is followed only when named here).
    pub jwks_uri: Option<Url>,
    /// How long keys read from the JWKS are trusted without a fresh read: a key the issuer stops
    /// publishing is distrusted within this long.
    pub jwks_max_age: Duration,
}

/// `[http.auth.roles]`: the realm role or scope each kind of tool needs over HTTP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolRoles {
    /// Finding protection, listing tags, checking a tool, reading the journal.
    pub read: String,
    /// Guarding a VM.
    pub guard: String,
    /// File-level restore, failover tests and clones.
    pub recover: String,
    /// Changing the tool catalog.
    pub catalog: String,
}

impl Default for ToolRoles {
    fn default() -> Self {
        ToolRoles {
            read: "rewind-read".to_owned(),
            guard: "rewind-guard".to_owned(),
            recover: "rewind-recover".to_owned(),
            catalog: "rewind-catalog".to_owned(),
        }
    }
}

/// Timeouts and retries of every HTTP call to a ZVM.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpSettings {
    /// How long to wait for a TCP (and TLS) connection.
    pub connect_timeout: Duration,
    /// How long one request may take, connection included.
    pub request_timeout: Duration,
    /// How long a connection that was refused keeps being tried again, with capped, jittered
    /// backoff: a ZVM restarting comes back within it, and one that is down is said soon.
    pub connect_retry: Duration,
    /// How long a read (and a token request) whose answer was started keeps being retried on 502,
    /// 503, 504 and a lost answer, with capped, jittered backoff.
    pub read_retry: Duration,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            connect_timeout: Duration::from_secs(3),
            request_timeout: Duration::from_secs(30),
            connect_retry: Duration::from_secs(3),
            read_retry: Duration::from_secs(15),
        }
    }
}

/// Everything rewind needs to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// The ZVMs to talk to, one per site.
    pub sites: Vec<SiteConfig>,
    /// The tool catalog (TOML).
    pub catalog_path: PathBuf,
    /// The audit journal (JSON lines).
    pub journal_path: PathBuf,
    /// How the guard waits and retries.
    pub guard: GuardSettings,
    /// The PreToolUse hook's settings.
    pub hook: HookSettings,
    /// How long a bounded recover waits.
    pub recover: RecoverSettings,
    /// How lookups reuse what they read.
    pub lookup: LookupSettings,
    /// HTTP timeouts and read retries.
    pub http: HttpSettings,
    /// Sign-in to rewind-mcp over HTTP (`[http.auth]`); `None` keeps it loopback-only.
    pub http_auth: Option<HttpAuth>,
    /// The configuration file that was read, or looked for and not found; `None` when the
    /// configuration was built in code. Named when a site is missing.
    pub file: Option<PathBuf>,
    /// The mode of [`Config::file`] when it holds a secret (a client secret, a password) and users
    /// other than its owner may read it: [`Config::warnings`] names it on every run, as ssh refuses
    /// such a key.
    pub exposed_secret_mode: Option<u32>,
}

/// A configuration that cannot be used. Each variant names the file, site or variable at fault and
/// never holds a secret's value.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The configuration file could not be read.
    #[error(
        "cannot read the configuration file {path}: {source}; check that it exists and is readable"
    )]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The configuration file is not valid TOML of the expected shape.
    #[error(
        "the configuration file {path} is not valid: {message}; fix the file: it takes {}",
        crate::toml_error::tables::<FileConfig>().join(", ")
    )]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong and where: the key and its line, never the value.
        message: String,
    },
    /// No site is configured at all, and something that needs a ZVM was asked for.
    #[error(
        "no ZVM site is configured: set ZVM_URL and ZVM_CLIENT_ID + ZVM_CLIENT_SECRET (or ZVM_USERNAME + ZVM_PASSWORD), or add a [sites.<name>] table to {config_file}"
    )]
    NoSites {
        /// The configuration file that was looked for.
        config_file: String,
    },
    /// A site has no URL.
    #[error(
        "site {site} has no url: set `url` in [sites.{site}] (or ZVM_URL for the default site)"
    )]
    MissingUrl {
        /// The site.
        site: String,
    },
    /// A site's URL is not usable.
    #[error("site {site} has an unusable url {url:?}: {problem}")]
    BadUrl {
        /// The site.
        site: String,
        /// The URL as given, with any password removed.
        url: String,
        /// What is wrong and what to do.
        problem: String,
    },
    /// A site has no credentials, or half of a pair.
    #[error("site {site} has no usable credentials: {problem}")]
    Credentials {
        /// The site.
        site: String,
        /// What is missing and what to set.
        problem: String,
    },
    /// A setting has a value that cannot be used.
    #[error("{key} has an unusable value: {problem}")]
    BadValue {
        /// The file key or environment variable.
        key: String,
        /// What is wrong and what to set instead.
        problem: String,
    },
    /// No home or XDG directory could be found to place the catalog or the journal.
    #[error(
        "cannot find a config or state directory for {what} (no HOME or XDG_*_HOME); set `{key}` in the configuration file"
    )]
    NoDirectory {
        /// The catalog or the journal.
        what: &'static str,
        /// The file key that sets it explicitly.
        key: &'static str,
    },
}

/// The on-disk shape of the configuration file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    catalog: Option<PathBuf>,
    journal: Option<PathBuf>,
    #[serde(default)]
    sites: BTreeMap<String, FileSite>,
    guard: Option<FileGuard>,
    hook: Option<FileHook>,
    recover: Option<FileRecover>,
    lookup: Option<FileLookup>,
    http: Option<FileHttp>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSite {
    /// Not a key of the file: which settings `merge_env` took from the environment.
    #[serde(skip)]
    from_env: FromEnv,
    url: Option<String>,
    client_id: Option<String>,
    client_secret: Option<Secret>,
    username: Option<String>,
    password: Option<Secret>,
    ca_cert: Option<PathBuf>,
    insecure: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileGuard {
    deadline_secs: Option<f64>,
    back_to_back_retries: Option<u32>,
    lost_response_retries: Option<u32>,
    /// In days.
    change_id_horizon: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileHook {
    window_secs: Option<f64>,
    team: Option<FileTeam>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileTeam {
    url: Option<String>,
    token_command: Option<Vec<String>>,
    timeout_secs: Option<f64>,
    ca_cert: Option<PathBuf>,
}

impl FileTeam {
    /// `[hook.team]`: the url is required, the token command must name a program when given.
    fn settings(self) -> Result<TeamServer, ConfigError> {
        let bad = |key: &str, problem: String| ConfigError::BadValue {
            key: format!("hook.team.{key}"),
            problem,
        };
        let raw = self.url.ok_or_else(|| {
            bad(
                "url",
                "it is required: [hook.team] takes url (the team server's base URL, e.g. https://rewind.example.com), and optionally token_command, timeout_secs and ca_cert".to_owned(),
            )
        })?;
        let url = parse_site_url("hook.team", &raw).map_err(|_| {
            bad(
                "url",
                format!("{raw:?} is not an http(s) URL without credentials, query or fragment"),
            )
        })?;
        if url.scheme() != "https" && !is_loopback(&url) {
            return Err(bad(
                "url",
                format!(
                    "{raw:?} is not https: the hook sends the user's access token to it, which must not cross the network in the clear; use https (http is taken for a server on this machine only)"
                ),
            ));
        }
        if let Some(command) = &self.token_command
            && command.first().is_none_or(|p| p.trim().is_empty())
        {
            return Err(bad(
                "token_command",
                "it is empty: give the program and its arguments, e.g. [\"oidc-token\", \"rewind\"], or leave it out to read $REWIND_TEAM_TOKEN".to_owned(),
            ));
        }
        Ok(TeamServer {
            url,
            token_command: self.token_command,
            timeout: seconds(
                "hook.team.timeout_secs",
                self.timeout_secs,
                Duration::from_secs(3),
            )?,
            ca_cert: self.ca_cert,
        })
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRecover {
    wait_floor_secs: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileLookup {
    inventory_max_age_secs: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileHttp {
    connect_timeout_secs: Option<f64>,
    request_timeout_secs: Option<f64>,
    connect_retry_secs: Option<f64>,
    read_retry_secs: Option<f64>,
    auth: Option<FileHttpAuth>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileHttpAuth {
    issuer: Option<String>,
    audience: Option<String>,
    resource: Option<String>,
    leeway_secs: Option<f64>,
    roles: Option<FileToolRoles>,
    ca_cert: Option<PathBuf>,
    jwks_uri: Option<String>,
    jwks_max_age_secs: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileToolRoles {
    read: Option<String>,
    guard: Option<String>,
    recover: Option<String>,
    catalog: Option<String>,
}

impl FileHttpAuth {
    /// `[http.auth]` as rewind-mcp checks tokens by it; the issuer and the audience are required.
    fn settings(self) -> Result<HttpAuth, ConfigError> {
        let missing = |key: &str| {
            ConfigError::BadValue {
            key: format!("http.auth.{key}"),
            problem: "it is required: [http.auth] takes issuer (the OpenID issuer URL, e.g. https://zvm.example.com/auth/realms/zerto) and audience (the audience its tokens name for rewind-mcp)".to_owned(),
        }
        };
        let raw = self.issuer.ok_or_else(|| missing("issuer"))?;
        let issuer = parse_site_url("http.auth", &raw).map_err(|_| ConfigError::BadValue {
            key: "http.auth.issuer".to_owned(),
            problem: format!(
                "{raw:?} is not an http(s) URL without credentials, query or fragment"
            ),
        })?;
        if issuer.scheme() != "https" && !is_loopback(&issuer) {
            return Err(ConfigError::BadValue {
                key: "http.auth.issuer".to_owned(),
                problem: format!(
                    "{raw:?} is not https: rewind-mcp reads the issuer's signing keys from it, and anyone on the path to an http issuer could replace them and sign in as anyone; use https (with ca_cert for a realm with its own certificate), or http for an issuer on this machine only"
                ),
            });
        }
        let jwks_uri = match self.jwks_uri {
            None => None,
            Some(raw) => Some(parse_site_url("http.auth", &raw).map_err(|_| {
                ConfigError::BadValue {
                    key: "http.auth.jwks_uri".to_owned(),
                    problem: format!(
                        "{raw:?} is not an http(s) URL without credentials, query or fragment; give the issuer's JWKS URL, e.g. https://zvm.example.com/auth/realms/zerto/protocol/openid-connect/certs"
                    ),
                }
            })?),
        };
        if let Some(jwks) = jwks_uri
            .as_ref()
            .filter(|u| u.scheme() != "https" && !is_loopback(u))
        {
            return Err(ConfigError::BadValue {
                key: "http.auth.jwks_uri".to_owned(),
                problem: format!(
                    "{:?} is not https: the signing keys read from it must not cross the network in the clear; use https, or http on this machine only",
                    jwks.as_str()
                ),
            });
        }
        let audience = self
            .audience
            .filter(|a| !a.trim().is_empty())
            .ok_or_else(|| missing("audience"))?;
        let leeway = seconds(
            "http.auth.leeway_secs",
            self.leeway_secs,
            Duration::from_secs(60),
        )?;
        let given = self.roles.unwrap_or_default();
        let d = ToolRoles::default();
        let roles = ToolRoles {
            read: given.read.unwrap_or(d.read),
            guard: given.guard.unwrap_or(d.guard),
            recover: given.recover.unwrap_or(d.recover),
            catalog: given.catalog.unwrap_or(d.catalog),
        };
        let resource = match self.resource {
            None => None,
            Some(raw) => Some(parse_site_url("http.auth", &raw).map_err(|_| {
                ConfigError::BadValue {
                    key: "http.auth.resource".to_owned(),
                    problem: format!(
                        "{raw:?} is not an http(s) URL without credentials, query or fragment; give the MCP endpoint's URL as clients reach it, e.g. https://rewind.example.com/mcp"
                    ),
                }
            })?),
        };
        Ok(HttpAuth {
            // Kept as written: tokens' `iss` is compared to it exactly.
            issuer: raw.trim().to_owned(),
            audience,
            leeway,
            roles,
            resource,
            ca_cert: self.ca_cert,
            jwks_uri,
            jwks_max_age: seconds(
                "http.auth.jwks_max_age_secs",
                self.jwks_max_age_secs,
                Duration::from_secs(300),
            )?,
        })
    }
}

impl FileGuard {
    /// The guard's settings, each missing value its default.
    fn settings(self) -> Result<GuardSettings, ConfigError> {
        let defaults = GuardSettings::default();
        Ok(GuardSettings {
            deadline: seconds("guard.deadline_secs", self.deadline_secs, defaults.deadline)?,
            back_to_back_retries: self.back_to_back_retries.or(defaults.back_to_back_retries),
            lost_response_retries: self
                .lost_response_retries
                .unwrap_or(defaults.lost_response_retries),
            change_id_horizon: seconds(
                "guard.change_id_horizon",
                self.change_id_horizon.map(|days| days * 86_400.0),
                defaults.change_id_horizon,
            )?,
        })
    }
}

impl FileHook {
    /// The hook's settings, each missing value its default.
    fn settings(self) -> Result<HookSettings, ConfigError> {
        let window = HookSettings::default().window;
        Ok(HookSettings {
            window: seconds("hook.window_secs", self.window_secs, window)?,
            team: self.team.map(FileTeam::settings).transpose()?,
        })
    }
}

impl FileRecover {
    /// The recoveries' settings, each missing value its default.
    fn settings(self) -> Result<RecoverSettings, ConfigError> {
        let floor = RecoverSettings::default().wait_floor;
        Ok(RecoverSettings {
            wait_floor: seconds("recover.wait_floor_secs", self.wait_floor_secs, floor)?,
        })
    }
}

impl FileLookup {
    /// The lookups' settings; a missing value is its default, and zero is allowed (read every time).
    fn settings(self) -> Result<LookupSettings, ConfigError> {
        let key = "lookup.inventory_max_age_secs";
        let default = LookupSettings::default().inventory_max_age;
        Ok(LookupSettings {
            inventory_max_age: match self.inventory_max_age_secs {
                Some(0.0) => Duration::ZERO,
                v => seconds(key, v, default)?,
            },
        })
    }
}

impl FileHttp {
    /// The HTTP settings, each missing value its default.
    fn settings(self) -> Result<HttpSettings, ConfigError> {
        let d = HttpSettings::default();
        Ok(HttpSettings {
            connect_timeout: seconds(
                "http.connect_timeout_secs",
                self.connect_timeout_secs,
                d.connect_timeout,
            )?,
            request_timeout: seconds(
                "http.request_timeout_secs",
                self.request_timeout_secs,
                d.request_timeout,
            )?,
            connect_retry: seconds(
                "http.connect_retry_secs",
                self.connect_retry_secs,
                d.connect_retry,
            )?,
            read_retry: seconds("http.read_retry_secs", self.read_retry_secs, d.read_retry)?,
        })
    }
}

fn project_dirs() -> Option<directories::ProjectDirs> {
    directories::ProjectDirs::from("", "", APP_DIR)
}

/// The configuration file looked for when none is given: `$XDG_CONFIG_HOME/zerto-ai-rewind/config.toml`.
pub fn default_config_file() -> Option<PathBuf> {
    project_dirs().map(|d| d.config_dir().join("config.toml"))
}

/// The default catalog file: `$XDG_CONFIG_HOME/zerto-ai-rewind/catalog.toml`.
pub fn default_catalog_path() -> Option<PathBuf> {
    project_dirs().map(|d| d.config_dir().join("catalog.toml"))
}

/// The default journal file: `$XDG_STATE_HOME/zerto-ai-rewind/journal.jsonl` (the local data
/// directory on platforms without a state directory).
pub fn default_journal_path() -> Option<PathBuf> {
    project_dirs().map(|d| {
        d.state_dir()
            .unwrap_or_else(|| d.data_local_dir())
            .join("journal.jsonl")
    })
}

fn seconds(key: &str, value: Option<f64>, default: Duration) -> Result<Duration, ConfigError> {
    match value {
        None => Ok(default),
        Some(v) if v.is_finite() && v > 0.0 && v < 1.0e7 => Ok(Duration::from_secs_f64(v)),
        Some(v) => Err(ConfigError::BadValue {
            key: key.to_string(),
            problem: format!(
                "{v} is not a number of seconds above 0 and below 10,000,000; give one in that range"
            ),
        }),
    }
}

/// Parses a site URL, refusing what would leak or break: credentials in the URL, a scheme other than
/// http/https, a query or fragment.
pub fn parse_site_url(site: &str, raw: &str) -> Result<Url, ConfigError> {
    let bad = |problem: &str| ConfigError::BadUrl {
        site: site.to_string(),
        url: redact_url(raw),
        problem: problem.to_string(),
    };
    let url = Url::parse(raw.trim())
        .map_err(|e| bad(&format!("{e}; write it as https://host[:port]")))?;
    if url.scheme() != "https" && url.scheme() != "http" {
        return Err(bad(
            "the scheme must be https (or http for a local simulator)",
        ));
    }
    if url.host_str().is_none() {
        return Err(bad("it has no host"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad(
            "it carries credentials; remove them from the URL and use client_id/client_secret or username/password",
        ));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(bad(
            "it has a query or fragment; give only scheme, host, port and path",
        ));
    }
    Ok(url)
}

/// Whether `url` names this machine: `localhost` or a loopback address.
pub fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// A URL fit for a message: any user info is dropped.
fn redact_url(raw: &str) -> String {
    match Url::parse(raw.trim()) {
        Ok(mut u) => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.to_string()
        }
        // An unparsable URL may still hold `user:pass@`; keep only what follows the last `@`.
        Err(_) => match raw.rfind('@') {
            Some(at) => format!("<redacted>@{}", &raw[at + 1..]),
            None => raw.to_string(),
        },
    }
}

impl FileSite {
    fn into_site(self, name: &str) -> Result<SiteConfig, ConfigError> {
        let url = match &self.url {
            Some(u) => parse_site_url(name, u)?,
            None => {
                return Err(ConfigError::MissingUrl {
                    site: name.to_string(),
                });
            }
        };
        let from_env = self.from_env.credentials;
        // The names the user wrote: `client_secret` in a file, `ZVM_CLIENT_SECRET` in the environment.
        let cred_err = |problem: &str| ConfigError::Credentials {
            site: name.to_string(),
            problem: match from_env {
                true => ["client_id", "client_secret", "username", "password"]
                    .iter()
                    .fold(problem.to_string(), |text, key| {
                        text.replace(key, &format!("ZVM_{}", key.to_ascii_uppercase()))
                    }),
                false => problem.to_string(),
            },
        };
        let client = match (self.client_id, self.client_secret) {
            (Some(id), Some(secret)) if !id.trim().is_empty() => Some(Credentials::Client {
                id: id.trim().to_string(),
                secret,
            }),
            (None, None) => None,
            (Some(_), None) => {
                return Err(cred_err(
                    "client_id is set but client_secret is not; set both",
                ));
            }
            _ => {
                return Err(cred_err(
                    "client_secret is set but client_id is not (or is empty); set both",
                ));
            }
        };
        let password = match (self.username, self.password) {
            (Some(user), Some(password)) if !user.trim().is_empty() => {
                Some(Credentials::Password {
                    username: user.trim().to_string(),
                    password,
                })
            }
            (None, None) => None,
            (Some(_), None) => {
                return Err(cred_err("username is set but password is not; set both"));
            }
            _ => {
                return Err(cred_err(
                    "password is set but username is not (or is empty); set both",
                ));
            }
        };
        let credentials = match (client, password) {
            (Some(c), None) => c,
            (None, Some(p)) => p,
            (Some(_), Some(_)) => {
                return Err(cred_err(
                    "both a client (client_id/client_secret) and a user (username/password) are set; keep one",
                ));
            }
            (None, None) => {
                return Err(cred_err(
                    "set client_id + client_secret (a Keycloak service client) or username + password",
                ));
            }
        };
        Ok(SiteConfig {
            name: name.to_string(),
            url,
            credentials,
            ca_cert: self.ca_cert,
            insecure: self.insecure.unwrap_or(false),
            from_env: self.from_env,
        })
    }
}

/// Reads the `ZVM_*` variables into the `default` site, on top of what the file said about it.
fn merge_env(
    base: Option<FileSite>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<FileSite>, ConfigError> {
    let get = |k: &str| env(k).filter(|v| !v.is_empty());
    let url = get("ZVM_URL");
    let client_id = get("ZVM_CLIENT_ID");
    let client_secret = get("ZVM_CLIENT_SECRET");
    let username = get("ZVM_USERNAME");
    let password = get("ZVM_PASSWORD");
    let ca_cert = get("ZVM_CA_CERT");
    let insecure = match get("ZVM_INSECURE").as_deref() {
        None => None,
        Some("1") | Some("true") | Some("yes") => Some(true),
        Some("0") | Some("false") | Some("no") => Some(false),
        Some(other) => {
            return Err(ConfigError::BadValue {
                key: "ZVM_INSECURE".into(),
                problem: format!("{other:?} is not 1 or 0"),
            });
        }
    };
    let any = url.is_some()
        || client_id.is_some()
        || client_secret.is_some()
        || username.is_some()
        || password.is_some()
        || ca_cert.is_some()
        || insecure.is_some();
    if !any {
        return Ok(base);
    }
    let mut site = base.unwrap_or_default();
    if url.is_some() {
        site.url = url;
        site.from_env.url = true;
    }
    // Credentials from the environment replace the file's as a pair, so a client in the file and a user
    // in the environment do not end up both set.
    if client_id.is_some() || client_secret.is_some() {
        site.client_id = client_id;
        site.client_secret = client_secret.map(Secret::new);
        site.username = None;
        site.password = None;
        site.from_env.credentials = true;
    } else if username.is_some() || password.is_some() {
        site.username = username;
        site.password = password.map(Secret::new);
        site.client_id = None;
        site.client_secret = None;
        site.from_env.credentials = true;
    }
    if let Some(ca) = ca_cert {
        site.ca_cert = Some(PathBuf::from(ca));
    }
    if insecure.is_some() {
        site.insecure = insecure;
    }
    Ok(Some(site))
}

impl Config {
    /// Loads the configuration: the TOML file `file` (or, when `None`, the default config file if it
    /// exists) merged with the `ZVM_*` environment variables. A configuration without any site loads
    /// (the catalog, the journal and the hook need none); [`Config::require_sites`] refuses it where a
    /// ZVM is needed.
    pub fn load(file: Option<&Path>) -> Result<Config, ConfigError> {
        Config::load_with_env(file, &|k| std::env::var(k).ok())
    }

    /// [`Config::load`] as both fronts call it: `zvm_url` (their `--zvm` flag), when given, stands in
    /// for `ZVM_URL`.
    pub fn load_with_zvm(
        file: Option<&Path>,
        zvm_url: Option<&str>,
    ) -> Result<Config, ConfigError> {
        Config::load_with_env(file, &|key| match (key, zvm_url) {
            ("ZVM_URL", Some(url)) => Some(url.to_string()),
            _ => std::env::var(key).ok(),
        })
    }

    /// [`Config::load`] with the environment given as a function, so that tests need not change the
    /// process environment.
    pub fn load_with_env(
        file: Option<&Path>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config, ConfigError> {
        let (parsed, looked_at) = match file {
            Some(path) => (Some(read_file(path)?), Some(path.to_path_buf())),
            None => match default_config_file() {
                Some(path) if path.exists() => (Some(read_file(&path)?), Some(path)),
                other => (None, other),
            },
        };
        let mut parsed = parsed.unwrap_or_default();
        let holds_secret = parsed
            .sites
            .values()
            .any(|s| s.client_secret.is_some() || s.password.is_some());
        let exposed_secret_mode = looked_at
            .as_deref()
            .filter(|_| holds_secret)
            .and_then(readable_by_others);
        let env_site = merge_env(parsed.sites.remove(ENV_SITE), env)?;
        if let Some(site) = env_site {
            parsed.sites.insert(ENV_SITE.to_string(), site);
        }
        let mut sites = Vec::with_capacity(parsed.sites.len());
        for (name, site) in parsed.sites {
            sites.push(site.into_site(&name)?);
        }
        let catalog_path = match parsed.catalog {
            Some(p) => p,
            None => default_catalog_path().ok_or(ConfigError::NoDirectory {
                what: "the tool catalog",
                key: "catalog",
            })?,
        };
        let journal_path = match parsed.journal {
            Some(p) => p,
            None => default_journal_path().ok_or(ConfigError::NoDirectory {
                what: "the audit journal",
                key: "journal",
            })?,
        };
        let guard = parsed.guard.unwrap_or_default().settings()?;
        let hook = parsed.hook.unwrap_or_default().settings()?;
        let recover = parsed.recover.unwrap_or_default().settings()?;
        let lookup = parsed.lookup.unwrap_or_default().settings()?;
        let mut file_http = parsed.http.unwrap_or_default();
        let http_auth = file_http
            .auth
            .take()
            .map(FileHttpAuth::settings)
            .transpose()?;
        let http = file_http.settings()?;
        let config = Config {
            sites,
            catalog_path,
            journal_path,
            guard,
            hook,
            recover,
            lookup,
            http,
            http_auth,
            file: looked_at,
            exposed_secret_mode,
        };
        config.validate()?;
        Ok(config)
    }

    /// Starts a configuration in code, for tests and the demo: no file and no environment is read.
    pub fn builder(
        catalog_path: impl Into<PathBuf>,
        journal_path: impl Into<PathBuf>,
    ) -> ConfigBuilder {
        ConfigBuilder {
            config: Config {
                sites: Vec::new(),
                catalog_path: catalog_path.into(),
                journal_path: journal_path.into(),
                guard: GuardSettings::default(),
                hook: HookSettings::default(),
                recover: RecoverSettings::default(),
                lookup: LookupSettings::default(),
                http: HttpSettings::default(),
                http_auth: None,
                file: None,
                exposed_secret_mode: None,
            },
        }
    }

    /// The warnings a front must show on every run (e.g. a site with TLS verification turned off).
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings: Vec<String> = self
            .sites
            .iter()
            .filter(|s| s.insecure)
            .map(|s| {
                format!(
                    "site {} ({}): TLS certificate verification is OFF (insecure); anyone on the path can read its credentials. Set ca_cert (ZVM_CA_CERT) to the appliance's certificate instead",
                    s.name, s.url
                )
            })
            .collect();
        if let (Some(mode), Some(file)) = (self.exposed_secret_mode, &self.file) {
            warnings.push(format!(
                "the configuration file {} holds a secret and other users may read it (mode {mode:04o}); run `chmod 600 {}`",
                file.display(),
                file.display()
            ));
        }
        warnings
    }

    /// The site configured under `name`.
    pub fn site(&self, name: &str) -> Option<&SiteConfig> {
        self.sites.iter().find(|s| s.name == name)
    }

    /// Refuses a configuration without any site, for what needs a ZVM: the error names the variables
    /// to set and the file to add a `[sites.<name>]` table to.
    pub fn require_sites(&self) -> Result<(), ConfigError> {
        if self.sites.is_empty() {
            return Err(ConfigError::NoSites {
                config_file: self.file.as_ref().map_or_else(
                    || "the configuration file".to_string(),
                    |f| f.display().to_string(),
                ),
            });
        }
        Ok(())
    }

    fn validate(&self) -> Result<(), ConfigError> {
        for (i, s) in self.sites.iter().enumerate() {
            if self.sites[..i].iter().any(|o| o.name == s.name) {
                return Err(ConfigError::BadValue {
                    key: format!("sites.{}", s.name),
                    problem: "the site name is used twice; give each site its own name".into(),
                });
            }
        }
        Ok(())
    }
}

/// The mode of the file at `path` when its group or others may read or write it.
#[cfg(unix)]
fn readable_by_others(path: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path).ok()?.permissions().mode() & 0o7777;
    (mode & 0o077 != 0).then_some(mode)
}

#[cfg(not(unix))]
fn readable_by_others(_path: &Path) -> Option<u32> {
    None
}

fn read_file(path: &Path) -> Result<FileConfig, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    crate::toml_error::parse_toml(&text).map_err(|message| ConfigError::Parse {
        path: path.to_path_buf(),
        message,
    })
}

/// Builds a [`Config`] in code.
#[derive(Debug, Clone)]
pub struct ConfigBuilder {
    config: Config,
}

impl ConfigBuilder {
    /// Adds a site.
    pub fn site(mut self, site: SiteConfig) -> Self {
        self.config.sites.push(site);
        self
    }

    /// Sets the guard's settings.
    pub fn guard(mut self, guard: GuardSettings) -> Self {
        self.config.guard = guard;
        self
    }

    /// Sets the hook's settings.
    pub fn hook(mut self, hook: HookSettings) -> Self {
        self.config.hook = hook;
        self
    }

    /// Sets how long a bounded recover waits.
    pub fn recover(mut self, recover: RecoverSettings) -> Self {
        self.config.recover = recover;
        self
    }

    /// Sets how lookups reuse what they read.
    pub fn lookup(mut self, lookup: LookupSettings) -> Self {
        self.config.lookup = lookup;
        self
    }

    /// Sets `[http.auth]`: rewind-mcp over HTTP checks bearer tokens by it.
    pub fn http_auth(mut self, auth: HttpAuth) -> Self {
        self.config.http_auth = Some(auth);
        self
    }

    /// Sets the HTTP timeouts and read retries.
    pub fn http(mut self, http: HttpSettings) -> Self {
        self.config.http = http;
        self
    }

    /// Checks and returns the configuration.
    pub fn build(self) -> Result<Config, ConfigError> {
        self.config.validate()?;
        Ok(self.config)
    }
}

impl SiteConfig {
    /// A site reached with a Keycloak service client.
    pub fn with_client(
        name: &str,
        url: &str,
        id: &str,
        secret: &str,
    ) -> Result<SiteConfig, ConfigError> {
        Ok(SiteConfig {
            name: name.to_string(),
            url: parse_site_url(name, url)?,
            credentials: Credentials::Client {
                id: id.to_string(),
                secret: Secret::new(secret),
            },
            ca_cert: None,
            insecure: false,
            from_env: FromEnv::default(),
        })
    }

    /// A site reached as a ZVM user.
    pub fn with_password(
        name: &str,
        url: &str,
        username: &str,
        password: &str,
    ) -> Result<SiteConfig, ConfigError> {
        Ok(SiteConfig {
            name: name.to_string(),
            url: parse_site_url(name, url)?,
            credentials: Credentials::Password {
                username: username.to_string(),
                password: Secret::new(password),
            },
            ca_cert: None,
            insecure: false,
            from_env: FromEnv::default(),
        })
    }
}

/// The `[<table>]` block that would configure the ZVM of `site`, with placeholders for what only the
/// user knows.
pub fn site_config_example(table: &str, site: &str) -> String {
    format!(
        "[{table}]\nurl = \"https://<the ZVM of {site}>\"\nclient_id = \"<a Keycloak client of that ZVM with the Administrator role>\"\nclient_secret = \"<its secret>\"\n# or: username = \"...\" and password = \"...\"; ca_cert = \"<its certificate>\" when it is self-signed"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    /// A configuration file readable by its owner only, as rewind asks of one holding a secret.
    fn write(dir: &tempfile::TempDir, text: &str) -> PathBuf {
        let p = dir.path().join("config.toml");
        std::fs::write(&p, text).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        p
    }

    #[cfg(unix)]
    #[test]
    fn a_file_holding_a_secret_that_others_may_read_is_warned_about_and_one_without_is_not() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let with_secret =
            "[sites.boston]\nurl = \"https://zvm\"\nusername = \"admin\"\npassword = \"pw\"\n";
        let path = write(&dir, with_secret);
        let warnings = |p: &Path| {
            Config::load_with_env(Some(p), &env_of(&[]))
                .unwrap()
                .warnings()
        };
        assert!(warnings(&path).is_empty());
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        let said = warnings(&path);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].contains("mode 0640") && said[0].contains("chmod 600"),
            "{said:?}"
        );
        assert!(!said[0].contains("pw\""), "{said:?}");
        std::fs::write(&path, "[hook]\nwindow_secs = 60\n").unwrap();
        assert!(
            warnings(&path).is_empty(),
            "no secret in it, nothing to warn about"
        );
    }

    #[test]
    fn a_value_of_the_wrong_type_names_its_key_its_line_and_the_type_expected() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            (
                "[guard]\nback_to_back_retries = 2\ndeadline_secs = \"soon\"\n",
                "`guard.deadline_secs` (line 3) is a string, but a number is expected",
            ),
            (
                "[guard]\nback_to_back_retries = -1\n",
                "`guard.back_to_back_retries` (line 2) is out of range: a whole number from 0 to 4294967295 is expected",
            ),
            (
                "[sites.boston]\nurl = \"https://zvm\"\ninsecure = \"yes\"\n",
                "`sites.boston.insecure` (line 3) is a string, but true or false is expected",
            ),
            (
                "[sites.boston]\nurl = \"https://zvm\"\npassword = 4711\n",
                "`sites.boston.password` (line 3) is a whole number, but a string is expected",
            ),
            (
                "catalog = \"c.toml\"\nguard = 5\n",
                "`guard` (line 2) is a whole number, but a table is expected",
            ),
        ];
        for (text, said) in cases {
            let p = write(&dir, text);
            let message = Config::load_with_env(Some(&p), &|_| None)
                .unwrap_err()
                .to_string();
            assert!(message.contains(said), "{text:?}: {message}");
            assert!(message.contains(&p.display().to_string()), "{message}");
            for value in ["soon", "-1", "yes", "4711"] {
                assert!(!message.contains(value), "never the value: {message}");
            }
        }
    }

    #[test]
    fn an_unknown_key_and_bad_toml_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(&dir, "[guard]\ndeadline_secs = 5\ndeadline = 6\n");
        let message = Config::load_with_env(Some(&p), &|_| None)
            .unwrap_err()
            .to_string();
        assert!(message.contains("unknown field `deadline`"), "{message}");
        assert!(message.contains("(line 3)"), "{message}");
        let p = write(&dir, "[sites.boston]\npassword = \"hunter2\n");
        let message = Config::load_with_env(Some(&p), &|_| None)
            .unwrap_err()
            .to_string();
        assert!(message.contains("line 2"), "{message}");
        assert!(!message.contains("hunter2"), "{message}");
    }

    #[test]
    fn secret_debug_and_display_are_redacted() {
        let s = Secret::new("hunter2");
        assert_eq!(format!("{s:?}"), "<redacted>");
        assert_eq!(format!("{s}"), "<redacted>");
        let c = Credentials::Client {
            id: "rewind".into(),
            secret: s.clone(),
        };
        assert!(!format!("{c:?}").contains("hunter2"));
        assert_eq!(s.expose(), "hunter2");
    }

    #[test]
    fn file_with_two_sites_and_settings_loads() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            &dir,
            r#"
catalog = "/tmp/cat.toml"
journal = "/tmp/j.jsonl"
[sites.boston]
url = "https://zvm-boston.example.com"
client_id = "rewind"
client_secret = "s3cret"
[sites.denver]
url = "https://zvm-denver.example.com"
username = "admin"
password = "pw"
insecure = true
[guard]
deadline_secs = 5
back_to_back_retries = 2
[hook]
window_secs = 60
[recover]
wait_floor_secs = 120
"#,
        );
        let c = Config::load_with_env(Some(&path), &env_of(&[])).unwrap();
        assert_eq!(c.recover.wait_floor, Duration::from_secs(120));
        assert_eq!(c.sites.len(), 2);
        let b = c.site("boston").unwrap();
        assert!(
            matches!(&b.credentials, Credentials::Client { id, secret } if id == "rewind" && secret.expose() == "s3cret")
        );
        assert!(c.site("denver").unwrap().insecure);
        assert_eq!(c.guard.deadline, Duration::from_secs(5));
        assert_eq!(c.guard.back_to_back_retries, Some(2));
        assert_eq!(c.hook.window, Duration::from_secs(60));
        assert_eq!(c.catalog_path, PathBuf::from("/tmp/cat.toml"));
        assert_eq!(c.warnings().len(), 1);
        assert!(c.warnings()[0].contains("denver"));
    }

    #[test]
    fn the_inventory_max_age_is_read_and_zero_means_every_lookup_reads() {
        let dir = tempfile::tempdir().unwrap();
        let load = |body: &str| {
            let path = write(&dir, body);
            Config::load_with_env(Some(&path), &env_of(&[]))
        };
        let default = load("").unwrap().lookup.inventory_max_age;
        assert_eq!(default, Duration::from_secs(30));
        let read = |body: &str| load(body).unwrap().lookup.inventory_max_age;
        assert_eq!(
            read("[lookup]\ninventory_max_age_secs = 5\n"),
            Duration::from_secs(5)
        );
        assert_eq!(
            read("[lookup]\ninventory_max_age_secs = 0\n"),
            Duration::ZERO
        );
        let refused = load("[lookup]\ninventory_max_age_secs = -1\n").unwrap_err();
        assert!(
            refused
                .to_string()
                .contains("lookup.inventory_max_age_secs"),
            "{refused}"
        );
    }

    #[test]
    fn environment_alone_makes_the_default_site() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            &dir,
            "catalog = \"/tmp/c.toml\"\njournal = \"/tmp/j.jsonl\"\n",
        );
        let c = Config::load_with_env(
            Some(&path),
            &env_of(&[
                ("ZVM_URL", "https://zvm.example.com"),
                ("ZVM_USERNAME", "admin"),
                ("ZVM_PASSWORD", "admin-pw"),
                ("ZVM_INSECURE", "1"),
            ]),
        )
        .unwrap();
        let s = c.site(ENV_SITE).unwrap();
        assert!(
            matches!(&s.credentials, Credentials::Password { username, .. } if username == "admin")
        );
        assert!(s.insecure);
    }

    #[test]
    fn zvm_ca_cert_pins_the_default_sites_certificate() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(&dir, "catalog = \"/c\"\njournal = \"/j\"\n");
        let c = Config::load_with_env(
            Some(&path),
            &env_of(&[
                ("ZVM_URL", "https://zvm.example.com"),
                ("ZVM_CLIENT_ID", "rewind"),
                ("ZVM_CLIENT_SECRET", "x"),
                ("ZVM_CA_CERT", "/etc/zerto/ca.pem"),
            ]),
        )
        .unwrap();
        let s = c.site(ENV_SITE).unwrap();
        assert_eq!(s.ca_cert.as_deref(), Some(Path::new("/etc/zerto/ca.pem")));
        assert!(!s.insecure);
        assert!(c.warnings().is_empty());
    }

    #[test]
    fn environment_credentials_replace_the_files_pair_for_the_default_site() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            &dir,
            "catalog = \"/c\"\njournal = \"/j\"\n[sites.default]\nurl = \"https://a.example\"\nusername = \"u\"\npassword = \"p\"\n",
        );
        let c = Config::load_with_env(
            Some(&path),
            &env_of(&[("ZVM_CLIENT_ID", "rewind"), ("ZVM_CLIENT_SECRET", "x")]),
        )
        .unwrap();
        let s = c.site(ENV_SITE).unwrap();
        assert_eq!(s.url.as_str(), "https://a.example/");
        assert!(matches!(&s.credentials, Credentials::Client { id, .. } if id == "rewind"));
    }

    #[test]
    fn a_fronts_zvm_url_stands_in_for_zvm_url_and_makes_the_default_site() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            &dir,
            "catalog = \"/c\"\njournal = \"/j\"\n[sites.default]\nusername = \"u\"\npassword = \"p\"\n",
        );
        let c = Config::load_with_zvm(Some(&path), Some("https://zvm.example.com")).unwrap();
        assert_eq!(
            c.site(ENV_SITE).unwrap().url.as_str(),
            "https://zvm.example.com/"
        );
    }

    #[test]
    fn half_a_credential_pair_is_an_error_naming_the_site_and_never_the_secret() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            &dir,
            "catalog = \"/c\"\njournal = \"/j\"\n[sites.boston]\nurl = \"https://a.example\"\nclient_secret = \"topsecret\"\n",
        );
        let err = Config::load_with_env(Some(&path), &env_of(&[])).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("boston"), "{msg}");
        assert!(msg.contains("client_id"), "{msg}");
        assert!(!msg.contains("topsecret"), "{msg}");
    }

    #[test]
    fn url_with_credentials_is_refused_without_echoing_them() {
        let err = parse_site_url("boston", "https://admin:pw123@zvm.example.com").unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("carries credentials"), "{msg}");
        assert!(!msg.contains("pw123"), "{msg}");
    }

    #[test]
    fn malformed_file_names_the_file_and_hides_the_offending_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(&dir, "[sites.boston]\nclient_secret = \"abc\nurl = 1\n");
        let err = Config::load_with_env(Some(&path), &env_of(&[])).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains(&path.display().to_string()), "{msg}");
        assert!(!msg.contains("abc"), "{msg}");
    }

    #[test]
    fn a_configuration_without_sites_loads_its_local_settings_and_require_sites_says_what_to_set() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            &dir,
            "catalog = \"/c\"\njournal = \"/j\"\n[hook]\nwindow_secs = 60\n",
        );
        let c = Config::load_with_env(Some(&path), &env_of(&[])).unwrap();
        assert!(c.sites.is_empty());
        assert_eq!(c.catalog_path, PathBuf::from("/c"));
        assert_eq!(c.hook.window, Duration::from_secs(60));
        let err = c.require_sites().unwrap_err();
        assert!(matches!(err, ConfigError::NoSites { .. }));
        let msg = err.to_string();
        assert!(msg.contains("ZVM_URL"), "{msg}");
        assert!(msg.contains(&path.display().to_string()), "{msg}");
    }

    #[test]
    fn the_recovery_wait_floor_defaults_to_ten_minutes_and_gives_way_to_a_longer_guard_deadline() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(&dir, "catalog = \"/c\"\njournal = \"/j\"\n");
        let c = Config::load_with_env(Some(&path), &env_of(&[])).unwrap();
        assert_eq!(c.recover.wait_floor, Duration::from_secs(600));
        assert_eq!(c.recover.wait(&c.guard), Duration::from_secs(600));
        let long = GuardSettings {
            deadline: Duration::from_secs(900),
            ..GuardSettings::default()
        };
        assert_eq!(c.recover.wait(&long), Duration::from_secs(900));
        let path = write(&dir, "[recover]\nwait_floor_secs = 0\n");
        let err = Config::load_with_env(Some(&path), &env_of(&[])).unwrap_err();
        assert!(err.to_string().contains("recover.wait_floor_secs"), "{err}");
        let path = write(&dir, "[recover]\nwait_secs = 5\n");
        let err = Config::load_with_env(Some(&path), &env_of(&[])).unwrap_err();
        assert!(err.to_string().contains("[recover]"), "{err}");
    }

    #[test]
    fn bad_insecure_value_and_bad_deadline_are_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            &dir,
            "catalog = \"/c\"\njournal = \"/j\"\n[guard]\ndeadline_secs = -1\n",
        );
        let err = Config::load_with_env(
            Some(&path),
            &env_of(&[
                ("ZVM_URL", "https://a.example"),
                ("ZVM_USERNAME", "u"),
                ("ZVM_PASSWORD", "p"),
            ]),
        )
        .unwrap_err();
        assert!(err.to_string().contains("guard.deadline_secs"));
        let err =
            Config::load_with_env(Some(&path), &env_of(&[("ZVM_INSECURE", "maybe")])).unwrap_err();
        assert!(err.to_string().contains("ZVM_INSECURE"));
    }

    #[test]
    fn a_team_server_needs_a_url_and_a_token_command_names_a_program() {
        let dir = tempfile::tempdir().unwrap();
        let load = |text: &str| {
            let path = dir.path().join("config.toml");
            std::fs::write(&path, text).unwrap();
            Config::load_with_env(Some(&path), &|_| None)
        };
        let team = load("[hook.team]\nurl = \"https://rewind.example.com\"\n")
            .unwrap()
            .hook
            .team
            .unwrap();
        assert_eq!(team.url.as_str(), "https://rewind.example.com/");
        assert_eq!(team.timeout, Duration::from_secs(3));
        assert_eq!(team.token_command, None);
        let err = load("[hook.team]\nurl = \"http://rewind.example.com\"\n").unwrap_err();
        assert!(err.to_string().contains("not https"), "{err}");
        assert!(load("[hook.team]\nurl = \"http://127.0.0.1:8765\"\n").is_ok());
        let err = load("[hook.team]\ntimeout_secs = 2\n").unwrap_err();
        assert!(err.to_string().contains("hook.team.url"), "{err}");
        let err =
            load("[hook.team]\nurl = \"https://r.example\"\ntoken_command = []\n").unwrap_err();
        assert!(err.to_string().contains("hook.team.token_command"), "{err}");
    }

    #[test]
    fn a_sign_in_issuer_beyond_this_machine_must_be_https_and_is_kept_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let load = |auth: &str| {
            let path = dir.path().join("config.toml");
            std::fs::write(
                &path,
                format!("[http.auth]\naudience = \"rewind-mcp\"\n{auth}"),
            )
            .unwrap();
            Config::load_with_env(Some(&path), &|_| None)
        };
        let err = load("issuer = \"http://zvm.example.com/auth/realms/zerto\"\n").unwrap_err();
        let said = err.to_string();
        assert!(
            said.contains("http.auth.issuer") && said.contains("not https"),
            "{said}"
        );
        let auth = load("issuer = \"http://127.0.0.1:9669/auth/realms/zerto/\"\n")
            .unwrap()
            .http_auth
            .unwrap();
        assert_eq!(
            auth.issuer, "http://127.0.0.1:9669/auth/realms/zerto/",
            "not trimmed"
        );
        assert_eq!(auth.jwks_max_age, Duration::from_secs(300));
        let err = load(
            "issuer = \"https://zvm.example.com/auth/realms/zerto\"\njwks_uri = \"http://keys.example.com/certs\"\n",
        )
        .unwrap_err();
        assert!(err.to_string().contains("http.auth.jwks_uri"), "{err}");
        let auth = load(
            "issuer = \"https://zvm.example.com/auth/realms/zerto\"\nca_cert = \"/etc/zerto/realm.pem\"\njwks_max_age_secs = 30\n",
        )
        .unwrap()
        .http_auth
        .unwrap();
        assert_eq!(
            auth.ca_cert.as_deref(),
            Some(Path::new("/etc/zerto/realm.pem"))
        );
        assert_eq!(auth.jwks_max_age, Duration::from_secs(30));
    }

    #[test]
    fn a_file_that_is_not_valid_is_told_every_table_the_file_takes() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(&dir, "[lookup]\ninventory_max_age = 5\n");
        let said = Config::load_with_env(Some(&path), &|_| None)
            .unwrap_err()
            .to_string();
        assert!(
            said.contains("`lookup.inventory_max_age` (line 2)"),
            "{said}"
        );
        let tables = "it takes catalog, journal, [sites.<name>], [guard], [hook], [hook.team], [recover], [lookup], [http], [http.auth], [http.auth.roles]";
        assert!(said.ends_with(tables), "{said}");
    }
}
