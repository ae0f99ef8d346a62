//! The monitoring surface: `/v1/vras` (with `/statuses`), `/v1/datastores`, `/v1/volumes`,
//! `/v1/statistics/vms` and `/v1/encryptionDetection/metrics/vms`, each answering for its own site,
//! as an appliance does.

use axum::Json;
use axum::extract::Path;

use crate::http::{ApiError, JsonBody, Params, ViewCtx, required};
use crate::wire::{
    DatastoreView, EncryptionStateView, LicenseView, PotentialVraView, ServiceProfileView,
    SiteVolumeView, VRA_STATUSES, VmEncryptionView, VmStatisticsView, VolumeEncryptionView,
    VpgEncryptionView, VraView,
};

/// `GET /v1/vras`, filtered by `vraName`, `status` (number or name), `vraVersion`, `hostVersion`,
/// `ipAddress`, `vraGroup`, `datastoreName` and `networkName` (exact, case-insensitive).
pub(crate) async fn vras(ctx: ViewCtx, params: Params) -> Json<Vec<VraView>> {
    let vras = ctx.view(|view| view.vras());
    Json(vras.into_iter().filter(|v| keeps(&params, v)).collect())
}

fn keeps(params: &Params, vra: &VraView) -> bool {
    let status_name = VRA_STATUSES
        .get(usize::from(vra.status))
        .copied()
        .unwrap_or("");
    params.matches("vraName", &vra.vra_name)
        && params
            .text("status")
            .is_none_or(|s| s == vra.status.to_string() || s.eq_ignore_ascii_case(status_name))
        && params.matches("vraVersion", vra.vra_version)
        && params.matches("hostVersion", vra.host_version)
        && params.matches("ipAddress", &vra.vra_network_data_api.address)
        && params.matches("vraGroup", &vra.vra_group)
        && params.matches("datastoreName", &vra.datastore_name)
        && params.matches("networkName", &vra.network_name)
}

/// `GET /v1/vras/{vraIdentifier}`.
pub(crate) async fn vra(ctx: ViewCtx, Path(id): Path<String>) -> Result<Json<VraView>, ApiError> {
    let vras = ctx.view(|view| view.vras());
    vras.into_iter()
        .find(|v| v.vra_identifier_str == id)
        .map(Json)
        .ok_or_else(|| {
            ApiError::NotFound(format!(
                "There is no VRA '{id}' at this site: list them with GET /v1/vras."
            ))
        })
}

/// `GET /v1/vras/ipconfigurationtypes`.
pub(crate) async fn vra_ip_configuration_types() -> Json<[&'static str; 2]> {
    Json(["Dhcp", "Static"])
}

/// `GET /v1/vras/{vraIdentifier}/changerecoveryvra/potentials`: the other hosts of the VRA's
/// site, whose VRAs could take over what it recovers.
pub(crate) async fn potential_recovery_vras(
    ctx: ViewCtx,
    Path(id): Path<String>,
) -> Result<Json<Vec<PotentialVraView>>, ApiError> {
    let Json(vra) = vra(ctx.clone(), Path(id)).await?;
    let vras = ctx.view(|view| view.vras());
    Ok(Json(
        vras.into_iter()
            .filter(|v| v.host_identifier != vra.host_identifier)
            .map(|v| PotentialVraView {
                host_identifier: v.host_identifier,
                host_name: v.host_display_name,
            })
            .collect(),
    ))
}

/// `GET /v1/vras/statuses`.
pub(crate) async fn vra_statuses() -> Json<Vec<&'static str>> {
    Json(VRA_STATUSES.to_vec())
}

/// `GET /v1/datastores`: the datastores of this site.
pub(crate) async fn datastores(ctx: ViewCtx) -> Json<Vec<DatastoreView>> {
    Json(ctx.view(|view| view.datastores()))
}

