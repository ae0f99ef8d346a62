//! `/v1/recoveryScripts/{repository,output}/...`: a ZVM's recovery-scripts folders, listed, made,
//! uploaded to (the repository, as `multipart/form-data`), downloaded from and deleted from. The
//! rules are in `world::scripts`.

use axum::Json;
use axum::extract::Multipart;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::http::extract::Params;
use crate::http::{ApiError, JsonBody, ViewCtx};
use crate::world::scripts::Root;

/// `GET .../items?path=&search=`: SW10's `ListItemsResultApi`.
pub(crate) async fn items(
    ctx: ViewCtx,
    params: Params,
    root: Root,
) -> Result<Json<Value>, ApiError> {
    let path = params.text("path").unwrap_or_default().to_owned();
    let search = params.text("search").map(str::to_owned);
    let items = ctx.with_world(|world, _| {
        let scripts = &world.site(ctx.site).scripts;
        let listed = scripts.items(root, &path, search.as_deref())?;
        let rows: Vec<Value> = listed
            .into_iter()
            .map(|i| {
                json!({"Name": i.name(), "Path": i.path, "Type": i.kind, "CreatedAt": i.created.to_wire()})
            })
            .collect();
        Ok::<_, crate::world::Refusal>(rows)
    })?;
    Ok(Json(json!({ "Items": items })))
}

/// `POST .../folders` `{"path": "folder1/folder2"}`.
pub(crate) async fn make_folder(ctx: ViewCtx, body: JsonBody, root: Root) -> Result<(), ApiError> {
    let path = body.text("path")?.unwrap_or_default().to_owned();
    ctx.with_world(|world, now| {
        world.sites[ctx.site.index()]
            .scripts
            .make_folder(root, &path, now)
    })?;
    Ok(())
}

/// `DELETE .../folders?path=&deleteIfNotEmpty=`.
pub(crate) async fn delete_folder(
    ctx: ViewCtx,
    params: Params,
    root: Root,
) -> Result<(), ApiError> {
    let path = params.text("path").unwrap_or_default().to_owned();
    let even_if_not_empty = params.boolean("deleteIfNotEmpty")?.unwrap_or(false);
    ctx.with_world(|world, _| {
        world.sites[ctx.site.index()]
            .scripts
            .delete_folder(root, &path, even_if_not_empty)
    })?;
    Ok(())
}

/// `GET .../files?path=`: the file's bytes.
pub(crate) async fn download(
    ctx: ViewCtx,
    params: Params,
    root: Root,
) -> Result<Response, ApiError> {
    let path = params.text("path").unwrap_or_default().to_owned();
    let (name, content) = ctx.with_world(|world, _| {
        let file = world.site(ctx.site).scripts.file(root, &path)?;
        Ok::<_, crate::world::Refusal>((file.name().to_owned(), file.content.clone()))
    })?;
    let disposition = format!("attachment; filename=\"{}\"", name.replace('"', ""));
    Ok((
        [
            (header::CONTENT_TYPE, "application/octet-stream".to_owned()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        content,
    )
        .into_response())
}

/// `DELETE .../files?path=`.
pub(crate) async fn delete_file(ctx: ViewCtx, params: Params, root: Root) -> Result<(), ApiError> {
    let path = params.text("path").unwrap_or_default().to_owned();
    ctx.with_world(|world, _| {
        world.sites[ctx.site.index()]
            .scripts
            .delete_file(root, &path)
    })?;
    Ok(())
}

/// What a `multipart/form-data` upload gives: SW10's `file` (required), `path` and
/// `overwriteExisting`.
struct Upload {
    name: String,
    content: Vec<u8>,
    path: String,
    overwrite: bool,
}

/// `POST /v1/recoveryScripts/repository/files` (`multipart/form-data`).
pub(crate) async fn upload(ctx: ViewCtx, form: Multipart) -> Result<(), ApiError> {
    let upload = read_upload(form).await?;
    ctx.with_world(|world, now| {
        world.sites[ctx.site.index()].scripts.upload(
            Root::Repository,
            &upload.path,
            &upload.name,
            upload.content,
            upload.overwrite,
            now,
        )
    })?;
    Ok(())
}

async fn read_upload(mut form: Multipart) -> Result<Upload, ApiError> {
    let bad = |e: axum::extract::multipart::MultipartError| {
        ApiError::BadRequest(format!("The multipart/form-data body cannot be read: {e}"))
    };
    let mut file = None;
    let (mut path, mut overwrite) = (String::new(), false);
    while let Some(field) = form.next_field().await.map_err(bad)? {
        let part = field.name().unwrap_or_default().to_ascii_lowercase();
        match part.as_str() {
            "file" => {
                let name = field.file_name().unwrap_or_default().to_owned();
                file = Some((name, field.bytes().await.map_err(bad)?.to_vec()));
            }
            "path" => path = field.text().await.map_err(bad)?,
            "overwriteexisting" => {
                let text = field.text().await.map_err(bad)?;
                overwrite = text.trim().eq_ignore_ascii_case("true");
            }
            _ => {}
        }
    }
    let Some((name, content)) = file else {
        return Err(ApiError::BadRequest(
            "The upload has no file part: send the script as the form field 'file'.".to_owned(),
        ));
    };
    Ok(Upload {
        name,
        content,
        path,
        overwrite,
    })
}
