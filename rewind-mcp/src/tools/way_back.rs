//! Keeping a change's way back past the journal: `zerto_keep_way_back`, which asks the human every
//! time, its arguments and its answer.

use std::sync::Arc;

use rewind_core::{ErrorKind, ErrorReport, KeepReport, ProgressSink, Rewind};
use rmcp::model::{CallToolResponse, CallToolResult, JsonObject};
use rmcp::schemars::{self, JsonSchema};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{tool, tool_router};
use serde::Deserialize;

use super::approval;
use super::call::{arguments, or_answer};
use super::consent::{Consent, Question};
use crate::args;
use crate::form::FormRound;
use crate::reply::{self, Said};
use crate::server::RewindServer;

/// zerto_keep_way_back.
const KEEP_WAY_BACK: &str = "\
Propose keeping a change's tagged checkpoints past the journal: an Extended Journal Copy of each VPG's tag into its repository, so files can be recovered from it after the journal has lost it. \
Call it when the human wants the way back to last longer than the journal's history (a guard's or zerto_list_tags' answer says until when). Over stdio the server asks the human yes or no every time and does nothing without a yes (on a team server the call is held for a person's approval, and the identical call made after it runs once); \
a client that cannot show the human a form gets a refusal to pass on. change_id: the change id given to the guard, or a tag exactly. \
A VPG without a repository is said so, with the offsite clone (zerto_clone) as the way instead.";

/// The form's message when asking the human to keep a change's tags.
pub(super) fn keep_message(vm: &str, change: &str) -> String {
    format!(
        "An agent proposes keeping the tagged checkpoints of change {change} on VM {vm} past the journal: Zerto copies each into its VPG's Extended Journal Copy repository (a retention set, kept for the repository's retention, 30 days by default), using repository space. Nothing on the VM changes. Keep them?"
    )
}

/// The arguments of `zerto_keep_way_back`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct KeepArgs {
    #[schemars(description = args::VM)]
    pub(super) vm: String,
    /// The change id of the guard, or a tag exactly.
    pub(super) change_id: String,
    #[serde(default)]
    #[schemars(description = args::SITES)]
    pub(super) sites: Vec<String>,
}

#[tool_router(router = way_back_tools, vis = "pub(super)")]
impl RewindServer {
    #[tool(
        name = "zerto_keep_way_back",
        description = KEEP_WAY_BACK,
        input_schema = args::schema::<KeepArgs>(),
        output_schema = reply::output_schema_holding::<rewind_core::KeepReport>(),
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
        round: FormRound,
        args: JsonObject,
    ) -> CallToolResponse {
        let proposed = serde_json::Value::Object(args.clone());
        let a: KeepArgs = or_answer!(arguments("zerto_keep_way_back", args));
        if crate::sign_in::caller(&ctx).is_some() {
            let rewind = or_answer!(self.recovering(&a.sites, None, &ctx));
            let what = keep_message(&a.vm, &a.change_id);
            let proposal = approval::proposal("zerto_keep_way_back", &a.vm, proposed, what);
            let (vm, change) = (a.vm, a.change_id);
            let keep = |rewind: Rewind| {
                move |sink: Arc<dyn ProgressSink>| async move { rewind.keep(&vm, &change, &*sink).await }
            };
            let run = approval::Run::new("keeping the tags", keep, keep_answer);
            return approval::on_approval(self, &ctx, &rewind, proposal, run)
                .await
                .into();
        }
        let question = Question {
            tool: "zerto_keep_way_back",
            message: keep_message(&a.vm, &a.change_id),
            yes: "Yes: keep them past the journal".into(),
            no: "No: leave them to age out with the journal".into(),
            about: serde_json::json!([a.vm, a.change_id, a.sites]),
        };
        match question.ask(&ctx, &round).await {
            Consent::Given => {}
            Consent::AskThroughClient(form) => return *form,
            Consent::Refused(why) => {
                let report = ErrorReport::new(
                    ErrorKind::Refused,
                    format!(
                        "nothing was kept: {why}; the tags of change {} age out with their journals",
                        a.change_id
                    ),
                );
                return reply::report(report).into();
            }
        }
        let rewind = or_answer!(self.recovering(&a.sites, None, &ctx));
        let (vm, change) = (a.vm, a.change_id);
        self.detached(
            &ctx,
            "keeping the tags",
            move |sink| async move { rewind.keep(&vm, &change, &*sink).await },
            keep_answer,
            reply::recovery_failure,
        )
        .await
        .into()
    }
}

/// The answer of a keep: a success when at least one VPG's tag is kept.
fn keep_answer(report: &KeepReport) -> CallToolResult {
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
