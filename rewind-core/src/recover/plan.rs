//! A preview before a file recovery: what it would write where, each file's size and write time at
//! the tag and now (the VPG's latest checkpoint), and a plan id that pins all of it. A real run given
//! the plan id computes the plan again and refuses, naming what differs, when the tag or the files
//! changed since: what a person approved is what is written.
//!
//! The preview mounts the tag and the latest checkpoint in turn (as a diff does) and walks the paths
//! asked for within `[diff]`'s bounds; it writes nothing but the plan itself, kept beside the journal
//! (`plans/<id>.json`, 0600) so that the real run can say what differs.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use super::context::{RecoverContext, client_of, recovery_wait};
use super::destination::{Destination, GuestPath};
use super::diff::{
    FileState, LaterPoint, Limits, SessionEnd, Sessions, Tree, WalkStop, both_stops, later, walk,
};
use super::note::RecoveryNote;
use super::point::{RecoveryPoint, pick_for_flr, resolve};
use super::request::{RecoverFileRequest, checked_locally};
use super::session::{FlrCalls, FlrMount};
use crate::error::{RecoveryRefusal, RewindError};
use crate::progress::ProgressSink;
use crate::protection::VmRef;

/// The folder of the plans beside a journal file, and their kind in a journal's database.
const PLANS_DIR: &str = "plans";

/// What [`crate::Rewind::preview_recover_file`] found: the recovery a person approves.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RecoveryPlan {
    /// The plan id: a digest of the tag, the paths, and each file's size and times at the tag and
    /// now. Give it to the real run (`--plan`, MCP `plan`).
    pub plan_id: String,
    /// The VM.
    pub vm: VmRef,
    /// The change.
    pub change_id: String,
    /// The tagged checkpoint the files would come from.
    pub from: RecoveryPoint,
    /// The VPG's latest checkpoint: the files as they are now, within the RPO.
    pub now: LaterPoint,
    /// The configured site whose ZVM would run the FLR.
    pub site: String,
    /// The destination folder, resolved.
    pub destination: PathBuf,
    /// Each file that would be written.
    pub files: Vec<PlannedFile>,
    /// Where a walk of a folder asked for stopped short: the plan holds what it saw.
    pub stopped: Vec<WalkStop>,
    /// What the preview cost the ZVM.
    pub calls: FlrCalls,
    /// Each FLR session, and what became of it.
    pub sessions: Vec<SessionEnd>,
    /// Milliseconds from the call to the plan.
    pub elapsed_ms: u64,
    /// What the reader should know.
    pub notes: Vec<RecoveryNote>,
}

/// One file a recovery would write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlannedFile {
    /// The guest path.
    pub guest_path: String,
    /// Where it would be written.
    pub written_to: PathBuf,
    /// A local file is there and would be replaced (`overwrite`).
    pub replaces: bool,
    /// Its size and write time at the tag.
    pub at_tag: FileState,
    /// Its size and write time now; absent when the VM no longer has it.
    pub now: Option<FileState>,
}

/// What a plan id is computed from and what a real run compares: kept beside the journal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Pinned {
    vpg_id: String,
    checkpoint_id: String,
    files: Vec<PinnedFile>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct PinnedFile {
    guest_path: String,
    at_tag: FileState,
    now: Option<FileState>,
}

impl Pinned {
    fn of(point: &RecoveryPoint, files: &[PlannedFile]) -> Pinned {
        Pinned {
            vpg_id: point.vpg_id.clone(),
            checkpoint_id: point.checkpoint_id.clone(),
            files: files
                .iter()
                .map(|f| PinnedFile {
                    guest_path: f.guest_path.clone(),
                    at_tag: f.at_tag.clone(),
                    now: f.now.clone(),
                })
                .collect(),
        }
    }

    /// The plan id: the first 16 hex digits of the SHA-256 of the pinned facts.
    fn id(&self) -> String {
        let bytes = serde_json::to_vec(self).unwrap_or_default();
        hex::encode(&Sha256::digest(&bytes)[..8])
    }

