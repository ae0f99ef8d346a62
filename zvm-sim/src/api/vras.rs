//! `/v1/vras` writes: VRAs installed on a host or a cluster, edited, upgraded and removed, each
//! answered with its task's id; a cluster's install settings kept; and the recovery host of VMs
//! validated, recommended and changed (`changerecoveryvra`). Bodies are SW10's camelCase, matched
//! in any case. The rules are in `world::vras`.

use axum::Json;
use axum::extract::{Extension, Path};
use serde_json::{Value, json};

use crate::api::actions::ActionResult;
use crate::http::extract::JsonDocument;
use crate::http::{ApiError, JsonBody, StartedTask, ViewCtx, required};
use crate::wire::vra_host;
use crate::world::auth::Principal;
use crate::world::payloads::VraSettings;
use crate::world::settings::pascal_case;
use crate::world::vras::VraWork;
use crate::world::{Refusal, SiteRole, World};

/// The task a write started, as every task-starting handler answers it.
fn started(task: String) -> ActionResult {
    Ok((Extension(StartedTask(task.clone())), Json(task)))
}

/// Which hosts' VRAs a write is about.
enum Hosts {
    /// The host of the VRA the path names.
    OfVra(String),
    /// The host the body names.
    Host(String),
    /// Every host of the cluster named.
    Cluster(String),
}

impl Hosts {
    /// Their positions at `site`, or 404 for a VRA, host or cluster the site does not have.
    fn at(&self, world: &World, site: SiteRole) -> Result<Vec<usize>, Refusal> {
        match self {
            Hosts::OfVra(id) => Ok(vec![host_of_vra(world, site, id)?]),
            Hosts::Host(id) => Ok(vec![host_by_id(world, site, id)?]),
            Hosts::Cluster(id) => cluster_hosts(world, site, id),
        }
    }
}

/// The `work` task on the VRAs of `hosts`; answers the task it started.
fn on_hosts(ctx: &ViewCtx, by: &Principal, hosts: Hosts, work: VraWork) -> ActionResult {
    let task = ctx.with_world(|world, now| {
        let hosts = hosts.at(world, ctx.site)?;
        world.work_on_vras(ctx.site, hosts, work, by, now)
    })?;
    started(task)
}

/// Installs VRAs on `hosts` with the body's settings, once the datastore and network it names are
/// found; answers the task it started.
fn install_on(ctx: &ViewCtx, by: &Principal, body: &JsonBody, hosts: Hosts) -> ActionResult {
    let settings = settings(body, VraSettings::default())?;
    let task = ctx.with_world(|world, now| {
        check_placement(world, ctx.site, body)?;
        let hosts = hosts.at(world, ctx.site)?;
        Ok::<_, ApiError>(world.install_vras(ctx.site, hosts, settings, by, now)?)
    })?;
    started(task)
}

/// The host of the VRA `id` at `site`.
fn host_of_vra(world: &World, site: SiteRole, id: &str) -> Result<usize, Refusal> {
    vra_host(world, site, id).ok_or_else(|| {
        Refusal::NotFound(format!(
            "There is no VRA '{id}' at this site: list them with GET /v1/vras."
        ))
    })
}

/// The host `id` of `site`.
fn host_by_id(world: &World, site: SiteRole, id: &str) -> Result<usize, Refusal> {
    let hosts = &world.site(site).hosts;
    hosts
        .iter()
        .position(|h| h.id.eq_ignore_ascii_case(id.trim()))
        .ok_or_else(|| {
            Refusal::NotFound(format!(
                "There is no host '{id}' at this site: list them with GET /v1/virtualizationsites/{{id}}/hosts."
            ))
        })
}

/// Every host of the cluster `id` of `site` (a site has one cluster, of all its hosts).
fn cluster_hosts(world: &World, site: SiteRole, id: &str) -> Result<Vec<usize>, Refusal> {
    let s = world.site(site);
    let cluster = crate::wire::cluster_identifier(s);
    if !cluster.eq_ignore_ascii_case(id.trim()) {
        return Err(Refusal::NotFound(format!(
            "There is no cluster '{id}' at this site: list them with GET /v1/virtualizationsites/{{id}}/hostclusters."
        )));
    }
    Ok((0..s.hosts.len()).collect())
}

