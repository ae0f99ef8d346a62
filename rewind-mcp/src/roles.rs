//! Who may do what over HTTP (`[http.auth.roles]`): each tool needs one realm role (or scope) in
//! the caller's token: reading (find, tags, check a tool, the journal), guarding, recovering (file
//! restore, failover test, clone, keeping tags past the journal) or changing the catalog. A call without it is a tool error that
//! names the role, so the agent can say what to ask for. Over stdio, and without `[http.auth]`,
//! there is no signed-in caller and nothing is checked here.

use rewind_core::config::{ToolRoles, Upstream};
use rewind_core::{Config, ErrorKind, ErrorReport, ToolClass};
use rmcp::RoleServer;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;

use crate::sign_in::caller;

/// What the role table calls `zerto_diff_since_tag` asked for `content`.
pub const DIFF_CONTENT: &str = "zerto_diff_since_tag with content";

/// The role tool `tool` needs; `None` for a tool this table does not know, which nobody may call
/// (a tool added without its role is refused, never taken for a read).
pub(crate) fn needed<'r>(roles: &'r ToolRoles, tool: &str) -> Option<&'r str> {
    Some(match tool {
        "zerto_find_protection"
        | "zerto_list_tags"
        | "zerto_check_tool"
        | "zerto_journal"
        | "zerto_diff_since_tag" => &roles.read,
        "zerto_guard_before_mutate" => &roles.guard,
        // A diff's content hands out the guest's file bytes, as a file recovery does.
        "zerto_recover_file"
        | "zerto_failover_test"
        | "zerto_clone"
        | "zerto_keep_way_back"
        | "zerto_restore_vm"
        | DIFF_CONTENT => &roles.recover,
        "zerto_add_mutating_tool" | "zerto_add_read_only_tool" => &roles.catalog,
        _ => return None,
    })
}

/// The tool error of a signed-in caller whose token lacks the role `tool` needs; `None` when the
/// call may go on.
pub fn refusal(
    config: &Config,
    tool: &str,
    context: &RequestContext<RoleServer>,
) -> Option<CallToolResult> {
    let auth = config.http.auth.as_ref()?;
    let caller = caller(context)?;
    let who = caller.who();
    let Some(role) = needed(&auth.roles, tool) else {
        return Some(refused(format!(
            "{tool} did not run: this server names no role for it, so no caller may use it over HTTP."
        )));
    };
    if caller.roles.iter().any(|r| r == role) {
        return None;
    }
    Some(refused(format!(
        "{tool} did not run: it needs the role {role:?}, and {who}'s token does not carry it. Nothing was done; ask an administrator of the realm to grant {who} the role {role:?}, then sign in again."
    )))
}

/// The tool error of a signed-in caller who may not call `upstream`'s tools: an upstream that names
/// no `role` is refused to everyone over HTTP (a tool the role table does not know), and a caller
/// without its role is refused; `None` when the call may go on to its class's role
/// ([`upstream_class_refusal`]).
pub fn upstream_refusal(
    config: &Config,
    upstream: &Upstream,
    context: &RequestContext<RoleServer>,
) -> Option<CallToolResult> {
    config.http.auth.as_ref()?;
    let caller = caller(context)?;
    let name = &upstream.name;
    let Some(role) = &upstream.role else {
        return Some(refused(format!(
            "{name}'s tools did not run: its [[gateway.upstream]] names no role, so no caller may use them over HTTP. Ask the server's administrator to set role for {name}."
        )));
    };
    lacks(&caller.roles, role).then(|| {
        refused(format!(
            "{name}'s tools did not run: they need the role {role:?}, and {}'s token does not carry it. Nothing was done; ask an administrator of the realm for the role, then sign in again.",
            caller.who()
        ))
    })
}

/// The tool error of a signed-in caller without the role a call of an upstream tool of `class`
/// needs besides the upstream's: the read role for a read-only tool, the guard role for one that
/// is guarded (mutating, or unknown and put to the human).
pub fn upstream_class_refusal(
    config: &Config,
    class: ToolClass,
    tool: &str,
    context: &RequestContext<RoleServer>,
) -> Option<CallToolResult> {
    let roles = &config.http.auth.as_ref()?.roles;
    let caller = caller(context)?;
    let role = match class {
        ToolClass::ReadOnly => &roles.read,
        ToolClass::Mutating | ToolClass::Unknown => &roles.guard,
    };
    lacks(&caller.roles, role).then(|| {
        refused(format!(
            "{tool} did not run: a call of it needs the role {role:?}, and {}'s token does not carry it. Nothing was done; ask an administrator of the realm for the role, then sign in again.",
            caller.who()
        ))
    })
}

fn lacks(held: &[String], role: &str) -> bool {
    !held.iter().any(|r| r == role)
}

/// Why a signed-in caller may not change the catalog, in words; `None` when they may, or when
/// nobody is signed in (stdio, or HTTP without `[http.auth]`).
pub fn cannot_change_catalog(
    config: &Config,
    context: &RequestContext<RoleServer>,
) -> Option<String> {
    let role = &config.http.auth.as_ref()?.roles.catalog;
    let caller = caller(context)?;
    if caller.roles.iter().any(|r| r == role) {
        return None;
    }
    Some(format!(
        "remembering an answer for every call changes the catalog, which needs the role {role:?}, and {}'s token does not carry it",
        caller.who()
    ))
}

/// A refusal as every tool error is shaped (kind `refused`).
fn refused(message: String) -> CallToolResult {
    crate::reply::report(ErrorReport::new(ErrorKind::Refused, message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tool_needs_the_role_of_what_it_does_and_every_tool_has_one() {
        let roles = ToolRoles::default();
        assert_eq!(
            needed(&roles, "zerto_guard_before_mutate"),
            Some("rewind-guard")
        );
        assert_eq!(needed(&roles, "zerto_recover_file"), Some("rewind-recover"));
        assert_eq!(
            needed(&roles, "zerto_add_read_only_tool"),
            Some("rewind-catalog")
        );
        assert_eq!(needed(&roles, "zerto_find_protection"), Some("rewind-read"));
        assert_eq!(needed(&roles, "zerto_diff_since_tag"), Some("rewind-read"));
        assert_eq!(
            needed(&roles, DIFF_CONTENT),
            Some("rewind-recover"),
            "a diff's content hands out file bytes, as a recovery does"
        );
        assert_eq!(needed(&roles, "a_new_tool"), None, "unknown: refused");
        for tool in crate::RewindServer::tool_router().list_all() {
            assert!(
                needed(&roles, &tool.name).is_some(),
                "{} has a role",
                tool.name
            );
        }
    }
}
