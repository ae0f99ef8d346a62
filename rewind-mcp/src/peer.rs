//! Who is on the other end of a request: the client's own name, as the journal and a tag name it.

use rewind_core::tagged_checkpoint::MAX_AGENT;
use rmcp::service::{RequestContext, RoleServer};

/// Who makes the call: the client's own name (`clientInfo.name`), as a tag may hold it.
pub fn agent(ctx: &RequestContext<RoleServer>) -> String {
    let name = ctx
        .peer
        .peer_info()
        .map(|info| info.client_info.name.clone())
        .or_else(|| ctx.meta.client_info().map(|info| info.name))
        .unwrap_or_default();
    let clean: String = name
        .chars()
        .filter(|c| !c.is_control() && *c != '|')
        .take(MAX_AGENT)
        .collect();
    match clean.trim() {
        "" => "mcp-client".to_owned(),
        named => named.to_owned(),
    }
}