/// `GET /v1/datastores/{datastoreIdentifier}`.
pub(crate) async fn datastore(
    ctx: ViewCtx,
    Path(id): Path<String>,
) -> Result<Json<DatastoreView>, ApiError> {
    ctx.view(|view| view.datastores())
        .into_iter()
        .find(|d| d.datastore_identifier.eq_ignore_ascii_case(&id))
        .map(Json)
        .ok_or_else(|| {
            ApiError::NotFound(format!(
                "There is no datastore '{id}' at this site: list them with GET /v1/datastores."
            ))
        })
}

/// `GET /v1/volumes`, filtered by `volumeType`, `vpgIdentifier`, `datastoreIdentifier`,
/// `protectedVmIdentifier` and `owningVmIdentifier` (exact, case-insensitive).
pub(crate) async fn volumes(ctx: ViewCtx, params: Params) -> Json<Vec<SiteVolumeView>> {
    let volumes = ctx.view(|view| view.volumes());
    let named = |key: &str, v: &Option<crate::wire::NamedView>| {
        params.text(key).is_none_or(|want| {
            v.as_ref()
                .is_some_and(|v| v.identifier.eq_ignore_ascii_case(want))
        })
    };
    Json(
        volumes
            .into_iter()
            .filter(|v| {
                params.matches("volumeType", v.volume_type)
                    && named("vpgIdentifier", &v.vpg)
                    && named("protectedVmIdentifier", &v.protected_vm)
                    && params.matches("datastoreIdentifier", &v.datastore.identifier)
                    && params.matches("owningVmIdentifier", &v.owning_vm.identifier)
            })
            .collect(),
    )
}

/// `GET /v1/statistics/vms`.
pub(crate) async fn vm_statistics(ctx: ViewCtx) -> Json<Vec<VmStatisticsView>> {
    Json(ctx.view(|view| view.vm_statistics()))
}

/// `GET /v1/encryptionDetection/metrics/vms`.
pub(crate) async fn vm_encryption(ctx: ViewCtx) -> Json<Vec<VmEncryptionView>> {
    Json(ctx.view(|view| view.vm_encryption()))
}

/// `GET /v1/license`.
pub(crate) async fn license(ctx: ViewCtx) -> Json<LicenseView> {
    Json(ctx.view(|view| view.license()))
}

/// `GET /v1/encryptionDetection/metrics/volumes`.
pub(crate) async fn volume_encryption(ctx: ViewCtx) -> Json<Vec<VolumeEncryptionView>> {
    Json(ctx.view(|view| view.volume_encryption()))
}

/// `GET /v1/encryptionDetection/metrics/vpgs`.
pub(crate) async fn vpg_encryption(ctx: ViewCtx) -> Json<Vec<VpgEncryptionView>> {
    Json(ctx.view(|view| view.vpg_encryption()))
}

/// `GET /v1/encryptionDetection/suspected/{vms,volumes,vpgs}`: the simulator models no
/// encryption attack, so nothing is suspected.
pub(crate) async fn nothing_suspected() -> Json<Vec<()>> {
    Json(Vec::new())
}

/// `GET /v1/encryptionDetection/state`.
pub(crate) async fn encryption_state(ctx: ViewCtx) -> Json<EncryptionStateView> {
    let off = ctx.with_world(|world, _| world.site(ctx.site).encryption_detection_off);
    Json(EncryptionStateView {
        encryption_detection_enabled: !off,
    })
}

/// `POST /v1/encryptionDetection/state` `{"encryptionDetectionEnabled"}`, or, without a body,
/// `?encryptionDetectionEnabled=`, as zvma10-api-wrapper sends it.
pub(crate) async fn set_encryption_state(
    ctx: ViewCtx,
    params: Params,
    body: Option<JsonBody>,
) -> Result<(), ApiError> {
    let given = match &body {
        Some(body) => body.boolean("encryptionDetectionEnabled")?,
        None => params.boolean("encryptionDetectionEnabled")?,
    };
    let enabled = required(
        given,
        "encryptionDetectionEnabled",
        "send {\"encryptionDetectionEnabled\": true} or false",
    )?;
    ctx.with_world(|world, _| world.sites[ctx.site.index()].encryption_detection_off = !enabled);
    Ok(())
}