/// The settings a body gives, over `base`: `memoryInGb` (1 to 16), `numOfCpus` (1 to 4),
/// `groupName`.
fn settings(body: &JsonBody, base: VraSettings) -> Result<VraSettings, ApiError> {
    let whole =
        |key: &str, range: std::ops::RangeInclusive<u32>| -> Result<Option<u32>, ApiError> {
            match body.number(key)? {
                None => Ok(None),
                Some(n) if n.fract() == 0.0 && range.contains(&(n as u32)) => Ok(Some(n as u32)),
                Some(n) => Err(ApiError::BadRequest(format!(
                    "{key} {n} is out of range: give a whole number from {} to {}.",
                    range.start(),
                    range.end()
                ))),
            }
        };
    Ok(VraSettings {
        memory_gb: whole("memoryInGb", 1..=16)?.unwrap_or(base.memory_gb),
        cpus: whole("numOfCpus", 1..=4)?.unwrap_or(base.cpus),
        group: body.text("groupName")?.map_or(base.group, str::to_owned),
    })
}

/// Refuses a datastore or network the site does not have, when the body names one.
fn check_placement(world: &World, site: SiteRole, body: &JsonBody) -> Result<(), ApiError> {
    let s = world.site(site);
    if let Some(ds) = body.text("datastoreIdentifier")?
        && !s.datastores.iter().any(|d| d.id.eq_ignore_ascii_case(ds))
    {
        return Err(ApiError::NotFound(format!(
            "There is no datastore '{ds}' at this site."
        )));
    }
    if let Some(net) = body.text("networkIdentifier")?
        && !s.network.0.eq_ignore_ascii_case(net)
    {
        return Err(ApiError::NotFound(format!(
            "There is no network '{net}' at this site."
        )));
    }
    Ok(())
}

/// `POST /v1/vras` (`VraCreateDataApi`): installs a VRA on `hostIdentifier`.
pub(crate) async fn install(
    ctx: ViewCtx,
    Extension(by): Extension<Principal>,
    body: JsonBody,
) -> ActionResult {
    let host = body.text("hostIdentifier")?.map(str::to_owned);
    let host = required(host, "hostIdentifier", "the host to install the VRA on")?;
    install_on(&ctx, &by, &body, Hosts::Host(host))
}

/// `DELETE /v1/vras/{vraIdentifier}`.
pub(crate) async fn uninstall(
    ctx: ViewCtx,
    Extension(by): Extension<Principal>,
    Path(id): Path<String>,
) -> ActionResult {
    on_hosts(&ctx, &by, Hosts::OfVra(id), VraWork::Uninstall)
}

/// `PUT /v1/vras/{vraIdentifier}` (`VraEditDataApi`).
pub(crate) async fn edit(
    ctx: ViewCtx,
    Extension(by): Extension<Principal>,
    Path(id): Path<String>,
    body: JsonBody,
) -> ActionResult {
    let task = ctx.with_world(|world, now| {
        let host = host_of_vra(world, ctx.site, &id)?;
        let current = world.site(ctx.site).hosts[host].vra.settings.clone();
        let new = settings(&body, current)?;
        Ok::<_, ApiError>(world.edit_vra(ctx.site, host, new, &by, now)?)
    })?;
    started(task)
}

/// `POST /v1/vras/{vraIdentifier}/upgrade`.
pub(crate) async fn upgrade(
    ctx: ViewCtx,
    Extension(by): Extension<Principal>,
    Path(id): Path<String>,
) -> ActionResult {
    on_hosts(&ctx, &by, Hosts::OfVra(id), VraWork::Upgrade)
}

/// `POST /v1/vras/clusters` (`VrasOnClusterCreateDataApi`): a VRA on every host of the cluster
/// without one.
pub(crate) async fn install_on_cluster(
    ctx: ViewCtx,
    Extension(by): Extension<Principal>,
    body: JsonBody,
) -> ActionResult {
    let cluster = body.text("clusterIdentifier")?.map(str::to_owned);
    let cluster = required(
        cluster,
        "clusterIdentifier",
        "the cluster whose hosts get VRAs",
    )?;
    install_on(&ctx, &by, &body, Hosts::Cluster(cluster))
}

