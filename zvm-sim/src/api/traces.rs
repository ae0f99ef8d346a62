//! Alerts (`/v1/alerts`, with dismiss and undismiss), events (`/v1/events`) and recovery reports
//! (`/v1/reports/recovery`), each site listing those of the VPGs it sees. Filters are taken as
//! SW10 names them, case-insensitively; an enumeration by number or name; an unknown query key is
//! ignored, as ASP.NET ignores it.

use axum::Json;
use axum::extract::Path;
use axum::http::StatusCode;

use crate::decisions::EVENTS_LISTED;
use crate::enums::{ALERT_ENTITY, ALERT_LEVEL, EVENT_CATEGORY, EVENT_ENTITY, EVENT_TYPE};
use crate::http::{ApiError, Params, ViewCtx};
use crate::wire::{
    AlertView, EventView, RecoveryReportView, ResourceReportView, SiteView, report_status,
};
use crate::world::clock::SimTime;
use crate::world::traces::{Alert, Trace, alert_rules};

/// The most a page of recovery reports holds (`pageSize`).
const REPORT_PAGE_MAX: usize = 1_000;

/// `startDate`/`endDate` (or `startTime`/`endTime`): whether `at` is within them.
fn within(params: &Params, from: &str, to: &str, at: SimTime) -> Result<bool, ApiError> {
    Ok(params.date(from)?.is_none_or(|f| at >= f) && params.date(to)?.is_none_or(|t| at <= t))
}

/// `GET /v1/alerts`, filtered by `startDate`, `endDate` (on `TurnedOn`), `vpgIdentifier`,
/// `zorgIdentifier`, `siteIdentifier`, `level`, `entity`, `helpIdentifier` and `isDismissed`.
pub(crate) async fn alerts(ctx: ViewCtx, params: Params) -> Result<Json<Vec<AlertView>>, ApiError> {
    let level = params.enumeration("level", &ALERT_LEVEL)?;
    let entity = params.enumeration("entity", &ALERT_ENTITY)?;
    let dismissed = params.boolean("isDismissed")?;
    ctx.view(|view| {
        let mut kept = Vec::new();
        let of_vpg = params
            .text("vpgIdentifier")
            .map(|id| view.world.vpg_by_id(id));
        let alerts = match of_vpg {
            // A VPG no site knows has no alert.
            Some(None) => Vec::new(),
            Some(Some(vpg)) => {
                let mut alerts = view.world.alerts_of(std::iter::once(vpg), view.now);
                alerts.retain(|alert| view.sees_vpg(alert.vpg));
                alerts
            }
            None => site_alerts(view),
        };
        for alert in alerts {
            let shown = view.alert(&alert);
            let keep = within(&params, "startDate", "endDate", alert.on)?
                && level.is_none_or(|l| ALERT_LEVEL.name(l) == shown.level)
                && entity.is_none_or(|e| ALERT_ENTITY.name(e) == shown.entity)
                && dismissed.is_none_or(|d| d == shown.is_dismissed)
                && params.matches("helpIdentifier", shown.help_identifier)
                && params.matches("siteIdentifier", &shown.site.identifier)
                && params.matches("vpgIdentifier", &shown.affected_vpgs[0].identifier)
                && params.text("zorgIdentifier").is_none();
            if keep {
                kept.push(shown);
            }
        }
        Ok(Json(kept))
    })
}

fn site_alerts(view: &SiteView<'_>) -> Vec<Alert> {
    let mut alerts = view.world.alerts_on(view.now);
    alerts.retain(|alert| view.sees_vpg(alert.vpg));
    alerts
}

fn no_alert(id: &str) -> ApiError {
    ApiError::NotFound(format!(
        "There is no alert '{id}' at this site: list the alerts on now with GET /v1/alerts."
    ))
}

/// `GET /v1/alerts/{alertIdentifier}`.
pub(crate) async fn alert(
    ctx: ViewCtx,
    Path(id): Path<String>,
) -> Result<Json<AlertView>, ApiError> {
    ctx.view(|view| {
        site_alerts(view)
            .iter()
            .find(|alert| alert.id.eq_ignore_ascii_case(&id))
            .map(|alert| Json(view.alert(alert)))
            .ok_or_else(|| no_alert(&id))
    })
}

/// `POST /v1/alerts/{alertIdentifier}/dismiss`.
pub(crate) async fn dismiss(ctx: ViewCtx, Path(id): Path<String>) -> Result<StatusCode, ApiError> {
    set_dismissed(&ctx, &id, true)
}

/// `POST /v1/alerts/{alertIdentifier}/undismiss`.
pub(crate) async fn undismiss(
    ctx: ViewCtx,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    set_dismissed(&ctx, &id, false)
}

fn set_dismissed(ctx: &ViewCtx, id: &str, dismissed: bool) -> Result<StatusCode, ApiError> {
    let site = ctx.site;
    ctx.with_world(|world, now| {
        if world.set_dismissed(site, id, dismissed, now) {
            Ok(StatusCode::OK)
        } else {
            Err(no_alert(id))
        }
    })
}

