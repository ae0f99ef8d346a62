//! Trusting an appliance's certificate, as ssh's known hosts do: read the certificate a site
//! presents (accepting it only to read it: nothing else is sent on that connection), show who it
//! names, when it is valid and its SHA-256 fingerprint, and on the human's word (or a fingerprint a
//! script gives) keep it as the site's `ca_cert`. A site whose certificate later changes is then
//! refused by every command, and `trust` refuses to replace a kept certificate unless told to.
//!
//! A ZVM appliance presents a self-signed certificate, so every public Zerto example turns
//! verification off; this is the step that makes that unnecessary.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use serde::Serialize;
use sha2::{Digest, Sha256};
use url::Url;

/// What a site presented: the first certificate of its chain, and what it says.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PresentedCertificate {
    /// Who it names (its subject, as `CN=..., O=...`).
    pub subject: String,
    /// Who signed it; the subject again for a self-signed certificate.
    pub issuer: String,
    /// Valid from (RFC 3339, UTC).
    pub not_before: String,
    /// Valid until (RFC 3339, UTC).
    pub not_after: String,
    /// The names and addresses it is valid for (its subject alternative names).
    pub names: Vec<String>,
    /// SHA-256 of its DER bytes, upper-case hex pairs joined by colons, as browsers and openssl
    /// show it.
    pub sha256: String,
    /// Whether it signs itself (an appliance's own certificate).
    pub self_signed: bool,
    /// The certificate, PEM.
    #[serde(skip)]
    pub pem: String,
}

/// Why a certificate could not be read or kept.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// The site is served over plain HTTP.
    #[error(
        "site {site} ({url}) is served over http: it presents no certificate to trust; use its https URL"
    )]
    NotHttps {
        /// The site.
        site: String,
        /// Its URL.
        url: String,
    },
    /// No TLS connection could be made.
    #[error(
        "site {site} ({url}) could not be reached over TLS: {detail}; check the URL, the network and that the appliance is up"
    )]
    Unreachable {
        /// The site.
        site: String,
        /// Its URL.
        url: String,
        /// What failed.
        detail: String,
    },
    /// The site presented no certificate, or one that cannot be read.
    #[error("site {site} ({url}) presented no certificate rewind can read: {detail}")]
    Unreadable {
        /// The site.
        site: String,
        /// Its URL.
        url: String,
        /// What failed.
        detail: String,
    },
}

/// Accepts any certificate (its handshake signature still checked), so that it can be read and
/// shown. Used for that one handshake, and for a PostgreSQL journal whose `sslmode` asks for
/// encryption without naming a CA to check the server against (libpq's `prefer` and `require`).
#[derive(Debug)]
struct ReadOnly(Arc<rustls::crypto::CryptoProvider>);

/// A verifier that accepts any certificate: see [`ReadOnly`].
pub(crate) fn any_certificate(
    provider: Arc<rustls::crypto::CryptoProvider>,
) -> Arc<dyn ServerCertVerifier> {
    Arc::new(ReadOnly(provider))
}