    /// What differs from `earlier`, in words; empty when nothing does.
    fn differences(&self, earlier: &Pinned) -> Vec<String> {
        let mut out = Vec::new();
        if (&self.vpg_id, &self.checkpoint_id) != (&earlier.vpg_id, &earlier.checkpoint_id) {
            out.push(format!(
                "the tag is now checkpoint {} of VPG {}, not {} of {}",
                self.checkpoint_id, self.vpg_id, earlier.checkpoint_id, earlier.vpg_id
            ));
        }
        let find = |files: &'_ [PinnedFile], path: &str| {
            files.iter().find(|f| f.guest_path == path).cloned()
        };
        for f in &self.files {
            match find(&earlier.files, &f.guest_path) {
                None => out.push(format!(
                    "{} would be written and was not planned",
                    f.guest_path
                )),
                Some(e) if e.now != f.now => out.push(format!(
                    "{} changed since the plan: now {}, then {}",
                    f.guest_path,
                    state_text(&f.now),
                    state_text(&e.now)
                )),
                Some(e) if e.at_tag != f.at_tag => {
                    out.push(format!("{} differs at the tag", f.guest_path))
                }
                Some(_) => {}
            }
        }
        for e in &earlier.files {
            if find(&self.files, &e.guest_path).is_none() {
                out.push(format!(
                    "{} was planned and would not be written",
                    e.guest_path
                ));
            }
        }
        out
    }
}

fn state_text(s: &Option<FileState>) -> String {
    s.as_ref()
        .map_or_else(|| "absent".to_string(), FileState::text)
}

/// Runs [`crate::Rewind::preview_recover_file`]: the plan, kept beside the journal.
pub(crate) async fn preview(
    ctx: &RecoverContext<'_>,
    req: &RecoverFileRequest,
    sink: &dyn ProgressSink,
    stop: &CancellationToken,
) -> Result<RecoveryPlan, RewindError> {
    let plan = compute(ctx, req, sink, stop).await?;
    keep(ctx, &plan)?;
    Ok(plan)
}

/// Refuses a real run whose plan `id` no longer holds, naming what differs; `Ok` when it holds.
pub(crate) async fn check_plan(
    ctx: &RecoverContext<'_>,
    req: &RecoverFileRequest,
    id: &str,
    sink: &dyn ProgressSink,
) -> Result<(), RewindError> {
    let id = id.trim();
    let earlier = read_kept(ctx, id)?;
    let plan = compute(ctx, req, sink, &CancellationToken::new()).await?;
    if plan.plan_id == id {
        return Ok(());
    }
    let now = Pinned::of(&plan.from, &plan.files);
    let mut differences = now.differences(&earlier);
    if differences.is_empty() {
        differences.push("the files or the tag changed since".into());
    }
    Err(RewindError::NotPossible {
        reason: RecoveryRefusal::PlanChanged {
            plan: id.to_string(),
            now: plan.plan_id,
            differences,
        },
    })
}

/// The plan of `req`: both checkpoints walked, each file the recovery would write.
async fn compute(
    ctx: &RecoverContext<'_>,
    req: &RecoverFileRequest,
    sink: &dyn ProgressSink,
    stop: &CancellationToken,
) -> Result<RecoveryPlan, RewindError> {
    let began = Instant::now();
    let (change, paths, destination) = checked_locally(req)?;
    let (protection, points) = resolve(ctx, &req.vm, change).await?;
    let (point, site) = pick_for_flr(&protection.vm, &points)?;
    let client = client_of(ctx, &site)?;
    let (latest_point, now) = later(&client, point, None).await?;
    let roots: Vec<String> = paths.iter().map(|p| p.as_str().to_string()).collect();
    let limits = Limits::of(&ctx.config.diff);
    let vm = &protection.vm;
    let mut run = Sessions::new(recovery_wait(ctx));
    let mount = |p| FlrMount::new(client.clone(), vm, p, sink, run.wait);
    let at_tag = run
        .session(mount(point), async |flr, s, calls| {
            walk(flr, s, &roots, limits, stop, calls).await
        })
        .await?;
    let mount = |p| FlrMount::new(client.clone(), vm, p, sink, run.wait);
    let latest = run
        .session(mount(&latest_point), async |flr, s, calls| {
            walk(flr, s, &roots, limits, stop, calls).await
        })
        .await?;
    let files = planned(&at_tag, &latest, &destination)?;
    let stopped = both_stops(at_tag.stopped, latest.stopped);
    Ok(RecoveryPlan {
        plan_id: Pinned::of(point, &files).id(),
        vm: vm.clone(),
        change_id: point.change_id.clone(),
        from: point.clone(),
        now,
        site,
        destination: destination.root().to_path_buf(),
        files,
        stopped,
        calls: run.calls,
        sessions: run.ends,
        elapsed_ms: began.elapsed().as_millis() as u64,
        notes: run.notes,
    })
}

