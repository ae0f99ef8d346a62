//! The names the gateway serves an upstream's tools under: `<upstream>__<tool>`. An upstream's name
//! holds no `_` (the configuration refuses one), so the first `__` always ends it, whatever `_`s the
//! tool's own name holds. A served name must match what every client takes
//! (`^[a-zA-Z0-9_-]{1,64}$`: Claude Desktop refuses any other); a tool whose name would not is left
//! out and named.

/// What joins an upstream's name and its tool's.
pub const JOIN: &str = "__";

/// The longest name a client takes.
pub const NAME_MAX: usize = 64;

/// The name `tool` of `upstream` is served under, or why it cannot be.
pub fn served(upstream: &str, tool: &str) -> Result<String, String> {
    let name = format!("{upstream}{JOIN}{tool}");
    if name.len() > NAME_MAX {
        return Err(format!(
            "{upstream}'s tool {tool:?} is left out: {name} is longer than the {NAME_MAX} characters MCP clients take"
        ));
    }
    if let Some(c) = tool
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-')))
    {
        return Err(format!(
            "{upstream}'s tool {tool:?} is left out: its name holds {c:?}, and MCP clients take only letters, digits, _ and -"
        ));
    }
    if tool.is_empty() {
        return Err(format!(
            "{upstream} lists a tool with no name; it is left out"
        ));
    }
    Ok(name)
}

/// The upstream and the tool a served name stands for, split at its first `__`; `None` for a name
/// without one (rewind's own tools).
pub fn split(name: &str) -> Option<(&str, &str)> {
    name.split_once(JOIN)
        .filter(|(up, tool)| !up.is_empty() && !tool.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_served_name_splits_back_at_its_first_join_whatever_the_tool_holds() {
        let name = served("fs", "write__file_now").unwrap();
        assert_eq!(name, "fs__write__file_now");
        assert_eq!(split(&name), Some(("fs", "write__file_now")));
        assert_eq!(split("zerto_guard_before_mutate"), None);
    }

    #[test]
    fn a_tool_whose_served_name_a_client_would_refuse_is_left_out_and_named() {
        let colon = served("fs", "files:write").unwrap_err();
        assert!(
            colon.contains("\"files:write\"") && colon.contains("':'"),
            "{colon}"
        );
        let long = served("fs", &"a".repeat(61)).unwrap_err();
        assert!(long.contains("64 characters"), "{long}");
        assert_eq!(served("fs", &"a".repeat(60)).unwrap().len(), 64);
        assert!(served("fs", "").is_err());
    }
}
