//! HTTPS for the simulated sites: one self-signed certificate per site, as each appliance has its
//! own, with subject alternative names for `localhost`, `127.0.0.1`, `::1` and the listen address.
//!
//! Certificates live in a folder: `<site>.pem` (the certificate, which clients pin) and
//! `<site>.key.pem` (its private key). Given a folder that already holds them, the simulator
//! serves those, so a client configuration that pins one keeps working across restarts; otherwise
//! it makes new ones and writes them there. Without a folder it uses a fresh temporary one, removed
//! when the simulator stops.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use axum_server::tls_rustls::RustlsConfig;
use rcgen::{CertificateParams, DnType, KeyPair};

/// HTTPS for a site: its certificate's PEM file, and the server configuration.
#[derive(Debug, Clone)]
pub(crate) struct SiteTls {
    pub certificate_pem: std::path::PathBuf,
    pub config: RustlsConfig,
}

/// Why HTTPS could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// The certificate folder or a file in it could not be read or written.
    #[error(
        "the TLS certificate folder {path} cannot be used: {source}. Choose another with --tls-dir."
    )]
    Io {
        /// The folder or file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A certificate could not be made.
    #[error("a self-signed certificate for site {site} could not be made: {message}")]
    Generate {
        /// The site name.
        site: String,
        /// What went wrong.
        message: String,
    },
    /// The PEM files do not make a usable server certificate.
    #[error(
        "the certificate {certificate} and key {key} do not make a TLS configuration: {source}. \
         Delete them to have new ones made."
    )]
    Config {
        /// The certificate file.
        certificate: PathBuf,
        /// The key file.
        key: PathBuf,
        /// rustls's error.
        source: std::io::Error,
    },
}

/// Where the certificates of one run live.
#[derive(Debug)]
pub(crate) struct CertificateFolder {
    path: PathBuf,
    /// A temporary folder is removed when the run ends.
    temporary: bool,
}

impl CertificateFolder {
    /// The given folder (created if missing), or a fresh temporary one.
    pub fn open(given: Option<&Path>) -> Result<Self, TlsError> {
        let (path, temporary) = match given {
            Some(path) => (path.to_owned(), false),
            None => (temporary_folder(), true),
        };
        std::fs::create_dir_all(&path).map_err(|source| TlsError::Io {
            path: path.clone(),
            source,
        })?;
        // Printed and handed to clients, so absolute: it must mean the same from anywhere.
        let path = std::fs::canonicalize(&path).unwrap_or(path);
        Ok(CertificateFolder { path, temporary })
    }

    /// The certificate of `site` listening on `addr`: the one in the folder, or a new one.
    pub async fn site(&self, site: &str, addr: SocketAddr) -> Result<SiteTls, TlsError> {
        let stem = file_stem(site);
        let certificate = self.path.join(format!("{stem}.pem"));
        let key = self.path.join(format!("{stem}.key.pem"));
        if !(certificate.is_file() && key.is_file()) {
            let (certificate_pem, key_pem) = generate(site, addr)?;
            write(&certificate, certificate_pem.as_bytes(), false)?;
            write(&key, key_pem.as_bytes(), true)?;
        }
        let config = RustlsConfig::from_pem_file(&certificate, &key)
            .await
            .map_err(|source| TlsError::Config {
                certificate: certificate.clone(),
                key: key.clone(),
                source,
            })?;
        Ok(SiteTls {
            certificate_pem: certificate,
            config,
        })
    }
}

impl Drop for CertificateFolder {
    fn drop(&mut self) {
        if self.temporary {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

fn temporary_folder() -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    std::env::temp_dir().join(format!(
        "zvm-sim-tls-{}-{}-{nanos}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ))
}

/// `Boston` → `boston`; anything but letters, digits and `-` becomes `-`.
fn file_stem(site: &str) -> String {
    site.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

/// A self-signed certificate and its key, both PEM.
fn generate(site: &str, addr: SocketAddr) -> Result<(String, String), TlsError> {
    let failed = |e: rcgen::Error| TlsError::Generate {
        site: site.to_owned(),
        message: e.to_string(),
    };
    let mut names = vec![
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
        "::1".to_owned(),
    ];
    let ip = addr.ip().to_string();
    if !addr.ip().is_unspecified() && !names.contains(&ip) {
        names.push(ip);
    }
    let mut params = CertificateParams::new(names).map_err(failed)?;
    params
        .distinguished_name
        .push(DnType::CommonName, format!("zvm-sim {site} ZVM"));
    params
        .distinguished_name
        .push(DnType::OrganizationName, "zvm-sim");
    let key = KeyPair::generate().map_err(failed)?;
    let certificate = params.self_signed(&key).map_err(failed)?;
    Ok((certificate.pem(), key.serialize_pem()))
}

fn write(path: &Path, content: &[u8], private: bool) -> Result<(), TlsError> {
    let io = |source| TlsError::Io {
        path: path.to_owned(),
        source,
    };
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    if private {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = private;
    let mut file = options.open(path).map_err(io)?;
    std::io::Write::write_all(&mut file, content).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn site_names_make_safe_file_names() {
        assert_eq!(file_stem("Boston"), "boston");
        assert_eq!(file_stem("San José/DR"), "san-jos--dr");
    }

    #[test]
    fn a_certificate_names_localhost_and_the_listen_address() {
        let addr: SocketAddr = "10.1.2.3:443".parse().unwrap();
        let (certificate, key) = generate("Boston", addr).unwrap();
        assert!(certificate.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(key.contains("PRIVATE KEY"));
    }
}
