//! File-level recovery from a tagged checkpoint, at the VPG's recovery site.
//!
//! 1. Everything that can be checked locally is checked before anything is sent: the change, the guest
//!    paths, the destination folder and, for each path, that its file may be written there.
//! 2. The VM, its tagged checkpoints and the VPG to recover from are found (see the module above); FLR is
//!    refused before anything is sent when no VPG with the tag has its recovery site configured.
//! 3. `POST /v1/flrs` mounts the VM's disks at the checkpoint and answers with the session id. The
//!    mount's `FlrJournalMount` task is found through `GET /v1/tasks` (the one that lists the session
//!    under `RelatedEntities.FlrSessions`) and read until it is terminal; then the session is read until
//!    its `FlrSessionStatus` is `MountCompletedSuccessfully`. If the mount's answer is lost, the VM's
//!    sessions are read to find the one it created.
//! 4. For each path, its folder is browsed, page after page, to check that it exists (walking up to
//!    the nearest existing folder when it does not, whose content the error lists); then it is
//!    downloaded (`POST .../download` → a URL on the same ZVM → `GET` with the bearer) straight into
//!    the destination: a file as its bytes, a folder as a zip archive that is unpacked (see
//!    `destination`). A body cut off midway is thrown away and the download asked for again, up to
//!    three times in all.
//! 5. The session is always unmounted (`DELETE /v1/flrs/{id}`, its `FlrJournalUnmount` task read until
//!    terminal), after an error too; if the future is dropped midway, the unmount is still sent.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::destination::{Destination, GuestPath, RecoveredFile, parse_paths};
use super::{
    Ended, RecoverContext, RecoverFileReport, RecoverFileRequest, RecoveryNote, RecoveryPoint,
    RecoveryRecord, RecoveryTask, Unmount, await_task, check_change, client_of, pick_for_flr,
    recovery_wait, resolve, watch,
};
use crate::audit_journal::JournalVerdict;
use crate::error::{RecoveryRefusal, RewindError};
use crate::progress::{ProgressSink, Stage};
use crate::protection::VmRef;
use crate::zvm::task::{MIN_POLL, next_poll};
use crate::zvm::wire::{FlrListing, FlrSession, PathItem};
use crate::zvm::{CallError, ZvmClient};

