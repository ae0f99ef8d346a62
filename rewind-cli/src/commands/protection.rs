//! `rewind find`, `rewind guard` and `rewind tags`: the VM, its VPGs and their tagged checkpoints.

use chrono::{DateTime, SecondsFormat, Utc};
use rewind_core::{
    CancellationToken, ErrorKind, FlrAvailability, GuardNext, GuardReport, GuardRequest, Outcome,
    Protection, Rewind, Stage, TagList, Verdict,
};

use crate::exit::CliError;
use crate::output::{Reply, Table};
use crate::progress::ProgressLine;

/// `rewind find <vm>`: the result is the core's `Protection`.
pub async fn find(rewind: &Rewind, vm: &str) -> Result<Reply, CliError> {
    let protection = rewind.find_protection(vm).await?;
    Reply::new(&protection, protection_text(&protection))
}

/// A protection as people read it: the VM, then one row per VPG.
pub fn protection_text(p: &Protection) -> String {
    let mut out = format!("{}\n\n", p.headline());
    let mut t = Table::new(&[
        "VPG",
        "STATUS",
        "SUBSTATUS",
        "PROTECTED -> RECOVERY",
        "PROTECTING",
        "FLR",
    ]);
    for v in &p.vpgs {
        t.row(vec![
            v.vpg_name.clone(),
            v.status.to_string(),
            v.substatus.to_string(),
            format!("{} -> {}", v.protected_site, v.recovery_site),
            if v.protecting { "yes" } else { "no" }.into(),
            match &v.flr {
                FlrAvailability::Available { site } => format!("via {site}"),
                FlrAvailability::Unavailable { .. } => "no".into(),
            },
        ]);
    }
    out.push_str(&t.render());
    let reasons: Vec<String> = p
        .vpgs
        .iter()
        .filter_map(|v| v.reason.as_ref().map(|r| format!("  {}: {r}", v.vpg_name)))
        .collect();
    if !reasons.is_empty() {
        out.push_str("\nnot protecting:\n");
        out.push_str(&reasons.join("\n"));
        out.push('\n');
    }
    let flr: Vec<String> = p
        .vpgs
        .iter()
        .filter_map(|v| match &v.flr {
            FlrAvailability::Unavailable { reason } => Some(format!("  {}: {reason}", v.vpg_name)),
            FlrAvailability::Available { .. } => None,
        })
        .collect();
    if !flr.is_empty() {
        out.push_str("\nno FLR from here:\n");
        out.push_str(&flr.join("\n"));
        out.push('\n');
    }
    for n in &p.notes {
        out.push_str(&format!("\nnote: {n}\n"));
    }
    out
}

/// `rewind guard <vm> ...`: the result is the core's `GuardReport`; a guard that is not `guarded`
/// exits non-zero, with the report still printed.
pub async fn guard(
    rewind: &Rewind,
    req: GuardRequest,
    quiet: bool,
    stop: &CancellationToken,
) -> Result<Reply, CliError> {
    let progress = ProgressLine::new(format!("guard {}", req.vm), quiet).watching(rewind);
    let report = rewind.guard_until(req, &progress, stop).await;
    progress.finish();
    let report = report?;
    let reply = Reply::new(&report, guard_text(&report))?;
    Ok(match guard_failure(&report) {
        Some((kind, message)) => reply.failed(kind, message),
        None => reply,
    })
}

/// A guard report as people read it: the core's headline, the tag, one row per VPG, the notes.
pub fn guard_text(r: &GuardReport) -> String {
    let mut out = format!("{}\ntag: {}\n\n", r.headline(), r.tag);
    let mut t = Table::new(&["VPG", "SITE", "OUTCOME", "TASK", "CHECKPOINT", "DETAIL"]);
    for v in &r.vpgs {
        let (outcome, task, checkpoint, detail) = match &v.outcome {
            Outcome::Tagged {
                task_id,
                checkpoint_id,
                ..
            } => (
                "tagged",
                task_id.clone().unwrap_or_default(),
                checkpoint_id.clone(),
                String::new(),
            ),
            Outcome::Skipped { reason } => {
                ("skipped", String::new(), String::new(), reason.clone())
            }
            Outcome::Failed {
                task_id,
                task_state,
                complete_reason,
            } => (
                "FAILED",
                task_id.clone(),
                String::new(),
                format!("{task_state}: {complete_reason}"),
            ),
            Outcome::StillRunning { task_id, stage, .. } => (
                "STILL RUNNING",
                task_id.clone(),
                String::new(),
                if *stage == Stage::Listing {
                    "Completed, not yet listed".into()
                } else {
                    "in progress; it was not stopped".into()
                },
            ),
            Outcome::Error { problem } => (
                "ERROR",
                problem.task_id().unwrap_or_default().to_owned(),
                String::new(),
                problem.in_row().to_string(),
            ),
        };
        t.row(vec![
            v.vpg_name.clone(),
            v.site.clone(),
            outcome.into(),
            task,
            checkpoint,
            detail,
        ]);
    }
    out.push_str(&t.render());
    let ways = r.ways_back();
    if !ways.is_empty() {
        out.push_str("way back, the shortest first:\n");
        for line in ways {
            out.push_str(&format!("  {line}\n"));
        }
    }
    let mut notes: Vec<String> = r
        .vpgs
        .iter()
        .flat_map(|v| v.notes.iter().map(move |n| format!("{}: {n}", v.vpg_name)))
        .collect();
    notes.extend(r.notes.iter().map(ToString::to_string));
    for n in notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out
}

