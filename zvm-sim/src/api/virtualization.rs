//! A virtualization site's inventory: `/v1/virtualizationsites/{siteIdentifier}/hosts` (and one
//! host), `hostclusters`, `datastores`, `datastoreclusters`, `networks`, `folders`,
//! `resourcepools` and `devices`, for the answering site and its peer, as a ZVM reads both from
//! their vCenters. A vSphere site has no repositories, vCD vApps or org vDCs, and no public-cloud
//! resources: those lists are empty.

use axum::Json;
use axum::extract::Path;
use serde::Serialize;

use crate::api::sites::site_by_id;
use crate::http::{ApiError, Params, ViewCtx};
use crate::wire::{DeviceView, HostView, SiteView};
use crate::world::SiteRole;

/// Answers with `list` of the site the path names, or 404 naming it.
fn of_site<T: Serialize>(
    ctx: &ViewCtx,
    id: &str,
    list: impl FnOnce(&SiteView<'_>, SiteRole) -> T,
) -> Result<Json<T>, ApiError> {
    ctx.view(|view| {
        let site = site_by_id(view.world, id)?;
        Ok(Json(list(view, site)))
    })
}

/// `GET .../hosts`.
pub(crate) async fn hosts(
    ctx: ViewCtx,
    Path(id): Path<String>,
) -> Result<Json<Vec<HostView>>, ApiError> {
    of_site(&ctx, &id, |view, site| view.hosts(site))
}

/// `GET .../hosts/{hostIdentifier}`.
pub(crate) async fn host(
    ctx: ViewCtx,
    Path((id, host)): Path<(String, String)>,
) -> Result<Json<HostView>, ApiError> {
    let Json(hosts) = of_site(&ctx, &id, |view, site| view.hosts(site))?;
    hosts
        .into_iter()
        .find(|h| h.host_identifier.eq_ignore_ascii_case(&host))
        .map(Json)
        .ok_or_else(|| {
            ApiError::NotFound(format!(
                "There is no host '{host}' at site '{id}': list them with GET \
                 /v1/virtualizationsites/{id}/hosts."
            ))
        })
}

/// `GET .../hostclusters`.
pub(crate) async fn host_clusters(
    ctx: ViewCtx,
    Path(id): Path<String>,
) -> Result<impl axum::response::IntoResponse, ApiError> {
    of_site(&ctx, &id, |view, site| view.host_clusters(site))
}

/// `GET .../datastores`.
pub(crate) async fn datastores(
    ctx: ViewCtx,
    Path(id): Path<String>,
) -> Result<impl axum::response::IntoResponse, ApiError> {
    of_site(&ctx, &id, |view, site| view.native_datastores(site))
}

/// `GET .../networks`.
pub(crate) async fn networks(
    ctx: ViewCtx,
    Path(id): Path<String>,
) -> Result<impl axum::response::IntoResponse, ApiError> {
    of_site(&ctx, &id, |view, site| view.networks(site))
}

/// `GET .../folders`.
pub(crate) async fn folders(
    ctx: ViewCtx,
    Path(id): Path<String>,
) -> Result<impl axum::response::IntoResponse, ApiError> {
    of_site(&ctx, &id, |view, site| view.folders(site))
}

/// `GET .../resourcepools`.
pub(crate) async fn resource_pools(
    ctx: ViewCtx,
    Path(id): Path<String>,
) -> Result<impl axum::response::IntoResponse, ApiError> {
    of_site(&ctx, &id, |view, site| view.resource_pools(site))
}

/// `GET .../devices`, filtered by `hostIdentifier` (a host that sees it) and `deviceName`.
pub(crate) async fn devices(
    ctx: ViewCtx,
    Path(id): Path<String>,
    params: Params,
) -> Result<Json<Vec<DeviceView>>, ApiError> {
    let Json(devices) = of_site(&ctx, &id, |view, site| view.devices(site))?;
    Ok(Json(
        devices
            .into_iter()
            .filter(|d| {
                params.matches("deviceName", &d.device_name)
                    && params.text("hostIdentifier").is_none_or(|host| {
                        d.host_identifiers
                            .iter()
                            .any(|h| h.eq_ignore_ascii_case(host))
                    })
            })
            .collect(),
    ))
}

/// `GET .../datastoreclusters`, `repositories`, `vcdvapps` and `orgvdcs`: what a vSphere site
/// without them has none of.
pub(crate) async fn none_at_vsphere_site(
    ctx: ViewCtx,
    Path(id): Path<String>,
) -> Result<Json<Vec<()>>, ApiError> {
    of_site(&ctx, &id, |_, _| Vec::new())
}

/// `GET .../orgvdcs/{orgVdcIdentifier}/networks` and `.../storagepolicies`: a vSphere site has no
/// organization VDC, so none of that identifier.
pub(crate) async fn no_org_vdc(
    ctx: ViewCtx,
    Path((id, org_vdc)): Path<(String, String)>,
) -> Result<Json<Vec<()>>, ApiError> {
    ctx.view(|view| {
        let site = site_by_id(view.world, &id)?;
        Err(ApiError::NotFound(format!(
            "There is no organization VDC '{org_vdc}' at site {}: it is a vSphere site, and GET /v1/virtualizationsites/{id}/orgvdcs lists none.",
            view.world.site(site).name
        )))
    })
}

/// `GET .../publiccloud/encryptionkeys/{encryptionKeyId}`: a vSphere site has no key vault.
pub(crate) async fn no_encryption_key(
    ctx: ViewCtx,
    Path((id, key)): Path<(String, String)>,
) -> Result<Json<()>, ApiError> {
    ctx.view(|view| {
        let site = site_by_id(view.world, &id)?;
        Err(ApiError::NotFound(format!(
            "There is no encryption key '{key}' at site {}: it is a vSphere site, with no public-cloud key vault.",
            view.world.site(site).name
        )))
    })
}

/// `GET /v1/vcd/vmsWithoutMorefId` and `/v1/vcd/validOrgVdcs`: no vCloud Director is managed here.
pub(crate) async fn no_vcd() -> Json<Vec<()>> {
    Json(Vec::new())
}

/// `GET .../publiccloud/{resource}`: a vSphere site has no public-cloud resources.
pub(crate) async fn no_public_cloud(
    ctx: ViewCtx,
    Path((id, _resource)): Path<(String, String)>,
) -> Result<Json<Vec<()>>, ApiError> {
    of_site(&ctx, &id, |_, _| Vec::new())
}
