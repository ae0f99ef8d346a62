//! `doctor`: everything a first run against an appliance needs, checked site by site, each check
//! passing, warning or failing with the exact fix: reachable; TLS trusted; the credential works and
//! which grant it used; the ZVM version; what the account may read; each VPG's protecting status and
//! whether FLR can run from a configured site; the catalog and the journal writable and safe.
//!
//! It only reads: a TLS handshake, a token, and GETs of the endpoints rewind needs. Nothing is
//! inserted, mounted or changed, at the ZVM or on disk.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::codes::Code;
use crate::config::{Config, Credentials, SiteConfig, site_config_example};
use crate::error::RewindError;
use crate::protection::not_protecting_reason;
use crate::trust::{self, Standing, TrustError};
use crate::zvm::ZvmClient;
use crate::zvm::wire::Vpg;

/// How one check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Fine.
    Pass,
    /// Works, but is worth fixing.
    Warn,
    /// Stops rewind (or part of it) from working.
    Fail,
}

/// One check.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Check {
    /// What it is about: `site <name>` or `local`.
    pub scope: String,
    /// What was checked (`reachable`, `tls`, `credential`, `version`, `permissions`, `vpgs`,
    /// `recovery sites`, `catalog`, `journal`, `configuration`, `hook`).
    pub check: String,
    /// How it came out.
    pub verdict: Verdict,
    /// What was found.
    pub detail: String,
    /// What to do, when it did not pass.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Check {
    /// A check of `scope`.
    pub fn new(scope: &str, check: &str, verdict: Verdict, detail: impl Into<String>) -> Check {
        Check {
            scope: scope.to_owned(),
            check: check.to_owned(),
            verdict,
            detail: detail.into(),
            fix: None,
        }
    }

    /// With what to do.
    pub fn fix(mut self, fix: impl Into<String>) -> Check {
        self.fix = Some(fix.into());
        self
    }
}

/// Every check, in order.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Diagnosis {
    /// The checks, site by site, then local ones.
    pub checks: Vec<Check>,
    /// How many passed, warned and failed.
    pub passed: usize,
    /// See [`Diagnosis::passed`].
    pub warned: usize,
    /// See [`Diagnosis::passed`].
    pub failed: usize,
}

impl Diagnosis {
    /// The checks, counted.
    pub fn of(checks: Vec<Check>) -> Diagnosis {
        let count = |v| checks.iter().filter(|c| c.verdict == v).count();
        Diagnosis {
            passed: count(Verdict::Pass),
            warned: count(Verdict::Warn),
            failed: count(Verdict::Fail),
            checks,
        }
    }
}

/// The endpoints rewind reads, and what for.
const READS: [(&str, &str); 4] = [
    ("/v1/vms", "find a VM and its VPGs"),
    ("/v1/vpgs", "tell which VPGs protect"),
    ("/v1/tasks", "follow Zerto's tasks"),
    (
        "/v1/virtualizationsites/{site}/vms",
        "tell an unprotected VM from a missing one",
    ),
];

/// What one site told: its identifier and its VPGs, when it answered.
struct Seen {
    site_id: Option<String>,
    vpgs: Vec<Vpg>,
}

/// Runs every check of the sites of `clients`, as `config` configures them, then the local ones:
/// [`crate::Rewind::doctor`].
pub(crate) async fn diagnose(config: &Config, clients: &[Arc<ZvmClient>]) -> Diagnosis {
    let timeout = config.http.connect_timeout;
    let per_site = futures::future::join_all(clients.iter().map(|client| async move {
        match config.site(client.name()) {
            Some(site) => site_checks(client, site, timeout).await,
            None => (
                Vec::new(),
                Seen {
                    site_id: None,
                    vpgs: Vec::new(),
                },
            ),
        }
    }))
    .await;
    let mut checks = Vec::new();
    let mut seen = Vec::new();
    for (site_checks, site_seen) in per_site {
        checks.extend(site_checks);
        seen.push(site_seen);
    }
    checks.extend(recovery_site_checks(&seen));
    checks.extend(local_checks(config));
    Diagnosis::of(checks)
}