/// `DELETE /v1/vras/clusters/{clusterIdentifier}`: the cluster's VRAs removed.
pub(crate) async fn uninstall_cluster(
    ctx: ViewCtx,
    Extension(by): Extension<Principal>,
    Path(id): Path<String>,
) -> ActionResult {
    on_hosts(&ctx, &by, Hosts::Cluster(id), VraWork::Uninstall)
}

/// `PUT /v1/vras/clusters/{clusterIdentifier}`: the cluster's VRAs upgraded.
pub(crate) async fn upgrade_cluster(
    ctx: ViewCtx,
    Extension(by): Extension<Principal>,
    Path(id): Path<String>,
) -> ActionResult {
    on_hosts(&ctx, &by, Hosts::Cluster(id), VraWork::Upgrade)
}

/// `DELETE /v1/vras/cleanup`: every VRA of every cluster removed; the tasks' identifiers.
pub(crate) async fn cleanup(
    ctx: ViewCtx,
    Extension(by): Extension<Principal>,
) -> Result<Json<Vec<String>>, ApiError> {
    let task = ctx.with_world(|world, now| {
        let hosts = (0..world.site(ctx.site).hosts.len()).collect();
        world.work_on_vras(ctx.site, hosts, VraWork::Uninstall, &by, now)
    })?;
    Ok(Json(vec![task]))
}

/// `GET /v1/vras/clusters/{clusterIdentifier}/settings` (`VrasOnClusterDataApi`): what was kept
/// for the cluster (never a password), over the defaults.
pub(crate) async fn cluster_settings(
    ctx: ViewCtx,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let answer = ctx.with_world(|world, _| {
        cluster_hosts(world, ctx.site, &id)?;
        let s = world.site(ctx.site);
        let defaults = VraSettings::default();
        let mut answer = json!({
            "IsVaio": false, "ClusterDesiredState": 0, "ClusterStatus": 0,
            "ClusterName": format!("{}-Cluster", s.name),
            "ClusterIdentifier": crate::wire::cluster_identifier(s),
            "DatastoreIdentifier": null, "NetworkIdentifier": null,
            "MemoryInGb": defaults.memory_gb, "NumOfCpus": defaults.cpus, "GroupName": defaults.group,
            "VraNetworkDataApi": null, "UsePublicKeyInsteadOfCredentials": false,
            "AutoPopulatePostInstalltion": false, "HostRootPassword": null,
        });
        for (key, value) in s.cluster_vra_settings.as_object().into_iter().flatten() {
            answer[key.as_str()] = value.clone();
        }
        Ok::<_, Refusal>(answer)
    })?;
    Ok(Json(answer))
}

/// `POST /v1/vras/clusters/{clusterIdentifier}/settings`: keeps the install settings (but a host
/// password, which is never kept).
pub(crate) async fn keep_cluster_settings(
    ctx: ViewCtx,
    Path(id): Path<String>,
    body: JsonDocument,
) -> Result<(), ApiError> {
    let mut kept = pascal_case(body.0);
    let Some(map) = kept.as_object_mut() else {
        return Err(ApiError::BadRequest(
            "The body must be a JSON object (VrasOnClusterCreateDataApi).".to_owned(),
        ));
    };
    map.remove("HostRootPassword");
    map.remove("ClusterIdentifier");
    ctx.with_world(|world, _| {
        cluster_hosts(world, ctx.site, &id)?;
        world.sites[ctx.site.index()].cluster_vra_settings = kept;
        Ok::<_, Refusal>(())
    })?;
    Ok(())
}

/// The (VM, host) pairs of a body's `vmsAllocations` (`VraVmAllocationApi`), each known here.
fn allocations(
    world: &World,
    site: SiteRole,
    list: &Value,
) -> Result<Vec<(usize, usize)>, Refusal> {
    let mut out = Vec::new();
    for a in list.as_array().into_iter().flatten() {
        let vm_id = a["VmIdentifier"].as_str().unwrap_or_default();
        let vm = world.vms_with_id(vm_id).first().copied().ok_or_else(|| {
            Refusal::NotFound(format!(
                "There is no VM '{vm_id}': list them with GET /v1/vms."
            ))
        })?;
        let host = host_by_id(
            world,
            site,
            a["HostIdentifier"].as_str().unwrap_or_default(),
        )?;
        out.push((vm, host));
    }
    Ok(out)
}

