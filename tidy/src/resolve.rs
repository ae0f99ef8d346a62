//! A path followed from where it is written, through modules, `use`s and globs, to the module that
//! defines its item; a method followed to the file of the `impl` that defines it; and so which files
//! a file uses, and which names a module reaches through its own face.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::scan::Visibility;
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
    /// The item's name where it is defined (`Type::method` for a method, `name!` for a macro).
    pub(crate) name: String,
    /// The face of `from` (a module it is inside) whose `use` the name was reached through, when
    /// it was: a room should name its sibling, not the face that re-exports it.
    pub(crate) through_face: Option<usize>,
}

/// The modules whose `impl` blocks define each method, and who may call it there: by the type's
/// defining module and name, and the method.
type Methods = BTreeMap<(usize, String, String), Vec<(usize, Visibility)>>;

/// Every use between two files of `unit`.
pub(crate) fn uses(unit: &Unit) -> Vec<Use> {
    let methods = methods(unit);
    let mut out = Vec::new();
    for (id, module) in unit.modules.iter().enumerate() {
        let imported = module.names.imports.iter().map(|i| &i.path);
        for path in imported.chain(&module.names.paths) {
            out.extend(uses_of_path(unit, &methods, id, path));
        }
        for (ty, method) in &module.names.self_calls {
            if let Some((Target::Item(def, name), _, _)) = resolve(unit, id, ty) {
                out.extend(method_uses(unit, &methods, id, (def, &name), method));
            }
        }
        for name in &module.names.macro_calls {
            if let Some(to) = unit.modules.iter().position(|m| m.macros.contains(name)) {
                out.push(a_use(unit, id, to, format!("{name}!"), None));
            }
        }
    }
    out.retain(|u| u.from != u.to);
    out.sort();
    out.dedup();
    out
}

/// What one path written in module `from` uses: the item it names, and the method it names after
/// a type (`World::advance`) when another file's `impl` defines it.
fn uses_of_path(unit: &Unit, methods: &Methods, from: usize, path: &[String]) -> Vec<Use> {
    let Some((Target::Item(to, name), used, via)) = resolve(unit, from, path) else {
        return Vec::new();
    };
    let face = via.into_iter().find(|&f| is_face_of(unit, f, from, to));
    let mut out = vec![a_use(unit, from, to, name.clone(), face)];
    if let Some(method) = path.get(used) {
        out.extend(method_uses(unit, methods, from, (to, &name), method));
    }
    out
}

/// The uses of `method` of the type `ty` (its defining module and name) from module `from`.
fn method_uses(
    unit: &Unit,
    methods: &Methods,
    from: usize,
    (def, ty): (usize, &str),
    method: &str,
) -> Vec<Use> {
    let key = (def, ty.to_string(), method.to_string());
    let defined = methods.get(&key).map(Vec::as_slice).unwrap_or_default();
    // A method `from` may not call is not the one it calls (an inaccessible inherent `clone` leaves
    // `self.clone()` to `Clone`).
    defined
        .iter()
        .filter(|(m, vis)| callable(unit, *m, vis, from))
        .map(|(m, _)| a_use(unit, from, *m, format!("{ty}::{method}"), None))
        .collect()
}

/// Whether module `from` may call a method defined in module `at` with `vis`.
fn callable(unit: &Unit, at: usize, vis: &Visibility, from: usize) -> bool {
    let scope = match vis {
        Visibility::Crate => return true,
        Visibility::Private => Some(at),
        Visibility::Super => unit.modules[at].parent,
        Visibility::In(path) => match resolve(unit, at, path) {
            Some((Target::Module(m), _, _)) => Some(m),
            _ => None,
        },
    };
    scope.is_some_and(|scope| unit.within(from, scope))
}

/// Where each method of each type of `unit` is defined.
fn methods(unit: &Unit) -> Methods {
    let mut out = Methods::new();
    for (id, module) in unit.modules.iter().enumerate() {
        for (ty, method, vis) in &module.names.methods {
            if let Some((Target::Item(def, name), _, _)) = resolve(unit, id, ty) {
                let at = (id, vis.clone());
                out.entry((def, name, method.clone())).or_default().push(at);
            }
        }
    }
    out
}

/// Whether module `face` is a face `from` is inside of (and not the file `to`, whose own items
/// the face rule judges): a module in another file with modules of its own in files of their own.
fn is_face_of(unit: &Unit, face: usize, from: usize, to: usize) -> bool {
    let file = &unit.modules[face].file;
    let has_rooms = unit.modules[face]
        .children
        .values()
        .any(|&c| &unit.modules[c].file != file);
    has_rooms
        && &unit.modules[from].file != file
        && &unit.modules[to].file != file
        && unit.within(from, face)
}

