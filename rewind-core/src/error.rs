//! `RewindError`: every way an operation of rewind can fail, each saying what happened, naming the VM,
//! VPG, task, site or file involved, and what to do next. No variant ever holds a secret.
//!
//! [`RewindError::kind`] sorts them into the few classes the fronts map to exit codes and MCP results.

use serde::Serialize;

pub use crate::error_kind::ErrorKind;

use crate::audit_journal::JournalError;
use crate::catalog::CatalogError;
use crate::config::ConfigError;

/// One VM that a query matched, as listed when the match is ambiguous.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Candidate {
    /// The VM's identifier (`<serverGuid>.vm-<n>`).
    pub vm_id: String,
    /// The VM's name.
    pub vm_name: String,
    /// The site the VM runs at (its VPGs' protected site), or the site that lists it.
    pub site: String,
    /// The names of the VPGs that protect it (empty when none does).
    pub vpgs: Vec<String>,
}

impl std::fmt::Display for Candidate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}) at {}", self.vm_name, self.vm_id, self.site)?;
        if self.vpgs.is_empty() {
            write!(f, ", protected by no VPG")
        } else {
            write!(f, ", in VPG {}", self.vpgs.join(", "))
        }
    }
}

fn list(c: &[Candidate]) -> String {
    c.iter()
        .map(|c| format!("[{c}]"))
        .collect::<Vec<_>>()
        .join("; ")
}

fn recovered_list(files: &[String]) -> String {
    if files.is_empty() {
        String::new()
    } else {
        format!("; already recovered and kept: {}", files.join(", "))
    }
}

