//! VPGs: `GET /v1/vpgs`, `GET /v1/vpgs/{vpgIdentifier}` and the enumeration lists.

use axum::Json;
use axum::extract::{Path, State};

use crate::api::{ApiError, BaseUrl, Params, SiteCtx};
use crate::wire::VpgView;
use crate::world::enums::{PRIORITY, VPG_STATUS, VPG_SUBSTATUS};
use crate::world::{SiteRole, World};

/// A VPG visible from `site` (its protected or its recovery site), or 404.
pub(crate) fn visible_vpg(world: &World, site: SiteRole, id: &str) -> Result<usize, ApiError> {
    Ok(world.visible_vpg(site, id)?)
}

/// `GET /v1/vpgs`, filtered by `name`, `status`, `subStatus`, `protectedSiteIdentifier`,
/// `recoverySiteIdentifier`, `organizationName` and `priority`.
pub(crate) async fn list(
    State(ctx): State<SiteCtx>,
    base: BaseUrl,
    params: Params,
) -> Result<Json<Vec<VpgView>>, ApiError> {
    let status = params.enumeration("status", &VPG_STATUS)?;
    let sub_status = params.enumeration("subStatus", &VPG_SUBSTATUS)?;
    let priority = params.enumeration("priority", &PRIORITY)?;
    let matches = |filter: &str, value: &str| {
        params
            .text(filter)
            .is_none_or(|wanted| wanted.eq_ignore_ascii_case(value))
    };
    Ok(Json(ctx.with_view(&base, |view| {
        let world = view.world;
        world
            .vpgs
            .iter()
            .enumerate()
            .filter(|(_, vpg)| {
                vpg.visible_from(ctx.site)
                    && matches("name", &vpg.name)
                    && status.is_none_or(|s| s == vpg.status)
                    && sub_status.is_none_or(|s| s == vpg.sub_status)
                    && priority.is_none_or(|p| p == vpg.priority)
                    && matches("protectedSiteIdentifier", &world.site(vpg.protected).id)
                    && matches("recoverySiteIdentifier", &world.site(vpg.recovery).id)
                    && matches("organizationName", "")
            })
            .map(|(index, _)| view.vpg(index))
            .collect()
    })))
}

/// `GET /v1/vpgs/{vpgIdentifier}`.
pub(crate) async fn one(
    State(ctx): State<SiteCtx>,
    base: BaseUrl,
    Path(id): Path<String>,
) -> Result<Json<VpgView>, ApiError> {
    ctx.with_view(&base, |view| {
        let vpg = visible_vpg(view.world, ctx.site, &id)?;
        Ok(Json(view.vpg(vpg)))
    })
}

/// `GET /v1/vpgs/statuses`.
pub(crate) async fn statuses() -> Json<&'static [&'static str]> {
    Json(VPG_STATUS.names)
}

/// `GET /v1/vpgs/substatuses`.
pub(crate) async fn substatuses() -> Json<&'static [&'static str]> {
    Json(VPG_SUBSTATUS.names)
}

/// `GET /v1/vpgs/priorities`.
pub(crate) async fn priorities() -> Json<&'static [&'static str]> {
    Json(PRIORITY.names)
}
