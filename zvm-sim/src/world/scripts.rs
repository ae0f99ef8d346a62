//! A ZVM's recovery-scripts folders (`/v1/recoveryScripts/...`): the repository of scripts that
//! VPGs run before and after a recovery, and the folder their output goes to. Each is a tree of
//! folders and files kept per site; no script runs in the simulator, so the output folder holds only
//! what a client made there.
//!
//! Paths are written `folder1/folder2/file.ps1`, relative to the folder's root; names compare in any
//! case, as on the appliance's Windows-style share. SW10 numbers an item's type 1 or 2 without
//! naming them: the simulator answers 1 for a folder and 2 for a file.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::clock::SimTime;
use super::refusal::Refusal;

/// `ItemTypeEnumApi` of a folder (the simulator's reading of SW10's unnamed 1).
pub const FOLDER: u8 = 1;
/// `ItemTypeEnumApi` of a file (the simulator's reading of SW10's unnamed 2).
pub const FILE: u8 = 2;

/// Which of a ZVM's two script folders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Root {
    /// `repository`: the scripts.
    Repository,
    /// `output`: what scripts wrote.
    Output,
}

/// A ZVM's two folders.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Scripts {
    repository: Folder,
    output: Folder,
}

/// One folder tree: every item by its lowercased path.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Folder {
    items: BTreeMap<String, Item>,
}

/// A folder or a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Item {
    /// Its path as first written.
    pub path: String,
    /// [`FOLDER`] or [`FILE`].
    pub kind: u8,
    /// When it was made.
    pub created: SimTime,
    /// A file's bytes.
    #[serde(default)]
    pub content: Vec<u8>,
}

impl Item {
    /// Its last segment.
    pub fn name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }
}

/// `path` made canonical: no leading or trailing `/` or `\`, no empty, `.` or `..` segment. Empty
/// is the folder's root.
pub fn clean_path(path: &str) -> Result<String, Refusal> {
    let segments: Vec<&str> = path
        .split(['/', '\\'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if segments.iter().any(|s| *s == "." || *s == "..") {
        return Err(Refusal::BadRequest(format!(
            "The path '{path}' leaves the scripts folder: write it as folder1/folder2/file.ps1, without '.' or '..'."
        )));
    }
    Ok(segments.join("/"))
}

fn key(path: &str) -> String {
    path.to_lowercase()
}

fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(parent, _)| parent)
}

impl Scripts {
    fn folder(&self, root: Root) -> &Folder {
        match root {
            Root::Repository => &self.repository,
            Root::Output => &self.output,
        }
    }

    fn folder_mut(&mut self, root: Root) -> &mut Folder {
        match root {
            Root::Repository => &mut self.repository,
            Root::Output => &mut self.output,
        }
    }

    /// The items directly in the folder at `path` whose name matches `search` (`*` and `?`
    /// wildcards, any case), folders first, then by name.
    pub fn items(
        &self,
        root: Root,
        path: &str,
        search: Option<&str>,
    ) -> Result<Vec<&Item>, Refusal> {
        let path = clean_path(path)?;
        let folder = self.folder(root);
        if !path.is_empty() && folder.get(&path).is_none_or(|i| i.kind != FOLDER) {
            return Err(no_folder(&path));
        }
        let mut items: Vec<&Item> = folder
            .items
            .values()
            .filter(|i| key(parent(&i.path)) == key(&path))
            .filter(|i| {
                search.is_none_or(|s| wildcard(&s.to_lowercase(), &i.name().to_lowercase()))
            })
            .collect();
        items.sort_by_key(|i| (i.kind, i.name().to_lowercase()));
        Ok(items)
    }

    /// Makes the folder at `path`, and the folders above it that are missing.
    pub fn make_folder(&mut self, root: Root, path: &str, now: SimTime) -> Result<(), Refusal> {
        let path = clean_path(path)?;
        if path.is_empty() {
            return Err(Refusal::BadRequest(
                "path is required: the folder to make, as folder1/folder2.".to_owned(),
            ));
        }
        self.folder_mut(root).make(&path, now)
    }

