//! Protected VMs: `GET /v1/vms` (one row per VM × VPG), `GET /v1/vms/{vmIdentifier}`, and its
//! points in time (`/pointsInTime`, `/pointsInTime/stats`).

use axum::Json;
use axum::extract::Path;

use crate::api::vpgs::VpgFilter;
use crate::decisions;
use crate::http::extract::DateWindow;
use crate::http::{ApiError, Params, ViewCtx};
use crate::wire::{
    CanMountView, CheckpointView, PointInTimeView, PointsInTimeStatsView, SiteView, VmView,
};
use crate::world::clock::SimTime;
use crate::world::journal::Checkpoint;
use crate::world::ltr::RetentionSet;
use crate::world::{SiteRole, World};

/// `GET /v1/vms`, filtered by `vpgName`, `vmName`, `status`, `subStatus`,
/// `protectedSiteIdentifier`, `recoverySiteIdentifier`, `organizationName`, `priority` and
/// `vmIdentifier`. Names and identifiers match case-insensitively and exactly.
pub(crate) async fn list(ctx: ViewCtx, params: Params) -> Result<Json<Vec<VmView>>, ApiError> {
    let filter = VpgFilter::new(&params, "vpgName")?;
    // Accepted and checked, with nothing to include: the simulator has no backup or mounted VMs.
    params.boolean("includeBackupedVms")?;
    params.boolean("includeMountedVms")?;
    Ok(Json(ctx.view(|view| {
        let world = view.world;
        let pairs = match vms_asked_for(world, &params) {
            Some(vms) => pairs_of(world, &vms),
            None => every_pair(world),
        };
        pairs
            .into_iter()
            .filter(|&(vpg, vm)| {
                filter.accepts(world, ctx.site, vpg, view.now) && {
                    let vm = &world.vms[vm];
                    params.matches("vmName", &vm.name) && params.matches("vmIdentifier", &vm.id)
                }
            })
            .map(|(vpg, vm)| view.vm_row(vm, vpg))
            .collect()
    })))
}

/// The only VMs a `vmIdentifier` or `vmName` filter can keep, from the world's index; `None`
/// without either filter.
fn vms_asked_for(world: &World, params: &Params) -> Option<Vec<usize>> {
    if let Some(id) = params.text("vmIdentifier") {
        return Some(world.vms_with_id(id).to_vec());
    }
    params
        .text("vmName")
        .map(|name| world.vms_named(name).to_vec())
}

/// Every (VPG, VM) row of the world, in listing order: VPG by VPG, each VPG's VMs in its order.
fn every_pair(world: &World) -> Vec<(usize, usize)> {
    let each_vpg = world.vpgs.iter().enumerate();
    each_vpg
        .flat_map(|(vpg, v)| v.vms.iter().map(move |&vm| (vpg, vm)))
        .collect()
}

/// The (VPG, VM) rows of these VMs, in the same listing order as [`every_pair`].
fn pairs_of(world: &World, vms: &[usize]) -> Vec<(usize, usize)> {
    let mut pairs: Vec<(usize, usize, usize)> = vms
        .iter()
        .flat_map(|&vm| world.vms[vm].vpgs.iter().map(move |&vpg| (vpg, vm)))
        .map(|(vpg, vm)| {
            let place = world.vpgs[vpg].vms.iter().position(|&v| v == vm);
            (vpg, place.unwrap_or(usize::MAX), vm)
        })
        .collect();
    pairs.sort_unstable();
    pairs.dedup();
    pairs.into_iter().map(|(vpg, _, vm)| (vpg, vm)).collect()
}

/// `GET /v1/vms/{vmIdentifier}?vpgIdentifier=`. A VM in several VPGs visible from this site needs
/// `vpgIdentifier` ("VpgId may be required if VM is protected by more than one VPG"); without it
/// the answer is 400 and names the VPGs to choose from.
pub(crate) async fn one(
    ctx: ViewCtx,
    Path(id): Path<String>,
    params: Params,
) -> Result<Json<VmView>, ApiError> {
    ctx.view(|view| {
        let (vm, vpg) = vm_in_vpg(view.world, ctx.site, &id, &params)?;
        Ok(Json(view.vm_row(vm, vpg)))
    })
}

