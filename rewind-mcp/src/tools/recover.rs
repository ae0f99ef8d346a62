//! Going back from a tagged checkpoint beside production: `zerto_recover_file` (files, by FLR),
//! `zerto_failover_test` and `zerto_clone` (the whole VM, at the recovery site), their arguments and
//! their answers.

use std::path::PathBuf;
use std::sync::Arc;

use rewind_core::{
    FailoverTestAction, ProgressSink, RecoverFileReport, RecoverFileRequest, RecoveryOperation,
    RecoveryPlan, RecoveryTaskReport, RecoveryVerdict,
};
use rmcp::model::{CallToolResult, JsonObject};
use rmcp::schemars::{self, JsonSchema};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{tool, tool_router};
use serde::{Deserialize, Serialize};

use super::call::{arguments, or_answer};
use crate::args::{self, given};
use crate::reply::{self, Said};
use crate::server::RewindServer;

/// zerto_recover_file.
const RECOVER_FILE: &str = "\
File-level recovery (FLR): get files back as they were at the tagged checkpoint of a change, while the VM keeps running. \
Call it after a change went wrong and the human agreed to get those files back. \
change_id: the change id given to the guard (its newest tag is used), or a tag exactly. \
paths: guest paths, partition-rooted and /-separated (sda1/etc/app/app.conf, C:/ProgramData/App/app.ini); a folder comes back whole. \
destination: an absolute folder on the machine running this server; each file lands under its guest path there \
(<destination>/sda1/etc/app/app.conf), and an existing file is never replaced (choose a new folder). \
FLR runs at the VPG's recovery site, whose ZVM must be configured; the session is always unmounted afterwards. \
The result lists each file written with its size and sha256. It never touches the production VM: copying a file back onto the VM is a separate step for the human to approve.";

/// zerto_failover_test.
const FAILOVER_TEST: &str = "\
Start or stop a failover test of a VM from the tagged checkpoint of a change: a copy of the VM starts at the recovery site \
in an isolated test network, while production keeps running. Call start when the human wants to see the VM as it was before the change; \
call stop when they are done, with success (did the test VM look right, as the human judged it) and a short summary. Stopping removes the test VM. \
change_id: the change id given to the guard, or a tag exactly. The Zerto task is read until it ends; a task still running is reported with its id, never dropped, as a tool error with verdict still_running: do not report it done and do not start it again. \
This is never a live failover.";

/// zerto_clone.
const CLONE: &str = "\
Start or abort an offsite clone of a VM from the tagged checkpoint of a change: a lasting copy of the VM as it was is created at the recovery site, \
while production keeps running. Call start when the human wants that copy; abort stops a clone still being made and removes it. \
change_id: the change id given to the guard, or a tag exactly. The Zerto task is read until it ends; a task still running is reported with its id, never dropped, as a tool error with verdict still_running: do not report it done and do not start it again.";

/// `zerto_recover_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RecoverFileArgs {
    /// The VM whose files to get back: its name, host name, IP address or vmIdentifier.
    pub(super) vm: String,
    #[schemars(description = args::GUARDED_CHANGE)]
    pub(super) change_id: String,
    /// Guest paths, partition-rooted and /-separated: sda1/etc/app/app.conf,
    /// C:/ProgramData/App/app.ini. A folder is recovered whole.
    pub(super) paths: Vec<String>,
    /// An absolute folder on the machine running this server; created when missing. Files land
    /// under their guest path (<destination>/sda1/etc/app/app.conf); an existing file is never
    /// replaced.
    pub(super) destination: String,
    #[serde(default)]
    #[schemars(description = args::SITES)]
    pub(super) sites: Vec<String>,
    #[serde(default)]
    #[schemars(description = args::RECOVERY_VPG)]
    pub(super) vpg: Option<String>,
    /// Write nothing: answer what would be written where, each file's size and write time at the
    /// tag and now, and a plan id.
    #[serde(default)]
    pub(super) dry_run: bool,
    /// The plan id a dry run answered: the recovery runs only while the files are as it found
    /// them.
    #[serde(default)]
    pub(super) plan: Option<String>,
}

/// What to do with a failover test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum TestAction {
    /// Start a failover test at the tagged checkpoint.
    Start,
    /// Stop the failover test running for the VM, recording its result.
    Stop,
}

