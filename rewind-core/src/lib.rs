//! rewind-core: the one Zerto client that the `rewind` CLI and the `rewind-mcp` server share.
//!
//! Everything goes through [`Rewind`], built from a [`Config`]. The modules, named for the domain and
//! listed from the bottom up: each uses only modules above it in this list, never one below (the
//! workspace's layout test, `tidy/tests/workspace.rs`, keeps it so).
//!
//! - [`error_kind`], [`codes`], [`vm`], [`local_state`], [`progress`]: leaves. The classes of errors;
//!   the ZVM's numeric codes with their names; the VM a query means and the one rule by which a query
//!   matches a VM; the private, bounded-lock files rewind keeps; progress updates while waiting
//!   ([`ProgressSink`]).
//! - `toml_error`: TOML read into serde types with errors that name the key and line, never the
//!   value (the configuration's and the catalog's).
//! - `secret`: [`Secret`], a password, client secret or token that no formatting prints.
//! - [`config`]: sites (optional: the catalog, the journal and the hook need none), credentials
//!   (each in a [`Secret`]), TLS trust, and the guard, hook, recover and HTTP settings.
//! - [`catalog`]: read_only / mutating / unknown tools, persisted; the question for the human.
//! - [`audit_journal`]: the append-only audit journal (not Zerto's VPG journal): a guard's intent,
//!   task and verdict lines, written by one writer thread, folded into records; the change locks.
//! - [`arguments_key`]: the server's key for digests of a call's arguments, kept beside the
//!   journal.
//! - [`bypass`]: the MCP client configurations of this machine that reach a gateway's upstream
//!   around it, which `rewind doctor` warns of.
//! - [`forwarded`]: a call the gateway forwards to an upstream's mutating tool, as the journal
//!   records it, and the server's key for digests of its arguments.
//! - [`hook`]: the pre-tool hook's judgement of one call (allow, deny, ask, fail closed, each with
//!   its typed reason), pure: the front reads the host's input, the catalog and the guards.
//! - [`error`]: [`RewindError`], which wraps the configuration's, the catalog's and the journal's.
//! - [`zvm`]: the HTTP client of one ZVM: timeouts, TLS, the single-flight token cache, read retries,
//!   the client's own wire models ([`zvm::wire`]) and adaptive waiting for Zerto tasks.
//! - [`protection`]: find_protection and the protecting-VPG rule.
//! - [`tagged_checkpoint`]: the tag's parts, building and parsing a tag, the tag list of a VM.
//! - [`guard`]: the per-VPG queue, insert / await / listed, the back-to-back retry, the
//!   reconciliation of lost answers and taking an earlier attempt over; typed notes ([`GuardNote`]).
//! - [`recover`]: bounded recover from a tagged checkpoint: FLR (mount at the recovery site, browse,
//!   download into a destination folder it never leaves, always unmount), failover test, offsite clone.
//!   Failover Live and Move have no code path.
//! - `fuzzing` (hidden): the entry points of the fuzz targets and of the tests that replay their
//!   corpora; not part of the API.
//!
//! The facade, [`Rewind`], sits on top: it uses the modules and none uses it back. A module that
//! works for it is handed a narrow context the facade builds for each call (a guard's
//! `GuardContext`, a recovery's `RecoverContext`, the sites and configuration [`doctor`] checks),
//! never the facade itself; the layout test holds `lib.rs` to it too.
//!
//! The library never imports the simulator's types; its tests start `zvm-sim` in-process and talk to it
//! over HTTP only.

#[macro_use]
mod as_text;

pub mod approvals;
pub mod arguments_key;
pub mod audit_journal;
pub mod bypass;
pub mod capture;
pub mod catalog;
pub mod codes;
pub mod config;
pub mod doctor;
pub mod error;
pub mod error_kind;
pub mod forwarded;
#[doc(hidden)]
pub mod fuzzing;
pub mod guard;
pub mod hook;
pub mod local_state;
pub mod metrics;
pub mod parity;
pub mod progress;
pub mod protection;
pub mod recover;
mod secret;
pub mod tagged_checkpoint;
mod toml_error;
pub mod trust;
pub mod vm;
pub mod way_back;
pub mod zvm;

