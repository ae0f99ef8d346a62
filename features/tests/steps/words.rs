//! How a scenario writes what it names: a list of names separated by commas.

/// Reads a scenario's list of names: `web-local, web-dr, web-archive`.
pub fn names(list: &str) -> Vec<String> {
    list.split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}
