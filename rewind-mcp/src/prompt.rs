//! The `rewind` prompt: the rewind loop for one change, which the human can pick in their client.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{PromptMessage, Role};
use rmcp::{prompt, prompt_router};

use crate::args::{PromptArgs, given};
use crate::server::RewindServer;
use crate::text;

#[prompt_router(vis = "pub(crate)")]
impl RewindServer {
    /// The rewind loop for one change, as a prompt the human can pick in their client.
    #[prompt(name = "rewind", description = text::PROMPT_DESCRIPTION)]
    async fn rewind_prompt(&self, Parameters(args): Parameters<PromptArgs>) -> Vec<PromptMessage> {
        let change_id = given(args.change_id);
        vec![PromptMessage::new_text(
            Role::User,
            text::prompt_text(args.vm.trim(), args.change.trim(), change_id.as_deref()),
        )]
    }
}
