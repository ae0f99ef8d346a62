//! Building the initial world from a [`Setup`]: every identifier, address and size drawn from the
//! seed's world stream, every guest given its default files, every replicating VPG a full history.

use std::collections::{BinaryHeap, HashMap};

use bytes::Bytes;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::decisions::{self, MAX_HISTORY_MINUTES};
use crate::world::auth::Auth;
use crate::world::clock::Clock;
use crate::world::enums::status;
use crate::world::files::{self, GuestFacts, GuestFiles};
use crate::world::journal::{Journal, Numbering};
use crate::world::spec::WorldError;
use crate::world::{Host, Setup, Site, SiteRole, Vm, Vpg, World, guid};

impl World {
    /// Builds the initial world of a setup; the same setup always gives the same world.
    pub fn new(setup: &Setup) -> Result<World, WorldError> {
        let resolved = setup.spec.resolve()?;
        let mut rng = ChaCha8Rng::seed_from_u64(setup.seed);
        let origin = setup
            .epoch
            .plus_millis(-i64::from(MAX_HISTORY_MINUTES) * 60_000);

        let sites: [Site; 2] = [0, 1].map(|index| {
            let spec = &setup.spec.sites[index];
            let server_id = guid(&mut rng);
            let id = guid(&mut rng);
            let domain = format!("{}.example.internal", spec.name.to_lowercase());
            let octet = 10 * (index + 1);
            Site {
                role: SiteRole::from_index(index),
                name: spec.name.clone(),
                location: spec.location.clone(),
                id,
                ip: format!("10.{octet}.0.10"),
                hosts: (1..=2)
                    .map(|n| Host {
                        id: format!("{server_id}.host-{}", 10 + n * 3),
                        name: format!("esx0{n}.{domain}"),
                    })
                    .collect(),
                datastore: (
                    format!("{server_id}.datastore-{}", 20 + index),
                    format!("ds-{}-01", spec.name.to_lowercase()),
                ),
                network: (
                    format!("{server_id}.network-{}", 30 + index),
                    "VM Network".to_owned(),
                ),
                server_id,
            }
        });

        let mut next_moref = [rng.random_range(20..60u32), rng.random_range(20..60u32)];
        let mut vms = Vec::with_capacity(setup.spec.vms.len());
        for (spec, &site_index) in setup.spec.vms.iter().zip(&resolved.vm_sites) {
            let site = &sites[site_index];
            let moref = next_moref[site_index];
            next_moref[site_index] += rng.random_range(1..8u32);
            let ip = format!(
                "10.{}.{}.{}",
                10 * (site_index + 1),
                rng.random_range(1..250u32),
                rng.random_range(10..250u32)
            );
            let port = [8080u16, 8443, 9000, 5000][rng.random_range(0..4usize)];
            let provisioned_mb = u64::from(spec.disk_gb) * 1024;
            let used_mb = provisioned_mb * rng.random_range(30..90u64) / 100;
            let mut files = GuestFiles::new(spec.os);
            let facts = GuestFacts {
                vm: &spec.name,
                site: &site.name,
                ip: &ip,
                port,
            };
            for (path, content) in files::default_files(spec.os, &facts) {
                files
                    .write(&path, Bytes::from(content), origin)
                    .map_err(|source| WorldError::GuestFile {
                        vm: spec.name.clone(),
                        source,
                    })?;
            }
            vms.push(Vm {
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
            });
        }

        let vpg_count = setup.spec.vpgs.len() as u64;
        let mut vpgs = Vec::with_capacity(setup.spec.vpgs.len());
        for (index, (spec, resolved)) in setup.spec.vpgs.iter().zip(&resolved.vpgs).enumerate() {
            let numbering = Numbering {
                origin,
                vpg_count,
                vpg: index as u64,
            };
            let mut journal = Journal::new(numbering, spec.history_minutes);
            if decisions::writes_checkpoints(resolved.status, resolved.sub_status) {
                // A replicating VPG has written checkpoints for longer than any history window.
                journal.start_writing(origin);
            }
            let actual_rpo = if resolved.status == status::RPO_NOT_MEETING_SLA
                || resolved.status == status::NOT_MEETING_SLA
            {
                spec.rpo_seconds + rng.random_range(60..600u32)
            } else {
                rng.random_range(3..10u32)
            };
            for &vm in &resolved.members {
                vms[vm].vpgs.push(index);
            }
            vpgs.push(Vpg {
                id: guid(&mut rng),
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
                iops: rng.random_range(5..400u32),
                throughput_mb: f64::from(rng.random_range(1..4000u32)) / 1024.0,
                journal,
            });
        }

        let mut runtime = ChaCha8Rng::seed_from_u64(setup.seed);
        runtime.set_stream(1);
        Ok(World {
            clock: Clock::new(setup.epoch, setup.time_scale),
            timings: setup.timings,
            task_jitter: setup.task_jitter,
            sites,
            vms,
            vpgs,
            tasks: Vec::new(),
            flrs: Vec::new(),
            auth: Auth::new(
                setup.spec.users.clone(),
                setup.spec.clients.clone(),
                setup.lifetimes,
            ),
            calls: Vec::new(),
            faults: crate::faults::Faults::new(setup.seed),
            task_by_id: HashMap::new(),
            rng: runtime,
            events: BinaryHeap::new(),
            next_event: 0,
            trimmed_at: setup.epoch,
        })
    }
}
