//! What a diff reports: each entry changed, added or removed, the counts, the points compared,
//! where a walk stopped, and how each session ended.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::protection::VmRef;
use crate::recover::note::RecoveryNote;
use crate::recover::point::RecoveryPoint;
use crate::recover::report::Unmount;
use crate::recover::session::FlrCalls;

/// What [`crate::Rewind::diff`] is asked to do.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DiffRequest {
    /// The VM: name, host name, IP address or vmIdentifier.
    pub vm: String,
    /// The change id of the guard (the newest tag of that change is used), or a tag exactly.
    pub change: String,
    /// Guest paths to compare, partition-rooted (`sda1/etc/app`, `C:/ProgramData/App`): folders are
    /// walked, files compared. None: every partition.
    #[serde(default)]
    pub paths: Vec<String>,
    /// What to compare the tag with: `latest` (the default: the VPG's newest checkpoint, the VM as
    /// it is now within the RPO) or a checkpoint identifier of the same VPG.
    #[serde(default)]
    pub against: Option<String>,
    /// Also compare the content of each changed file within the size cap (a unified diff of text;
    /// binary files are said as binary).
    #[serde(default)]
    pub content: bool,
}

/// The result of [`crate::Rewind::diff`].
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct DiffReport {
    /// The VM.
    pub vm: VmRef,
    /// The change.
    pub change_id: String,
    /// The tagged checkpoint: the "before".
    pub from: RecoveryPoint,
    /// The checkpoint compared with it: the "after".
    pub against: LaterPoint,
    /// The configured site whose ZVM mounted both.
    pub site: String,
    /// The guest paths compared (`""`: every partition).
    pub paths: Vec<String>,
    /// How many entries of each kind.
    pub counts: DiffCounts,
    /// What changed, by path.
    pub entries: Vec<DiffEntry>,
    /// Where a walk stopped short; what lies beyond is not compared.
    pub stopped: Vec<WalkStop>,
    /// What the diff cost the ZVM.
    pub calls: FlrCalls,
    /// Each FLR session, and what became of it.
    pub sessions: Vec<SessionEnd>,
    /// Milliseconds from the call to the report.
    pub elapsed_ms: u64,
    /// What the reader should know.
    pub notes: Vec<RecoveryNote>,
}

/// The checkpoint a tag is compared with.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct LaterPoint {
    /// Its identifier.
    pub checkpoint_id: String,
    /// Its time (the ZVM's clock).
    pub timestamp: Option<DateTime<Utc>>,
    /// Its tag, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// Whether it was the VPG's latest checkpoint when the diff ran.
    pub latest: bool,
}

/// How many entries of each kind a diff found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct DiffCounts {
    /// In the later checkpoint only.
    pub added: usize,
    /// In the tag only.
    pub removed: usize,
    /// In both, with another size or write time (or a file become a folder).
    pub changed: usize,
    /// In both, where the ZVM gave neither size nor write time to compare.
    pub unknown: usize,
}

/// One path that differs.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct DiffEntry {
    /// The guest path.
    pub path: String,
    /// How it differs.
    pub kind: DiffKind,
    /// A folder (or partition) rather than a file.
    pub folder: bool,
    /// What the tag holds; absent when added.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<FileState>,
    /// What the later checkpoint holds; absent when removed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<FileState>,
    /// The content compared, with `content`, for a changed file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<Content>,
}

/// How a path differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DiffKind {
    /// In the later checkpoint only.
    Added,
    /// In the tag only.
    Removed,
    /// In both, and different.
    Changed,
    /// In both; the ZVM gave nothing to compare.
    Unknown,
}

impl DiffKind {
    /// The word a person reads.
    pub fn word(self) -> &'static str {
        match self {
            DiffKind::Added => "added",
            DiffKind::Removed => "removed",
            DiffKind::Changed => "changed",
            DiffKind::Unknown => "unknown",
        }
    }
}

/// A file's size and last write time at one checkpoint, as the ZVM listed them (`null`: not given).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileState {
    /// Its size in bytes.
    pub size: Option<u64>,
    /// When it was last written (the guest's clock).
    pub written: Option<DateTime<Utc>>,
}

