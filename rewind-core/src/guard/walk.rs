//! The guard's walk, step by step: check the parts, find the VM, take its change lock, take over an
//! earlier attempt of the same change if there is one, journal the intent, tag every protecting VPG
//! (each in parallel, by `vpg::tag`), journal the verdict.

use std::sync::Mutex as StdMutex;
use std::time::{Duration, Instant};

use chrono::Utc;

use super::context::{GuardContext, GuardRequest};
use super::insert;
use super::note::GuardNote;
use super::problem::VpgProblem;
use super::record::{self, AttemptLog};
use super::report::{GuardReport, Outcome, VpgGuard, verdict};
use super::vpg;
use crate::audit_journal::change_lock::ChangeLockError;
use crate::audit_journal::{
    ChangeHold, ChangeUse, GuardIntent, IntentError, JournalError, JournalRecord,
};
use crate::error::RewindError;
use crate::progress::ProgressSink;
use crate::protection::{self, Protection};
use crate::tagged_checkpoint::{MAX_ACTION, MAX_AGENT, MAX_CHANGE_ID, build_tag, check_part};
use crate::vm::VmRef;
use crate::way_back::WayBack;

/// Runs a guard: checks, finds the VM, takes its change lock, takes over an earlier attempt of the
/// same change if there is one, journals its intent, tags every protecting VPG, and journals its
/// verdict.
pub(crate) async fn guard(
    ctx: &GuardContext<'_>,
    req: &GuardRequest,
    sink: &dyn ProgressSink,
) -> Result<GuardReport, RewindError> {
    let began = Instant::now();
    let deadline = began + ctx.settings.deadline;
    let at = Utc::now();
    // Every part is checked before anything is sent, the VM query included (the tag carries the name
    // the query resolves to, checked again below).
    check_part("agent", &req.agent, MAX_AGENT)?;
    check_part("action", &req.action, MAX_ACTION)?;
    let change_id = check_part("change_id", &req.change_id, MAX_CHANGE_ID)?;
    check_part("vm", &req.vm, 255)?;
    // On a file, a cheap early look refuses a reused id before the ZVMs are asked; in a database
    // the one check, in the intent's transaction, is a round trip less for every guard.
    if !ctx.journal.in_a_database() {
        change_id_is_this_changes(ctx, req, change_id).await?;
    }
    let protection = look_up(ctx, &req.vm, deadline).await?;
    let fresh_tag = build_tag(&req.agent, &req.action, &protection.vm.name, change_id, at)?;
    let lock = change_lock(ctx, &protection.vm, change_id, deadline).await?;
    let plan = take_over(ctx, &protection, change_id, fresh_tag, &req.agent).await?;
    let log = journal_intent(ctx, req, &protection, &plan, deadline, lock.fence()).await?;
    let vpgs = tag_every_vpg(ctx, &protection, &plan, &log, deadline, sink).await;
    let mut report = plan.report(req, &protection, vpgs, log);
    report.elapsed_ms = began.elapsed().as_millis() as u64;
    if let Err(e) = ctx
        .journal
        .append_off_runtime(record::verdict_line(&report))
        .await
    {
        report.not_journaled(&e);
    }
    drop(lock);
    Ok(report)
}

/// Refuses a change id that, within the horizon, another agent, action or person used, or that a
/// recovery used: the tags of one change id must be one change's. The same agent, action and person
/// go on (and take an earlier attempt of the same VM over). Read from the change index, before
/// anything is sent.
async fn change_id_is_this_changes(
    ctx: &GuardContext<'_>,
    req: &GuardRequest,
    change_id: &str,
) -> Result<(), RewindError> {
    // A journal that cannot be read cannot take this guard's intent either.
    let uses = ctx
        .journal
        .change_uses_off_runtime(change_id, horizon_start(ctx))
        .await
        .map_err(|source| RewindError::NotJournaled { source })?;
    match Spender::of(ctx, req).other(&uses) {
        None => Ok(()),
        Some(u) => Err(taken(change_id, &u)),
    }
}

/// The start of the change-id horizon, before now.
fn horizon_start(ctx: &GuardContext<'_>) -> chrono::DateTime<Utc> {
    chrono::Duration::from_std(ctx.settings.change_id_horizon)
        .ok()
        .and_then(|h| Utc::now().checked_sub_signed(h))
        .unwrap_or(chrono::DateTime::<Utc>::MIN_UTC)
}

