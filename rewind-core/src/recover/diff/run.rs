//! A diff run: both checkpoints mounted in turn at the VPG's recovery site, walked and compared,
//! each session always unmounted.

use std::time::Instant;

use super::content::{compare_contents, read_changed};
use super::report::{DiffReport, DiffRequest, LaterPoint, SessionEnd, WalkStop, counts};
use super::walk::{Limits, compare, walk};
use crate::error::{RecoveryRefusal, RewindError};
use crate::progress::ProgressSink;
use crate::recover::context::{RecoverContext, client_of, recovery_wait};
use crate::recover::destination::GuestPath;
use crate::recover::note::RecoveryNote;
use crate::recover::point::{RecoveryPoint, pick_for_flr, resolve};
use crate::recover::request::check_change;
use crate::recover::session::{FlrCalls, FlrMount};
use crate::zvm::ZvmClient;
use tokio_util::sync::CancellationToken;

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
                    changed_after = read_changed(flr, s, &entries, &settings, stop, calls).await?;
                }
                Ok((after, entries))
            },
        )
        .await?;
    if req.content && !changed_after.is_empty() {
        let changed_before = run
            .session(
                FlrMount::new(client, vm, point, sink, run.wait),
                async |flr, s, calls| read_changed(flr, s, &entries, &settings, stop, calls).await,
            )
            .await?;
        compare_contents(&mut entries, changed_before, changed_after, &settings);
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
pub(in crate::recover) struct Sessions {
    pub(in crate::recover) wait: std::time::Duration,
    pub(in crate::recover) calls: FlrCalls,
    pub(in crate::recover) ends: Vec<SessionEnd>,
    pub(in crate::recover) notes: Vec<RecoveryNote>,
}

impl Sessions {
    /// No session yet; each task of one is waited for `wait`.
    pub(in crate::recover) fn new(wait: std::time::Duration) -> Sessions {
        Sessions {
            wait,
            ..Sessions::default()
        }
    }

    /// Mounts `flr`'s checkpoint, runs `work` in it and unmounts it, whatever `work` did.
    pub(in crate::recover) async fn session<T>(
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
pub(in crate::recover) fn both_stops(
    mut first: Vec<WalkStop>,
    second: Vec<WalkStop>,
) -> Vec<WalkStop> {
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
    let parsed = super::super::destination::parse_paths_with(paths, GuestPath::parse_to_compare)?;
    Ok(parsed.iter().map(|p| p.as_str().to_string()).collect())
}

/// The checkpoint to compare the tag with, as a point of the same VPG: `against` (`latest`, the
/// default, or a checkpoint identifier the VPG lists).
pub(in crate::recover) async fn later(
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
