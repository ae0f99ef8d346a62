//! VPGs: `GET /v1/vpgs`, `GET /v1/vpgs/{vpgIdentifier}` and the enumeration lists.

use axum::Json;
use axum::extract::Path;

use crate::enums::{
    COMMIT_POLICY, PRIORITY, RETENTION_POLICY, SHUTDOWN_POLICY, VPG_ENTITY_TYPE, VPG_STATUS,
    VPG_SUBSTATUS,
};
use crate::http::{ApiError, Params, ViewCtx};
use crate::wire::VpgView;
use crate::world::clock::SimTime;
use crate::world::{SiteRole, World};

/// The VPG filters that `GET /v1/vpgs` and `GET /v1/vms` share: the VPG's name (under `name` or
/// `vpgName`), `status`, `subStatus`, `priority`, `protectedSiteIdentifier`,
/// `recoverySiteIdentifier` and `organizationName`, with the site's visibility.
pub(crate) struct VpgFilter<'a> {
    params: &'a Params,
    name_key: &'static str,
    status: Option<u8>,
    sub_status: Option<u8>,
    priority: Option<u8>,
}

impl<'a> VpgFilter<'a> {
    /// The filters of `params`, the VPG's name given as `name_key`; 400 for an enumeration that is
    /// not valid.
    pub(crate) fn new(params: &'a Params, name_key: &'static str) -> Result<Self, ApiError> {
        Ok(VpgFilter {
            params,
            name_key,
            status: params.enumeration("status", &VPG_STATUS)?,
            sub_status: params.enumeration("subStatus", &VPG_SUBSTATUS)?,
            priority: params.enumeration("priority", &PRIORITY)?,
        })
    }

    /// Whether VPG `index` is visible from `site` and passes every filter at `now`.
    pub(crate) fn accepts(
        &self,
        world: &World,
        site: SiteRole,
        index: usize,
        now: SimTime,
    ) -> bool {
        let params = self.params;
        let vpg = &world.vpgs[index];
        vpg.visible_from(site)
            && params.matches(self.name_key, &vpg.name)
            && self
                .status
                .is_none_or(|s| s == world.shown_status(index, now))
            && self.sub_status.is_none_or(|s| s == vpg.sub_status)
            && self.priority.is_none_or(|p| p == vpg.priority)
            && params.matches("protectedSiteIdentifier", &world.site(vpg.protected).id)
            && params.matches("recoverySiteIdentifier", &world.site(vpg.recovery).id)
            && params.matches("organizationName", "")
    }
}

/// `GET /v1/vpgs`, filtered by `name`, `status`, `subStatus`, `protectedSiteIdentifier`,
/// `recoverySiteIdentifier`, `organizationName` and `priority`.
pub(crate) async fn list(ctx: ViewCtx, params: Params) -> Result<Json<Vec<VpgView>>, ApiError> {
    let filter = VpgFilter::new(&params, "name")?;
    Ok(Json(ctx.view(|view| {
        let world = view.world;
        world
            .vpgs
            .iter()
            .enumerate()
            .filter(|&(index, _)| filter.accepts(world, ctx.site, index, view.now))
            .map(|(index, _)| view.vpg(index))
            .collect()
    })))
}

/// `GET /v1/vpgs/{vpgIdentifier}`.
pub(crate) async fn one(ctx: ViewCtx, Path(id): Path<String>) -> Result<Json<VpgView>, ApiError> {
    ctx.view(|view| {
        let vpg = view.world.visible_vpg(ctx.site, &id)?;
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

/// `GET /v1/vpgs/entitytypes`.
pub(crate) async fn entity_types() -> Json<&'static [&'static str]> {
    Json(VPG_ENTITY_TYPE.names)
}

/// `GET /v1/vpgs/failovercommitpolicies`.
pub(crate) async fn commit_policies() -> Json<&'static [&'static str]> {
    Json(COMMIT_POLICY.names)
}

/// `GET /v1/vpgs/failovershutdownpolicies`.
pub(crate) async fn shutdown_policies() -> Json<&'static [&'static str]> {
    Json(SHUTDOWN_POLICY.names)
}

/// `GET /v1/vpgs/retentionpolicies`.
pub(crate) async fn retention_policies() -> Json<&'static [&'static str]> {
    Json(RETENTION_POLICY.names)
}
