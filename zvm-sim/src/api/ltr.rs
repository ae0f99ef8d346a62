//! Extended Journal Copy (`/v1/ltr/...`): repositories, manual runs from a checkpoint
//! (`retentionstart`, `retentionabort`), the catalogue of retention sets and each VPG's health.
//! Each ZVM lists its own site's repositories, and the retention sets and health of the VPGs it
//! sees. The model and its rules are in `world::ltr`.

use axum::Json;
use axum::extract::{Extension, Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;

use crate::decisions;
use crate::http::extract::JsonDocument;
use crate::http::{ApiError, JsonBody, Params, SiteCtx, StartedTask, ViewCtx};
use crate::wire::{
    NamedEntityView, RecoverableVmView, RecoverableVmsView, RepositoryView, RetentionSetsInfoView,
    RetentionSetsView, SiteRepositoryView, VpgsLtrHealthView,
};
use crate::world::auth::Principal;
use crate::world::clock::SimTime;
use crate::world::repositories::RepositoryWrite;
use crate::world::settings::pascal_case;
use crate::world::{SiteRole, World};

/// `GET /v1/ltr/repositories?connectionType=&repositoryName=`: this site's repositories.
pub(crate) async fn repositories(ctx: ViewCtx, params: Params) -> Json<Vec<RepositoryView>> {
    Json(ctx.view(|view| {
        (0..view.world.ltr.repositories.len())
            .filter(|&r| view.world.ltr.repository_at(r, ctx.site))
            .map(|r| view.repository(r))
            .filter(|r| {
                params.matches("repositoryName", &r.repository_name)
                    && params.text("connectionType").is_none_or(|c| {
                        c == r.connection_type.to_string()
                            || c.eq_ignore_ascii_case(decisions::REPOSITORY_CONNECTION_NAME)
                    })
            })
            .collect()
    }))
}

/// `GET /v1/ltr/repositories/{repositoryId}`.
pub(crate) async fn repository(
    ctx: ViewCtx,
    Path(id): Path<String>,
) -> Result<Json<RepositoryView>, ApiError> {
    ctx.view(|view| {
        let repositories = &view.world.ltr.repositories;
        repositories
            .iter()
            .position(|r| !r.deleted && r.site == ctx.site && r.id.eq_ignore_ascii_case(&id))
            .map(|r| Json(view.repository(r)))
            .ok_or_else(|| {
                ApiError::NotFound(format!(
                    "There is no repository '{id}' at this site: list them with GET \
                     /v1/ltr/repositories."
                ))
            })
    })
}

/// `GET /v1/virtualizationsites/{siteIdentifier}/repositories`: the repositories of that site.
pub(crate) async fn site_repositories(
    ctx: ViewCtx,
    Path(site_id): Path<String>,
) -> Result<Json<Vec<SiteRepositoryView>>, ApiError> {
    ctx.view(|view| {
        let site = super::sites::site_by_id(view.world, &site_id)?;
        Ok(Json(
            (0..view.world.ltr.repositories.len())
                .filter(|&r| view.world.ltr.repository_at(r, site))
                .map(|r| view.site_repository(r))
                .collect(),
        ))
    })
}

/// `GET /v1/ltr/catalog/fullretentionsets?vpgIdentifier=&repositoryIdentifier=&zorgIdentifier=`:
/// the retention sets of the VPGs this site sees, oldest first. A ZORG matches none: a site
/// without Zerto Cloud Manager has none.
pub(crate) async fn full_retention_sets(
    ctx: ViewCtx,
    params: Params,
) -> Json<RetentionSetsInfoView> {
    Json(ctx.view(|view| {
        let world = view.world;
        let sets = world
            .retention_sets_seen(ctx.site, view.now)
            .filter(|set| {
                params.matches("vpgIdentifier", &world.vpgs[set.vpg].id)
                    && params.matches(
                        "repositoryIdentifier",
                        &world.ltr.repositories[set.repository].id,
                    )
                    && params.text("zorgIdentifier").is_none()
            })
            .map(|set| view.retention_set_info(set))
            .collect();
        RetentionSetsInfoView {
            retention_sets: sets,
        }
    }))
}

/// `GET /v1/ltr/catalog/fullretentionsets/{id}/incrementals`: none, since every set a manual run
/// writes is a full one; 404 for a set this site does not list.
pub(crate) async fn incrementals(
    ctx: ViewCtx,
    Path(id): Path<String>,
) -> Result<Json<RetentionSetsInfoView>, ApiError> {
    ctx.view(|view| {
        view.world
            .retention_set(ctx.site, &id, view.now)
            .map(|_| {
                Json(RetentionSetsInfoView {
                    retention_sets: Vec::new(),
                })
            })
            .ok_or_else(|| no_retention_set(&id))
    })
}

fn no_retention_set(id: &str) -> ApiError {
    ApiError::NotFound(format!(
        "There is no retention set '{id}' at this site (it may have expired): list them with GET \
         /v1/ltr/catalog/fullretentionsets."
    ))
}

/// `GET /v1/ltr/catalog/vms`: each VM, in each VPG, that a retention set this site lists holds.
pub(crate) async fn catalog_vms(ctx: ViewCtx) -> Json<RecoverableVmsView> {
    Json(ctx.view(|view| {
        let world = view.world;
        let mut pairs: Vec<(usize, usize)> = world
            .retention_sets_seen(ctx.site, view.now)
            .flat_map(|set| set.vms.iter().map(move |&vm| (set.vpg, vm)))
            .collect();
        pairs.sort_unstable();
        pairs.dedup();
        let vms = pairs
            .into_iter()
            .map(|(vpg, vm)| {
                let (v, m) = (&world.vpgs[vpg], &world.vms[vm]);
                RecoverableVmView {
                    vm: NamedEntityView {
                        name: Some(m.name.clone()),
                        identifier: Some(m.id.clone()),
                    },
                    vpg: NamedEntityView {
                        name: Some(v.name.clone()),
                        identifier: Some(v.id.clone()),
                    },
                    is_searchable: false,
                    is_vm_exist: true,
                }
            })
            .collect();
        RecoverableVmsView { vms }
    }))
}

/// `GET /v1/ltr/catalog/vms/{vmIdentifier}/retentionsets`: the retention sets holding the VM, in
/// every repository, of the VPGs this site sees; 404 for a VM that does not exist.
pub(crate) async fn vm_retention_sets(
    ctx: ViewCtx,
    Path(id): Path<String>,
) -> Result<Json<RetentionSetsView>, ApiError> {
    ctx.view(|view| {
        let world = view.world;
        let vm = world.vm_by_id(&id).ok_or_else(|| {
            ApiError::NotFound(format!(
                "There is no VM '{id}': list the protected VMs with GET /v1/vms."
            ))
        })?;
        let sets = world
            .retention_sets_seen(ctx.site, view.now)
            .filter(|set| set.vms.contains(&vm))
            .map(|set| view.retention_set_of_vm(set))
            .collect();
        Ok(Json(RetentionSetsView {
            retention_sets: sets,
            ltr_vm_identifier: world.vms[vm].id.clone(),
        }))
    })
}

/// `GET /v1/ltr/health/vpgs`: every VPG this site sees, with its repository (`RepositoryId` null
/// and `IsBackupEnabled` false without one) and its runs.
pub(crate) async fn health(ctx: ViewCtx) -> Json<VpgsLtrHealthView> {
    Json(ctx.view(|view| {
        VpgsLtrHealthView {
            vpgs: (0..view.world.vpgs.len())
                .filter(|&vpg| view.world.vpgs[vpg].visible_from(ctx.site))
                .map(|vpg| view.ltr_health(vpg))
                .collect(),
        }
    }))
}

/// `POST /v1/ltr/vpgs/{vpgIdentifier}/retentionstart {"checkpointId"?: "..."}`: 200 with the
/// `ManualRetention` task's identifier (a JSON string). Without `checkpointId` (or without a
/// body) the run copies the latest checkpoint. Whether it wrote a set is only in the task.
pub(crate) async fn retention_start(
    State(ctx): State<SiteCtx>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
    body: Option<JsonBody>,
) -> Result<impl IntoResponse, ApiError> {
    let body = body.unwrap_or_default();
    let checkpoint = body.identifier("CheckpointId")?;
    let task = ctx.with_world(|world, now| {
        let vpg = world.visible_vpg(ctx.site, &id)?;
        Ok::<_, ApiError>(world.start_retention(ctx.site, vpg, checkpoint.as_deref(), &caller, now))
    })?;
    Ok((Extension(StartedTask(task.clone())), Json(task)))
}

/// `POST /v1/ltr/vpgs/{vpgIdentifier}/retentionabort`: stops the VPG's running manual run (its
/// task ends Stopped); 200 without a body, as SW10 declares it. 409 when none runs.
pub(crate) async fn retention_abort(
    State(ctx): State<SiteCtx>,
    Extension(caller): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    ctx.with_world(|world, now| {
        let vpg = world.visible_vpg(ctx.site, &id)?;
        world.abort_retention(vpg, &caller, now)?;
        Ok(StatusCode::OK)
    })
}

/// What a body writes of a repository (`RepositoriesSettingsApi`: the name and capacity modelled).
fn repository_write(body: &JsonBody) -> Result<RepositoryWrite, ApiError> {
    let capacity = match body.number("totalCapacityGB")? {
        None => None,
        Some(gb) if gb >= 1.0 && gb.fract() == 0.0 => Some(gb as u64),
        Some(gb) => {
            return Err(ApiError::BadRequest(format!(
                "totalCapacityGB {gb} is not a whole number of gigabytes above 0."
            )));
        }
    };
    Ok(RepositoryWrite {
        name: body.text("repositoryName")?.map(str::to_owned),
        capacity_gb: capacity,
    })
}

/// `POST /v1/ltr/repositories`: a new repository at this site; its identifier.
pub(crate) async fn create_repository(
    ctx: ViewCtx,
    body: JsonBody,
) -> Result<Json<String>, ApiError> {
    let write = repository_write(&body)?;
    Ok(Json(ctx.with_world(|world, _| {
        world.create_repository(ctx.site, write)
    })?))
}

/// `PUT /v1/ltr/repositories/{repositoryIdentifier}`.
pub(crate) async fn edit_repository(
    ctx: ViewCtx,
    Path(id): Path<String>,
    body: JsonBody,
) -> Result<(), ApiError> {
    let write = repository_write(&body)?;
    Ok(ctx.with_world(|world, _| world.edit_repository(ctx.site, &id, write))?)
}

/// `DELETE /v1/ltr/repositories/{repositoryIdentifier}`.
pub(crate) async fn delete_repository(
    ctx: ViewCtx,
    Path(id): Path<String>,
) -> Result<(), ApiError> {
    Ok(ctx.with_world(|world, now| world.delete_repository(ctx.site, &id, now))?)
}

/// `POST /v1/ltr/catalog/deleteretentionsets` (`DeleteRetentionSetsApi`).
pub(crate) async fn delete_retention_sets(
    ctx: ViewCtx,
    body: JsonDocument,
) -> Result<(), ApiError> {
    let given = pascal_case(body.0);
    let listed = given["RetentionSetsToDelete"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let texts = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_owned))
            .collect()
    };
    let full: Vec<String> = listed
        .iter()
        .filter_map(|s| s["FullRetentionSetIdentifier"].as_str().map(str::to_owned))
        .collect();
    let incrementals: Vec<String> = listed
        .iter()
        .flat_map(|s| texts(&s["IncrementalRetentionSetsIdentifiers"]))
        .collect();
    if full.is_empty() && incrementals.is_empty() {
        return Err(ApiError::BadRequest(
            "retentionSetsToDelete is empty: give each set's fullRetentionSetIdentifier."
                .to_owned(),
        ));
    }
    Ok(ctx.with_world(|world, now| {
        world.delete_retention_sets(ctx.site, &full, &incrementals, now)
    })?)
}

