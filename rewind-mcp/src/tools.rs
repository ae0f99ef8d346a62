//! The tools, each a few lines over rewind-core: read the arguments ([`crate::args`]), call the core,
//! answer ([`crate::reply`]). Descriptions live in [`crate::text`].
//!
//! Annotations say what each tool does to the world, because hosts act on them (Claude Code's plan
//! mode runs only `readOnlyHint: true` tools without asking):
//!
//! - find_protection, list_tags, journal: read-only. find_protection and list_tags read the ZVMs
//!   (open world); the journal is a local file (closed world).
//! - check_tool: read-only. It writes to the catalog only when the human, asked through the client's
//!   own form, ticks "remember"; that write is the human's act, not the agent's, and the catalog lists
//!   check_tool as read-only too, so the hook lets it run without a guard.
//! - guard_before_mutate: not read-only (it inserts tagged checkpoints into VPG journals), not
//!   destructive (it only adds: it never removes or changes a checkpoint, a VM or a VPG), not
//!   idempotent (every call adds new checkpoints), open world (the ZVMs).
//! - add_mutating_tool, add_read_only_tool: additive and idempotent writes to the local catalog (closed
//!   world). add_read_only_tool refuses to turn a mutating entry read-only, so it stays additive: an
//!   agent cannot talk its way out of a guard.
//! - recover_file: not read-only (it mounts an FLR session at the recovery site and writes files on
//!   this machine), not destructive: it only adds files, because this tool never replaces an existing
//!   file (rewind-core's `overwrite` stays off here), and the production VM is never touched. Not
//!   idempotent: a second call finds its files already there and refuses.
//! - failover_test and clone: destructive. Starting one only adds (a test VM in an isolated network,
//!   a clone at the recovery site) and production keeps running, but the same tool stops a test or
//!   aborts a clone, which removes the test VM or the partial clone; a host should ask before either.
//!   Not idempotent: a second start is refused by the ZVM or starts another.

use rewind_core::{
    CloneAction, DiffReport, DiffRequest, ErrorKind, ErrorReport, FailoverTestAction, GuardNext,
    GuardReport, GuardRequest, JournalFilter, Outcome, Protection, RecoverFileReport,
    RecoverFileRequest, RecoveryOperation, RecoveryPlan, RecoveryTaskReport, RecoveryVerdict,
    RestoreRequest, RestoreTarget, TagList, Verdict,
};
use rmcp::ErrorData as McpError;
use rmcp::handler::server::tool::{InputResponses, RequestState};
use rmcp::model::{CallToolResponse, CallToolResult, JsonObject};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{tool, tool_router};

use crate::args::{self, given};
use crate::reply::Said;
use crate::server::RewindServer;
use crate::{check, consent, progress, reply, text};

/// The journal records `zerto_journal` returns when not told how many.
pub const JOURNAL_DEFAULT_LAST: usize = 20;
/// The most journal records `zerto_journal` returns.
pub const JOURNAL_MAX_LAST: u32 = 500;

/// Reads a tool's arguments, or answers the call with what was wrong.
macro_rules! arguments {
    ($tool:expr, $args:expr) => {
        match args::parse($tool, $args) {
            Ok(a) => a,
            Err(e) => return reply::bad_arguments(&e).into(),
        }
    };
}

