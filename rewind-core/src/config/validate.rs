//! The one pass that checks what no single key can, after the file is read and before a [`Config`]
//! exists. Serde has already refused unknown keys, values of the wrong type and durations out of
//! range; left are the rules between keys and between the file and the environment: each site's URL
//! and its one whole pair of credentials (the environment's keys over the file's for the site
//! `default`), the addresses of the team server and of the sign-in issuer, which carry a token or keys
//! and so must be https beyond this machine, and the places of the catalog and the journal.

use std::path::PathBuf;

use url::Url;

use super::database::JournalDatabase;
use super::error::ConfigError;
use super::fronts::{HttpAuth, TeamServer};
use super::loaded::Config;
use super::paths::{default_catalog_path, default_journal_path};
use super::site::{
    Credentials, ENV_SITE, SiteConfig, SiteKeys, check_url, env_name, parse_site_url, redact_url,
};
use super::written::Written;
use crate::secret::Secret;

/// The configuration `written` in the file, with the environment's site keys `env` over it.
pub(super) fn checked(mut written: Written, env: Option<SiteKeys>) -> Result<Config, ConfigError> {
    let mut sites = std::mem::take(&mut written.sites);
    if let Some(env) = env {
        let file = sites.remove(ENV_SITE);
        sites.insert(ENV_SITE.to_owned(), env.over(file));
    }
    let sites = sites
        .into_iter()
        .map(|(name, keys)| site(name, keys))
        .collect::<Result<_, _>>()?;
    if let Some(team) = &written.hook.team {
        team_server(team)?;
    }
    if let Some(auth) = &written.http.auth {
        sign_in(auth)?;
    }
    let gateway = super::gateway::settings(std::mem::take(&mut written.gateway))?;
    let no_directory = |what, key| ConfigError::NoDirectory { what, key };
    let catalog = written.catalog.or_else(default_catalog_path);
    let (journal, database) = match written.journal.map(journal_place).transpose()? {
        Some(JournalPlace::File(path)) => (Some(path), None),
        Some(JournalPlace::Database(database)) => (default_journal_path(), Some(database)),
        None => (default_journal_path(), None),
    };
    Ok(Config {
        journal_database: database,
        sites,
        guard: written.guard,
        hook: written.hook,
        recover: written.recover,
        diff: written.diff,
        lookup: written.lookup,
        http: written.http,
        gateway,
        approvals: written.approvals,
        ..Config::new(
            catalog.ok_or(no_directory("the tool catalog", "catalog"))?,
            journal.ok_or(no_directory("the audit journal", "journal"))?,
        )
    })
}

/// One site: a URL it can be reached at, and exactly one whole pair of credentials.
fn site(name: String, keys: SiteKeys) -> Result<SiteConfig, ConfigError> {
    let Some(raw) = &keys.url else {
        return Err(ConfigError::MissingUrl { site: name });
    };
    let url = parse_site_url(&name, raw)?;
    // The names the user wrote: `client_secret` in a file, `ZVM_CLIENT_SECRET` in the environment.
    let from_env = keys.from_env.credentials;
    let refused = |problem: String| ConfigError::Credentials {
        site: name.clone(),
        problem: match from_env {
            true => ["client_id", "client_secret", "username", "password"]
                .iter()
                .fold(problem, |text, key| text.replace(key, &env_name(key))),
            false => problem,
        },
    };
    let client = pair(
        keys.client_id,
        keys.client_secret,
        ["client_id", "client_secret"],
    );
    let user = pair(keys.username, keys.password, ["username", "password"]);
    let credentials = match (client.map_err(&refused)?, user.map_err(&refused)?) {
        (Some((id, secret)), None) => Credentials::Client { id, secret },
        (None, Some((username, password))) => Credentials::Password { username, password },
        (Some(_), Some(_)) => return Err(refused(
            "both a client (client_id/client_secret) and a user (username/password) are set; keep one".to_owned(),
        )),
        (None, None) => return Err(refused(
            "set client_id + client_secret (a Keycloak service client) or username + password".to_owned(),
        )),
    };
    Ok(SiteConfig {
        name,
        url,
        credentials,
        ca_cert: keys.ca_cert,
        insecure: keys.insecure.unwrap_or(false),
        from_env: keys.from_env,
    })
}

/// One pair of credential keys named `names`: whole (with a name that is not blank), absent, or
/// what is missing.
fn pair(
    id: Option<String>,
    secret: Option<Secret>,
    [id_key, secret_key]: [&str; 2],
) -> Result<Option<(String, Secret)>, String> {
    match (id, secret) {
        (Some(id), Some(secret)) if !id.trim().is_empty() => Ok(Some((id.trim().into(), secret))),
        (None, None) => Ok(None),
        (Some(_), None) => Err(format!("{id_key} is set but {secret_key} is not; set both")),
        _ => Err(format!(
            "{secret_key} is set but {id_key} is not (or is empty); set both"
        )),
    }
}

