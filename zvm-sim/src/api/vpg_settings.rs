//! `/v1/vpgSettings`: VPG settings documents, made, read and written part by part, and committed
//! as one task. Bodies are SW10's camelCase (keys matched case-insensitively, as ASP.NET binds
//! them); answers are PascalCase, as an appliance's. The rules are in `world::settings`.

use axum::Json;
use axum::extract::{Extension, Path};
use serde_json::{Value, json};

use crate::api::actions::ActionResult;
use crate::http::extract::{JsonDocument, parse_date};
use crate::http::{ApiError, JsonBody, StartedTask, ViewCtx, required};
use crate::world::auth::Principal;
use crate::world::clock::SimTime;
use crate::world::settings::{default_part, pascal_case, settings_vm};
use crate::world::{Refusal, World};

/// A body as the document keeps it: PascalCase keys at every depth.
fn document(body: JsonDocument) -> Value {
    pascal_case(body.0)
}

/// `POST /v1/vpgSettings` (SW10's `VpgSettingsApi`, every key optional): a document for changing
/// the VPG `VpgIdentifier` names, or for a new one; the parts the body gives are laid over it, key
/// by key, and checked as a PUT of each is.
pub(crate) async fn create(
    ctx: ViewCtx,
    body: Option<JsonDocument>,
) -> Result<Json<String>, ApiError> {
    let given = body.map(document).unwrap_or(Value::Null);
    let from = match &given["VpgIdentifier"] {
        Value::Null => None,
        Value::String(id) => Some(id.clone()),
        other => {
            return Err(ApiError::BadRequest(format!(
                "VpgIdentifier must be a string; the body has {other}."
            )));
        }
    };
    let id = ctx.with_world(|world, _| {
        let vpg = match &from {
            Some(vpg) => Some(world.visible_vpg(ctx.site, vpg)?),
            None => None,
        };
        let mut doc = world.settings_document(ctx.site, vpg);
        for (key, part) in given.as_object().into_iter().flatten() {
            lay_over(&mut doc[key.as_str()], part);
        }
        world.check_basic(&doc["Basic"])?;
        for vm in doc["Vms"].as_array().into_iter().flatten() {
            world.check_settings_vm(&doc, vm)?;
        }
        Ok::<_, Refusal>(world.keep_vpg_settings(ctx.site, doc))
    })?;
    Ok(Json(id))
}

/// `given` over `part`: an object's keys one by one, anything else whole.
fn lay_over(part: &mut Value, given: &Value) {
    match (part.as_object_mut(), given.as_object()) {
        (Some(part), Some(given)) => {
            for (k, v) in given {
                part.insert(k.clone(), v.clone());
            }
        }
        _ => *part = given.clone(),
    }
}

/// `GET /v1/vpgSettings`: every document this site holds.
pub(crate) async fn list(ctx: ViewCtx) -> Json<Vec<Value>> {
    Json(ctx.with_world(|world, _| {
        world
            .all_vpg_settings(ctx.site)
            .into_iter()
            .map(|s| s.doc.clone())
            .collect()
    }))
}

/// `GET /v1/vpgSettings/{id}`.
pub(crate) async fn one(ctx: ViewCtx, Path(id): Path<String>) -> Result<Json<Value>, ApiError> {
    read(&ctx, &id, |doc| Some(doc.clone()))
}

/// `PUT /v1/vpgSettings/{id}`: the whole document but its identifiers.
pub(crate) async fn put(
    ctx: ViewCtx,
    Path(id): Path<String>,
    body: JsonDocument,
) -> Result<(), ApiError> {
    let mut written = document(body);
    edit(&ctx, &id, |world, doc| {
        for key in ["VpgIdentifier", "VpgSettingsIdentifier"] {
            written[key] = doc[key].clone();
        }
        world.check_basic(&written["Basic"])?;
        for vm in written["Vms"].as_array().into_iter().flatten() {
            world.check_settings_vm(&written, vm)?;
        }
        *doc = written;
        Ok(())
    })
}

/// `DELETE /v1/vpgSettings/{id}`: dropped, nothing committed.
pub(crate) async fn delete(ctx: ViewCtx, Path(id): Path<String>) -> Result<(), ApiError> {
    Ok(ctx.with_world(|world, _| world.drop_vpg_settings(ctx.site, &id))?)
}

/// `POST /v1/vpgSettings/{id}/commit`: the task that changes the VPG.
pub(crate) async fn commit(
    ctx: ViewCtx,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
) -> ActionResult {
    let task =
        ctx.with_world(|world, now| world.commit_vpg_settings(ctx.site, &id, &caller, now))?;
    Ok((Extension(StartedTask(task.clone())), Json(task)))
}