#[tool_router(vis = "pub(crate)")]
impl RewindServer {
    #[tool(
        name = "zerto_find_protection",
        description = text::FIND_PROTECTION,
        input_schema = args::schema::<args::FindArgs>(),
        output_schema = reply::output_schema::<rewind_core::Protection>(),
        annotations(title = "Find a VM's Zerto protection", read_only_hint = true, open_world_hint = true)
    )]
    async fn find_protection(&self, args: JsonObject) -> CallToolResult {
        let a: args::FindArgs = arguments!("zerto_find_protection", args);
        let rewind = match self.asking(&a.sites) {
            Ok(rewind) => rewind,
            Err(refused) => return refused,
        };
        match rewind.find_protection(&a.vm).await {
            Ok(p) => reply::ok(protection_said(&p), &p),
            Err(e) => reply::failure(&e),
        }
    }

    #[tool(
        name = "zerto_guard_before_mutate",
        description = text::GUARD,
        input_schema = args::schema::<args::GuardArgs>(),
        output_schema = reply::output_schema::<rewind_core::GuardReport>(),
        annotations(
            title = "Guard a VM with tagged checkpoints",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn guard_before_mutate(
        &self,
        ctx: RequestContext<RoleServer>,
        args: JsonObject,
    ) -> CallToolResult {
        let a: args::GuardArgs = arguments!("zerto_guard_before_mutate", args);
        let request = GuardRequest {
            vm: a.vm,
            agent: a.agent,
            action: a.action,
            change_id: a.change_id,
        };
        let rewind = match self.asking(&a.sites) {
            Ok(rewind) => rewind,
            Err(refused) => return refused,
        };
        let stop = self.call.stop.clone();
        let guard = progress::detached(self, &ctx, move |sink| async move {
            match stop {
                Some(stop) => rewind.guard_until(request, &*sink, &stop).await,
                None => rewind.guard(request, &*sink).await,
            }
        })
        .await;
        match guard {
            Ok(Ok(report)) => guard_answer(&report),
            Ok(Err(e)) => reply::failure(&e),
            Err(e) => stopped("the guard", &e),
        }
    }

    #[tool(
        name = "zerto_list_tags",
        description = text::LIST_TAGS,
        input_schema = args::schema::<args::ListTagsArgs>(),
        output_schema = reply::output_schema::<rewind_core::TagList>(),
        annotations(title = "List a VM's tagged checkpoints", read_only_hint = true, open_world_hint = true)
    )]
    async fn list_tags(&self, args: JsonObject) -> CallToolResult {
        let a: args::ListTagsArgs = arguments!("zerto_list_tags", args);
        let change_id = given(a.change_id);
        let rewind = match self.asking(&a.sites) {
            Ok(rewind) => rewind,
            Err(refused) => return refused,
        };
        match rewind.list_tags(&a.vm, change_id.as_deref()).await {
            Ok(tags) => tags_answer(&tags),
            Err(e) => reply::failure(&e),
        }
    }

    #[tool(
        name = "zerto_check_tool",
        description = text::CHECK_TOOL,
        input_schema = args::schema::<args::CheckToolArgs>(),
        output_schema = reply::output_schema::<check::ToolCheck>(),
        annotations(title = "Check whether a tool changes a VM", read_only_hint = true, open_world_hint = false)
    )]
    async fn check_tool(
        &self,
        ctx: RequestContext<RoleServer>,
        RequestState(state): RequestState,
        InputResponses(responses): InputResponses,
        args: JsonObject,
    ) -> Result<CallToolResponse, McpError> {
        let a: args::CheckToolArgs = match args::parse("zerto_check_tool", args) {
            Ok(a) => a,
            Err(e) => return Ok(reply::bad_arguments(&e).into()),
        };
        check::check_tool(&self.rewind, a, &ctx, state, responses).await
    }

    #[tool(
        name = "zerto_add_mutating_tool",
        description = text::ADD_MUTATING,
        input_schema = args::schema::<args::AddMutatingArgs>(),
        output_schema = reply::output_schema::<rewind_core::catalog::Classification>(),
        annotations(
            title = "Record a tool as mutating",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn add_mutating_tool(&self, args: JsonObject) -> CallToolResult {
        let a: args::AddMutatingArgs = arguments!("zerto_add_mutating_tool", args);
        let vm_arg = given(a.vm_arg);
        let recorded = crate::local_files::on_files(&self.rewind, move |r| {
            let catalog = r.catalog();
            catalog.add_mutating(&a.server, &a.tool, vm_arg.as_deref())?;
            catalog.classify(&a.server, &a.tool, None)
        })
        .await;
        match recorded {
            Ok(c) => reply::ok(
                Said::new(
                    format!("{}/{} is recorded as mutating", c.server, c.tool),
                    "Guard the VM it changes (zerto_guard_before_mutate) before every call of it.",
                ),
                &c,
            ),
            Err(e) => reply::failure(&e.into()),
        }
    }

    #[tool(
        name = "zerto_add_read_only_tool",
        description = text::ADD_READ_ONLY,
        input_schema = args::schema::<args::AddReadOnlyArgs>(),
        output_schema = reply::output_schema::<rewind_core::catalog::Classification>(),
        annotations(
            title = "Record a tool as read-only",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn add_read_only_tool(&self, args: JsonObject) -> CallToolResult {
        let a: args::AddReadOnlyArgs = arguments!("zerto_add_read_only_tool", args);
        let recorded = crate::local_files::on_files(&self.rewind, move |r| {
            let catalog = r.catalog();
            catalog.add_read_only_unless_mutating(&a.server, &a.tool)?;
            catalog.classify(&a.server, &a.tool, None)
        })
        .await;
        match recorded {
            Ok(c) => reply::ok(
                Said::new(
                    format!("{}/{} is recorded as read-only", c.server, c.tool),
                    "It runs without a checkpoint, and is not asked about again.",
                ),
                &c,
            ),
            Err(e) => reply::failure(&e.into()),
        }
    }

    #[tool(
        name = "zerto_journal",
        description = text::JOURNAL,
        input_schema = args::schema::<args::JournalArgs>(),
        output_schema = reply::output_schema::<rewind_core::audit_journal::JournalRead>(),
        annotations(title = "Read the audit journal", read_only_hint = true, open_world_hint = false)
    )]
    async fn journal(&self, args: JsonObject) -> CallToolResult {
        let a: args::JournalArgs = arguments!("zerto_journal", args);
        let last = match a.last {
            None => JOURNAL_DEFAULT_LAST,
            Some(n) if (1..=JOURNAL_MAX_LAST).contains(&n) => n as usize,
            Some(n) => {
                return reply::bad_arguments(&args::BadArguments {
                    message: format!(
                        "zerto_journal did not run: last is {n}, and it takes 1 to {JOURNAL_MAX_LAST}. Nothing was done; call it again with corrected arguments."
                    ),
                });
            }
        };
        let since = match given(a.since)
            .map(|s| rewind_core::audit_journal::since_of(&s))
            .transpose()
        {
            Ok(since) => since,
            Err(why) => {
                return reply::bad_arguments(&args::BadArguments {
                    message: format!(
                        "zerto_journal did not run: since is wrong: {why}. Nothing was done; call it again with corrected arguments."
                    ),
                });
            }
        };
        let filter = JournalFilter {
            vm: given(a.vm),
            change_id: given(a.change_id),
            person: given(a.person),
            since,
            last: Some(last),
        };
        match crate::local_files::on_files(&self.rewind, move |r| r.journal().read(&filter)).await {
            Ok(mut read) => {
                if self.over_http {
                    // The caller is on another machine: where this one keeps its files is not theirs.
                    read.path = None;
                }
                reply::ok(
                    Said::new(
                        read.headline(),
                        "A guard's tag is what a recovery goes back to (by its change id); guarding the same VM and change again within the hook window takes an interrupted or still-running attempt over.",
                    ),
                    &read,
                )
            }
            Err(e) if self.over_http => {
                tracing::warn!("zerto_journal: {e}");
                reply::report(rewind_core::ErrorReport::new(
                    rewind_core::ErrorKind::Internal,
                    "zerto_journal did not run: the team server's journal cannot be read now. Nothing was changed; its administrator finds why in the server's log.",
                ))
            }
            Err(e) => reply::failure(&e.into()),
        }
    }

    #[tool(
        name = "zerto_recover_file",
        description = text::RECOVER_FILE,
        input_schema = args::schema::<args::RecoverFileArgs>(),
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
        let a: args::RecoverFileArgs = arguments!("zerto_recover_file", args);
        let rewind = match self.recovering(&a.sites, a.vpg.as_deref(), &ctx) {
            Ok(rewind) => rewind,
            Err(refused) => return refused,
        };
        let destination = std::path::PathBuf::from(a.destination.trim());
        if !destination.is_absolute() {
            return reply::bad_arguments(&args::BadArguments {
                message: format!(
                    "zerto_recover_file did not run: destination {:?} is not an absolute path, and this server's working folder is not yours to guess. Nothing was done; give an absolute folder, e.g. /tmp/recovered-{}.",
                    a.destination,
                    a.change_id.trim()
                ),
            });
        }
        // An agent never replaces a file: a recovery only adds files, so a wrong destination cannot
        // destroy anything. A human who wants to replace files uses the rewind CLI.
        let request = RecoverFileRequest {
            vm: a.vm,
            change: a.change_id,
            paths: a.paths,
            destination,
            overwrite: false,
            plan: given(a.plan),
        };
        if a.dry_run {
            let stop = self.call.stop.clone().unwrap_or_default();
            let previewed = progress::detached(self, &ctx, move |sink| async move {
                rewind.preview_recover_file(request, &*sink, &stop).await
            })
            .await;
            return match previewed {
                Ok(Ok(plan)) => plan_answer(&plan),
                Ok(Err(e)) => reply::recovery_failure(&e),
                Err(e) => stopped("the preview", &e),
            };
        }
        let recovered = progress::detached(self, &ctx, move |sink| async move {
            rewind.recover_file(request, &*sink).await
        })
        .await;
        match recovered {
            Ok(Ok(report)) => recover_file_answer(&report),
            Ok(Err(e)) => reply::recovery_failure(&e),
            Err(e) => stopped("the file-level recovery", &e),
        }
    }

    #[tool(
        name = "zerto_diff_since_tag",
        description = text::DIFF_SINCE_TAG,
        input_schema = args::schema::<args::DiffArgs>(),
        output_schema = reply::output_schema::<rewind_core::DiffReport>(),
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
        let a: args::DiffArgs = arguments!("zerto_diff_since_tag", args);
        if a.content
            && let Some(refused) =
                crate::roles::refusal(self.rewind.config(), crate::roles::DIFF_CONTENT, &ctx)
        {
            return refused;
        }
        let rewind = match self.recovering(&a.sites, a.vpg.as_deref(), &ctx) {
            Ok(rewind) => rewind,
            Err(refused) => return refused,
        };
        let request = DiffRequest {
            vm: a.vm,
            change: a.change_id,
            paths: a.paths,
            against: given(a.against),
            content: a.content,
        };
        let stop = self.call.stop.clone().unwrap_or_default();
        let compared = progress::detached(self, &ctx, move |sink| async move {
            rewind.diff(request, &*sink, &stop).await
        })
        .await;
        match compared {
            Ok(Ok(report)) => diff_answer(&report),
            Ok(Err(e)) => reply::recovery_failure(&e),
            Err(e) => stopped("the diff", &e),
        }
    }

    #[tool(
        name = "zerto_failover_test",
        description = text::FAILOVER_TEST,
        input_schema = args::schema::<args::FailoverTestArgs>(),
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
        let a: args::FailoverTestArgs = arguments!("zerto_failover_test", args);
        let action = match (a.action, a.success) {
            (args::TestAction::Start, _) => FailoverTestAction::Start,
            (args::TestAction::Stop, Some(success)) => FailoverTestAction::Stop {
                success,
                summary: given(a.summary).unwrap_or_default(),
            },
            (args::TestAction::Stop, None) => {
                return reply::bad_arguments(&args::BadArguments {
                    message: "zerto_failover_test did not run: stopping a test records whether it succeeded, and success was not given. Nothing was done; ask the human whether the test VM was good, and call again with success true or false (and a summary).".to_string(),
                });
            }
        };
        let rewind = match self.recovering(&a.sites, a.vpg.as_deref(), &ctx) {
            Ok(rewind) => rewind,
            Err(refused) => return refused,
        };
        let (vm, change) = (a.vm, a.change_id);
        let done = progress::detached(self, &ctx, move |sink| async move {
            rewind.failover_test(&vm, &change, action, &*sink).await
        })
        .await;
        match done {
            Ok(Ok(report)) => recovery_task_answer(&report),
            Ok(Err(e)) => reply::recovery_failure(&e),
            Err(e) => stopped("the failover test", &e),
        }
    }

    #[tool(
        name = "zerto_clone",
        description = text::CLONE,
        input_schema = args::schema::<args::CloneArgs>(),
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
        let a: args::CloneArgs = arguments!("zerto_clone", args);
        let action = match a.action {
            args::CloneAction::Start => CloneAction::Start,
            args::CloneAction::Abort => CloneAction::Abort,
        };
        let rewind = match self.recovering(&a.sites, a.vpg.as_deref(), &ctx) {
            Ok(rewind) => rewind,
            Err(refused) => return refused,
        };
        let (vm, change) = (a.vm, a.change_id);
        let done = progress::detached(self, &ctx, move |sink| async move {
            rewind.offsite_clone(&vm, &change, action, &*sink).await
        })
        .await;
        match done {
            Ok(Ok(report)) => recovery_task_answer(&report),
            Ok(Err(e)) => reply::recovery_failure(&e),
            Err(e) => stopped("the offsite clone", &e),
        }
    }

    #[tool(
        name = "zerto_keep_way_back",
        description = text::KEEP_WAY_BACK,
        input_schema = args::schema::<args::KeepArgs>(),
        output_schema = reply::output_schema::<rewind_core::KeepReport>(),
        annotations(
            title = "Keep a change's tags past the journal (asks the human)",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = true
        )
    )]
    async fn keep_way_back(
        &self,
        ctx: RequestContext<RoleServer>,
        RequestState(state): RequestState,
        InputResponses(responses): InputResponses,
        args: JsonObject,
    ) -> Result<CallToolResponse, McpError> {
        let a: args::KeepArgs = match args::parse("zerto_keep_way_back", args) {
            Ok(a) => a,
            Err(e) => return Ok(reply::bad_arguments(&e).into()),
        };
        let question = consent::Question {
            tool: "zerto_keep_way_back",
            message: text::keep_message(&a.vm, &a.change_id),
            yes: "Yes: keep them past the journal".into(),
            no: "No: leave them to age out with the journal".into(),
            about: serde_json::json!([a.vm, a.change_id, a.sites]),
        };
        match question.ask(&ctx, state, responses).await {
            consent::Consent::Given => {}
            consent::Consent::AskThroughClient(form) => return Ok(*form),
            consent::Consent::Refused(why) => {
                let report = rewind_core::ErrorReport::new(
                    rewind_core::ErrorKind::Refused,
                    format!(
                        "nothing was kept: {why}; the tags of change {} age out with their journals",
                        a.change_id
                    ),
                );
                return Ok(reply::report(report).into());
            }
        }
        let rewind = match self.recovering(&a.sites, None, &ctx) {
            Ok(rewind) => rewind,
            Err(refused) => return Ok(refused.into()),
        };
        let (vm, change) = (a.vm, a.change_id);
        let done = progress::detached(self, &ctx, move |sink| async move {
            rewind.keep(&vm, &change, &*sink).await
        })
        .await;
        Ok(match done {
            Ok(Ok(report)) => keep_answer(&report),
            Ok(Err(e)) => reply::recovery_failure(&e),
            Err(e) => stopped("keeping the tags", &e),
        }
        .into())
    }

    #[tool(
        name = "zerto_restore_vm",
        description = text::RESTORE_VM,
        input_schema = args::schema::<args::RestoreArgs>(),
        output_schema = reply::output_schema::<RecoveryTaskReport>(),
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
        RequestState(state): RequestState,
        InputResponses(responses): InputResponses,
        args: JsonObject,
    ) -> Result<CallToolResponse, McpError> {
        let a: args::RestoreArgs = match args::parse("zerto_restore_vm", args) {
            Ok(a) => a,
            Err(e) => return Ok(reply::bad_arguments(&e).into()),
        };
        let request = match restore_request(&a) {
            Ok(request) => request,
            Err(refused) => return Ok(refused.into()),
        };
        let rewind = match self.recovering(&a.sites, a.vpg.as_deref(), &ctx) {
            Ok(rewind) => rewind,
            Err(refused) => return Ok(refused.into()),
        };
        let question = consent::Question {
            tool: "zerto_restore_vm",
            message: restore_question(&rewind, &a, &request).await,
            yes: "Yes: restore it (it then waits for my commit)".into(),
            no: "No: restore nothing".into(),
            about: serde_json::json!([a.vm, a.change_id, a.as_name, a.in_place, a.vpg, a.sites]),
        };
        match question.ask(&ctx, state, responses).await {
            consent::Consent::Given => {}
            consent::Consent::AskThroughClient(form) => return Ok(*form),
            consent::Consent::Refused(why) => {
                return Ok(restore_refused(&rewind, &request, &why).await.into());
            }
        }
        let done = progress::detached(self, &ctx, move |sink| async move {
            rewind.restore_vm(request, &*sink).await
        })
        .await;
        Ok(match done {
            Ok(Ok(report)) => recovery_task_answer(&report),
            Ok(Err(e)) => reply::recovery_failure(&e),
            Err(e) => stopped("the restore", &e),
        }
        .into())
    }
}

