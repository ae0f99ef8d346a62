//! Every route a site serves, with what it covers: one table from which both the router and the
//! coverage matrix in `zvm-sim/README.md` are made, so the two cannot disagree (a test compares the
//! README with [`coverage_matrix`]). Paths are written as SW10 spells them; `/v1` ones are routed
//! lowercased, as requests are lowercased before routing.

use axum::Router;
use axum::handler::Handler;
use axum::routing::{MethodRouter, get as get_route, post as post_route};

use super::{
    actions, checkpoints, flrs, keycloak, login, ltr, monitoring, restore, scripts, sites, tasks,
    traces, virtualization, vms, vpg_settings, vpgs, vras,
};
use crate::http::extract::JsonDocument;
use crate::http::{JsonBody, Params, SiteCtx, ViewCtx};
use crate::world::settings::PARTS;
use axum::extract::Path;

/// How much of a ZVM's behaviour a route has.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Coverage {
    /// What a ZVM 10.x does, as far as it is documented (with what is worth saying).
    Implemented(&'static str),
    /// Works, but models less than a ZVM does; the text says how.
    Simplified(&'static str),
}

/// One route of the matrix.
#[derive(Debug, Clone)]
pub(crate) struct RouteDoc {
    pub verbs: Vec<&'static str>,
    pub path: String,
    pub coverage: Coverage,
}

/// The handlers of one path, with their HTTP verbs.
pub(crate) struct Endpoint {
    router: MethodRouter<SiteCtx>,
    verbs: Vec<&'static str>,
}

/// `GET` by `handler`.
fn get<H: Handler<T, SiteCtx>, T: 'static>(handler: H) -> Endpoint {
    Endpoint {
        router: get_route(handler),
        verbs: vec!["GET"],
    }
}

/// `PUT` by `handler`.
fn put<H: Handler<T, SiteCtx>, T: 'static>(handler: H) -> Endpoint {
    Endpoint {
        router: axum::routing::put(handler),
        verbs: vec!["PUT"],
    }
}

/// `DELETE` by `handler`.
fn delete<H: Handler<T, SiteCtx>, T: 'static>(handler: H) -> Endpoint {
    Endpoint {
        router: axum::routing::delete(handler),
        verbs: vec!["DELETE"],
    }
}

/// `POST` by `handler`.
fn post<H: Handler<T, SiteCtx>, T: 'static>(handler: H) -> Endpoint {
    Endpoint {
        router: post_route(handler),
        verbs: vec!["POST"],
    }
}

impl Endpoint {
    fn get<H: Handler<T, SiteCtx>, T: 'static>(mut self, handler: H) -> Endpoint {
        self.router = self.router.get(handler);
        self.verbs.push("GET");
        self
    }

    fn post<H: Handler<T, SiteCtx>, T: 'static>(mut self, handler: H) -> Endpoint {
        self.router = self.router.post(handler);
        self.verbs.push("POST");
        self
    }

    fn put<H: Handler<T, SiteCtx>, T: 'static>(mut self, handler: H) -> Endpoint {
        self.router = self.router.put(handler);
        self.verbs.push("PUT");
        self
    }

    fn delete<H: Handler<T, SiteCtx>, T: 'static>(mut self, handler: H) -> Endpoint {
        self.router = self.router.delete(handler);
        self.verbs.push("DELETE");
        self
    }
}

/// Routes and their documentation, built together.
pub(crate) struct Table {
    pub router: Router<SiteCtx>,
    pub docs: Vec<RouteDoc>,
    lowercase: bool,
}

impl Table {
    fn new(lowercase: bool) -> Table {
        Table {
            router: Router::new(),
            docs: Vec::new(),
            lowercase,
        }
    }

    fn route(mut self, path: &str, endpoint: Endpoint, coverage: Coverage) -> Table {
        let routed = if self.lowercase {
            path.to_ascii_lowercase()
        } else {
            path.to_owned()
        };
        self.router = self.router.route(&routed, endpoint.router);
        self.docs.push(RouteDoc {
            verbs: endpoint.verbs,
            path: path.to_owned(),
            coverage,
        });
        self
    }
}

use Coverage::{Implemented, Simplified};

/// Keycloak's paths (case-sensitive, as Keycloak's are).
pub(crate) fn keycloak() -> Table {
    Table::new(false)
        .route(
            "/auth/realms/{realm}/protocol/openid-connect/token",
            post(keycloak::token),
            Implemented(
                "`password` and `authorization_code` with PKCE (public client `zerto-client`), \
                 `client_credentials`, `refresh_token`; \
                 Keycloak's error bodies; access tokens are RS256 JWTs of the realm key (`iss`, \
                 `sub`, `azp`, `realm_access.roles`, `scope`, `jti`), which the ZVM API takes as \
                 opaque; `scope=openid` adds an `id_token` and answers `openid profile email`",
            ),
        )
        .route(
            "/auth/realms/{realm}/protocol/openid-connect/auth",
            get(login::page).post(login::sign_in),
            Simplified(
                "the login page of the authorization-code flow with PKCE (S256) for the public \
                 client `zerto-client`: a code good once, for a minute, for that redirect URI \
                 and challenge; any redirect URI is taken",
            ),
        )
        .route(
            "/auth/realms/{realm}/protocol/openid-connect/certs",
            get(keycloak::certs),
            Implemented("the realm's JWKS: one RS256 key per process, made when first needed"),
        )
        .route(
            "/auth/realms/{realm}/.well-known/openid-configuration",
            get(keycloak::openid_configuration),
            Simplified("issuer, authorization, token and JWKS endpoints, grants, scopes"),
        )
}