/// Each file of the tag under the paths asked for, where it would land, and what the VM has now.
fn planned(
    at_tag: &Tree,
    latest: &Tree,
    destination: &Destination,
) -> Result<Vec<PlannedFile>, RewindError> {
    let mut files = Vec::new();
    for (key, e) in at_tag.entries.iter().filter(|(_, e)| !e.folder) {
        let (written_to, replaces) = destination.check(&GuestPath::parse(&e.path)?)?;
        let now = latest
            .entries
            .get(key)
            .filter(|n| !n.folder)
            .map(|n| n.state.clone());
        files.push(PlannedFile {
            guest_path: e.path.clone(),
            written_to,
            replaces,
            at_tag: e.state.clone(),
            now,
        });
    }
    Ok(files)
}

/// The name the plan `id` is kept under, where the journal is.
fn kept_name(id: &str) -> Result<String, RewindError> {
    let plain = !id.is_empty() && id.len() <= 64 && id.chars().all(|c| c.is_ascii_hexdigit());
    if !plain {
        return Err(RewindError::InvalidInput {
            field: "plan",
            problem: format!(
                "{id:?} is not a plan id (hex digits, as `--dry-run` printed it); run the preview again and give its plan id"
            ),
        });
    }
    Ok(format!("{id}.json"))
}

/// Keeps the plan's pinned facts where the journal is (beside its file, or in its database for
/// every replica of a team server), for the real run to compare with. A plan id is a digest of
/// those facts: one id is kept once.
fn keep(ctx: &RecoverContext<'_>, plan: &RecoveryPlan) -> Result<(), RewindError> {
    let name = kept_name(&plan.plan_id)?;
    let text = serde_json::to_string(&Pinned::of(&plan.from, &plan.files)).map_err(|e| {
        RewindError::Journal(crate::audit_journal::JournalError::Encode(e.to_string()))
    })?;
    ctx.journal.keep_once(PLANS_DIR, &name, &text)?;
    Ok(())
}

/// The pinned facts of the plan `id`, kept by its preview (on this machine, or on any replica of a
/// team server whose journal is in a database).
fn read_kept(ctx: &RecoverContext<'_>, id: &str) -> Result<Pinned, RewindError> {
    let name = kept_name(id)?;
    let Some(text) = ctx.journal.kept(PLANS_DIR, &name)? else {
        return Err(RewindError::NotPossible {
            reason: RecoveryRefusal::PlanUnknown {
                plan: id.to_string(),
            },
        });
    };
    serde_json::from_str(&text).map_err(|e| RewindError::LocalFile {
        action: "read the plan",
        path: Path::new(PLANS_DIR).join(&name),
        source: std::io::Error::other(e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, now: Option<u64>) -> PinnedFile {
        PinnedFile {
            guest_path: path.into(),
            at_tag: FileState {
                size: Some(1),
                written: None,
            },
            now: now.map(|size| FileState {
                size: Some(size),
                written: None,
            }),
        }
    }

    fn pinned(files: Vec<PinnedFile>) -> Pinned {
        Pinned {
            vpg_id: "v".into(),
            checkpoint_id: "1".into(),
            files,
        }
    }

    #[test]
    fn a_plan_id_changes_with_any_file_and_the_differences_name_it() {
        let then = pinned(vec![file("sda1/a", Some(2)), file("sda1/b", Some(1))]);
        let now = pinned(vec![file("sda1/a", Some(3)), file("sda1/c", None)]);
        assert_ne!(then.id(), now.id());
        assert_eq!(then.id(), then.clone().id(), "the same facts, the same id");
        let said = now.differences(&then);
        assert_eq!(said.len(), 3, "{said:?}");
        assert!(
            said[0].starts_with("sda1/a changed since the plan: now 3 B"),
            "{said:?}"
        );
        assert!(said[1].contains("sda1/c would be written"), "{said:?}");
        assert!(said[2].contains("sda1/b was planned"), "{said:?}");
    }
}
