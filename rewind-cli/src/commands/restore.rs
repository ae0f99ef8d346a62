//! `rewind restore vm|commit|rollback|status`: a journal VM restore from a change's tag, in two
//! steps, each only on a person's word. At a terminal the person is asked, told which VM, which
//! checkpoint and what is lost; a script confirms with `--yes` (the change id for a restore, the VM
//! for a commit or a rollback). Without either, nothing is sent.

use std::io::{BufRead, IsTerminal, Write};

use rewind_core::{ErrorKind, RestoreRequest, RestoreStatus, RestoreTarget, Rewind};

use crate::cli::RestoreCommand;
use crate::context::as_agent;
use crate::exit::CliError;
use crate::output::{Reply, Table};
use crate::progress::ProgressLine;

/// Runs one restore command.
pub async fn restore(
    rewind: &Rewind,
    command: RestoreCommand,
    json: bool,
    quiet: bool,
) -> Result<Reply, CliError> {
    match command {
        RestoreCommand::Vm {
            vm,
            change,
            as_name,
            in_place,
            vpg,
            agent,
            yes,
        } => {
            let target = match (as_name, in_place) {
                (Some(name), false) => RestoreTarget::Alongside { name },
                (None, true) => RestoreTarget::InPlace,
                _ => {
                    return Err(CliError::new(
                        ErrorKind::Usage,
                        "give exactly one of --as NAME (a new VM beside it) and --in-place",
                    ));
                }
            };
            let question = restore_question(&vm, &change, &target);
            confirm(&question, yes.as_deref(), &change, "--yes CHANGE_ID", json)?;
            let mut rewind = as_agent(rewind, agent.as_deref());
            if let Some(vpg) = vpg {
                rewind = rewind.only_vpg(&vpg);
            }
            let progress = ProgressLine::new(format!("restore {vm}"), quiet).watching(&rewind);
            let req = RestoreRequest { vm, change, target };
            let report = rewind.restore_vm(req, &progress).await;
            progress.finish();
            super::recover::task_reply(&report?)
        }
        RestoreCommand::Commit { vm, yes, agent } => {
            let question = format!(
                "Commit the restore of {vm}? What it restored stays, and the writes it replaced are gone for good."
            );
            confirm(&question, yes.as_deref(), &vm, "--yes VM", json)?;
            end(&as_agent(rewind, agent.as_deref()), &vm, true, quiet).await
        }
        RestoreCommand::Rollback { vm, yes, agent } => {
            let question = format!(
                "Roll back the restore of {vm}? The VM goes back to how it was before the restore (a VM restored beside it is removed)."
            );
            confirm(&question, yes.as_deref(), &vm, "--yes VM", json)?;
            end(&as_agent(rewind, agent.as_deref()), &vm, false, quiet).await
        }
        RestoreCommand::Status => {
            let status = rewind.restore_status().await?;
            Reply::new(&status, status_text(&status))
        }
    }
}

/// A commit or a rollback, waited for.
async fn end(rewind: &Rewind, vm: &str, commit: bool, quiet: bool) -> Result<Reply, CliError> {
    let verb = if commit { "commit" } else { "rollback" };
    let progress = ProgressLine::new(format!("restore {verb} {vm}"), quiet).watching(rewind);
    let report = match commit {
        true => rewind.restore_commit(vm, &progress).await,
        false => rewind.restore_rollback(vm, &progress).await,
    };
    progress.finish();
    super::recover::task_reply(&report?)
}

/// What the person is asked before a restore: the VM, the change, and what is lost.
fn restore_question(vm: &str, change: &str, target: &RestoreTarget) -> String {
    match target {
        RestoreTarget::Alongside { name } => format!(
            "Restore {vm} to the tag of change {change} as a new VM {name}, beside it? {vm} keeps running as it is; {name} holds its disks as they were at the tag."
        ),
        RestoreTarget::InPlace => format!(
            "Restore {vm} IN PLACE to the tag of change {change}? Every write to {vm} after the tag is lost once you commit; until then `rewind restore rollback {vm}` undoes it."
        ),
    }
}

/// Goes on only on a person's word: `yes` equal to `expected`, or a `y` typed at a terminal.
fn confirm(
    question: &str,
    yes: Option<&str>,
    expected: &str,
    flag: &str,
    json: bool,
) -> Result<(), CliError> {
    if let Some(given) = yes {
        if given.trim() == expected.trim() {
            return Ok(());
        }
        return Err(CliError::new(
            ErrorKind::Usage,
            format!(
                "{flag} is {given:?}, and it must repeat {expected:?} exactly; nothing was sent"
            ),
        ));
    }
    let interactive = !json && std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    if !interactive {
        return Err(CliError::new(
            ErrorKind::Usage,
            format!(
                "{question} Nothing was sent: a person confirms at a terminal, or a script gives {flag} ({expected:?})."
            ),
        ));
    }
    let mut err = std::io::stderr();
    let _ = write!(err, "{question} [y/N] ");
    let _ = err.flush();
    let mut answer = String::new();
    let _ = std::io::stdin().lock().read_line(&mut answer);
    match answer.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => Ok(()),
        _ => Err(CliError::new(
            ErrorKind::Refused,
            "not confirmed; nothing was sent",
        )),
    }
}

/// The waiting restores as people read them.
fn status_text(s: &RestoreStatus) -> String {
    if s.waiting.is_empty() {
        return "No restore this machine journaled waits for a commit or a rollback.\n".into();
    }
    let mut t = Table::new(&[
        "VM",
        "CHANGE",
        "RESTORE",
        "VPG",
        "TASK",
        "STATE",
        "ROLLS BACK AT",
    ]);
    for w in &s.waiting {
        t.row(vec![
            w.vm.clone(),
            w.change_id.clone(),
            w.action.clone(),
            w.vpg_name.clone(),
            w.task_id.clone(),
            w.task_state.clone(),
            w.rolls_back_at.map_or_else(
                || "-".into(),
                |t| t.format("%Y-%m-%d %H:%M UTC").to_string(),
            ),
        ]);
    }
    format!(
        "{} restore(s) wait for `rewind restore commit <vm>` or `rewind restore rollback <vm>`:\n\n{}",
        s.waiting.len(),
        t.render()
    )
}
