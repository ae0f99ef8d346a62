//! One side of a diff: the guest paths asked for, walked in one FLR session within bounds, and the
//! comparison of two sides.
//!
//! A side knows which folders it listed whole. An entry one side lacks counts as added or removed
//! only where that side is known not to hold it: its folder was listed whole, or the folder itself
//! is known to be missing. Where a walk stopped short, what lies beyond is not compared, so a bound
//! never shows up as files deleted.

use std::collections::{BTreeMap, HashSet, VecDeque};

use super::report::{DiffEntry, DiffKind, FileState, WalkStop};
use crate::recover::session::{FlrCalls, FlrMount};
use tokio_util::sync::CancellationToken;

use crate::error::{RecoveryRefusal, RewindError};
use crate::zvm::wire::PathItem;

/// How far a walk goes.
#[derive(Debug, Clone, Copy)]
pub(in crate::recover) struct Limits {
    /// The most entries one side lists.
    pub(in crate::recover) max_entries: usize,
    /// The deepest folder listed, counted from the path asked for (0: only its own items).
    pub(in crate::recover) max_depth: usize,
}

impl Limits {
    /// The bounds `[diff]` sets.
    pub(in crate::recover) fn of(settings: &crate::config::DiffSettings) -> Limits {
        Limits {
            max_entries: settings.max_entries,
            max_depth: settings.max_depth,
        }
    }
}

/// One entry of a side.
#[derive(Debug, Clone, PartialEq)]
pub(in crate::recover) struct Entry {
    pub(in crate::recover) path: String,
    pub(in crate::recover) folder: bool,
    pub(in crate::recover) state: FileState,
}

/// What one mounted checkpoint holds under the paths asked for.
#[derive(Debug, Default)]
pub(in crate::recover) struct Tree {
    /// Every entry found, by its key ([`key`]).
    pub(in crate::recover) entries: BTreeMap<String, Entry>,
    /// The keys of the folders listed whole (`""`: the partitions).
    listed: HashSet<String>,
    /// The keys of the paths asked for that this checkpoint does not hold.
    absent: HashSet<String>,
    /// Where the walk stopped short.
    pub(in crate::recover) stopped: Vec<WalkStop>,
}

/// The key of a guest path: the path, lower-cased on a Windows guest (whose names ignore case).
pub(in crate::recover) fn key(path: &str) -> String {
    let windows = path.split('/').next().is_some_and(|p| p.ends_with(':'));
    match windows {
        true => path.to_lowercase(),
        false => path.to_string(),
    }
}

/// The folder holding `path` (`""` for a partition).
fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(p, _)| p)
}

impl Tree {
    /// Whether this side is known not to hold the entry `key`.
    fn lacks(&self, key: &str) -> bool {
        let mut at = key;
        loop {
            if self.absent.contains(at) {
                return true;
            }
            if at.is_empty() {
                return false;
            }
            let folder = parent(at);
            if self.listed.contains(folder) {
                return true;
            }
            // A folder this side holds but did not list whole: what it lacks is not known.
            if self.entries.contains_key(folder) {
                return false;
            }
            at = folder;
        }
    }

    fn add(&mut self, path: String, item: &PathItem) {
        let entry = Entry {
            folder: item.is_folder(),
            state: FileState {
                size: item
                    .size_in_bytes
                    .and_then(|s| u64::try_from(s).ok())
                    .filter(|_| !item.is_folder()),
                written: item.last_write_time,
            },
            path,
        };
        self.entries.insert(key(&entry.path), entry);
    }
}

/// The path of `item`, listed in `folder`: its `Path` when that is the full path, else the folder
/// and its name.
fn child_path(folder: &str, item: &PathItem) -> String {
    let full = item
        .path
        .as_deref()
        .unwrap_or_default()
        .trim_end_matches('/');
    let under = |f: &str| full.len() > f.len() && key(&full[..f.len()]) == key(f);
    if !folder.is_empty() && under(folder) && full.as_bytes()[folder.len()] == b'/' {
        return full.to_string();
    }
    match folder {
        "" => item.name().to_string(),
        _ => format!("{folder}/{}", item.name()),
    }
}