/// The restore a call of `zerto_restore_vm` proposes, or why its arguments cannot be one.
fn restore_request(a: &args::RestoreArgs) -> Result<RestoreRequest, CallToolResult> {
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
async fn restore_question(
    rewind: &rewind_core::Rewind,
    a: &args::RestoreArgs,
    request: &RestoreRequest,
) -> String {
    let tags = rewind.list_tags(&a.vm, Some(&a.change_id)).await.ok();
    let when = tags
        .and_then(|t| t.newest())
        .map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string());
    let name = match &request.target {
        RestoreTarget::Alongside { name } => Some(name.as_str()),
        RestoreTarget::InPlace => None,
    };
    text::restore_message(&a.vm, &a.change_id, when.as_deref(), name)
}

/// The answer when the human did not approve a restore: nothing restored, and the journal says so.
async fn restore_refused(
    rewind: &rewind_core::Rewind,
    request: &RestoreRequest,
    why: &str,
) -> CallToolResult {
    let mut message = format!(
        "nothing was restored: {why}; VM {} is as it was",
        request.vm
    );
    if let Err(e) = rewind.restore_declined(request, why).await {
        message.push_str(&format!(" (the journal could not record it: {e})"));
    }
    reply::report(ErrorReport::new(ErrorKind::Refused, message))
}