    /// Writes the file `name` into the folder `path` (made when missing). An existing file is
    /// replaced only with `overwrite`.
    pub fn upload(
        &mut self,
        root: Root,
        path: &str,
        name: &str,
        content: Vec<u8>,
        overwrite: bool,
        now: SimTime,
    ) -> Result<(), Refusal> {
        let folder_path = clean_path(path)?;
        let name = clean_path(name)?;
        if name.is_empty() || name.contains('/') {
            return Err(Refusal::BadRequest(
                "The file part needs a file name without folders: give the folder in path.".into(),
            ));
        }
        let file = match folder_path.is_empty() {
            true => name,
            false => format!("{folder_path}/{name}"),
        };
        let folder = self.folder_mut(root);
        if let Some(existing) = folder.get(&file)
            && (existing.kind == FOLDER || !overwrite)
        {
            return Err(Refusal::Conflict(format!(
                "{file} already exists: send overwriteExisting=true to replace it."
            )));
        }
        if !folder_path.is_empty() {
            folder.make(&folder_path, now)?;
        }
        folder.items.insert(
            key(&file),
            Item {
                path: file,
                kind: FILE,
                created: now,
                content,
            },
        );
        Ok(())
    }

    /// The file at `path`.
    pub fn file(&self, root: Root, path: &str) -> Result<&Item, Refusal> {
        let path = clean_path(path)?;
        if path.is_empty() {
            return Err(Refusal::BadRequest(
                "path is required: the file, as folder1/folder2/file.ps1.".to_owned(),
            ));
        }
        self.folder(root)
            .get(&path)
            .filter(|i| i.kind == FILE)
            .ok_or_else(|| no_file(&path))
    }

    /// Deletes the file at `path`.
    pub fn delete_file(&mut self, root: Root, path: &str) -> Result<(), Refusal> {
        self.file(root, path)?;
        let path = clean_path(path)?;
        self.folder_mut(root).items.remove(&key(&path));
        Ok(())
    }

    /// Deletes the folder at `path`, with what it holds only when `even_if_not_empty`.
    pub fn delete_folder(
        &mut self,
        root: Root,
        path: &str,
        even_if_not_empty: bool,
    ) -> Result<(), Refusal> {
        let path = clean_path(path)?;
        let folder = self.folder_mut(root);
        if path.is_empty() || folder.get(&path).is_none_or(|i| i.kind != FOLDER) {
            return Err(no_folder(&path));
        }
        let below = format!("{}/", key(&path));
        let held = folder.items.keys().any(|k| k.starts_with(&below));
        if held && !even_if_not_empty {
            return Err(Refusal::Conflict(format!(
                "The folder {path} is not empty: send deleteIfNotEmpty=true to delete it with what it holds."
            )));
        }
        folder
            .items
            .retain(|k, _| *k != key(&path) && !k.starts_with(&below));
        Ok(())
    }
}

impl Folder {
    fn get(&self, path: &str) -> Option<&Item> {
        self.items.get(&key(path))
    }

    /// Makes `path` and every missing folder above it; a file in the way refuses.
    fn make(&mut self, path: &str, now: SimTime) -> Result<(), Refusal> {
        let mut at = String::new();
        for segment in path.split('/') {
            if !at.is_empty() {
                at.push('/');
            }
            at.push_str(segment);
            match self.get(&at) {
                Some(item) if item.kind == FILE => {
                    return Err(Refusal::Conflict(format!(
                        "{} is a file, so no folder can be made there.",
                        item.path
                    )));
                }
                Some(_) => {}
                None => {
                    let item = Item {
                        path: at.clone(),
                        kind: FOLDER,
                        created: now,
                        content: Vec::new(),
                    };
                    self.items.insert(key(&at), item);
                }
            }
        }
        Ok(())
    }
}

fn no_folder(path: &str) -> Refusal {
    Refusal::NotFound(format!(
        "No folder {path:?} in the scripts folder: list what there is with .../items."
    ))
}

fn no_file(path: &str) -> Refusal {
    Refusal::NotFound(format!(
        "No file {path:?} in the scripts folder: list what there is with .../items."
    ))
}

/// Whether `name` matches `pattern`, where `*` is any run of characters and `?` any one.
fn wildcard(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut pi, mut ni, mut star, mut mark) = (0, 0, None, 0);
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            (pi, ni) = (pi + 1, ni + 1);
        } else if pi < p.len() && p[pi] == '*' {
            (star, mark, pi) = (Some(pi), ni, pi + 1);
        } else if let Some(s) = star {
            (pi, mark) = (s + 1, mark + 1);
            ni = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_is_a_wildcard_over_names() {
        assert!(wildcard("*.ps1", "before.ps1"));
        assert!(wildcard("b?fore*", "before.ps1"));
        assert!(!wildcard("*.ps1", "before.sh"));
        assert!(wildcard("*", ""));
    }

    #[test]
    fn a_path_cannot_leave_the_folder() {
        assert_eq!(clean_path("/a//b/").unwrap(), "a/b");
        assert_eq!(clean_path("a\\b").unwrap(), "a/b");
        assert!(clean_path("a/../../etc").is_err());
    }
}