/// Why a guard's report is a failure, as an error kind and one line: `None` when it is `guarded`.
/// The kind is the core's ([`GuardReport::error_kind`]): a failed insert task, an error around an
/// insert of its own kind (a ZVM that refused it, one that could not be reached), tasks still running
/// at the deadline (their own kind and exit code: not failed), or no protecting VPG; a verdict the
/// journal could not take is `internal` whatever Zerto holds. The line names the VPGs at fault
/// ([`GuardReport::problems`]), or the journal's problem, and what to do.
pub fn guard_failure(r: &GuardReport) -> Option<(ErrorKind, String)> {
    let kind = r.error_kind()?;
    let next = r.next()?;
    let what = format!("{} is NOT guarded for change {}", r.vm.name, r.change_id);
    if let Some(journal) = &r.journal_error {
        return Some((kind, format!("{what}: {journal}")));
    }
    let line = match r.verdict {
        Verdict::Guarded => return None,
        Verdict::StillRunning => format!(
            "{} is not guarded yet for change {}: Zerto task(s) {} were still running when the deadline came; they were not stopped and have not failed: run `rewind tags {} --change {}` in a while to see whether every protecting VPG lists the tag",
            r.vm.name,
            r.change_id,
            r.running_task_ids().join(", "),
            r.vm.name,
            r.change_id
        ),
        Verdict::NotGuarded => {
            let problems = r.problems();
            let why = match problems.is_empty() {
                true => "none of its VPGs is protecting, so no tagged checkpoint was taken (see the reasons above)".to_owned(),
                false => problems.join("; "),
            };
            format!("{what}: {why}; {}", next_step(r, &next))
        }
    };
    Some((kind, line))
}

/// The one next step after a guard that is not guarded, for a person at the command line.
fn next_step(r: &GuardReport, next: &GuardNext) -> String {
    let again = format!("--change {}", r.change_id);
    match next {
        GuardNext::AgainOnceAnswering { sites } => format!(
            "once {} answers, guard again with {again}: it takes over what was sent; until then do not rely on Zerto to rewind this change",
            sites.join(" and ")
        ),
        GuardNext::AgainAfterLooking => format!(
            "look at the VPGs named in the ZVM, then guard again with {again}; until then do not rely on Zerto to rewind this change"
        ),
        GuardNext::AgainAfterSync { vpgs } => format!(
            "guard again when the sync of {} is over (`rewind find {}` shows it)",
            vpgs.join(", "),
            r.vm.name
        ),
        GuardNext::NothingToTag | GuardNext::ListTagsLater | GuardNext::FixJournal => {
            "do not rely on Zerto to rewind this change".to_owned()
        }
    }
}

/// `rewind tags <vm> [--change ID]`: the result is the core's `TagList`. A VPG whose checkpoints could
/// not be read makes the list incomplete, and the command exits non-zero.
pub async fn tags(rewind: &Rewind, vm: &str, change_id: Option<&str>) -> Result<Reply, CliError> {
    let list = rewind.list_tags(vm, change_id).await?;
    let reply = Reply::new(&list, tags_text(&list))?;
    let unread: Vec<String> = list
        .vpgs
        .iter()
        .filter_map(|v| v.error.as_ref().map(|e| format!("VPG {}: {e}", v.vpg_name)))
        .collect();
    Ok(if unread.is_empty() {
        reply
    } else {
        reply.failed(
            ErrorKind::Connection,
            format!(
                "the tag list of {} is incomplete: {}",
                list.vm.name,
                unread.join("; ")
            ),
        )
    })
}

/// A timestamp as the tables show it.
pub fn when(t: Option<DateTime<Utc>>) -> String {
    t.map(|t| t.to_rfc3339_opts(SecondsFormat::Secs, true))
        .unwrap_or_default()
}

/// A tag list as people read it: the core's headline, then one row per tagged checkpoint.
pub fn tags_text(list: &TagList) -> String {
    let mut out = format!("{}\n\n", list.headline());
    let mut t = Table::new(&[
        "VPG",
        "CHECKPOINT",
        "TIME",
        "AGENT",
        "CHANGE",
        "ACTION",
        "STATE",
    ]);
    for v in &list.vpgs {
        if let Some(e) = &v.error {
            t.row(vec![v.vpg_name.clone(), format!("ERROR: {e}")]);
            continue;
        }
        if v.tags.is_empty() {
            t.row(vec![v.vpg_name.clone(), "(no tagged checkpoint)".into()]);
        }
        for tag in &v.tags {
            let (agent, change, action) = match &tag.parts {
                Some(p) => (p.agent.clone(), p.change_id.clone(), p.action.clone()),
                // A tag rewind did not write: show it whole.
                None => (String::new(), String::new(), tag.tag.clone()),
            };
            t.row(vec![
                v.vpg_name.clone(),
                tag.checkpoint_id.clone(),
                when(tag.timestamp),
                agent,
                change,
                action,
                tag.state.describe(v.read_at),
            ]);
        }
    }
    out.push_str(&t.render());
    out
}
