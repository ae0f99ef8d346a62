//! Building the initial world from a [`Setup`]: every identifier, address and size drawn from the
//! seed's world stream, every guest given its default files, every replicating VPG a full history.

use std::collections::BinaryHeap;

use bytes::Bytes;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::auth::Auth;
use super::clock::{Clock, SimTime};
use super::files::{self, GuestFacts, GuestFiles};
use super::ids::{SiteRole, guid};
use super::inventory::{Datastore, Host, Site, Vm, Vpg};
use super::journal::{Journal, Numbering};
use super::ltr::{Repository, VpgLtr};
use super::model::World;
use super::resolve::{ResolvedVpg, WorldError};
use super::setup::Setup;
use super::spec::{SiteSpec, VmSpec, VpgSpec};
use super::tasks::Tasks;
use crate::decisions::{self, MAX_HISTORY_MINUTES};
use crate::enums::status;

impl World {
    /// Builds the initial world of a setup; the same setup always gives the same world.
    pub fn new(setup: &Setup) -> Result<World, WorldError> {
        let resolved = setup.spec.resolve()?;
        // The world stream: every draw below happens in a fixed order, so a seed names one world.
        let mut rng = ChaCha8Rng::seed_from_u64(setup.seed);
        let origin = setup
            .epoch
            .plus_millis(-i64::from(MAX_HISTORY_MINUTES) * 60_000);
        let sites: [Site; 2] =
            [0, 1].map(|index| new_site(index, &setup.spec.sites[index], &mut rng));
        let mut vms = new_vms(
            &setup.spec.vms,
            &resolved.vm_sites,
            &sites,
            origin,
            &mut rng,
        )?;
        let vpgs = new_vpgs(&setup.spec.vpgs, &resolved.vpgs, &mut vms, origin, &mut rng);
        // Drawn last, so a world file's repositories change no other identifier.
        let repositories = setup
            .spec
            .repositories
            .iter()
            .zip(&resolved.repository_sites)
            .map(|(spec, &site)| Repository {
                id: guid(&mut rng),
                name: spec.name.clone(),
                site: SiteRole::from_index(site),
                keep_days: spec.keep_days,
                capacity_gb: spec.capacity_gb,
                deleted: false,
            })
            .collect();
        let mut world = World::at_start(setup, sites, vms, vpgs);
        world.ltr.repositories = repositories;
        // A journal whose room is smaller than its history has been short of it since before
        // the simulation began: its alerts are on from the start.
        for vpg in 0..world.vpgs.len() {
            world.judge_history(vpg, setup.epoch);
        }
        Ok(world)
    }

    /// The world of `setup` around its inventory: no task, no FLR, no call yet.
    fn at_start(setup: &Setup, sites: [Site; 2], vms: Vec<Vm>, vpgs: Vec<Vpg>) -> World {
        // The runtime stream is separate from the world stream, so a world built from a seed is
        // the same whatever happens to it afterwards.
        let mut runtime = ChaCha8Rng::seed_from_u64(setup.seed);
        runtime.set_stream(1);
        World {
            clock: Clock::new(setup.epoch, setup.time_scale),
            timings: setup.timings,
            task_jitter: setup.task_jitter,
            index: super::index::Index::new(&vms, &vpgs),
            sites,
            vms,
            vpgs,
            tasks: Tasks::default(),
            flrs: Vec::new(),
            auth: Auth::new(
                setup.spec.users.clone(),
                setup.spec.clients.clone(),
                setup.lifetimes,
            )
            .with_audiences(setup.spec.audiences.clone()),
            calls: Vec::new(),
            ltr: Default::default(),
            faults: crate::world::faults::Faults::new(setup.seed),
            traces: Default::default(),
            vpg_settings: Default::default(),
            rng: runtime,
            events: BinaryHeap::new(),
            next_event: 0,
            trimmed_at: setup.epoch,
        }
    }
}