/// `zerto_failover_test`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct FailoverTestArgs {
    #[schemars(description = args::VM)]
    pub(super) vm: String,
    #[schemars(description = args::GUARDED_CHANGE)]
    pub(super) change_id: String,
    /// start or stop.
    pub(super) action: TestAction,
    /// With stop: whether the test succeeded, as the human judged it (required for stop).
    #[serde(default)]
    pub(super) success: Option<bool>,
    /// With stop: what the test showed, in a few words.
    #[serde(default)]
    pub(super) summary: Option<String>,
    #[serde(default)]
    #[schemars(description = args::SITES)]
    pub(super) sites: Vec<String>,
    #[serde(default)]
    #[schemars(description = args::RECOVERY_VPG)]
    pub(super) vpg: Option<String>,
}

/// What to do with an offsite clone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum CloneAction {
    /// Start an offsite clone at the tagged checkpoint.
    Start,
    /// Abort the clone running for the VM.
    Abort,
}

/// `zerto_clone`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct CloneArgs {
    #[schemars(description = args::VM)]
    pub(super) vm: String,
    #[schemars(description = args::GUARDED_CHANGE)]
    pub(super) change_id: String,
    /// start or abort.
    pub(super) action: CloneAction,
    #[serde(default)]
    #[schemars(description = args::SITES)]
    pub(super) sites: Vec<String>,
    #[serde(default)]
    #[schemars(description = args::RECOVERY_VPG)]
    pub(super) vpg: Option<String>,
}

