//! Guarding a VM before a change: `zerto_guard_before_mutate`, its arguments and its answer, which
//! says whether the change may go ahead and, when it may not, what to do instead.

use rewind_core::{GuardNext, GuardNote, GuardReport, GuardRequest, Outcome, Verdict};
use rmcp::model::{CallToolResult, JsonObject};
use rmcp::schemars::{self, JsonSchema};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{tool, tool_router};
use serde::Deserialize;

use super::call::{arguments, or_answer};
use crate::args;
use crate::reply::{self, Said};
use crate::server::RewindServer;

/// zerto_guard_before_mutate.
const GUARD: &str = "\
Guard a VM before you change it: insert one tagged checkpoint into every protecting VPG of the VM, \
read each Zerto task until it ends, and wait until each checkpoint is listed. Call it right before a change to the VM \
(a config edit, a package upgrade, a migration, deleting files), once per change. \
agent: who you are (e.g. claude-code); action: a few words on the change; change_id: an id you choose for this change \
(e.g. upgrade-nginx-2026-11-29), reused later to find and recover from the tag. No `|` or line breaks in any of them. \
The verdict decides: guarded = every protecting VPG holds a tagged checkpoint of this change, go ahead with the change. \
not_guarded = at least one protecting VPG has no checkpoint (each VPG's outcome says why), or nothing protects the VM: do NOT make the change, tell the human. \
still_running = the deadline came while Zerto tasks still ran (their ids are in the result; they were not stopped): do not make the change yet; \
check later with zerto_list_tags {vm, change_id}. Calling it again for the same VM and change_id (after a timeout, say) is safe: \
it adopts the checkpoints already inserted for that change instead of inserting them twice; for a new checkpoint use a new change_id. \
It never removes or changes anything.";

/// `zerto_guard_before_mutate`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct GuardArgs {
    /// The VM about to be changed: its name, host name, IP address or vmIdentifier.
    pub(super) vm: String,
    /// Who is about to change it, e.g. claude-code (at most 30 characters).
    pub(super) agent: String,
    /// What is about to be done, in a few words, e.g. upgrade nginx (at most 60 characters).
    pub(super) action: String,
    /// An id you choose for this change, reused to find and recover from its tag, e.g.
    /// upgrade-nginx-2026-11-29 (at most 40 characters).
    pub(super) change_id: String,
    #[serde(default)]
    #[schemars(description = args::SITES)]
    pub(super) sites: Vec<String>,
}

#[tool_router(router = guard_tools, vis = "pub(super)")]
impl RewindServer {
    #[tool(
        name = "zerto_guard_before_mutate",
        description = GUARD,
        input_schema = args::schema::<GuardArgs>(),
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
        let a: GuardArgs = or_answer!(arguments("zerto_guard_before_mutate", args));
        let request = GuardRequest {
            vm: a.vm,
            agent: a.agent,
            action: a.action,
            change_id: a.change_id,
        };
        let rewind = or_answer!(self.asking(&a.sites));
        let stop = self.call.stop.clone();
        self.detached(
            &ctx,
            "the guard",
            move |sink| async move {
                match stop {
                    Some(stop) => rewind.guard_until(request, &*sink, &stop).await,
                    None => rewind.guard(request, &*sink).await,
                }
            },
            guard_answer,
            reply::failure,
        )
        .await
    }
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
        .any(|n| matches!(n, GuardNote::ShortWayBack { .. }));
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