/// `GET /v1/vpgSettings/{id}/{part}`.
pub(crate) async fn part(
    ctx: ViewCtx,
    id: String,
    key: &'static str,
) -> Result<Json<Value>, ApiError> {
    read(&ctx, &id, |doc| Some(doc[key].clone()))
}

/// `PUT /v1/vpgSettings/{id}/{part}` (and `POST` of `ltr`): the part written whole.
pub(crate) async fn put_part(
    ctx: ViewCtx,
    id: String,
    key: &'static str,
    body: JsonDocument,
) -> Result<(), ApiError> {
    let part = document(body);
    edit(&ctx, &id, |world, doc| {
        if key == "Basic" {
            world.check_basic(&part)?;
        }
        doc[key] = part;
        Ok(())
    })
}

/// `DELETE /v1/vpgSettings/{id}/{part}`: the part back to a new document's.
pub(crate) async fn reset_part(
    ctx: ViewCtx,
    id: String,
    key: &'static str,
) -> Result<(), ApiError> {
    edit(&ctx, &id, |_, doc| {
        doc[key] = default_part(key);
        Ok(())
    })
}

/// `GET /v1/vpgSettings/{id}/priority`: the VPG's priority, as `Basic` has it.
pub(crate) async fn priority(
    ctx: ViewCtx,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    read(&ctx, &id, |doc| Some(doc["Basic"]["Priority"].clone()))
}

/// `GET /v1/vpgSettings/{id}/vms`.
pub(crate) async fn vms(ctx: ViewCtx, Path(id): Path<String>) -> Result<Json<Value>, ApiError> {
    read(&ctx, &id, |doc| Some(doc["Vms"].clone()))
}

/// `POST /v1/vpgSettings/{id}/vms` `{"VmIdentifier", ...}`: a VM added, with one NIC and one volume
/// unless the body gives them.
pub(crate) async fn add_vm(
    ctx: ViewCtx,
    Path(id): Path<String>,
    body: JsonDocument,
) -> Result<(), ApiError> {
    let given = document(body);
    edit(&ctx, &id, |world, doc| {
        let vm_id = world.check_settings_vm(doc, &given)?;
        if vm_index(doc, &vm_id).is_some() {
            return Err(Refusal::Conflict(format!(
                "VM {vm_id} is already in these settings: PUT /v1/vpgSettings/{{id}}/vms/{vm_id} changes it."
            )));
        }
        let mut vm = settings_vm(&vm_id);
        for (k, v) in given.as_object().into_iter().flatten() {
            if !v.is_null() {
                vm[k] = v.clone();
            }
        }
        vms_of(doc).push(vm);
        Ok(())
    })
}

/// `GET /v1/vpgSettings/{id}/vms/{vm}`.
pub(crate) async fn vm(
    ctx: ViewCtx,
    Path((id, vm)): Path<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    read(&ctx, &id, |doc| {
        vm_index(doc, &vm).map(|i| doc["Vms"][i].clone())
    })
}

/// `PUT /v1/vpgSettings/{id}/vms/{vm}`: the VM's settings written whole.
pub(crate) async fn put_vm(
    ctx: ViewCtx,
    Path((id, vm)): Path<(String, String)>,
    body: JsonDocument,
) -> Result<(), ApiError> {
    let mut written = document(body);
    edit(&ctx, &id, |_, doc| {
        let i = vm_index(doc, &vm).ok_or_else(|| no_vm(&vm))?;
        written["VmIdentifier"] = doc["Vms"][i]["VmIdentifier"].clone();
        doc["Vms"][i] = written;
        Ok(())
    })
}

/// `DELETE /v1/vpgSettings/{id}/vms/{vm}`: the VM leaves the settings.
pub(crate) async fn remove_vm(
    ctx: ViewCtx,
    Path((id, vm)): Path<(String, String)>,
) -> Result<(), ApiError> {
    edit(&ctx, &id, |_, doc| {
        let i = vm_index(doc, &vm).ok_or_else(|| no_vm(&vm))?;
        vms_of(doc).remove(i);
        Ok(())
    })
}

/// `GET /v1/vpgSettings/{id}/vms/{vm}/nics` or `/volumes`.
pub(crate) async fn vm_items(
    ctx: ViewCtx,
    id: String,
    vm: String,
    list: &'static str,
) -> Result<Json<Value>, ApiError> {
    read(&ctx, &id, |doc| {
        vm_index(doc, &vm).map(|i| doc["Vms"][i][list].clone())
    })
}