/// `POST /v1/encryptionDetection/dismissEvent` `{"vpgIdentifiers": [...]}`: each VPG must be one
/// this site sees; nothing is suspected, so there is nothing else to clear.
pub(crate) async fn dismiss_encryption_event(ctx: ViewCtx, body: JsonBody) -> Result<(), ApiError> {
    let vpgs = required(
        body.string_list("vpgIdentifiers")?
            .filter(|vpgs| !vpgs.is_empty()),
        "vpgIdentifiers",
        "the VPGs whose encryption event to dismiss",
    )?;
    ctx.with_world(|world, _| {
        vpgs.iter()
            .try_for_each(|vpg| world.visible_vpg(ctx.site, vpg).map(|_| ()))
    })?;
    Ok(())
}

/// `PUT /v1/license` `{"licenseKey"}`: the site's license from now on.
pub(crate) async fn set_license(ctx: ViewCtx, body: JsonBody) -> Result<(), ApiError> {
    let key = body.required_text("licenseKey")?.trim().to_owned();
    ctx.with_world(|world, _| world.sites[ctx.site.index()].license_key = Some(key));
    Ok(())
}

/// `DELETE /v1/license`: the site has no license (`Details` null) until one is put.
pub(crate) async fn delete_license(ctx: ViewCtx) -> Result<(), ApiError> {
    let had = ctx.with_world(|world, _| world.sites[ctx.site.index()].license_key.take());
    match had {
        Some(_) => Ok(()),
        None => Err(ApiError::NotFound(
            "This site has no license to delete: PUT /v1/license adds one.".to_owned(),
        )),
    }
}

/// `POST /v1/zsspsessions`: refused, as a site without a Zerto Cloud Manager refuses it.
pub(crate) async fn zssp_session_without_zcm() -> ApiError {
    ApiError::BadRequest(
        "A ZSSP session needs a Zerto Cloud Manager, and this site has none.".to_owned(),
    )
}

/// `GET /v1/serviceprofiles`, filtered by `siteIdentifier` (either site of the pair).
pub(crate) async fn service_profiles(
    ctx: ViewCtx,
    params: Params,
) -> Json<Vec<ServiceProfileView>> {
    Json(ctx.view(|view| {
        let known = params.text("siteIdentifier").is_none_or(|id| {
            view.world
                .sites
                .iter()
                .any(|s| s.id.eq_ignore_ascii_case(id))
        });
        if known {
            view.service_profiles()
        } else {
            Vec::new()
        }
    }))
}

/// `GET /v1/serviceprofiles/{serviceProfileIdentifier}`.
pub(crate) async fn service_profile(
    ctx: ViewCtx,
    Path(id): Path<String>,
) -> Result<Json<ServiceProfileView>, ApiError> {
    ctx.view(|view| view.service_profiles())
        .into_iter()
        .find(|p| p.service_profile_identifier.eq_ignore_ascii_case(&id))
        .map(Json)
        .ok_or_else(|| {
            ApiError::NotFound(format!(
                "There is no service profile '{id}': list them with GET /v1/serviceprofiles."
            ))
        })
}

/// `GET /v1/zorgs` and `/v1/zsspsessions`: a ZVM without Zerto Cloud Manager has no ZORG, and so
/// no self-service portal session.
pub(crate) async fn none_without_zcm() -> Json<Vec<()>> {
    Json(Vec::new())
}

/// `GET /v1/zorgs/{zorgIdentifier}` and `/v1/zsspsessions/{id}`.
pub(crate) async fn no_zcm_entity(Path(id): Path<String>) -> ApiError {
    ApiError::NotFound(format!(
        "There is no ZORG or ZSSP session '{id}': this site has no Zerto Cloud Manager."
    ))
}