impl ServerCertVerifier for ReadOnly {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// Reads the certificate site `site` presents at `url`, within `timeout`. Only the TLS handshake is
/// made; no request is sent.
pub async fn presented_certificate(
    site: &str,
    url: &Url,
    timeout: Duration,
) -> Result<PresentedCertificate, TrustError> {
    let unreachable = |detail: String| TrustError::Unreachable {
        site: site.to_owned(),
        url: url.to_string(),
        detail,
    };
    if url.scheme() != "https" {
        return Err(TrustError::NotHttps {
            site: site.to_owned(),
            url: url.to_string(),
        });
    }
    let host = url.host_str().unwrap_or_default().to_owned();
    let port = url.port_or_known_default().unwrap_or(443);
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| unreachable(e.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(ReadOnly(provider)))
        .with_no_client_auth();
    let name = ServerName::try_from(host.trim_matches(['[', ']']).to_owned())
        .map_err(|e| unreachable(format!("'{host}' is not a host name: {e}")))?;
    let handshake = async {
        let tcp = tokio::net::TcpStream::connect((host.trim_matches(['[', ']']), port)).await?;
        tokio_rustls::TlsConnector::from(Arc::new(config))
            .connect(name, tcp)
            .await
    };
    let stream = tokio::time::timeout(timeout, handshake)
        .await
        .map_err(|_| unreachable(format!("no TLS handshake within {timeout:?}")))?
        .map_err(|e| unreachable(e.to_string()))?;
    let (_, connection) = stream.get_ref();
    let der = connection
        .peer_certificates()
        .and_then(|chain| chain.first())
        .ok_or_else(|| TrustError::Unreadable {
            site: site.to_owned(),
            url: url.to_string(),
            detail: "the handshake carried no certificate".to_owned(),
        })?;
    describe(der.as_ref()).map_err(|detail| TrustError::Unreadable {
        site: site.to_owned(),
        url: url.to_string(),
        detail,
    })
}

/// The certificates of a `ca_cert` file (a PEM bundle), to be the only ones an HTTP client trusts
/// for one server; the reason as a sentence when the file cannot be read or holds none.
pub fn pinned_certificates(path: &Path) -> Result<Vec<reqwest::Certificate>, String> {
    let pem = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    reqwest::Certificate::from_pem_bundle(&pem)
        .ok()
        .filter(|c| !c.is_empty())
        .ok_or_else(|| format!("{} holds no PEM certificate", path.display()))
}

/// What a DER certificate says.
pub fn describe(der: &[u8]) -> Result<PresentedCertificate, String> {
    let (_, cert) = x509_parser::parse_x509_certificate(der).map_err(|e| e.to_string())?;
    let time = |t: x509_parser::time::ASN1Time| {
        chrono::DateTime::from_timestamp(t.timestamp(), 0)
            .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
            .unwrap_or_default()
    };
    let names = cert
        .subject_alternative_name()
        .ok()
        .flatten()
        .map(|ext| {
            ext.value
                .general_names
                .iter()
                .map(|name| match name {
                    x509_parser::extensions::GeneralName::DNSName(dns) => (*dns).to_owned(),
                    x509_parser::extensions::GeneralName::IPAddress(ip) => ip_text(ip),
                    other => other.to_string(),
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(PresentedCertificate {
        subject: cert.subject().to_string(),
        issuer: cert.issuer().to_string(),
        not_before: time(cert.validity().not_before),
        not_after: time(cert.validity().not_after),
        names,
        sha256: fingerprint(der),
        self_signed: cert.subject() == cert.issuer(),
        pem: pem(der),
    })
}

fn ip_text(bytes: &[u8]) -> String {
    match bytes.len() {
        4 => std::net::Ipv4Addr::from(<[u8; 4]>::try_from(bytes).unwrap_or_default()).to_string(),
        16 => std::net::Ipv6Addr::from(<[u8; 16]>::try_from(bytes).unwrap_or_default()).to_string(),
        _ => hex::encode(bytes),
    }
}

/// `AB:CD:...`: SHA-256 of `der`.
pub fn fingerprint(der: &[u8]) -> String {
    let digest = Sha256::digest(der);
    digest
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// A fingerprint as a person or a script may write it (any case, with or without colons, with or
/// without a `SHA256:` prefix), reduced to upper-case hex: `None` when it is not 64 hex digits.
pub fn normalized_fingerprint(raw: &str) -> Option<String> {
    let raw = raw.trim();
    let raw = raw
        .strip_prefix("SHA256:")
        .or_else(|| raw.strip_prefix("sha256:"))
        .unwrap_or(raw);
    let hex: String = raw.chars().filter(|c| *c != ':').collect();
    (hex.len() == 64 && hex.chars().all(|c| c.is_ascii_hexdigit())).then(|| hex.to_uppercase())
}

/// Whether two fingerprints name the same certificate, however each is written.
pub fn same_fingerprint(a: &str, b: &str) -> bool {
    normalized_fingerprint(a).is_some_and(|a| Some(a) == normalized_fingerprint(b))
}

fn pem(der: &[u8]) -> String {
    use base64::Engine;
    let encoded = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = String::from("-----BEGIN CERTIFICATE-----\n");
    for line in encoded.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(line));
        out.push('\n');
    }
    out.push_str("-----END CERTIFICATE-----\n");
    out
}

/// The certificates in a PEM file (a `ca_cert`), in order; empty when it holds none or cannot be
/// read.
pub fn kept_certificates(path: &Path) -> Vec<PresentedCertificate> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    x509_parser::pem::Pem::iter_from_buffer(text.as_bytes())
        .filter_map(Result::ok)
        .filter_map(|pem| describe(&pem.contents).ok())
        .collect()
}

/// Where `trust` keeps the certificate of site `site`: `certs/<site>.pem` beside the configuration
/// file.
pub fn kept_certificate_path(config_file: &Path, site: &str) -> PathBuf {
    config_file
        .parent()
        .unwrap_or_else(|| Path::new("."))
        .join("certs")
        .join(format!("{site}.pem"))
}

/// How a presented certificate stands against what a site trusts now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Standing {
    /// The site's `ca_cert` holds it already.
    AlreadyTrusted,
    /// The site's `ca_cert` holds the authority that issued it (a CA bundle, not the appliance's
    /// own certificate); whether it really signed it, the TLS handshake of every request checks.
    IssuedByKept,
    /// The site trusts no certificate of its own yet (the platform's roots, or none).
    NotYetTrusted,
    /// The site's `ca_cert` holds other certificates: the appliance's changed, or something else
    /// answers at its address.
    Changed {
        /// The fingerprints `ca_cert` holds.
        kept: Vec<String>,
    },
}

/// How `presented` stands against the certificate file `ca_cert`, if the site has one.
pub fn standing(ca_cert: Option<&Path>, presented: &PresentedCertificate) -> Standing {
    let Some(path) = ca_cert else {
        return Standing::NotYetTrusted;
    };
    let kept = kept_certificates(path);
    if kept
        .iter()
        .any(|k| same_fingerprint(&k.sha256, &presented.sha256))
    {
        Standing::AlreadyTrusted
    } else if !presented.self_signed && kept.iter().any(|k| k.subject == presented.issuer) {
        Standing::IssuedByKept
    } else {
        Standing::Changed {
            kept: kept.into_iter().map(|k| k.sha256).collect(),
        }
    }
}

/// Where a kept certificate went.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Kept {
    /// The PEM file written.
    pub certificate: PathBuf,
    /// The configuration file whose `[sites.<site>]` now names it, when the site is defined
    /// there; `None` for a site made by `ZVM_*` variables (set `ZVM_CA_CERT` to `certificate`).
    pub config_file: Option<PathBuf>,
    /// Whether `insecure = true` was removed from the site (verification is on again).
    pub verification_turned_on: bool,
}

/// Why a certificate could not be kept.
#[derive(Debug, thiserror::Error)]
#[error("cannot keep the certificate of site {site}: {detail}")]
pub struct KeepError {
    /// The site.
    pub site: String,
    /// What failed, naming the file.
    pub detail: String,
}

/// Writes `presented` to `certificate` (whole, through a temporary file) and, when `config_file`
/// defines `[sites.<site>]`, sets its `ca_cert` to it and removes `insecure`, keeping the rest of
/// the file as it was (comments included).
pub fn keep(
    site: &str,
    presented: &PresentedCertificate,
    certificate: &Path,
    config_file: Option<&Path>,
) -> Result<Kept, KeepError> {
    let fail = |detail: String| KeepError {
        site: site.to_owned(),
        detail,
    };
    // Named from anywhere later: a relative --config must not leave a relative ca_cert.
    let certificate = &std::path::absolute(certificate).map_err(|e| {
        fail(format!(
            "cannot tell where {} is: {e}",
            certificate.display()
        ))
    })?;
    let folder = certificate.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(folder)
        .map_err(|e| fail(format!("cannot create {}: {e}", folder.display())))?;
    let mut file = tempfile::NamedTempFile::new_in(folder)
        .map_err(|e| fail(format!("cannot write in {}: {e}", folder.display())))?;
    std::io::Write::write_all(&mut file, presented.pem.as_bytes())
        .and_then(|()| file.as_file().sync_all())
        .map_err(|e| fail(format!("cannot write {}: {e}", certificate.display())))?;
    file.persist(certificate).map_err(|e| {
        fail(format!(
            "cannot write {}: {}",
            certificate.display(),
            e.error
        ))
    })?;
    let Some(config_file) = config_file.filter(|f| defines_site(f, site)) else {
        return Ok(Kept {
            certificate: certificate.to_path_buf(),
            config_file: None,
            verification_turned_on: false,
        });
    };
    let text = std::fs::read_to_string(config_file)
        .map_err(|e| fail(format!("cannot read {}: {e}", config_file.display())))?;
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e| fail(format!("{} is not valid TOML: {e}", config_file.display())))?;
    let table = doc["sites"][site].as_table_like_mut().ok_or_else(|| {
        fail(format!(
            "{} has no [sites.{site}] table",
            config_file.display()
        ))
    })?;
    table.insert(
        "ca_cert",
        toml_edit::value(certificate.display().to_string()),
    );
    let verification_turned_on = table.remove("insecure").is_some();
    write_whole(config_file, &doc.to_string()).map_err(fail)?;
    Ok(Kept {
        certificate: certificate.to_path_buf(),
        config_file: Some(config_file.to_path_buf()),
        verification_turned_on,
    })
}