/// Why a recovery cannot be done as asked ([`RewindError::NotPossible`]). Each reason names the VM,
/// VPG, site, session or task involved; its `Display` says what to do next.
#[derive(Debug, thiserror::Error)]
pub enum RecoveryRefusal {
    /// The change's tag is held only in a retention set, which FLR can mount and a failover test or
    /// clone cannot.
    #[error(
        "VPG {vpg}'s journal no longer holds the tag of change {change}; only retention set {retention_set} keeps it, and only a file-level recovery can use a retention set: recover files from it (`rewind recover file`), or restore the VM from it in Zerto"
    )]
    OnlyInRetentionSet {
        /// The VPG.
        vpg: String,
        /// The change.
        change: String,
        /// The retention set.
        retention_set: String,
    },
    /// The files of a recovery's plan changed between its preview and the run.
    #[error(
        "the recovery was not run: its plan {plan} no longer holds (it is {now} now): {}; preview it again (`--dry-run`) and approve what it says now",
        .differences.join("; ")
    )]
    PlanChanged {
        /// The plan id given.
        plan: String,
        /// The plan id the files give now.
        now: String,
        /// What differs, in words.
        differences: Vec<String>,
    },
    /// A plan id no preview on this machine made.
    #[error(
        "the recovery was not run: no preview on this machine made the plan {plan}; preview it here (`--dry-run`) and give the plan id it prints"
    )]
    PlanUnknown {
        /// The plan id given.
        plan: String,
    },
    /// A diff was interrupted (Ctrl-C, SIGTERM, a cancelled MCP request) before it ended.
    #[error(
        "interrupted at {at:?} before the diff ended: nothing was compared, and its FLR session is unmounted (see below)"
    )]
    DiffInterrupted {
        /// The guest folder or file being read.
        at: String,
    },
    /// No VPG that holds the tag keeps its journal at the VM's own site.
    #[error(
        "VM {vm} cannot be restored from its tag: a journal VM restore needs a VPG whose journal is at the VM's own site ({site}), and the tag is in {}; recover files (`rewind recover file`), start a failover test or make an offsite clone instead",
        .vpgs.join(", ")
    )]
    RestoreNeedsLocalJournal {
        /// The VM.
        vm: String,
        /// Where it runs.
        site: String,
        /// Each VPG with the tag, and where its journal is.
        vpgs: Vec<String>,
    },
    /// The VPG to restore from is not protecting (a sync, initializing).
    #[error(
        "VPG {vpg} is not protecting now ({why}), so Zerto would not restore a VM from it: wait until it meets its SLA, then ask again"
    )]
    RestoreVpgNotProtecting {
        /// The VPG.
        vpg: String,
        /// Why not.
        why: String,
    },
    /// A restore of the VM this machine journaled still waits for a commit or a rollback.
    #[error(
        "a restore of VM {vm} (change {change}, task {task}) still waits for a commit or a rollback: end it first with `rewind restore commit {vm}` or `rewind restore rollback {vm}`"
    )]
    RestoreWaiting {
        /// The VM.
        vm: String,
        /// Its change.
        change: String,
        /// Its task.
        task: String,
    },
    /// No restore of the VM that this machine journaled waits.
    #[error(
        "no restore of VM {vm} that this machine's journal holds waits for a commit or a rollback: `rewind restore status` lists those that do (a restore started in the ZVM is committed or rolled back there)"
    )]
    NoRestoreWaiting {
        /// The VM.
        vm: String,
    },
    /// The journaled restore's task no longer waits (its commit policy rolled it back, or it was
    /// ended in the ZVM).
    #[error(
        "the restore of VM {vm} no longer waits: its task {task} is {state} (a restore nobody commits rolls back by itself once `[recover] restore_wait_secs` passes); nothing was sent"
    )]
    RestoreNoLongerWaiting {
        /// The VM.
        vm: String,
        /// The restore's task.
        task: String,
        /// Its state now.
        state: String,
    },
    /// The checkpoint to compare a tag with is not among the VPG's checkpoints since the tag.
    #[error(
        "VPG {vpg} lists no checkpoint {checkpoint:?} at or after the tag ({listed} listed): give `latest`, or the identifier of one of its checkpoints (GET /v1/vpgs/{{id}}/checkpoints)"
    )]
    CheckpointNotListed {
        /// The VPG.
        vpg: String,
        /// The checkpoint asked for.
        checkpoint: String,
        /// How many checkpoints the VPG listed since the tag.
        listed: usize,
    },
    /// No VPG that holds the tag can run FLR from a configured ZVM.
    #[error("FLR of VM {vm} cannot run from any VPG that holds the tag: {}", .reasons.join("; "))]
    FlrUnavailable {
        /// The VM.
        vm: String,
        /// Per VPG: `<VPG>: <why FLR cannot run there>`.
        reasons: Vec<String>,
    },
    /// The answer to the FLR mount was lost and the VM's FLR sessions could not be read to tell
    /// whether it happened.
    #[error(
        "{error}; the mount may have happened, and the VM's FLR sessions could not be read to tell ({why}): look for an FLR session of {vm} at site {site} and unmount it"
    )]
    MountUnknown {
        /// What happened to the mount's answer.
        error: Box<RewindError>,
        /// Why the sessions could not be read.
        why: String,
        /// The VM.
        vm: String,
        /// The configured site that was asked to mount.
        site: String,
    },
    /// The answer to the FLR mount was lost and more than one new session of the checkpoint
    /// appeared, so none was taken as this one's.
    #[error(
        "{error}; the mount may have happened, and {} new FLR sessions of this checkpoint appeared meanwhile ({}); look at them in the ZVM and unmount the one that is not in use",
        .sessions.len(), .sessions.join(", ")
    )]
    MountAmbiguous {
        /// What happened to the mount's answer.
        error: Box<RewindError>,
        /// The new sessions.
        sessions: Vec<String>,
    },
    /// The FLR mount failed, as the session's status says.
    #[error(
        "the FLR mount of session {session} at site {site} failed (session status {status}); look at the session in the ZVM, or try another tagged checkpoint"
    )]
    MountFailed {
        /// The FLR session.
        session: String,
        /// The configured site that runs it.
        site: String,
        /// Its `FlrSessionStatus` (`unknown` when the ZVM gave none).
        status: String,
    },
    /// The FLR session was not mounted within the recovery's wait.
    #[error(
        "the FLR session {session} at site {site} was not mounted after {waited_secs} s; try again later, or look at the ZVM's FLR sessions"
    )]
    NotMounted {
        /// The FLR session.
        session: String,
        /// The configured site that runs it.
        site: String,
        /// How long rewind waited.
        waited_secs: u64,
    },
    /// The ZVM says a guest path cannot be downloaded.
    #[error("the ZVM of site {site} says {path} cannot be downloaded: {why}")]
    NotDownloadable {
        /// The configured site.
        site: String,
        /// The guest path.
        path: String,
        /// What the ZVM said.
        why: String,
    },
    /// No failover test is running at any VPG of the change, so there is nothing to stop.
    #[error(
        "no failover test is running at {} (the VPGs of {vm} that hold the change's tag), so there is nothing to stop",
        .looked.join(", ")
    )]
    NoFailoverTest {
        /// The VM.
        vm: String,
        /// The VPGs looked at.
        looked: Vec<String>,
    },
    /// No clone is in progress at any VPG of the change, so there is nothing to abort.
    #[error(
        "no clone is in progress at {} (the VPGs of {vm} that hold the change's tag), so there is nothing to abort",
        .looked.join(", ")
    )]
    NoClone {
        /// The VM.
        vm: String,
        /// The VPGs looked at, each with its site: `<VPG> (at site <site>)`.
        looked: Vec<String>,
    },
    /// A failover test or clone operation was sent and answered with a task that could not be read.
    #[error(
        "the {operation} was sent and answered with task {task_id}, which could not be read: {error}; follow the task in the ZVM"
    )]
    TaskUnreadable {
        /// The operation, e.g. `clone start`.
        operation: &'static str,
        /// Its task.
        task_id: String,
        /// Why it could not be read.
        error: Box<RewindError>,
    },
}