/// The VM `id` and the VPG it is asked about: `vpgIdentifier`, or its only VPG visible here.
fn vm_in_vpg(
    world: &World,
    site: SiteRole,
    id: &str,
    params: &Params,
) -> Result<(usize, usize), ApiError> {
    let site_name = &world.site(site).name;
    let not_found = || {
        ApiError::NotFound(format!(
            "There is no protected VM '{id}' at site {site_name}: list them with GET /v1/vms."
        ))
    };
    let vm_index = world.vm_by_id(id).ok_or_else(not_found)?;
    let vm = &world.vms[vm_index];
    let visible: Vec<usize> = vm
        .vpgs
        .iter()
        .copied()
        .filter(|&v| world.vpgs[v].visible_from(site))
        .collect();
    let vpg_index = match params.text("vpgIdentifier") {
        Some(wanted) => visible
            .iter()
            .copied()
            .find(|&v| world.vpgs[v].id.eq_ignore_ascii_case(wanted))
            .ok_or_else(|| {
                ApiError::NotFound(format!(
                    "VM '{}' ({id}) is not in a VPG '{wanted}' at site {site_name}.",
                    vm.name
                ))
            })?,
        None => match visible.as_slice() {
            [] => return Err(not_found()),
            [only] => *only,
            several => {
                let choices: Vec<String> = several
                    .iter()
                    .map(|&v| format!("{} ({})", world.vpgs[v].name, world.vpgs[v].id))
                    .collect();
                return Err(ApiError::BadRequest(format!(
                    "VM '{}' ({id}) is protected by {} VPGs at site {site_name}: {}. Add \
                     ?vpgIdentifier=<VPG identifier> to choose one.",
                    vm.name,
                    several.len(),
                    choices.join(", ")
                )));
            }
        },
    };
    Ok((vm_index, vpg_index))
}

/// `CanMount` at `site` of what FLR mounts only at `mounts_at`; `refusal` says why not.
fn can_mount_at(
    site: SiteRole,
    mounts_at: SiteRole,
    refusal: impl FnOnce() -> String,
) -> CanMountView {
    if mounts_at == site {
        CanMountView {
            is_allowed: true,
            reason: String::new(),
        }
    } else {
        CanMountView {
            is_allowed: false,
            reason: refusal(),
        }
    }
}

/// `CanMount` of a VPG's checkpoints at this site: FLR mounts them only at the recovery site.
fn can_mount(world: &World, site: SiteRole, vpg: usize) -> CanMountView {
    let v = &world.vpgs[vpg];
    can_mount_at(site, v.recovery, || {
        decisions::refusal_flr_wrong_site(
            &v.name,
            &world.site(v.recovery).name,
            &world.site(site).name,
        )
    })
}

/// One point in time of a VM: a journal checkpoint of its VPG or a retention set that holds it,
/// with its moment (for ordering and the date filters).
struct Point {
    at: SimTime,
    view: PointInTimeView,
}

impl Point {
    /// A journal checkpoint, which mounts as `mount` says.
    fn checkpoint(checkpoint: Checkpoint, mount: &CanMountView) -> Point {
        Point {
            at: checkpoint.at,
            view: PointInTimeView {
                checkpoint: Some(CheckpointView::from(checkpoint)),
                retention_set: None,
                can_mount: mount.clone(),
            },
        }
    }

    /// A retention set, as `view`'s site sees it.
    fn set(view: &SiteView<'_>, set: &RetentionSet) -> Point {
        Point {
            at: set.checkpoint.at,
            view: PointInTimeView {
                checkpoint: None,
                retention_set: Some(view.retention_set_of_vm(set)),
                can_mount: set_can_mount(view.world, view.site, set.repository),
            },
        }
    }
}