/// `GET /v1/ltr/catalog/vms/{vmIdentifier}/retentionsets/{retentionSetIdentifier}/settings`
/// (`RetentionSetVmSettingsApi`): where the VM was, and its volumes and NIC, when the set was
/// written.
pub(crate) async fn retention_set_vm_settings(
    ctx: ViewCtx,
    Path((vm_id, set_id)): Path<(String, String)>,
) -> Result<Json<serde_json::Value>, ApiError> {
    ctx.view(|view| {
        let world = view.world;
        let (vm, set) = set_of_vm(world, ctx.site, &vm_id, &set_id, view.now)?;
        let (vm, set) = (&world.vms[vm], &world.ltr.sets[set]);
        let vpg = &world.vpgs[set.vpg];
        let recovery = world.site(vpg.recovery);
        let datastore = recovery.datastores.first().map(|d| d.id.clone());
        let volumes: Vec<serde_json::Value> = decisions::VM_VOLUMES
            .iter()
            .map(|v| serde_json::json!({"DatastoreIdentifier": datastore, "IsThin": true, "VolumeIdentifier": v}))
            .collect();
        Ok(Json(serde_json::json!({
            "LtrVmIdentifier": vm.id,
            "RepositoryIdentifier": world.ltr.repositories[set.repository].id,
            "RetentionSetIdentifier": set.id,
            "HostIdentifier": recovery.hosts.first().map(|h| h.id.clone()),
            "Volumes": volumes,
            "Nics": [{"NetworkIdentifier": recovery.network.0, "DnsSuffix": null, "Gateway": null,
                      "IsDhcp": true, "PrimaryDns": null, "SecondaryDns": null, "StaticIp": null,
                      "SubnetMask": null, "ShouldReplaceMacAddress": false}],
        })))
    })
}