/// Every way an operation of rewind can fail.
#[derive(Debug, thiserror::Error)]
pub enum RewindError {
    /// The configuration is unusable.
    #[error(transparent)]
    Config(#[from] ConfigError),

    /// An input was rejected before anything was sent.
    #[error("invalid {field}: {problem}")]
    InvalidInput {
        /// The input at fault (`agent`, `action`, `vm`, `change_id`, ...).
        field: &'static str,
        /// What is wrong with it and what to give instead.
        problem: String,
    },

    /// No VM at any configured site matches the query.
    #[error(
        "no VM named or identified {query:?} exists at {sites}{}",
        did_you_mean(.near)
    )]
    VmNotFound {
        /// The query as given.
        query: String,
        /// The configured sites that were searched.
        sites: String,
        /// The names of VMs there that are near the query (a typo away), nearest first.
        near: Vec<String>,
    },

    /// The VM exists but no VPG protects it, so it cannot be guarded.
    #[error(
        "VM {} ({}) exists at {} but no VPG protects it, so no tagged checkpoint can be taken; protect it in Zerto first, or go ahead knowing that Zerto cannot rewind this change",
        .vm.vm_name, .vm.vm_id, .vm.site
    )]
    VmNotProtected {
        /// The query as given.
        query: String,
        /// The VM that was found.
        vm: Candidate,
    },

    /// The query matches more than one VM; nothing was done.
    #[error(
        "{query:?} matches {} VMs, so nothing was done: {}; repeat with the vmIdentifier of the one you mean",
        .candidates.len(), list(.candidates)
    )]
    AmbiguousVm {
        /// The query as given.
        query: String,
        /// Every VM it matched.
        candidates: Vec<Candidate>,
    },

    /// The ZVM of a site cannot be reached: what the connection met, in plain words, with the URL
    /// actually asked.
    #[error("{}", unreachable_said(.site, .url, .request, *.cause, .detail, .url_setting))]
    Unreachable {
        /// The configured site.
        site: String,
        /// The URL asked (the token endpoint's while signing in).
        url: String,
        /// What was being done.
        request: String,
        /// What the connection met.
        cause: Unreached,
        /// What the network library said (no secret).
        detail: String,
        /// Where the site's URL is set: `[sites.<name>] url`, or `ZVM_URL`.
        url_setting: String,
    },

    /// The site's URL leads to a server whose token endpoint is not Keycloak's: a URL with a path
    /// (`.../v1`), or not the appliance.
    #[error(
        "{url} answered HTTP {status}: it is not a Keycloak token endpoint, so site {site} cannot sign in; is {url_setting} the appliance's base URL (https://host[:port], no path)?"
    )]
    NotTokenEndpoint {
        /// The configured site.
        site: String,
        /// The token URL asked.
        url: String,
        /// What it answered.
        status: u16,
        /// Where the site's URL is set.
        url_setting: String,
    },

    /// Some of the sites asked could not answer, and the VM could not be told apart without them:
    /// nothing was done. The message names each site with what it met, what the others found, and
    /// the ways on (the VM's identifier, or `--site` with the sites that answered).
    #[error("{}", sites_down_said(.query, .down, .answered, .found))]
    SitesDown {
        /// The query as given.
        query: String,
        /// Each site that could not answer, with its error.
        down: Vec<SiteDown>,
        /// The configured sites that answered.
        answered: Vec<String>,
        /// The VMs the sites that answered know by the query.
        found: Vec<Candidate>,
    },

    /// The ZVM of a site presented a TLS certificate that rewind does not trust; nothing was sent.
    #[error(
        "the ZVM of site {site} ({url}) presented a certificate rewind does not trust ({detail}); nothing was sent: run `rewind trust {site}` to see it and keep it as ca_cert, or set ca_cert in [sites.{site}] to its CA (ZVM_CA_CERT for the site named default)"
    )]
    Untrusted {
        /// The configured site.
        site: String,
        /// Its URL.
        url: String,
        /// What the TLS library said.
        detail: String,
    },

    /// The ZVM of a site would not authenticate rewind.
    #[error(
        "site {site} ({url}) did not authenticate rewind: {detail}; check {credentials_setting}"
    )]
    Auth {
        /// The configured site.
        site: String,
        /// Its URL.
        url: String,
        /// What Keycloak or the ZVM said (never the secret).
        detail: String,
        /// Where the credentials are set: `client_id and client_secret in [sites.<name>]`, or
        /// `ZVM_CLIENT_ID and ZVM_CLIENT_SECRET`.
        credentials_setting: String,
    },

    /// A ZVM answered a request with an error status.
    #[error(
        "the ZVM of site {site} answered {request} with HTTP {status}: {}",
        zvm_said(.message, .advice)
    )]
    Zvm {
        /// The configured site.
        site: String,
        /// What was asked, e.g. `POST /v1/vpgs/<id>/checkpoints`.
        request: String,
        /// The HTTP status.
        status: u16,
        /// What the ZVM said, in its own words (empty when it said nothing).
        message: String,
        /// What to do next for this status (empty when rewind has no advice for it).
        advice: String,
    },

    /// A ZVM answered with something rewind cannot read.
    #[error(
        "the ZVM of site {site} answered {request} with something unexpected: {detail}; is this a ZVM 10.x appliance?"
    )]
    UnexpectedResponse {
        /// The configured site.
        site: String,
        /// What was asked.
        request: String,
        /// What was wrong with the answer.
        detail: String,
    },

    /// A Zerto task ended Failed or Stopped.
    #[error(
        "Zerto task {task_id} ({task_type}) at site {site} ended {state}: {reason}; the operation did not happen"
    )]
    TaskFailed {
        /// The configured site that runs the task.
        site: String,
        /// The task.
        task_id: String,
        /// Its type.
        task_type: String,
        /// Its terminal state, e.g. `Failed (4)`.
        state: String,
        /// Its `CompleteReason`.
        reason: String,
    },

    /// A task was still running when the deadline came; it was not dropped.
    #[error(
        "Zerto task {task_id} at site {site} is still running after {waited_secs:.0} s; it was not stopped and has not failed: follow it in the ZVM or ask again later"
    )]
    StillRunning {
        /// The configured site that runs the task.
        site: String,
        /// The task.
        task_id: String,
        /// How long rewind waited.
        waited_secs: f64,
    },

    /// The deadline came before any Zerto task was started, so nothing was left running.
    #[error(
        "the deadline of {waited_secs:.1} s came while {what}; nothing was left running: give it more time (guard.deadline_secs) or check the ZVMs' response times"
    )]
    Deadline {
        /// What was being done.
        what: String,
        /// The deadline.
        waited_secs: f64,
    },

    /// The change id was used within the horizon for another change (another agent, action or
    /// person), or its change was recovered: a guard under it would tie a new change to old tags.
    /// Nothing was sent.
    #[error(
        "change id {change_id:?} is taken: {earlier}; a change id ties one change's tags together, so choose a new one for this change (e.g. {change_id}-2)"
    )]
    ChangeIdTaken {
        /// The change id asked for.
        change_id: String,
        /// The earlier use, in words: when, by whom, for what, on which VM.
        earlier: String,
    },

    /// A site name that is not configured.
    #[error(
        "no site named {name:?} is configured (configured: {configured}); use one of those names"
    )]
    UnknownSite {
        /// The name asked for.
        name: String,
        /// The configured names.
        configured: String,
    },

    /// Guards pinned tags of the change, but none can be recovered from any more: each VPG's says
    /// what became of it, with what is left to recover from.
    #[error(
        "no tag of change {change:?} on VM {vm} can be recovered from any more: {states}; {alternatives}"
    )]
    TagNotRecoverable {
        /// The VM.
        vm: String,
        /// The change id or tag asked for.
        change: String,
        /// What became of each VPG's tag.
        states: String,
        /// What is left: the earliest checkpoint of each VPG, and how to keep a tag longer.
        alternatives: String,
    },

    /// No VPG of the VM holds a tagged checkpoint of the change (or with that exact tag).
    #[error(
        "no VPG of VM {vm} holds a tagged checkpoint of change {change:?} (as change id or exact tag); tagged checkpoints found: {found}; give a change id or tag from that list, or check that the guard of this change was `guarded`"
    )]
    NoTaggedCheckpoint {
        /// The VM.
        vm: String,
        /// The change id or tag asked for.
        change: String,
        /// What was found instead, per VPG.
        found: String,
    },

    /// The change's tagged checkpoints are only in VPGs whose recovery site's ZVM is not configured, so
    /// the recovery (which runs there) was refused before anything was sent. The message names the
    /// table to add; [`RewindError::hint`] holds the whole block.
    #[error(
        "FLR of VM {vm} for change {change} runs at the recovery site of {vpgs}, and the ZVM of {site} is not configured, so nothing was sent; add a [{table}] table with its url and credentials to the configuration"
    )]
    RecoverySiteNotConfigured {
        /// The VM.
        vm: String,
        /// The change id.
        change: String,
        /// The VPGs that hold the tag, with their recovery sites.
        vpgs: String,
        /// The recovery site to configure.
        site: String,
        /// The table to add, e.g. `sites.denver`; [`RewindError::hint`] gives the whole block.
        table: String,
    },

    /// The ZVM refused FLR to the configured user or client (HTTP 403).
    #[error(
        "the ZVM of site {site} (version {version}) refused FLR to {principal:?} with HTTP 403, saying {}; ZVM 10.9 has a known RBAC defect that refuses FLR to the Operator role, and the documented workaround is to configure [sites.{site}] with a user or Keycloak client that has the Administrator role",
        quoted_or_nothing(.message)
    )]
    FlrForbidden {
        /// The configured site.
        site: String,
        /// Who rewind acts as there (never a secret).
        principal: String,
        /// The ZVM's version, when known.
        version: String,
        /// What the ZVM said, in its own words.
        message: String,
    },

    /// A guest path does not exist at the checkpoint.
    #[error(
        "{path} does not exist in VM {vm} at {at}; the nearest existing folder, {folder}, holds: {holds}; give a path from there (partition-rooted, `/`-separated)"
    )]
    GuestPathNotFound {
        /// The guest path asked for.
        path: String,
        /// The VM.
        vm: String,
        /// The checkpoint and VPG mounted: `checkpoint 123 of VPG web-local`.
        at: String,
        /// The nearest existing folder (`(partitions)` for the root).
        folder: String,
        /// What it holds.
        holds: String,
    },

    /// A guest path or a local path was refused: it would leave the destination folder, overwrite a
    /// file, or follow a symbolic link.
    #[error("refused {path}: {problem}")]
    UnsafePath {
        /// The path (guest or local).
        path: String,
        /// What is wrong and what to do.
        problem: String,
    },

    /// A local file or folder could not be read or written.
    #[error("cannot {action} {path}: {source}")]
    LocalFile {
        /// What was being done.
        action: &'static str,
        /// The path.
        path: std::path::PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },

    /// The recovery cannot be done as asked: nothing is running to stop or abort, FLR is not enabled
    /// where it would run, the mount failed.
    #[error("{reason}")]
    NotPossible {
        /// What is not possible, why, and what to do.
        reason: RecoveryRefusal,
    },

    /// An FLR failed after its mount was asked for; the session was then unmounted, or the unmount
    /// failed as well. The first error comes first; what happened to the session follows.
    #[error("{error}; {cleanup}{}", recovered_list(.recovered))]
    FlrAborted {
        /// The error that ended the FLR.
        error: Box<RewindError>,
        /// The FLR session, when one was created.
        session_id: Option<String>,
        /// The configured site that ran it.
        site: String,
        /// What happened to the session: unmounted, or why it could not be.
        cleanup: String,
        /// Whether the session is known to be unmounted.
        unmounted: bool,
        /// Files already written into the destination before the error (they are kept).
        recovered: Vec<String>,
    },

    /// The tool catalog cannot be read or written, or refused the change asked of it.
    #[error(transparent)]
    Catalog(#[from] CatalogError),

    /// The audit journal cannot be read or written.
    #[error(transparent)]
    Journal(#[from] JournalError),

    /// A guard did not start: its intent could not be written to the audit journal, and every insert
    /// must be accounted for there before it is sent.
    #[error(
        "nothing was inserted: {source}. A guard writes its intent to the audit journal before its first insert, so that every insert is accounted for even if the process dies; make the journal writable, then guard again"
    )]
    NotJournaled {
        /// Why the intent could not be written.
        #[source]
        source: JournalError,
    },
}

