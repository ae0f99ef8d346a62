//! What the agent changed: the files under the paths asked for, compared between the change's
//! tagged checkpoint and a later one (the VPG's latest by default). Zerto has no diff of its own;
//! its FLR browse answers each file's size and last write time, so two checkpoints mounted and
//! browsed are a diff.
//!
//! The two checkpoints are mounted in turn, never at once (a ZVM may allow one FLR session per VM),
//! at the VPG's recovery site as a file recovery is, and each session is unmounted before the next
//! is mounted, after an error too. With `content`, the changed files are downloaded: the later
//! versions while the later checkpoint is mounted, then the tag's versions in a third session. A
//! diff sends no write to the VM and none to its VPG.

mod content;
mod walk;

use std::time::Instant;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::destination::GuestPath;
use super::session::{FlrCalls, FlrMount};
use super::{
    RecoverContext, RecoveryNote, RecoveryPoint, Unmount, check_change, client_of, pick_for_flr,
    recovery_wait, resolve,
};
use crate::error::{RecoveryRefusal, RewindError};
use crate::progress::ProgressSink;
use crate::protection::VmRef;
use crate::zvm::ZvmClient;
pub use content::Content;
use tokio_util::sync::CancellationToken;
use walk::compare;
pub(super) use walk::{Limits, Tree, walk};

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

/// Runs [`crate::Rewind::diff`].
pub(crate) async fn diff(
    ctx: &RecoverContext<'_>,
    req: &DiffRequest,
    sink: &dyn ProgressSink,
    stop: &CancellationToken,
) -> Result<DiffReport, RewindError> {
    let began = Instant::now();
    let change = check_change(&req.change)?;
    crate::protection::validate_query(&req.vm)?;
    let roots = roots(&req.paths)?;
    let (protection, points) = resolve(ctx, &req.vm, change).await?;
    let (point, site) = pick_for_flr(&protection.vm, &points)?;
    let client = client_of(ctx, &site)?;
    let (later_point, against) = later(&client, point, req.against.as_deref()).await?;
    let settings = ctx.config.diff;
    let limits = Limits::of(&settings);
    let vm = &protection.vm;
    let mut run = Sessions::new(recovery_wait(ctx));
    let before = run
        .session(
            FlrMount::new(client.clone(), vm, point, sink, run.wait),
            async |flr, s, calls| walk(flr, s, &roots, limits, stop, calls).await,
        )
        .await?;
    let mut changed_after = Vec::new();
    let (after, mut entries) = run
        .session(
            FlrMount::new(client.clone(), vm, &later_point, sink, run.wait),
            async |flr, s, calls| {
                let after = walk(flr, s, &roots, limits, stop, calls).await?;
                let entries = compare(&before, &after);
                if req.content {
                    changed_after =
                        content::read_changed(flr, s, &entries, &settings, stop, calls).await?;
                }
                Ok((after, entries))
            },
        )
        .await?;
    if req.content && !changed_after.is_empty() {
        let changed_before = run
            .session(
                FlrMount::new(client, vm, point, sink, run.wait),
                async |flr, s, calls| {
                    content::read_changed(flr, s, &entries, &settings, stop, calls).await
                },
            )
            .await?;
        content::compare_contents(&mut entries, changed_before, changed_after, &settings);
    }
    let stopped = both_stops(before.stopped, after.stopped);
    Ok(DiffReport {
        vm: vm.clone(),
        change_id: point.change_id.clone(),
        from: point.clone(),
        against,
        site,
        paths: roots,
        counts: counts(&entries),
        entries,
        stopped,
        calls: run.calls,
        sessions: run.ends,
        elapsed_ms: began.elapsed().as_millis() as u64,
        notes: run.notes,
    })
}

/// The FLR sessions of one diff or preview, opened in turn, and what they cost.
#[derive(Default)]
pub(super) struct Sessions {
    pub(super) wait: std::time::Duration,
    pub(super) calls: FlrCalls,
    pub(super) ends: Vec<SessionEnd>,
    pub(super) notes: Vec<RecoveryNote>,
}

