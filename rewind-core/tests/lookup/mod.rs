//! find_protection at scale: on a site of 10,000 VMs a lookup asks the ZVM for the VM it means (its
//! filters), finds it by every kind of query with every VPG it is in, and a guard reads the VPGs it
//! tags when it runs, whatever the client keeps of the site's inventory.

use std::collections::{BTreeSet, HashMap};

use serde_json::{Value, json};
use zvm_sim::test_kit::Site;
use zvm_sim::{Options, WorldSpec};

use crate::common::{Sites, TestEnv, request};
use rewind_core::{Outcome, Verdict};

/// A generated world of `vms` VMs, both sites configured.
async fn world_of(vms: usize) -> (TestEnv, WorldSpec) {
    let world = WorldSpec::generate(vms, 9);
    let options = Options {
        world: world.clone(),
        ..Options::for_tests(9)
    };
    (TestEnv::start_with(options, Sites::Both).await, world)
}

/// A VM of `world` alone under its name, in `vpgs` VPGs, at the local site.
fn vm_in(world: &WorldSpec, vpgs: usize) -> (String, BTreeSet<String>) {
    let mut holding: HashMap<&str, BTreeSet<String>> = HashMap::new();
    for vpg in &world.vpgs {
        for vm in &vpg.vms {
            holding.entry(vm).or_default().insert(vpg.name.clone());
        }
    }
    let vm = world
        .vms
        .iter()
        .filter(|v| v.site == world.sites[0].name)
        .filter(|v| {
            holding
                .get(v.name.as_str())
                .is_some_and(|h| h.len() == vpgs)
        })
        .nth(7)
        .expect("the generated world has such a VM");
    (vm.name.clone(), holding[vm.name.as_str()].clone())
}

/// The whole listing's rows of `vm` at the local site, as the ZVM gives them.
async fn rows_of(env: &TestEnv, vm: &str) -> Vec<Value> {
    let site = Site::service(env.control.http(), &env.sim.local().url).await;
    let all = site.get_ok("/v1/vms").await;
    let rows: Vec<Value> = all
        .as_array()
        .expect("a listing")
        .iter()
        .filter(|r| r["VmName"] == json!(vm))
        .cloned()
        .collect();
    assert!(!rows.is_empty(), "{vm} is listed");
    rows
}