/// The checks of one site, in the order a first run meets them; one that fails ends them.
async fn site_checks(
    client: &ZvmClient,
    site: &SiteConfig,
    timeout: Duration,
) -> (Vec<Check>, Seen) {
    let scope = format!("site {}", site.name);
    let mut checks = Vec::new();
    let mut seen = Seen {
        site_id: None,
        vpgs: Vec::new(),
    };
    let certificate = match connection_checks(&scope, site, timeout, &mut checks).await {
        Ok(certificate) => certificate,
        Err(()) => return (checks, seen),
    };
    let local = match client.read_local_site().await {
        Ok(local) => local,
        Err(e) => {
            checks.push(refusal_check(&scope, site, &e, certificate.as_ref()));
            return (checks, seen);
        }
    };
    if certificate.is_some() && site.ca_cert.is_none() && !site.insecure {
        checks.push(Check::new(
            &scope,
            "tls",
            Verdict::Pass,
            "the certificate is trusted by this machine's roots",
        ));
    }
    checks.push(Check::new(
        &scope,
        "credential",
        Verdict::Pass,
        grant_used(site),
    ));
    checks.push(version_check(
        &scope,
        local
            .display_version
            .as_deref()
            .or(local.version.as_deref()),
    ));
    seen.site_id = local.site_identifier.clone();
    checks.extend(
        permission_checks(&scope, client, seen.site_id.as_deref().unwrap_or_default()).await,
    );
    match client.vpgs().await {
        Ok(vpgs) => {
            checks.push(vpg_check(&scope, &vpgs));
            seen.vpgs = vpgs;
        }
        Err(e) => checks.push(Check::new(&scope, "vpgs", Verdict::Fail, e.to_string())),
    }
    (checks, seen)
}

/// Reachable, and the certificate trusted: `Err` when nothing more can be checked.
async fn connection_checks(
    scope: &str,
    site: &SiteConfig,
    timeout: Duration,
    checks: &mut Vec<Check>,
) -> Result<Option<trust::PresentedCertificate>, ()> {
    let presented = match trust::presented_certificate(&site.name, &site.url, timeout).await {
        Err(TrustError::NotHttps { .. }) => {
            checks.push(
                Check::new(
                    scope,
                    "tls",
                    Verdict::Warn,
                    format!(
                        "{} is plain http: its token and every answer cross the network in clear",
                        site.url
                    ),
                )
                .fix("use the appliance's https URL, then `rewind trust` its certificate"),
            );
            return Ok(None);
        }
        Err(e) => {
            checks.push(Check::new(scope, "reachable", Verdict::Fail, e.to_string()).fix(format!(
                "check url = \"{}\" in [sites.{}], the network (a firewall, a proxy) and that the appliance is up",
                site.url, site.name
            )));
            return Err(());
        }
        Ok(presented) => presented,
    };
    checks.push(Check::new(
        scope,
        "reachable",
        Verdict::Pass,
        format!("{} answers TLS", site.url),
    ));
    match tls_check(scope, site, &presented) {
        Some(check) if check.verdict == Verdict::Fail => {
            checks.push(check);
            Err(())
        }
        Some(check) => {
            checks.push(check);
            Ok(Some(presented))
        }
        None => Ok(Some(presented)),
    }
}

/// The certificate against what the site trusts; `None` when only a request can tell (the
/// platform's roots).
fn tls_check(
    scope: &str,
    site: &SiteConfig,
    presented: &trust::PresentedCertificate,
) -> Option<Check> {
    let trust_it = format!(
        "rewind trust {} --fingerprint {}",
        site.name, presented.sha256
    );
    if site.insecure {
        return Some(
            Check::new(scope, "tls", Verdict::Warn, format!("verification is OFF (insecure = true): anyone on the path can read the credentials; it presents SHA-256 {}", presented.sha256))
                .fix(format!("check that fingerprint with the appliance's administrator, then `{trust_it}`")),
        );
    }
    match trust::standing(site.ca_cert.as_deref(), presented) {
        Standing::AlreadyTrusted => Some(Check::new(scope, "tls", Verdict::Pass, format!("ca_cert holds the certificate it presents (SHA-256 {})", presented.sha256))),
        Standing::Changed { kept } => Some(
            Check::new(scope, "tls", Verdict::Fail, format!("it presents SHA-256 {}, but ca_cert holds {}: the certificate changed since it was kept", presented.sha256, kept.join(", ")))
                .fix(format!("if it was renewed on purpose (ask the appliance's administrator), `rewind trust {} --replace --fingerprint {}`", site.name, presented.sha256)),
        ),
        Standing::IssuedByKept => Some(Check::new(scope, "tls", Verdict::Pass, format!("ca_cert holds the authority that issued its certificate ({})", presented.issuer))),
        Standing::NotYetTrusted => None,
    }
}

