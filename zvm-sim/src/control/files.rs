//! A VM's guest files, read and written as its guest would: `/_sim/vms/{id}/files`.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::http::{ApiError, Params, SiteCtx, required};
use crate::wire::FileView;
use crate::world::World;
use crate::world::files::PathError;

fn find_vm(world: &World, key: &str) -> Result<usize, ApiError> {
    if let Some(vm) = world.vm_by_id(key) {
        return Ok(vm);
    }
    let named: Vec<usize> = world
        .vms
        .iter()
        .enumerate()
        .filter(|(_, vm)| !vm.removed && vm.name.eq_ignore_ascii_case(key))
        .map(|(index, _)| index)
        .collect();
    match named.as_slice() {
        [only] => Ok(*only),
        [] => Err(ApiError::NotFound(format!(
            "There is no VM with the identifier or name '{key}'."
        ))),
        several => {
            let choices: Vec<String> = several
                .iter()
                .map(|&vm| {
                    format!(
                        "{} at {}",
                        world.vms[vm].id,
                        world.site(world.vms[vm].site).name
                    )
                })
                .collect();
            Err(ApiError::Conflict(format!(
                "{} VMs are named '{key}' ({}); name one by its identifier.",
                several.len(),
                choices.join(", ")
            )))
        }
    }
}

fn path_error(error: PathError) -> ApiError {
    ApiError::BadRequest(error.to_string())
}

fn required_path(params: &Params) -> Result<String, ApiError> {
    required(
        params.text("path").map(str::to_owned),
        "path",
        "add ?path=sda1/etc/app/app.conf (a partition-rooted guest path)",
    )
}

/// `GET /_sim/vms/{id}/files?path=...`: the file's bytes now. Without `path`: every file now,
/// as `[{"Path", "Size", "LastWriteTime"}]`.
pub(super) async fn read_files(
    State(ctx): State<SiteCtx>,
    Path(key): Path<String>,
    params: Params,
) -> Result<Response, ApiError> {
    let path = params.text("path").map(str::to_owned);
    ctx.with_world(|world, now| {
        let vm = &world.vms[find_vm(world, &key)?];
        let Some(path) = path else {
            let files: Vec<FileView> = vm
                .files
                .list_at(now)
                .into_iter()
                .map(|f| FileView {
                    path: f.path,
                    size: f.content.len(),
                    last_write_time: f.written,
                })
                .collect();
            return Ok(Json(files).into_response());
        };
        match vm.files.read_at(&path, now).map_err(path_error)? {
            Some(file) => Ok((
                [(header::CONTENT_TYPE, "application/octet-stream")],
                file.content,
            )
                .into_response()),
            None => Err(ApiError::NotFound(format!(
                "VM '{}' has no file '{path}'.",
                vm.name
            ))),
        }
    })
}

/// `PUT /_sim/vms/{id}/files?path=...` with the raw bytes as the body: writes the file now (a new
/// version; earlier checkpoints keep the earlier one).
pub(super) async fn write_file(
    State(ctx): State<SiteCtx>,
    Path(key): Path<String>,
    params: Params,
    content: Bytes,
) -> Result<Json<FileView>, ApiError> {
    let path = required_path(&params)?;
    ctx.with_world(|world, now| {
        let vm = find_vm(world, &key)?;
        let size = content.len();
        world.vms[vm]
            .files
            .write(&path, content, now)
            .map_err(path_error)?;
        Ok(Json(FileView {
            path,
            size,
            last_write_time: now,
        }))
    })
}

/// `DELETE /_sim/vms/{id}/files?path=...`: deletes the file now (earlier checkpoints keep it).
pub(super) async fn delete_file(
    State(ctx): State<SiteCtx>,
    Path(key): Path<String>,
    params: Params,
) -> Result<StatusCode, ApiError> {
    let path = required_path(&params)?;
    ctx.with_world(|world, now| {
        let vm = find_vm(world, &key)?;
        let existed = world.vms[vm].files.delete(&path, now).map_err(path_error)?;
        if existed {
            Ok(StatusCode::NO_CONTENT)
        } else {
            Err(ApiError::NotFound(format!(
                "VM '{}' has no file '{path}'.",
                world.vms[vm].name
            )))
        }
    })
}