/// The `GET /v1/vms` calls both sites received, as their query strings (`None` for a whole listing).
async fn vm_listings(env: &TestEnv) -> Vec<Option<String>> {
    env.control
        .calls()
        .await
        .into_iter()
        .filter(|c| c["Method"] == json!("GET") && c["Path"] == json!("/v1/vms"))
        .map(|c| c["Query"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test]
async fn on_a_site_of_ten_thousand_vms_a_name_a_host_name_an_address_and_an_identifier_find_the_vm_in_every_vpg()
 {
    let (env, world) = world_of(10_000).await;
    let (vm, vpgs) = vm_in(&world, 3);
    let rows = rows_of(&env, &vm).await;
    let id = rows[0]["VmIdentifier"].as_str().unwrap().to_string();
    let address = rows[0]["VmNetworkInformation"]["NetworkAdapters"][0]["IpAddresses"][0]
        .as_str()
        .expect("the VM has an address")
        .to_string();
    let host = format!("{}.corp.example.com", vm.to_uppercase());
    for query in [vm.as_str(), host.as_str(), address.as_str(), id.as_str()] {
        let found = env.rewind.find_protection(query).await.unwrap();
        assert_eq!(found.vm.name, vm, "{query}");
        assert_eq!(found.vm.id, id, "{query}");
        let names: BTreeSet<String> = found.vpgs.iter().map(|v| v.vpg_name.clone()).collect();
        assert_eq!(names, vpgs, "{query} finds every VPG the VM is in, once");
    }
}

#[tokio::test]
async fn a_lookup_by_name_asks_for_that_name_and_reads_no_whole_listing() {
    let (env, world) = world_of(1_000).await;
    let (vm, _) = vm_in(&world, 1);
    env.control.clear_calls().await;
    env.rewind.find_protection(&vm).await.unwrap();
    let host = format!("{vm}.corp.example.com");
    env.rewind.find_protection(&host).await.unwrap();
    let listings = vm_listings(&env).await;
    assert!(
        listings.iter().all(Option::is_some),
        "no unfiltered GET /v1/vms: {listings:?}"
    );
    assert!(
        listings.contains(&Some(format!("vmName={vm}"))),
        "{listings:?}"
    );
    assert!(
        listings.contains(&Some(format!("vmIdentifier={host}"))),
        "{listings:?}"
    );
    let inventories = env.control.calls_to("/v1/virtualizationsites/").await;
    assert_eq!(
        inventories.len(),
        2,
        "one inventory read per site, kept for the second lookup: {inventories:?}"
    );
}

#[tokio::test]
async fn a_lookup_by_address_reads_the_rows_it_found_again_by_identifier() {
    let (env, world) = world_of(1_000).await;
    let (vm, _) = vm_in(&world, 1);
    let rows = rows_of(&env, &vm).await;
    let address = rows[0]["VmNetworkInformation"]["NetworkAdapters"][0]["IpAddresses"][0]
        .as_str()
        .unwrap()
        .to_string();
    let id = rows[0]["VmIdentifier"].as_str().unwrap();
    env.control.clear_calls().await;
    env.rewind.find_protection(&address).await.unwrap();
    let listings = vm_listings(&env).await;
    assert!(
        listings.contains(&None),
        "an address needs the whole listing: {listings:?}"
    );
    assert!(
        listings.contains(&Some(format!("vmIdentifier={id}"))),
        "and the VM's rows are read again by identifier: {listings:?}"
    );
}

#[tokio::test]
async fn a_guard_tags_by_what_the_zvm_says_now_not_by_what_the_client_kept() {
    let env = TestEnv::start(21).await;
    // The first lookup keeps Boston's inventory; then web-dr stops protecting.
    let before = env.rewind.find_protection("web-01").await.unwrap();
    assert_eq!(before.protecting().count(), 3);
    let web_dr = env.vpg_id("web-dr").await;
    env.control
        .pin_status(&web_dr, json!("NotMeetingSLA"), json!("DeltaSync"))
        .await;
    let report = env
        .rewind
        .guard(
            request("web-01", "after-the-change"),
            &rewind_core::NoProgress,
        )
        .await
        .unwrap();
    assert_eq!(report.verdict, Verdict::Guarded, "{}", report.summary());
    let tagged: BTreeSet<&str> = report
        .vpgs
        .iter()
        .filter(|v| matches!(v.outcome, Outcome::Tagged { .. }))
        .map(|v| v.vpg_name.as_str())
        .collect();
    assert_eq!(tagged, BTreeSet::from(["web-archive", "web-local"]));
    assert!(
        env.insert_tasks()
            .await
            .iter()
            .all(|(_, vpg, _)| vpg != &web_dr)
    );
}

#[tokio::test]
async fn many_lookups_at_once_in_a_small_site_share_one_listing_and_each_finds_its_vm() {
    let (env, world) = world_of(100).await;
    let (first, _) = vm_in(&world, 1);
    // The first lookup learns the sites' sizes (their inventories).
    env.rewind.find_protection(&first).await.unwrap();
    let protected: std::collections::HashSet<&str> = world
        .vpgs
        .iter()
        .flat_map(|v| v.vms.iter().map(String::as_str))
        .collect();
    let names: Vec<String> = world
        .vms
        .iter()
        .filter(|v| protected.contains(v.name.as_str()))
        .take(24)
        .map(|v| v.name.clone())
        .collect();
    env.control.clear_calls().await;
    let finds = names.iter().map(|vm| {
        let rewind = env.rewind.clone();
        let vm = vm.clone();
        tokio::spawn(async move { (vm.clone(), rewind.find_protection(&vm).await) })
    });
    for found in futures::future::join_all(finds).await {
        let (vm, found) = found.unwrap();
        assert_eq!(found.unwrap().vm.name, vm);
    }
    let listings = vm_listings(&env).await;
    let whole = listings.iter().filter(|q| q.is_none()).count();
    assert!(
        whole >= 1,
        "24 lookups in a site of 100 VMs share a listing: {listings:?}"
    );
    assert!(
        listings.len() < 2 * names.len(),
        "fewer reads than one per lookup and site: {listings:?}"
    );
}