/// The `/v1` API, behind the bearer check.
pub(crate) fn v1() -> Table {
    let table = sites(Table::new(true));
    let table = virtualization_site(table);
    let table = vms_and_vpgs(table);
    let table = recovery(table);
    let table = vpg_settings(table);
    let table = extended_journal_copy(table);
    let table = monitoring(table);
    let table = recovery_scripts(table);
    traces(table)
}

/// The recovery-scripts folders, each root with its own paths as SW10 lists them.
fn recovery_scripts(t: Table) -> Table {
    use crate::world::scripts::Root::{Output, Repository};
    let mut t = t.route(
        "/v1/recoveryScripts/repository/files",
        post(scripts::upload)
            .get(move |c: ViewCtx, p: Params| scripts::download(c, p, Repository))
            .delete(move |c: ViewCtx, p: Params| scripts::delete_file(c, p, Repository)),
        Implemented(
            "`multipart/form-data` upload (`file`, `path`, `overwriteExisting`; missing folders are \
             made), download as `application/octet-stream`, delete",
        ),
    );
    t = t.route(
        "/v1/recoveryScripts/output/files",
        get(move |c: ViewCtx, p: Params| scripts::download(c, p, Output))
            .delete(move |c: ViewCtx, p: Params| scripts::delete_file(c, p, Output)),
        Simplified("download and delete; no script runs, so only what a client put there"),
    );
    for (path, root) in [
        ("/v1/recoveryScripts/repository", Repository),
        ("/v1/recoveryScripts/output", Output),
    ] {
        t = t
            .route(
                &format!("{path}/folders"),
                post(move |c: ViewCtx, b: JsonBody| scripts::make_folder(c, b, root))
                    .delete(move |c: ViewCtx, p: Params| scripts::delete_folder(c, p, root)),
                Implemented(
                    "made with the folders above it; deleted only empty unless `deleteIfNotEmpty`",
                ),
            )
            .route(
                &format!("{path}/items"),
                get(move |c: ViewCtx, p: Params| scripts::items(c, p, root)),
                Simplified(
                    "the folder's direct items, folders first (`Type` 1 folder, 2 file: SW10 names \
                     neither), `search` with `*` and `?`",
                ),
            );
    }
    t
}

fn sites(t: Table) -> Table {
    t.route("/v1/localsite", get(sites::local_site), Implemented(""))
        .route(
            "/v1/localsite/pairingstatuses",
            get(sites::pairing_statuses),
            Implemented(""),
        )
        .route(
            "/v1/localsite/settings/loginBanner",
            get(sites::login_banner).put(sites::set_login_banner),
            Implemented("off and empty until set; turning it on needs its text"),
        )
        .route(
            "/v1/localsite/settings/logingbanner",
            get(sites::login_banner).put(sites::set_login_banner),
            Implemented(
                "the same, under the spelling zvma10-api-wrapper calls (its comment says an \
                 appliance spells it so)",
            ),
        )
        .route(
            "/v1/localsite/billing/sendUsage",
            post(sites::send_usage),
            Simplified("200; nothing is sent: the simulator has no billing server"),
        )
        .route(
            "/v1/peersites",
            get(sites::peer_sites).post(sites::pair),
            Simplified(
                "filters `peerName`, `pairingStatus`, `location`, `hostName`, `port`; none while \
                 unpaired. A POST pairs the sites again with the peer's address and a token it \
                 generated (the sites start paired: a POST then is refused, 409)",
            ),
        )
        .route(
            "/v1/peersites/pairingstatuses",
            get(sites::pairing_statuses),
            Implemented(""),
        )
        .route(
            "/v1/peersites/generatetoken",
            post(sites::generate_pairing_token),
            Simplified(
                "a token good for 48 hours, which replaces the site's last; the other site pairs \
                 with it after an unpairing",
            ),
        )
        .route(
            "/v1/peersites/{siteIdentifier}",
            get(sites::peer_site).delete(sites::unpair),
            Simplified(
                "404 while unpaired. A DELETE unpairs only when no VPG replicates between the \
                 sites (409 naming them: a ZVM would remove them with the pairing); \
                 `isKeepTargetDisks` is checked, not modelled. Other listings still show the \
                 peer site",
            ),
        )
        .route(
            "/v1/serverDateTime/serverDateTimeUtc",
            get(sites::server_time),
            Implemented("the simulated clock"),
        )
        .route(
            "/v1/serverDateTime/serverDateTimeLocal",
            get(sites::server_time),
            Simplified("the sites run on UTC"),
        )
        .route(
            "/v1/serverDateTime/dateTimeArgument",
            get(sites::date_time_argument),
            Implemented(
                "milliseconds since 1970, a time or a date, as the server reads it; without \
                 `dateTime`, the server's time",
            ),
        )
}

