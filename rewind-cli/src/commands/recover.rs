//! `rewind recover file|test|clone`: bounded recover from a change's tagged checkpoint. The core
//! picks the VPG and the site, runs the Zerto tasks, always unmounts an FLR session, and journals the
//! recovery; this prints it.

use rewind_core::{
    CancellationToken, CloneAction, ErrorKind, FailoverTestAction, RecoverFileReport,
    RecoverFileRequest, RecoveryPlan, RecoveryTaskReport, RecoveryVerdict, Rewind,
};

use crate::cli::{CloneActionArg, RecoverCommand, RecoverFrom, TestAction};
use crate::context::as_agent;
use crate::exit::CliError;
use crate::output::{Reply, Table};
use crate::progress::ProgressLine;

/// Runs one recover command. The result is the core's `RecoverFileReport` (file) or
/// `RecoveryTaskReport` (test, clone); a task still running when waiting stopped exits with the
/// still-running code, its id printed.
pub async fn recover(
    rewind: &Rewind,
    command: RecoverCommand,
    stop: &CancellationToken,
    quiet: bool,
) -> Result<Reply, CliError> {
    let rewind = &narrowed(rewind, &command);
    match command {
        RecoverCommand::File {
            from: RecoverFrom { vm, .. },
            change,
            paths,
            to,
            overwrite,
            dry_run,
            plan,
            ..
        } => {
            let progress = ProgressLine::new(format!("recover file {vm}"), quiet).watching(rewind);
            let req = RecoverFileRequest {
                vm,
                change,
                paths,
                destination: to,
                overwrite,
                plan,
            };
            if dry_run {
                let plan = rewind.preview_recover_file(req, &progress, stop).await;
                progress.finish();
                let plan = plan?;
                return Reply::new(&plan, plan_text(&plan));
            }
            let report = rewind.recover_file(req, &progress).await;
            progress.finish();
            let report = report?;
            Reply::new(&report, file_text(&report))
        }
        RecoverCommand::Test {
            from: RecoverFrom { vm, .. },
            change,
            action,
        } => {
            let (label, action) = match action {
                TestAction::Start => ("failover test start", FailoverTestAction::Start),
                TestAction::Stop {
                    passed, summary, ..
                } => (
                    "failover test stop",
                    FailoverTestAction::Stop {
                        success: passed,
                        summary,
                    },
                ),
            };
            let progress = ProgressLine::new(format!("{label} {vm}"), quiet).watching(rewind);
            let report = rewind.failover_test(&vm, &change, action, &progress).await;
            progress.finish();
            task_reply(&report?)
        }
        RecoverCommand::Clone {
            from: RecoverFrom { vm, .. },
            change,
            action,
        } => {
            let (label, action) = match action {
                CloneActionArg::Start => ("clone start", CloneAction::Start),
                CloneActionArg::Abort => ("clone abort", CloneAction::Abort),
            };
            let progress = ProgressLine::new(format!("{label} {vm}"), quiet).watching(rewind);
            let report = rewind.offsite_clone(&vm, &change, action, &progress).await;
            progress.finish();
            task_reply(&report?)
        }
    }
}

/// `rewind keep <vm> --change ID`: the result is the core's `KeepReport`; a keep that kept no VPG's
/// tag exits with its kind (3 when no VPG has a repository).
pub async fn keep(
    rewind: &Rewind,
    vm: &str,
    change: &str,
    agent: Option<&str>,
    quiet: bool,
) -> Result<Reply, CliError> {
    let rewind = as_agent(rewind, agent);
    let progress = ProgressLine::new(format!("keep {vm}"), quiet).watching(&rewind);
    let report = rewind.keep(vm, change, &progress).await;
    progress.finish();
    let report = report?;
    let reply = Reply::new(&report, format!("{}\n", report.summary()))?;
    Ok(match report.error_kind() {
        None => reply,
        Some(kind) => reply.failed(kind, report.headline()),
    })
}