/// `GET /v1/alerts/levels`.
pub(crate) async fn alert_levels() -> Json<&'static [&'static str]> {
    Json(ALERT_LEVEL.names)
}

/// `GET /v1/alerts/entities`.
pub(crate) async fn alert_entities() -> Json<&'static [&'static str]> {
    Json(ALERT_ENTITY.names)
}

/// `GET /v1/alerts/helpidentifiers`: those of the alerts the simulator raises.
pub(crate) async fn alert_help_identifiers() -> Json<Vec<&'static str>> {
    Json(alert_rules().map(|rule| rule.help).collect())
}

/// `GET /v1/events`: the most recent [`EVENTS_LISTED`] events of the VPGs this site sees, oldest
/// first, filtered by `startDate`, `endDate`, `vpg` (a name) or `vpgIdentifier`, `siteName` or
/// `siteIdentifier` (a site the event relates to), `zorgIdentifier`, `eventType`, `entityType`,
/// `category` or `eventCategory`, `userName` and `alertIdentifier`.
pub(crate) async fn events(ctx: ViewCtx, params: Params) -> Result<Json<Vec<EventView>>, ApiError> {
    let kind = params.enumeration("eventType", &EVENT_TYPE)?;
    let entity = params.enumeration("entityType", &EVENT_ENTITY)?;
    let category = match params.text("category") {
        Some(_) => params.enumeration("category", &EVENT_CATEGORY)?,
        None => params.enumeration("eventCategory", &EVENT_CATEGORY)?,
    };
    ctx.view(|view| {
        let mut kept = Vec::new();
        for event in site_events(view) {
            let shown = view.event(&event);
            let keep = within(&params, "startDate", "endDate", event.at)?
                && kind.is_none_or(|k| k == event.kind)
                && entity.is_none_or(|e| e == shown.entity_type)
                && category
                    .is_none_or(|c| c == 0 || EVENT_CATEGORY.name(c) == shown.event_category)
                && keeps_event(&params, view, &event, &shown);
            if keep {
                kept.push(shown);
            }
        }
        let skip = kept.len().saturating_sub(EVENTS_LISTED);
        kept.drain(..skip);
        Ok(Json(kept))
    })
}

/// The filters on what an event names: its VPG, sites, user and alert.
fn keeps_event(params: &Params, view: &SiteView<'_>, event: &Trace, shown: &EventView) -> bool {
    let vpg = &view.world.vpgs[event.vpg];
    let related = &shown.related_entities;
    let site_named = |name: &str| {
        related.sites.iter().any(|link| {
            let site = view.world.sites.iter().find(|s| s.id == link.identifier);
            site.is_some_and(|s| s.name.eq_ignore_ascii_case(name))
        })
    };
    params.matches("vpg", &vpg.name)
        && params.matches("vpgIdentifier", &vpg.id)
        && params.text("siteName").is_none_or(site_named)
        && params.text("siteIdentifier").is_none_or(|id| {
            related
                .sites
                .iter()
                .any(|link| link.identifier.eq_ignore_ascii_case(id))
        })
        && params.text("zorgIdentifier").is_none()
        && params.matches("userName", &event.user)
        && params.text("alertIdentifier").is_none_or(|id| {
            event
                .alert
                .as_deref()
                .is_some_and(|a| a.eq_ignore_ascii_case(id))
        })
}

fn site_events(view: &SiteView<'_>) -> Vec<Trace> {
    let mut events = view.world.events(view.now);
    events.retain(|event| view.sees_vpg(event.vpg));
    events
}

/// `GET /v1/events/{eventIdentifier}`.
pub(crate) async fn event(
    ctx: ViewCtx,
    Path(id): Path<String>,
) -> Result<Json<EventView>, ApiError> {
    ctx.view(|view| {
        site_events(view)
            .iter()
            .find(|event| event.id.eq_ignore_ascii_case(&id))
            .map(|event| Json(view.event(event)))
            .ok_or_else(|| {
                ApiError::NotFound(format!(
                    "There is no event '{id}' at this site: list the events with GET /v1/events."
                ))
            })
    })
}

/// `GET /v1/events/types`.
pub(crate) async fn event_types() -> Json<&'static [&'static str]> {
    Json(EVENT_TYPE.names)
}

/// `GET /v1/events/entities`.
pub(crate) async fn event_entities() -> Json<&'static [&'static str]> {
    Json(EVENT_ENTITY.names)
}

/// `GET /v1/events/categories`.
pub(crate) async fn event_categories() -> Json<&'static [&'static str]> {
    Json(EVENT_CATEGORY.names)
}

