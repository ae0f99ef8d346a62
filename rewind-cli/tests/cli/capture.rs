//! `rewind capture` of an appliance (the simulator over HTTPS, its self-signed certificates trusted):
//! a world file that, served again by zvm-sim, answers the same inventory (the default world and a
//! generated world of 1,000 VMs); anonymized, the same shape with no original name or address
//! anywhere in the file. And `rewind parity`, which finds no difference between a site and the
//! simulator serving its capture.

use std::collections::BTreeSet;

use serde_json::Value;
use zvm_sim::test_kit::{Site, trusting_client};
use zvm_sim::{Options, WorldSpec};

use crate::env::TestEnv;
use crate::trust::{over_tls_with, trust_denver};

/// A simulator over HTTPS with `options`, both of its sites trusted by the configuration: the
/// appliance the captures read. The folder keeps its certificates.
async fn appliance(options: Options) -> (TestEnv, tempfile::TempDir) {
    let certs = tempfile::tempdir().unwrap();
    let (env, boston, _) = over_tls_with(options, certs.path()).await;
    env.rewind(&["trust", "boston", "--fingerprint", &boston])
        .await
        .expect_code(0);
    trust_denver(&env).await;
    (env, certs)
}

/// What a site answers of its inventory, one line per thing, identifiers left out (they come from
/// the seed): VPGs with their settings, `/v1/vms` rows with sizes, OS and address, the VMs no VPG
/// protects, hosts and datastores.
async fn inventory(site: &Site) -> BTreeSet<String> {
    let list = |v: Value| v.as_array().cloned().unwrap_or_default();
    let mut lines = BTreeSet::new();
    for vpg in list(site.get_ok("/v1/vpgs").await) {
        lines.insert(format!(
            "vpg {} {}->{} status {}/{} rpo {} history {} priority {} vms {}",
            vpg["VpgName"],
            vpg["ProtectedSiteName"],
            vpg["RecoverySiteName"],
            vpg["Status"],
            vpg["SubStatus"],
            vpg["ConfiguredRpoSeconds"],
            vpg["HistoryStatusApi"]["ConfiguredHistoryInMinutes"],
            vpg["Priority"],
            vpg["VmsCount"]
        ));
    }
    for row in list(site.get_ok("/v1/vms").await) {
        lines.insert(format!(
            "row {} in {} at {} cpus {} memory {} disk {} os {} ip {}",
            row["VmName"],
            row["VpgName"],
            row["ProtectedSiteName"],
            row["CpuCoresNum"],
            row["MemorySizeInMB"],
            row["ProvisionedStorageInMB"],
            row["GuestOs"],
            row["VmNetworkInformation"]["NetworkAdapters"][0]["IpAddresses"][0]
        ));
    }
    for vsite in list(site.get_ok("/v1/virtualizationsites").await) {
        let id = vsite["SiteIdentifier"].as_str().unwrap();
        let name = &vsite["VirtualizationSiteName"];
        for vm in list(
            site.get_ok(&format!("/v1/virtualizationsites/{id}/vms"))
                .await,
        ) {
            lines.insert(format!(
                "unprotected {} at {name} os {}",
                vm["VmName"], vm["GuestOs"]
            ));
        }
        for host in list(
            site.get_ok(&format!("/v1/virtualizationsites/{id}/hosts"))
                .await,
        ) {
            lines.insert(format!("host {} at {name}", host["VirtualizationHostName"]));
        }
        for ds in list(
            site.get_ok(&format!("/v1/virtualizationsites/{id}/datastores"))
                .await,
        ) {
            lines.insert(format!("datastore {} at {name}", ds["DatastoreName"]));
        }
    }
    lines
}

/// Both sites' inventories.
async fn both(sim: &zvm_sim::Simulator) -> BTreeSet<String> {
    let http = trusting_client(sim);
    let (boston, denver) = (&sim.local().url, &sim.peer().url);
    let mut all = inventory(&Site::login(&http, boston, "admin", "admin").await).await;
    all.extend(inventory(&Site::login(&http, denver, "admin", "admin").await).await);
    all
}

/// Captures `env`'s sites into a file (with `extra` arguments); the file's text and its world.
async fn captured(env: &TestEnv, extra: &[&str]) -> (String, WorldSpec) {
    let out = env.dir.path().join(format!("world{}.toml", extra.len()));
    let out_text = out.display().to_string();
    let mut args = vec!["capture", "--out", &out_text];
    args.extend_from_slice(extra);
    env.rewind(&args).await.expect_code(0);
    let text = std::fs::read_to_string(&out).unwrap();
    let world = WorldSpec::from_file(&out).unwrap_or_else(|e| panic!("{e}\n{text}"));
    (text, world)
}

/// `world` served by a fresh simulator; its inventory.
async fn served(world: WorldSpec, seed: u64) -> BTreeSet<String> {
    let sim = zvm_sim::start(Options {
        world,
        ..Options::for_tests(seed)
    })
    .await
    .unwrap();
    let seen = both(&sim).await;
    sim.shutdown().await;
    seen
}

