//! rewind-core reads top-down: no two of its modules use each other, however indirectly, and none
//! uses the facade. A module is a file or folder under `src/`; `lib.rs` is one more, the facade
//! (`lib`). A module uses another when its code (comments and `#[cfg(test)]` modules left out) names
//! `crate::<other>`, or `crate::<item>` of an item the other defines and `lib.rs` re-exports, alone
//! or in a `crate::{..}` group; any other item of the crate's root is the facade's own (`Rewind`).
//! The facade uses each module whose path (`guard::`) its code names. A cycle fails here, naming
//! the modules in it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The facade's name in the graph.
const FACADE: &str = "lib";

/// The code of a Rust file without its comments and without what follows `#[cfg(test)]`.
fn code_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Each top-level module of `src/` and the `.rs` files it is made of; `lib.rs` is the facade.
fn modules(src: &Path) -> BTreeMap<String, Vec<PathBuf>> {
    let mut out: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for entry in std::fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            let files = std::fs::read_dir(&path)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|e| e == "rs"))
                .collect();
            out.insert(name, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.insert(name, vec![path]);
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The identifier `text` starts with.
fn ident(text: &str) -> &str {
    let end = text.find(|c| !is_ident(c)).unwrap_or(text.len());
    &text[..end]
}

/// The first identifier of each element of the `{..}` group `text` starts with (`crate::{a, b::c}`
/// gives `a`, `b`).
fn group(text: &str) -> Vec<&str> {
    let mut depth = 0;
    let mut firsts = Vec::new();
    let mut element_start = true;
    for (i, c) in text.char_indices() {
        match c {
            '{' => {
                depth += 1;
                element_start = depth == 1;
            }
            '}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            ',' if depth == 1 => element_start = true,
            c if element_start && depth == 1 && is_ident(c) => {
                firsts.push(ident(&text[i..]));
                element_start = false;
            }
            _ => {}
        }
    }
    firsts
}

/// The names of the crate's root that `crate::` paths in `code` start with.
fn crate_paths(code: &str) -> Vec<&str> {
    code.split("crate::")
        .skip(1)
        .flat_map(|rest| {
            if rest.starts_with('{') {
                group(rest)
            } else {
                vec![ident(rest)]
            }
        })
        .filter(|name| !name.is_empty())
        .collect()
}

/// The items `lib.rs` re-exports with `pub use <module>::..;`, each with its module.
fn reexports(lib: &str, names: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for statement in lib.split("pub use ").skip(1) {
        let statement = statement.split(';').next().unwrap_or_default();
        let module = ident(statement.trim_start());
        if !names.contains(module) {
            continue;
        }
        // Every identifier that does not lead a path is a leaf of the use tree (or its new name).
        let mut rest = statement;
        while let Some(at) = rest.find(is_ident) {
            let name = ident(&rest[at..]);
            rest = &rest[at + name.len()..];
            if !rest.starts_with("::") && !matches!(name, "as" | "self") {
                out.insert(name.to_string(), module.to_string());
            }
        }
    }
    out
}

/// The modules each module uses, the facade included.
fn uses(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let modules = modules(src);
    let names: BTreeSet<String> = modules.keys().cloned().collect();
    let lib = code_of(&src.join("lib.rs"));
    let reexported = reexports(&lib, &names);
    modules
        .iter()
        .map(|(name, files)| {
            let code: String = files.iter().map(|f| code_of(f)).collect();
            let used: BTreeSet<String> = if name == FACADE {
                names
                    .iter()
                    .filter(|m| *m != FACADE && names_path(&code, m))
                    .cloned()
                    .collect()
            } else {
                crate_paths(&code)
                    .into_iter()
                    .map(|item| match reexported.get(item) {
                        _ if names.contains(item) => item.to_string(),
                        Some(module) => module.clone(),
                        None => FACADE.to_string(),
                    })
                    .filter(|m| m != name)
                    .collect()
            };
            (name.clone(), used)
        })
        .collect()
}

/// Whether `code` names a path that starts at `module` (`module::`, not `other_module::` or
/// `a::module::`).
fn names_path(code: &str, module: &str) -> bool {
    let pattern = format!("{module}::");
    code.match_indices(&pattern).any(|(at, _)| {
        let before = code[..at].chars().next_back();
        !before.is_some_and(|c| is_ident(c) || c == ':') || code[..at].ends_with("crate::")
    })
}

/// A cycle of the graph, if it has one.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(c) = visit(next, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|n| visit(n, graph, &mut Vec::new(), &mut done))
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    uses(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src"))
}

#[test]
fn no_two_modules_of_rewind_core_use_each_other_nor_the_facade() {
    let graph = graph();
    assert!(graph.len() > 5, "the modules are found: {graph:?}");
    assert!(
        graph[FACADE].contains("guard") && graph[FACADE].contains("recover"),
        "the facade's uses are found: {:?}",
        graph[FACADE]
    );
    if let Some(c) = cycle(&graph) {
        panic!(
            "a cycle among rewind-core's modules: {}\nthe whole graph: {graph:#?}",
            c.join(" -> ")
        );
    }
}

#[test]
fn no_module_uses_the_facade() {
    let back: Vec<String> = graph()
        .into_iter()
        .filter(|(_, used)| used.contains(FACADE))
        .map(|(name, _)| name)
        .collect();
    assert!(
        back.is_empty(),
        "these modules use the facade's own items (`crate::Rewind`): {back:?}; give them a narrow \
         context built by the facade instead, as guard and recover have"
    );
}

#[test]
fn the_graph_reads_groups_reexports_and_the_facades_own_items() {
    assert_eq!(
        crate_paths("use crate::{Config, guard::{a, b}};\nlet x = crate::Rewind::new;"),
        ["Config", "guard", "Rewind"]
    );
    let names: BTreeSet<String> = ["config", "error"].map(String::from).into();
    let lib = "pub use config::{\n    Config, Secret as Hidden,\n};\npub use error::RewindError;\npub use tokio_util::sync::CancellationToken;";
    let reexported = reexports(lib, &names);
    assert_eq!(reexported["Config"], "config");
    assert_eq!(reexported["Hidden"], "config");
    assert_eq!(reexported["RewindError"], "error");
    assert!(!reexported.contains_key("CancellationToken"));
    assert!(names_path("let g = guard::VpgQueue::default();", "guard"));
    assert!(!names_path("let g = my_guard::x;", "guard"));
    assert!(!names_path("use tokio::guard::x;", "guard"));
}
