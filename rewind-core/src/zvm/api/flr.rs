//! File-level restore (`/v1/flrs`): mounting a checkpoint's or a retention set's disks, the sessions
//! of a VM, browsing a session page after page, downloading from it, and unmounting.

use std::time::Duration;

use reqwest::Method;

use crate::error::RewindError;
use crate::way_back::KeptSet;
use crate::zvm::client::{How, ZvmClient, segment};
use crate::zvm::error::CallError;
use crate::zvm::wire::{
    BackupFlr, FlrBrowse, FlrDownload, FlrListing, FlrMount, FlrSession, JournalFlr,
};

/// How long one download may take: files can be large, and the client's request timeout is sized for
/// JSON answers.
pub const DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// Items asked for per page of an FLR browse.
pub const BROWSE_PAGE: usize = 500;
/// The most pages of one folder read (100,000 items): a folder is browsed to find one item in it.
pub const BROWSE_PAGES: usize = 200;

impl ZvmClient {
    /// `POST /v1/flrs` with a journal FLR of `vm_id` in `vpg_id` at `checkpoint_id` → the FLR session
    /// identifier. Never sent twice.
    pub(crate) async fn flr_mount(
        &self,
        vpg_id: &str,
        vm_id: &str,
        checkpoint_id: &str,
    ) -> Result<String, CallError> {
        let jflr = JournalFlr {
            vpg_identifier: vpg_id,
            vm_identifier: vm_id,
            checkpoint_identifier: checkpoint_id,
            initial_download_path: None,
        };
        let mount = FlrMount {
            jflr: Some(jflr),
            bflr: None,
        };
        self.post_for_task("/v1/flrs", Some(&mount)).await
    }

    /// `POST /v1/flrs` with the FLR of `vm_id` in retention set `set` of `vpg_id` → the FLR session
    /// identifier. Never sent twice.
    pub(crate) async fn flr_mount_retention_set(
        &self,
        vpg_id: &str,
        vm_id: &str,
        set: &KeptSet,
    ) -> Result<String, CallError> {
        let bflr = BackupFlr {
            vpg_identifier: vpg_id,
            vm_identifier: vm_id,
            retention_set_identifier: &set.retention_set_id,
            repository_identifier: set.repository_id.as_deref(),
            repository_site_identifier: set.repository_site_id.as_deref(),
            initial_download_path: None,
        };
        let mount = FlrMount {
            jflr: None,
            bflr: Some(bflr),
        };
        self.post_for_task("/v1/flrs", Some(&mount)).await
    }

    /// `GET /v1/flrs?vmIdentifier=`: the FLR sessions of a VM at this ZVM.
    pub async fn flr_sessions(&self, vm_id: &str) -> Result<Vec<FlrSession>, RewindError> {
        let sessions: Vec<FlrSession> = self
            .get_list("/v1/flrs", &[("vmIdentifier", vm_id.to_string())])
            .await?;
        // Filtered here as well: a ZVM that ignores the filter must not make another VM's session look
        // like this one's.
        Ok(sessions
            .into_iter()
            .filter(|s| {
                s.vm_identifier
                    .as_deref()
                    .is_none_or(|v| v.eq_ignore_ascii_case(vm_id))
            })
            .collect())
    }

    /// `GET /v1/flrs/{id}`: the session (an object, or a one-element array as SW10 declares it).
    pub async fn flr_session(&self, session_id: &str) -> Result<FlrSession, RewindError> {
        let path = format!("/v1/flrs/{}", segment(session_id));
        self.get_one(&path, "FLR session").await
    }

    /// `POST /v1/flrs/{id}/browse {"Path": path, "PageNumber": n, "PageSize": BROWSE_PAGE}`, page after
    /// page until one is not full, into one listing; an empty path lists the partitions.
    ///
    /// Paging is asked for explicitly, so that a ZVM whose default page is short cannot hide the file
    /// looked for on a later page. A ZVM that ignores `PageSize` answers everything at once (more than
    /// a page) and one that ignores `PageNumber` answers the first page again: either ends the reading,
    /// without counting an item twice. At most [`BROWSE_PAGES`] pages are read.
    pub async fn flr_browse(
        &self,
        session_id: &str,
        path: &str,
    ) -> Result<FlrListing, RewindError> {
        let url = format!("/v1/flrs/{}/browse", segment(session_id));
        let page = |page_number| FlrBrowse {
            path,
            page_number,
            page_size: BROWSE_PAGE,
        };
        let mut listing: FlrListing = self.post_read(&url, &page(1)).await?;
        let mut last = listing.path_items.len();
        let mut number = 1;
        while last == BROWSE_PAGE && number < BROWSE_PAGES {
            number += 1;
            let next: FlrListing = self.post_read(&url, &page(number)).await?;
            let first = |l: &FlrListing| l.path_items.first().and_then(|i| i.path.clone());
            if next.path_items.is_empty() || first(&next) == first(&listing) {
                break;
            }
            last = next.path_items.len();
            listing.path_items.extend(next.path_items);
        }
        Ok(listing)
    }

    /// `POST /v1/flrs/{id}/download {"PathList": [path]}` → the URL to download it from.
    pub async fn flr_download_url(
        &self,
        session_id: &str,
        path: &str,
    ) -> Result<String, RewindError> {
        let url = format!("/v1/flrs/{}/download", segment(session_id));
        let request = format!("POST {url}");
        let answer: serde_json::Value = self
            .post_read(&url, &FlrDownload { path_list: &[path] })
            .await?;
        match answer {
            serde_json::Value::String(s) if !s.trim().is_empty() => Ok(s.trim().to_string()),
            serde_json::Value::Object(o) => o
                .iter()
                .find(|(k, _)| {
                    k.eq_ignore_ascii_case("url") || k.eq_ignore_ascii_case("DownloadUrl")
                })
                .and_then(|(_, v)| v.as_str())
                .map(str::to_string)
                .ok_or_else(|| self.unexpected(request, "the answer holds no URL")),
            other => Err(self.unexpected(
                request,
                format!(
                    "the answer is not a URL: {}",
                    other.to_string().chars().take(200).collect::<String>()
                ),
            )),
        }
    }

    /// `GET` a download URL of this ZVM, with the bearer, retried like a read; the response is returned
    /// as soon as its status is known, for the caller to stream. A URL of another host is refused:
    /// rewind's token never leaves for a host it was not configured for.
    pub async fn download(&self, url: &str) -> Result<reqwest::Response, RewindError> {
        let request = "GET <download URL>".to_string();
        let base = self.url();
        let resolved = base.join(url).map_err(|e| {
            self.unexpected(
                request.clone(),
                format!("the download URL {url:?} does not parse: {e}"),
            )
        })?;
        if resolved.origin() != base.origin() {
            return Err(self.unexpected(
                request,
                format!(
                    "the download URL {resolved} is not on this ZVM ({base}); rewind does not send its token to another host"
                ),
            ));
        }
        let how = How {
            timeout: Some(DOWNLOAD_TIMEOUT),
            ..How::READ
        };
        let label = resolved.path().to_string();
        self.call_url(Method::GET, resolved.as_str(), &label, &[], None, how)
            .await
            .map_err(|e| e.at(self, &format!("GET {label}")))
    }

    /// `DELETE /v1/flrs/{id}`: unmount → the unmount's task identifier. Never sent twice.
    pub(crate) async fn flr_unmount(&self, session_id: &str) -> Result<String, CallError> {
        let path = format!("/v1/flrs/{}", segment(session_id));
        self.write_for_id(Method::DELETE, &path, None::<&()>).await
    }
}