/// Who spends a change id: its agent, action and person.
struct Spender {
    agent: String,
    action: String,
    person: Option<String>,
}

impl Spender {
    fn of(ctx: &GuardContext<'_>, req: &GuardRequest) -> Spender {
        Spender {
            agent: req.agent.trim().to_owned(),
            action: req.action.trim().to_owned(),
            person: ctx.person.map(|p| p.subject.clone()),
        }
    }

    /// The newest of `uses` made by another (or a recovery), if any.
    fn other(&self, uses: &[ChangeUse]) -> Option<ChangeUse> {
        uses.iter()
            .rev()
            .find(|u| {
                u.kind == crate::audit_journal::RecordKind::Recovery
                    || u.agent != self.agent
                    || u.action != self.action
                    || u.person != self.person
            })
            .cloned()
    }
}

fn taken(change_id: &str, u: &ChangeUse) -> RewindError {
    RewindError::ChangeIdTaken {
        change_id: change_id.to_owned(),
        earlier: earlier_use(u),
    }
}

/// An earlier use of a change id, in words.
fn earlier_use(u: &crate::audit_journal::ChangeUse) -> String {
    let when = u.time.format("%Y-%m-%d %H:%M UTC");
    let who = match &u.person {
        Some(person) => format!("{} for {person}", u.agent),
        None => u.agent.clone(),
    };
    match u.kind {
        crate::audit_journal::RecordKind::Recovery => format!(
            "its change was recovered on {} at {when} ({}, by {who})",
            u.vm_name, u.action
        ),
        crate::audit_journal::RecordKind::Guard => format!(
            "{who} guarded {} with it at {when} to {:?}",
            u.vm_name, u.action
        ),
        crate::audit_journal::RecordKind::Done => {
            format!("{who} said it was done on {} at {when}", u.vm_name)
        }
        crate::audit_journal::RecordKind::Keep => {
            format!("{who} kept its tags of {} at {when}", u.vm_name)
        }
        crate::audit_journal::RecordKind::ProtectionChanged => {
            format!("{who} found the VPGs of {} changed at {when}", u.vm_name)
        }
        crate::audit_journal::RecordKind::Call => {
            format!(
                "{who} called {} on {} under it at {when}",
                u.action, u.vm_name
            )
        }
    }
}

/// Finds the one VM `query` means, and every VPG it is in, before the deadline.
async fn look_up(
    ctx: &GuardContext<'_>,
    query: &str,
    deadline: Instant,
) -> Result<Protection, RewindError> {
    tokio::time::timeout_at(
        deadline.into(),
        protection::find_protection(ctx.sites, ctx.left_out, query),
    )
    .await
    .map_err(|_| RewindError::Deadline {
        what: format!(
            "looking up {:?} at the ZVMs, before anything was inserted",
            query.trim()
        ),
        waited_secs: ctx.settings.deadline.as_secs_f64(),
    })?
}

/// What an attempt is to do, once it knows whether it takes an earlier attempt over.
struct Plan {
    /// The earlier attempt of this VM and change within the window, if any.
    earlier: Option<JournalRecord>,
    /// The tag: the earlier attempt's, or a fresh one.
    tag: String,
    attempt_id: String,
    change_id: String,
    notes: Vec<GuardNote>,
}

/// Whether the VM is in other VPGs than the earlier attempt `record` of its change saw: what makes
/// the guard compare them with its newest guard's, which costs a read of the VM's records.
fn vpgs_differ(record: &crate::audit_journal::JournalRecord, protection: &Protection) -> bool {
    let then = record.vpgs.iter().map(|v| v.vpg_id.as_str());
    let now = protection.vpgs.iter().map(|v| v.vpg_id.as_str());
    let (mut then, mut now): (Vec<&str>, Vec<&str>) = (then.collect(), now.collect());
    then.sort_unstable();
    now.sort_unstable();
    then != now
}

