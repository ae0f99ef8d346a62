//! The built-in read-only tools of each agent host, held against that host's own tool list: a
//! fixture per host (`tests/fixtures/hosts/<host>.tsv`), taken from its package or source and naming
//! where, with each tool marked `reads` or `changes`. A name the list keeps that the host no longer
//! has, and a reading tool the host added, both fail here.

use std::collections::BTreeSet;
use std::path::PathBuf;

use rewind_core::catalog::{BUILTIN_READ_ONLY, HOSTS};

/// The tools of `host`'s fixture: (name, reads).
fn fixture(host: &str) -> Vec<(String, bool)> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hosts")
        .join(format!("{host}.tsv"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("the fixture {} is readable: {e}", path.display()));
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            assert_eq!(cols.len(), 3, "{host}: a tool, reads|changes, why: {l:?}");
            assert!(matches!(cols[1], "reads" | "changes"), "{host}: {l:?}");
            (cols[0].to_string(), cols[1] == "reads")
        })
        .collect()
}

#[test]
fn each_hosts_built_in_read_only_tools_are_exactly_the_reading_tools_of_its_own_tool_list() {
    for host in HOSTS {
        let tools = fixture(host);
        let names: BTreeSet<&str> = tools.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names.len(), tools.len(), "{host}: a tool is listed twice");
        let reading: BTreeSet<&str> = tools
            .iter()
            .filter(|(_, reads)| *reads)
            .map(|(n, _)| n.as_str())
            .collect();
        let built_in: BTreeSet<&str> = BUILTIN_READ_ONLY
            .iter()
            .filter(|(s, _)| s == &host)
            .map(|(_, t)| *t)
            .collect();
        let stale: Vec<&&str> = built_in.difference(&names).collect();
        assert!(
            stale.is_empty(),
            "{host}: built in, but not a tool of the host: {stale:?}"
        );
        assert_eq!(
            built_in, reading,
            "{host}: built-in read-only tools against the host's reading tools"
        );
    }
}