use std::sync::Arc;

use serde::Serialize;

pub use audit_journal::{AuditJournal, GuardLookup, JournalFilter, JournalRecord, Person};
pub use catalog::{CatalogStore, Classification, InvalidEntry, ToolClass};
pub use codes::Code;
pub use config::{
    Config, Credentials, DiffSettings, GuardSettings, HookSettings, HttpSettings, LookupSettings,
    RecoverSettings, Secret, SiteConfig,
};
pub use error::{Candidate, ErrorKind, ErrorReport, RecoveryRefusal, RewindError};
pub use guard::{
    Culprit, GuardNext, GuardNote, GuardReport, GuardRequest, Outcome, RunningInsert, Verdict,
    VpgGuard,
};
pub use progress::{NoProgress, ProgressSink, Stage, TaskProgress, Waiting};
pub use protection::{
    FlrAvailability, Protection, ProtectionNote, SiteRef, VmQuery, VmRef, VpgProtection,
};
pub use recover::{
    CloneAction, CloneReport, Content, DiffCounts, DiffEntry, DiffKind, DiffReport, DiffRequest,
    FailoverTestAction, FailoverTestReport, FileState, FlrCalls, GuestPath, KeepOutcome,
    KeepReport, KeptVpg, LaterPoint, PlannedFile, RecoverFileReport, RecoverFileRequest,
    RecoveredFile, RecoveryNote, RecoveryOperation, RecoveryPlan, RecoveryPoint, RecoveryTask,
    RecoveryTaskReport, RecoveryVerdict, RestoreRequest, RestoreStatus, RestoreTarget, SessionEnd,
    Unmount, WaitingRestore, WalkStop,
};
pub use tagged_checkpoint::TagList;
pub use tokio_util::sync::CancellationToken;
pub use zvm::{Site, ZvmClient};

/// What one configured site looks like right now.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SiteStatus {
    /// The configured name.
    pub name: String,
    /// The ZVM's URL.
    pub url: String,
    /// Whether `/v1/localsite` answered.
    pub reachable: bool,
    /// The ZVM's version.
    pub version: Option<String>,
    /// The site's identifier.
    pub site_id: Option<String>,
    /// The site's own name.
    pub site_name: Option<String>,
    /// TLS verification is off for this site.
    pub insecure: bool,
    /// Why it is not reachable.
    pub error: Option<String>,
}

impl SiteStatus {
    /// One line for humans: the site, its URL, and its identity or why it is not reachable.
    pub fn headline(&self) -> String {
        match (&self.error, &self.site_name) {
            (Some(e), _) => format!("{} ({}): UNREACHABLE: {e}", self.name, self.url),
            (None, name) => format!(
                "{} ({}): {} {} version {}{}",
                self.name,
                self.url,
                name.as_deref().unwrap_or("?"),
                self.site_id.as_deref().unwrap_or("?"),
                self.version.as_deref().unwrap_or("?"),
                if self.insecure {
                    " (TLS verification OFF)"
                } else {
                    ""
                }
            ),
        }
    }
}

/// The state one process shares between all its calls.
#[derive(Debug)]
struct Inner {
    config: Config,
    /// One per configured site, in configuration order: its client, and what is kept of it
    /// between calls (shared reads, kept listings, learnt timings).
    sites: Vec<Arc<Site>>,
    /// The per-VPG insert queue: one process never inserts twice at once into one VPG.
    queue: guard::VpgQueue,
    /// The insert tasks this process started, so they are never taken for another client's.
    own: guard::OwnTasks,
    catalog: CatalogStore,
    journal: AuditJournal,
    /// The calls held for a person's approval, beside the journal.
    held: approvals::HeldCalls,
}