/// The site at `index` (0 local, 1 peer), with two hosts, a datastore and a network.
fn new_site(index: usize, spec: &SiteSpec, rng: &mut ChaCha8Rng) -> Site {
    let server_id = guid(rng);
    let id = guid(rng);
    let domain = format!("{}.example.internal", spec.name.to_lowercase());
    let octet = 10 * (index + 1);
    Site {
        role: SiteRole::from_index(index),
        name: spec.name.clone(),
        location: spec.location.clone(),
        id,
        ip: format!("10.{octet}.0.10"),
        hosts: spec
            .hosts
            .iter()
            .enumerate()
            .map(|(n, name)| Host {
                id: format!("{server_id}.host-{}", 13 + n * 3),
                name: if name.contains('.') {
                    name.clone()
                } else {
                    format!("{name}.{domain}")
                },
                vra: Default::default(),
            })
            .collect(),
        datastores: spec
            .datastore_names()
            .into_iter()
            .enumerate()
            .map(|(n, name)| Datastore {
                id: format!("{server_id}.datastore-{}", 20 + index + 10 * n),
                name,
            })
            .collect(),
        network: (
            format!("{server_id}.network-{}", 30 + index),
            "VM Network".to_owned(),
        ),
        server_id,
        login_banner: Default::default(),
        encryption_detection_off: false,
        license_key: Some(super::inventory::SIMULATED_LICENSE.to_owned()),
        pairing_token: None,
        scripts: Default::default(),
        exports: Vec::new(),
        unpaired: false,
        cluster_vra_settings: serde_json::Value::Null,
    }
}

/// Every VM, at the site `vm_sites` gives it, not yet in any VPG.
fn new_vms(
    specs: &[VmSpec],
    vm_sites: &[usize],
    sites: &[Site; 2],
    origin: SimTime,
    rng: &mut ChaCha8Rng,
) -> Result<Vec<Vm>, WorldError> {
    // Each site numbers its VMs' morefs upward from its own random start, with random gaps.
    let mut next_moref = [rng.random_range(20..60u32), rng.random_range(20..60u32)];
    let mut vms = Vec::with_capacity(specs.len());
    for (spec, &site_index) in specs.iter().zip(vm_sites) {
        let moref = next_moref[site_index];
        next_moref[site_index] += rng.random_range(1..8u32);
        vms.push(new_vm(spec, &sites[site_index], moref, origin, rng)?);
    }
    Ok(vms)
}

/// One VM with its address, disk use, host and default guest files.
fn new_vm(
    spec: &VmSpec,
    site: &Site,
    moref: u32,
    origin: SimTime,
    rng: &mut ChaCha8Rng,
) -> Result<Vm, WorldError> {
    // Drawn even when the world gives one, so the seed's stream stays the same.
    let drawn = format!(
        "10.{}.{}.{}",
        10 * (site.role.index() + 1),
        rng.random_range(1..250u32),
        rng.random_range(10..250u32)
    );
    let ip = spec.ip.clone().unwrap_or(drawn);
    let port = [8080u16, 8443, 9000, 5000][rng.random_range(0..4usize)];
    let provisioned_mb = u64::from(spec.disk_gb) * 1024;
    let used_mb = provisioned_mb * rng.random_range(30..90u64) / 100;
    let facts = GuestFacts {
        vm: &spec.name,
        site: &site.name,
        ip: &ip,
        port,
    };
    let files = default_guest_files(spec, &facts, origin)?;
    Ok(Vm {
        id: format!("{}.vm-{moref}", site.server_id),
        name: spec.name.clone(),
        site: site.role,
        os: spec.os,
        cpus: spec.cpus,
        memory_mb: spec.memory_mb,
        provisioned_mb,
        used_mb,
        host: rng.random_range(0..site.hosts.len()),
        ip,
        vpgs: Vec::new(),
        files,
        removed: false,
        recovery_host: None,
    })
}