impl RewindError {
    /// The class of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            RewindError::Config(_)
            | RewindError::ChangeIdTaken { .. }
            | RewindError::InvalidInput { .. }
            | RewindError::UnknownSite { .. } => ErrorKind::Usage,
            RewindError::VmNotFound { .. }
            | RewindError::VmNotProtected { .. }
            | RewindError::AmbiguousVm { .. } => ErrorKind::Refused,
            RewindError::Zvm { status, .. } if *status >= 500 => ErrorKind::Connection,
            RewindError::Zvm { .. } => ErrorKind::Refused,
            RewindError::Unreachable { .. }
            | RewindError::SitesDown { .. }
            | RewindError::NotTokenEndpoint { .. }
            | RewindError::Untrusted { .. }
            | RewindError::Auth { .. }
            | RewindError::Deadline { .. } => ErrorKind::Connection,
            RewindError::TaskFailed { .. } => ErrorKind::TaskFailed,
            RewindError::StillRunning { .. } => ErrorKind::StillRunning,
            RewindError::UnexpectedResponse { .. } => ErrorKind::Internal,
            RewindError::Catalog(e) => e.kind(),
            RewindError::Journal(_) | RewindError::NotJournaled { .. } => ErrorKind::Internal,
            RewindError::NoTaggedCheckpoint { .. }
            | RewindError::TagNotRecoverable { .. }
            | RewindError::RecoverySiteNotConfigured { .. }
            | RewindError::FlrForbidden { .. }
            | RewindError::NotPossible { .. } => ErrorKind::Refused,
            RewindError::GuestPathNotFound { .. } | RewindError::UnsafePath { .. } => {
                ErrorKind::Usage
            }
            RewindError::LocalFile { .. } => ErrorKind::Internal,
            RewindError::FlrAborted { error, .. } => error.kind(),
        }
    }

    /// What a site met, in a few words, for a message that names several sites: "nothing listens
    /// at URL", "its certificate is not trusted".
    pub fn in_brief(&self) -> String {
        match self {
            RewindError::Unreachable { cause, url, .. } => {
                // Where the connection went, not the path asked: that is what several VPGs share.
                let url = url::Url::parse(url)
                    .map(|u| u.origin().ascii_serialization())
                    .unwrap_or_else(|_| url.clone());
                brief_unreached(*cause, &url)
            }

            RewindError::Untrusted { site, .. } => {
                format!("its certificate is not trusted: `rewind trust {site}`")
            }
            RewindError::Auth { .. } => "it did not authenticate rewind".to_owned(),
            RewindError::NotTokenEndpoint { url, .. } => format!("{url} is no token endpoint"),
            RewindError::Zvm { status, .. } => format!("it answered HTTP {status}"),
            RewindError::Deadline { .. } => "it did not answer before the deadline".to_owned(),
            other => {
                let said = other.to_string();
                match said.char_indices().nth(100) {
                    Some((at, _)) => format!("{}...", &said[..at]),
                    None => said,
                }
            }
        }
    }

    /// The error that started it all: the first error of an [`RewindError::FlrAborted`], else itself.
    pub fn root(&self) -> &RewindError {
        match self {
            RewindError::FlrAborted { error, .. } => error.root(),
            other => other,
        }
    }

    /// The VMs an ambiguous query matched (empty for other errors).
    pub fn candidates(&self) -> &[Candidate] {
        match self.root() {
            RewindError::AmbiguousVm { candidates, .. } => candidates,
            _ => &[],
        }
    }

    /// What to do, when it takes more than the message's one line: the `[sites.<name>]` block of
    /// TOML that a refused recovery needs. `None` for most errors.
    pub fn hint(&self) -> Option<String> {
        match self.root() {
            RewindError::RecoverySiteNotConfigured { table, site, .. } => {
                Some(crate::config::site_config_example(table, site))
            }
            _ => None,
        }
    }

    /// A serializable form for `--json` and MCP structured results.
    pub fn report(&self) -> ErrorReport {
        let mut report = ErrorReport::new(self.kind(), self.to_string());
        report.candidates = self.candidates().to_vec();
        report.hint = self.hint();
        report
    }
}

