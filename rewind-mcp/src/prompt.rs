//! What the host reads of the server at connection time: its instructions (the rewind loop in a few
//! lines) and the `rewind` prompt, which the human can pick in their client. Each tool's own words are
//! in its family's file of [`crate::tools`].
//!
//! Everything the model or the human reads is written for them: when to call a tool, what the result
//! means, and what to do next, in the words of CONTEXT.md (tagged checkpoint, VPG, protecting VPG,
//! guard, bounded recover, change id) and never its "avoid" words, which a test of
//! [`crate::tools`] holds for the instructions, the prompt, every tool's title, description and
//! arguments, and the words of each form that asks the human.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{PromptMessage, Role};
use rmcp::schemars::{self, JsonSchema};
use rmcp::{prompt, prompt_router};
use serde::Deserialize;

use crate::args::given;
use crate::server::RewindServer;

/// The server's instructions: the rewind loop in a few lines, read by the host at connection time.
pub const INSTRUCTIONS: &str = "\
zerto-rewind keeps the way back when you change a VM that Zerto protects. The rewind loop:
1. Before a change to a VM, call zerto_find_protection {vm} to see the VPGs that protect it.
2. Unsure whether a tool call changes the VM? Call zerto_check_tool {server, tool, vm}: mutating means guard first; read_only means go ahead; unknown means the human decides (the answer, or the question to put to them, is in the result).
3. Call zerto_guard_before_mutate {vm, agent, action, change_id}. Make the change ONLY if the verdict is guarded. On not_guarded or still_running, stop and tell the human.
4. Make the change. Keep the change id.
5. If it went wrong: zerto_list_tags {vm, change_id} shows the tagged checkpoints of the change. With the human's agreement, go back from that tag with a bounded recover: zerto_recover_file (files), zerto_failover_test or zerto_clone (the whole VM, beside production). Never a live failover.
zerto_journal shows what was guarded and recovered.";

/// What the prompt is for.
pub const PROMPT_DESCRIPTION: &str = "Change a VM the safe way: find its protection, guard it with a tagged checkpoint, change it, and know how to go back.";

/// The text of the `rewind` prompt for one change: `vm` and `change` as given, and the change id to
/// use, or none for the agent to choose one.
pub fn prompt_text(vm: &str, change: &str, change_id: Option<&str>) -> String {
    let id = match change_id {
        Some(id) => format!("Use the change id {id:?} throughout."),
        None => "Choose a short change id for it (e.g. the change in a few words and today's date, no `|`) and use it throughout.".to_string(),
    };
    format!(
        "You are about to change VM {vm}: {change}. {id}\n\
         1. Call zerto_find_protection with vm={vm:?}. If it names no VM, or several, stop and ask the human which one.\n\
         2. For every tool you will use on the VM that is not one of zerto-rewind's own, call zerto_check_tool. \
         mutating: guard first. read_only: go ahead. unknown: follow the result (the human's answer, or ask them the question it gives and wait).\n\
         3. Call zerto_guard_before_mutate with vm={vm:?}, agent=<your name>, action=<a few words on the change> and the change id. \
         Go on ONLY if the verdict is guarded. On not_guarded or still_running, stop and show the human the result.\n\
         4. Make the change.\n\
         5. If it went wrong, call zerto_list_tags with vm={vm:?} and the change id, show the human the tagged checkpoints \
         of the change, and ask them how to go back: zerto_recover_file for files, zerto_failover_test or zerto_clone for the whole VM. \
         Recover only what they agree to."
    )
}

/// The arguments of the `rewind` prompt.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct PromptArgs {
    /// The VM about to be changed.
    pub vm: String,
    /// The change, in a few words.
    pub change: String,
    /// The change id to use (one is chosen by the agent when left out).
    #[serde(default)]
    pub change_id: Option<String>,
}

#[prompt_router(vis = "pub(crate)")]
impl RewindServer {
    /// The rewind loop for one change, as a prompt the human can pick in their client.
    #[prompt(name = "rewind", description = PROMPT_DESCRIPTION)]
    async fn rewind_prompt(&self, Parameters(args): Parameters<PromptArgs>) -> Vec<PromptMessage> {
        let change_id = given(args.change_id);
        vec![PromptMessage::new_text(
            Role::User,
            prompt_text(args.vm.trim(), args.change.trim(), change_id.as_deref()),
        )]
    }
}