fn virtualization_site(t: Table) -> Table {
    let none = || get(virtualization::none_at_vsphere_site);
    t.route(
        "/v1/virtualizationsites",
        get(sites::virtualization_sites),
        Implemented("this site, then its peer"),
    )
    .route(
        "/v1/virtualizationsites/{siteIdentifier}",
        get(sites::virtualization_site),
        Implemented(""),
    )
    .route(
        "/v1/virtualizationsites/{siteIdentifier}/vms",
        get(sites::unprotected_vms),
        Implemented("the VMs at that site that no VPG protects (clones included)"),
    )
    .route(
        "/v1/virtualizationsites/{siteIdentifier}/hosts",
        get(virtualization::hosts),
        Implemented("each host, with its datastores and networks"),
    )
    .route(
        "/v1/virtualizationsites/{siteIdentifier}/hosts/{hostIdentifier}",
        get(virtualization::host),
        Implemented(""),
    )
    .route(
        "/v1/virtualizationsites/{siteIdentifier}/hostclusters",
        get(virtualization::host_clusters),
        Simplified("one cluster of every host of the site"),
    )
    .route(
        "/v1/virtualizationsites/{siteIdentifier}/datastores",
        get(virtualization::datastores),
        Implemented("the site's datastores (the world file's), in no datastore cluster"),
    )
    .route(
        "/v1/virtualizationsites/{siteIdentifier}/networks",
        get(virtualization::networks),
        Simplified("the site's one VM network"),
    )
    .route(
        "/v1/virtualizationsites/{siteIdentifier}/folders",
        get(virtualization::folders),
        Simplified("`/` and `Discovered virtual machine`"),
    )
    .route(
        "/v1/virtualizationsites/{siteIdentifier}/resourcepools",
        get(virtualization::resource_pools),
        Simplified("the cluster's `Resources` (SW10's key `ResourcepoolName`)"),
    )
    .route(
        "/v1/virtualizationsites/{siteIdentifier}/devices",
        get(virtualization::devices),
        Simplified(
            "the datastore's device, seen by every host (filters `hostIdentifier`, `deviceName`)",
        ),
    )
    .route(
        "/v1/virtualizationsites/{siteIdentifier}/datastoreclusters",
        none(),
        Simplified("`[]`: the datastore is in no cluster"),
    )
    .route(
        "/v1/virtualizationsites/{siteIdentifier}/repositories",
        get(ltr::site_repositories),
        Implemented("the site's Extended Journal Copy repositories (the world file's)"),
    )
    .route(
        "/v1/virtualizationsites/{siteIdentifier}/vcdvapps",
        none(),
        Implemented("`[]`, as at a vSphere site"),
    )
    .route(
        "/v1/virtualizationsites/{siteIdentifier}/orgvdcs",
        none(),
        Implemented("`[]`, as at a vSphere site"),
    )
    .route(
        "/v1/virtualizationsites/{siteIdentifier}/publiccloud/{resource}",
        get(virtualization::no_public_cloud),
        Implemented("`[]`, as at a vSphere site"),
    )
    .route(
        "/v1/virtualizationsites/{siteIdentifier}/publiccloud/encryptionkeys/{encryptionKeyId}",
        get(virtualization::no_encryption_key),
        Implemented("404, as at a vSphere site: no key vault"),
    )
    .route(
        "/v1/virtualizationsites/{siteIdentifier}/orgvdcs/{orgVdcIdentifier}/networks",
        get(virtualization::no_org_vdc),
        Implemented("404, as at a vSphere site: it has no organization VDC"),
    )
    .route(
        "/v1/virtualizationsites/{siteIdentifier}/orgvdcs/{orgVdcIdentifier}/storagepolicies",
        get(virtualization::no_org_vdc),
        Implemented("404, as at a vSphere site: it has no organization VDC"),
    )
    .route(
        "/v1/vcd/vmsWithoutMorefId",
        get(virtualization::no_vcd),
        Implemented("`[]`: both sites are vCenter sites, with no vCloud Director"),
    )
    .route(
        "/v1/vcd/validOrgVdcs",
        get(virtualization::no_vcd),
        Implemented("`[]`: both sites are vCenter sites, with no vCloud Director"),
    )
}

fn vms_and_vpgs(t: Table) -> Table {
    t.route(
        "/v1/vms",
        get(vms::list),
        Implemented(
            "one row per VM × VPG; filters `vpgName`, `vmName`, `status`, `subStatus`, \
             `protectedSiteIdentifier`, `recoverySiteIdentifier`, `organizationName`, `priority`, \
             `vmIdentifier`",
        ),
    )
    .route(
        "/v1/vms/{vmIdentifier}",
        get(vms::one),
        Implemented("`EnabledActions.IsFlrEnabled` at the recovery site, `LastTest` per tested VM"),
    )
    .route(
        "/v1/vms/{vmIdentifier}/pointsInTime",
        get(vms::points_in_time),
        Implemented(
            "the VPG's journal checkpoints and the retention sets that hold the VM (`Checkpoint` \
             null, `RetentionSet` set), oldest first, with `CanMount`",
        ),
    )
    .route(
        "/v1/vms/{vmIdentifier}/Restore",
        post(restore::restore),
        Simplified(
            "a VM of a VPG whose journal is at its own site, in place or as a new VM \
             (`restoredVmName`); the task waits (`WaitingForUserInput`) for a commit or a \
             rollback, or its commit policy's wait; NIC, volume and datastore settings are \
             accepted and not modelled",
        ),
    )
    .route(
        "/v1/vms/{vmIdentifier}/RestoreCommit",
        post(restore::commit),
        Implemented("keeps what the restore restored"),
    )
    .route(
        "/v1/vms/{vmIdentifier}/RestoreRollback",
        post(restore::rollback),
        Implemented("the guest's files as before the restore, or the new VM removed"),
    )
    .route(
        "/v1/vms/{vmIdentifier}/pointsInTime/stats",
        get(vms::points_in_time_stats),
        Implemented("of checkpoints and retention sets alike"),
    )
    .route(
        "/v1/vpgs",
        get(vpgs::list),
        Implemented(
            "filters `name`, `status`, `subStatus`, `protectedSiteIdentifier`, \
             `recoverySiteIdentifier`, `organizationName`, `priority`",
        ),
    )
    .route("/v1/vpgs/statuses", get(vpgs::statuses), Implemented(""))
    .route(
        "/v1/vpgs/substatuses",
        get(vpgs::substatuses),
        Implemented(""),
    )
    .route(
        "/v1/vpgs/priorities",
        get(vpgs::priorities),
        Implemented(""),
    )
    .route(
        "/v1/vpgs/entitytypes",
        get(vpgs::entity_types),
        Simplified("SW10 names no value: the ZVM 9 API's `VpgEntityType` names"),
    )
    .route(
        "/v1/vpgs/failovercommitpolicies",
        get(vpgs::commit_policies),
        Implemented("`Rollback`, `Commit`, `None`, the values 0 to 2 a failover takes"),
    )
    .route(
        "/v1/vpgs/failovershutdownpolicies",
        get(vpgs::shutdown_policies),
        Implemented(""),
    )
    .route(
        "/v1/vpgs/retentionpolicies",
        get(vpgs::retention_policies),
        Simplified("SW10 names no value: the ZVM 9 API's `Standard`, `Backup`"),
    )
    .route(
        "/v1/vpgs/{vpgIdentifier}",
        get(vpgs::one).delete(actions::delete_vpg),
        Simplified(
            "GET with `ActiveProcessesApi.RunningFailOverTestApi`, `LastTest`, `HistoryStatusApi`; \
             `Status` 4 (or 2 with a missed RPO) while a journal that has written for its \
             configured history holds less of it. DELETE: a `RemoveProtectionGroup` task \
             (`ForceRemoveProtectionGroup` with `Force`), `Deleting` while it runs, then the VPG \
             and its checkpoints are gone; refused while an operation runs on it unless `Force`, \
             which stops it; `KeepRecoveryVolumes` is answered back, not modelled",
        ),
    )
    .route(
        "/v1/vpgs/{vpgIdentifier}/checkpoints",
        get(checkpoints::list).post(checkpoints::insert),
        Implemented(
            "`startDate`, `endDate`; a POST inserts a tagged checkpoint as an `InsertTaggedCP` \
             task, and a second insert while one runs fails",
        ),
    )
    .route(
        "/v1/vpgs/{vpgIdentifier}/checkpoints/stats",
        get(checkpoints::stats),
        Implemented(""),
    )
}