/// The VM `vm_id` and the kept retention set `set_id` that holds it.
fn set_of_vm(
    world: &World,
    site: SiteRole,
    vm_id: &str,
    set_id: &str,
    now: SimTime,
) -> Result<(usize, usize), ApiError> {
    let vm = world.vm_by_id(vm_id).ok_or_else(|| {
        ApiError::NotFound(format!(
            "There is no VM '{vm_id}': list the protected VMs with GET /v1/vms."
        ))
    })?;
    let set = world
        .retention_set(site, set_id, now)
        .filter(|&s| world.ltr.sets[s].vms.contains(&vm))
        .ok_or_else(|| {
            ApiError::NotFound(format!(
                "VM {vm_id} is in no retention set '{set_id}': list its sets with GET /v1/ltr/catalog/vms/{vm_id}/retentionsets."
            ))
        })?;
    Ok((vm, set))
}

/// `POST /v1/ltr/restore/vm` (`RestoreVmApi`): the VM restored from the set as a new VM at the
/// repository's site; the task's identifier.
pub(crate) async fn restore_vm(
    ctx: ViewCtx,
    Extension(caller): Extension<Principal>,
    body: JsonBody,
) -> Result<(Extension<StartedTask>, Json<String>), ApiError> {
    let (Some(vm), Some(set)) = (
        body.text("vmIdentifier")?,
        body.text("retentionSetIdentifier")?,
    ) else {
        return Err(ApiError::BadRequest(
            "vmIdentifier and retentionSetIdentifier are required: the VM and the retention set to restore it from.".to_owned(),
        ));
    };
    let (vm, set) = (vm.to_owned(), set.to_owned());
    let task = ctx.with_world(|world, now| {
        let (vm, _) = set_of_vm(world, ctx.site, &vm, &set, now)?;
        Ok::<_, ApiError>(world.restore_from_retention_set(ctx.site, vm, &set, &caller, now)?)
    })?;
    Ok((Extension(StartedTask(task.clone())), Json(task)))
}
