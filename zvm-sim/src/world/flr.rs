//! File-level restore (FLR): sessions that mount one VM of a VPG at one checkpoint, at the VPG's
//! recovery site, and serve that VM's files as they were at the checkpoint's moment.
//!
//! A session is created by `POST /v1/flrs`, which starts an `FlrJournalMount` task; the session
//! shows `MountInProgress` until the task ends, then `MountCompletedSuccessfully` (or
//! `MountFailed` if the checkpoint left the journal meanwhile). `DELETE /v1/flrs/{id}` starts an
//! `FlrJournalUnmount` task; the session shows `UnmountInProgress` and disappears when it ends.
//! The files come from the guest's file history ([`crate::world::files`]): the journal holds each
//! VM's files as they were at each checkpoint.

use super::auth::Principal;
use super::clock::SimTime;
use super::files::{FileAt, Node, NodeKind, PathError};
use super::flr_session::{FlrDownload, FlrSession, FlrState};
use super::ids::{SiteRole, guid};
use super::journal::Checkpoint;
use super::model::World;
use super::refusal::Refusal;
use super::tasks::{Operation, Planned};
use crate::decisions;
use crate::enums::task_state;

/// What a download URL serves.
#[derive(Debug, Clone)]
pub struct DownloadContent {
    /// The files, in path order.
    pub files: Vec<FileAt>,
    /// One path that names one file: served as its bytes; otherwise a zip.
    pub single_file: bool,
    /// The VM's name.
    pub vm_name: String,
    /// The mounted checkpoint.
    pub checkpoint: u64,
}

/// What `POST /v1/flrs` asks for.
#[derive(Debug, Clone)]
pub struct MountRequest<'a> {
    /// `Jflr.VpgIdentifier`.
    pub vpg: &'a str,
    /// `Jflr.VmIdentifier`.
    pub vm: &'a str,
    /// `Jflr.CheckpointIdentifier`.
    pub checkpoint: &'a str,
    /// `Jflr.InitialDownloadPath`.
    pub initial_path: Option<&'a str>,
}

/// What `POST /v1/flrs` asks for with `Bflr`: a VM of a retention set.
#[derive(Debug, Clone)]
pub struct BflrRequest<'a> {
    /// `Bflr.VpgIdentifier`.
    pub vpg: &'a str,
    /// `Bflr.VmIdentifier`.
    pub vm: &'a str,
    /// `Bflr.RetentionSetIdentifier`.
    pub retention_set: &'a str,
    /// `Bflr.RepositoryIdentifier`: when given, the set's repository.
    pub repository: Option<&'a str>,
    /// `Bflr.RepositorySiteIdentifier`: when given, the repository's site.
    pub repository_site: Option<&'a str>,
    /// `Bflr.InitialDownloadPath`.
    pub initial_path: Option<&'a str>,
}

/// What a new FLR session mounts: a VM of a VPG at a checkpoint, or at a retention set's point in
/// time (the checkpoint it was copied from).
struct Mounting<'a> {
    vpg: usize,
    vm: usize,
    checkpoint: Checkpoint,
    retention_set: Option<String>,
    initial_path: Option<&'a str>,
}

fn path_refusal(error: PathError) -> Refusal {
    Refusal::BadRequest(error.to_string())
}

impl World {
    /// `POST /v1/flrs`: checks the request, creates the session and starts its mount task.
    /// Returns the session identifier and the task identifier.
    pub fn mount_flr(
        &mut self,
        site: SiteRole,
        request: &MountRequest<'_>,
        by: &Principal,
        now: SimTime,
    ) -> Result<(String, String), Refusal> {
        let vpg = self.visible_vpg(site, request.vpg)?;
        let v = &self.vpgs[vpg];
        if v.recovery != site {
            return Err(Refusal::BadRequest(decisions::refusal_flr_wrong_site(
                &v.name,
                &self.site(v.recovery).name,
                &self.site(site).name,
            )));
        }
        let vm = self
            .vm_by_id(request.vm)
            .filter(|vm| v.vms.contains(vm))
            .ok_or_else(|| {
                Refusal::BadRequest(format!(
                    "VmIdentifier '{}' is not a VM of VPG '{}': list its VMs with \
                     GET /v1/vms?vpgName={}.",
                    request.vm, v.name, v.name
                ))
            })?;
        let checkpoint = self.checkpoint_in_journal(vpg, request.checkpoint, now)?;
        let mounting = Mounting {
            vpg,
            vm,
            checkpoint,
            retention_set: None,
            initial_path: request.initial_path,
        };
        self.open_flr_session(site, mounting, by, now)
    }