/// `/v1/vpgSettings`: documents edited part by part, committed as one task.
fn vpg_settings(t: Table) -> Table {
    use vpg_settings as s;
    let base = "/v1/vpgSettings/{vpgSettingsIdentifier}";
    let mut t = t
        .route(
            "/v1/vpgSettings",
            get(s::list).post(s::create),
            Implemented(
                "a POST makes a document: from the VPG its `VpgIdentifier` names (its name, RPO, \
                 journal history, priority, sites, recovery host, datastore, network, VMs), or \
                 Zerto's defaults for a new VPG (RPO 300 s, 24 hours, Medium)",
            ),
        )
        .route(
            base,
            get(s::one).put(s::put).delete(s::delete),
            Implemented("a PUT writes the whole document but its identifiers"),
        )
        .route(
            "/v1/vpgSettings/copyVpgSettings",
            post(s::copy),
            Simplified("a document for a new VPG with the VPG's settings but its VMs"),
        )
        .route(
            "/v1/vpgSettings/exportSettings",
            post(s::export),
            Simplified(
                "the settings of the VPGs named (all this site sees when none), kept by this ZVM \
                 under the export's time; `ExportResult.Result` is `Success` (SW10 lists no values)",
            ),
        )
        .route(
            "/v1/vpgSettings/exportedSettings",
            get(s::exports),
            Implemented("the time of each export this ZVM made, oldest first"),
        )
        .route(
            "/v1/vpgSettings/exportedSettings/{timeStamp}",
            post(s::read_export),
            Implemented("the export's settings, of the VPGs `vpgNames` gives (all when none)"),
        )
        .route(
            "/v1/vpgSettings/exportedSettings/{timeStamp}/vpgsinfo",
            get(s::export_vpgs),
            Implemented(""),
        )
        .route(
            "/v1/vpgSettings/import",
            post(s::import),
            Simplified(
                "each settings given (those `vpgNames` names) creates a VPG as a new VPG's commit \
                 does; a commit's refusal is a validation failure, a VPG the world cannot take an \
                 import failure",
            ),
        )
        .route(
            &format!("{base}/commit"),
            post(s::commit),
            Simplified(
                "an `UpdateProtectionGroup` task that applies the name, RPO, journal history \
                 (a shorter one drops older checkpoints at once), priority and VMs (a VM added \
                 syncs first: NotMeetingSLA / VolumeInitialSync, no checkpoint meanwhile), and ends \
                 the document; other settings are kept, not modelled; a new VPG's commit is a \
                 `CreateProtectionGroup` task, the VPG Initializing through its initial sync, then \
                 MeetingSLA",
            ),
        )
        .route(
            &format!("{base}/priority"),
            get(s::priority),
            Implemented("the priority `Basic` has"),
        );
    for (segment, key) in PARTS {
        let verbs = get(move |ctx: ViewCtx, Path(id): Path<String>| s::part(ctx, id, key))
            .put(
                move |ctx: ViewCtx, Path(id): Path<String>, body: JsonDocument| {
                    s::put_part(ctx, id, key, body)
                },
            )
            .delete(move |ctx: ViewCtx, Path(id): Path<String>| s::reset_part(ctx, id, key));
        let verbs = match segment {
            "ltr" => verbs.post(
                move |ctx: ViewCtx, Path(id): Path<String>, body: JsonDocument| {
                    s::put_part(ctx, id, key, body)
                },
            ),
            _ => verbs,
        };
        let coverage = match key {
            "Basic" => Implemented(
                "checked: a non-empty name, an RPO of 1 s or more, 1 to 720 hours of history, \
                 a priority, known sites; a DELETE puts a new document's part back",
            ),
            _ => Simplified(
                "kept as written and answered back, not applied to the VPG; a DELETE puts a new \
                 document's part back",
            ),
        };
        t = t.route(&format!("{base}/{segment}"), verbs, coverage);
    }
    t.route(
        &format!("{base}/vms"),
        get(s::vms).post(s::add_vm),
        Implemented(
            "a POST adds a VM of the protected site (one NIC, one volume unless given); a VM \
             already listed is 409",
        ),
    )
    .route(
        &format!("{base}/vms/{{vmIdentifier}}"),
        get(s::vm).put(s::put_vm).delete(s::remove_vm),
        Implemented(""),
    )
    .route(
        &format!("{base}/vms/{{vmIdentifier}}/nics"),
        get(|ctx: ViewCtx, Path((id, vm)): Path<(String, String)>| {
            s::vm_items(ctx, id, vm, "Nics")
        }),
        Simplified("each VM has one NIC, `Network adapter 1`"),
    )
    .route(
        &format!("{base}/vms/{{vmIdentifier}}/nics/{{nicIdentifier}}"),
        get(|ctx: ViewCtx, Path(ids): Path<(String, String, String)>| {
            s::vm_item(ctx, ids, ("Nics", "NicIdentifier"))
        })
        .put(
            |ctx: ViewCtx, Path(ids): Path<(String, String, String)>, body: JsonDocument| {
                s::put_vm_item(ctx, ids, ("Nics", "NicIdentifier"), body)
            },
        )
        .delete(s::reset_nic),
        Implemented("a DELETE puts the NIC's settings back to none"),
    )
    .route(
        &format!("{base}/vms/{{vmIdentifier}}/volumes"),
        get(|ctx: ViewCtx, Path((id, vm)): Path<(String, String)>| {
            s::vm_items(ctx, id, vm, "Volumes")
        }),
        Simplified("each VM has one volume, `scsi:0:0`"),
    )
    .route(
        &format!("{base}/vms/{{vmIdentifier}}/volumes/{{volumeIdentifier}}"),
        get(|ctx: ViewCtx, Path(ids): Path<(String, String, String)>| {
            s::vm_item(ctx, ids, ("Volumes", "VolumeIdentifier"))
        })
        .put(
            |ctx: ViewCtx, Path(ids): Path<(String, String, String)>, body: JsonDocument| {
                s::put_vm_item(ctx, ids, ("Volumes", "VolumeIdentifier"), body)
            },
        ),
        Implemented(""),
    )
}