/// The facade: one per process, cheap to clone (an `Arc` inside).
#[derive(Debug, Clone)]
pub struct Rewind {
    inner: Arc<Inner>,
    /// The signed-in person this handle acts for ([`Rewind::acting_for`]): journaled with each
    /// guard and recovery made through it.
    person: Option<Arc<audit_journal::Person>>,
    /// The held call whose approval what is made through this handle runs on ([`Rewind::on_approval`]).
    approved_by: Option<Arc<audit_journal::ApprovedBy>>,
    /// The sites this handle asks: every configured site, or those named to
    /// [`Rewind::only_sites`].
    asked: Arc<[Arc<Site>]>,
    /// The configured sites this handle leaves out.
    left_out: Arc<[String]>,
    /// Who acts through this handle, for recoveries ([`Rewind::as_agent`]); a guard names its agent
    /// in its request.
    agent: Option<Arc<str>>,
    /// The one VPG a recovery through this handle uses ([`Rewind::only_vpg`]).
    vpg: Option<Arc<str>>,
}

/// The journal's name for a VM that a lookup found in no VPG.
fn unprotected(vm: &error::Candidate) -> audit_journal::JournalVm {
    audit_journal::JournalVm {
        id: vm.vm_id.clone(),
        name: vm.vm_name.clone(),
        ip_addresses: Vec::new(),
        site: vm.site.clone(),
    }
}

impl Rewind {
    /// Builds the clients of every configured site without sending anything; each site's identity is
    /// learnt on first use. A configuration without sites is accepted: the catalog and the journal
    /// work, and every call that needs a ZVM refuses with [`config::ConfigError::NoSites`].
    ///
    /// Nothing is logged here: the configuration's warnings ([`Config::warnings`], such as TLS
    /// verification turned off) are the front's to show, once per run.
    pub fn new(config: Config) -> Result<Rewind, RewindError> {
        let kept = config
            .journal_path
            .parent()
            .unwrap_or(std::path::Path::new("."))
            .join("timings");
        // What is learnt of each site's timings is kept beside the journal for the next process
        // (a CLI guard is a process of its own).
        let site = |s: &config::SiteConfig| -> Result<Arc<Site>, RewindError> {
            let client = ZvmClient::new(s, &config.http)?;
            let timings = zvm::timings::SiteTimings::kept_in(&s.name, client.url().as_str(), &kept);
            Ok(Arc::new(Site::new(
                Arc::new(client),
                &config.lookup,
                timings,
            )))
        };
        let sites = config
            .sites
            .iter()
            .map(site)
            .collect::<Result<Vec<_>, _>>()?;
        let asked: Arc<[Arc<Site>]> = sites.clone().into();
        let journal = AuditJournal::of(&config)?;
        Ok(Rewind {
            inner: Arc::new(Inner {
                catalog: CatalogStore::new(&config.catalog_path),
                held: approvals::HeldCalls::of(&config, &journal),
                journal,
                sites,
                queue: Default::default(),
                own: Default::default(),
                config,
            }),
            person: None,
            approved_by: None,
            asked,
            left_out: Arc::new([]),
            agent: None,
            vpg: None,
        })
    }

    /// The same facade asking only the configured sites named in `sites` (all of them when
    /// `sites` is empty): a VM name is then resolved at those alone, and every answer says so. A
    /// name that is not configured is refused.
    pub fn only_sites(&self, sites: &[String]) -> Result<Rewind, RewindError> {
        if sites.is_empty() {
            return Ok(self.clone());
        }
        for name in sites {
            self.client(name)?;
        }
        let named = |c: &Arc<Site>| sites.iter().any(|s| s == c.name());
        Ok(Rewind {
            asked: self
                .inner
                .sites
                .iter()
                .filter(|c| named(c))
                .cloned()
                .collect(),
            left_out: self
                .inner
                .sites
                .iter()
                .filter(|c| !named(c))
                .map(|c| c.name().to_owned())
                .collect(),
            ..self.clone()
        })
    }

    /// The same facade (one insert queue, one journal) acting for `person`: each guard and recovery
    /// made through the handle it returns journals them beside the agent's name. A team server
    /// makes one per signed-in call.
    pub fn acting_for(&self, person: audit_journal::Person) -> Rewind {
        Rewind {
            person: Some(Arc::new(person)),
            ..self.clone()
        }
    }

    /// The same facade, what it journals marked as made on the approval of a held call.
    pub fn on_approval(&self, approved_by: audit_journal::ApprovedBy) -> Rewind {
        Rewind {
            approved_by: Some(Arc::new(approved_by)),
            ..self.clone()
        }
    }