/// Looks for an earlier attempt of this VM and change within the hook's window (while holding their
/// change lock), and keeps its tag when there is one.
async fn take_over(
    ctx: &GuardContext<'_>,
    protection: &Protection,
    change_id: &str,
    fresh_tag: String,
    agent: &str,
) -> Result<Plan, RewindError> {
    // A file is read here, not on a blocking thread: the look takes no lock and reads what the
    // journal's writer appended since the last look, and a hand-off to tokio's blocking pool would
    // cost more (with 64 guards at once on two cores, 7 ms at the median) than the look itself
    // (0.1 ms). A database is asked without holding this worker.
    let earlier = ctx
        .journal
        .earlier_attempt_off_runtime(
            &protection.vm.id,
            change_id,
            ctx.window,
            ctx.settings.deadline + LOCK_SLACK,
        )
        .await
        .map_err(|source| RewindError::NotJournaled { source })?;
    let mut notes: Vec<GuardNote> = protection
        .notes
        .iter()
        .cloned()
        .map(GuardNote::Protection)
        .collect();
    if let Some(record) = &earlier
        && vpgs_differ(record, protection)
    {
        let vm = crate::audit_journal::JournalVm::from(&protection.vm);
        let noted = crate::protection::compared_with_guard(
            ctx.journal,
            &vm,
            &protection.vpgs,
            agent,
            ctx.person,
        );
        notes.extend(noted.map(GuardNote::Protection));
    }
    let tag = match earlier
        .as_ref()
        .and_then(|r| Some((r, r.attempt.as_ref()?, r.tag()?)))
    {
        Some((record, attempt, tag)) => {
            notes.push(GuardNote::TookOver {
                attempt: record::attempt_name(attempt),
                change_id: change_id.to_string(),
                verdict: record.verdict.clone(),
            });
            tag.to_string()
        }
        None => fresh_tag,
    };
    Ok(Plan {
        earlier,
        tag,
        attempt_id: record::new_attempt_id(),
        change_id: change_id.to_string(),
        notes,
    })
}

impl Plan {
    /// The id of the earlier attempt this one takes over.
    fn takes_over(&self) -> Option<String> {
        self.earlier
            .as_ref()
            .and_then(|r| r.attempt.as_ref())
            .map(|a| a.id.clone())
    }

    /// The report of the attempt, once every VPG is done.
    fn report(
        self,
        req: &GuardRequest,
        protection: &Protection,
        vpgs: Vec<VpgGuard>,
        log: AttemptLog<'_>,
    ) -> GuardReport {
        let takes_over = self.takes_over();
        let person = log.intent.person.clone();
        let mut notes = self.notes;
        notes.extend(log.failures.into_inner().unwrap_or_else(|p| p.into_inner()));
        if protection.protecting().next().is_none() {
            notes.push(GuardNote::NothingProtecting {
                vm: protection.vm.name.clone(),
            });
        }
        GuardReport {
            verdict: verdict(&vpgs),
            recoverable_until: GuardReport::shortest_way_back(&vpgs),
            tag: self.tag,
            vm: protection.vm.clone(),
            agent: req.agent.trim().to_string(),
            person,
            action: req.action.trim().to_string(),
            change_id: self.change_id,
            vpgs,
            elapsed_ms: 0,
            notes,
            attempt_id: self.attempt_id,
            takes_over,
            sites: protection.asked.clone(),
            journal_error: None,
        }
    }
}

/// Journals the attempt's intent (its tag, every protecting VPG `pending`), synced, before anything
/// is inserted; when it cannot be written, nothing is. A VM with no protecting VPG inserts nothing,
/// and has no intent to journal. The change id is checked again under its own lock, with the intent
/// written before the lock is let go: the first check, made before the lookup, saw no intent of a
/// guard of the same id that started at the same time.
async fn journal_intent<'a>(
    ctx: &GuardContext<'a>,
    req: &GuardRequest,
    protection: &Protection,
    plan: &Plan,
    deadline: Instant,
    fence: crate::audit_journal::Fence,
) -> Result<AttemptLog<'a>, RewindError> {
    let takes_over = plan.takes_over();
    let intent = JournalRecord::intent(&GuardIntent {
        attempt_id: &plan.attempt_id,
        takes_over: takes_over.as_deref(),
        agent: req.agent.trim(),
        person: ctx.person,
        action: req.action.trim(),
        change_id: &plan.change_id,
        vm: &protection.vm,
        tag: &plan.tag,
        sites: protection.asked.as_deref(),
        vpgs: protection
            .protecting()
            .map(|v| (v.vpg_id.as_str(), v.vpg_name.as_str()))
            .collect(),
    });
    if protection.protecting().next().is_some() {
        let spender = Spender::of(ctx, req);
        let written = ctx
            .journal
            .append_intent(&intent, horizon_start(ctx), deadline, move |uses| {
                spender.other(uses)
            })
            .await;
        match written {
            Ok(None) => {}
            Ok(Some(other)) => return Err(taken(&plan.change_id, &other)),
            Err(IntentError::Lock(e)) => return Err(lock_error(ctx, None, &plan.change_id, e)),
            Err(IntentError::Journal(source)) => return Err(RewindError::NotJournaled { source }),
        }
    }
    Ok(AttemptLog {
        fence,
        journal: ctx.journal,
        intent,
        failures: StdMutex::new(Vec::new()),
    })
}