/// `GET /v1/reports/recovery`: one page (`pageNumber` from 1, `pageSize` up to 1000) of the
/// reports of the VPGs this site sees, filtered by `startTime`, `endTime`, `vpgName` (a comma
/// list), `recoveryType` (`Failover`, `FailoverTest`, `Move`) and `state` (`Success`, `Fail`).
pub(crate) async fn recovery_reports(
    ctx: ViewCtx,
    params: Params,
) -> Result<Json<Vec<RecoveryReportView>>, ApiError> {
    let page = params.number::<usize>("pageNumber")?.unwrap_or(1);
    let size = params
        .number::<usize>("pageSize")?
        .unwrap_or(REPORT_PAGE_MAX);
    if page == 0 || size == 0 || size > REPORT_PAGE_MAX {
        return Err(ApiError::BadRequest(format!(
            "pageNumber counts from 1 and pageSize from 1 to {REPORT_PAGE_MAX}."
        )));
    }
    ctx.view(|view| {
        let mut kept = Vec::new();
        for report in &view.world.traces.reports {
            let vpg = &view.world.vpgs[report.vpg];
            let keep = view.sees_vpg(report.vpg)
                && within(&params, "startTime", "endTime", report.started)?
                && params.text("vpgName").is_none_or(|names| {
                    names
                        .split(',')
                        .any(|n| n.trim().eq_ignore_ascii_case(&vpg.name))
                })
                && params.matches("recoveryType", &report.kind)
                && params.matches("state", report_status(report.succeeded));
            if keep {
                kept.push(report);
            }
        }
        Ok(Json(
            kept.into_iter()
                .skip((page - 1) * size)
                .take(size)
                .map(|report| view.recovery_report(report))
                .collect(),
        ))
    })
}

/// `GET /v1/reports/recovery/{recoveryOperationIdentifier}`.
pub(crate) async fn recovery_report(
    ctx: ViewCtx,
    Path(id): Path<String>,
) -> Result<Json<RecoveryReportView>, ApiError> {
    ctx.view(|view| {
        view.world
            .traces
            .reports
            .iter()
            .find(|r| r.id.eq_ignore_ascii_case(&id) && view.sees_vpg(r.vpg))
            .map(|report| Json(view.recovery_report(report)))
            .ok_or_else(|| {
                ApiError::NotFound(format!(
                    "There is no recovery report '{id}' at this site: list them with GET \
                     /v1/reports/recovery."
                ))
            })
    })
}

/// `GET /v1/reports/resources`: the resources of every VM in every VPG this site sees, sampled on
/// the hour (the latest sample only), one page at a time (`pageNumber`, `pageSize`), filtered by
/// `startTime`, `endTime`, `vpgName`, `vmName` and the site, cluster and host names of either
/// side. The ZORG and vCD filters match nothing: a vSphere site without ZCM has none.
pub(crate) async fn resource_reports(
    ctx: ViewCtx,
    params: Params,
) -> Result<Json<Vec<ResourceReportView>>, ApiError> {
    let page = params.number::<usize>("pageNumber")?.unwrap_or(1).max(1);
    let size = params
        .number::<usize>("pageSize")?
        .unwrap_or(REPORT_PAGE_MAX)
        .clamp(1, REPORT_PAGE_MAX);
    ctx.view(|view| {
        let sample =
            SimTime::from_millis(view.now.millis() - view.now.millis().rem_euclid(3_600_000));
        if !within(&params, "startTime", "endTime", sample)?
            || NONE_AT_VSPHERE.iter().any(|k| params.text(k).is_some())
        {
            return Ok(Json(Vec::new()));
        }
        let reports = view
            .world
            .vpgs
            .iter()
            .enumerate()
            .filter(|(vpg, _)| view.sees_vpg(*vpg))
            .flat_map(|(vpg, v)| v.vms.iter().map(move |&vm| (vpg, vm)))
            .map(|(vpg, vm)| view.resource_report(vm, vpg, sample))
            .filter(|r| keeps_resources(&params, r))
            .skip((page - 1) * size)
            .take(size)
            .collect();
        Ok(Json(reports))
    })
}

/// Resource-report filters on what a vSphere site without ZCM does not have.
const NONE_AT_VSPHERE: [&str; 5] = [
    "zorgName",
    "protectedOrgVdc",
    "protectedVcdOrg",
    "recoveryOrgVdc",
    "recoveryVcdOrg",
];

fn keeps_resources(params: &Params, report: &ResourceReportView) -> bool {
    let (protected, recovery) = (&report.protected_site, &report.recovery_site);
    params.matches("vpgName", &report.vpg.vpg_name)
        && params.matches("vmName", &protected.vm_info.vm_name)
        && params.matches("protectedSiteName", &protected.site_name)
        && params.matches("protectedClusterName", &protected.compute.cluster_name)
        && params.matches("protectedHostName", &protected.compute.host_name)
        && params.matches("recoverySiteName", &recovery.site_name)
        && params.matches(
            "recoveryClusterName",
            &recovery.compute.placement.cluster_name,
        )
        && params.matches("recoveryHostName", &recovery.compute.placement.host_name)
}
