//! Extended Journal Copy (`/v1/ltr/...`): repositories, manual runs from a checkpoint
//! (`retentionstart`, `retentionabort`), the catalogue of retention sets and each VPG's health.
//! Each ZVM lists its own site's repositories, and the retention sets and health of the VPGs it
//! sees. The model and its rules are in `world::ltr`.

use axum::Json;
use axum::extract::{Extension, Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;

use crate::api::call_log::StartedTask;
use crate::api::{ApiError, JsonBody, Params, SiteCtx, ViewCtx};
use crate::decisions;
use crate::wire::{
    NamedEntityView, RecoverableVmView, RecoverableVmsView, RepositoryView, RetentionSetsInfoView,
    RetentionSetsView, SiteRepositoryView, VpgsLtrHealthView,
};
use crate::world::auth::Principal;

/// `GET /v1/ltr/repositories?connectionType=&repositoryName=`: this site's repositories.
pub(crate) async fn repositories(ctx: ViewCtx, params: Params) -> Json<Vec<RepositoryView>> {
    Json(ctx.view(|view| {
        (0..view.world.ltr.repositories.len())
            .filter(|&r| view.world.ltr.repositories[r].site == ctx.site)
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
            .position(|r| r.site == ctx.site && r.id.eq_ignore_ascii_case(&id))
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
                .filter(|&r| view.world.ltr.repositories[r].site == site)
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
