//! The bench world: the simulator's default world (so web-01 keeps its three VPGs, one local and two to
//! Denver) plus `distinct` VMs `bench-0000`, `bench-0001`, ... each alone in its own VPG, and `shared`
//! VMs `shared-0000`, ... that all sit in the one VPG [`SHARED_VPG`].
//!
//! The world is built here rather than generated with `--generate`, because a generated world groups
//! VMs into VPGs of one to six at random; these benches need exact shapes (N VMs in N VPGs, N VMs in one
//! VPG). Every added VPG replicates Boston → Denver and meets its SLA, so every guard tags.

use zvm_sim::{GuestOs, VmSpec, VpgSpec, WorldSpec};

/// The VM of the default world that is in three VPGs.
pub const WEB_01: &str = "web-01";
/// The VM of the default world that is in one protecting VPG only (app-tier).
pub const APP_01: &str = "app-01";
/// The VPG that every shared VM is in.
pub const SHARED_VPG: &str = "bench-shared";

/// The name of the `i`th VM that has a VPG of its own.
pub fn distinct_vm(i: usize) -> String {
    format!("bench-{i:04}")
}

/// The name of the `i`th VM of [`SHARED_VPG`].
pub fn shared_vm(i: usize) -> String {
    format!("shared-{i:04}")
}

/// The default world plus `distinct` VMs each in its own VPG and `shared` VMs in one VPG.
pub fn bench_world(distinct: usize, shared: usize) -> WorldSpec {
    let mut world = WorldSpec::default_world();
    let local = world.sites[0].name.clone();
    let peer = world.sites[1].name.clone();
    let vm = |name: String| VmSpec {
        name,
        site: local.clone(),
        os: GuestOs::Linux,
        cpus: 2,
        memory_mb: 4096,
        disk_gb: 40,
        ip: None,
    };
    let vpg = |name: String, vms: Vec<String>| VpgSpec {
        name,
        protected_site: local.clone(),
        recovery_site: peer.clone(),
        status: "MeetingSLA".into(),
        sub_status: "None".into(),
        history_minutes: 60,
        rpo_seconds: 300,
        priority: "Medium".into(),
        vms,
    };
    for i in 0..distinct {
        world.vms.push(vm(distinct_vm(i)));
        world
            .vpgs
            .push(vpg(format!("bench-vpg-{i:04}"), vec![distinct_vm(i)]));
    }
    if shared > 0 {
        let members: Vec<String> = (0..shared).map(shared_vm).collect();
        world.vms.extend(members.iter().cloned().map(vm));
        world.vpgs.push(vpg(SHARED_VPG.into(), members));
    }
    world
}

/// The sizes of the scale benches' worlds: the default world, then generated ones.
pub const SCALE_SIZES: [usize; 4] = [12, 1_000, 10_000, 100_000];

/// The seed of the scale benches' generated worlds.
pub const SCALE_SEED: u64 = 9;

/// The world of the scale bench of `vms` VMs (the default world for 12, else `--generate vms`), and
/// the VM guarded and found in it: one of the shape of the default world's app-01, alone under its
/// name, in exactly one VPG, which meets its SLA and is replicated locally at the local site. The
/// middle one of those, so that its place in the listings is not a best case.
pub fn scale_world(vms: usize) -> (WorldSpec, String) {
    if vms <= WorldSpec::default_world().vms.len() {
        return (WorldSpec::default_world(), APP_01.to_string());
    }
    let world = WorldSpec::generate(vms, SCALE_SEED);
    let local = &world.sites[0].name;
    let mut memberships = std::collections::HashMap::<&str, usize>::new();
    for vpg in &world.vpgs {
        for vm in &vpg.vms {
            *memberships.entry(vm.as_str()).or_default() += 1;
        }
    }
    let shaped: Vec<&String> = world
        .vpgs
        .iter()
        .filter(|v| v.status == "MeetingSLA" && v.sub_status == "None")
        .filter(|v| &v.protected_site == local && &v.recovery_site == local)
        .flat_map(|v| v.vms.iter())
        .filter(|vm| memberships.get(vm.as_str()) == Some(&1))
        .collect();
    let vm = shaped[shaped.len() / 2].clone();
    (world, vm)
}

/// How many rows the whole `/v1/vms` listing of a world has: one per VM and VPG.
pub fn listing_rows(world: &WorldSpec) -> usize {
    world.vpgs.iter().map(|v| v.vms.len()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bench_world_keeps_the_default_world_and_adds_exact_shapes() {
        let world = bench_world(3, 2);
        let default = WorldSpec::default_world();
        assert_eq!(world.vms.len(), default.vms.len() + 5);
        assert_eq!(world.vpgs.len(), default.vpgs.len() + 4);
        let web = world
            .vpgs
            .iter()
            .filter(|v| v.vms.iter().any(|m| m == WEB_01))
            .count();
        assert_eq!(web, 3, "web-01 stays in three VPGs");
        for i in 0..3 {
            let holding: Vec<&VpgSpec> = world
                .vpgs
                .iter()
                .filter(|v| v.vms.contains(&distinct_vm(i)))
                .collect();
            assert_eq!(holding.len(), 1);
            assert_eq!(holding[0].vms.len(), 1, "a distinct VM is alone in its VPG");
        }
        let shared = world.vpgs.iter().find(|v| v.name == SHARED_VPG).unwrap();
        assert_eq!(shared.vms, vec![shared_vm(0), shared_vm(1)]);
    }

    #[test]
    fn the_simulator_accepts_the_bench_world() {
        let options = zvm_sim::Options {
            world: bench_world(256, 64),
            ..zvm_sim::Options::for_tests(1)
        };
        assert!(zvm_sim::SimState::new(&options).is_ok());
    }

    #[test]
    fn the_scale_vm_is_alone_under_its_name_in_one_protecting_local_vpg() {
        for vms in [12, 1_000] {
            let (world, vm) = scale_world(vms);
            assert_eq!(world.vms.len(), vms);
            assert_eq!(world.vms.iter().filter(|v| v.name == vm).count(), 1);
            let holding: Vec<&VpgSpec> =
                world.vpgs.iter().filter(|v| v.vms.contains(&vm)).collect();
            assert_eq!(holding.len(), 1, "{vm} is in one VPG");
            assert_eq!(holding[0].status, "MeetingSLA");
            assert_eq!(holding[0].protected_site, world.sites[0].name);
            assert_eq!(holding[0].recovery_site, world.sites[0].name);
        }
    }

    #[test]
    fn without_shared_vms_there_is_no_shared_vpg() {
        let world = bench_world(1, 0);
        assert!(world.vpgs.iter().all(|v| v.name != SHARED_VPG));
    }
}