/// What a refused first request means: an untrusted certificate, a bad credential, no answer.
fn refusal_check(
    scope: &str,
    site: &SiteConfig,
    e: &RewindError,
    presented: Option<&trust::PresentedCertificate>,
) -> Check {
    match (e, presented) {
        (RewindError::Untrusted { .. }, Some(p)) => Check::new(scope, "tls", Verdict::Fail, format!("the certificate it presents ({}, SHA-256 {}) is not trusted by this machine", p.subject, p.sha256))
            .fix(format!("check the fingerprint with the appliance's administrator, then `rewind trust {} --fingerprint {}`", site.name, p.sha256)),
        (RewindError::Auth { .. }, _) => Check::new(scope, "credential", Verdict::Fail, e.to_string()).fix(match &site.credentials {
            Credentials::Client { id, .. } => format!("check client_id = \"{id}\" and its client_secret in [sites.{}]: the client must exist in the appliance's Keycloak realm 'zerto' with service accounts enabled", site.name),
            Credentials::Password { username, .. } => format!("check username = \"{username}\" and its password in [sites.{}]", site.name),
        }),
        _ => Check::new(scope, "reachable", Verdict::Fail, e.to_string()).fix(format!("check url = \"{}\" in [sites.{}] and that it is a ZVM 10.x appliance", site.url, site.name)),
    }
}

/// Which grant the credential used, and as whom.
fn grant_used(site: &SiteConfig) -> String {
    match &site.credentials {
        Credentials::Client { id, .. } => {
            format!("a token by the client_credentials grant, as Keycloak client '{id}'")
        }
        Credentials::Password { username, .. } => {
            format!("a token by the password grant, as user '{username}' (client zerto-client)")
        }
    }
}

fn version_check(scope: &str, version: Option<&str>) -> Check {
    match version {
        Some(v) if v.trim_start().starts_with("10.") || v.trim_start().starts_with("10 ") => {
            Check::new(scope, "version", Verdict::Pass, format!("ZVM {v}"))
        }
        Some(v) => Check::new(
            scope,
            "version",
            Verdict::Warn,
            format!("ZVM {v}: rewind is made and tested for ZVM 10.x"),
        )
        .fix("expect differences; report what fails with `rewind --json` output"),
        None => Check::new(scope, "version", Verdict::Warn, "the ZVM names no version")
            .fix("check that it is a ZVM 10.x appliance"),
    }
}

/// Harmless reads of each endpoint rewind needs, and of FLR sessions.
async fn permission_checks(scope: &str, client: &ZvmClient, site_id: &str) -> Vec<Check> {
    let mut refused = Vec::new();
    for (path, why) in READS {
        let path = path.replace("{site}", site_id);
        if let Err(e) = client.can_read(&path).await {
            refused.push(
                Check::new(
                    scope,
                    "permissions",
                    Verdict::Fail,
                    format!("GET {path}, which rewind reads to {why}: {e}"),
                )
                .fix(format!(
                    "give {} a role that may read it (Administrator or Operator)",
                    client.principal()
                )),
            );
        }
    }
    if refused.is_empty() {
        refused.push(Check::new(
            scope,
            "permissions",
            Verdict::Pass,
            format!(
                "{} may read VMs, VPGs, tasks and the inventory",
                client.principal()
            ),
        ));
    }
    refused.push(flr_check(scope, client).await);
    refused
}

/// FLR sessions readable: on ZVM 10.9 the Operator role is refused FLR altogether.
async fn flr_check(scope: &str, client: &ZvmClient) -> Check {
    match client.can_read("/v1/flrs").await {
        Ok(()) => Check::new(scope, "permissions", Verdict::Pass, format!("'{}' may use file-level restore", client.principal())),
        Err(RewindError::Zvm { status: 403, message, .. }) => Check::new(scope, "permissions", Verdict::Warn, format!("the ZVM refuses FLR to '{}' (HTTP 403{}): guards work, `recover file` will not", client.principal(), if message.is_empty() { String::new() } else { format!(": {message}") }))
            .fix("ZVM 10.9 refuses FLR to the Operator role (a known RBAC defect): configure this site with a user or Keycloak client that has the Administrator role"),
        Err(e) => Check::new(scope, "permissions", Verdict::Warn, format!("FLR sessions cannot be read: {e}")),
    }
}

