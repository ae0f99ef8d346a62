//! File-level restore: `POST|GET /v1/flrs`, `GET|DELETE /v1/flrs/{id}`,
//! `POST /v1/flrs/{id}/browse`, `POST /v1/flrs/{id}/download` and the download URL it returns,
//! `GET /v1/flrs/{id}/downloads/{download}`.
//!
//! A session mounts a journal checkpoint (`Jflr`) or a retention set of Extended Journal Copy
//! (`Bflr`); browse and download work alike on both.
//!
//! Every FLR route refuses the Operator role with 403, as ZVM 10.9 does (a known RBAC defect; the
//! Administrator role works). The model and its rules are in `world::flr`.

use std::io::Write;

use axum::Json;
use axum::extract::{Extension, Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use chrono::{Datelike, Timelike};

use crate::decisions;
use crate::http::{ApiError, JsonBody, Params, SiteCtx, StartedTask, ViewCtx, required};
use crate::wire::{BrowseView, FlrSessionView, PathItemView};
use crate::world::auth::Principal;
use crate::world::files::FileAt;
use crate::world::flr::{BflrRequest, MountRequest};
use crate::world::spec::Role;

/// FLR is refused to the Operator role (403), as on ZVM 10.9.
fn allow_flr(caller: &Principal) -> Result<(), ApiError> {
    match caller.role {
        Role::Administrator => Ok(()),
        Role::Operator => Err(ApiError::Forbidden(decisions::refusal_flr_role(
            &caller.name,
            "Operator",
        ))),
    }
}

/// `POST /v1/flrs` `{"Jflr": {"VpgIdentifier", "VmIdentifier", "CheckpointIdentifier",
/// "InitialDownloadPath"?}}` (a journal checkpoint) or `{"Bflr": {"VpgIdentifier",
/// "VmIdentifier", "RetentionSetIdentifier", "RepositoryIdentifier"?, "RepositorySiteIdentifier"?,
/// "InitialDownloadPath"?}}` (a retention set of Extended Journal Copy): 200 with the FLR session
/// identifier as a JSON string. The mount runs as an `FlrJournalMount` (or `FlrBackupMount`) task
/// that lists the session under `RelatedEntities.FlrSessions`.
pub(crate) async fn mount(
    State(ctx): State<SiteCtx>,
    Extension(caller): Extension<Principal>,
    body: JsonBody,
) -> Result<impl IntoResponse, ApiError> {
    allow_flr(&caller)?;
    let Some(jflr) = body.object("Jflr")? else {
        let bflr = required(
            body.object("Bflr")?,
            "Jflr or Bflr",
            "send {\"Jflr\": {\"VpgIdentifier\": \"...\", \"VmIdentifier\": \"...\", \
             \"CheckpointIdentifier\": \"...\"}} or {\"Bflr\": {\"VpgIdentifier\": \"...\", \
             \"VmIdentifier\": \"...\", \"RetentionSetIdentifier\": \"...\"}}",
        )?;
        return mount_bflr(&ctx, &caller, &bflr);
    };
    let vpg = jflr.required_text("VpgIdentifier")?;
    let vm = jflr.required_text("VmIdentifier")?;
    let checkpoint = required(
        jflr.identifier("CheckpointIdentifier")?,
        "Jflr.CheckpointIdentifier",
        "choose one from GET /v1/vpgs/{id}/checkpoints",
    )?;
    let initial_path = jflr.text("InitialDownloadPath")?;
    let request = MountRequest {
        vpg,
        vm,
        checkpoint: &checkpoint,
        initial_path,
    };
    let (session, task) =
        ctx.with_world(|world, now| world.mount_flr(ctx.site, &request, &caller, now))?;
    Ok((Extension(StartedTask(task)), Json(session)))
}

/// `Bflr`: a VM of a retention set, at its repository's site.
fn mount_bflr(
    ctx: &SiteCtx,
    caller: &Principal,
    bflr: &JsonBody,
) -> Result<(Extension<StartedTask>, Json<String>), ApiError> {
    let retention_set = required(
        bflr.identifier("RetentionSetIdentifier")?,
        "Bflr.RetentionSetIdentifier",
        "choose one from GET /v1/ltr/catalog/fullretentionsets",
    )?;
    let request = BflrRequest {
        vpg: bflr.required_text("VpgIdentifier")?,
        vm: bflr.required_text("VmIdentifier")?,
        retention_set: &retention_set,
        repository: bflr.text("RepositoryIdentifier")?,
        repository_site: bflr.text("RepositorySiteIdentifier")?,
        initial_path: bflr.text("InitialDownloadPath")?,
    };
    let (session, task) =
        ctx.with_world(|world, now| world.mount_bflr(ctx.site, &request, caller, now))?;
    Ok((Extension(StartedTask(task)), Json(session)))
}

/// `GET /v1/flrs?vmIdentifier=`: the FLR sessions of this site, oldest first.
pub(crate) async fn list(
    ctx: ViewCtx,
    Extension(caller): Extension<Principal>,
    params: Params,
) -> Result<Json<Vec<FlrSessionView>>, ApiError> {
    allow_flr(&caller)?;
    let vm = params.text("vmIdentifier");
    Ok(Json(ctx.view(|view| {
        view.world
            .flrs
            .iter()
            .filter(|s| s.site == ctx.site)
            .filter(|s| vm.is_none_or(|vm| view.world.vms[s.vm].id.eq_ignore_ascii_case(vm)))
            .map(|s| view.flr_session(s))
            .collect()
    })))
}

/// `GET /v1/flrs/{id}`: an array holding the session, as SW10 declares it.
pub(crate) async fn one(
    ctx: ViewCtx,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Json<Vec<FlrSessionView>>, ApiError> {
    allow_flr(&caller)?;
    ctx.view(|view| {
        let index = view.world.flr_session(ctx.site, &id)?;
        Ok(Json(vec![view.flr_session(&view.world.flrs[index])]))
    })
}

/// `DELETE /v1/flrs/{id}`: 200 with the `FlrJournalUnmount` task's identifier.
pub(crate) async fn unmount(
    State(ctx): State<SiteCtx>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<impl IntoResponse, ApiError> {
    allow_flr(&caller)?;
    let task = ctx.with_world(|world, now| world.unmount_flr(ctx.site, &id, &caller, now))?;
    Ok((Extension(StartedTask(task.clone())), Json(task)))
}

/// `POST /v1/flrs/{id}/browse` `{"Path"?: "...", "PageNumber"?: n, "PageSize"?: n}`: an empty or
/// absent path lists the partitions. Pages are numbered from 1; without `PageSize`, one page holds
/// everything.
pub(crate) async fn browse(
    State(ctx): State<SiteCtx>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
    body: Option<JsonBody>,
) -> Result<Json<BrowseView>, ApiError> {
    allow_flr(&caller)?;
    let body = body.unwrap_or_default();
    let path = body.text("Path")?.unwrap_or("").to_owned();
    let page_number = positive(&body, "PageNumber")?.unwrap_or(1);
    let page_size = positive(&body, "PageSize")?;
    let (main, children) = ctx.with_world(|world, _| world.browse_flr(ctx.site, &id, &path))?;
    let items: Vec<PathItemView> = match page_size {
        Some(size) => children
            .into_iter()
            .skip((page_number - 1).saturating_mul(size))
            .take(size)
            .map(PathItemView::from)
            .collect(),
        None => children.into_iter().map(PathItemView::from).collect(),
    };
    Ok(Json(BrowseView {
        main_path_item: main.map(PathItemView::from),
        path_items: items,
    }))
}

/// A page number or size: a whole number of 1 or more.
fn positive(body: &JsonBody, key: &str) -> Result<Option<usize>, ApiError> {
    let n = body.whole_number(key, 1, 1e9)?;
    // At most 1e9, so it fits a usize on every target.
    Ok(n.map(|n| n as usize))
}

/// `POST /v1/flrs/{id}/download` `{"PathList": ["..."]}`: 200 with a URL on this ZVM (a JSON
/// string). `GET` on it, with a bearer token, returns the file's bytes for one file, or a zip of
/// every file for several paths or a folder. Every path must exist at the checkpoint (404 names
/// the first that does not).
pub(crate) async fn download(
    ctx: ViewCtx,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
    body: JsonBody,
) -> Result<Json<String>, ApiError> {
    allow_flr(&caller)?;
    let paths = required(
        body.string_list("PathList")?,
        "PathList",
        "send {\"PathList\": [\"sda1/etc/app/app.conf\"]}",
    )?;
    let (session, download) = ctx.with_world(|world, _| {
        let index = world.flr_session(ctx.site, &id)?;
        let session = world.flrs[index].id.clone();
        let download = world.request_download(ctx.site, &id, paths)?;
        Ok::<_, ApiError>((session, download))
    })?;
    Ok(Json(format!(
        "{}/v1/flrs/{session}/downloads/{download}",
        ctx.base_url()
    )))
}

/// `GET /v1/flrs/{id}/downloads/{download}`: the URL `download` returned. One file: its bytes
/// (`application/octet-stream`); several paths or a folder: a zip whose entries are named by their
/// guest paths (`sda1/etc/app/app.conf`, `C:/ProgramData/App/app.ini`).
pub(crate) async fn fetch(
    State(ctx): State<SiteCtx>,
    Extension(caller): Extension<Principal>,
    Path((id, download)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    allow_flr(&caller)?;
    let content = ctx.with_world(|world, _| world.download_content(ctx.site, &id, &download))?;
    if content.single_file
        && let [file] = content.files.as_slice()
    {
        let name = file.path.rsplit('/').next().unwrap_or("download");
        return Ok((
            [
                (header::CONTENT_TYPE, "application/octet-stream".to_owned()),
                (
                    header::CONTENT_DISPOSITION,
                    format!("attachment; filename=\"{}\"", name.replace('"', "")),
                ),
            ],
            file.content.clone(),
        )
            .into_response());
    }
    let archive = zip_of(&content.files).map_err(|e| {
        ApiError::Internal(format!(
            "The download could not be packed ({e}); ask for the files one at a time."
        ))
    })?;
    let name = format!("flr-{}-{}.zip", content.vm_name, content.checkpoint);
    Ok((
        [
            (header::CONTENT_TYPE, "application/zip".to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{}\"", name.replace('"', "")),
            ),
        ],
        archive,
    )
        .into_response())
}

/// A zip of these files, entries named by their guest paths, with their write times.
fn zip_of(files: &[FileAt]) -> Result<Vec<u8>, zip::result::ZipError> {
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for file in files {
        let written = file.written.to_datetime();
        let mut options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        // Zip times run from 1980 to 2107; a file outside that range keeps the archive's default.
        if let Ok(time) = zip::DateTime::from_date_and_time(
            u16::try_from(written.year()).unwrap_or(1980),
            written.month() as u8,
            written.day() as u8,
            written.hour() as u8,
            written.minute() as u8,
            written.second() as u8,
        ) {
            options = options.last_modified_time(time);
        }
        writer.start_file(file.path.as_str(), options)?;
        writer.write_all(&file.content)?;
    }
    Ok(writer.finish()?.into_inner())
}
