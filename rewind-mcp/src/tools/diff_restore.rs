//! Looking at and undoing a change in place: `zerto_diff_since_tag` (what changed in a VM's files
//! since a tag) and `zerto_restore_vm` (the VM back to the tag, on a person's yes and commit), their
//! arguments and their answers.

use rewind_core::{
    DiffReport, DiffRequest, ErrorKind, ErrorReport, RecoveryTaskReport, RestoreRequest,
    RestoreTarget, Rewind,
};
use rmcp::model::{CallToolResponse, CallToolResult, JsonObject};
use rmcp::schemars::{self, JsonSchema};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{tool, tool_router};
use serde::Deserialize;

use std::sync::Arc;

use rewind_core::ProgressSink;

use super::approval;
use super::call::{arguments, or_answer};
use super::consent::{Consent, Question};
use super::recover::recovery_task_answer;
use crate::args::{self, given};
use crate::form::FormRound;
use crate::reply::{self, Said};
use crate::roles;
use crate::server::RewindServer;

/// zerto_diff_since_tag.
const DIFF_SINCE_TAG: &str = "\
What changed in a VM's files since the tagged checkpoint of a change: each file added, removed or changed (size and last write time, \
at the tag and later), read from Zerto's journal by mounting the tag and a later checkpoint in turn (FLR at the VPG's recovery site). \
Call it when a change may have gone wrong, before proposing what to recover, and summarize the counts and the list for the human. \
change_id: the change id given to the guard, or a tag exactly. paths: guest folders or files to compare, partition-rooted \
(sda1/etc/app, C:/ProgramData/App); leave it out for every partition (slower). against: latest (the default: the VM as it is now, \
within Zerto's RPO) or a checkpoint identifier of the same VPG. content: true adds a unified diff of each changed text file within \
a size cap; ask for it only when the human wants to see the lines (it needs the recover role on a team server). \
A size or time the ZVM did not give is said as unknown; a walk that hit its bounds says where it stopped. Nothing is written to the VM.";

/// zerto_restore_vm.
const RESTORE_VM: &str = "\
Propose restoring a VM to the tagged checkpoint of a change by a journal VM restore, when files alone cannot undo what went wrong \
(a broken boot, a bad package upgrade). Over stdio the server asks the human every time, naming the VM, the checkpoint's time and what is lost, \
and restores nothing without their yes; a client that cannot show the human a form gets a refusal. On a team server the call is held for \
another person's approval: the answer names its address; once approved, make the identical call again and it runs once. \
as_name: restore it as a new VM beside the original (suggest this first: the VM keeps running as it is); in_place: restore the VM itself, \
losing every write after the tag once committed. Only from a VPG whose journal is at the VM's own site. \
The restore then waits: only the human commits it (rewind restore commit) or rolls it back (rewind restore rollback); never claim it is committed.";

/// The form's message before a journal VM restore.
pub(super) fn restore_message(
    vm: &str,
    change: &str,
    when: Option<&str>,
    as_name: Option<&str>,
) -> String {
    let at = when.map_or_else(|| "its tag".to_string(), |w| format!("its tag of {w}"));
    match as_name {
        Some(name) => format!(
            "An agent proposes restoring VM {vm} to {at} (change {change}) as a new VM {name}, beside it: {vm} keeps running as it is. The restore waits for your commit or rollback (rewind restore commit or rollback {vm}). Restore it?"
        ),
        None => format!(
            "An agent proposes restoring VM {vm} IN PLACE to {at} (change {change}): every write to {vm} after that is lost once you commit. Until then `rewind restore rollback {vm}` undoes it. Restore it?"
        ),
    }
}

/// `zerto_diff_since_tag`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct DiffArgs {
    #[schemars(description = args::VM)]
    pub(super) vm: String,
    #[schemars(description = args::GUARDED_CHANGE)]
    pub(super) change_id: String,
    /// Guest folders or files to compare, partition-rooted and /-separated: sda1/etc/app,
    /// C:/ProgramData/App. Leave it out for every partition.
    #[serde(default)]
    pub(super) paths: Vec<String>,
    /// latest (the default) or a checkpoint identifier of the same VPG.
    #[serde(default)]
    pub(super) against: Option<String>,
    /// Also a unified diff of each changed text file within the size cap.
    #[serde(default)]
    pub(super) content: bool,
    /// Ask only these configured sites (e.g. while another site is down). Leave it out to ask
    /// every site.
    #[serde(default)]
    pub(super) sites: Vec<String>,
    /// Diff the tag in this VPG (name or identifier) instead of the one the server prefers.
    #[serde(default)]
    pub(super) vpg: Option<String>,
}

/// `zerto_restore_vm`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RestoreArgs {
    #[schemars(description = args::VM)]
    pub(super) vm: String,
    /// The change id of the guard, or a tag exactly.
    pub(super) change_id: String,
    /// Restore it as a new VM of this name beside the VM (the VM keeps running as it is). Give
    /// this or in_place.
    #[serde(default)]
    pub(super) as_name: Option<String>,
    /// Restore the VM itself to the tag: every write after the tag is lost once the human commits.
    #[serde(default)]
    pub(super) in_place: bool,
    /// Restore from the tag in this VPG (name or identifier) instead of the one the server prefers.
    #[serde(default)]
    pub(super) vpg: Option<String>,
    /// Ask only these configured sites. Leave it out to ask every site.
    #[serde(default)]
    pub(super) sites: Vec<String>,
}