/// A site that could not answer a lookup, and why.
#[derive(Debug)]
pub struct SiteDown {
    /// The configured site.
    pub site: String,
    /// What it met.
    pub error: Box<RewindError>,
}

/// [`RewindError::SitesDown`] in words, on one line.
fn sites_down_said(
    query: &str,
    down: &[SiteDown],
    answered: &[String],
    found: &[Candidate],
) -> String {
    let names: Vec<&str> = down.iter().map(|d| d.site.as_str()).collect();
    let why: Vec<String> = down
        .iter()
        .map(|d| format!("{} ({})", d.site, d.error.in_brief()))
        .collect();
    let head = match down.len() {
        1 => format!("site {} cannot be asked", why[0]),
        _ => format!("sites {} cannot be asked", why.join(", ")),
    };
    let them = names.join(", ");
    let here = answered.join(" and ");
    let only = answered
        .iter()
        .map(|s| format!("--site {s}"))
        .collect::<Vec<_>>()
        .join(" ");
    match found {
        [one] => format!(
            "{head}; {query:?} is {} ({}) at {}: to go on without {them}, repeat with its identifier {} or with {only}",
            one.vm_name, one.vm_id, one.site, one.vm_id
        ),
        _ => format!(
            "{head}; {here} knows no VM {query:?}: repeat when {them} answers, or with {only} to look there alone"
        ),
    }
}

