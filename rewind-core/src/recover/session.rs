//! One FLR session: a checkpoint of a VPG (its tagged one, or any other) mounted at the VPG's
//! recovery site, browsed, downloaded from, and always unmounted. A file recovery and a diff both
//! run on it.
//!
//! 1. `POST /v1/flrs` mounts the VM's disks at the checkpoint and answers with the session id. The
//!    mount's `FlrJournalMount` task is found through `GET /v1/tasks` (the one that lists the session
//!    under `RelatedEntities.FlrSessions`) and read until it is terminal; then the session is read until
//!    its `FlrSessionStatus` is `MountCompletedSuccessfully`. If the mount's answer is lost, the VM's
//!    sessions are read to find the one it created.
//! 2. A folder is browsed page after page; a path missing at the checkpoint is reported with the
//!    content of the nearest folder that exists.
//! 3. The session is always unmounted (`DELETE /v1/flrs/{id}`, its `FlrJournalUnmount` task read until
//!    terminal), after an error too; if the future is dropped midway, the unmount is still sent.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::destination::GuestPath;
use super::note::RecoveryNote;
use super::point::RecoveryPoint;
use super::report::Unmount;
use super::task::{Ended, RecoveryTask, await_task, watch};
use crate::error::{RecoveryRefusal, RewindError};
use crate::progress::{ProgressSink, Stage};
use crate::protection::VmRef;
use crate::zvm::task::{MIN_POLL, next_poll};
use crate::zvm::wire::{FlrListing, FlrSession, PathItem};
use crate::zvm::{CallError, ZvmClient};

/// How many items of a folder an error lists.
const LISTED_ITEMS: usize = 40;

/// What the FLR sessions of one operation cost the ZVM: said in a diff's report and counted by its
/// bench.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct FlrCalls {
    /// Sessions mounted (each a Zerto task read to its end).
    pub mounts: u32,
    /// Folders browsed (each one or more pages).
    pub browses: u32,
    /// Files downloaded.
    pub downloads: u32,
}

/// One FLR session of `vm` at `point`, from its mount to its unmount.
pub(super) struct FlrMount<'a> {
    pub(super) client: Arc<ZvmClient>,
    pub(super) vm: &'a VmRef,
    pub(super) point: &'a RecoveryPoint,
    sink: &'a dyn ProgressSink,
    wait: Duration,
    /// The mount's task, once read.
    pub(super) task: Option<RecoveryTask>,
    pub(super) notes: Vec<RecoveryNote>,
    guard: MountGuard,
}

impl<'a> FlrMount<'a> {
    /// A session of `vm` at `point`, run by `client`; nothing is sent yet.
    pub(super) fn new(
        client: Arc<ZvmClient>,
        vm: &'a VmRef,
        point: &'a RecoveryPoint,
        sink: &'a dyn ProgressSink,
        wait: Duration,
    ) -> FlrMount<'a> {
        FlrMount {
            guard: MountGuard {
                client: client.clone(),
                session: None,
            },
            client,
            vm,
            point,
            sink,
            wait,
            task: None,
            notes: Vec::new(),
        }
    }

    /// The configured site whose ZVM runs the session.
    pub(super) fn site(&self) -> &str {
        self.client.name()
    }

    /// A 403 from the ZVM during FLR is the 10.9 RBAC defect's signature.
    pub(super) async fn forbidden(&self, e: RewindError) -> RewindError {
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

    /// `POST /v1/flrs` → the session id; a lost answer is reconciled from the VM's sessions.
    pub(super) async fn mount(&mut self) -> Result<String, RewindError> {
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
    pub(super) async fn wait_mounted(&mut self, session: &str) -> Result<(), RewindError> {
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
                Ended::Completed(t) => self.task = Some(t),
                Ended::StillRunning(t) | Ended::Waiting(t) => {
                    // The mount task is neither failed nor stopped: it is named, so it can be
                    // followed, and the error is of kind still_running rather than a refusal.
                    let e = RewindError::StillRunning {
                        site: client.name().to_string(),
                        task_id: t.task_id.clone(),
                        waited_secs: self.wait.as_secs_f64(),
                    };
                    self.task = Some(t);
                    return Err(e);
                }
                Ended::Failed(t) => {
                    let e = t.failed();
                    self.task = Some(t);
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

    /// Every item of the guest folder `folder` (`""`: the partitions), every page of it.
    pub(super) async fn browse(
        &self,
        session: &str,
        folder: &str,
        calls: &mut FlrCalls,
    ) -> Result<FlrListing, RewindError> {
        calls.browses += 1;
        match self.client.flr_browse(session, folder).await {
            Ok(listing) => Ok(listing),
            Err(e) => Err(self.forbidden(e).await),
        }
    }

    /// The bytes of the guest file `path` when it is at most `cap` bytes long; `None` when longer
    /// (its download stops there).
    pub(super) async fn download_small(
        &self,
        session: &str,
        path: &str,
        cap: u64,
        calls: &mut FlrCalls,
    ) -> Result<Option<Vec<u8>>, RewindError> {
        calls.downloads += 1;
        let client = self.client.clone();
        let url = match client.flr_download_url(session, path).await {
            Ok(url) => url,
            Err(e) => return Err(self.forbidden(e).await),
        };
        let mut body = match client.download(&url).await {
            Ok(body) => body,
            Err(e) => return Err(self.forbidden(e).await),
        };
        let request = format!("the download of {path}");
        let mut bytes = Vec::new();
        while let Some(chunk) = body
            .chunk()
            .await
            .map_err(|e| client.body_lost(&request, &e))?
        {
            bytes.extend_from_slice(&chunk);
            if bytes.len() as u64 > cap {
                return Ok(None);
            }
        }
        Ok(Some(bytes))
    }

    /// Browses the folder of `path` and finds it there; when it is missing, walks up to the nearest
    /// folder that exists and says what it holds.
    pub(super) async fn locate(
        &self,
        session: &str,
        path: &GuestPath,
    ) -> Result<PathItem, RewindError> {
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
    pub(super) async fn unmount(&mut self, session: &str) -> Unmount {
        self.guard.session = None;
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
            Ok(Ended::StillRunning(t) | Ended::Waiting(t)) => Unmount {
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
