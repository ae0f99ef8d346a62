//! A path followed from where it is written, through modules, `use`s and globs, to the module that
//! defines its item; and so which files a file uses.

use std::path::PathBuf;

use crate::tree::Unit;

/// How deep a name is followed through `use`s before giving up (a `use` can name itself: `use
/// serde;`).
const MAX_DEPTH: usize = 12;

/// What a path names.
#[derive(Debug, Clone, PartialEq)]
enum Target {
    Module(usize),
    /// An item, by the module that defines it and its name there.
    Item(usize, String),
}

/// One file using an item another file defines.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Use {
    pub(crate) from: PathBuf,
    pub(crate) to: PathBuf,
    pub(crate) from_module: usize,
    pub(crate) to_module: usize,
    /// The item's name where it is defined (or the macro's, with its `!`).
    pub(crate) name: String,
}

/// Every use between two files of `unit`.
pub(crate) fn uses(unit: &Unit) -> Vec<Use> {
    let mut out = Vec::new();
    for (id, module) in unit.modules.iter().enumerate() {
        let imported = module.names.imports.iter().map(|i| &i.path);
        for path in imported.chain(&module.names.paths) {
            if let Some(Target::Item(to, name)) = resolve(unit, id, path, 0) {
                out.push(a_use(unit, id, to, name));
            }
        }
        for name in &module.names.macro_calls {
            if let Some(to) = unit.modules.iter().position(|m| m.macros.contains(name)) {
                out.push(a_use(unit, id, to, format!("{name}!")));
            }
        }
    }
    out.retain(|u| u.from != u.to);
    out.sort();
    out.dedup();
    out
}

fn a_use(unit: &Unit, from: usize, to: usize, name: String) -> Use {
    Use {
        from: unit.modules[from].file.clone(),
        to: unit.modules[to].file.clone(),
        from_module: from,
        to_module: to,
        name,
    }
}

/// What `path`, written in module `from`, names.
fn resolve(unit: &Unit, from: usize, path: &[String], depth: usize) -> Option<Target> {
    let (first, rest) = path.split_first()?;
    match first.as_str() {
        "crate" => walk(unit, 0, rest, depth),
        "super" => walk(unit, unit.modules[from].parent?, rest, depth),
        "self" => walk(unit, from, rest, depth),
        _ => walk(unit, from, path, depth),
    }
}

/// What `path` names inside `module`.
fn walk(unit: &Unit, module: usize, path: &[String], depth: usize) -> Option<Target> {
    let Some((first, rest)) = path.split_first() else {
        return Some(Target::Module(module));
    };
    if depth > MAX_DEPTH {
        return None;
    }
    if first == "super" {
        return walk(unit, unit.modules[module].parent?, rest, depth + 1);
    }
    match member(unit, module, first, depth + 1)? {
        Target::Module(inner) => walk(unit, inner, rest, depth + 1),
        item => Some(item),
    }
}

/// What `name` is in `module`: one of its modules, an item it defines, or what one of its `use`s or
/// globs brings in.
fn member(unit: &Unit, module: usize, name: &str, depth: usize) -> Option<Target> {
    let m = &unit.modules[module];
    if let Some(&child) = m.children.get(name) {
        return Some(Target::Module(child));
    }
    if m.defines.contains(name) {
        return Some(Target::Item(module, name.to_string()));
    }
    if depth > MAX_DEPTH {
        return None;
    }
    let imports = &m.names.imports;
    let named = imports.iter().filter(|i| i.name.as_deref() == Some(name));
    if let Some(found) = named
        .filter(|i| i.path.len() > 1 || i.path.first().is_some_and(|p| p != name))
        .find_map(|i| resolve(unit, module, &i.path, depth + 1))
    {
        return Some(found);
    }
    imports
        .iter()
        .filter(|i| i.name.is_none())
        .find_map(|glob| match resolve(unit, module, &glob.path, depth + 1)? {
            Target::Module(inner) if inner != module => member(unit, inner, name, depth + 1),
            _ => None,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// A crate made of `files` (path, code), `lib.rs` first, and the uses between its files as
    /// `from -> to (name)`.
    fn uses_of(files: &[(&str, &str)]) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        for (path, code) in files {
            let path = dir.path().join(path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, code).unwrap();
        }
        let unit = Unit::read(&dir.path().join(files[0].0), false);
        let short = |p: &PathBuf| p.strip_prefix(dir.path()).unwrap().display().to_string();
        let mut found: Vec<String> = uses(&unit)
            .iter()
            .map(|u| format!("{} -> {} ({})", short(&u.from), short(&u.to), u.name))
            .collect();
        found.sort();
        found
    }

    #[test]
    fn a_name_is_followed_through_a_faces_reexport_to_the_file_that_defines_it() {
        let got = uses_of(&[
            ("lib.rs", "mod a; mod b;"),
            ("a/mod.rs", "mod x; pub use x::X;"),
            ("a/x.rs", "pub struct X;"),
            ("b.rs", "use crate::a::X; fn f(_: X) {}"),
        ]);
        assert_eq!(got, ["a/mod.rs -> a/x.rs (X)", "b.rs -> a/x.rs (X)"]);
    }

    #[test]
    fn module_aliases_globs_super_and_macros_are_followed() {
        let got = uses_of(&[
            ("lib.rs", "mod m; mod n; macro_rules! shout { () => {} }"),
            ("m.rs", "pub fn hello() {} pub struct H;"),
            (
                "n.rs",
                "use crate::m; mod inner; fn f() { m::hello(); shout!(); }",
            ),
            ("n/inner.rs", "use super::super::m::*; fn g(_: H) {}"),
        ]);
        assert_eq!(
            got,
            [
                "n.rs -> lib.rs (shout!)",
                "n.rs -> m.rs (hello)",
                "n/inner.rs -> m.rs (H)",
            ]
        );
    }

    #[test]
    fn test_code_and_other_crates_make_no_use() {
        let got = uses_of(&[
            ("lib.rs", "mod a; mod b;"),
            ("a.rs", "pub fn f() {}"),
            (
                "b.rs",
                "use serde::Serialize; #[cfg(test)] mod tests { use crate::a::f; }",
            ),
        ]);
        assert!(got.is_empty(), "{got:?}");
    }
}