/// Whether the TOML file defines `[sites.<site>]`.
fn defines_site(file: &Path, site: &str) -> bool {
    std::fs::read_to_string(file)
        .ok()
        .and_then(|t| t.parse::<toml_edit::DocumentMut>().ok())
        .is_some_and(|doc| doc.get("sites").and_then(|s| s.get(site)).is_some())
}

/// Replaces `file` with `text` through a temporary file beside it, keeping its permissions (a
/// configuration holding a secret stays readable by its owner only). A symbolic link is followed:
/// its target is what changes.
fn write_whole(file: &Path, text: &str) -> Result<(), String> {
    let file =
        &std::fs::canonicalize(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let folder = file.parent().unwrap_or_else(|| Path::new("."));
    let mut temp = tempfile::NamedTempFile::new_in(folder)
        .map_err(|e| format!("cannot write in {}: {e}", folder.display()))?;
    std::io::Write::write_all(&mut temp, text.as_bytes())
        .and_then(|()| temp.as_file().sync_all())
        .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    if let Ok(meta) = std::fs::metadata(file) {
        let _ = std::fs::set_permissions(temp.path(), meta.permissions());
    }
    temp.persist(file)
        .map_err(|e| format!("cannot write {}: {}", file.display(), e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fingerprint_is_the_same_however_it_is_written() {
        let colons = "AB:".repeat(31) + "AB";
        let plain = "ab".repeat(32);
        assert!(same_fingerprint(&colons, &plain));
        assert!(same_fingerprint(&format!("SHA256:{plain}"), &colons));
        assert!(!same_fingerprint(&colons, &"ac".repeat(32)));
        assert_eq!(normalized_fingerprint("abc"), None);
        assert_eq!(normalized_fingerprint(&"zz".repeat(32)), None);
    }
}