/// A guest's default files, each written at the start of history so every checkpoint holds it.
fn default_guest_files(
    spec: &VmSpec,
    facts: &GuestFacts<'_>,
    origin: SimTime,
) -> Result<GuestFiles, WorldError> {
    let mut files = GuestFiles::new(spec.os);
    for (path, content) in files::default_files(spec.os, facts) {
        files
            .write(&path, Bytes::from(content), origin)
            .map_err(|source| WorldError::GuestFile {
                vm: spec.name.clone(),
                source,
            })?;
    }
    Ok(files)
}

/// Every VPG with its journal, each member VM told which VPGs it is in.
fn new_vpgs(
    specs: &[VpgSpec],
    resolved: &[ResolvedVpg],
    vms: &mut [Vm],
    origin: SimTime,
    rng: &mut ChaCha8Rng,
) -> Vec<Vpg> {
    let vpg_count = specs.len() as u64;
    let mut vpgs = Vec::with_capacity(specs.len());
    for (index, (spec, resolved)) in specs.iter().zip(resolved).enumerate() {
        for &vm in &resolved.members {
            vms[vm].vpgs.push(index);
        }
        let numbering = Numbering {
            origin,
            vpg_count,
            vpg: index as u64,
            base: 0,
        };
        vpgs.push(new_vpg(spec, resolved, numbering, rng));
    }
    vpgs
}

/// One VPG as its spec describes it, with no test, clone or insert running.
fn new_vpg(
    spec: &VpgSpec,
    resolved: &ResolvedVpg,
    numbering: Numbering,
    rng: &mut ChaCha8Rng,
) -> Vpg {
    let mut journal = Journal::new(numbering, spec.history_minutes, resolved.room_minutes);
    let actual_rpo = actual_rpo(spec, resolved, rng);
    let id = guid(rng);
    // Two draws a VPG once spent on a load of its own (a VPG's load is now its VMs', see
    // `decisions::vm_load`), kept so that every identifier drawn after them stays the seed's.
    let _ = (rng.random_range(5..400u32), rng.random_range(1..4000u32));
    if decisions::writes_checkpoints(resolved.status, resolved.sub_status) {
        // A replicating VPG has written checkpoints for longer than any history window.
        journal.start_writing(numbering.origin);
    } else if resolved.status != status::INITIALIZING {
        // One that is syncing last wrote its RPO ago, when the simulation began; an
        // Initializing VPG never wrote.
        let epoch = numbering
            .origin
            .plus_millis(i64::from(MAX_HISTORY_MINUTES) * 60_000);
        journal.wrote_until(epoch.plus_millis(-i64::from(actual_rpo) * 1000));
    }
    Vpg {
        id,
        name: spec.name.clone(),
        protected: SiteRole::from_index(resolved.protected),
        recovery: SiteRole::from_index(resolved.recovery),
        vms: resolved.members.clone(),
        status: resolved.status,
        sub_status: resolved.sub_status,
        resync: None,
        test: None,
        last_test: None,
        vm_last_test: std::collections::BTreeMap::new(),
        clone_task: None,
        live_task: None,
        generation: 0,
        running_inserts: Vec::new(),
        priority: resolved.priority,
        rpo_seconds: spec.rpo_seconds,
        actual_rpo,
        journal,
        watch: Default::default(),
        ltr: VpgLtr {
            repository: resolved.repository,
            ..VpgLtr::default()
        },
        restore: None,
        deleted: false,
    }
}

/// A VPG missing its SLA is behind its configured RPO; any other replicates within seconds.
fn actual_rpo(spec: &VpgSpec, resolved: &ResolvedVpg, rng: &mut ChaCha8Rng) -> u32 {
    if resolved.status == status::RPO_NOT_MEETING_SLA || resolved.status == status::NOT_MEETING_SLA
    {
        spec.rpo_seconds + rng.random_range(60..600u32)
    } else {
        rng.random_range(3..10u32)
    }
}
