//! The workspace read once, and what breaks its layout rules.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use crate::graph;
use crate::resolve::{self, Use};
use crate::source;
use crate::tree::Unit;

/// Every crate root of a workspace and the uses between its files.
#[derive(Debug)]
pub struct Workspace {
    root: PathBuf,
    units: Vec<(Unit, Vec<Use>)>,
}

/// A face whose own items its children use: it should only declare and re-export.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct FaceUse {
    pub face: PathBuf,
    pub child: PathBuf,
    pub names: BTreeSet<String>,
}

/// A file of more non-test lines than the limit.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct LongFile {
    pub path: PathBuf,
    pub lines: usize,
}

impl Workspace {
    /// Reads every crate under `root` (each folder holding a `Cargo.toml`, `root` itself included):
    /// its library, binaries, integration tests, benches, examples and fuzz targets.
    pub fn read(root: &Path) -> Workspace {
        let units = crate_folders(root)
            .iter()
            .flat_map(|folder| crate_roots(folder))
            .map(|(file, test)| {
                let unit = Unit::read(&file, test);
                let uses = resolve::uses(&unit);
                (unit, uses)
            })
            .collect();
        Workspace {
            root: root.to_path_buf(),
            units,
        }
    }

    /// Each circle of files that use one another, as paths from the workspace's root; the uses
    /// inside it say what to cut.
    pub fn circles(&self) -> Vec<Circle> {
        let mut out = BTreeSet::new();
        for (_, uses) in &self.units {
            let edges: Vec<(PathBuf, PathBuf)> = uses
                .iter()
                .map(|u| (u.from.clone(), u.to.clone()))
                .collect();
            for files in graph::circles(&edges) {
                let inside = uses
                    .iter()
                    .filter(|u| files.contains(&u.from) && files.contains(&u.to))
                    .map(|u| (self.short(&u.from), self.short(&u.to), u.name.clone()))
                    .collect();
                let files = files.iter().map(|f| self.short(f)).collect();
                out.insert(Circle {
                    files,
                    uses: inside,
                });
            }
        }
        out.into_iter().collect()
    }

    /// Each circle among the modules of one folder, a folder inside it counting as one module: a
    /// file of `a/` using `b.rs` and `b.rs` using `a/` is a circle even when no file of `a/` is
    /// used back.
    pub fn folder_circles(&self) -> Vec<Circle> {
        let mut out = BTreeSet::new();
        for (unit, uses) in &self.units {
            for module in &unit.modules {
                let children: Vec<usize> = module
                    .children
                    .values()
                    .copied()
                    .filter(|&c| unit.modules[c].file != module.file)
                    .collect();
                let child_of = |m: usize| children.iter().copied().find(|&c| unit.within(m, c));
                let mut between = Vec::new();
                for u in uses {
                    if let (Some(a), Some(b)) = (child_of(u.from_module), child_of(u.to_module))
                        && a != b
                    {
                        between.push((a, b, u));
                    }
                }
                let edges: Vec<(usize, usize)> = between.iter().map(|(a, b, _)| (*a, *b)).collect();
                let name = |c: usize| self.short(&unit.modules[c].file);
                for members in graph::circles(&edges) {
                    let inside = between
                        .iter()
                        .filter(|(a, b, _)| members.contains(a) && members.contains(b))
                        .map(|(_, _, u)| (self.short(&u.from), self.short(&u.to), u.name.clone()))
                        .collect();
                    let mut files: Vec<PathBuf> = members.iter().map(|&c| name(c)).collect();
                    files.sort();
                    out.insert(Circle {
                        files,
                        uses: inside,
                    });
                }
            }
        }
        out.into_iter().collect()
    }

    /// Each face (a file with modules of its own: a `mod.rs`, a crate root, an `a.rs` beside `a/`)
    /// whose own items a module inside it uses.
    pub fn faces_used(&self) -> Vec<FaceUse> {
        let mut found: BTreeMap<(PathBuf, PathBuf), BTreeSet<String>> = BTreeMap::new();
        for (unit, uses) in &self.units {
            for u in uses {
                let top = unit.file_module(u.to_module);
                let face = &unit.modules[top];
                let is_face = face
                    .children
                    .values()
                    .any(|&c| unit.modules[c].file != face.file);
                if is_face && unit.within(u.from_module, top) {
                    let key = (self.short(&u.to), self.short(&u.from));
                    found.entry(key).or_default().insert(u.name.clone());
                }
            }
        }
        found
            .into_iter()
            .map(|((face, child), names)| FaceUse { face, child, names })
            .collect()
    }

