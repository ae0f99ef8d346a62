//! Large worlds made from a seed (`--generate N --seed S`), with names from `fake`: two sites named
//! after cities, `N` VMs spread over them (three in four at the local site, about one in five
//! Windows, a few protected by nothing), and VPGs of one to six VMs. Every protected VM has one
//! VPG; about three in ten have a second and one in twenty a third (never more: a VM can be in at
//! most three VPGs). Most VPGs meet their SLA; a few show each of the other states a client must
//! handle (RPO not met, a delta sync, Initializing).
//!
//! The same `N` and seed always give the same world. The users and clients are the default
//! world's, so the usual credentials work.

use fake::Fake;
use fake::faker::address::en::{CityName, StateAbbr};
use fake::faker::company::en::Buzzword;
use fake::faker::lorem::en::Word;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::spec::{GuestOs, SiteSpec, VmSpec, VpgSpec, WorldSpec};

/// VM roles, for names: `web-orchid-00042`.
const ROLES: [&str; 8] = ["web", "app", "db", "api", "cache", "batch", "files", "sql"];

/// Journal histories a generated VPG may have, in minutes.
const HISTORIES: [u32; 4] = [60, 120, 240, 1440];

impl WorldSpec {
    /// A world of `vms` VMs made from `seed` (see the module documentation).
    pub fn generate(vms: usize, seed: u64) -> WorldSpec {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        // Its own stream, so the world's names do not shift the identifiers drawn from the seed.
        rng.set_stream(2);
        let sites = two_sites(&mut rng);
        let defaults = WorldSpec::default_world();

        let mut specs = Vec::with_capacity(vms);
        let mut at_site: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
        for index in 0..vms {
            let site = usize::from(rng.random_range(0..4u8) == 0);
            let role = ROLES[rng.random_range(0..ROLES.len())];
            let word: String = Word().fake_with_rng(&mut rng);
            let windows = matches!(role, "sql" | "files") || rng.random_range(0..10u8) == 0;
            specs.push(VmSpec {
                name: format!("{role}-{}-{index:05}", slug(&word)),
                site: sites[site].name.clone(),
                os: if windows {
                    GuestOs::Windows
                } else {
                    GuestOs::Linux
                },
                cpus: [1, 2, 4, 8, 16][rng.random_range(0..5usize)],
                memory_mb: [2048, 4096, 8192, 16384, 32768][rng.random_range(0..5usize)],
                disk_gb: [20, 40, 60, 100, 250, 500][rng.random_range(0..6usize)],
                ip: None,
            });
            // About three in a hundred VMs are protected by nothing.
            if rng.random_range(0..100u8) >= 3 {
                at_site[site].push(index);
            }
        }

        let mut vpgs = Vec::new();
        for (site, members) in at_site.iter().enumerate() {
            // Every protected VM has one VPG; some have a second and a third, in other groupings.
            let second: Vec<usize> = members
                .iter()
                .copied()
                .filter(|_| rng.random_range(0..10u8) < 3)
                .collect();
            let third: Vec<usize> = second
                .iter()
                .copied()
                .filter(|_| rng.random_range(0..6u8) == 0)
                .collect();
            for group in [members.as_slice(), &second, &third] {
                let mut rest = group;
                while !rest.is_empty() {
                    let size = rng.random_range(1..=6usize).min(rest.len());
                    let (chunk, tail) = rest.split_at(size);
                    rest = tail;
                    vpgs.push(vpg(&mut rng, vpgs.len(), site, &sites, chunk, &specs));
                }
            }
        }

        let mut sites = sites.to_vec();
        for spec in &mut sites {
            let here = specs.iter().filter(|vm| vm.site == spec.name).count();
            size_site(spec, here);
        }
        WorldSpec {
            sites,
            vms: specs,
            vpgs,
            users: defaults.users,
            clients: defaults.clients,
            audiences: defaults.audiences,
            journal_limits: Default::default(),
            repositories: Vec::new(),
        }
    }
}

