//! Reading the audit journal: `zerto_journal`, its arguments (the filters) and its answer.

use rewind_core::audit_journal::since_of;
use rewind_core::{ErrorKind, ErrorReport, JournalFilter};
use rmcp::model::{CallToolResult, JsonObject};
use rmcp::schemars::{self, JsonSchema};
use rmcp::{tool, tool_router};
use serde::Deserialize;

use super::call::{arguments, or_answer};
use crate::args::{self, given};
use crate::local_files::on_files;
use crate::reply::{self, Said};
use crate::server::RewindServer;

/// The journal records `zerto_journal` returns when not told how many.
const JOURNAL_DEFAULT_LAST: usize = 20;
/// The most journal records `zerto_journal` returns.
const JOURNAL_MAX_LAST: u32 = 500;

/// zerto_journal.
const JOURNAL: &str = "\
Read the audit journal kept on this machine: every guard and every bounded recover, with the agent, action, VM, change id, \
each VPG's tag, Zerto task, task state and checkpoint, and the verdict. Filter by vm and change_id; last (1 to 500) \
gives the newest records, 20 when left out. \
Call it to report what was guarded, or to find the change id of an earlier change. Reads only.";

/// `zerto_journal`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct JournalArgs {
    /// Only the records of this VM (name, host name, IP address or vmIdentifier).
    #[serde(default)]
    pub(super) vm: Option<String>,
    /// Only the records of this change id.
    #[serde(default)]
    pub(super) change_id: Option<String>,
    /// Only the records a team server made for this signed-in person: their user name or their
    /// token subject.
    #[serde(default)]
    pub(super) person: Option<String>,
    /// Only records written since this time: 2026-12-01T08:00:00Z, a day (2026-12-01), or a time
    /// ago (90m, 12h, 7d).
    #[serde(default)]
    pub(super) since: Option<String>,
    /// Only the newest records, at most this many (default 20, at most 500).
    #[serde(default)]
    #[schemars(range(min = 1, max = 500))]
    pub(super) last: Option<u32>,
}

#[tool_router(router = journal_tools, vis = "pub(super)")]
impl RewindServer {
    #[tool(
        name = "zerto_journal",
        description = JOURNAL,
        input_schema = args::schema::<JournalArgs>(),
        output_schema = reply::output_schema::<rewind_core::audit_journal::JournalRead>(),
        annotations(title = "Read the audit journal", read_only_hint = true, open_world_hint = false)
    )]
    async fn journal(&self, args: JsonObject) -> CallToolResult {
        let a: JournalArgs = or_answer!(arguments("zerto_journal", args));
        let filter = or_answer!(filter_of(a));
        match on_files(&self.rewind, move |r| r.journal().read(&filter)).await {
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
                reply::report(ErrorReport::new(
                    ErrorKind::Internal,
                    "zerto_journal did not run: the team server's journal cannot be read now. Nothing was changed; its administrator finds why in the server's log.",
                ))
            }
            Err(e) => reply::failure(&e.into()),
        }
    }
}

/// The records a call asks for, or the answer that says which of its arguments is wrong.
fn filter_of(a: JournalArgs) -> Result<JournalFilter, CallToolResult> {
    let refused = |problem: String| {
        reply::bad_arguments(&args::BadArguments {
            message: format!(
                "zerto_journal did not run: {problem}. Nothing was done; call it again with corrected arguments."
            ),
        })
    };
    let last = match a.last {
        None => JOURNAL_DEFAULT_LAST,
        Some(n) if (1..=JOURNAL_MAX_LAST).contains(&n) => n as usize,
        Some(n) => {
            return Err(refused(format!(
                "last is {n}, and it takes 1 to {JOURNAL_MAX_LAST}"
            )));
        }
    };
    let since = given(a.since)
        .map(|s| since_of(&s))
        .transpose()
        .map_err(|why| refused(format!("since is wrong: {why}")))?;
    Ok(JournalFilter {
        vm: given(a.vm),
        change_id: given(a.change_id),
        person: given(a.person),
        since,
        last: Some(last),
    })
}
