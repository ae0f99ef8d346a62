//! The monitoring surface: `/v1/vras` (with `/statuses`) and `/v1/datastores`, each answering for
//! its own site, as an appliance does.

use axum::Json;
use axum::extract::Path;

use crate::api::{ApiError, Params, ViewCtx};
use crate::wire::{DatastoreView, VRA_STATUSES, VraView};

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
        && params.matches("vraGroup", vra.vra_group)
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

/// `GET /v1/vras/statuses`.
pub(crate) async fn vra_statuses() -> Json<Vec<&'static str>> {
    Json(VRA_STATUSES.to_vec())
}

/// `GET /v1/datastores`: the datastores of this site.
pub(crate) async fn datastores(ctx: ViewCtx) -> Json<Vec<DatastoreView>> {
    Json(vec![ctx.view(|view| view.datastore())])
}

/// `GET /v1/datastores/{datastoreIdentifier}`.
pub(crate) async fn datastore(
    ctx: ViewCtx,
    Path(id): Path<String>,
) -> Result<Json<DatastoreView>, ApiError> {
    let datastore = ctx.view(|view| view.datastore());
    if datastore.datastore_identifier.eq_ignore_ascii_case(&id) {
        Ok(Json(datastore))
    } else {
        Err(ApiError::NotFound(format!(
            "There is no datastore '{id}' at this site: list them with GET /v1/datastores."
        )))
    }
}
