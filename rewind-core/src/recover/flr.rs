//! File-level recovery from a tagged checkpoint, at the VPG's recovery site.
//!
//! 1. Everything that can be checked locally is checked before anything is sent: the change, the guest
//!    paths, the destination folder and, for each path, that its file may be written there.
//! 2. The VM, its tagged checkpoints and the VPG to recover from are found (see the module above); FLR is
//!    refused before anything is sent when no VPG with the tag has its recovery site configured.
//! 3. The tagged checkpoint is mounted (see `session`).
//! 4. For each path, its folder is browsed, page after page, to check that it exists (walking up to
//!    the nearest existing folder when it does not, whose content the error lists); then it is
//!    downloaded (`POST .../download` → a URL on the same ZVM → `GET` with the bearer) straight into
//!    the destination: a file as its bytes, a folder as a zip archive that is unpacked (see
//!    `destination`). A body cut off midway is thrown away and the download asked for again, up to
//!    three times in all.
//! 5. The session is always unmounted, after an error too, and when the future is dropped midway.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::context::{RecoverContext, client_of, recovery_wait};
use super::destination::{Destination, GuestPath, RecoveredFile};
use super::note::RecoveryNote;
use super::point::{pick_for_flr, resolve};
use super::record::RecoveryRecord;
use super::report::{RecoverFileReport, Unmount};
use super::request::{RecoverFileRequest, checked_locally};
use super::session::FlrMount;
use crate::audit_journal::JournalVerdict;
use crate::error::{RecoveryRefusal, RewindError};
use crate::progress::ProgressSink;
use crate::zvm::wire::PathItem;

/// How many times in all a download whose body is cut off is fetched. Its answer had begun, so the
/// reads' own retries (which end when a status arrives) did not cover it; fetching it again is a read
/// like any other, and nothing half-written is kept.
const DOWNLOAD_ATTEMPTS: u32 = 3;

/// Runs [`crate::Rewind::recover_file`].
pub(crate) async fn recover_file(
    ctx: &RecoverContext<'_>,
    req: &RecoverFileRequest,
    sink: &dyn ProgressSink,
) -> Result<RecoverFileReport, RewindError> {
    let began = Instant::now();
    let (change, paths, destination) = checked_locally(req)?;
    if let Some(plan) = &req.plan {
        super::plan::check_plan(ctx, req, plan, sink).await?;
    }

    let (protection, points) = resolve(ctx, &req.vm, change).await?;
    let (point, site) = pick_for_flr(&protection.vm, &points)?;
    let client = client_of(ctx, &site)?;
    let mut run = Run {
        flr: FlrMount::new(client, &protection.vm, point, sink, recovery_wait(ctx)),
        site: &site,
        paths: &paths,
        destination: &destination,
        plan: req.plan.as_deref(),
        files: Vec::new(),
    };
    let session = match run.flr.mount().await {
        Ok(session) => session,
        Err(e) => {
            run.journal(ctx, None, None, Some(&e)).await;
            return Err(e);
        }
    };
    let outcome = run.recover(&session, &paths).await;
    let unmount = run.flr.unmount(&session).await;
    let journal_problem = run
        .journal(ctx, Some(&session), Some(&unmount), outcome.as_ref().err())
        .await;
    match outcome {
        Ok(()) => Ok(run.report(session, unmount, journal_problem, began)),
        Err(error) => Err(run.aborted(error, session, unmount)),
    }
}

impl Run<'_> {
    /// Journals the recovery, whatever came of it; a journal that cannot be written is returned as a
    /// note (the recovery itself stands).
    async fn journal(
        &self,
        ctx: &RecoverContext<'_>,
        session: Option<&str>,
        unmount: Option<&Unmount>,
        error: Option<&RewindError>,
    ) -> Option<RecoveryNote> {
        let paths: Vec<&str> = self.paths.iter().map(GuestPath::as_str).collect();
        RecoveryRecord {
            client: &self.flr.client,
            action: format!("recover_file {}", paths.join(", ")),
            vm: self.flr.vm,
            point: self.flr.point,
            verdict: if error.is_none() {
                JournalVerdict::Recovered
            } else {
                JournalVerdict::Failed
            },
            task: self.flr.task.as_ref(),
            detail: error.map(ToString::to_string),
            notes: &self.flr.notes,
            details: serde_json::json!({
                "operation": "flr",
                "site": self.site,
                "session_id": session,
                "destination": self.destination.root(),
                "paths": paths,
                "plan": self.plan,
                "files": self.files,
                "unmount": unmount,
            }),
        }
        .append(ctx)
        .await
    }

    /// The report of a recovery that wrote every file asked for.
    fn report(
        self,
        session: String,
        unmount: Unmount,
        journal_problem: Option<RecoveryNote>,
        began: Instant,
    ) -> RecoverFileReport {
        let mut notes = self.flr.notes;
        notes.extend(journal_problem);
        RecoverFileReport {
            vm: self.flr.vm.clone(),
            change_id: self.flr.point.change_id.clone(),
            from: self.flr.point.clone(),
            site: self.site.to_string(),
            session_id: session,
            mount: self.flr.task,
            destination: self.destination.root().to_path_buf(),
            files: self.files,
            unmount,
            elapsed_ms: began.elapsed().as_millis() as u64,
            notes,
        }
    }

    /// The error of a recovery that stopped part way: what it wrote, and whether it unmounted.
    fn aborted(self, error: RewindError, session: String, unmount: Unmount) -> RewindError {
        RewindError::FlrAborted {
            cleanup: unmount.sentence(&session, self.site),
            unmounted: unmount.unmounted,
            error: Box::new(error),
            session_id: Some(session),
            site: self.site.to_string(),
            recovered: self
                .files
                .iter()
                .map(|f| f.path.display().to_string())
                .collect(),
        }
    }
}