/// The answer of a keep: a success when at least one VPG's tag is kept.
fn keep_answer(report: &rewind_core::KeepReport) -> CallToolResult {
    let said = |next: &str| Said::new(report.summary().replace('\n', "; "), next);
    match report.error_kind() {
        None => reply::ok(
            said(
                "Tell the human until when each tag is kept, and which VPGs could not keep theirs.",
            ),
            report,
        ),
        Some(_) => reply::answer(
            said(
                "Nothing more was kept: show the human each VPG's reason; an offsite clone (zerto_clone) keeps the VM as it was instead, on their word.",
            ),
            report,
            true,
        ),
    }
}

impl RewindServer {
    /// The facade asking only `sites` (every site when none is named); a name that is not
    /// configured is the tool's answer.
    fn asking(&self, sites: &[String]) -> Result<rewind_core::Rewind, CallToolResult> {
        self.rewind
            .only_sites(sites)
            .map_err(|e| reply::failure(&e))
    }

    /// [`RewindServer::asking`] for a recovery, journaled as made by the MCP client that called
    /// (the name it gave at initialize), beside the person; from the tag in `vpg` when given.
    fn recovering(
        &self,
        sites: &[String],
        vpg: Option<&str>,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<rewind_core::Rewind, CallToolResult> {
        let mut rewind = self.asking(sites)?;
        if let Some(info) = ctx.peer.peer_info() {
            rewind = rewind.as_agent(&info.client_info.name);
        }
        if let Some(vpg) = vpg.filter(|v| !v.trim().is_empty()) {
            rewind = rewind.only_vpg(vpg);
        }
        Ok(rewind)
    }
}

/// "web-01 (…) at Boston: 3 VPG(s), 2 protecting", and the guard as the next step.
fn protection_said(p: &Protection) -> Said {
    let next = if p.protecting().next().is_some() {
        format!(
            "Before changing it, call zerto_guard_before_mutate for {}.",
            p.vm.name
        )
    } else {
        "No VPG of it is protecting, so Zerto cannot rewind a change to it: tell the human before changing it.".to_string()
    };
    Said::new(p.headline(), next)
}

/// The answer of a guard: `guarded` is a success; `not_guarded` and `still_running` are errors, since
/// the change must not go ahead, with the VPGs at fault named in the line.
fn guard_answer(report: &GuardReport) -> CallToolResult {
    let first = report.headline();
    let tagged: Vec<&str> = report
        .vpgs
        .iter()
        .filter(|v| matches!(v.outcome, Outcome::Tagged { .. }))
        .map(|v| v.vpg_name.as_str())
        .collect();
    let problems = report.problems();
    if let Some(journal) = &report.journal_error {
        return reply::answer(
            Said::new(
                format!("{first}. {journal}"),
                "Do not make the change yet: the hook will deny it; show the human this result.",
            ),
            report,
            true,
        );
    }
    match report.verdict {
        Verdict::Guarded => reply::ok(
            Said::new(
                format!(
                    "{first}. Tagged {}{}",
                    tagged.join(", "),
                    way_back_said(report)
                ),
                guarded_next(report),
            ),
            report,
        ),
        Verdict::NotGuarded if problems.is_empty() => reply::answer(
            Said::new(
                format!(
                    "{first}. No VPG of {} is protecting, so nothing was tagged",
                    report.vm.name
                ),
                not_guarded_next(report),
            ),
            report,
            true,
        ),
        Verdict::NotGuarded => reply::answer(
            Said::new(
                format!("{first}. {}", problems.join("; ")),
                not_guarded_next(report),
            ),
            report,
            true,
        ),
        Verdict::StillRunning => reply::answer(
            Said::new(
                format!(
                    "{first}. Zerto task(s) {} are still running: they were not stopped and have not failed",
                    report.running_task_ids().join(", ")
                ),
                format!(
                    "Do not make the change yet. Wait a little, then call zerto_list_tags with vm {} and change_id {}: once every protecting VPG lists the tag, the VM is guarded for this change. If a task stays running, ask the human.",
                    report.vm.name, report.change_id
                ),
            ),
            report,
            true,
        ),
    }
}

/// How long the change can be rewound, as a guard's answer says it: the shortest way back.
fn way_back_said(report: &GuardReport) -> String {
    report
        .vpgs
        .iter()
        .filter_map(|v| Some((v, v.way_back.as_ref()?)))
        .min_by_key(|(_, w)| w.recoverable_until)
        .map(|(v, w)| {
            format!(
                ". The shortest way back is VPG {}'s: it can be rewound {}",
                v.vpg_name,
                w.describe_at_guard()
            )
        })
        .unwrap_or_default()
}

/// What the agent does after a guard that ended `guarded`: the change, and the human told when the
/// way back is short.
fn guarded_next(report: &GuardReport) -> String {
    let go = format!(
        "Go ahead with the change; keep the change id {}.",
        report.change_id
    );
    let short = report
        .vpgs
        .iter()
        .flat_map(|v| &v.notes)
        .any(|n| matches!(n, rewind_core::GuardNote::ShortWayBack { .. }));
    if short {
        format!(
            "{go} Tell the human how short the way back is (the notes say why): if the change may need undoing later than that, they can keep the tag longer (rewind keep)."
        )
    } else {
        go
    }
}

/// What the agent does after a guard that ended `not_guarded`: never the change; the way on when
/// there is one.
fn not_guarded_next(report: &GuardReport) -> String {
    let again = format!(
        "call zerto_guard_before_mutate again with vm {} and change_id {}",
        report.vm.name, report.change_id
    );
    match report.next() {
        Some(GuardNext::AgainOnceAnswering { sites }) => format!(
            "Do not make the change yet. Once the ZVM of {} answers, {again}: it takes over what was sent. Tell the human which site could not be reached.",
            sites.join(" and ")
        ),
        Some(GuardNext::AgainAfterSync { vpgs }) => format!(
            "Do not make the change yet: {} is syncing, and a tag taken during a sync is no point to go back to. When the sync is over (zerto_find_protection shows it), {again}.",
            vpgs.join(", ")
        ),
        Some(GuardNext::NothingToTag) => {
            "Do not make the change: tell the human that Zerto cannot rewind it.".to_owned()
        }
        _ => "Do not make the change: show the human this result.".to_owned(),
    }
}

/// The answer of a tag listing: an error when a VPG's checkpoints could not be read, as the CLI's exit
/// code says, because a tag missing from that VPG is unknown, not absent (an agent following a guard
/// that ended still_running must not count such a listing as complete). The VPGs that were read keep
/// their tags in the result.
fn tags_answer(tags: &TagList) -> CallToolResult {
    let unread: Vec<&str> = tags
        .vpgs
        .iter()
        .filter(|v| v.error.is_some())
        .map(|v| v.vpg_name.as_str())
        .collect();
    let none = tags.vpgs.iter().all(|v| v.tags.is_empty());
    let recoverable = tags
        .vpgs
        .iter()
        .flat_map(|v| &v.tags)
        .any(|t| t.state.is_recoverable());
    if unread.is_empty() && !none && !recoverable {
        return reply::ok(
            Said::new(
                tags.headline(),
                "Guards pinned these tags, but none can be recovered from any more: each says what became of it (aged out of the journal's history, wiped by a sync). Tell the human, with the times; do not recover from another checkpoint without their word.",
            ),
            tags,
        );
    }
    if unread.is_empty() && none {
        return reply::ok(
            Said::new(
                tags.headline(),
                "No tagged checkpoint is listed, so there is nothing to recover from. Before changing this VM, call zerto_guard_before_mutate; if a guard of this change ended guarded, tell the human that its tags are no longer in the journal's history.",
            ),
            tags,
        );
    }
    if unread.is_empty() {
        return reply::ok(
            Said::new(
                tags.headline(),
                "A change is guarded once every protecting VPG lists its tag; to go back, name its change id to zerto_recover_file, zerto_failover_test or zerto_clone.",
            ),
            tags,
        );
    }
    reply::answer(
        Said::new(
            format!(
                "{}. The list is incomplete: whether {} holds the tag is unknown, not no",
                tags.headline(),
                unread.join(", ")
            ),
            "Call zerto_list_tags again in a while; if it still cannot read them, show the human each VPG's error.",
        ),
        tags,
        true,
    )
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
#[derive(serde::Serialize, rmcp::schemars::JsonSchema)]
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

/// The answer of a failover test or clone operation: an error while its task still runs, as a guard's
/// is, since the operation is not done and must not be reported so or started again.
fn recovery_task_answer(report: &RecoveryTaskReport) -> CallToolResult {
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

/// The answer when the task running a call's work ended without an answer (it panicked).
fn stopped(what: &str, e: &tokio::task::JoinError) -> CallToolResult {
    reply::answer(
        Said::new(
            format!("{what} stopped unexpectedly ({e})"),
            "Check zerto_list_tags and zerto_journal for what it did before going on.",
        ),
        &ErrorReport::new(ErrorKind::Internal, e.to_string()),
        true,
    )
}
