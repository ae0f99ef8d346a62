//! `rewind trust <site>`: show the certificate a site presents and, on the human's yes (or the
//! fingerprint a script gives), keep it as the site's `ca_cert`, as ssh's known hosts do. A
//! certificate that changed after it was kept is refused unless `--replace` says it was renewed.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

use rewind_core::trust::{self, Kept, PresentedCertificate, Standing};
use rewind_core::{Config, ErrorKind};
use serde::Serialize;

use crate::exit::CliError;
use crate::output::Reply;

/// What `trust` saw and did.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Trusted {
    /// The site.
    pub site: String,
    /// Its URL.
    pub url: String,
    /// The certificate it presents.
    pub certificate: PresentedCertificate,
    /// How it stood before: already trusted, not yet, or changed.
    pub standing: Standing,
    /// Where it was kept, when it was (nothing is written for a certificate already trusted).
    pub kept: Option<Kept>,
}

/// How the human (or the script) said yes.
#[derive(Debug, Clone)]
pub struct Confirmation {
    /// `--fingerprint`: the SHA-256 the script expects.
    pub fingerprint: Option<String>,
    /// `--replace`: a kept certificate may be replaced by the one presented now.
    pub replace: bool,
    /// `--json`: never ask on the terminal.
    pub json: bool,
}

/// Runs `rewind trust <site>`.
pub async fn trust(config: &Config, site: &str, yes: Confirmation) -> Result<Reply, CliError> {
    let configured = config.site(site).ok_or_else(|| {
        let known: Vec<&str> = config.sites.iter().map(|s| s.name.as_str()).collect();
        CliError::new(
            ErrorKind::Usage,
            format!(
                "there is no site '{site}' to trust; the configured sites are: {}",
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            ),
        )
    })?;
    let presented =
        trust::presented_certificate(site, &configured.url, config.http.connect_timeout)
            .await
            .map_err(|e| {
                let kind = match e {
                    trust::TrustError::NotHttps { .. } => ErrorKind::Usage,
                    _ => ErrorKind::Connection,
                };
                CliError::new(kind, e.to_string())
            })?;
    let standing = trust::standing(configured.ca_cert.as_deref(), &presented);
    let mut result = Trusted {
        site: site.to_owned(),
        url: configured.url.to_string(),
        certificate: presented,
        standing,
        kept: None,
    };
    // A certificate already trusted is kept again only to turn verification back on.
    let nothing_to_do = matches!(
        result.standing,
        Standing::AlreadyTrusted | Standing::IssuedByKept
    ) && !configured.insecure;
    if !nothing_to_do {
        refuse_a_change(&result, &yes)?;
        confirm(&result, &yes)?;
        let file = config
            .file
            .clone()
            .or_else(rewind_core::config::default_config_file);
        let path = kept_path(file.as_deref(), site);
        let kept = trust::keep(
            site,
            &result.certificate,
            &path,
            file.as_deref().filter(|f| f.exists()),
        )
        .map_err(|e| CliError::new(ErrorKind::Internal, e.to_string()))?;
        result.kept = Some(kept);
    }
    let human = human(&result);
    Reply::new(&result, human)
}

fn kept_path(config_file: Option<&std::path::Path>, site: &str) -> PathBuf {
    match config_file {
        Some(file) => trust::kept_certificate_path(file, site),
        None => PathBuf::from("certs").join(format!("{site}.pem")),
    }
}

/// A kept certificate other than the one presented is never replaced silently.
fn refuse_a_change(result: &Trusted, yes: &Confirmation) -> Result<(), CliError> {
    let Standing::Changed { kept } = &result.standing else {
        return Ok(());
    };
    if yes.replace {
        return Ok(());
    }
    Err(CliError::new(
        ErrorKind::Refused,
        format!(
            "the certificate site {} ({}) presents has CHANGED since it was trusted: it presents SHA-256 {}, and its ca_cert holds {}; nothing was changed. If the appliance's certificate was renewed on purpose, check the new fingerprint with its administrator, then run `rewind trust {} --replace --fingerprint {}`; if not, something else may be answering at that address",
            result.site,
            result.url,
            result.certificate.sha256,
            if kept.is_empty() {
                "no readable certificate".to_owned()
            } else {
                kept.join(", ")
            },
            result.site,
            result.certificate.sha256
        ),
    ))
}

/// The fingerprint given must be the one presented; without one, a person at a terminal is asked.
fn confirm(result: &Trusted, yes: &Confirmation) -> Result<(), CliError> {
    let presented = &result.certificate.sha256;
    if let Some(given) = &yes.fingerprint {
        if trust::normalized_fingerprint(given).is_none() {
            return Err(CliError::new(
                ErrorKind::Usage,
                format!(
                    "--fingerprint {given:?} is not a SHA-256 fingerprint: give 64 hex digits, with or without colons"
                ),
            ));
        }
        if !trust::same_fingerprint(given, presented) {
            return Err(CliError::new(
                ErrorKind::Refused,
                format!(
                    "site {} presents a certificate with SHA-256 {presented}, not the {given} given; nothing was kept: check with the appliance's administrator which is right",
                    result.site
                ),
            ));
        }
        return Ok(());
    }
    let interactive =
        !yes.json && std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    if !interactive {
        return Err(CliError::new(
            ErrorKind::Usage,
            format!(
                "site {} presents a certificate for {} with SHA-256 {presented}; to trust it without a terminal, give that fingerprint after checking it with the appliance's administrator: `rewind trust {} --fingerprint {presented}`",
                result.site, result.certificate.subject, result.site
            ),
        ));
    }
    let mut err = std::io::stderr();
    let _ = write!(
        err,
        "{}\nTrust this certificate for site {}? [y/N] ",
        describe(&result.certificate),
        result.site
    );
    let _ = err.flush();
    let mut answer = String::new();
    let _ = std::io::stdin().lock().read_line(&mut answer);
    if matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
        Ok(())
    } else {
        Err(CliError::new(
            ErrorKind::Refused,
            format!(
                "the certificate of site {} was not trusted; nothing was kept",
                result.site
            ),
        ))
    }
}

/// The certificate, as a person checks it.
fn describe(c: &PresentedCertificate) -> String {
    format!(
        "subject:   {}\nissuer:    {}{}\nvalid:     {} to {}\nnames:     {}\nSHA-256:   {}",
        c.subject,
        c.issuer,
        if c.self_signed { " (self-signed)" } else { "" },
        c.not_before,
        c.not_after,
        if c.names.is_empty() {
            "(none)".to_owned()
        } else {
            c.names.join(", ")
        },
        c.sha256
    )
}

fn human(result: &Trusted) -> String {
    let mut out = format!(
        "site {} ({})\n{}\n",
        result.site,
        result.url,
        describe(&result.certificate)
    );
    match (&result.standing, &result.kept) {
        (Standing::AlreadyTrusted, _) => out
            .push_str("already trusted: its ca_cert holds this certificate; nothing was changed\n"),
        (_, Some(kept)) => {
            out.push_str(&format!("kept in {}\n", kept.certificate.display()));
            match &kept.config_file {
                Some(file) => out.push_str(&format!(
                    "[sites.{}] ca_cert in {} now names it{}\n",
                    result.site,
                    file.display(),
                    if kept.verification_turned_on { "; insecure = true was removed: certificates are verified again" } else { "" }
                )),
                None => out.push_str(&format!(
                    "site {} is not defined in a configuration file: set ZVM_CA_CERT={} where its ZVM_URL is set\n",
                    result.site,
                    kept.certificate.display()
                )),
            }
        }
        (_, None) => {}
    }
    out
}
