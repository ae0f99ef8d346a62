//! The tools, each a few lines over rewind-core: read the arguments ([`crate::args`]), call the core,
//! answer ([`crate::reply`]). One file holds one family of tools: their handlers (`#[tool]`
//! methods), their descriptions, arguments and answers; each family's `ToolRouter` adds up into the
//! server's ([`RewindServer::tool_router`]).
//!
//! - [`find`]: finding a VM and its tags (`zerto_find_protection`, `zerto_list_tags`);
//! - [`guard`]: the guard before a change (`zerto_guard_before_mutate`);
//! - [`catalog`]: the tool catalog (`zerto_check_tool`, `zerto_add_mutating_tool`,
//!   `zerto_add_read_only_tool`);
//! - [`journal`]: the audit journal (`zerto_journal`);
//! - [`recover`]: going back beside production (`zerto_recover_file`, `zerto_failover_test`,
//!   `zerto_clone`);
//! - [`way_back`]: keeping the way back past the journal (`zerto_keep_way_back`);
//! - [`diff_restore`]: what changed since a tag, and the VM restored to it
//!   (`zerto_diff_since_tag`, `zerto_restore_vm`).
//!
//! What the families share: [`call`] (arguments read, the sites asked, work run on a task of its
//! own and its outcome answered) and [`consent`] (the yes a person gives before a tool only they
//! may start); every question goes through the client's form ([`crate::form`]).
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

mod approval;
mod call;
mod catalog;
mod consent;
mod diff_restore;
mod find;
mod guard;
mod journal;
mod recover;
#[cfg(test)]
mod tests;
mod way_back;

use std::sync::OnceLock;

use rmcp::handler::server::router::tool::ToolRouter;

use crate::server::RewindServer;

impl RewindServer {
    /// Every tool of the server: each family's router, added up once for the process, since every
    /// call, `tools/list` and `tools/get` reads it and it never changes.
    pub(crate) fn tool_router() -> &'static ToolRouter<Self> {
        static TOOLS: OnceLock<ToolRouter<RewindServer>> = OnceLock::new();
        TOOLS.get_or_init(|| {
            Self::find_tools()
                + Self::guard_tools()
                + Self::catalog_tools()
                + Self::journal_tools()
                + Self::recover_tools()
                + Self::way_back_tools()
                + Self::diff_restore_tools()
        })
    }
}