#[tool_router(router = diff_restore_tools, vis = "pub(super)")]
impl RewindServer {
    #[tool(
        name = "zerto_diff_since_tag",
        description = DIFF_SINCE_TAG,
        input_schema = args::schema::<DiffArgs>(),
        output_schema = reply::output_schema::<DiffReport>(),
        annotations(
            title = "What changed in a VM's files since a tag",
            read_only_hint = true,
            open_world_hint = true
        )
    )]
    async fn diff_since_tag(
        &self,
        ctx: RequestContext<RoleServer>,
        args: JsonObject,
    ) -> CallToolResult {
        let a: DiffArgs = or_answer!(arguments("zerto_diff_since_tag", args));
        if a.content
            && let Some(refused) = roles::refusal(self.rewind.config(), roles::DIFF_CONTENT, &ctx)
        {
            return refused;
        }
        let rewind = or_answer!(self.recovering(&a.sites, a.vpg.as_deref(), &ctx));
        let request = DiffRequest {
            vm: a.vm,
            change: a.change_id,
            paths: a.paths,
            against: given(a.against),
            content: a.content,
        };
        let stop = self.call.stop.clone().unwrap_or_default();
        self.detached(
            &ctx,
            "the diff",
            move |sink| async move { rewind.diff(request, &*sink, &stop).await },
            diff_answer,
            reply::recovery_failure,
        )
        .await
    }

    #[tool(
        name = "zerto_restore_vm",
        description = RESTORE_VM,
        input_schema = args::schema::<RestoreArgs>(),
        output_schema = reply::output_schema_holding::<RecoveryTaskReport>(),
        annotations(
            title = "Restore a VM to a tag (asks the human; they commit)",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn restore_vm(
        &self,
        ctx: RequestContext<RoleServer>,
        round: FormRound,
        args: JsonObject,
    ) -> CallToolResponse {
        let proposed = serde_json::Value::Object(args.clone());
        let a: RestoreArgs = or_answer!(arguments("zerto_restore_vm", args));
        let request = or_answer!(restore_request(&a));
        let rewind = or_answer!(self.recovering(&a.sites, a.vpg.as_deref(), &ctx));
        if crate::sign_in::caller(&ctx).is_some() {
            let what = restore_question(&rewind, &a, &request).await;
            let proposal = approval::proposal("zerto_restore_vm", &a.vm, proposed, what);
            let restore = |rewind: Rewind| {
                move |sink: Arc<dyn ProgressSink>| async move {
                    rewind.restore_vm(request, &*sink).await
                }
            };
            let run = approval::Run::new("the restore", restore, recovery_task_answer);
            return approval::on_approval(self, &ctx, &rewind, proposal, run)
                .await
                .into();
        }
        let question = Question {
            tool: "zerto_restore_vm",
            message: restore_question(&rewind, &a, &request).await,
            yes: "Yes: restore it (it then waits for my commit)".into(),
            no: "No: restore nothing".into(),
            about: serde_json::json!([a.vm, a.change_id, a.as_name, a.in_place, a.vpg, a.sites]),
        };
        match question.ask(&ctx, &round).await {
            Consent::Given => {}
            Consent::AskThroughClient(form) => return *form,
            Consent::Refused(why) => return restore_refused(&rewind, &request, &why).await.into(),
        }
        self.detached(
            &ctx,
            "the restore",
            move |sink| async move { rewind.restore_vm(request, &*sink).await },
            recovery_task_answer,
            reply::recovery_failure,
        )
        .await
        .into()
    }
}

/// The answer of a diff: the headline, and what to tell the human.
fn diff_answer(report: &DiffReport) -> CallToolResult {
    let c = report.counts;
    let next = match c.added + c.removed + c.changed + c.unknown {
        0 => "Tell the human that no file under the paths compared changed since the tag."
            .to_string(),
        _ => format!(
            "Summarize for the human what changed; if they want files back as they were, propose zerto_recover_file with change {} and the paths to restore.",
            report.change_id
        ),
    };
    reply::ok(Said::new(report.headline(), next), report)
}

/// The restore a call of `zerto_restore_vm` proposes, or why its arguments cannot be one.
fn restore_request(a: &RestoreArgs) -> Result<RestoreRequest, CallToolResult> {
    let name = given(a.as_name.clone());
    let target = match (name, a.in_place) {
        (Some(name), false) => RestoreTarget::Alongside { name },
        (None, true) => RestoreTarget::InPlace,
        _ => {
            return Err(reply::bad_arguments(&args::BadArguments {
                message: "zerto_restore_vm did not run: give exactly one of as_name (a new VM beside the original, which keeps running) and in_place true. Nothing was done; propose as_name first.".to_string(),
            }));
        }
    };
    Ok(RestoreRequest {
        vm: a.vm.clone(),
        change: a.change_id.clone(),
        target,
    })
}

/// What the human is asked: the VM, the tag's time when it can be read, and what is lost.
async fn restore_question(rewind: &Rewind, a: &RestoreArgs, request: &RestoreRequest) -> String {
    let tags = rewind.list_tags(&a.vm, Some(&a.change_id)).await.ok();
    let when = tags
        .and_then(|t| t.newest())
        .map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string());
    let name = match &request.target {
        RestoreTarget::Alongside { name } => Some(name.as_str()),
        RestoreTarget::InPlace => None,
    };
    restore_message(&a.vm, &a.change_id, when.as_deref(), name)
}

/// The answer when the human did not approve a restore: nothing restored, and the journal says so.
async fn restore_refused(rewind: &Rewind, request: &RestoreRequest, why: &str) -> CallToolResult {
    let mut message = format!(
        "nothing was restored: {why}; VM {} is as it was",
        request.vm
    );
    if let Err(e) = rewind.restore_declined(request, why).await {
        message.push_str(&format!(" (the journal could not record it: {e})"));
    }
    reply::report(ErrorReport::new(ErrorKind::Refused, message))
}