/// Where the walk of one checkpoint stopped short.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum WalkStop {
    /// `[diff] max_entries` entries were listed.
    Entries {
        /// The bound.
        limit: usize,
        /// The folder being listed, or next, when it was reached.
        folder: String,
    },
    /// Folders deeper than `[diff] max_depth` were not listed.
    Depth {
        /// The bound.
        limit: usize,
        /// How many folders were left unlisted.
        folders: usize,
        /// The first of them.
        first: String,
    },
}

impl std::fmt::Display for WalkStop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WalkStop::Entries { limit, folder } => write!(
                f,
                "stopped after {limit} entries, at {folder:?}: raise [diff] max_entries or give a narrower --path"
            ),
            WalkStop::Depth {
                limit,
                folders,
                first,
            } => write!(
                f,
                "{folders} folder(s) deeper than {limit} levels were not listed, the first {first:?}: raise [diff] max_depth or give it as --path"
            ),
        }
    }
}

/// One FLR session of a diff.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SessionEnd {
    /// The session.
    pub session_id: String,
    /// The checkpoint it mounted.
    pub checkpoint_id: String,
    /// What happened to it at the end.
    pub unmount: Unmount,
}

pub(super) fn counts(entries: &[DiffEntry]) -> DiffCounts {
    let mut c = DiffCounts::default();
    for e in entries {
        match e.kind {
            DiffKind::Added => c.added += 1,
            DiffKind::Removed => c.removed += 1,
            DiffKind::Changed => c.changed += 1,
            DiffKind::Unknown => c.unknown += 1,
        }
    }
    c
}

impl DiffReport {
    /// One line: how much changed, between which checkpoints, where, and what it cost.
    pub fn headline(&self) -> String {
        let c = self.counts;
        let total = c.added + c.removed + c.changed + c.unknown;
        let what = match total {
            0 => "NO CHANGE".to_string(),
            _ => format!(
                "{total} CHANGE(S): {} added, {} removed, {} changed{}",
                c.added,
                c.removed,
                c.changed,
                match c.unknown {
                    0 => String::new(),
                    n => format!(", {n} unknown"),
                }
            ),
        };
        format!(
            "{what} in {} for change {} from VPG {} checkpoint {} ({}) to {} ({}), via FLR at site {}, in {}",
            self.vm.name,
            self.change_id,
            self.from.vpg_name,
            self.from.checkpoint_id,
            time_text(self.from.timestamp),
            match self.against.latest {
                true => format!("the latest checkpoint {}", self.against.checkpoint_id),
                false => format!("checkpoint {}", self.against.checkpoint_id),
            },
            time_text(self.against.timestamp),
            self.site,
            crate::progress::elapsed_text(self.elapsed_ms)
        )
    }

    /// What a person reads after the table: where the walk stopped, what it cost, the sessions
    /// not unmounted, the notes.
    pub fn footer(&self) -> Vec<String> {
        let mut lines: Vec<String> = self.stopped.iter().map(ToString::to_string).collect();
        let c = self.calls;
        lines.push(format!(
            "cost at the ZVM: {} mount(s), {} folder(s) browsed, {} download(s)",
            c.mounts, c.browses, c.downloads
        ));
        lines.extend(self.notes.iter().map(ToString::to_string));
        lines
    }
}

/// A checkpoint's time as people read it.
pub fn time_text(t: Option<DateTime<Utc>>) -> String {
    t.map_or_else(
        || "time unknown".to_string(),
        |t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
    )
}

impl FileState {
    /// Size and write time, `unknown` where the ZVM gave none.
    pub fn text(&self) -> String {
        let size = self
            .size
            .map_or_else(|| "size unknown".to_string(), |s| format!("{s} B"));
        let written = self.written.map_or_else(
            || "written unknown".to_string(),
            |t| format!("written {}", t.format("%Y-%m-%d %H:%M:%S")),
        );
        format!("{size}, {written}")
    }
}

/// The content of one changed file, compared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Content {
    /// Both versions are text: the unified diff from the tag's to the later one.
    Text {
        /// The diff, `---`/`+++` headers and `@@` hunks, three lines of context.
        unified: String,
    },
    /// One version or both are not text (a NUL byte, or not UTF-8).
    Binary,
    /// One version or both are larger than `[diff] content_max_bytes`.
    TooLarge {
        /// The cap, in bytes.
        cap: usize,
    },
}