    /// Each file of non-test code (a library's or a binary's, not a test's or a bench's) longer
    /// than `limit` lines of non-test code, but those `exempt` names (paths from the root).
    pub fn long_files(&self, limit: usize, exempt: &[&str]) -> Vec<LongFile> {
        let files: BTreeSet<&PathBuf> = self
            .units
            .iter()
            .filter(|(unit, _)| !unit.test)
            .flat_map(|(unit, _)| unit.modules.iter().map(|m| &m.file))
            .collect();
        files
            .into_iter()
            .filter(|f| !exempt.iter().any(|e| self.short(f) == Path::new(e)))
            .filter_map(|f| {
                let text = std::fs::read_to_string(f).ok()?;
                let lines = source::non_test_lines(&text, &syn::parse_file(&text).ok()?);
                (lines > limit).then(|| LongFile {
                    path: self.short(f),
                    lines,
                })
            })
            .collect()
    }

    /// What could not be read: a file syn does not parse, a `mod` whose file is missing. Such a file
    /// would be in no rule's sight.
    pub fn problems(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .units
            .iter()
            .flat_map(|(unit, _)| unit.problems.iter().cloned())
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// Each name a room reaches through a `use` of its own face (`use super::Item` where the face
    /// re-exports a sibling's item): the room should name the sibling.
    pub fn faces_passed_through(&self) -> Vec<FaceUse> {
        let mut found: BTreeMap<(PathBuf, PathBuf), BTreeSet<String>> = BTreeMap::new();
        for (unit, uses) in &self.units {
            for u in uses {
                if let Some(face) = u.through_face {
                    let key = (self.short(&unit.modules[face].file), self.short(&u.from));
                    found.entry(key).or_default().insert(u.name.clone());
                }
            }
        }
        found
            .into_iter()
            .map(|((face, child), names)| FaceUse { face, child, names })
            .collect()
    }

    /// How many files were read, for a test to see the workspace was found.
    pub fn file_count(&self) -> usize {
        let files: BTreeSet<&PathBuf> = self
            .units
            .iter()
            .flat_map(|(unit, _)| unit.modules.iter().map(|m| &m.file))
            .collect();
        files.len()
    }

    fn short(&self, path: &Path) -> PathBuf {
        path.strip_prefix(&self.root).unwrap_or(path).to_path_buf()
    }
}

/// Files that use one another in a circle, and the uses between them (from, to, name).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Circle {
    pub files: Vec<PathBuf>,
    pub uses: Vec<(PathBuf, PathBuf, String)>,
}

impl fmt::Display for Circle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let files: Vec<String> = self.files.iter().map(|p| p.display().to_string()).collect();
        writeln!(f, "a circle of {}: {}", files.len(), files.join(", "))?;
        for (from, to, name) in &self.uses {
            writeln!(f, "  {} uses {name} of {}", from.display(), to.display())?;
        }
        Ok(())
    }
}

/// `root` and each folder below it that holds a `Cargo.toml`, `target` and hidden folders left out.
fn crate_folders(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(dir) = todo.pop() {
        if dir.join("Cargo.toml").is_file() {
            out.push(dir.clone());
        }
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() && name != "target" && !name.starts_with('.') {
                todo.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The crate roots of the crate in `folder`, each with whether it is test code.
fn crate_roots(folder: &Path) -> Vec<(PathBuf, bool)> {
    let mut out = Vec::new();
    for file in ["src/lib.rs", "src/main.rs", "build.rs"] {
        out.push((folder.join(file), false));
    }
    out.extend(rs_files(&folder.join("src/bin")).map(|f| (f, false)));
    out.extend(rs_files(&folder.join("fuzz_targets")).map(|f| (f, false)));
    for dir in ["tests", "benches", "examples"] {
        out.extend(rs_files(&folder.join(dir)).map(|f| (f, true)));
        let nested = std::fs::read_dir(folder.join(dir))
            .into_iter()
            .flatten()
            .flatten();
        out.extend(nested.map(|e| (e.path().join("main.rs"), true)));
    }
    out.retain(|(file, _)| file.is_file());
    out
}

fn rs_files(dir: &Path) -> impl Iterator<Item = PathBuf> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
}