    /// The same facade, its recoveries journaled as made by `agent` (an agent's name, or the person
    /// at the command line); without it, as made by the ZVM account.
    pub fn as_agent(&self, agent: &str) -> Rewind {
        Rewind {
            agent: Some(Arc::from(agent.trim())),
            ..self.clone()
        }
    }

    /// The same facade, its recoveries made from the change's tag in VPG `vpg` (its name or
    /// identifier) alone, instead of the one rewind prefers (a locally replicated VPG first).
    pub fn only_vpg(&self, vpg: &str) -> Rewind {
        Rewind {
            vpg: Some(Arc::from(vpg.trim())),
            ..self.clone()
        }
    }

    /// The VPG chosen for recoveries, if one was ([`Rewind::only_vpg`]).
    pub fn chosen_vpg(&self) -> Option<&str> {
        self.vpg.as_deref()
    }

    /// Who acts through this handle, if it was said ([`Rewind::as_agent`]).
    pub fn agent(&self) -> Option<&str> {
        self.agent.as_deref()
    }

    /// The person this handle acts for, if any.
    pub fn person(&self) -> Option<&audit_journal::Person> {
        self.person.as_deref()
    }

    /// The held call whose approval this handle acts on, and who approved it.
    pub fn approval(&self) -> Option<&audit_journal::ApprovedBy> {
        self.approved_by.as_deref()
    }

    /// Builds the clients and learns each site's identifier from `/v1/localsite`; fails when no site is
    /// configured, or when a site cannot be reached or will not authenticate rewind.
    pub async fn connect(config: Config) -> Result<Rewind, RewindError> {
        config.require_sites()?;
        let rewind = Rewind::new(config)?;
        futures::future::try_join_all(rewind.inner.sites.iter().map(|c| c.local_site())).await?;
        Ok(rewind)
    }

