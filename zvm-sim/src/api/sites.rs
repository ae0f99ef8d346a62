//! Sites: `/v1/localsite`, `/v1/peersites`, `/v1/virtualizationsites`, `/v1/serverDateTime`.

use axum::Json;
use axum::extract::{Path, State};

use crate::enums::PAIRING_STATUS;
use crate::http::{ApiError, JsonBody, Params, SiteCtx, ViewCtx};
use crate::wire::{self, LocalSiteView, NativeVmView, PeerSiteView, VirtualizationSiteView};
use crate::world::clock::SimTime;
use crate::world::{LoginBanner, SiteRole, World};

/// `GET /v1/localsite`.
pub(crate) async fn local_site(ctx: ViewCtx) -> Json<LocalSiteView> {
    Json(ctx.view(|view| view.local_site()))
}

/// `GET /v1/peersites` with `peerName` (case-sensitive, as documented), `pairingStatus`,
/// `location`, `hostName` and `port`.
pub(crate) async fn peer_sites(
    ctx: ViewCtx,
    params: Params,
) -> Result<Json<Vec<PeerSiteView>>, ApiError> {
    let pairing = params.enumeration("pairingStatus", &PAIRING_STATUS)?;
    let port = params.number::<u16>("port")?;
    let (peer, paired) = ctx.view(|view| (view.peer_site(ctx.site.other()), view.world.paired()));
    let keep = paired
        && params
            .text("peerName")
            .is_none_or(|n| n == peer.peer_site_name)
        && pairing.is_none_or(|p| p == peer.pairing_status)
        && params
            .text("location")
            .is_none_or(|l| l.eq_ignore_ascii_case(&peer.location))
        && params
            .text("hostName")
            .is_none_or(|h| h.eq_ignore_ascii_case(&peer.host_name))
        && port.is_none_or(|p| p == peer.port);
    Ok(Json(if keep { vec![peer] } else { Vec::new() }))
}

/// `GET /v1/peersites/{siteIdentifier}`.
pub(crate) async fn peer_site(
    ctx: ViewCtx,
    Path(id): Path<String>,
) -> Result<Json<PeerSiteView>, ApiError> {
    ctx.view(|view| {
        let peer = ctx.site.other();
        if view.world.paired() && view.world.site(peer).id.eq_ignore_ascii_case(&id) {
            Ok(Json(view.peer_site(peer)))
        } else {
            Err(ApiError::NotFound(format!(
                "There is no peer site '{id}' paired with site {}: list them with GET /v1/peersites.",
                view.world.site(ctx.site).name
            )))
        }
    })
}

/// `GET /v1/localsite/pairingstatuses`, `GET /v1/peersites/pairingstatuses`.
pub(crate) async fn pairing_statuses() -> Json<Vec<&'static str>> {
    Json(wire::pairing_statuses())
}

/// `GET /v1/virtualizationsites`: this site, then its peer.
pub(crate) async fn virtualization_sites(ctx: ViewCtx) -> Json<Vec<VirtualizationSiteView>> {
    Json(ctx.view(|view| {
        [ctx.site, ctx.site.other()]
            .map(|site| view.virtualization_site(site))
            .into()
    }))
}

/// `GET /v1/virtualizationsites/{siteIdentifier}`.
pub(crate) async fn virtualization_site(
    ctx: ViewCtx,
    Path(id): Path<String>,
) -> Result<Json<VirtualizationSiteView>, ApiError> {
    ctx.view(|view| {
        let site = site_by_id(view.world, &id)?;
        Ok(Json(view.virtualization_site(site)))
    })
}

/// `GET /v1/virtualizationsites/{siteIdentifier}/vms`: the VMs at that site that no VPG protects.
pub(crate) async fn unprotected_vms(
    ctx: ViewCtx,
    Path(id): Path<String>,
) -> Result<Json<Vec<NativeVmView>>, ApiError> {
    ctx.view(|view| {
        let site = site_by_id(view.world, &id)?;
        Ok(Json(
            view.world
                .vms
                .iter()
                .enumerate()
                .filter(|(_, vm)| vm.site == site && vm.vpgs.is_empty() && !vm.removed)
                .map(|(index, _)| view.native_vm(index))
                .collect(),
        ))
    })
}

/// `GET /v1/serverDateTime/serverDateTimeUtc` (and `...Local`: the sites run on UTC): the
/// simulated clock, as a JSON string.
pub(crate) async fn server_time(State(ctx): State<SiteCtx>) -> Json<SimTime> {
    Json(ctx.with_world(|_, now| now))
}

