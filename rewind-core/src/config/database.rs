//! [`JournalDatabase`]: a team's journal in PostgreSQL, as `journal = "postgresql://..."` names it.
//!
//! The URL is read as libpq reads one: the user, host, port and database from the URL (the user
//! from `PGUSER` or the login name when the URL has none, the database named after the user when
//! none is given), and of the query only what a journal needs: `sslmode`, `sslrootcert`,
//! `passfile`, `connect_timeout` and `application_name`. Any other key is refused, naming it, as a
//! key the connection would silently not honour. The password is looked up when connecting
//! (`PGPASSWORD`, then the passfile), never kept in the configuration, never printed.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use url::Url;

use super::error::ConfigError;
use crate::secret::Secret;

/// How the connection uses TLS, as libpq's `sslmode` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    /// No TLS.
    Disable,
    /// TLS when the server offers it, without checking its certificate (libpq's default).
    Prefer,
    /// TLS, its certificate checked only when `sslrootcert` names the CA.
    Require,
    /// TLS, its certificate checked against `sslrootcert` (the host name too, here: rustls always
    /// checks it, so `verify-ca` is as strict as `verify-full`).
    VerifyCa,
    /// TLS, its certificate and host name checked against `sslrootcert`.
    VerifyFull,
}

/// Where a team's journal is kept in PostgreSQL. Its `Debug` and [`JournalDatabase::describe`] name
/// the host, port and database only.
#[derive(Clone, PartialEq, Eq)]
pub struct JournalDatabase {
    /// The server's host name or address.
    pub host: String,
    /// Its port.
    pub port: u16,
    /// The database.
    pub dbname: String,
    /// The user rewind connects as.
    pub user: String,
    /// A password written in the URL itself (discouraged: `PGPASSWORD` or a passfile keeps it out
    /// of the configuration).
    pub password: Option<Secret>,
    /// How TLS is used.
    pub sslmode: SslMode,
    /// The CA certificate (PEM) the server's certificate is checked against.
    pub sslrootcert: Option<PathBuf>,
    /// The passfile to read the password from, instead of `PGPASSFILE` or `~/.pgpass`.
    pub passfile: Option<PathBuf>,
    /// How long a connection may take to open.
    pub connect_timeout: Duration,
    /// The name the server shows for rewind's connections.
    pub application_name: String,
}

impl fmt::Debug for JournalDatabase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JournalDatabase({})", self.describe())
    }
}

impl JournalDatabase {
    /// The host, port and database, for messages: `db.example:5432/rewind`.
    pub fn describe(&self) -> String {
        format!("{}:{}/{}", self.host, self.port, self.dbname)
    }

    /// Reads `text`, a `postgresql://` or `postgres://` URL.
    pub fn parse(text: &str) -> Result<JournalDatabase, ConfigError> {
        let bad = |problem: String| ConfigError::BadValue {
            key: "journal".to_owned(),
            problem,
        };
        let url = Url::parse(text).map_err(|e| {
            bad(format!(
                "is not a PostgreSQL URL ({e}); write it as postgresql://USER@HOST:PORT/DATABASE"
            ))
        })?;
        let Some(host) = url.host_str().filter(|h| !h.is_empty()) else {
            return Err(bad(
                "names no host; write it as postgresql://USER@HOST:PORT/DATABASE".to_owned(),
            ));
        };
        let user = match url.username() {
            "" => std::env::var("PGUSER")
                .ok()
                .or_else(|| std::env::var("USER").ok())
                .unwrap_or_else(|| "postgres".to_owned()),
            named => decoded(named),
        };
        let dbname = match url.path().trim_start_matches('/') {
            "" => user.clone(),
            named => decoded(named),
        };
        let mut database = JournalDatabase {
            host: host.trim_matches(['[', ']']).to_owned(),
            port: url.port().unwrap_or(5432),
            dbname,
            password: url.password().map(|p| Secret::new(decoded(p))),
            user,
            sslmode: SslMode::Prefer,
            sslrootcert: None,
            passfile: None,
            connect_timeout: Duration::from_secs(5),
            application_name: "zerto-ai-rewind".to_owned(),
        };
        for (key, value) in url.query_pairs() {
            database.set(&key, &value).map_err(bad)?;
        }
        if matches!(database.sslmode, SslMode::VerifyCa | SslMode::VerifyFull)
            && database.sslrootcert.is_none()
        {
            return Err(bad(
                "says sslmode=verify-ca or verify-full without sslrootcert: add sslrootcert=PATH, the PEM file of the CA that signed the server's certificate".to_owned(),
            ));
        }
        Ok(database)
    }

    /// One key of the URL's query.
    fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        match key {
            "sslmode" => {
                self.sslmode = match value {
                    "disable" => SslMode::Disable,
                    "allow" | "prefer" => SslMode::Prefer,
                    "require" => SslMode::Require,
                    "verify-ca" => SslMode::VerifyCa,
                    "verify-full" => SslMode::VerifyFull,
                    other => {
                        return Err(format!(
                            "says sslmode={other}; use disable, prefer, require, verify-ca or verify-full"
                        ));
                    }
                }
            }
            "sslrootcert" => self.sslrootcert = Some(PathBuf::from(value)),
            "passfile" => self.passfile = Some(PathBuf::from(value)),
            "application_name" => self.application_name = value.to_owned(),
            "connect_timeout" => {
                let secs: u64 = value.parse().map_err(|_| {
                    format!("says connect_timeout={value}; give a whole number of seconds")
                })?;
                self.connect_timeout = Duration::from_secs(secs.max(1));
            }
            other => {
                return Err(format!(
                    "has the key {other:?}, which rewind does not read; it reads sslmode, sslrootcert, passfile, connect_timeout and application_name"
                ));
            }
        }
        Ok(())
    }
}

/// A URL part with its percent escapes read.
fn decoded(part: &str) -> String {
    url::form_urlencoded::parse(format!("x={part}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| part.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_gives_its_host_port_database_and_user_and_its_tls_keys() {
        let d = JournalDatabase::parse(
            "postgresql://rewind@db.example:54329/team?sslmode=verify-full&sslrootcert=/etc/ca.pem",
        )
        .unwrap();
        assert_eq!(d.describe(), "db.example:54329/team");
        assert_eq!(d.user, "rewind");
        assert_eq!(d.sslmode, SslMode::VerifyFull);
        assert_eq!(d.sslrootcert, Some(PathBuf::from("/etc/ca.pem")));
        assert!(d.password.is_none());
    }

    #[test]
    fn a_password_in_the_url_is_never_printed() {
        let d = JournalDatabase::parse("postgres://rewind:s3cr%21t@db:5432/team").unwrap();
        assert_eq!(d.password.as_ref().map(|p| p.expose()), Some("s3cr!t"));
        let shown = format!("{d:?} {}", d.describe());
        assert!(!shown.contains("s3cr"), "{shown}");
    }

    #[test]
    fn a_key_rewind_does_not_read_is_refused_naming_it() {
        let e = JournalDatabase::parse("postgresql://db/team?target_session_attrs=read-write")
            .unwrap_err()
            .to_string();
        assert!(e.contains("target_session_attrs"), "{e}");
        assert!(e.contains("journal"), "{e}");
    }

    #[test]
    fn verifying_without_a_root_certificate_is_refused_saying_what_to_add() {
        let e = JournalDatabase::parse("postgresql://db/team?sslmode=verify-full")
            .unwrap_err()
            .to_string();
        assert!(e.contains("sslrootcert"), "{e}");
    }
}
