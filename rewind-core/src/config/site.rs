//! The ZVMs rewind talks to: one [`SiteConfig`] per `[sites.<name>]` table, and the `ZVM_*`
//! environment making or completing the site `default`.

use std::path::PathBuf;

use serde::Deserialize;
use url::Url;

use super::error::ConfigError;
use crate::secret::Secret;

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
    /// A site reached with a Keycloak service client.
    pub fn with_client(name: &str, url: &str, id: &str, secret: &str) -> Result<Self, ConfigError> {
        let (id, secret) = (id.to_string(), Secret::new(secret));
        SiteConfig::new(name, url, Credentials::Client { id, secret })
    }

    /// A site reached as a ZVM user.
    pub fn with_password(
        name: &str,
        url: &str,
        username: &str,
        password: &str,
    ) -> Result<Self, ConfigError> {
        let (username, password) = (username.to_string(), Secret::new(password));
        SiteConfig::new(name, url, Credentials::Password { username, password })
    }

    fn new(name: &str, url: &str, credentials: Credentials) -> Result<Self, ConfigError> {
        Ok(SiteConfig {
            name: name.to_string(),
            url: parse_site_url(name, url)?,
            credentials,
            ca_cert: None,
            insecure: false,
            from_env: FromEnv::default(),
        })
    }

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
            true => format!("{} and {}", env_name(id), env_name(secret)),
            false => format!("{id} and {secret} in [sites.{}]", self.name),
        }
    }
}

/// The `ZVM_*` variable that stands for the site key `key`: `ZVM_CLIENT_SECRET` for `client_secret`.
pub(super) fn env_name(key: &str) -> String {
    format!("ZVM_{}", key.to_ascii_uppercase())
}

/// A `[sites.<name>]` table as written, before [`super::validate`] makes it a [`SiteConfig`].
///
/// Unlike every other section, a site cannot be read straight into its public type: the file writes
/// its credentials as two alternative pairs of keys (of which exactly one must be whole), and for the
/// site `default` the environment may give or replace any key, so a site is only complete, and can
/// only be judged, once the file and the environment have both been read.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SiteKeys {
    pub url: Option<String>,
    pub client_id: Option<String>,
    pub client_secret: Option<Secret>,
    pub username: Option<String>,
    pub password: Option<Secret>,
    pub ca_cert: Option<PathBuf>,
    pub insecure: Option<bool>,
    /// Not a key of the file: which keys the environment gave.
    #[serde(skip)]
    pub from_env: FromEnv,
}

impl SiteKeys {
    /// The `ZVM_*` variables (empty ones are unset) as the keys of the site `default`, or `None`
    /// when none is set.
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Result<Option<Self>, ConfigError> {
        let get = |k: &str| env(k).filter(|v| !v.is_empty());
        let insecure = match get("ZVM_INSECURE").as_deref() {
            None => None,
            Some("1" | "true" | "yes") => Some(true),
            Some("0" | "false" | "no") => Some(false),
            Some(other) => {
                return Err(ConfigError::BadValue {
                    key: "ZVM_INSECURE".into(),
                    problem: format!("{other:?} is not 1 or 0"),
                });
            }
        };
        let (client_id, client_secret) = (get("ZVM_CLIENT_ID"), get("ZVM_CLIENT_SECRET"));
        let (username, password) = (get("ZVM_USERNAME"), get("ZVM_PASSWORD"));
        let from_env = FromEnv {
            url: get("ZVM_URL").is_some(),
            credentials: [&client_id, &client_secret, &username, &password]
                .iter()
                .any(|v| v.is_some()),
        };
        let keys = SiteKeys {
            url: get("ZVM_URL"),
            client_id,
            client_secret: client_secret.map(Secret::new),
            username,
            password: password.map(Secret::new),
            ca_cert: get("ZVM_CA_CERT").map(PathBuf::from),
            insecure,
            from_env,
        };
        let set = from_env.url || from_env.credentials || keys.ca_cert.is_some();
        Ok((set || insecure.is_some()).then_some(keys))
    }

    /// The environment's keys (`self`) over the file's: what the environment sets replaces the file's,
    /// and credentials replace the file's as a pair, so a client in the file and a user in the
    /// environment do not end up both set.
    pub fn over(self, file: Option<SiteKeys>) -> SiteKeys {
        let mut site = file.unwrap_or_default();
        if self.from_env.url {
            site.url = self.url;
            site.from_env.url = true;
        }
        if self.client_id.is_some() || self.client_secret.is_some() {
            (site.client_id, site.client_secret) = (self.client_id, self.client_secret);
            (site.username, site.password) = (None, None);
            site.from_env.credentials = true;
        } else if self.from_env.credentials {
            (site.username, site.password) = (self.username, self.password);
            (site.client_id, site.client_secret) = (None, None);
            site.from_env.credentials = true;
        }
        site.ca_cert = self.ca_cert.or(site.ca_cert);
        site.insecure = self.insecure.or(site.insecure);
        site
    }
}

/// Parses a site URL, refusing what would leak or break: credentials in the URL, a scheme other than
/// http/https, a query or fragment.
pub fn parse_site_url(site: &str, raw: &str) -> Result<Url, ConfigError> {
    let bad = |problem: String| ConfigError::BadUrl {
        site: site.to_string(),
        url: redact_url(raw),
        problem,
    };
    let url =
        Url::parse(raw.trim()).map_err(|e| bad(format!("{e}; write it as https://host[:port]")))?;
    check_url(&url).map_err(|problem| bad(problem.to_owned()))?;
    Ok(url)
}

/// What is wrong with `url` as the address of a server: a scheme other than http/https, no host,
/// credentials, a query or a fragment.
pub(super) fn check_url(url: &Url) -> Result<(), &'static str> {
    if url.scheme() != "https" && url.scheme() != "http" {
        return Err("the scheme must be https (or http for a local simulator)");
    }
    if url.host_str().is_none() {
        return Err("it has no host");
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(
            "it carries credentials; remove them from the URL and use client_id/client_secret or username/password",
        );
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err("it has a query or fragment; give only scheme, host, port and path");
    }
    Ok(())
}

/// A URL fit for a message: any user info is dropped.
pub(super) fn redact_url(raw: &str) -> String {
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

/// The `[<table>]` block that would configure the ZVM of `site`, with placeholders for what only the
/// user knows.
pub fn site_config_example(table: &str, site: &str) -> String {
    format!(
        "[{table}]\nurl = \"https://<the ZVM of {site}>\"\nclient_id = \"<a Keycloak client of that ZVM with the Administrator role>\"\nclient_secret = \"<its secret>\"\n# or: username = \"...\" and password = \"...\"; ca_cert = \"<its certificate>\" when it is self-signed"
    )
}