/// `GET /v1/vpgSettings/{id}/vms/{vm}/nics/{nic}` or `/volumes/{volume}`.
pub(crate) async fn vm_item(
    ctx: ViewCtx,
    (id, vm, item): (String, String, String),
    (list, key): (&'static str, &'static str),
) -> Result<Json<Value>, ApiError> {
    read(&ctx, &id, |doc| {
        let i = vm_index(doc, &vm)?;
        let j = item_index(&doc["Vms"][i], list, key, &item)?;
        Some(doc["Vms"][i][list][j].clone())
    })
}

/// `PUT /v1/vpgSettings/{id}/vms/{vm}/nics/{nic}` or `/volumes/{volume}`: written whole.
pub(crate) async fn put_vm_item(
    ctx: ViewCtx,
    (id, vm, item): (String, String, String),
    (list, key): (&'static str, &'static str),
    body: JsonDocument,
) -> Result<(), ApiError> {
    let mut written = document(body);
    edit(&ctx, &id, |_, doc| {
        let i = vm_index(doc, &vm).ok_or_else(|| no_vm(&vm))?;
        let j = item_index(&doc["Vms"][i], list, key, &item).ok_or_else(|| no_item(list, &item))?;
        written[key] = doc["Vms"][i][list][j][key].clone();
        doc["Vms"][i][list][j] = written;
        Ok(())
    })
}

/// `DELETE /v1/vpgSettings/{id}/vms/{vm}/nics/{nic}`: the NIC's settings back to none.
pub(crate) async fn reset_nic(
    ctx: ViewCtx,
    Path((id, vm, nic)): Path<(String, String, String)>,
) -> Result<(), ApiError> {
    edit(&ctx, &id, |_, doc| {
        let i = vm_index(doc, &vm).ok_or_else(|| no_vm(&vm))?;
        let j = item_index(&doc["Vms"][i], "Nics", "NicIdentifier", &nic)
            .ok_or_else(|| no_item("Nics", &nic))?;
        let id = doc["Vms"][i]["Nics"][j]["NicIdentifier"].clone();
        let fresh = &settings_vm("")["Nics"][0];
        doc["Vms"][i]["Nics"][j] = fresh.clone();
        doc["Vms"][i]["Nics"][j]["NicIdentifier"] = id;
        Ok(())
    })
}

fn read(
    ctx: &ViewCtx,
    id: &str,
    pick: impl FnOnce(&Value) -> Option<Value>,
) -> Result<Json<Value>, ApiError> {
    let picked = ctx.with_world(|world, _| {
        let doc = &world.vpg_settings(ctx.site, id)?.doc;
        pick(doc).ok_or_else(|| {
            Refusal::NotFound(format!("These VPG settings ({id}) have no such item."))
        })
    })?;
    Ok(Json(picked))
}

fn edit(
    ctx: &ViewCtx,
    id: &str,
    change: impl FnOnce(&World, &mut Value) -> Result<(), Refusal>,
) -> Result<(), ApiError> {
    Ok(ctx.with_world(|world, _| world.edit_vpg_settings(ctx.site, id, change))?)
}

fn vms_of(doc: &mut Value) -> &mut Vec<Value> {
    if !doc["Vms"].is_array() {
        doc["Vms"] = Value::Array(Vec::new());
    }
    doc["Vms"].as_array_mut().expect("made an array")
}

fn vm_index(doc: &Value, vm: &str) -> Option<usize> {
    doc["Vms"].as_array()?.iter().position(|v| {
        v["VmIdentifier"]
            .as_str()
            .is_some_and(|id| id.eq_ignore_ascii_case(vm))
    })
}

fn item_index(vm: &Value, list: &str, key: &str, item: &str) -> Option<usize> {
    vm[list].as_array()?.iter().position(|v| {
        v[key]
            .as_str()
            .is_some_and(|id| id.eq_ignore_ascii_case(item))
    })
}

fn no_vm(vm: &str) -> Refusal {
    Refusal::NotFound(format!(
        "VM {vm} is not in these settings: POST /v1/vpgSettings/{{id}}/vms adds it."
    ))
}

fn no_item(list: &str, item: &str) -> Refusal {
    Refusal::NotFound(format!(
        "The VM's settings have no {} {item}.",
        list.trim_end_matches('s')
    ))
}

/// The VPG names a body gives (`vpgNames`), none when absent or null.
fn vpg_names(body: Option<JsonBody>) -> Result<Vec<String>, ApiError> {
    Ok(body
        .map(|b| b.string_list("vpgNames"))
        .transpose()?
        .flatten()
        .unwrap_or_default())
}