fn recovery(t: Table) -> Table {
    t.route(
        "/v1/vpgs/{vpgIdentifier}/FailoverTest",
        post(actions::failover_test),
        Implemented(""),
    )
    .route(
        "/v1/vpgs/{vpgIdentifier}/FailoverTestStop",
        post(actions::failover_test_stop),
        Implemented(""),
    )
    .route(
        "/v1/vpgs/{vpgIdentifier}/CloneStart",
        post(actions::clone_start),
        Implemented("a clone is a `<vm>-clone` VM at the recovery site"),
    )
    .route(
        "/v1/vpgs/{vpgIdentifier}/CloneAbort",
        post(actions::clone_abort),
        Implemented(""),
    )
    .route(
        "/v1/vpgs/{vpgIdentifier}/Failover",
        post(actions::failover),
        Simplified(
            "once its task has brought the VMs up it waits before commit (FailingOverBeforeCommit, \
             the task WaitingForUserInput) for `FailoverCommit` or `FailoverRollback`; with \
             `CommitPolicy` Commit or Rollback (the default) it commits or rolls back by itself \
             after an hour, with None it waits; shutdown and reverse protection are checked, not \
             modelled",
        ),
    )
    .route(
        "/v1/vpgs/{vpgIdentifier}/FailoverCommit",
        post(actions::failover_commit),
        Implemented(
            "a `FailoverCommit` task; at its end the VPG is Recovered; 409 unless a failover waits",
        ),
    )
    .route(
        "/v1/vpgs/{vpgIdentifier}/FailoverRollback",
        post(actions::failover_rollback),
        Implemented(
            "a `FailoverRollback` task; at its end the failover's task is Stopped and the VPG \
             replicates again; 409 unless a failover waits",
        ),
    )
    .route(
        "/v1/vpgs/{vpgIdentifier}/Move",
        post(actions::move_vpg),
        Simplified("as Failover (MovingBeforeCommit); `commitPolicyTimeout` is not modelled"),
    )
    .route(
        "/v1/vpgs/{vpgIdentifier}/MoveCommit",
        post(actions::move_commit),
        Implemented("as FailoverCommit, for a move"),
    )
    .route(
        "/v1/vpgs/{vpgIdentifier}/moveRollback",
        post(actions::move_rollback),
        Implemented("as FailoverRollback, for a move"),
    )
    .route(
        "/v1/vpgs/{vpgIdentifier}/pause",
        post(actions::pause),
        Implemented(
            "a `PauseProtectionGroup` task; replication stops at once (substatus \
             ReplicationPausedUserInitiated): no checkpoint is written and a tagged insert fails \
             until resumed; a VPG that is not replicating, syncing or already paused is 409",
        ),
    )
    .route(
        "/v1/vpgs/{vpgIdentifier}/resume",
        post(actions::resume),
        Implemented(
            "a `ResumeProtectionGroup` task; the VPG delta-syncs while it runs, keeping its \
             checkpoints, then meets its SLA and writes again; a VPG not paused is 409",
        ),
    )
    .route(
        "/v1/vpgs/{vpgIdentifier}/forcesync",
        post(actions::force_sync),
        Simplified("keeps checkpoints; a journal filling up during the sync is not modelled"),
    )
    .route(
        "/v1/tasks",
        get(tasks::list),
        Implemented("filters by dates, `type`, `status`"),
    )
    .route("/v1/tasks/types", get(tasks::types), Implemented(""))
    .route(
        "/v1/tasks/{taskIdentifier}",
        get(tasks::one),
        Implemented(""),
    )
    .route(
        "/v1/flrs",
        get(flrs::list).post(flrs::mount),
        Implemented(
            "`Jflr` (journal checkpoints) at the VPG's recovery site, `Bflr` (retention sets) at \
             their repository's site",
        ),
    )
    .route(
        "/v1/flrs/{flrSessionIdentifier}",
        get(flrs::one).delete(flrs::unmount),
        Implemented(""),
    )
    .route(
        "/v1/flrs/{flrSessionIdentifier}/browse",
        post(flrs::browse),
        Implemented(""),
    )
    .route(
        "/v1/flrs/{flrSessionIdentifier}/download",
        post(flrs::download),
        Implemented(""),
    )
    .route(
        "/v1/flrs/{flrSessionIdentifier}/downloads/{download}",
        get(flrs::fetch),
        Simplified("the download URL's shape is the simulator's own (a real ZVM's is unknown)"),
    )
}

