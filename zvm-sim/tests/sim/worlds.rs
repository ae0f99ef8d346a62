//! Worlds: the documented example in TOML and JSON, generated worlds, and a world no ZVM could
//! have refused with an error that says why; through the library and through the binary.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use zvm_sim::test_kit::{Site, spawn_with, texts};
use zvm_sim::{Options, StartError, WorldError, WorldSpec};

use crate::binary::start_binary;

fn world_file(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("worlds")
        .join(name)
}

#[test]
fn the_example_world_reads_the_same_from_toml_and_json() {
    let toml = WorldSpec::from_file(&world_file("example.toml")).unwrap();
    let json = WorldSpec::from_file(&world_file("example.json")).unwrap();
    assert_eq!(toml, json);
    assert_eq!(toml.sites[0].name, "Seattle");
    let default = WorldSpec::from_file(&world_file("default.toml")).unwrap();
    assert_eq!(
        default,
        WorldSpec::default_world(),
        "the embedded world is the file"
    );
}

#[tokio::test]
async fn the_simulator_serves_a_world_from_a_file() {
    let world = WorldSpec::from_file(&world_file("example.json")).unwrap();
    let t = spawn_with(Options {
        world,
        ..Options::for_tests(71)
    })
    .await;
    assert_eq!(t.sim.local().name, "Seattle");
    let seattle = Site::login(&t.http, t.boston_url(), "admin", "admin").await;
    let rows = seattle.get_ok("/v1/vms?vmName=shop-web").await;
    let vpgs: Vec<&str> = texts(&rows, "VpgName");
    assert_eq!(vpgs, ["shop-local", "shop-dr"]);
}

#[tokio::test]
async fn a_world_with_a_vm_in_a_fourth_vpg_is_refused_with_the_vm_and_its_vpgs_named() {
    let mut world = WorldSpec::from_file(&world_file("example.toml")).unwrap();
    for name in ["shop-extra-1", "shop-extra-2"] {
        let mut extra = world.vpgs[0].clone();
        extra.name = name.to_owned();
        world.vpgs.push(extra);
    }
    let error = zvm_sim::start(Options {
        world,
        ..Options::for_tests(72)
    })
    .await
    .expect_err("a VM can be in at most three VPGs");
    assert!(
        matches!(
            error,
            StartError::World(WorldError::TooManyVpgs { count: 4, .. })
        ),
        "{error}"
    );
    let message = error.to_string();
    for part in [
        "VM 'shop-web' at Seattle",
        "shop-local, shop-dr, shop-extra-1, shop-extra-2",
    ] {
        assert!(message.contains(part), "{message}");
    }
}

#[tokio::test]
async fn a_generated_world_is_served_and_is_the_same_for_the_same_seed() {
    let rows = |seed| async move {
        let t = spawn_with(Options {
            world: WorldSpec::generate(400, seed),
            time_scale: 0.0,
            ..Options::for_tests(seed)
        })
        .await;
        let site = t.boston().await;
        let rows = site.get_ok("/v1/vms").await;
        serde_json::to_string(&rows)
            .unwrap()
            .replace(t.boston_url(), "http://local")
    };
    let first = rows(73).await;
    assert_eq!(first, rows(73).await);
    let parsed: serde_json::Value = serde_json::from_str(&first).unwrap();
    assert!(
        parsed.as_array().unwrap().len() > 300,
        "hundreds of VM rows"
    );
}

/// Runs the binary with `args`; returns its first `lines` stdout lines, or its stderr if it exits.
async fn run_binary(args: &[&str], lines: usize) -> Result<Vec<String>, String> {
    let (mut child, mut out) = start_binary(args, Stdio::piped());
    let mut read = Vec::new();
    while read.len() < lines {
        match tokio::time::timeout(Duration::from_secs(60), out.next_line())
            .await
            .expect("the binary answers in time")
            .unwrap()
        {
            Some(line) => read.push(line),
            None => {
                let output = child.wait_with_output().await.unwrap();
                return Err(String::from_utf8_lossy(&output.stderr).into_owned());
            }
        }
    }
    child.kill().await.unwrap();
    Ok(read)
}

#[tokio::test]
async fn the_binary_serves_world_files_and_generated_worlds_and_refuses_bad_ones() {
    let example = world_file("example.json");
    let lines = run_binary(&["--world", example.to_str().unwrap()], 3)
        .await
        .unwrap();
    assert!(
        lines[1].starts_with("Seattle listening on http://"),
        "{lines:?}"
    );
    assert!(
        lines[2].starts_with("Portland listening on http://"),
        "{lines:?}"
    );

    let generated = run_binary(&["--generate", "200", "--seed", "5"], 3)
        .await
        .unwrap();
    let again = run_binary(&["--generate", "200", "--seed", "5"], 3)
        .await
        .unwrap();
    let site = |line: &str| line.split(" listening on ").next().unwrap().to_owned();
    assert_eq!(site(&generated[1]), site(&again[1]), "named from the seed");

    let too_many = run_binary(&["--generate", "18446744073709551615"], 3)
        .await
        .expect_err("the binary refuses to generate that many VMs");
    assert!(
        too_many.contains("18446744073709551615 is not in 0..=100000"),
        "{too_many}"
    );

    let folder = tempfile::tempdir().unwrap();
    let bad = folder.path().join("bad.toml");
    let text = std::fs::read_to_string(world_file("example.toml"))
        .unwrap()
        .replace("vms = [\"reports\"]", "vms = [\"nobody\"]");
    std::fs::write(&bad, text).unwrap();
    let stderr = run_binary(&["--world", bad.to_str().unwrap()], 3)
        .await
        .expect_err("the binary refuses the world");
    assert!(stderr.contains("bad.toml"), "{stderr}");
    assert!(
        stderr.contains("VPG 'reports-back' lists the VM 'nobody'"),
        "{stderr}"
    );
}

#[tokio::test]
async fn a_world_file_gives_each_site_its_hosts_with_their_vras_and_its_datastores() {
    let mut world = WorldSpec::default_world();
    world.sites[1].hosts = vec!["esx-a".into(), "esx-b.other.example".into(), "esx-c".into()];
    world.sites[1].datastores = vec!["gold".into(), "silver".into(), "bronze".into()];
    let t = spawn_with(Options {
        world,
        ..Options::for_tests(7)
    })
    .await;
    let denver = t.denver().await;
    let vras = denver.get_ok("/v1/vras").await;
    assert_eq!(
        texts(&vras, "HostDisplayName"),
        [
            "esx-a.denver.example.internal",
            "esx-b.other.example",
            "esx-c.denver.example.internal"
        ],
        "one VRA per host; a name with a dot is kept whole"
    );
    let datastores = denver.get_ok("/v1/datastores").await;
    assert_eq!(
        texts(&datastores, "DatastoreName"),
        ["gold", "silver", "bronze"]
    );
    let rows = denver.get_ok("/v1/vms").await;
    let used: std::collections::BTreeSet<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["ProtectedSiteName"] == "Denver")
        .filter_map(|r| r["OwningDatastoreName"].as_str())
        .collect();
    assert!(!used.is_empty());
    assert!(
        used.iter()
            .all(|d| ["gold", "silver", "bronze"].contains(d)),
        "Denver's VMs are on Denver's datastores: {used:?}"
    );
}