/// The end of [`RewindError::VmNotFound`]'s message: the names near the query, or what to check.
fn did_you_mean(near: &[String]) -> String {
    match near {
        [] => "; check the spelling, or give the vmIdentifier, or configure the site that runs it"
            .to_owned(),
        [one] => format!("; did you mean {one}?"),
        many => format!("; did you mean one of {}?", many.join(", ")),
    }
}

/// What a connection to a ZVM met instead of an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unreached {
    /// Nothing listens at that address and port: the connection was refused.
    Refused,
    /// The host name does not resolve.
    NoSuchHost,
    /// The URL says https, and the server there speaks plain HTTP.
    PlainHttp,
    /// No connection within `[http] connect_timeout_secs`.
    ConnectTimeout,
    /// Connected, and no answer came (a timeout or a reset): the request may have been read.
    NoAnswer,
    /// Another network failure, said in the library's words.
    Other,
}

/// What a connection to `origin` met, in a few words.
fn brief_unreached(cause: Unreached, origin: &str) -> String {
    match cause {
        Unreached::Refused => format!("nothing listens at {origin}"),
        Unreached::NoSuchHost => format!("no such host {origin}"),
        Unreached::PlainHttp => format!("{origin} speaks plain HTTP"),
        Unreached::ConnectTimeout => format!("no connection to {origin} in time"),
        Unreached::NoAnswer => format!("{origin} did not answer"),
        Unreached::Other => format!("{origin} cannot be reached"),
    }
}