    /// The exchanges with the ZVMs this handle asks that are under way, longest first: what a
    /// person watching a slow command is waiting for.
    pub fn waiting(&self) -> Vec<progress::Waiting> {
        let mut all: Vec<progress::Waiting> = self
            .asked
            .iter()
            .flat_map(|c| c.client().waiting())
            .collect();
        all.sort_by_key(|w| std::cmp::Reverse(w.since));
        all
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// The clients of the sites this handle asks: every configured site's, unless
    /// [`Rewind::only_sites`] chose some.
    pub fn clients(&self) -> Vec<Arc<ZvmClient>> {
        self.asked.iter().map(|s| s.client().clone()).collect()
    }

    /// The client of the site configured as `name`.
    pub fn client(&self, name: &str) -> Result<&Arc<ZvmClient>, RewindError> {
        protection::site_client(&self.inner.sites, name)
    }

    /// Every configured site's reachability and identity, read now.
    pub async fn sites(&self) -> Vec<SiteStatus> {
        futures::future::join_all(self.asked.iter().map(|s| async move {
            let c = s.client();
            let insecure = self.inner.config.site(c.name()).is_some_and(|s| s.insecure);
            match c.read_local_site().await {
                Ok(l) => SiteStatus {
                    name: c.name().to_string(),
                    url: c.url().to_string(),
                    reachable: true,
                    version: l.display_version.clone().or_else(|| l.version.clone()),
                    site_id: l.site_identifier.clone(),
                    site_name: l.site_name.clone(),
                    insecure,
                    error: None,
                },
                Err(e) => SiteStatus {
                    name: c.name().to_string(),
                    url: c.url().to_string(),
                    reachable: false,
                    version: None,
                    site_id: None,
                    site_name: None,
                    insecure,
                    error: Some(e.to_string()),
                },
            }
        }))
        .await
    }

    /// Resolves a VM name, host name, IP address or vmIdentifier to exactly one VM and every VPG it is
    /// in, across the configured sites.
    /// When every configured site answered, the VPGs found are compared with those the VM's newest
    /// guard saw, and a difference is journaled (`protection_changed`, once) and noted; a VM in no
    /// VPG any more is compared too before it is refused.
    pub async fn find_protection(&self, query: &str) -> Result<Protection, RewindError> {
        self.inner.config.require_sites()?;
        match protection::find_protection(&self.asked, &self.left_out, query).await {
            Ok(mut found) => {
                if found.asked.is_none() {
                    let vm = audit_journal::JournalVm::from(&found.vm);
                    let noted = self.note_protection(&vm, &found.vpgs);
                    found.notes.extend(noted);
                }
                Ok(found)
            }
            Err(RewindError::VmNotProtected { query, vm }) => {
                if self.left_out.is_empty() {
                    self.note_protection(&unprotected(&vm), &[]);
                }
                Err(RewindError::VmNotProtected { query, vm })
            }
            Err(e) => Err(e),
        }
    }

    /// What the journal says of `vm`, now in `vpgs`, against its newest guard, journaling a
    /// `protection_changed` record the first time a difference is seen.
    fn note_protection(
        &self,
        vm: &audit_journal::JournalVm,
        vpgs: &[protection::VpgProtection],
    ) -> Option<protection::ProtectionNote> {
        let agent = self.agent().unwrap_or("rewind");
        protection::compared_with_guard(&self.inner.journal, vm, vpgs, agent, self.person())
    }

    /// Guards a VM before it is changed: a tagged checkpoint in every protecting VPG, each insert's task
    /// read until terminal and each checkpoint seen listed. The guard's intent is journaled before
    /// its first insert (when that cannot be written, nothing is inserted:
    /// [`RewindError::NotJournaled`]), each task id as it is learnt, and the verdict before it
    /// returns; a verdict that could not be written makes the report `not_guarded`, with
    /// [`GuardReport::journal_error`] saying why. An earlier guard of the same VM and change within
    /// the hook's window is taken over: its tag is kept and what it inserted adopted.
    pub async fn guard(
        &self,
        req: GuardRequest,
        progress: &dyn ProgressSink,
    ) -> Result<GuardReport, RewindError> {
        self.guard_until(req, progress, &CancellationToken::new())
            .await
    }

    /// [`Rewind::guard`] that can be told to stop: once `stop` is cancelled, no insert not yet sent
    /// is sent (a VPG still waiting for its turn ends with an `error` outcome that says so), while
    /// every insert already sent is read to its end and journaled, as always. The verdict is then
    /// `not_guarded` unless every protecting VPG was already tagged.
    pub async fn guard_until(
        &self,
        req: GuardRequest,
        progress: &dyn ProgressSink,
        stop: &CancellationToken,
    ) -> Result<GuardReport, RewindError> {
        self.inner.config.require_sites()?;
        let ctx = guard::GuardContext {
            sites: &self.asked,
            left_out: &self.left_out,
            queue: &self.inner.queue,
            own: &self.inner.own,
            settings: &self.inner.config.guard,
            journal: &self.inner.journal,
            window: self.inner.config.hook.window,
            person: self.person(),
            stop,
        };
        let report = guard::guard(&ctx, &req, progress).await;
        let m = metrics::metrics();
        match &report {
            Ok(r) => m.guard_ended(r.verdict.word(), r.vpgs.iter().map(|v| v.outcome.word())),
            Err(_) => m.guard_ended("error", std::iter::empty()),
        }
        report
    }

    /// The tagged checkpoints of a VM across all its VPGs, only those of `change_id` when given: a
    /// change id, or a tag exactly, as a recovery takes it (checked the same way before anything is
    /// sent).
    pub async fn list_tags(
        &self,
        vm: &str,
        change_id: Option<&str>,
    ) -> Result<TagList, RewindError> {
        let change_id = change_id.map(recover::check_change).transpose()?;
        let protection = match self.find_protection(vm).await {
            Ok(found) => found,
            // A VM whose every VPG went since its guard: its tags are listed, and said gone.
            Err(RewindError::VmNotProtected { query, vm }) => {
                let journaled = self.journal().journaled_tags(&vm.vm_id)?;
                if journaled.is_empty() || !self.left_out.is_empty() {
                    return Err(RewindError::VmNotProtected { query, vm });
                }
                protection::Protection::of_no_vpg(&query, &vm)
            }
            Err(e) => return Err(e),
        };
        let journaled = self.journal().journaled_tags(&protection.vm.id)?;
        Ok(tagged_checkpoint::list_tags(&self.asked, &protection, change_id, &journaled).await)
    }

    /// Keeps the change's tags past the journal: an Extended Journal Copy (`retentionstart`) of each
    /// VPG's tagged checkpoint, each task read to its end, each retention set found and journaled
    /// with its repository and expiry. A VPG without a repository is said so, with the offsite clone
    /// as the way instead. Only on a person's word: a front asks before it calls this.
    pub async fn keep(
        &self,
        vm: &str,
        change: &str,
        progress: &dyn ProgressSink,
    ) -> Result<recover::KeepReport, RewindError> {
        recover::keep(&self.recover_context(), vm, change, progress).await
    }

    /// File-level recovery: mounts the VM's disks at the change's tagged checkpoint at the VPG's
    /// recovery site, checks that each guest path exists, downloads each into `req.destination` (never
    /// writing outside it, never through a symbolic link, never over an existing file unless
    /// `req.overwrite`), and always unmounts, also after an error. A folder is recovered whole (its zip
    /// archive is unpacked under the same rules).
    ///
    /// The VPG is a locally replicated one when one holds the tag, otherwise one whose recovery site's
    /// ZVM is configured; when none is, the call is refused before anything is sent, naming the
    /// recovery site and the `[sites.<name>]` block to add. One journal record is appended (success or
    /// failure) once anything was sent. An error after the mount is [`RewindError::FlrAborted`]: the
    /// first error, then what happened to the session (and which files were already written).
    pub async fn recover_file(
        &self,
        req: RecoverFileRequest,
        progress: &dyn ProgressSink,
    ) -> Result<RecoverFileReport, RewindError> {
        recover::recover_file(&self.recover_context(), &req, progress).await
    }

    /// Restores the VM to the change's tagged checkpoint by a journal VM restore: as a new VM beside
    /// it, or in place. Only from a VPG whose journal is at the VM's own site; refused before
    /// anything is sent otherwise, while that VPG is not protecting, or while an earlier restore of
    /// the VM waits. The restore's task is read until it waits for a person (verdict `waiting`):
    /// nothing is committed by itself, and Zerto rolls it back once `[recover] restore_wait_secs`
    /// passes without [`Rewind::restore_commit`]. Only a person may ask for this (the fronts ask
    /// them); it is journaled with the person and the agent.
    pub async fn restore_vm(
        &self,
        req: RestoreRequest,
        progress: &dyn ProgressSink,
    ) -> Result<RecoveryTaskReport, RewindError> {
        recover::restore_vm(&self.recover_context(), &req, progress).await
    }

    /// Journals that the person did not approve a restore an agent proposed (`why`: their answer):
    /// nothing is sent to restore anything, and the change id is not spent.
    pub async fn restore_declined(
        &self,
        req: &RestoreRequest,
        why: &str,
    ) -> Result<(), RewindError> {
        recover::restore_declined(&self.recover_context(), req, why).await
    }

    /// Commits the restore of `vm` that this machine journaled and Zerto shows waiting: what it
    /// restored stays. Journaled.
    pub async fn restore_commit(
        &self,
        vm: &str,
        progress: &dyn ProgressSink,
    ) -> Result<RecoveryTaskReport, RewindError> {
        recover::end_restore(&self.recover_context(), vm, true, progress).await
    }

    /// Rolls back the restore of `vm` that this machine journaled: the VM as it was before the
    /// restore, or the new VM removed. Journaled.
    pub async fn restore_rollback(
        &self,
        vm: &str,
        progress: &dyn ProgressSink,
    ) -> Result<RecoveryTaskReport, RewindError> {
        recover::end_restore(&self.recover_context(), vm, false, progress).await
    }

    /// The restores this machine journaled that wait for a commit or a rollback, each with its
    /// task's state at Zerto now and when it rolls back by itself.
    pub async fn restore_status(&self) -> Result<RestoreStatus, RewindError> {
        recover::restore_status(&self.recover_context()).await
    }

    /// What [`Rewind::recover_file`] would write where, each file's size and write time at the tag
    /// and now (the VPG's latest checkpoint), and the plan id that pins it: give it as
    /// [`RecoverFileRequest::plan`] to run only what was previewed. Both checkpoints are mounted in
    /// turn and unmounted; nothing is written but the plan, kept beside the journal.
    pub async fn preview_recover_file(
        &self,
        req: RecoverFileRequest,
        progress: &dyn ProgressSink,
        stop: &CancellationToken,
    ) -> Result<RecoveryPlan, RewindError> {
        recover::preview(&self.recover_context(), &req, progress, stop).await
    }

    /// What changed in the VM's files from the change's tagged checkpoint to a later one (the VPG's
    /// latest by default): each file added, removed or changed (size and write time) under the paths
    /// asked for, and with `content` a unified diff of each changed text file within the size cap.
    /// The two checkpoints are mounted in turn by FLR at the VPG's recovery site, as a file recovery
    /// mounts its tag, and each session is unmounted, after an error too. Nothing is written to the
    /// VM, its VPG or the journal. Once `stop` is cancelled, nothing more is read: the session
    /// mounted is unmounted and the diff ends with an error.
    pub async fn diff(
        &self,
        req: DiffRequest,
        progress: &dyn ProgressSink,
        stop: &CancellationToken,
    ) -> Result<DiffReport, RewindError> {
        recover::diff(&self.recover_context(), &req, progress, stop).await
    }

    /// Starts a failover test of the VM at the change's tagged checkpoint (only that VM of its VPG), or
    /// stops the test running for it, recording success and summary. The Zerto task is read until it
    /// is terminal; Failed or Stopped is an error of kind `task_failed` with its `CompleteReason`; still
    /// running when waiting stops is reported `still_running`, never dropped. One journal record.
    pub async fn failover_test(
        &self,
        vm: &str,
        change: &str,
        action: FailoverTestAction,
        progress: &dyn ProgressSink,
    ) -> Result<FailoverTestReport, RewindError> {
        recover::failover_test(&self.recover_context(), vm, change, &action, progress).await
    }

    /// Starts an offsite clone of the VM at the change's tagged checkpoint, or aborts the clone in
    /// progress for it; the Zerto task is read until it is terminal, as for
    /// [`Rewind::failover_test`]. (Named `offsite_clone`, not `clone`, so it never hides
    /// `Clone::clone` of the facade.)
    pub async fn offsite_clone(
        &self,
        vm: &str,
        change: &str,
        action: CloneAction,
        progress: &dyn ProgressSink,
    ) -> Result<CloneReport, RewindError> {
        recover::clone(&self.recover_context(), vm, change, action, progress).await
    }

    /// What a recovery through this handle needs: its sites, journal, agent, person and VPG.
    fn recover_context(&self) -> recover::RecoverContext<'_> {
        recover::RecoverContext {
            config: &self.inner.config,
            configured: &self.inner.sites,
            sites: &self.asked,
            left_out: &self.left_out,
            journal: &self.inner.journal,
            agent: self.agent(),
            person: self.person(),
            approved_by: self.approved_by.as_deref(),
            vpg: self.chosen_vpg(),
        }
    }

    /// The newest guard of `vm` that ended `guarded` within the hook's window, if any, or the VMs it
    /// could mean when records of more than one match. `vm` is matched as find_protection matches it
    /// (name, identifier, host name or IP address), from the journal alone: no ZVM is asked.
    pub fn recent_guard(&self, vm: &str) -> Result<GuardLookup, RewindError> {
        Ok(self
            .inner
            .journal
            .last_guarded(vm, self.inner.config.hook.window)?)
    }

    /// Runs every check of every site this handle asks, then the local ones (the catalog, the
    /// journal): [`doctor`].
    pub async fn doctor(&self) -> doctor::Diagnosis {
        doctor::diagnose(&self.inner.config, &self.clients()).await
    }

    /// The tool catalog.
    pub fn catalog(&self) -> &CatalogStore {
        &self.inner.catalog
    }

    /// The audit journal.
    pub fn journal(&self) -> &AuditJournal {
        &self.inner.journal
    }

    /// The calls held for a person's approval.
    pub fn held_calls(&self) -> &approvals::HeldCalls {
        &self.inner.held
    }
}