/// One FLR in progress.
struct Run<'a> {
    flr: FlrMount<'a>,
    /// The configured site whose ZVM runs the FLR.
    site: &'a str,
    /// The guest paths asked for.
    paths: &'a [GuestPath],
    destination: &'a Destination,
    /// The plan id the run was approved as.
    plan: Option<&'a str>,
    files: Vec<RecoveredFile>,
}

impl Run<'_> {
    /// Everything between the mount's answer and the unmount.
    async fn recover(&mut self, session: &str, paths: &[GuestPath]) -> Result<(), RewindError> {
        self.flr.wait_mounted(session).await?;
        for path in paths {
            self.recover_path(session, path).await?;
        }
        Ok(())
    }

    /// Checks that `path` exists at the checkpoint, downloads it and writes it.
    async fn recover_path(&mut self, session: &str, path: &GuestPath) -> Result<(), RewindError> {
        let item = self.flr.locate(session, path).await?;
        if item.is_partition() {
            return Err(RewindError::UnsafePath {
                path: path.to_string(),
                problem: "it is a whole partition; give a file or a folder inside it".into(),
            });
        }
        if let Some(why) = item.not_downloadable() {
            return Err(RewindError::NotPossible {
                reason: RecoveryRefusal::NotDownloadable {
                    site: self.flr.client.name().to_string(),
                    path: path.to_string(),
                    why,
                },
            });
        }
        let mut attempt = 1;
        loop {
            let cut = AtomicBool::new(false);
            match self.download(session, path, &item, &cut).await {
                Err(e) if cut.load(Ordering::Relaxed) && attempt < DOWNLOAD_ATTEMPTS => {
                    self.flr.notes.push(RecoveryNote::DownloadCutOff {
                        path: path.clone(),
                        error: e.to_string(),
                    });
                    tokio::time::sleep(Duration::from_millis(200) * attempt).await;
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    /// Asks for `path`'s download URL, fetches it and writes it into the destination (a folder's
    /// archive unpacked). `cut` is set when the body was cut off after its answer had begun.
    async fn download(
        &mut self,
        session: &str,
        path: &GuestPath,
        item: &PathItem,
        cut: &AtomicBool,
    ) -> Result<(), RewindError> {
        let client = self.flr.client.clone();
        let url = match client.flr_download_url(session, path.as_str()).await {
            Ok(url) => url,
            Err(e) => return Err(self.flr.forbidden(e).await),
        };
        let body = match client.download(&url).await {
            Ok(body) => body,
            Err(e) => return Err(self.flr.forbidden(e).await),
        };
        let request = format!("the download of {path}");
        let lost = |e: reqwest::Error| {
            cut.store(true, Ordering::Relaxed);
            client.body_lost(&request, &e)
        };
        if item.is_folder() {
            let archive = self.destination.write_archive(body, lost).await?;
            let destination = self.destination.clone();
            let folder = path.clone();
            let (written, unpacked) = tokio::task::spawn_blocking(move || {
                let mut written = Vec::new();
                // The archive is removed when it is dropped here, unpacked or not.
                let unpacked = destination.unpack(&archive, &folder, &mut written);
                (written, unpacked)
            })
            .await
            .map_err(|e| RewindError::LocalFile {
                action: "unpack the archive of",
                path: path.as_str().into(),
                source: std::io::Error::other(e.to_string()),
            })?;
            // Files written before a failure midway are kept, and the error lists them.
            let empty = written.is_empty();
            self.files.extend(written);
            unpacked?;
            if empty {
                self.flr
                    .notes
                    .push(RecoveryNote::EmptyFolder { path: path.clone() });
            }
        } else {
            let file = self.destination.write_download(path, body, lost).await?;
            if let Some(listed) = item.size_in_bytes
                && u64::try_from(listed).ok() != Some(file.size)
            {
                self.flr.notes.push(RecoveryNote::SizeDiffers {
                    path: path.clone(),
                    listed,
                    downloaded: file.size,
                });
            }
            self.files.push(file);
        }
        Ok(())
    }
}