fn extended_journal_copy(t: Table) -> Table {
    t.route(
        "/v1/ltr/repositories",
        get(ltr::repositories).post(ltr::create_repository),
        Simplified(
            "this site's repositories (the world file's, then those a POST made), each an NFS \
             share; filters `connectionType`, `repositoryName`. A POST keeps the name (unique) \
             and `totalCapacityGB`, answers the identifier; the storage settings are not modelled",
        ),
    )
    .route(
        "/v1/ltr/repositories/{repositoryId}",
        get(ltr::repository)
            .put(ltr::edit_repository)
            .delete(ltr::delete_repository),
        Simplified(
            "a PUT changes the name and capacity; a DELETE is refused (409) while a VPG copies \
             to it or it keeps a retention set",
        ),
    )
    .route(
        "/v1/ltr/catalog/deleteretentionsets",
        post(ltr::delete_retention_sets),
        Simplified(
            "each full set is gone at once (refused whole when one is unknown); every set is a \
             full one, so an incremental identifier is unknown",
        ),
    )
    .route(
        "/v1/ltr/restore/vm",
        post(ltr::restore_vm),
        Simplified(
            "a `RestoreVmFromRetentionSet` task (the simulator's name) of the set's VPG; at its \
             end the VM as the set holds it is a new VM `<name>-restored` at the repository's \
             site; `hostIdentifier` and `datastoreIdentifier` are not modelled",
        ),
    )
    .route(
        "/v1/ltr/catalog/vms/{vmIdentifier}/retentionsets/{retentionSetIdentifier}/settings",
        get(ltr::retention_set_vm_settings),
        Simplified("the recovery site's first host, datastore and network, a NIC on DHCP"),
    )
    .route(
        "/v1/ltr/vpgs/{vpgIdentifier}/retentionstart",
        post(ltr::retention_start),
        Implemented(
            "`checkpointId` (the latest checkpoint without it); a `ManualRetention` task that \
             writes a full retention set kept for the repository's Keep For, or fails naming why \
             (no repository, a checkpoint not in the journal, a run already going)",
        ),
    )
    .route(
        "/v1/ltr/vpgs/{vpgIdentifier}/retentionabort",
        post(ltr::retention_abort),
        Implemented("the running run's task ends Stopped; 409 with none running"),
    )
    .route(
        "/v1/ltr/catalog/fullretentionsets",
        get(ltr::full_retention_sets),
        Implemented(
            "the retention sets of the VPGs this site sees until they expire; filters \
             `vpgIdentifier`, `repositoryIdentifier`, `zorgIdentifier`",
        ),
    )
    .route(
        "/v1/ltr/catalog/fullretentionsets/{retentionSetIdentifier}/incrementals",
        get(ltr::incrementals),
        Simplified("`[]`: manual runs write full sets only"),
    )
    .route(
        "/v1/ltr/catalog/vms",
        get(ltr::catalog_vms),
        Implemented("each VM in each VPG that a listed retention set holds"),
    )
    .route(
        "/v1/ltr/catalog/vms/{vmIdentifier}/retentionsets",
        get(ltr::vm_retention_sets),
        Implemented(""),
    )
    .route(
        "/v1/ltr/health/vpgs",
        get(ltr::health),
        Simplified(
            "every VPG this site sees, with its repository (null without one), runs, last run \
             and alerts; no schedule (`SchedulingAndRetentionSettings` null)",
        ),
    )
}