/// Walks `roots` (`""`: every partition) in the mounted `session`, breadth first, within `limits`.
pub(in crate::recover) async fn walk(
    flr: &FlrMount<'_>,
    session: &str,
    roots: &[String],
    limits: Limits,
    stop: &CancellationToken,
    calls: &mut FlrCalls,
) -> Result<Tree, RewindError> {
    let mut tree = Tree::default();
    let mut queue: VecDeque<(String, usize)> = VecDeque::new();
    for root in roots {
        if root.is_empty() {
            queue.push_back((String::new(), 0));
            continue;
        }
        match find_root(flr, session, root, calls).await? {
            Some(item) => {
                let path = child_path(parent(root), &item);
                if item.is_folder() {
                    queue.push_back((path.clone(), 0));
                }
                tree.add(path, &item);
            }
            None => {
                tree.absent.insert(key(root));
            }
        }
    }
    let mut too_deep = Vec::new();
    while let Some((folder, depth)) = queue.pop_front() {
        if tree.entries.len() >= limits.max_entries {
            tree.stopped.push(WalkStop::Entries {
                limit: limits.max_entries,
                folder,
            });
            break;
        }
        if stop.is_cancelled() {
            return Err(interrupted(&folder));
        }
        let listing = flr.browse(session, &folder, calls).await?;
        let mut whole = true;
        for item in &listing.path_items {
            if tree.entries.len() >= limits.max_entries {
                whole = false;
                break;
            }
            let path = child_path(&folder, item);
            if item.is_folder() {
                match depth < limits.max_depth {
                    true => queue.push_back((path.clone(), depth + 1)),
                    false => too_deep.push(path.clone()),
                }
            }
            tree.add(path, item);
        }
        if whole {
            tree.listed.insert(key(&folder));
        } else {
            tree.stopped.push(WalkStop::Entries {
                limit: limits.max_entries,
                folder,
            });
            break;
        }
    }
    if !too_deep.is_empty() {
        tree.stopped.push(WalkStop::Depth {
            limit: limits.max_depth,
            folders: too_deep.len(),
            first: too_deep.swap_remove(0),
        });
    }
    Ok(tree)
}

/// The error of a walk or a download stopped at `at`.
pub(in crate::recover) fn interrupted(at: &str) -> RewindError {
    RewindError::NotPossible {
        reason: RecoveryRefusal::DiffInterrupted { at: at.to_string() },
    }
}