    /// `POST /v1/flrs` with `Bflr`: mounts a VM of a retention set, at its repository's site, with
    /// the VM's files as they were at the set's point in time. Returns the session identifier and
    /// the `FlrBackupMount` task identifier.
    pub fn mount_bflr(
        &mut self,
        site: SiteRole,
        request: &BflrRequest<'_>,
        by: &Principal,
        now: SimTime,
    ) -> Result<(String, String), Refusal> {
        let vpg = self.visible_vpg(site, request.vpg)?;
        let v = &self.vpgs[vpg];
        let set = self
            .retention_set(site, request.retention_set, now)
            .filter(|&s| self.ltr.sets[s].vpg == vpg)
            .ok_or_else(|| {
                Refusal::BadRequest(format!(
                    "RetentionSetIdentifier '{}' is not a retention set of VPG '{}' (it never \
                     existed or it expired): list them with GET \
                     /v1/ltr/catalog/fullretentionsets?vpgIdentifier={}.",
                    request.retention_set, v.name, v.id
                ))
            })?;
        let set = &self.ltr.sets[set];
        let repository = &self.ltr.repositories[set.repository];
        let repository_site = self.site(repository.site);
        if repository.site != site {
            return Err(Refusal::BadRequest(decisions::refusal_bflr_wrong_site(
                &repository.name,
                &repository_site.name,
                &self.site(site).name,
            )));
        }
        let mismatch = |key: &str, given: &str, actual: &str| {
            Refusal::BadRequest(format!(
                "{key} '{given}' is not that of retention set '{}' ({actual}); leave it out or \
                 send {actual}.",
                set.id
            ))
        };
        if let Some(given) = request
            .repository
            .filter(|r| !r.eq_ignore_ascii_case(&repository.id))
        {
            return Err(mismatch("RepositoryIdentifier", given, &repository.id));
        }
        if let Some(given) = request
            .repository_site
            .filter(|s| !s.eq_ignore_ascii_case(&repository_site.id))
        {
            return Err(mismatch(
                "RepositorySiteIdentifier",
                given,
                &repository_site.id,
            ));
        }
        let vm = self
            .vm_by_id(request.vm)
            .filter(|vm| set.vms.contains(vm))
            .ok_or_else(|| {
                Refusal::BadRequest(format!(
                    "VmIdentifier '{}' is not a VM of retention set '{}': list its VMs with GET \
                     /v1/ltr/catalog/vms.",
                    request.vm, set.id
                ))
            })?;
        let mounting = Mounting {
            vpg,
            vm,
            checkpoint: set.checkpoint.clone(),
            retention_set: Some(set.id.clone()),
            initial_path: request.initial_path,
        };
        self.open_flr_session(site, mounting, by, now)
    }

    /// Opens an FLR session of what `mounting` names and starts its mount task; the session's
    /// and the task's identifiers.
    fn open_flr_session(
        &mut self,
        site: SiteRole,
        mounting: Mounting<'_>,
        by: &Principal,
        now: SimTime,
    ) -> Result<(String, String), Refusal> {
        let Mounting {
            vpg,
            vm,
            checkpoint,
            retention_set,
            initial_path,
        } = mounting;
        let selected_path = match initial_path.filter(|p| !p.is_empty()) {
            Some(path) => {
                self.vms[vm]
                    .files
                    .node_at(path, checkpoint.at)
                    .map_err(path_refusal)?;
                Some(path.to_owned())
            }
            None => None,
        };
        let session_id = format!("{}.{}", guid(&mut self.rng), self.site(site).id);
        let session = session_id.clone();
        let operation = if retention_set.is_some() {
            Operation::FlrBackupMount { session }
        } else {
            Operation::FlrMount { session }
        };
        let task = self.start_task(site, vpg, operation, Planned::Complete, by, now);
        self.flrs.push(FlrSession {
            id: session_id.clone(),
            site,
            vpg,
            vm,
            checkpoint,
            retention_set,
            selected_path,
            state: FlrState::Mounting,
            mount_task: task,
            unmount_task: None,
            mounted_at: None,
            downloads: Vec::new(),
        });
        Ok((session_id, self.tasks[task].id.clone()))
    }