fn a_use(unit: &Unit, from: usize, to: usize, name: String, through_face: Option<usize>) -> Use {
    Use {
        from: unit.modules[from].file.clone(),
        to: unit.modules[to].file.clone(),
        from_module: from,
        to_module: to,
        name,
        through_face,
    }
}

/// What `path`, written in module `from`, names; how many of its segments that took (a type's
/// method may follow); and the modules whose `use` it went through.
fn resolve(unit: &Unit, from: usize, path: &[String]) -> Option<(Target, usize, Vec<usize>)> {
    let mut walk = Walk {
        unit,
        via: Vec::new(),
    };
    let (target, used) = walk.resolve(from, path, 0)?;
    Some((target, used, walk.via))
}

/// One resolution under way, and the modules whose `use` it followed.
struct Walk<'a> {
    unit: &'a Unit,
    via: Vec<usize>,
}

impl Walk<'_> {
    /// What `path`, written in module `from`, names, and how many segments it took.
    fn resolve(&mut self, from: usize, path: &[String], depth: usize) -> Option<(Target, usize)> {
        let (first, rest) = path.split_first()?;
        let (start, path, skipped) = match first.as_str() {
            "crate" => (0, rest, 1),
            "super" => (self.unit.modules[from].parent?, rest, 1),
            "self" => (from, rest, 1),
            _ => (from, path, 0),
        };
        let (target, used) = self.walk(start, path, depth)?;
        Some((target, used + skipped))
    }

    /// What `path` names inside `module`, and how many segments it took.
    fn walk(&mut self, module: usize, path: &[String], depth: usize) -> Option<(Target, usize)> {
        let Some((first, rest)) = path.split_first() else {
            return Some((Target::Module(module), 0));
        };
        if depth > MAX_DEPTH {
            return None;
        }
        let found = if first == "super" {
            Target::Module(self.unit.modules[module].parent?)
        } else {
            self.member(module, first, depth + 1)?
        };
        match found {
            Target::Module(inner) => {
                let (target, used) = self.walk(inner, rest, depth + 1)?;
                Some((target, used + 1))
            }
            item => Some((item, 1)),
        }
    }

    /// What `name` is in `module`: one of its modules, an item it defines, or what one of its
    /// `use`s or globs brings in.
    fn member(&mut self, module: usize, name: &str, depth: usize) -> Option<Target> {
        let unit = self.unit;
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
        let named = imports
            .iter()
            .filter(|i| i.name.as_deref() == Some(name))
            .filter(|i| i.path.len() > 1 || i.path.first().is_some_and(|p| p != name));
        for import in named {
            if let Some(found) = self.through(module, |walk| {
                walk.resolve(module, &import.path, depth + 1)
                    .map(|(t, _)| t)
            }) {
                return Some(found);
            }
        }
        for glob in imports.iter().filter(|i| i.name.is_none()) {
            if let Some(found) = self.through(module, |walk| {
                match walk.resolve(module, &glob.path, depth + 1)?.0 {
                    Target::Module(inner) if inner != module => walk.member(inner, name, depth + 1),
                    _ => None,
                }
            }) {
                return Some(found);
            }
        }
        None
    }

    /// `follow`, noting that it goes through a `use` of `module` while it finds something.
    fn through(
        &mut self,
        module: usize,
        follow: impl FnOnce(&mut Self) -> Option<Target>,
    ) -> Option<Target> {
        self.via.push(module);
        let found = follow(self);
        if found.is_none() {
            self.via.pop();
        }
        found
    }
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
    fn a_method_is_followed_to_the_file_of_the_impl_that_defines_it() {
        let got = uses_of(&[
            ("lib.rs", "mod model; mod history; mod port;"),
            (
                "model.rs",
                "pub struct World; impl World { fn advance(&mut self) { self.settle(); } }",
            ),
            (
                "history.rs",
                "use crate::model::World; impl World { pub fn settle(&mut self) {} }",
            ),
            ("port.rs", "fn f() { crate::model::World::settle(); }"),
        ]);
        assert_eq!(
            got,
            [
                "history.rs -> model.rs (World)",
                "model.rs -> history.rs (World::settle)",
                "port.rs -> history.rs (World::settle)",
                "port.rs -> model.rs (World)",
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