/// The item that the path asked for is, from its folder's listing; `None` when the checkpoint does
/// not hold it (or its folder).
async fn find_root(
    flr: &FlrMount<'_>,
    session: &str,
    root: &str,
    calls: &mut FlrCalls,
) -> Result<Option<PathItem>, RewindError> {
    let folder = parent(root);
    let listing = match flr.browse(session, folder, calls).await {
        Ok(listing) => listing,
        // A folder the checkpoint does not hold is answered 4xx (never 403, which says who).
        Err(RewindError::Zvm { status, .. }) if (400..500).contains(&status) && status != 403 => {
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    Ok(listing
        .path_items
        .into_iter()
        .find(|i| key(&child_path(folder, i)) == key(root)))
}

/// What changed from `before` to `after`, by path.
pub(in crate::recover) fn compare(before: &Tree, after: &Tree) -> Vec<DiffEntry> {
    let mut out = Vec::new();
    for (k, b) in &before.entries {
        match after.entries.get(k) {
            Some(a) => out.extend(changed(b, a)),
            None if after.lacks(k) => out.push(entry(DiffKind::Removed, b, Some(b), None)),
            None => {}
        }
    }
    for (k, a) in &after.entries {
        if !before.entries.contains_key(k) && before.lacks(k) {
            out.push(entry(DiffKind::Added, a, None, Some(a)));
        }
    }
    out.sort_by_key(|e| key(&e.path));
    out
}

/// The entry of a path both sides hold, when it changed or cannot be told.
fn changed(b: &Entry, a: &Entry) -> Option<DiffEntry> {
    if b.folder && a.folder {
        // A folder's own write time moves with every file in it: its files say what changed.
        return None;
    }
    if b.folder != a.folder {
        return Some(entry(DiffKind::Changed, a, Some(b), Some(a)));
    }
    let sizes = differs(b.state.size, a.state.size);
    let times = differs(b.state.written, a.state.written);
    match (sizes, times) {
        (None, None) => Some(entry(DiffKind::Unknown, a, Some(b), Some(a))),
        (Some(true), _) | (_, Some(true)) => Some(entry(DiffKind::Changed, a, Some(b), Some(a))),
        _ => None,
    }
}

/// Whether two values differ, when both are known.
fn differs<T: PartialEq>(x: Option<T>, y: Option<T>) -> Option<bool> {
    x.zip(y).map(|(x, y)| x != y)
}

fn entry(kind: DiffKind, e: &Entry, before: Option<&Entry>, after: Option<&Entry>) -> DiffEntry {
    DiffEntry {
        path: e.path.clone(),
        kind,
        folder: e.folder,
        before: before.map(|b| b.state.clone()),
        after: after.map(|a| a.state.clone()),
        content: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::DateTime;

    fn file(path: &str, size: Option<u64>, minute: Option<u32>) -> Entry {
        Entry {
            path: path.into(),
            folder: false,
            state: FileState {
                size,
                written: minute.map(|m| {
                    DateTime::parse_from_rfc3339(&format!("2026-12-05T10:{m:02}:00Z"))
                        .unwrap()
                        .to_utc()
                }),
            },
        }
    }

    fn tree(entries: &[Entry], listed: &[&str]) -> Tree {
        Tree {
            entries: entries.iter().map(|e| (key(&e.path), e.clone())).collect(),
            listed: listed.iter().map(|l| l.to_string()).collect(),
            ..Tree::default()
        }
    }

    fn kinds(diff: &[DiffEntry]) -> Vec<(String, DiffKind)> {
        diff.iter().map(|d| (d.path.clone(), d.kind)).collect()
    }

    #[test]
    fn an_edit_an_addition_and_a_deletion_are_listed_and_nothing_else() {
        let before = tree(
            &[
                file("sda1/etc/app.conf", Some(10), Some(1)),
                file("sda1/etc/old.conf", Some(5), Some(1)),
                file("sda1/etc/same.conf", Some(7), Some(1)),
            ],
            &["sda1/etc"],
        );
        let after = tree(
            &[
                file("sda1/etc/app.conf", Some(10), Some(9)),
                file("sda1/etc/new.conf", Some(3), Some(9)),
                file("sda1/etc/same.conf", Some(7), Some(1)),
            ],
            &["sda1/etc"],
        );
        assert_eq!(
            kinds(&compare(&before, &after)),
            [
                ("sda1/etc/app.conf".to_string(), DiffKind::Changed),
                ("sda1/etc/new.conf".to_string(), DiffKind::Added),
                ("sda1/etc/old.conf".to_string(), DiffKind::Removed),
            ]
        );
        assert!(compare(&before, &before).is_empty(), "an unchanged tree");
    }

    #[test]
    fn what_lies_beyond_where_a_walk_stopped_is_not_compared() {
        // The later side stopped before listing sda1/var whole: its missing file is not "removed".
        let before = tree(&[file("sda1/var/log.txt", Some(1), Some(1))], &["sda1/var"]);
        let mut after = tree(&[], &[]);
        after.entries.insert(
            "sda1/var".into(),
            Entry {
                path: "sda1/var".into(),
                folder: true,
                state: FileState::default(),
            },
        );
        assert!(compare(&before, &after).is_empty());
        // A folder known to be missing: everything under it was removed.
        after.absent.insert("sda1/var".into());
        after.entries.clear();
        assert_eq!(kinds(&compare(&before, &after)).len(), 1);
    }

    #[test]
    fn a_size_or_time_the_zvm_did_not_give_is_unknown_and_the_rest_is_compared() {
        let b = file("C:/App/a.ini", None, Some(1));
        let a = file("c:/app/A.INI", Some(4), Some(2));
        assert_eq!(changed(&b, &a).unwrap().kind, DiffKind::Changed);
        let a = file("c:/app/a.ini", Some(4), Some(1));
        assert!(changed(&b, &a).is_none(), "the known time is the same");
        let a = file("c:/app/a.ini", Some(4), None);
        assert_eq!(changed(&b, &a).unwrap().kind, DiffKind::Unknown);
    }

    #[test]
    fn a_listed_items_path_is_its_full_path_or_its_folder_and_name() {
        let item = |p: &str| PathItem {
            path: Some(p.into()),
            ..serde_json::from_str("{}").unwrap()
        };
        assert_eq!(child_path("sda1/etc", &item("sda1/etc/a")), "sda1/etc/a");
        assert_eq!(child_path("sda1/etc", &item("a")), "sda1/etc/a");
        assert_eq!(child_path("C:/App", &item("c:/app/X.ini")), "c:/app/X.ini");
        assert_eq!(child_path("", &item("sda1")), "sda1");
        assert_eq!(child_path("sda1/et", &item("sda1/etc")), "sda1/et/etc");
    }
}