/// The site's VPGs: which rewind would tag, and why not the others.
fn vpg_check(scope: &str, vpgs: &[Vpg]) -> Check {
    let mut not: Vec<String> = Vec::new();
    for vpg in vpgs {
        let status = Code::vpg_status(vpg.status.unwrap_or(-1));
        let sub = Code::vpg_substatus(vpg.sub_status.unwrap_or(0));
        if let Some(reason) = not_protecting_reason(&status, &sub) {
            not.push(format!(
                "{}: {reason}",
                vpg.vpg_name.as_deref().unwrap_or("?")
            ));
        }
    }
    let tagged = vpgs.len() - not.len();
    if not.is_empty() {
        return Check::new(
            scope,
            "vpgs",
            Verdict::Pass,
            format!(
                "{} VPGs, each protecting: rewind can tag every one",
                vpgs.len()
            ),
        );
    }
    let shown: Vec<String> = not.iter().take(10).cloned().collect();
    let more = not.len().saturating_sub(shown.len());
    Check::new(scope, "vpgs", Verdict::Warn, format!(
        "{} VPGs: rewind can tag {tagged}; not {}: {}{}",
        vpgs.len(),
        not.len(),
        shown.join("; "),
        if more > 0 { format!("; and {more} more") } else { String::new() }
    ))
    .fix("a VM in only these VPGs cannot be guarded until they protect again (the sync ends, the VPG is created)")
}

/// Recovery sites no configured site answers for: FLR, failover tests and clones of their VPGs
/// cannot run. When a configured site did not answer, it cannot be told apart: nothing is said.
fn recovery_site_checks(seen: &[Seen]) -> Vec<Check> {
    if seen.iter().any(|s| s.site_id.is_none()) {
        return Vec::new();
    }
    let configured: BTreeSet<String> = seen
        .iter()
        .filter_map(|s| s.site_id.clone())
        .map(|id| id.to_lowercase())
        .collect();
    let mut missing: BTreeMap<String, (Option<String>, Vec<String>)> = BTreeMap::new();
    let mut counted = BTreeSet::new();
    for vpg in seen.iter().flat_map(|s| &s.vpgs) {
        if !vpg
            .vpg_identifier
            .clone()
            .is_some_and(|id| counted.insert(id))
        {
            continue;
        }
        let Some(recovery) = vpg
            .recovery_site
            .as_ref()
            .and_then(|l| l.identifier.clone())
        else {
            continue;
        };
        if configured.contains(&recovery.to_lowercase()) {
            continue;
        }
        let entry = missing.entry(recovery).or_default();
        entry.0 = entry.0.take().or_else(|| vpg.recovery_site_name.clone());
        entry.1.push(vpg.vpg_name.clone().unwrap_or_default());
    }
    if missing.is_empty() {
        return vec![Check::new(
            "local",
            "recovery sites",
            Verdict::Pass,
            "every VPG's recovery site is configured: FLR, failover tests and clones can run",
        )];
    }
    missing
        .into_iter()
        .map(|(id, (name, vpgs))| missing_site(&id, name.as_deref(), &vpgs))
        .collect()
}

/// The warning of one recovery site no configured site answers for, with the block to add.
fn missing_site(id: &str, name: Option<&str>, vpgs: &[String]) -> Check {
    let label = name.unwrap_or(id);
    let key = name.unwrap_or("recovery").to_lowercase().replace(' ', "-");
    // A TOML bare key takes letters, digits, `-` and `_`; anything else is quoted.
    let bare = key
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    let table = if bare {
        format!("sites.{key}")
    } else {
        format!("sites.{key:?}")
    };
    Check::new("local", "recovery sites", Verdict::Warn, format!(
        "{} VPGs recover at site {label} ({id}), which no configured site answers for: {}; their FLR, failover tests and clones cannot run",
        vpgs.len(),
        vpgs.join(", ")
    ))
    .fix(format!("add its ZVM:\n{}", site_config_example(&table, label)))
}

/// The configuration, the catalog and the journal.
fn local_checks(config: &Config) -> Vec<Check> {
    let mut checks = Vec::new();
    if let (Some(file), Some(mode)) = (&config.file, config.exposed_secret_mode) {
        checks.push(
            Check::new(
                "local",
                "configuration",
                Verdict::Fail,
                format!(
                    "{} holds a secret and other users may read it (mode {mode:o})",
                    file.display()
                ),
            )
            .fix(format!("chmod 600 {}", file.display())),
        );
    }
    checks.push(file_check(
        "catalog",
        &config.catalog_path,
        "which tools need a guard",
    ));
    checks.push(match &config.journal_database {
        Some(database) => database_check(config, database),
        None => file_check("journal", &config.journal_path, "every guard and recovery"),
    });
    checks.extend(bypass_checks(config));
    checks
}

