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

use rewind_core::catalog::{Source, ToolClass};
use rewind_core::{
    GuardReport, GuardRequest, JournalFilter, NoProgress, Outcome, Protection, TagList, Verdict,
};
use rmcp::ErrorData as McpError;
use rmcp::handler::server::tool::{InputResponses, RequestState};
use rmcp::model::{CallToolResponse, CallToolResult, JsonObject};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{tool, tool_router};

use crate::args::{self, given};
use crate::progress::Notifier;
use crate::server::RewindServer;
use crate::{check, reply, text};

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
        annotations(title = "Find a VM's Zerto protection", read_only_hint = true, open_world_hint = true)
    )]
    async fn find_protection(&self, args: JsonObject) -> CallToolResult {
        let a: args::FindArgs = arguments!("zerto_find_protection", args);
        match self.rewind.find_protection(&a.vm).await {
            Ok(p) => reply::ok(protection_line(&p), &p),
            Err(e) => reply::failure(&e),
        }
    }

    #[tool(
        name = "zerto_guard_before_mutate",
        description = text::GUARD,
        input_schema = args::schema::<args::GuardArgs>(),
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
        let rewind = self.rewind.clone();
        let token = ctx.meta.get_progress_token();
        let peer = ctx.peer.clone();
        // The guard runs on its own task so that a call the client cancels, or a connection that
        // drops, does not cut it in half: inserts already sent are still read until their tasks end,
        // and the guard is still written to the journal.
        let guard = tokio::spawn(async move {
            match token {
                Some(token) => {
                    let (sink, forward) = Notifier::start(peer, token);
                    let report = rewind.guard(request, &sink).await;
                    drop(sink);
                    // Progress goes out before the result.
                    let _ = forward.await;
                    report
                }
                None => rewind.guard(request, &NoProgress).await,
            }
        });
        match guard.await {
            Ok(Ok(report)) => guard_answer(&report),
            Ok(Err(e)) => reply::failure(&e),
            Err(e) => reply::answer(
                format!(
                    "the guard stopped unexpectedly ({e}); check zerto_list_tags and zerto_journal for what it did before you change the VM"
                ),
                &serde_json::json!({"kind": "internal", "message": e.to_string()}),
                true,
            ),
        }
    }

    #[tool(
        name = "zerto_list_tags",
        description = text::LIST_TAGS,
        input_schema = args::schema::<args::ListTagsArgs>(),
        annotations(title = "List a VM's tagged checkpoints", read_only_hint = true, open_world_hint = true)
    )]
    async fn list_tags(&self, args: JsonObject) -> CallToolResult {
        let a: args::ListTagsArgs = arguments!("zerto_list_tags", args);
        let change_id = given(a.change_id);
        match self.rewind.list_tags(&a.vm, change_id.as_deref()).await {
            Ok(tags) => reply::ok(tags_line(&tags), &tags),
            Err(e) => reply::failure(&e),
        }
    }

    #[tool(
        name = "zerto_check_tool",
        description = text::CHECK_TOOL,
        input_schema = args::schema::<args::CheckToolArgs>(),
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
        let catalog = self.rewind.catalog();
        if let Err(e) = catalog.add_mutating(&a.server, &a.tool, vm_arg.as_deref()) {
            return reply::failure(&e.into());
        }
        match catalog.classify(&a.server, &a.tool, None) {
            Ok(c) => reply::ok(
                format!(
                    "{}/{} is recorded as mutating: every call of it must be guarded first.",
                    c.server, c.tool
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
        let catalog = self.rewind.catalog();
        match catalog.classify(&a.server, &a.tool, None) {
            Ok(c) if c.class == ToolClass::Mutating && c.source == Source::Catalog => {
                let message = format!(
                    "{}/{} is recorded as mutating, and an agent cannot mark it read-only; nothing was changed. Keep guarding before it runs. If the human wants it read-only, they remove its entry from the catalog {} (the rewind CLI does that) and then mark it read-only.",
                    c.server,
                    c.tool,
                    catalog.path().display()
                );
                return reply::answer(message, &c, true);
            }
            Ok(_) => {}
            Err(e) => return reply::failure(&e.into()),
        }
        if let Err(e) = catalog.add_read_only(&a.server, &a.tool) {
            return reply::failure(&e.into());
        }
        match catalog.classify(&a.server, &a.tool, None) {
            Ok(c) => reply::ok(
                format!(
                    "{}/{} is recorded as read-only: it runs without a checkpoint and is not asked about again.",
                    c.server, c.tool
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
        let filter = JournalFilter {
            vm: given(a.vm),
            change_id: given(a.change_id),
            last: Some(last),
        };
        match self.rewind.journal().read(&filter) {
            Ok(read) => {
                let mut line = format!(
                    "{} journal record(s) from {}",
                    read.records.len(),
                    read.path.display()
                );
                if read.skipped_lines > 0 {
                    line.push_str(&format!(
                        " ({} unreadable line(s) skipped)",
                        read.skipped_lines
                    ));
                }
                reply::ok(line, &read)
            }
            Err(e) => reply::failure(&e.into()),
        }
    }
}

/// "web-01 (…) at Boston: 3 VPG(s), 2 protecting. Next: …".
fn protection_line(p: &Protection) -> String {
    let first = reply::first_line(&p.summary()).to_string();
    if p.protecting().next().is_some() {
        format!(
            "{first}. Before changing it, call zerto_guard_before_mutate for {}.",
            p.vm.name
        )
    } else {
        format!(
            "{first}. No VPG of it is protecting, so Zerto cannot rewind a change to it: tell the human before changing it."
        )
    }
}

/// "web-01 (…): 3 tagged checkpoint(s) of change c1 in 3 VPG(s)".
fn tags_line(t: &TagList) -> String {
    let count: usize = t.vpgs.iter().map(|v| v.tags.len()).sum();
    let with = t.vpgs.iter().filter(|v| !v.tags.is_empty()).count();
    let of = t
        .change_id
        .as_deref()
        .map(|c| format!(" of change {c}"))
        .unwrap_or_default();
    let mut line = format!(
        "{} ({}): {count} tagged checkpoint(s){of} in {with} of {} VPG(s)",
        t.vm.name,
        t.vm.id,
        t.vpgs.len()
    );
    let unread: Vec<&str> = t
        .vpgs
        .iter()
        .filter(|v| v.error.is_some())
        .map(|v| v.vpg_name.as_str())
        .collect();
    if !unread.is_empty() {
        line.push_str(&format!("; could not read {}", unread.join(", ")));
    }
    line
}

/// The answer of a guard: `guarded` is a success; `not_guarded` and `still_running` are errors, since
/// the change must not go ahead, with the VPGs at fault named in the line.
fn guard_answer(report: &GuardReport) -> CallToolResult {
    let first = reply::first_line(&report.summary()).to_string();
    let tagged: Vec<&str> = report
        .vpgs
        .iter()
        .filter(|v| matches!(v.outcome, Outcome::Tagged { .. }))
        .map(|v| v.vpg_name.as_str())
        .collect();
    let problems: Vec<String> = report
        .vpgs
        .iter()
        .filter_map(|v| match &v.outcome {
            Outcome::Failed {
                task_id,
                task_state,
                complete_reason,
            } => Some(format!(
                "{}: task {task_id} ended {task_state}: {complete_reason}",
                v.vpg_name
            )),
            Outcome::Error { message, .. } => Some(format!("{}: {message}", v.vpg_name)),
            Outcome::StillRunning { task_id, .. } => {
                Some(format!("{}: task {task_id} still running", v.vpg_name))
            }
            Outcome::Tagged { .. } | Outcome::Skipped { .. } => None,
        })
        .collect();
    match report.verdict {
        Verdict::Guarded => reply::ok(
            format!(
                "{first}. Tagged {}. Go ahead with the change; keep the change id {}.",
                tagged.join(", "),
                report.change_id
            ),
            report,
        ),
        Verdict::NotGuarded if problems.is_empty() => reply::answer(
            format!(
                "{first}. No VPG of {} is protecting, so nothing was tagged. Do not make the change: tell the human that Zerto cannot rewind it.",
                report.vm.name
            ),
            report,
            true,
        ),
        Verdict::NotGuarded => reply::answer(
            format!(
                "{first}. {}. Do not make the change: show the human this result.",
                problems.join("; ")
            ),
            report,
            true,
        ),
        Verdict::StillRunning => reply::answer(
            format!(
                "{first}. {}. The tasks were not stopped. Do not make the change yet: check zerto_list_tags with change_id {} until every protecting VPG lists its tag, or ask the human.",
                problems.join("; "),
                report.change_id
            ),
            report,
            true,
        ),
    }
}