    /// The FLR session `id` of this site, or 404.
    pub fn flr_session(&self, site: SiteRole, id: &str) -> Result<usize, Refusal> {
        self.flrs
            .iter()
            .position(|s| s.site == site && s.id.eq_ignore_ascii_case(id))
            .ok_or_else(|| {
                Refusal::NotFound(format!(
                    "There is no FLR session '{id}' at site {}: list them with GET /v1/flrs \
                     (a session disappears once it is unmounted).",
                    self.site(site).name
                ))
            })
    }

    /// A session that can be browsed and downloaded from now, or why not (409).
    fn mounted_session(&self, site: SiteRole, id: &str) -> Result<usize, Refusal> {
        let index = self.flr_session(site, id)?;
        let session = &self.flrs[index];
        let task = &self.tasks[session.mount_task];
        match session.state {
            FlrState::Mounted => Ok(index),
            FlrState::Mounting => Err(Refusal::Conflict(format!(
                "FLR session '{}' is still mounting (MountInProgress, task {}): wait until \
                 GET /v1/flrs/{} shows MountCompletedSuccessfully.",
                session.id, task.id, session.id
            ))),
            FlrState::MountFailed => Err(Refusal::Conflict(format!(
                "FLR session '{}' failed to mount ({}): unmount it with DELETE /v1/flrs/{} and \
                 mount another checkpoint.",
                session.id,
                task.ended.as_ref().map_or("", |e| e.reason.as_str()),
                session.id
            ))),
            FlrState::Unmounting => Err(Refusal::Conflict(format!(
                "FLR session '{}' is being unmounted; mount the checkpoint again to browse it.",
                session.id
            ))),
        }
    }

    /// `DELETE /v1/flrs/{id}`: starts the unmount task and returns its identifier. A session
    /// still mounting is unmounted too: its mount task ends Stopped.
    pub fn unmount_flr(
        &mut self,
        site: SiteRole,
        id: &str,
        by: &Principal,
        now: SimTime,
    ) -> Result<String, Refusal> {
        let index = self.flr_session(site, id)?;
        let session = &self.flrs[index];
        if let Some(task) = session.unmount_task {
            return Err(Refusal::Conflict(format!(
                "FLR session '{}' is already being unmounted by task {}; it disappears when \
                 that task ends.",
                session.id, self.tasks[task].id
            )));
        }
        let (vpg, session_id, mount_task) = (session.vpg, session.id.clone(), session.mount_task);
        let from_retention_set = session.retention_set.is_some();
        if self.tasks[mount_task].is_running() {
            self.tasks[mount_task].end(
                task_state::STOPPED,
                decisions::reason_mount_stopped(&session_id),
                now,
            );
        }
        let operation = if from_retention_set {
            Operation::FlrBackupUnmount {
                session: session_id,
            }
        } else {
            Operation::FlrUnmount {
                session: session_id,
            }
        };
        let task = self.start_task(site, vpg, operation, Planned::Complete, by, now);
        let session = &mut self.flrs[index];
        session.state = FlrState::Unmounting;
        session.unmount_task = Some(task);
        Ok(self.tasks[task].id.clone())
    }

    /// `POST /v1/flrs/{id}/browse`: the item `path` names (`None` for the root) and what is in it.
    pub fn browse_flr(
        &self,
        site: SiteRole,
        id: &str,
        path: &str,
    ) -> Result<(Option<Node>, Vec<Node>), Refusal> {
        let session = &self.flrs[self.mounted_session(site, id)?];
        let files = &self.vms[session.vm].files;
        let at = session.checkpoint.at;
        let path = path.trim();
        let children = files
            .children_at(path, at)
            .map_err(path_refusal)?
            .ok_or_else(|| self.missing_path(session, path))?;
        let main = if path.is_empty() {
            None
        } else {
            files.node_at(path, at).map_err(path_refusal)?
        };
        Ok((main, children))
    }

