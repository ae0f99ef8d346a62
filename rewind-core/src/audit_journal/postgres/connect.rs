//! Connecting to the journal's database: the pool, TLS as `sslmode` and `sslrootcert` say, and the
//! password as libpq finds it (the URL, `PGPASSWORD`, then the passfile). No password is logged or
//! put in an error: tokio-postgres's errors name none, and ours name the host and database only.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

use crate::config::{JournalDatabase, SslMode};

/// How many connections one process keeps to the journal's database at most.
const POOL_SIZE: usize = 32;

/// A pool of connections to `database`; none is opened until one is asked for.
pub(super) fn pool(database: &JournalDatabase) -> Result<Pool, String> {
    let mut config = tokio_postgres::Config::new();
    config
        .host(&database.host)
        .port(database.port)
        .dbname(&database.dbname)
        .user(&database.user)
        .application_name(&database.application_name)
        .connect_timeout(database.connect_timeout)
        .keepalives(true)
        .keepalives_idle(std::time::Duration::from_secs(10));
    if let Some(password) = password(database) {
        config.password(password.expose());
    }
    let manager_config = ManagerConfig {
        recycling_method: RecyclingMethod::Fast,
    };
    let manager = match database.sslmode {
        SslMode::Disable => {
            config.ssl_mode(tokio_postgres::config::SslMode::Disable);
            Manager::from_config(config, tokio_postgres::NoTls, manager_config)
        }
        mode => {
            config.ssl_mode(match mode {
                SslMode::Prefer => tokio_postgres::config::SslMode::Prefer,
                _ => tokio_postgres::config::SslMode::Require,
            });
            let tls = tls(database.sslrootcert.as_deref())?;
            Manager::from_config(config, tls, manager_config)
        }
    };
    Pool::builder(manager)
        .max_size(POOL_SIZE)
        .runtime(deadpool_postgres::Runtime::Tokio1)
        .wait_timeout(Some(database.connect_timeout))
        .create_timeout(Some(database.connect_timeout))
        .build()
        .map_err(|e| e.to_string())
}

/// rustls, checking the server against `root` when given, else only encrypting (libpq's `prefer`
/// and `require` without a root certificate).
fn tls(root: Option<&Path>) -> Result<tokio_postgres_rustls::MakeRustlsConnect, String> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let config = match root {
        Some(path) => {
            let mut roots = rustls::RootCertStore::empty();
            let read = CertificateDer::pem_file_iter(path)
                .map_err(|e| format!("cannot read sslrootcert {}: {e}", path.display()))?;
            for cert in read {
                let cert =
                    cert.map_err(|e| format!("cannot read sslrootcert {}: {e}", path.display()))?;
                roots
                    .add(cert)
                    .map_err(|e| format!("sslrootcert {}: {e}", path.display()))?;
            }
            if roots.is_empty() {
                return Err(format!(
                    "sslrootcert {} holds no certificate",
                    path.display()
                ));
            }
            builder.with_root_certificates(roots).with_no_client_auth()
        }
        None => builder
            .dangerous()
            .with_custom_certificate_verifier(crate::trust::any_certificate(provider))
            .with_no_client_auth(),
    };
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

/// The password, as libpq looks for it: in the URL, then `PGPASSWORD`, then the passfile (the URL's
/// `passfile`, `PGPASSFILE`, or `~/.pgpass`), which is read only when no one else may read it.
fn password(database: &JournalDatabase) -> Option<crate::secret::Secret> {
    if let Some(password) = &database.password {
        return Some(password.clone());
    }
    if let Ok(password) = std::env::var("PGPASSWORD") {
        return Some(crate::secret::Secret::new(password));
    }
    let file = database
        .passfile
        .clone()
        .or_else(|| std::env::var_os("PGPASSFILE").map(PathBuf::from))
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".pgpass")))?;
    let text = private_text(&file)?;
    from_passfile(&text, database).map(crate::secret::Secret::new)
}

/// The file's text, unless others than its owner may read it (libpq ignores such a file too).
fn private_text(file: &Path) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(file).ok()?.permissions().mode();
        if mode & 0o077 != 0 {
            tracing::warn!(
                file = %file.display(),
                "the passfile is readable by others than its owner and is not read; chmod 600 it"
            );
            return None;
        }
    }
    std::fs::read_to_string(file).ok()
}

/// The password of the first line of a passfile (`host:port:database:user:password`, `*` matching
/// anything, `\:` and `\\` escaped) that matches `database`.
fn from_passfile(text: &str, database: &JournalDatabase) -> Option<String> {
    let port = database.port.to_string();
    let wanted = [
        database.host.as_str(),
        port.as_str(),
        database.dbname.as_str(),
        database.user.as_str(),
    ];
    text.lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .map(fields)
        .filter(|f| f.len() == 5)
        .find(|f| {
            f[..4]
                .iter()
                .zip(wanted)
                .all(|(field, want)| field == "*" || field == want)
        })
        .map(|f| f[4].clone())
}

/// A passfile line's fields, its escapes read.
fn fields(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let (Some(next), Some(f)) = (chars.next(), out.last_mut()) {
                    f.push(next);
                }
            }
            ':' if out.len() < 5 => out.push(String::new()),
            c => {
                if let Some(f) = out.last_mut() {
                    f.push(c);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_passfile_gives_the_first_matching_lines_password_with_wildcards_and_escapes() {
        let database = JournalDatabase::parse("postgresql://rewind@db.example:5433/team").unwrap();
        let text = "# comment\n\
                    db.example:5432:team:rewind:wrong-port\n\
                    *:5433:other:rewind:wrong-db\n\
                    db.example:*:team:rewind:pa\\:ss\\\\w\n\
                    *:*:*:*:later\n";
        assert_eq!(from_passfile(text, &database).as_deref(), Some("pa:ss\\w"));
    }

    #[test]
    fn a_passfile_with_no_matching_line_gives_no_password() {
        let database = JournalDatabase::parse("postgresql://rewind@db/team").unwrap();
        assert_eq!(from_passfile("other:5432:team:rewind:x\n", &database), None);
    }
}
