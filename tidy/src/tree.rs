//! The crates of a workspace as trees of modules, read from each root by its `mod` items.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::scan::Names;
use crate::source;

/// One module: the file it is written in (shared by the modules written inline in it) and what it
/// defines and names. Test code is left out.
#[derive(Debug)]
pub(crate) struct Module {
    pub(crate) file: PathBuf,
    pub(crate) parent: Option<usize>,
    /// Its modules by name, declared with `mod` (in a file of their own or inline).
    pub(crate) children: BTreeMap<String, usize>,
    /// The items it defines by name; `macro_rules!` macros apart, as they are called by name alone.
    pub(crate) defines: BTreeSet<String>,
    pub(crate) macros: BTreeSet<String>,
    pub(crate) names: Names,
}

/// What one crate root (a library, a binary, an integration test, a bench, a fuzz target) is made of.
#[derive(Debug)]
pub(crate) struct Unit {
    /// The modules, the root first.
    pub(crate) modules: Vec<Module>,
    /// Whether the root is test code (under `tests/` or `benches/benches/`): then its test items
    /// are read too, since they are the whole of it.
    pub(crate) test: bool,
    /// What could not be read: a file that is not Rust syn reads, a `mod` whose file is missing.
    pub(crate) problems: Vec<String>,
}

impl Unit {
    /// Reads the crate whose root is `root`.
    pub(crate) fn read(root: &Path, test: bool) -> Unit {
        let mut unit = Unit {
            modules: Vec::new(),
            test,
            problems: Vec::new(),
        };
        unit.read_file(root, None);
        unit
    }

    /// Whether `module` is `ancestor` or inside it.
    pub(crate) fn within(&self, mut module: usize, ancestor: usize) -> bool {
        loop {
            if module == ancestor {
                return true;
            }
            match self.modules[module].parent {
                Some(parent) => module = parent,
                None => return false,
            }
        }
    }

    /// The module a file is, for `module` or a module written inline in the same file.
    pub(crate) fn file_module(&self, mut module: usize) -> usize {
        while let Some(parent) = self.modules[module].parent {
            if self.modules[parent].file != self.modules[module].file {
                break;
            }
            module = parent;
        }
        module
    }

    /// Reads the module in `file`, declared by `parent` as `name`.
    fn read_file(&mut self, file: &Path, parent: Option<(usize, String)>) {
        let syntax = match source::parse(file) {
            Ok(syntax) => syntax,
            Err(problem) => return self.problems.push(problem),
        };
        // A root, a `mod.rs`, `lib.rs` or `main.rs` owns the folder it is in; `a.rs` owns `a/`.
        let owns_folder = parent.is_none()
            || matches!(
                file.file_name().and_then(|n| n.to_str()),
                Some("mod.rs" | "lib.rs" | "main.rs")
            );
        let folder = if owns_folder {
            file.parent().unwrap_or(Path::new("")).to_path_buf()
        } else {
            file.with_extension("")
        };
        let id = self.add(file, parent);
        self.read_items(id, &syntax.items, &folder);
    }

    fn add(&mut self, file: &Path, parent: Option<(usize, String)>) -> usize {
        let id = self.modules.len();
        self.modules.push(Module {
            file: file.to_path_buf(),
            parent: parent.as_ref().map(|(p, _)| *p),
            children: BTreeMap::new(),
            defines: BTreeSet::new(),
            macros: BTreeSet::new(),
            names: Names::default(),
        });
        if let Some((p, name)) = parent {
            self.modules[p].children.insert(name, id);
        }
        id
    }

    /// Reads the items of module `id`, whose child modules' files are in `folder`.
    fn read_items(&mut self, id: usize, items: &[syn::Item], folder: &Path) {
        for item in items {
            if !self.test && source::is_test(source::attrs(item)) {
                continue;
            }
            match item {
                syn::Item::Mod(m) => self.read_mod(id, m, folder),
                syn::Item::Macro(m) if m.mac.path.is_ident("macro_rules") => {
                    if let Some(name) = &m.ident {
                        self.modules[id].macros.insert(name.to_string());
                    }
                    self.modules[id].names.read(item);
                }
                _ => {
                    if let Some(name) = defined_name(item) {
                        self.modules[id].defines.insert(name);
                    }
                    self.modules[id].names.read(item);
                }
            }
        }
    }

    fn read_mod(&mut self, id: usize, m: &syn::ItemMod, folder: &Path) {
        let name = m.ident.to_string();
        match &m.content {
            Some((_, items)) => {
                let file = self.modules[id].file.clone();
                let child = self.add(&file, Some((id, name.clone())));
                self.read_items(child, items, &folder.join(&name));
            }
            None => {
                let file = path_attr(&m.attrs)
                    .map(|p| {
                        let own = self.modules[id].file.parent().unwrap_or(Path::new(""));
                        own.join(p)
                    })
                    .or_else(|| {
                        [
                            folder.join(format!("{name}.rs")),
                            folder.join(&name).join("mod.rs"),
                        ]
                        .into_iter()
                        .find(|p| p.is_file())
                    });
                match file {
                    Some(file) => self.read_file(&file, Some((id, name))),
                    None => self.problems.push(format!(
                        "{}: no file for `mod {name};` in {}",
                        self.modules[id].file.display(),
                        folder.display()
                    )),
                }
            }
        }
    }
}

/// The name an item defines in its module's namespace, if it is one a path can name.
fn defined_name(item: &syn::Item) -> Option<String> {
    let ident = match item {
        syn::Item::Const(i) => &i.ident,
        syn::Item::Enum(i) => &i.ident,
        syn::Item::Fn(i) => &i.sig.ident,
        syn::Item::Static(i) => &i.ident,
        syn::Item::Struct(i) => &i.ident,
        syn::Item::Trait(i) => &i.ident,
        syn::Item::TraitAlias(i) => &i.ident,
        syn::Item::Type(i) => &i.ident,
        syn::Item::Union(i) => &i.ident,
        _ => return None,
    };
    Some(ident.to_string())
}

/// The value of a `#[path = "..."]` attribute.
fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|attr| match &attr.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}