    fn missing_path(&self, session: &FlrSession, path: &str) -> Refusal {
        Refusal::NotFound(format!(
            "The path '{path}' does not exist on VM '{}' at checkpoint {} (FLR session '{}'); \
             browse its parent folder to see what is there.",
            self.vms[session.vm].name, session.checkpoint.id, session.id
        ))
    }

    /// `POST /v1/flrs/{id}/download`: checks every path and returns the download's identifier.
    pub fn request_download(
        &mut self,
        site: SiteRole,
        id: &str,
        paths: Vec<String>,
    ) -> Result<String, Refusal> {
        let index = self.mounted_session(site, id)?;
        if paths.is_empty() {
            return Err(Refusal::BadRequest(
                "PathList is empty: send {\"PathList\": [\"sda1/etc/app/app.conf\"]}.".to_owned(),
            ));
        }
        let session = &self.flrs[index];
        let files = &self.vms[session.vm].files;
        for path in &paths {
            let node = files
                .node_at(path, session.checkpoint.at)
                .map_err(path_refusal)?;
            if node.is_none() {
                return Err(self.missing_path(session, path));
            }
        }
        let mut bytes = [0u8; 16];
        rand::Rng::fill_bytes(&mut self.rng, &mut bytes);
        let download = bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
        self.flrs[index].downloads.push(FlrDownload {
            id: download.clone(),
            paths,
        });
        Ok(download)
    }

    /// `GET` on a download URL: the files it serves (the session must still be mounted).
    pub fn download_content(
        &self,
        site: SiteRole,
        id: &str,
        download: &str,
    ) -> Result<DownloadContent, Refusal> {
        let session = &self.flrs[self.mounted_session(site, id)?];
        let request = session
            .downloads
            .iter()
            .find(|d| d.id.eq_ignore_ascii_case(download))
            .ok_or_else(|| {
                Refusal::NotFound(format!(
                    "FLR session '{}' has no download '{download}': ask for one with \
                     POST /v1/flrs/{}/download.",
                    session.id, session.id
                ))
            })?;
        let guest = &self.vms[session.vm].files;
        let at = session.checkpoint.at;
        let mut files: Vec<FileAt> = Vec::new();
        for path in &request.paths {
            for file in guest.files_under(path, at).map_err(path_refusal)? {
                if !files.iter().any(|f| f.path == file.path) {
                    files.push(file);
                }
            }
        }
        let single_file = match request.paths.as_slice() {
            [only] => guest
                .node_at(only, at)
                .map_err(path_refusal)?
                .is_some_and(|n| n.kind == NodeKind::File),
            _ => false,
        };
        Ok(DownloadContent {
            files,
            single_file,
            vm_name: self.vms[session.vm].name.clone(),
            checkpoint: session.checkpoint.id,
        })
    }

    /// The end of an `FlrJournalMount` task: mounted, unless the checkpoint left the journal.
    pub(super) fn finish_flr_mount(&mut self, session_id: &str, at: SimTime) -> (u8, String) {
        let Some(index) = self.flrs.iter().position(|s| s.id == session_id) else {
            return (
                task_state::FAILED,
                decisions::reason_session_gone(session_id),
            );
        };
        let session = &self.flrs[index];
        let vpg = &self.vpgs[session.vpg];
        let lost = match &session.retention_set {
            Some(set) => (!self.ltr.sets.iter().any(|s| &s.id == set && s.kept_at(at)))
                .then(|| decisions::reason_retention_set_gone(set)),
            None => vpg
                .journal
                .find(session.checkpoint.id, at)
                .is_none()
                .then(|| decisions::reason_checkpoint_lost(&vpg.name, session.checkpoint.id)),
        };
        if let Some(reason) = lost {
            self.flrs[index].state = FlrState::MountFailed;
            return (task_state::FAILED, reason);
        }
        let session = &mut self.flrs[index];
        session.state = FlrState::Mounted;
        session.mounted_at = Some(at);
        (task_state::COMPLETED, String::new())
    }

    /// The end of an `FlrJournalUnmount` task: the session is gone.
    pub(super) fn finish_flr_unmount(&mut self, session_id: &str) -> (u8, String) {
        self.flrs.retain(|s| s.id != session_id);
        (task_state::COMPLETED, String::new())
    }
}