/// Hosts and datastores for a site of `vms` VMs: a host (and its VRA) per 64 VMs, a power of two
/// so that placing a VM on one costs one draw whatever their number, and a datastore per 256.
fn size_site(spec: &mut SiteSpec, vms: usize) {
    let hosts = vms.div_ceil(64).next_power_of_two().clamp(2, 512);
    spec.hosts = (1..=hosts).map(|n| format!("esx{n:02}")).collect();
    let datastores = vms.div_ceil(256).clamp(1, 64);
    let city = spec.name.to_lowercase();
    spec.datastores = (1..=datastores)
        .map(|n| format!("ds-{city}-{n:02}"))
        .collect();
}

fn two_sites(rng: &mut ChaCha8Rng) -> [SiteSpec; 2] {
    let mut site = || {
        let city: String = CityName().fake_with_rng(rng);
        let state: String = StateAbbr().fake_with_rng(rng);
        SiteSpec::named(&city.replace(' ', "-"), &format!("{city}, {state}"))
    };
    let local = site();
    let mut peer = site();
    if peer.name == local.name {
        peer.name.push_str("-DR");
    }
    [local, peer]
}

fn vpg(
    rng: &mut ChaCha8Rng,
    index: usize,
    site: usize,
    sites: &[SiteSpec; 2],
    members: &[usize],
    vms: &[VmSpec],
) -> VpgSpec {
    // Two in five VPGs are locally replicated, the rest replicate to the other site.
    let recovery = if rng.random_range(0..5u8) < 2 {
        site
    } else {
        1 - site
    };
    let (status, sub_status) = match rng.random_range(0..100u8) {
        0..=84 => ("MeetingSLA", "None"),
        85..=90 => ("RpoNotMeetingSLA", "None"),
        91..=93 => ("HistoryNotMeetingSLA", "None"),
        94..=96 => ("NotMeetingSLA", "DeltaSync"),
        _ => ("Initializing", "InitialSync"),
    };
    let word: String = Buzzword().fake_with_rng(rng);
    let kind = if recovery == site { "local" } else { "dr" };
    VpgSpec {
        name: format!("{}-{kind}-{index:05}", slug(&word)),
        protected_site: sites[site].name.clone(),
        recovery_site: sites[recovery].name.clone(),
        status: status.to_owned(),
        sub_status: sub_status.to_owned(),
        history_minutes: HISTORIES[rng.random_range(0..HISTORIES.len())],
        rpo_seconds: 300,
        priority: ["Low", "Medium", "High"][rng.random_range(0..3usize)].to_owned(),
        vms: members.iter().map(|&vm| vms[vm].name.clone()).collect(),
    }
}

/// Lowercase letters and digits, other characters dropped: `"Re-engineered"` → `"reengineered"`.
fn slug(text: &str) -> String {
    text.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_world_is_valid_repeatable_and_varied() {
        let world = WorldSpec::generate(2_000, 9);
        let resolved = world.resolve().expect("a generated world is valid");
        assert_eq!(world.vms.len(), 2_000);
        assert_eq!(world, WorldSpec::generate(2_000, 9));
        assert_ne!(world.sites, WorldSpec::generate(2_000, 10).sites);
        let windows = world
            .vms
            .iter()
            .filter(|vm| vm.os == GuestOs::Windows)
            .count();
        assert!((200..=800).contains(&windows), "{windows} Windows VMs");
        let mut per_vm = vec![0usize; world.vms.len()];
        for vpg in &resolved.vpgs {
            for &vm in &vpg.members {
                per_vm[vm] += 1;
            }
        }
        assert!(per_vm.iter().all(|&n| n <= 3));
        assert!(per_vm.contains(&0), "some VMs are protected by nothing");
        assert!(per_vm.contains(&3), "some are in three VPGs");
        assert!(world.vpgs.iter().any(|v| v.status == "Initializing"));
        assert!(
            world
                .vpgs
                .iter()
                .any(|v| v.protected_site != v.recovery_site)
        );
        assert!(
            world
                .vpgs
                .iter()
                .any(|v| v.protected_site == v.recovery_site)
        );
    }
}
