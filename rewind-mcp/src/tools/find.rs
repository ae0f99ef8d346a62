//! Finding a VM and its tags: `zerto_find_protection` (which VPGs protect a VM) and
//! `zerto_list_tags` (the tagged checkpoints of its changes), their arguments and their answers.

use rewind_core::{Protection, TagList};
use rmcp::model::{CallToolResult, JsonObject};
use rmcp::schemars::{self, JsonSchema};
use rmcp::{tool, tool_router};
use serde::Deserialize;

use super::call::{arguments, or_answer};
use crate::args::{self, given};
use crate::reply::{self, Said};
use crate::server::RewindServer;

/// zerto_find_protection.
const FIND_PROTECTION: &str = "\
Resolve a VM (name, host name, IP address or vmIdentifier) to exactly one VM and every VPG it is in, across all configured Zerto sites. \
Call it before you change a VM, to learn whether Zerto can rewind the change. \
The result lists each VPG with its status, whether it is protecting (only protecting VPGs get tagged checkpoints), \
its protected and recovery site, and whether file-level recovery can run for it. \
No match, several matches (the candidates are listed: repeat with the vmIdentifier of the one you mean) or a VM in no VPG is an error: \
do not guess another VM. With no protecting VPG, Zerto cannot rewind a change to this VM: tell the human before changing it. \
Next: zerto_guard_before_mutate before the change. Reads only.";

/// zerto_list_tags.
const LIST_TAGS: &str = "\
List the tagged checkpoints of a VM across all its VPGs, each with its checkpoint id, time and tag \
(ai:<agent> | <action> | vm=<vm> | change=<change id> | <UTC time>). Give change_id (a change id, or a tag exactly) to see only the tags of one change. \
Call it to confirm a guard, to follow a guard that ended still_running, or to find the tag to recover from after a change went wrong. \
A VPG whose checkpoints could not be read is named with its error, and makes the answer a tool error: whether it holds the tag is unknown, not no. \
Next, if the change went wrong and the human agrees to go back: zerto_recover_file, zerto_failover_test or zerto_clone with the same change_id. Reads only.";

/// `zerto_find_protection`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct FindArgs {
    #[schemars(description = args::VM)]
    pub(super) vm: String,
    #[serde(default)]
    #[schemars(description = args::SITES)]
    pub(super) sites: Vec<String>,
}

/// `zerto_list_tags`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ListTagsArgs {
    #[schemars(description = args::VM)]
    pub(super) vm: String,
    /// Only the tags of this change: its change id, or a tag exactly.
    #[serde(default)]
    pub(super) change_id: Option<String>,
    #[serde(default)]
    #[schemars(description = args::SITES)]
    pub(super) sites: Vec<String>,
}

#[tool_router(router = find_tools, vis = "pub(super)")]
impl RewindServer {
    #[tool(
        name = "zerto_find_protection",
        description = FIND_PROTECTION,
        input_schema = args::schema::<FindArgs>(),
        output_schema = reply::output_schema::<rewind_core::Protection>(),
        annotations(title = "Find a VM's Zerto protection", read_only_hint = true, open_world_hint = true)
    )]
    async fn find_protection(&self, args: JsonObject) -> CallToolResult {
        let a: FindArgs = or_answer!(arguments("zerto_find_protection", args));
        let rewind = or_answer!(self.asking(&a.sites));
        match rewind.find_protection(&a.vm).await {
            Ok(p) => reply::ok(protection_said(&p), &p),
            Err(e) => reply::failure(&e),
        }
    }

    #[tool(
        name = "zerto_list_tags",
        description = LIST_TAGS,
        input_schema = args::schema::<ListTagsArgs>(),
        output_schema = reply::output_schema::<rewind_core::TagList>(),
        annotations(title = "List a VM's tagged checkpoints", read_only_hint = true, open_world_hint = true)
    )]
    async fn list_tags(&self, args: JsonObject) -> CallToolResult {
        let a: ListTagsArgs = or_answer!(arguments("zerto_list_tags", args));
        let change_id = given(a.change_id);
        let rewind = or_answer!(self.asking(&a.sites));
        match rewind.list_tags(&a.vm, change_id.as_deref()).await {
            Ok(tags) => tags_answer(&tags),
            Err(e) => reply::failure(&e),
        }
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