/// The facade acting as the recovery's agent (`--agent` or `REWIND_AGENT`, else the person at this
/// machine), from the VPG `--vpg` names when it names one.
fn narrowed(rewind: &Rewind, command: &RecoverCommand) -> Rewind {
    let from = match command {
        RecoverCommand::File { from, .. }
        | RecoverCommand::Test { from, .. }
        | RecoverCommand::Clone { from, .. } => from,
    };
    let mut rewind = as_agent(rewind, from.agent.as_deref());
    if let Some(vpg) = from.vpg.as_deref() {
        rewind = rewind.only_vpg(vpg);
    }
    rewind
}

/// A recovery's preview as people read it: the plan id, one row per file, and how to run it.
pub fn plan_text(p: &RecoveryPlan) -> String {
    let mut out = format!(
        "PLAN {}: recover {} file(s) of {} for change {} into {}, from VPG {} checkpoint {} ({}) via FLR at site {}; nothing was written\n\n",
        p.plan_id,
        p.files.len(),
        p.vm.name,
        p.change_id,
        p.destination.display(),
        p.from.vpg_name,
        p.from.checkpoint_id,
        rewind_core::recover::time_text(p.from.timestamp),
        p.site,
    );
    let mut t = Table::new(&["GUEST PATH", "WOULD BE WRITTEN TO", "AT THE TAG", "NOW"]);
    for f in &p.files {
        t.row(vec![
            f.guest_path.clone(),
            format!(
                "{}{}",
                f.written_to.display(),
                if f.replaces { " (replaces)" } else { "" }
            ),
            f.at_tag.text(),
            f.now
                .as_ref()
                .map_or_else(|| "absent now".to_string(), |n| n.text()),
        ]);
    }
    out.push_str(&t.render());
    for s in &p.stopped {
        out.push_str(&format!("\n{s}"));
    }
    out.push_str(&format!(
        "\n\"now\" is the latest checkpoint, {}. To recover exactly this, run the same command with --plan {} instead of --dry-run.\n",
        rewind_core::recover::time_text(p.now.timestamp),
        p.plan_id
    ));
    out
}

/// A file recovery as people read it: the core's headline, the tag, one row per file, and the
/// unmount.
pub fn file_text(r: &RecoverFileReport) -> String {
    let mut out = format!("{}\ntag: {}\n\n", r.headline(), r.from.tag);
    let mut t = Table::new(&["GUEST PATH", "WRITTEN TO", "BYTES", "SHA256"]);
    for f in &r.files {
        t.row(vec![
            f.guest_path.clone(),
            format!(
                "{}{}",
                f.path.display(),
                if f.replaced { " (replaced)" } else { "" }
            ),
            f.size.to_string(),
            f.sha256.clone(),
        ]);
    }
    out.push_str(&t.render());
    let task = r
        .unmount
        .task
        .as_ref()
        .map(|t| format!(" (task {})", t.task_id))
        .unwrap_or_default();
    out.push_str(&match &r.unmount.error {
        None => format!(
            "\nFLR session {} at site {} unmounted{task}\n",
            r.session_id, r.site
        ),
        Some(e) => format!(
            "\nFLR session {} at site {} could NOT be unmounted{task}: {e}; unmount it in the ZVM\n",
            r.session_id, r.site
        ),
    });
    for n in &r.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out
}

/// A failover test or clone: its report, and the still-running code when its task is still running.
pub fn task_reply(r: &RecoveryTaskReport) -> Result<Reply, CliError> {
    let reply = Reply::new(r, format!("{}\n", r.summary()))?;
    Ok(match r.verdict {
        RecoveryVerdict::Completed | RecoveryVerdict::Waiting => reply,
        RecoveryVerdict::StillRunning => reply.failed(
            ErrorKind::StillRunning,
            format!(
                "the {} of {} is still running: Zerto task {} at site {} was not stopped and has not failed; follow it in the ZVM before going on",
                r.operation.name(),
                r.vm.name,
                r.task.task_id,
                r.site
            ),
        ),
    })
}