/// `[hook.team]`: an address the user's access token may be sent to, and a token command that
/// names a program.
fn team_server(team: &TeamServer) -> Result<(), ConfigError> {
    let key = "hook.team.url";
    let token = "the hook sends the user's access token to it, which must not cross the network in the clear";
    for url in &team.urls {
        server_url(key, url, "")?;
        https_or_here(key, url, token)?;
    }
    if let Some(command) = &team.token_command
        && command.first().is_none_or(|p| p.trim().is_empty())
    {
        return Err(bad(
            "hook.team.token_command",
            "it is empty: give the program and its arguments, e.g. [\"oidc-token\", \"rewind\"], or leave it out to read $REWIND_TEAM_TOKEN",
        ));
    }
    Ok(())
}

/// `[http.auth]`: an issuer and a JWKS whose signing keys cannot be swapped on the way, an audience,
/// and a resource URL clients can reach.
fn sign_in(auth: &HttpAuth) -> Result<(), ConfigError> {
    let issuer = Url::parse(&auth.issuer)
        .ok()
        .filter(|url| check_url(url).is_ok())
        .ok_or_else(|| bad("http.auth.issuer", &not_a_server(&auth.issuer, "")))?;
    let keys = "rewind-mcp reads the issuer's signing keys from it, and anyone on the path to an http issuer could replace them and sign in as anyone (give ca_cert for a realm with its own certificate)";
    https_or_here("http.auth.issuer", &issuer, keys)?;
    if let Some(jwks) = &auth.jwks_uri {
        let key = "http.auth.jwks_uri";
        server_url(
            key,
            jwks,
            "; give the issuer's JWKS URL, e.g. https://zvm.example.com/auth/realms/zerto/protocol/openid-connect/certs",
        )?;
        let keys = "the signing keys read from it must not cross the network in the clear";
        https_or_here(key, jwks, keys)?;
    }
    if auth.audience.trim().is_empty() {
        return Err(bad(
            "http.auth.audience",
            "it is required: [http.auth] takes issuer (the OpenID issuer URL, e.g. https://zvm.example.com/auth/realms/zerto) and audience (the audience its tokens name for rewind-mcp)",
        ));
    }
    if let Some(resource) = &auth.resource {
        let then = "; give the MCP endpoint's URL as clients reach it, e.g. https://rewind.example.com/mcp";
        server_url("http.auth.resource", resource, then)?;
    }
    Ok(())
}

/// Refuses `url`, the value of `key`, when a server cannot be reached at it; `then` says what to give.
fn server_url(key: &str, url: &Url, then: &str) -> Result<(), ConfigError> {
    check_url(url).map_err(|_| bad(key, &not_a_server(url.as_str(), then)))
}

/// The refusal of a URL a server cannot be reached at, without any credentials it carries.
fn not_a_server(url: &str, then: &str) -> String {
    let url = redact_url(url);
    format!("{url:?} is not an http(s) URL without credentials, query or fragment{then}")
}

/// Refuses `url`, the value of `key`, when it is http beyond this machine: `what` crosses it.
fn https_or_here(key: &str, url: &Url, what: &str) -> Result<(), ConfigError> {
    match url.scheme() == "https" || is_loopback(url) {
        true => Ok(()),
        false => Err(bad(
            key,
            &format!(
                "{:?} is not https: {what}; use https, or http for a server on this machine only",
                url.as_str()
            ),
        )),
    }
}

/// Whether `url` names this machine: `localhost` or a loopback address.
fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

fn bad(key: &str, problem: &str) -> ConfigError {
    ConfigError::BadValue {
        key: key.to_owned(),
        problem: problem.to_owned(),
    }
}

/// Where the journal key says the journal is.
enum JournalPlace {
    File(PathBuf),
    Database(JournalDatabase),
}

/// The journal key's value: a PostgreSQL URL, or a file path. A value with another URL scheme
/// (`name://`) names no file: a path like it would make a folder named after the scheme in the
/// working folder, so it is refused naming the key.
fn journal_place(value: PathBuf) -> Result<JournalPlace, ConfigError> {
    let text = value.to_string_lossy();
    let Some((scheme, _)) = text.split_once("://") else {
        return Ok(JournalPlace::File(value));
    };
    let is_scheme = !scheme.is_empty()
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    if !is_scheme {
        return Ok(JournalPlace::File(value));
    }
    match scheme.to_ascii_lowercase().as_str() {
        "postgresql" | "postgres" => Ok(JournalPlace::Database(JournalDatabase::parse(&text)?)),
        other => Err(ConfigError::BadValue {
            key: "journal".to_owned(),
            problem: format!(
                "{other}:// is a URL, and the journal is a file or a postgresql:// URL. Give the journal file's path, e.g. journal = \"/var/lib/rewind/journal.jsonl\", or a PostgreSQL URL"
            ),
        }),
    }
}