/// Tags every protecting VPG, in parallel across VPGs; the others are reported skipped with why.
async fn tag_every_vpg(
    ctx: &GuardContext<'_>,
    protection: &Protection,
    plan: &Plan,
    log: &AttemptLog<'_>,
    deadline: Instant,
    sink: &dyn ProgressSink,
) -> Vec<VpgGuard> {
    futures::future::join_all(protection.vpgs.iter().map(|v| async {
        if !v.protecting {
            let reason = v.reason.clone().unwrap_or_default();
            return vpg_guard(v, Outcome::Skipped { reason }, None, Vec::new());
        }
        let earlier = plan
            .earlier
            .as_ref()
            .and_then(|r| record::Earlier::at_vpg(r, &v.vpg_id));
        guard_vpg(ctx, v, &plan.tag, earlier.as_ref(), log, deadline, sink).await
    }))
    .await
}

/// One VPG's guard.
async fn guard_vpg(
    ctx: &GuardContext<'_>,
    vpg: &protection::VpgProtection,
    tag: &str,
    earlier: Option<&record::Earlier>,
    log: &AttemptLog<'_>,
    deadline: Instant,
    sink: &dyn ProgressSink,
) -> VpgGuard {
    let Some(site) = ctx.site(&vpg.zvm_site) else {
        let site = vpg.zvm_site.clone();
        return vpg_guard(vpg, VpgProblem::NoSite { site }.into(), None, Vec::new());
    };
    let at = insert::Place {
        ctx,
        vpg,
        tag,
        log,
        deadline,
        sent: tokio::sync::watch::Sender::new(false),
    };
    let (outcome, way_back, notes) =
        vpg::tag(at, site.as_ref(), site.timings(), earlier, sink).await;
    vpg_guard(vpg, outcome, way_back, notes)
}

fn vpg_guard(
    vpg: &protection::VpgProtection,
    outcome: Outcome,
    way_back: Option<WayBack>,
    notes: Vec<GuardNote>,
) -> VpgGuard {
    VpgGuard {
        vpg_id: vpg.vpg_id.clone(),
        vpg_name: vpg.vpg_name.clone(),
        site: vpg.zvm_site.clone(),
        outcome,
        way_back,
        notes,
    }
}

/// How much longer than its deadline an attempt's lines may span: its verdict is written after the
/// deadline's last wait, under a journal lock waited for at most `LOCK_WAIT`.
const LOCK_SLACK: Duration = Duration::from_secs(15);

/// Takes the change lock of `vm` and `change_id`, waiting until the deadline for another guard of
/// them (on this machine, or on another replica of a team server).
async fn change_lock(
    ctx: &GuardContext<'_>,
    vm: &VmRef,
    change_id: &str,
    deadline: Instant,
) -> Result<ChangeHold, RewindError> {
    ctx.journal
        .lock_change(Some(&vm.id), change_id, deadline)
        .await
        .map_err(|e| lock_error(ctx, Some(vm), change_id, e))
}

/// The error of a change lock (of `vm` and `change_id`, or of the change id alone) not taken.
fn lock_error(
    ctx: &GuardContext<'_>,
    vm: Option<&VmRef>,
    change_id: &str,
    e: ChangeLockError,
) -> RewindError {
    match e {
        ChangeLockError::Busy { lock } => RewindError::Deadline {
            what: match vm {
                Some(vm) => format!(
                    "another guard of {} for change {change_id} ran (it holds {lock}), before anything was inserted; when it ends, guard again: its checkpoints are adopted",
                    vm.name,
                ),
                None => format!(
                    "another guard of change {change_id} held its id's lock ({lock}) until the deadline, before anything was inserted; guard again"
                ),
            },
            waited_secs: ctx.settings.deadline.as_secs_f64(),
        },
        ChangeLockError::Io { lock, source } => RewindError::NotJournaled {
            source: JournalError::Write {
                path: ctx.journal.path().to_path_buf(),
                source: std::io::Error::new(
                    source.kind(),
                    format!("its change lock {lock} cannot be taken: {source}"),
                ),
            },
        },
    }
}
