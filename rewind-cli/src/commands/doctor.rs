//! `rewind doctor`: the core's checks of every site and local file, and which agent hosts run the
//! hook. It only reads.

use std::path::Path;

use rewind_core::doctor::{Check, Diagnosis, Verdict};
use rewind_core::{ErrorKind, Rewind};

use crate::exit::CliError;
use crate::hook::Host;
use crate::hook::install::{Scope, settings_file};
use crate::output::Reply;

/// Runs every check. A failed check makes the command fail, with the kind of the first one.
pub async fn doctor(rewind: &Rewind, project: &Path, home: &Path) -> Result<Reply, CliError> {
    let mut diagnosis = rewind.doctor().await;
    // No site is a finding, and the local checks still run: the catalog, the journal and the hook
    // are what an agent's first call meets whatever the ZVMs.
    if let Err(no_sites) = rewind.config().require_sites() {
        let check = Check::new("local", "configuration", Verdict::Fail, no_sites.to_string())
            .fix("set ZVM_URL with ZVM_CLIENT_ID and ZVM_CLIENT_SECRET, or add a [sites.<name>] table (docs/configuration.md)");
        diagnosis.checks.insert(0, check);
    }
    diagnosis.checks.push(hook_check(project, home));
    let diagnosis = Diagnosis::of(diagnosis.checks);
    let human = human(&diagnosis);
    let reply = Reply::new(&diagnosis, human)?;
    let Some(first) = diagnosis.checks.iter().find(|c| c.verdict == Verdict::Fail) else {
        return Ok(reply);
    };
    let kind = match first.check.as_str() {
        "reachable" | "tls" | "credential" => ErrorKind::Connection,
        "permissions" | "vpgs" => ErrorKind::Refused,
        "configuration" => ErrorKind::Usage,
        _ => ErrorKind::Internal,
    };
    Ok(reply.failed(
        kind,
        format!(
            "{} of {} checks failed, the first: {} {}: {}",
            diagnosis.failed,
            diagnosis.checks.len(),
            first.scope,
            first.check,
            first.detail
        ),
    ))
}

/// The diagnosis of a configuration rewind cannot use at all (a `ca_cert` that cannot be read, a
/// bad URL, no site): one failed check naming it.
pub fn unusable(error: &CliError) -> Result<Reply, CliError> {
    let check = Check::new("local", "configuration", Verdict::Fail, error.to_string())
        .fix("fix what it names, then run `rewind doctor` again");
    let diagnosis = Diagnosis::of(vec![check]);
    let human = human(&diagnosis);
    Ok(Reply::new(&diagnosis, human)?.failed(error.0.kind, error.to_string()))
}

/// Which hosts' settings (the user's, and this folder's) run `rewind hook pre-tool-use`.
fn hook_check(project: &Path, home: &Path) -> Check {
    let mut installed = Vec::new();
    for host in Host::ALL {
        for scope in [Scope::User, Scope::Project] {
            let file = settings_file(host, scope, project, home);
            let runs_it =
                std::fs::read_to_string(&file).is_ok_and(|text| text.contains("hook pre-tool-use"));
            if runs_it {
                installed.push(format!("{} ({})", host.title(), file.display()));
            }
        }
    }
    if installed.is_empty() {
        Check::new(
            "local",
            "hook",
            Verdict::Warn,
            "no agent host's settings here run the hook: an agent's change to an unguarded VM is not stopped",
        )
        .fix("rewind hook install --host claude-code (or vscode, copilot-cli, codex, gemini-cli, cursor)")
    } else {
        Check::new(
            "local",
            "hook",
            Verdict::Pass,
            format!("the hook runs in {}", installed.join(", ")),
        )
    }
}

fn human(diagnosis: &Diagnosis) -> String {
    let mut out = String::new();
    let mut scope = "";
    for check in &diagnosis.checks {
        if check.scope != scope {
            scope = &check.scope;
            out.push_str(&format!("{scope}\n"));
        }
        let mark = match check.verdict {
            Verdict::Pass => "pass",
            Verdict::Warn => "WARN",
            Verdict::Fail => "FAIL",
        };
        out.push_str(&format!("  {mark}  {}: {}\n", check.check, check.detail));
        if let Some(fix) = &check.fix {
            for (n, line) in fix.lines().enumerate() {
                let lead = if n == 0 { "fix:" } else { "    " };
                out.push_str(&format!("        {lead} {line}\n"));
            }
        }
    }
    out.push_str(&format!(
        "{} passed, {} warned, {} failed\n",
        diagnosis.passed, diagnosis.warned, diagnosis.failed
    ));
    out
}