/// How many items of a folder an error lists.
const LISTED_ITEMS: usize = 40;
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
    let change = check_change(&req.change)?;
    crate::protection::validate_query(&req.vm)?;
    let paths = parse_paths(&req.paths)?;
    let destination = Destination::open(&req.destination, req.overwrite)?;
    for p in &paths {
        destination.precheck(p)?;
    }

    let (protection, points) = resolve(ctx, &req.vm, change).await?;
    let (point, site) = pick_for_flr(&protection.vm, &points)?;
    let client = client_of(ctx, &site)?;
    let mut run = Run {
        client: client.clone(),
        vm: &protection.vm,
        point,
        site: &site,
        paths: &paths,
        destination: &destination,
        sink,
        wait: recovery_wait(ctx),
        mount: None,
        files: Vec::new(),
        notes: Vec::new(),
        guard: MountGuard {
            client,
            session: None,
        },
    };
    let session = match run.mount().await {
        Ok(session) => session,
        Err(e) => {
            run.journal(ctx, None, None, Some(&e)).await;
            return Err(e);
        }
    };
    let outcome = run.recover(&session, &paths).await;
    let unmount = run.unmount(&session).await;
    run.guard.session = None;
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
            client: &self.client,
            action: format!("recover_file {}", paths.join(", ")),
            vm: self.vm,
            point: self.point,
            verdict: if error.is_none() {
                JournalVerdict::Recovered
            } else {
                JournalVerdict::Failed
            },
            task: self.mount.as_ref(),
            detail: error.map(ToString::to_string),
            notes: &self.notes,
            details: serde_json::json!({
                "operation": "flr",
                "site": self.site,
                "session_id": session,
                "destination": self.destination.root(),
                "paths": paths,
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
        let mut notes = self.notes;
        notes.extend(journal_problem);
        RecoverFileReport {
            vm: self.vm.clone(),
            change_id: self.point.change_id.clone(),
            from: self.point.clone(),
            site: self.site.to_string(),
            session_id: session,
            mount: self.mount,
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

/// Sends the unmount of a session if the recovery is dropped before it unmounted (a caller that gave
/// up, a cancelled MCP request): a mounted session must not outlive the call that made it.
struct MountGuard {
    client: Arc<ZvmClient>,
    session: Option<String>,
}

impl Drop for MountGuard {
    fn drop(&mut self) {
        let Some(session) = self.session.take() else {
            return;
        };
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            let client = self.client.clone();
            tracing::warn!(
                site = client.name(),
                "the FLR of session {session} was dropped before it unmounted; unmounting it now"
            );
            handle.spawn(async move {
                if let Err(e) = client.flr_unmount(&session).await {
                    tracing::warn!(
                        "the FLR session {session} at site {} could not be unmounted: {}",
                        client.name(),
                        e.detail()
                    );
                }
            });
        }
    }
}

/// One FLR in progress.
struct Run<'a> {
    client: Arc<ZvmClient>,
    vm: &'a VmRef,
    point: &'a RecoveryPoint,
    /// The configured site whose ZVM runs the FLR.
    site: &'a str,
    /// The guest paths asked for.
    paths: &'a [GuestPath],
    destination: &'a Destination,
    sink: &'a dyn ProgressSink,
    wait: Duration,
    mount: Option<RecoveryTask>,
    files: Vec<RecoveredFile>,
    notes: Vec<RecoveryNote>,
    guard: MountGuard,
}

impl Run<'_> {
    /// A 403 from the ZVM during FLR is the 10.9 RBAC defect's signature.
    async fn forbidden(&self, e: RewindError) -> RewindError {
        match e {
            RewindError::Zvm {
                status: 403,
                message,
                site,
                ..
            } => RewindError::FlrForbidden {
                version: self
                    .client
                    .local_site()
                    .await
                    .ok()
                    .and_then(|l| l.display_version.clone().or_else(|| l.version.clone()))
                    .unwrap_or_else(|| "unknown".into()),
                principal: self.client.principal().to_string(),
                site,
                message,
            },
            other => other,
        }
    }

    /// Everything between the mount's answer and the unmount.
    async fn recover(&mut self, session: &str, paths: &[GuestPath]) -> Result<(), RewindError> {
        self.wait_mounted(session).await?;
        for path in paths {
            self.recover_path(session, path).await?;
        }
        Ok(())
    }

    /// `POST /v1/flrs` → the session id; a lost answer is reconciled from the VM's sessions.
    async fn mount(&mut self) -> Result<String, RewindError> {
        let client = self.client.clone();
        let before = client.flr_sessions(&self.vm.id).await.ok();
        let asked = match &self.point.retention_set {
            Some(set) => {
                client
                    .flr_mount_retention_set(&self.point.vpg_id, &self.vm.id, set)
                    .await
            }
            None => {
                client
                    .flr_mount(&self.point.vpg_id, &self.vm.id, &self.point.checkpoint_id)
                    .await
            }
        };
        let session = match asked {
            Ok(session) => session,
            Err(e) if e.outcome_unknown() => self.reconcile_mount(before, e).await?,
            Err(e) => {
                let e = e.at(&client, "POST /v1/flrs");
                return Err(self.forbidden(e).await);
            }
        };
        // From here on, the session is unmounted even if this future is dropped.
        self.guard.session = Some(session.clone());
        Ok(session)
    }

    /// The mount's outcome is unknown (no answer, an unreadable one, or a 5xx): the session it may have created is the VM's session of this VPG and
    /// checkpoint that was not there before. One is adopted; none means the mount did not happen.
    async fn reconcile_mount(
        &mut self,
        before: Option<Vec<FlrSession>>,
        lost: CallError,
    ) -> Result<String, RewindError> {
        let client = self.client.clone();
        let what = lost.what_happened_to("the mount");
        let error = lost.at(&client, "POST /v1/flrs");
        // Without the sessions before and after, the mount may have happened unseen: the error says
        // so, and what to do, whichever read failed.
        let unknown = |error: RewindError, why: String| RewindError::NotPossible {
            reason: RecoveryRefusal::MountUnknown {
                error: Box::new(error),
                why,
                vm: self.vm.name.clone(),
                site: client.name().to_string(),
            },
        };
        let Some(before) = before else {
            return Err(unknown(error, "the read before the mount failed".into()));
        };
        let known = |s: &FlrSession| {
            before
                .iter()
                .any(|b| b.flr_session_identifier == s.flr_session_identifier)
        };
        let after = match client.flr_sessions(&self.vm.id).await {
            Ok(after) => after,
            Err(e) => return Err(unknown(error, e.to_string())),
        };
        let mut ours: Vec<String> = after
            .iter()
            .filter(|s| !known(s))
            .filter(|s| {
                s.vpg_identifier
                    .as_deref()
                    .is_none_or(|v| v.eq_ignore_ascii_case(&self.point.vpg_id))
                    && s.checkpoint_identifier
                        .as_deref()
                        .is_none_or(|c| c == self.point.checkpoint_id)
            })
            .filter_map(|s| s.flr_session_identifier.clone())
            .collect();
        match ours.len() {
            0 => Err(error),
            1 => {
                let id = ours.remove(0);
                self.notes.push(RecoveryNote::MountFound {
                    what,
                    session_id: id.clone(),
                });
                Ok(id)
            }
            _ => {
                // Several new sessions of the same checkpoint: this process cannot tell which is its
                // own, so it takes none and leaves them to be seen.
                Err(RewindError::NotPossible {
                    reason: RecoveryRefusal::MountAmbiguous {
                        error: Box::new(error),
                        sessions: ours,
                    },
                })
            }
        }
    }

    /// Waits for the mount task, then for the session to say it is mounted.
    async fn wait_mounted(&mut self, session: &str) -> Result<(), RewindError> {
        let client = self.client.clone();
        let sent = Instant::now();
        let deadline = sent + self.wait;
        let mount_type = self.point.mount_task_type();
        let w = watch(self.sink, client.name(), self.point, mount_type);
        w.report(Stage::Running, None, None);
        let mut polls = 0u32;
        let mut mounted = false;
        let task_id = loop {
            let tasks = client.tasks_of_type(mount_type).await?;
            if let Some(t) = tasks.iter().find(|t| t.concerns_flr_session(session)) {
                break t.task_identifier.clone();
            }
            let s = client.flr_session(session).await?;
            if s.mount_failed() {
                return Err(mount_failed(&client, session, &s));
            }
            if s.is_mounted() {
                self.notes.push(RecoveryNote::MountTaskNotListed {
                    session_id: session.to_string(),
                });
                mounted = true;
                break None;
            }
            if Instant::now() >= deadline {
                return Err(mount_too_long(&client, session, self.wait));
            }
            polls += 1;
            tokio::time::sleep(next_poll(sent.elapsed(), None, polls, MIN_POLL)).await;
        };
        if let Some(task_id) = task_id {
            match await_task(&client, &task_id, sent, deadline, &w).await? {
                Ended::Completed(t) => self.mount = Some(t),
                Ended::StillRunning(t) => {
                    // The mount task is neither failed nor stopped: it is named, so it can be
                    // followed, and the error is of kind still_running rather than a refusal.
                    let e = RewindError::StillRunning {
                        site: client.name().to_string(),
                        task_id: t.task_id.clone(),
                        waited_secs: self.wait.as_secs_f64(),
                    };
                    self.mount = Some(t);
                    return Err(e);
                }
                Ended::Failed(t) => {
                    let e = t.failed();
                    self.mount = Some(t);
                    return Err(e);
                }
            }
        }
        if mounted {
            return Ok(());
        }
        // The task is done; the session says when it can be browsed.
        loop {
            let s = client.flr_session(session).await?;
            if s.is_mounted() {
                return Ok(());
            }
            if s.mount_failed() {
                return Err(mount_failed(&client, session, &s));
            }
            if Instant::now() >= deadline {
                return Err(mount_too_long(&client, session, self.wait));
            }
            polls += 1;
            tokio::time::sleep(next_poll(sent.elapsed(), None, polls, MIN_POLL)).await;
        }
    }

    /// Checks that `path` exists at the checkpoint, downloads it and writes it.
    async fn recover_path(&mut self, session: &str, path: &GuestPath) -> Result<(), RewindError> {
        let item = self.locate(session, path).await?;
        if item.is_partition() {
            return Err(RewindError::UnsafePath {
                path: path.to_string(),
                problem: "it is a whole partition; give a file or a folder inside it".into(),
            });
        }
        if let Some(why) = item.not_downloadable() {
            return Err(RewindError::NotPossible {
                reason: RecoveryRefusal::NotDownloadable {
                    site: self.client.name().to_string(),
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
                    self.notes.push(RecoveryNote::DownloadCutOff {
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
        let client = self.client.clone();
        let url = match client.flr_download_url(session, path.as_str()).await {
            Ok(url) => url,
            Err(e) => return Err(self.forbidden(e).await),
        };
        let body = match client.download(&url).await {
            Ok(body) => body,
            Err(e) => return Err(self.forbidden(e).await),
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
                self.notes
                    .push(RecoveryNote::EmptyFolder { path: path.clone() });
            }
        } else {
            let file = self.destination.write_download(path, body, lost).await?;
            if let Some(listed) = item.size_in_bytes
                && u64::try_from(listed).ok() != Some(file.size)
            {
                self.notes.push(RecoveryNote::SizeDiffers {
                    path: path.clone(),
                    listed,
                    downloaded: file.size,
                });
            }
            self.files.push(file);
        }
        Ok(())
    }

    /// Browses the folder of `path` and finds it there; when it is missing, walks up to the nearest
    /// folder that exists and says what it holds.
    async fn locate(&self, session: &str, path: &GuestPath) -> Result<PathItem, RewindError> {
        let segments = path.segments();
        // The folder browsed has `depth` segments: the path's own folder first, the partitions last.
        let mut depth = segments.len() - 1;
        loop {
            let folder = segments[..depth].join("/");
            let listing = match self.client.flr_browse(session, &folder).await {
                Ok(listing) => listing,
                Err(RewindError::Zvm { status, .. })
                    if depth > 0 && (400..500).contains(&status) && status != 403 =>
                {
                    depth -= 1;
                    continue;
                }
                Err(e) => return Err(self.forbidden(e).await),
            };
            if depth + 1 == segments.len()
                && let Some(item) = find_item(&listing, path)
            {
                return Ok(item);
            }
            return Err(RewindError::GuestPathNotFound {
                path: path.to_string(),
                vm: self.vm.name.clone(),
                at: format!(
                    "checkpoint {} of VPG {}",
                    self.point.checkpoint_id, self.point.vpg_name
                ),
                folder: if folder.is_empty() {
                    "the list of partitions".into()
                } else {
                    folder
                },
                holds: holdings(&listing),
            });
        }
    }

    /// `DELETE /v1/flrs/{id}` and its task, read until terminal. Never fails: what went wrong is in the
    /// answer.
    async fn unmount(&mut self, session: &str) -> Unmount {
        let client = self.client.clone();
        let w = watch(
            self.sink,
            client.name(),
            self.point,
            self.point.unmount_task_type(),
        );
        let sent = Instant::now();
        let task_id = match client.flr_unmount(session).await {
            Ok(id) => id,
            Err(e) => {
                let request = format!("DELETE /v1/flrs/{session}");
                return Unmount {
                    unmounted: false,
                    task: None,
                    error: Some(e.at(&client, &request).to_string()),
                };
            }
        };
        match await_task(&client, &task_id, sent, sent + self.wait, &w).await {
            Ok(Ended::Completed(t)) => Unmount {
                unmounted: true,
                task: Some(t),
                error: None,
            },
            Ok(Ended::StillRunning(t)) => Unmount {
                unmounted: false,
                error: Some(format!(
                    "its unmount task {task_id} was still running after {} s",
                    self.wait.as_secs()
                )),
                task: Some(t),
            },
            Ok(Ended::Failed(t)) => Unmount {
                unmounted: false,
                error: Some(t.failed().to_string()),
                task: Some(t),
            },
            Err(e) => Unmount {
                unmounted: false,
                task: None,
                error: Some(format!("its unmount task {task_id} could not be read: {e}")),
            },
        }
    }
}

/// The item of `listing` that is `path`: its `Path` is the full guest path, or its name is the path's
/// last segment (case-insensitive on Windows guests).
fn find_item(listing: &FlrListing, path: &GuestPath) -> Option<PathItem> {
    let same = |a: &str, b: &str| {
        if path.is_windows() {
            a.eq_ignore_ascii_case(b)
        } else {
            a == b
        }
    };
    listing
        .path_items
        .iter()
        .find(|i| {
            let full = i.path.as_deref().unwrap_or_default().trim_end_matches('/');
            same(full, path.as_str()) || same(i.name(), path.name())
        })
        .cloned()
}

/// What a folder holds, for an error: names, a `/` after folders, sizes of files.
fn holdings(listing: &FlrListing) -> String {
    if listing.path_items.is_empty() {
        return "nothing".into();
    }
    let mut out: Vec<String> = listing
        .path_items
        .iter()
        .take(LISTED_ITEMS)
        .map(|i| {
            if i.is_folder() {
                format!("{}/", i.name())
            } else {
                match i.size_in_bytes {
                    Some(n) => format!("{} ({n} bytes)", i.name()),
                    None => i.name().to_string(),
                }
            }
        })
        .collect();
    if listing.path_items.len() > LISTED_ITEMS {
        out.push(format!(
            "and {} more",
            listing.path_items.len() - LISTED_ITEMS
        ));
    }
    out.join(", ")
}

fn mount_failed(client: &ZvmClient, session: &str, s: &FlrSession) -> RewindError {
    RewindError::NotPossible {
        reason: RecoveryRefusal::MountFailed {
            session: session.to_string(),
            site: client.name().to_string(),
            status: s
                .flr_session_status
                .clone()
                .unwrap_or_else(|| "unknown".into()),
        },
    }
}

fn mount_too_long(client: &ZvmClient, session: &str, wait: Duration) -> RewindError {
    RewindError::NotPossible {
        reason: RecoveryRefusal::NotMounted {
            session: session.to_string(),
            site: client.name().to_string(),
            waited_secs: wait.as_secs(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(json: &str) -> FlrListing {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn an_item_is_found_by_full_path_or_by_name_and_windows_ignores_case() {
        let l = listing(
            r#"{"MainPathItem": {"Path": "sda1/etc/app"}, "PathItems": [
                {"Path": "sda1/etc/app/app.conf", "Type": "File", "SizeInBytes": 12},
                {"Path": "conf.d", "Type": "Folder", "IsBrowsable": true}]}"#,
        );
        let conf = GuestPath::parse("sda1/etc/app/app.conf").unwrap();
        assert_eq!(find_item(&l, &conf).unwrap().size_in_bytes, Some(12));
        let d = GuestPath::parse("sda1/etc/app/conf.d/").unwrap();
        assert!(find_item(&l, &d).unwrap().is_folder());
        assert!(find_item(&l, &GuestPath::parse("sda1/etc/app/APP.conf").unwrap()).is_none());
        let w =
            listing(r#"{"PathItems": [{"Path": "C:/ProgramData/App/app.ini", "Type": "File"}]}"#);
        assert!(find_item(&w, &GuestPath::parse("c:/programdata/app/APP.INI").unwrap()).is_some());
    }

    #[test]
    fn holdings_name_folders_and_sizes() {
        let l = listing(
            r#"{"PathItems": [{"Path": "sda1/etc/hosts", "Type": "File", "SizeInBytes": 40},
                {"Path": "sda1/etc/app", "Type": "Folder", "IsBrowsable": true}]}"#,
        );
        assert_eq!(holdings(&l), "hosts (40 bytes), app/");
        assert_eq!(holdings(&listing("{}")), "nothing");
    }
}