/// `GET /v1/serverDateTime/dateTimeArgument?dateTime=`: the argument as the server reads it
/// (milliseconds since 1970, a UTC time or a date), as a JSON string. SW10 makes the argument
/// optional without saying what its absence gives; the simulator answers the server's time, so a
/// client that sends none (Zerto's Python SDK) reads a time.
pub(crate) async fn date_time_argument(
    State(ctx): State<SiteCtx>,
    params: Params,
) -> Result<Json<SimTime>, ApiError> {
    match params.date("dateTime")? {
        Some(time) => Ok(Json(time)),
        None => Ok(Json(ctx.with_world(|_, now| now))),
    }
}

pub(crate) fn site_by_id(world: &World, id: &str) -> Result<SiteRole, ApiError> {
    SiteRole::BOTH
        .into_iter()
        .find(|&s| world.site(s).id.eq_ignore_ascii_case(id))
        .ok_or_else(|| {
            ApiError::NotFound(format!(
                "There is no virtualization site '{id}': list them with GET /v1/virtualizationsites."
            ))
        })
}

/// `POST /v1/localsite/billing/sendUsage`: a cloud service provider's ZVM sends its usage to
/// Zerto's billing server; the simulator has none, so nothing is sent and nothing is kept.
pub(crate) async fn send_usage() {}

/// `POST /v1/peersites` `{"hostName", "port", "token"}`: pairs this site with its peer again.
pub(crate) async fn pair(ctx: ViewCtx, body: JsonBody) -> Result<(), ApiError> {
    let host = body.text("hostName")?.unwrap_or_default().to_owned();
    let port = body
        .number("port")?
        .unwrap_or(f64::from(crate::decisions::PEER_PORT));
    let token = body.text("token")?.unwrap_or_default().to_owned();
    if port.fract() != 0.0 || !(1.0..=65535.0).contains(&port) {
        return Err(ApiError::BadRequest(format!(
            "port {port} is not a TCP port."
        )));
    }
    let port = port as u16;
    Ok(ctx.with_world(|world, now| world.pair(ctx.site, &host, port, &token, now))?)
}

/// `DELETE /v1/peersites/{siteIdentifier}` `{"isKeepTargetDisks"?}`: unpairs this site from its
/// peer (the flag is checked, not modelled: no VPG is left to keep disks of).
pub(crate) async fn unpair(
    ctx: ViewCtx,
    Path(id): Path<String>,
    body: Option<JsonBody>,
) -> Result<(), ApiError> {
    body.unwrap_or_default().boolean("isKeepTargetDisks")?;
    Ok(ctx.with_world(|world, _| world.unpair(ctx.site, &id))?)
}

/// How long a pairing token is good for.
const PAIRING_TOKEN_HOURS: i64 = 48;

/// `POST /v1/peersites/generatetoken`: a token a peer pairs with, good for 48 hours; a new one
/// replaces the last.
pub(crate) async fn generate_pairing_token(ctx: ViewCtx) -> Json<serde_json::Value> {
    let (token, until) = ctx.with_world(|world, now| {
        let token = world.new_pairing_token();
        let until = now.plus_millis(PAIRING_TOKEN_HOURS * 3_600_000);
        world.sites[ctx.site.index()].pairing_token = Some((token.clone(), until));
        (token, until)
    });
    Json(serde_json::json!({"Token": token, "UtcExpirationDate": until.to_wire()}))
}

/// `GET /v1/localsite/settings/loginBanner`.
pub(crate) async fn login_banner(ctx: ViewCtx) -> Json<serde_json::Value> {
    let banner = ctx.with_world(|world, _| world.site(ctx.site).login_banner.clone());
    Json(serde_json::json!({
        "IsLoginBannerEnabled": banner.enabled,
        "LoginBanner": banner.text,
    }))
}

/// `PUT /v1/localsite/settings/loginBanner`: `isLoginBannerEnabled` and `loginBanner`; a banner
/// turned on needs its text.
pub(crate) async fn set_login_banner(ctx: ViewCtx, body: JsonBody) -> Result<(), ApiError> {
    let enabled = body.boolean("isLoginBannerEnabled")?.unwrap_or(false);
    let text = body.text("loginBanner")?.map(str::to_owned);
    if enabled && text.as_deref().is_none_or(|t| t.trim().is_empty()) {
        return Err(ApiError::BadRequest(
            "loginBanner is required when isLoginBannerEnabled is true: send the banner's text."
                .to_owned(),
        ));
    }
    ctx.with_world(|world, _| {
        world.sites[ctx.site.index()].login_banner = LoginBanner { enabled, text };
    });
    Ok(())
}