#[tokio::test]
async fn a_captured_default_world_served_again_answers_the_same_inventory() {
    let (env, _certs) = appliance(Options::for_tests(91)).await;
    let original = both(&env.sim).await;
    let (text, world) = captured(&env, &[]).await;
    for secret in ["rewind-secret", "password", "client_secret", "admin"] {
        assert!(
            !text.contains(secret),
            "no account or credential in the file: {secret}"
        );
    }
    assert_eq!(served(world, 92).await, original);
    let again = env
        .rewind(&[
            "capture",
            "--out",
            &env.dir.path().join("world0.toml").display().to_string(),
        ])
        .await;
    again.expect_code(2);
    assert!(
        again.one_error_line().contains("never writes over"),
        "{}",
        again.stderr
    );
}

#[tokio::test]
async fn a_captured_generated_world_of_1000_vms_served_again_answers_the_same_inventory() {
    let (env, _certs) = appliance(Options {
        world: WorldSpec::generate(1000, 93),
        ..Options::for_tests(93)
    })
    .await;
    let original = both(&env.sim).await;
    let (_, world) = captured(&env, &[]).await;
    assert_eq!(world.vms.len(), 1000);
    assert_eq!(served(world, 94).await, original);
}

#[tokio::test]
async fn an_anonymized_capture_keeps_the_shape_and_no_original_name_or_address() {
    let (env, _certs) = appliance(Options::for_tests(95)).await;
    let original = both(&env.sim).await;
    let (plain_text, plain) = captured(&env, &[]).await;
    let (text, world) = captured(&env, &["--anonymize"]).await;
    for secret in plain
        .sites
        .iter()
        .map(|s| s.name.clone())
        .chain(plain.vms.iter().map(|v| v.name.clone()))
        .chain(plain.vpgs.iter().map(|v| v.name.clone()))
        .chain(
            plain
                .sites
                .iter()
                .flat_map(|s| s.hosts.clone().into_iter().chain(s.datastores.clone())),
        )
        .chain(plain.vms.iter().filter_map(|v| v.ip.clone()))
        .chain(plain.sites.iter().map(|s| s.location.clone()))
    {
        assert!(
            !text.contains(&format!("\"{secret}\"")),
            "{secret} is in the anonymized file"
        );
    }
    assert!(
        plain_text.contains("\"web-01\""),
        "the plain capture names it"
    );
    let shape = |lines: &BTreeSet<String>| -> Vec<(String, usize)> {
        let mut kinds: std::collections::BTreeMap<String, usize> = Default::default();
        for line in lines {
            *kinds
                .entry(line.split(' ').next().unwrap().to_owned())
                .or_default() += 1;
        }
        kinds.into_iter().collect()
    };
    let anonymized = served(world, 96).await;
    assert_eq!(
        shape(&anonymized),
        shape(&original),
        "the same numbers of each thing"
    );
    let settings = |lines: &BTreeSet<String>| -> Vec<String> {
        let mut kept: Vec<String> = lines
            .iter()
            .filter(|l| l.starts_with("vpg "))
            .map(|l| l.split_once(" status ").unwrap().1.to_owned())
            .collect();
        kept.sort();
        kept
    };
    assert_eq!(
        settings(&anonymized),
        settings(&original),
        "statuses, RPOs, histories, sizes kept"
    );
}

#[tokio::test]
async fn parity_finds_no_difference_between_a_site_and_the_simulator_serving_its_capture() {
    let (env, _certs) = appliance(Options::for_tests(97)).await;
    let (_, world) = captured(&env, &[]).await;
    let sim = zvm_sim::start(Options {
        world,
        ..Options::for_tests(98)
    })
    .await
    .unwrap();
    let report = env.dir.path().join("parity.txt");
    let report_text = report.display().to_string();
    for site in ["boston", "denver"] {
        let url = if site == "boston" {
            &sim.local().url
        } else {
            &sim.peer().url
        };
        let (run, json) = env.rewind_json(&["parity", site, "--against", url]).await;
        run.expect_code(0);
        assert_eq!(
            json["result"]["differences"],
            serde_json::json!([]),
            "{site}: {json:#}"
        );
        assert!(json["result"]["endpoints"].as_array().unwrap().len() >= 15);
    }
    let run = env
        .rewind(&[
            "parity",
            "boston",
            "--against",
            &sim.local().url,
            "--out",
            &report_text,
        ])
        .await;
    run.expect_code(0);
    let text = std::fs::read_to_string(&report).unwrap();
    assert!(text.contains("# no difference in shape"), "{text}");
    sim.shutdown().await;
}

#[tokio::test]
async fn parity_finds_no_difference_with_the_simulator_serving_an_anonymized_capture() {
    let (env, _certs) = appliance(Options::for_tests(99)).await;
    let (_, world) = captured(&env, &["--anonymize"]).await;
    let sim = zvm_sim::start(Options {
        world,
        ..Options::for_tests(100)
    })
    .await
    .unwrap();
    let (run, json) = env
        .rewind_json(&["parity", "boston", "--against", &sim.local().url])
        .await;
    run.expect_code(0);
    assert_eq!(
        json["result"]["differences"],
        serde_json::json!([]),
        "{json:#}"
    );
    sim.shutdown().await;
}