/// `POST /v1/vras/{vraIdentifier}/changerecoveryvra/validate`: each allocation with `Status` 0
/// (valid) or 1 (invalid) and why (SW10 names neither value: the simulator's reading).
pub(crate) async fn validate_recovery_hosts(
    ctx: ViewCtx,
    Path(id): Path<String>,
    body: JsonDocument,
) -> Result<Json<Value>, ApiError> {
    let given = pascal_case(body.0);
    let results = ctx.with_world(|world, _| {
        let from = host_of_vra(world, ctx.site, &id)?;
        let moves = allocations(world, ctx.site, &given["VmsAllocations"])?;
        let rows: Vec<Value> = moves
            .into_iter()
            .map(|(vm, to)| {
                let why = world.recovery_move_refused(ctx.site, from, vm, to);
                json!({
                    "VmIdentifier": world.vms[vm].id, "HostIdentifier": world.site(ctx.site).hosts[to].id,
                    "Status": if why.is_some() { 1 } else { 0 }, "Reason": why,
                })
            })
            .collect();
        Ok::<_, Refusal>(rows)
    })?;
    Ok(Json(json!({ "VmsValidationsResults": results })))
}

/// `POST /v1/vras/{vraIdentifier}/changerecoveryvra/recommendation`: for each VM the VRA recovers
/// (or of `vmsToCalculate`), the installed VRA with the fewest VMs to recover; fixed allocations
/// are kept as given.
pub(crate) async fn recommend_recovery_hosts(
    ctx: ViewCtx,
    Path(id): Path<String>,
    body: Option<JsonDocument>,
) -> Result<Json<Value>, ApiError> {
    let given = body.map_or(Value::Null, |b| pascal_case(b.0));
    let rows = ctx.with_world(|world, _| {
        let from = host_of_vra(world, ctx.site, &id)?;
        let fixed = allocations(
            world,
            ctx.site,
            &given["Constraints"]["FixedVmsAllocations"],
        )?;
        let asked: Vec<&str> = given["VmsToCalculate"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let site = world.site(ctx.site);
        let loads = world.vra_loads(ctx.site);
        let mut load: Vec<usize> = loads.iter().map(|l| l.recovery.vms).collect();
        let mut rows = Vec::new();
        for vm in world.recovered_on(ctx.site, from) {
            if !asked.is_empty()
                && !asked
                    .iter()
                    .any(|a| a.eq_ignore_ascii_case(&world.vms[vm].id))
            {
                continue;
            }
            let (to, reason) = match fixed.iter().find(|(v, _)| *v == vm) {
                Some(&(_, host)) => (Some(host), "fixed by the request"),
                None => {
                    let ready = (0..site.hosts.len()).filter(|&h| {
                        h != from && site.hosts[h].vra.installed && site.hosts[h].vra.busy.is_none()
                    });
                    (
                        ready.min_by_key(|&h| load[h]),
                        "the ready VRA with the fewest VMs to recover",
                    )
                }
            };
            if let Some(to) = to {
                load[to] += 1;
            }
            rows.push(json!({
                "VmIdentifier": world.vms[vm].id,
                "HostIdentifier": to.map(|h| site.hosts[h].id.clone()),
                "HostName": to.map(|h| site.hosts[h].name.clone()),
                "Reason": if to.is_some() { reason } else { "no other host has a VRA ready" },
            }));
        }
        Ok::<_, Refusal>(rows)
    })?;
    Ok(Json(json!({ "Recommendations": rows })))
}

/// `POST /v1/vras/{vraIdentifier}/changerecoveryvra/execute`: the `ChangeRecoveryHost` task.
pub(crate) async fn change_recovery_hosts(
    ctx: ViewCtx,
    Extension(by): Extension<Principal>,
    Path(id): Path<String>,
    body: JsonDocument,
) -> ActionResult {
    let given = pascal_case(body.0);
    let task = ctx.with_world(|world, now| {
        let from = host_of_vra(world, ctx.site, &id)?;
        let moves = allocations(world, ctx.site, &given["VmsAllocations"])?;
        world.change_recovery_host(ctx.site, from, moves, &by, now)
    })?;
    started(task)
}