/// [`RewindError::Unreachable`] in words: what was met, at which URL, and the next step.
fn unreachable_said(
    site: &str,
    url: &str,
    request: &str,
    cause: Unreached,
    detail: &str,
    url_setting: &str,
) -> String {
    let host = url::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_else(|| url.to_owned());
    match cause {
        Unreached::Refused => format!(
            "nothing listens at {url} (site {site}): the appliance is down or the port is wrong; check {url_setting}, or leave the site out with --site"
        ),
        Unreached::NoSuchHost => {
            format!("no such host {host} (site {site}, {url}); check the spelling of {url_setting}")
        }
        Unreached::PlainHttp => format!(
            "{url} (site {site}) speaks plain HTTP, not HTTPS; use http:// in {url_setting}, or the appliance's HTTPS port"
        ),
        Unreached::ConnectTimeout => format!(
            "no connection to {url} (site {site}) within the connect timeout: the appliance is down or a firewall drops the traffic; check it from this machine, or leave the site out with --site"
        ),
        Unreached::NoAnswer => {
            format!("the ZVM of site {site} did not answer {request} ({detail})")
        }
        Unreached::Other => format!(
            "the ZVM of site {site} cannot be reached at {url} ({detail}); check {url_setting}, the network and that the appliance is up"
        ),
    }
}

/// What a ZVM said with an error status, and rewind's advice after it in brackets.
fn zvm_said(message: &str, advice: &str) -> String {
    match (message.is_empty(), advice.is_empty()) {
        (true, true) => "no message".into(),
        (true, false) => advice.into(),
        (false, true) => message.into(),
        (false, false) => format!("{message} ({advice})"),
    }
}