/// Whether the journal's database answers (its schema made or brought up to date), named by its
/// host, port and database only.
fn database_check(config: &Config, database: &crate::config::JournalDatabase) -> Check {
    let journal = crate::audit_journal::AuditJournal::in_database(database, &config.journal_path);
    match journal.and_then(|j| j.reachable()) {
        Ok(()) => Check::new(
            "local",
            "journal",
            Verdict::Pass,
            format!(
                "PostgreSQL {} answers; it keeps every guard and recovery of the team",
                database.describe()
            ),
        ),
        Err(e) => Check::new("local", "journal", Verdict::Fail, e.to_string()).fix(format!(
            "check that PostgreSQL at {} is up and reachable from this machine, and the password of {} (PGPASSWORD, or a passfile readable by you only)",
            database.describe(),
            database.user
        )),
    }
}

/// With `[[gateway.upstream]]`: each MCP client configuration of this machine that reaches an
/// upstream directly, around the gateway ([`crate::bypass`]).
fn bypass_checks(config: &Config) -> Vec<Check> {
    let upstreams = &config.gateway.upstreams;
    if upstreams.is_empty() {
        return Vec::new();
    }
    let (Some(dirs), Ok(cwd)) = (directories::BaseDirs::new(), std::env::current_dir()) else {
        return Vec::new();
    };
    let files = crate::bypass::client_files(dirs.home_dir(), dirs.config_dir(), &cwd);
    let found = crate::bypass::find(upstreams, &files);
    if found.is_empty() {
        let names: Vec<&str> = upstreams.iter().map(|u| u.name.as_str()).collect();
        return vec![Check::new(
            "local",
            "gateway",
            Verdict::Pass,
            format!(
                "no MCP client configuration of this machine reaches {} around the gateway",
                names.join(", ")
            ),
        )];
    }
    found
        .into_iter()
        .map(|b| {
            Check::new(
                "local",
                "gateway",
                Verdict::Warn,
                format!(
                    "{} registers {:?}, which is the gateway's upstream {} (by {}): an agent of that client reaches it directly, and none of its calls is guarded",
                    b.file.display(),
                    b.entry,
                    b.upstream,
                    b.by
                ),
            )
            .fix(format!(
                "remove {:?} from {} and reach its tools through rewind-mcp --gateway ({}__<tool>)",
                b.entry,
                b.file.display(),
                b.upstream
            ))
        })
        .collect()
}

/// Whether rewind can write `path` (the file, or the folder it will be made in), and that no other
/// user can.
fn file_check(what: &str, path: &Path, holds: &str) -> Check {
    let shown = path.display();
    let key = if what == "catalog" {
        "catalog"
    } else {
        "journal"
    };
    if let Err(why) = writable(path) {
        return Check::new("local", what, Verdict::Fail, format!("{shown} cannot be written ({why}): rewind keeps {holds} there"))
            .fix(format!("make it writable by this user, or set {key} = \"<a writable path>\" in the configuration"));
    }
    match others_may_write(path) {
        Some(mode) => Check::new(
            "local",
            what,
            Verdict::Fail,
            format!(
                "{shown} may be written by other users (mode {mode:o}): one could change {holds}"
            ),
        )
        .fix(format!("chmod go-w {shown}")),
        None => Check::new(
            "local",
            what,
            Verdict::Pass,
            format!("{shown} is writable by this user only"),
        ),
    }
}

/// Whether the file opens for appending (nothing is written), or, when it does not exist yet, its
/// nearest existing folder lets this user create in it.
fn writable(path: &Path) -> Result<(), String> {
    if path.exists() {
        return std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map(|_| ())
            .map_err(|e| e.to_string());
    }
    let mut folder = path.parent();
    while let Some(f) = folder {
        if f.exists() {
            return if f.is_dir() && folder_writable(f) {
                Ok(())
            } else {
                Err(format!(
                    "{} is not a folder this user may create in",
                    f.display()
                ))
            };
        }
        folder = f.parent();
    }
    Err("no folder of it exists".to_owned())
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn folder_writable(folder: &Path) -> bool {
    use nix::unistd::{AccessFlags, access};
    access(folder, AccessFlags::W_OK | AccessFlags::X_OK).is_ok()
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn folder_writable(folder: &Path) -> bool {
    std::fs::metadata(folder).is_ok_and(|m| !m.permissions().readonly())
}

#[cfg(unix)]
fn others_may_write(path: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path).ok()?.permissions().mode() & 0o7777;
    (mode & 0o022 != 0).then_some(mode)
}

#[cfg(not(unix))]
fn others_may_write(_path: &Path) -> Option<u32> {
    None
}