fn monitoring(t: Table) -> Table {
    t.route(
        "/v1/vras",
        get(monitoring::vras).post(vras::install),
        Simplified(
            "one VRA per host of the world file at the start, replicating the VMs on its host and \
             the replicas kept on it (filters `vraName`, `status`, `vraVersion`, `hostVersion`, \
             `ipAddress`, `vraGroup`, `datastoreName`, `networkName`); a POST installs one on a \
             host without one (an `InstallVra` task; Installing until it ends): memory, CPUs and \
             group are kept, the IP settings and password are not",
        ),
    )
    .route(
        "/v1/vras/clusters",
        post(vras::install_on_cluster),
        Simplified("an `InstallVra` task for every host of the site's one cluster without a VRA"),
    )
    .route(
        "/v1/vras/clusters/{clusterIdentifier}",
        put(vras::upgrade_cluster).delete(vras::uninstall_cluster),
        Simplified(
            "PUT: an `UpgradeVra` task (every VRA runs the ZVM's version already); DELETE: an \
             `UninstallVra` task, refused (409) while a VRA protects or recovers a VM; \
             `vaioAllowMaintenanceMode` is not modelled",
        ),
    )
    .route(
        "/v1/vras/clusters/{clusterIdentifier}/settings",
        get(vras::cluster_settings).post(vras::keep_cluster_settings),
        Simplified(
            "the install settings kept for the cluster, over the defaults; a host password is \
             never kept nor answered",
        ),
    )
    .route(
        "/v1/vras/cleanup",
        delete(vras::cleanup),
        Simplified(
            "one `UninstallVra` task for every VRA of the site (its one cluster), as a list",
        ),
    )
    .route(
        "/v1/vras/statuses",
        get(monitoring::vra_statuses),
        Implemented(""),
    )
    .route(
        "/v1/vras/ipconfigurationtypes",
        get(monitoring::vra_ip_configuration_types),
        Implemented(""),
    )
    .route(
        "/v1/vras/{vraIdentifier}",
        get(monitoring::vra).put(vras::edit).delete(vras::uninstall),
        Simplified(
            "PUT: an `EditVra` task (the simulator's name) applying memory, CPUs and group; \
             DELETE: an `UninstallVra` task, Removing until it ends, refused (409) while the VRA \
             protects or recovers a VM",
        ),
    )
    .route(
        "/v1/vras/{vraIdentifier}/upgrade",
        post(vras::upgrade),
        Simplified("an `UpgradeVra` task: every VRA runs the ZVM's version already"),
    )
    .route(
        "/v1/vras/{vraIdentifier}/changerecoveryvra/validate",
        post(vras::validate_recovery_hosts),
        Simplified(
            "each allocation `Status` 0 (valid) or 1 with its reason (SW10 names neither): the VM \
             must recover on this VRA's host, the new host have a VRA ready",
        ),
    )
    .route(
        "/v1/vras/{vraIdentifier}/changerecoveryvra/recommendation",
        post(vras::recommend_recovery_hosts),
        Simplified(
            "for each VM the VRA recovers (or of `vmsToCalculate`), the ready VRA with the fewest \
             VMs to recover; fixed allocations kept",
        ),
    )
    .route(
        "/v1/vras/{vraIdentifier}/changerecoveryvra/execute",
        post(vras::change_recovery_hosts),
        Implemented(
            "a `ChangeRecoveryHost` task, refused whole (400) when one allocation is invalid; the \
             VMs recover on their new hosts from its end",
        ),
    )
    .route(
        "/v1/vras/{vraIdentifier}/changerecoveryvra/potentials",
        get(monitoring::potential_recovery_vras),
        Simplified("every other host of the VRA's site"),
    )
    .route(
        "/v1/datastores",
        get(monitoring::datastores),
        Simplified(
            "the site's datastores (the world file's), each holding the VMs, replicas and \
             journals placed on it and VRA appliances, sized to what it holds (at least 64 TiB)",
        ),
    )
    .route(
        "/v1/datastores/{datastoreIdentifier}",
        get(monitoring::datastore),
        Implemented(""),
    )
    .route(
        "/v1/volumes",
        get(monitoring::volumes),
        Implemented(
            "each VM's protected volumes, each replica's recovery volumes and journal, scratch \
             volumes while a test or a clone runs, one appliance volume per VRA (filters \
             `volumeType`, `vpgIdentifier`, `datastoreIdentifier`, `protectedVmIdentifier`, \
             `owningVmIdentifier`)",
        ),
    )
    .route(
        "/v1/statistics/vms",
        get(monitoring::vm_statistics),
        Simplified(
            "one row per row of `/v1/vms`, counters growing with the VM's load while its VPG \
             writes (`SyncCounterInMBs` stays 0)",
        ),
    )
    .route(
        "/v1/license",
        get(monitoring::license)
            .put(monitoring::set_license)
            .delete(monitoring::delete_license),
        Simplified(
            "an Enterprise license that does not expire, room for every VM, and each site's \
             protected VMs; a PUT sets the site's key, a DELETE leaves `Details` null (nothing \
             is refused for want of a license)",
        ),
    )
    .route(
        "/v1/serviceprofiles",
        get(monitoring::service_profiles),
        Simplified("the system service profile only (filter `siteIdentifier`)"),
    )
    .route(
        "/v1/serviceprofiles/{serviceProfileIdentifier}",
        get(monitoring::service_profile),
        Simplified("as the list"),
    )
    .route(
        "/v1/zorgs",
        get(monitoring::none_without_zcm),
        Implemented("`[]`: no Zerto Cloud Manager"),
    )
    .route(
        "/v1/zorgs/{zorgIdentifier}",
        get(monitoring::no_zcm_entity),
        Implemented("404"),
    )
    .route(
        "/v1/zsspsessions",
        get(monitoring::none_without_zcm).post(monitoring::zssp_session_without_zcm),
        Implemented("`[]`: no Zerto Cloud Manager; a POST is refused (400) for that reason"),
    )
    .route(
        "/v1/zsspsessions/{zsspSessionIdentifier}",
        get(monitoring::no_zcm_entity).delete(monitoring::no_zcm_entity),
        Implemented("404"),
    )
    .route(
        "/v1/encryptionDetection/metrics/vms",
        get(monitoring::vm_encryption),
        Simplified("every VM with a row in `/v1/vms`; nothing encrypted (no attack is modelled)"),
    )
    .route(
        "/v1/encryptionDetection/metrics/volumes",
        get(monitoring::volume_encryption),
        Simplified("each VM's data split over its volumes"),
    )
    .route(
        "/v1/encryptionDetection/metrics/vpgs",
        get(monitoring::vpg_encryption),
        Simplified("the sum of each VPG's VMs"),
    )
    .route(
        "/v1/encryptionDetection/suspected/{entity}",
        get(monitoring::nothing_suspected),
        Simplified("`[]` for `vms`, `volumes` and `vpgs`: nothing is suspected"),
    )
    .route(
        "/v1/encryptionDetection/state",
        get(monitoring::encryption_state).post(monitoring::set_encryption_state),
        Simplified(
            "enabled until a POST turns it off, per site (its body, or without one its query, \
             as zvma10-api-wrapper sends it); nothing is ever detected",
        ),
    )
    .route(
        "/v1/encryptionDetection/dismissEvent",
        post(monitoring::dismiss_encryption_event),
        Simplified("each VPG must be one this site sees; nothing is suspected, so nothing changes"),
    )
}