/// A ZVM's own words in quotes, or that it gave none.
fn quoted_or_nothing(message: &str) -> String {
    if message.is_empty() {
        "nothing more".into()
    } else {
        format!("{message:?}")
    }
}

/// An error as JSON: `{"kind": "refused", "message": "...", "candidates": [...], "hint": "..."}`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ErrorReport {
    /// The class.
    pub kind: ErrorKind,
    /// The full message, on one line.
    pub message: String,
    /// The VMs of an ambiguous query.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<Candidate>,
    /// More than one line can say, shown after the message: a configuration block to add.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl ErrorReport {
    /// A report of `kind` saying `message`, with no candidates and no hint. The message is kept on one
    /// line whatever it holds (a ZVM's own text may carry line breaks): every front prints it as one.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> ErrorReport {
        let message = message.into();
        let message = if message.contains(['\n', '\r']) {
            message
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        } else {
            message
        };
        ErrorReport {
            kind,
            message,
            candidates: Vec::new(),
            hint: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_still_running_is_its_own_kind_and_not_a_failed_task() {
        let err = RewindError::StillRunning {
            site: "boston".into(),
            task_id: "t-1".into(),
            waited_secs: 60.0,
        };
        assert_eq!(err.kind(), ErrorKind::StillRunning);
        assert_eq!(err.kind().as_str(), "still_running");
        let json = serde_json::to_value(err.report()).unwrap();
        assert_eq!(json["kind"], "still_running");
        assert!(err.to_string().contains("t-1") && err.to_string().contains("has not failed"));
    }

    /// How deep brackets nest in `text` at most.
    fn bracket_depth(text: &str) -> usize {
        let (mut depth, mut deepest) = (0usize, 0usize);
        for c in text.chars() {
            match c {
                '(' => {
                    depth += 1;
                    deepest = deepest.max(depth);
                }
                ')' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        deepest
    }

    #[test]
    fn the_flr_refusal_is_one_sentence_naming_the_rbac_defect_and_the_administrator_workaround() {
        let err = RewindError::FlrForbidden {
            site: "boston".into(),
            principal: "operator".into(),
            version: "10.9".into(),
            message: "The user 'operator' (role Operator) is not authorized to perform file-level restore."
                .into(),
        };
        let message = err.to_string();
        assert_eq!(
            message,
            "the ZVM of site boston (version 10.9) refused FLR to \"operator\" with HTTP 403, saying \"The user 'operator' (role Operator) is not authorized to perform file-level restore.\"; ZVM 10.9 has a known RBAC defect that refuses FLR to the Operator role, and the documented workaround is to configure [sites.boston] with a user or Keycloak client that has the Administrator role"
        );
        assert_eq!(bracket_depth(&message), 1, "{message}");
        let silent = RewindError::FlrForbidden {
            site: "boston".into(),
            principal: "operator".into(),
            version: "10.9".into(),
            message: String::new(),
        };
        assert!(
            silent
                .to_string()
                .contains("with HTTP 403, saying nothing more; ZVM 10.9")
        );
    }

    #[test]
    fn a_zvm_error_puts_the_advice_after_the_zvms_own_words() {
        let err = |message: &str, advice: &str| RewindError::Zvm {
            site: "boston".into(),
            request: "GET /v1/vpgs/x".into(),
            status: 404,
            message: message.into(),
            advice: advice.into(),
        };
        let prefix = "the ZVM of site boston answered GET /v1/vpgs/x with HTTP 404: ";
        assert_eq!(
            err("gone", "look").to_string(),
            format!("{prefix}gone (look)")
        );
        assert_eq!(err("", "look").to_string(), format!("{prefix}look"));
        assert_eq!(err("gone", "").to_string(), format!("{prefix}gone"));
        assert_eq!(err("", "").to_string(), format!("{prefix}no message"));
    }

    #[test]
    fn a_report_keeps_a_message_with_line_breaks_on_one_line() {
        let err = RewindError::Zvm {
            site: "boston".into(),
            request: "POST /v1/vpgs/x/checkpoints".into(),
            status: 400,
            message: "first line\r\n  second line\n\n".into(),
            advice: String::new(),
        };
        let report = err.report();
        assert_eq!(
            report.message,
            "the ZVM of site boston answered POST /v1/vpgs/x/checkpoints with HTTP 400: first line second line"
        );
        assert!(report.hint.is_none());
        let json = serde_json::to_value(&report).unwrap();
        assert!(json.get("hint").is_none(), "{json}");
    }
}