/// `POST /v1/vpgSettings/copyVpgSettings` `{"vpgIdentifier"}`: a document for a new VPG with that
/// VPG's settings and no VM; its identifier.
pub(crate) async fn copy(ctx: ViewCtx, body: JsonBody) -> Result<Json<String>, ApiError> {
    let vpg = required(
        body.text("vpgIdentifier")?.map(str::to_owned),
        "vpgIdentifier",
        "the VPG whose settings to copy (GET /v1/vpgs)",
    )?;
    let id = ctx.with_world(|world, _| {
        let vpg = world.visible_vpg(ctx.site, &vpg)?;
        Ok::<_, Refusal>(world.copy_vpg_settings(ctx.site, vpg))
    })?;
    Ok(Json(id))
}

/// `POST /v1/vpgSettings/exportSettings` `{"vpgNames"?}`: SW10's `VpgSettingsExportApi`.
pub(crate) async fn export(ctx: ViewCtx, body: Option<JsonBody>) -> Result<Json<Value>, ApiError> {
    let names = vpg_names(body)?;
    let (at, count) =
        ctx.with_world(|world, now| world.export_vpg_settings(ctx.site, &names, now))?;
    Ok(Json(json!({
        "TimeStamp": at.to_wire(),
        "ExportResult": {"Result": "Success", "Message": format!("The settings of {count} VPG(s) were exported.")},
    })))
}

/// `GET /v1/vpgSettings/exportedSettings`: the time of each export, oldest first.
pub(crate) async fn exports(ctx: ViewCtx) -> Json<Vec<Value>> {
    Json(ctx.with_world(|world, _| {
        world
            .site(ctx.site)
            .exports
            .iter()
            .map(|e| json!({"TimeStamp": e.at.to_wire()}))
            .collect()
    }))
}

/// The export a path's `{timeStamp}` names.
fn time_stamp(raw: &str) -> Result<SimTime, ApiError> {
    parse_date(raw).ok_or_else(|| {
        ApiError::BadRequest(format!(
            "'{raw}' is not a time: give an export's TimeStamp as GET /v1/vpgSettings/exportedSettings lists it."
        ))
    })
}

/// `POST /v1/vpgSettings/exportedSettings/{timeStamp}` `{"vpgNames"?}`: SW10's
/// `VpgSettingsDownloadExportApi`.
pub(crate) async fn read_export(
    ctx: ViewCtx,
    Path(raw): Path<String>,
    body: Option<JsonBody>,
) -> Result<Json<Value>, ApiError> {
    let (at, names) = (time_stamp(&raw)?, vpg_names(body)?);
    let vpgs = ctx.with_world(|world, _| world.exported_settings(ctx.site, at, &names))?;
    Ok(Json(
        json!({"ExportedVpgSettingsApi": vpgs, "ErrorMessage": null}),
    ))
}

/// `GET /v1/vpgSettings/exportedSettings/{timeStamp}/vpgsinfo`: each VPG of the export.
pub(crate) async fn export_vpgs(
    ctx: ViewCtx,
    Path(raw): Path<String>,
) -> Result<Json<Vec<Value>>, ApiError> {
    let at = time_stamp(&raw)?;
    let vpgs = ctx.with_world(|world, _| world.exported_settings(ctx.site, at, &[]))?;
    Ok(Json(
        vpgs.iter()
            .map(|s| {
                json!({"VpgName": s["Basic"]["Name"], "SourceSiteName": s["SourceSiteName"],
                       "TargetSiteName": s["TargetSiteName"]})
            })
            .collect(),
    ))
}

/// `POST /v1/vpgSettings/import` `{"exportedVpgSettingsApi", "vpgNames"?}`: SW10's
/// `VpgSettingsImportVpgsResultApi`.
pub(crate) async fn import(
    ctx: ViewCtx,
    Extension(caller): Extension<Principal>,
    body: JsonDocument,
) -> Result<Json<Value>, ApiError> {
    let given = pascal_case(body.0);
    let settings = required(
        given["ExportedVpgSettingsApi"].as_array().cloned(),
        "exportedVpgSettingsApi",
        "the settings to import, as POST /v1/vpgSettings/exportedSettings/{timeStamp} reads them",
    )?;
    let names: Vec<String> = given["VpgNames"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n.as_str().map(str::to_owned))
        .collect();
    let done = ctx.with_world(|world, now| {
        world.import_vpg_settings(ctx.site, &settings, &names, &caller, now)
    });
    let pairs = |list: &[(String, String)], key: &str| -> Vec<Value> {
        list.iter()
            .map(|(name, text)| json!({"VpgName": name, key: text}))
            .collect()
    };
    let invalid: Vec<Value> = done
        .invalid
        .iter()
        .map(|(name, why)| json!({"VpgName": name, "ErrorMessages": [why]}))
        .collect();
    Ok(Json(json!({
        "ValidationFailedResults": invalid,
        "ImportFailedResults": pairs(&done.failed, "ErrorMessage"),
        "ImportTaskIdentifiers": pairs(&done.started, "TaskIdentifier"),
    })))
}