#[tool_router(router = recover_tools, vis = "pub(super)")]
impl RewindServer {
    #[tool(
        name = "zerto_recover_file",
        description = RECOVER_FILE,
        input_schema = args::schema::<RecoverFileArgs>(),
        output_schema = reply::output_schema::<RecoverFileAnswer<'static>>(),
        annotations(
            title = "Recover files from a tagged checkpoint (FLR)",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn recover_file(
        &self,
        ctx: RequestContext<RoleServer>,
        args: JsonObject,
    ) -> CallToolResult {
        let a: RecoverFileArgs = or_answer!(arguments("zerto_recover_file", args));
        let rewind = or_answer!(self.recovering(&a.sites, a.vpg.as_deref(), &ctx));
        let dry_run = a.dry_run;
        let request = or_answer!(file_request(a));
        if dry_run {
            let stop = self.call.stop.clone().unwrap_or_default();
            let preview = move |sink: Arc<dyn ProgressSink>| async move {
                rewind.preview_recover_file(request, &*sink, &stop).await
            };
            return self
                .detached(
                    &ctx,
                    "the preview",
                    preview,
                    plan_answer,
                    reply::recovery_failure,
                )
                .await;
        }
        self.detached(
            &ctx,
            "the file-level recovery",
            move |sink| async move { rewind.recover_file(request, &*sink).await },
            recover_file_answer,
            reply::recovery_failure,
        )
        .await
    }

    #[tool(
        name = "zerto_failover_test",
        description = FAILOVER_TEST,
        input_schema = args::schema::<FailoverTestArgs>(),
        output_schema = reply::output_schema::<rewind_core::RecoveryTaskReport>(),
        annotations(
            title = "Start or stop a failover test from a tagged checkpoint",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn failover_test(
        &self,
        ctx: RequestContext<RoleServer>,
        args: JsonObject,
    ) -> CallToolResult {
        let a: FailoverTestArgs = or_answer!(arguments("zerto_failover_test", args));
        let action = match (a.action, a.success) {
            (TestAction::Start, _) => FailoverTestAction::Start,
            (TestAction::Stop, Some(success)) => FailoverTestAction::Stop {
                success,
                summary: given(a.summary).unwrap_or_default(),
            },
            (TestAction::Stop, None) => {
                return reply::bad_arguments(&args::BadArguments {
                    message: "zerto_failover_test did not run: stopping a test records whether it succeeded, and success was not given. Nothing was done; ask the human whether the test VM was good, and call again with success true or false (and a summary).".to_string(),
                });
            }
        };
        let rewind = or_answer!(self.recovering(&a.sites, a.vpg.as_deref(), &ctx));
        let (vm, change) = (a.vm, a.change_id);
        self.detached(
            &ctx,
            "the failover test",
            move |sink| async move { rewind.failover_test(&vm, &change, action, &*sink).await },
            recovery_task_answer,
            reply::recovery_failure,
        )
        .await
    }

    #[tool(
        name = "zerto_clone",
        description = CLONE,
        input_schema = args::schema::<CloneArgs>(),
        output_schema = reply::output_schema::<rewind_core::RecoveryTaskReport>(),
        annotations(
            title = "Start or abort an offsite clone from a tagged checkpoint",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn clone(&self, ctx: RequestContext<RoleServer>, args: JsonObject) -> CallToolResult {
        let a: CloneArgs = or_answer!(arguments("zerto_clone", args));
        let action = match a.action {
            CloneAction::Start => rewind_core::CloneAction::Start,
            CloneAction::Abort => rewind_core::CloneAction::Abort,
        };
        let rewind = or_answer!(self.recovering(&a.sites, a.vpg.as_deref(), &ctx));
        let (vm, change) = (a.vm, a.change_id);
        self.detached(
            &ctx,
            "the offsite clone",
            move |sink| async move { rewind.offsite_clone(&vm, &change, action, &*sink).await },
            recovery_task_answer,
            reply::recovery_failure,
        )
        .await
    }
}

/// The file recovery a call asks for, or why its destination cannot be one. An agent never replaces
/// a file: a recovery only adds files, so a wrong destination cannot destroy anything. A human who
/// wants to replace files uses the rewind CLI.
fn file_request(a: RecoverFileArgs) -> Result<RecoverFileRequest, CallToolResult> {
    let destination = PathBuf::from(a.destination.trim());
    if !destination.is_absolute() {
        return Err(reply::bad_arguments(&args::BadArguments {
            message: format!(
                "zerto_recover_file did not run: destination {:?} is not an absolute path, and this server's working folder is not yours to guess. Nothing was done; give an absolute folder, e.g. /tmp/recovered-{}.",
                a.destination,
                a.change_id.trim()
            ),
        }));
    }
    Ok(RecoverFileRequest {
        vm: a.vm,
        change: a.change_id,
        paths: a.paths,
        destination,
        overwrite: false,
        plan: given(a.plan),
    })
}

/// The answer of a file-level recovery: what was written where, and whether the session was unmounted.
fn recover_file_answer(report: &RecoverFileReport) -> CallToolResult {
    let next = if report.unmount.unmounted {
        "Tell the human which files came back and where they are; the production VM was not touched."
    } else {
        "Tell the human to unmount that session in the ZVM, and which files came back and where."
    };
    reply::ok(
        Said::new(report.headline(), next),
        &RecoverFileAnswer::Recovered(report),
    )
}

/// What `zerto_recover_file` answers: the files written, or with `dry_run` the plan.
#[derive(Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(untagged)]
enum RecoverFileAnswer<'a> {
    /// What was written.
    Recovered(&'a RecoverFileReport),
    /// What would be written, and its plan id.
    Previewed(&'a RecoveryPlan),
}

/// The answer of a dry run: the plan, and to show it to the human before running it.
fn plan_answer(plan: &RecoveryPlan) -> CallToolResult {
    let headline = format!(
        "PLAN {}: {} file(s) of {} would be recovered from change {} into {}; nothing was written",
        plan.plan_id,
        plan.files.len(),
        plan.vm.name,
        plan.change_id,
        plan.destination.display()
    );
    let next = format!(
        "Show the human each file with its size and write time at the tag and now; once they approve, call zerto_recover_file again with plan {} and without dry_run.",
        plan.plan_id
    );
    reply::ok(
        Said::new(headline, next),
        &RecoverFileAnswer::Previewed(plan),
    )
}

/// The answer of a failover test or clone operation: an error while its task still runs, as a guard's
/// is, since the operation is not done and must not be reported so or started again.
pub(super) fn recovery_task_answer(report: &RecoveryTaskReport) -> CallToolResult {
    let next = match (report.verdict, &report.operation) {
        (RecoveryVerdict::StillRunning, _) => format!(
            "Do not report the {} as done, and do not start it again: wait, then look at task {} in the ZVM, or ask the human to.",
            report.operation.name(),
            report.task.task_id
        ),
        (_, RecoveryOperation::FailoverTestStart) => format!(
            "Check the test VM in its isolated network, then stop the test with zerto_failover_test action stop for change {}, recording whether it passed.",
            report.change_id
        ),
        (_, RecoveryOperation::CloneStart) => {
            "Tell the human where the clone is; it runs at the recovery site beside production."
                .to_string()
        }
        (RecoveryVerdict::Waiting, _) => format!(
            "Tell the human the VM is restored and waits for their word: only they commit it (`rewind restore commit {}`) or roll it back (`rewind restore rollback {}`); nobody committing it rolls it back by itself. Never commit it yourself.",
            report.vm.name, report.vm.name
        ),
        _ => "Tell the human what was done and recorded.".to_string(),
    };
    let headline = match report.verdict {
        RecoveryVerdict::StillRunning => format!("{}; it has not failed", report.headline()),
        RecoveryVerdict::Completed | RecoveryVerdict::Waiting => report.headline(),
    };
    let running = report.verdict == RecoveryVerdict::StillRunning;
    reply::answer(Said::new(headline, next), report, running)
}