impl Sessions {
    /// No session yet; each task of one is waited for `wait`.
    pub(super) fn new(wait: std::time::Duration) -> Sessions {
        Sessions {
            wait,
            ..Sessions::default()
        }
    }

    /// Mounts `flr`'s checkpoint, runs `work` in it and unmounts it, whatever `work` did.
    pub(super) async fn session<T>(
        &mut self,
        mut flr: FlrMount<'_>,
        work: impl AsyncFnOnce(&FlrMount<'_>, &str, &mut FlrCalls) -> Result<T, RewindError>,
    ) -> Result<T, RewindError> {
        let session = flr.mount().await?;
        self.calls.mounts += 1;
        let done = match flr.wait_mounted(&session).await {
            Ok(()) => work(&flr, &session, &mut self.calls).await,
            Err(e) => Err(e),
        };
        let unmount = flr.unmount(&session).await;
        self.notes.append(&mut flr.notes);
        let end = SessionEnd {
            session_id: session.clone(),
            checkpoint_id: flr.point.checkpoint_id.clone(),
            unmount: unmount.clone(),
        };
        self.ends.push(end);
        match done {
            Ok(value) => {
                if let Some(error) = unmount.error.clone() {
                    self.notes.push(RecoveryNote::NotUnmounted {
                        session_id: session,
                        site: flr.site().to_string(),
                        error,
                    });
                }
                Ok(value)
            }
            Err(error) => Err(RewindError::FlrAborted {
                cleanup: unmount.sentence(&session, flr.site()),
                unmounted: unmount.unmounted,
                error: Box::new(error),
                session_id: Some(session),
                site: flr.site().to_string(),
                recovered: Vec::new(),
            }),
        }
    }
}

/// Where the walks of both checkpoints stopped, each place once.
pub(super) fn both_stops(mut first: Vec<WalkStop>, second: Vec<WalkStop>) -> Vec<WalkStop> {
    for s in second {
        if !first.contains(&s) {
            first.push(s);
        }
    }
    first
}

/// The guest paths to walk, checked: `[""]` (every partition) when none is given.
fn roots(paths: &[String]) -> Result<Vec<String>, RewindError> {
    if paths.is_empty() {
        return Ok(vec![String::new()]);
    }
    let parsed = super::destination::parse_paths_with(paths, GuestPath::parse_to_compare)?;
    Ok(parsed.iter().map(|p| p.as_str().to_string()).collect())
}

/// The checkpoint to compare the tag with, as a point of the same VPG: `against` (`latest`, the
/// default, or a checkpoint identifier the VPG lists).
pub(super) async fn later(
    client: &ZvmClient,
    tag: &RecoveryPoint,
    against: Option<&str>,
) -> Result<(RecoveryPoint, LaterPoint), RewindError> {
    let checkpoints = client.checkpoints(&tag.vpg_id, tag.timestamp).await?;
    let wanted = against
        .map(str::trim)
        .filter(|a| !a.eq_ignore_ascii_case("latest"));
    let latest = checkpoints.iter().max_by_key(|c| c.time_stamp);
    let chosen = match wanted {
        None => latest,
        Some(id) => checkpoints
            .iter()
            .find(|c| c.checkpoint_identifier.as_deref() == Some(id)),
    };
    let Some(chosen) = chosen else {
        return Err(RewindError::NotPossible {
            reason: RecoveryRefusal::CheckpointNotListed {
                vpg: tag.vpg_name.clone(),
                checkpoint: wanted.unwrap_or("latest").to_string(),
                listed: checkpoints.len(),
            },
        });
    };
    let point = RecoveryPoint {
        checkpoint_id: chosen.checkpoint_identifier.clone().unwrap_or_default(),
        timestamp: chosen.time_stamp,
        tag: chosen.tag.clone().unwrap_or_default(),
        retention_set: None,
        ..tag.clone()
    };
    let later = LaterPoint {
        checkpoint_id: point.checkpoint_id.clone(),
        timestamp: point.timestamp,
        tag: chosen.tag.clone().filter(|t| !t.is_empty()),
        latest: latest.is_some_and(|l| std::ptr::eq(l, chosen)),
    };
    Ok((point, later))
}

fn counts(entries: &[DiffEntry]) -> DiffCounts {
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