/// The points in time of VM `vm` in VPG `vpg` at `site`: the VPG's listed checkpoints (a VPG's VMs
/// share them) within `[from, to]`, and the VPG's retention sets that hold the VM and are kept,
/// oldest first. A checkpoint mounts at the recovery site, a retention set at its repository's.
fn points(
    view: &SiteView<'_>,
    (vm, vpg): (usize, usize),
    from: Option<SimTime>,
    to: Option<SimTime>,
) -> Vec<Point> {
    let world = view.world;
    let mount = can_mount(world, view.site, vpg);
    let mut points: Vec<Point> = world.vpgs[vpg]
        .journal
        .list(view.now, from, to)
        .into_iter()
        .map(|c| Point::checkpoint(c, &mount))
        .collect();
    let within = |at: SimTime| from.is_none_or(|f| at >= f) && to.is_none_or(|t| at <= t);
    let sets = world
        .retention_sets_seen(view.site, view.now)
        .filter(|set| set.vpg == vpg && set.vms.contains(&vm) && within(set.checkpoint.at));
    points.extend(sets.map(|set| Point::set(view, set)));
    // Stable: a retention set comes after the checkpoint of its own moment.
    points.sort_by_key(|p| p.at);
    points
}

/// `CanMount` of a retention set at this site: FLR mounts it only at its repository's site.
fn set_can_mount(world: &World, site: SiteRole, repository: usize) -> CanMountView {
    let repository = &world.ltr.repositories[repository];
    can_mount_at(site, repository.site, || {
        decisions::refusal_bflr_wrong_site(
            &repository.name,
            &world.site(repository.site).name,
            &world.site(site).name,
        )
    })
}

/// `GET /v1/vms/{id}/pointsInTime?vpgIdentifier=&startDate=&endDate=`: the VPG's journal
/// checkpoints and the retention sets that hold the VM, oldest first, each with `CanMount`.
pub(crate) async fn points_in_time(
    ctx: ViewCtx,
    Path(id): Path<String>,
    params: Params,
    window: DateWindow,
) -> Result<Json<Vec<PointInTimeView>>, ApiError> {
    ctx.view(|view| {
        let pair = vm_in_vpg(view.world, ctx.site, &id, &params)?;
        let listed = points(view, pair, window.from, window.to);
        Ok(Json(listed.into_iter().map(|p| p.view).collect()))
    })
}

/// `GET /v1/vms/{id}/pointsInTime/stats?vpgIdentifier=`: `{Earliest, Latest}` of the points in
/// time, null when there are none.
pub(crate) async fn points_in_time_stats(
    ctx: ViewCtx,
    Path(id): Path<String>,
    params: Params,
) -> Result<Json<PointsInTimeStatsView>, ApiError> {
    ctx.view(|view| {
        let (vm, vpg) = vm_in_vpg(view.world, ctx.site, &id, &params)?;
        let world = view.world;
        let journal = &world.vpgs[vpg].journal;
        let mount = can_mount(world, view.site, vpg);
        let checkpoint = |c: Checkpoint| Point::checkpoint(c, &mount);
        let sets: Vec<&RetentionSet> = world
            .retention_sets_seen(view.site, view.now)
            .filter(|set| set.vpg == vpg && set.vms.contains(&vm))
            .collect();
        let earliest = [
            journal.earliest(view.now).map(checkpoint),
            sets.iter()
                .min_by_key(|s| s.checkpoint.at)
                .map(|s| Point::set(view, s)),
        ];
        let latest = [
            journal.latest(view.now).map(checkpoint),
            sets.iter()
                .max_by_key(|s| s.checkpoint.at)
                .map(|s| Point::set(view, s)),
        ];
        Ok(Json(PointsInTimeStatsView {
            earliest: earliest
                .into_iter()
                .flatten()
                .min_by_key(|p| p.at)
                .map(|p| p.view),
            latest: latest
                .into_iter()
                .flatten()
                .max_by_key(|p| p.at)
                .map(|p| p.view),
        }))
    })
}