fn traces(t: Table) -> Table {
    t.route(
        "/v1/alerts",
        get(traces::alerts),
        Simplified(
            "RPO alerts (`VPG0009` past the target, `VPG0010` past twice it), low journal history \
             (`VPG0003` below 85 % of the configured history, `VPG0004` below 75 %) and a journal \
             at its hard limit (`VRA0039`), nothing else; filters `startDate`, `endDate`, \
             `vpgIdentifier`, `zorgIdentifier`, `siteIdentifier`, `level`, `entity`, \
             `helpIdentifier`, `isDismissed`",
        ),
    )
    .route(
        "/v1/alerts/levels",
        get(traces::alert_levels),
        Implemented(""),
    )
    .route(
        "/v1/alerts/entities",
        get(traces::alert_entities),
        Implemented(""),
    )
    .route(
        "/v1/alerts/helpidentifiers",
        get(traces::alert_help_identifiers),
        Simplified("the identifiers of the alerts the simulator raises"),
    )
    .route(
        "/v1/alerts/{alertIdentifier}",
        get(traces::alert),
        Implemented(""),
    )
    .route(
        "/v1/alerts/{alertIdentifier}/dismiss",
        post(traces::dismiss),
        Implemented(""),
    )
    .route(
        "/v1/alerts/{alertIdentifier}/undismiss",
        post(traces::undismiss),
        Implemented(""),
    )
    .route(
        "/v1/events",
        get(traces::events),
        Simplified(
            "one event per task's operation (done or failed), per resync (`InitFullSync`, naming \
             what it removed) and per alert turned on or off, the latest 1000; filters `startDate`, `endDate`, `vpg`, `vpgIdentifier`, `siteName`, \
             `siteIdentifier`, `zorgIdentifier`, `eventType`, `entityType`, `category`, \
             `eventCategory`, `userName`, `alertIdentifier`",
        ),
    )
    .route(
        "/v1/events/types",
        get(traces::event_types),
        Implemented("0 to 60, by name"),
    )
    .route(
        "/v1/events/entities",
        get(traces::event_entities),
        Implemented(""),
    )
    .route(
        "/v1/events/categories",
        get(traces::event_categories),
        Implemented(""),
    )
    .route(
        "/v1/events/{eventIdentifier}",
        get(traces::event),
        Implemented(""),
    )
    .route(
        "/v1/reports/recovery",
        get(traces::recovery_reports),
        Implemented(
            "one per failover test stopped and live operation done; filters `startTime`, \
             `endTime`, `pageNumber`, `pageSize`, `vpgName`, `recoveryType`, `state`",
        ),
    )
    .route(
        "/v1/reports/recovery/{recoveryOperationIdentifier}",
        get(traces::recovery_report),
        Implemented(""),
    )
    .route(
        "/v1/reports/resources",
        get(traces::resource_reports),
        Simplified(
            "the latest hourly sample of each VM in each VPG only; filters by names, paging",
        ),
    )
}

/// What the simulator does not serve, and why: each answers 404 as any unknown path.
pub(crate) const ABSENT: [(&str, &str); 4] = [
    (
        "other Keycloak endpoints (`auth`, `userinfo`, `logout`, admin API)",
        "rewind uses none",
    ),
    (
        "`/v1/sessions`, `/v1/repositories`, `/v1/encryptiondetection`, `/v1/encryptiondetection/types`, `/v1/serverDateTime`",
        "Zerto's Python SDK calls them, but ZVM 10's API (SW10) has no such paths",
    ),
    (
        "`/v1/statistics/vpgs`",
        "SW10 has only `/v1/statistics/vms`",
    ),
    (
        "`/v1/session/add`",
        "the Windows ZVM's legacy session, gone from a 10.x appliance",
    ),
];

/// The coverage matrix of `zvm-sim/README.md`, made from the routes themselves.
pub fn coverage_matrix() -> String {
    let mut out = String::from("| endpoint | coverage |\n|---|---|\n");
    for doc in keycloak().docs.iter().chain(&v1().docs) {
        let (kind, text) = match doc.coverage {
            Implemented(text) => ("implemented", text),
            Simplified(text) => ("simplified", text),
        };
        let detail = if text.is_empty() {
            String::new()
        } else {
            format!(": {text}")
        };
        out.push_str(&format!(
            "| `{} {}` | {kind}{detail} |\n",
            doc.verbs.join("/"),
            doc.path
        ));
    }
    for (what, why) in ABSENT {
        out.push_str(&format!("| {what} | absent: {why} |\n"));
    }
    out
}
