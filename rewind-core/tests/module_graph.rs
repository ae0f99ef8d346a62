//! rewind-core reads top-down: no two of its modules use each other, however indirectly. A module
//! is a file or folder under `src/`; it uses another when its code (comments and `#[cfg(test)]`
//! modules left out) names `crate::<other>`. A cycle fails here, naming the modules in it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

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

/// Each top-level module of `src/` and the `.rs` files it is made of.
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
        } else if name != "lib" {
            out.insert(name, vec![path]);
        }
    }
    out
}

/// The modules each module uses.
fn uses(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let modules = modules(src);
    let names: BTreeSet<String> = modules.keys().cloned().collect();
    modules
        .iter()
        .map(|(name, files)| {
            let code: String = files.iter().map(|f| code_of(f)).collect();
            let used = code
                .split("crate::")
                .skip(1)
                .map(|rest| {
                    rest.chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect::<String>()
                })
                .filter(|m| names.contains(m) && m != name)
                .collect();
            (name.clone(), used)
        })
        .collect()
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

#[test]
fn no_two_modules_of_rewind_core_use_each_other() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = uses(&src);
    assert!(graph.len() > 5, "the modules are found: {graph:?}");
    if let Some(c) = cycle(&graph) {
        panic!(
            "a cycle among rewind-core's modules: {}\nthe whole graph: {graph:#?}",
            c.join(" -> ")
        );
    }
}
