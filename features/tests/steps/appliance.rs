//! The `@real-zvm` scenarios: the same steps against the simulator or a real appliance. They name "the
//! test VM" and "the test VPG" (from `REWIND_FEATURES_VM` / `REWIND_FEATURES_VPG`, or sql-01 and
//! sql-local on the simulator), read the appliance, and write only one tag into the test VPG.

use cucumber::{given, then, when};
use features::RewindWorld;
use serde_json::Value;

use super::fronts::{AGENT, cli_args, result};
use super::guard::operator_lists_tags;
use super::protection::vpg_names;

#[then("every site is reachable and has a version")]
async fn sites_reachable(world: &mut RewindWorld) {
    let sites = result(world).as_array().expect("a list of sites").clone();
    assert!(!sites.is_empty(), "at least one site");
    for s in sites {
        assert_eq!(s["reachable"], true, "{s}");
        assert!(s["version"].as_str().is_some_and(|v| !v.is_empty()), "{s}");
        assert!(s["error"].is_null(), "{s}");
    }
}

async fn look_up(world: &mut RewindWorld, vm: &str) {
    let args = cli_args(world, &format!("find {vm}"));
    world.rewind(args, None).await;
}

#[when("the operator looks up the test VM")]
async fn looks_up_test_vm(world: &mut RewindWorld) {
    let vm = world.test_vm();
    look_up(world, &vm).await;
}

#[given("the operator has looked up the test VM")]
async fn has_looked_up_test_vm(world: &mut RewindWorld) {
    let vm = world.test_vm();
    look_up(world, &vm).await;
    assert!(world.last().ok, "{vm} is found: {:#?}", world.last());
}

#[when("the operator looks up a VM that exists nowhere")]
async fn looks_up_nothing(world: &mut RewindWorld) {
    let name = format!(
        "rewind-acceptance-no-such-vm-{}",
        chrono::Utc::now().timestamp_millis()
    );
    look_up(world, &name).await;
}

#[then("the VM found is the test VM")]
async fn found_test_vm(world: &mut RewindWorld) {
    let vm = world.test_vm();
    let r = result(world);
    assert_eq!(r["query"], vm.as_str(), "{r}");
    // The test VM may be named any way find_protection takes it: by name, vmIdentifier, IP address
    // or host name (whose first label is the VM's name). The query always echoes it, so it is the VM
    // found that must answer to it.
    let name = r["vm"]["name"].as_str().unwrap_or_default();
    let id = r["vm"]["id"].as_str().unwrap_or_default();
    let by_address = r["vm"]["ip_addresses"]
        .as_array()
        .is_some_and(|ips| ips.iter().any(|ip| ip == vm.as_str()));
    let by_host_name = vm
        .split('.')
        .next()
        .is_some_and(|label| !name.is_empty() && label.eq_ignore_ascii_case(name));
    assert!(
        name.eq_ignore_ascii_case(&vm)
            || id.eq_ignore_ascii_case(&vm)
            || by_address
            || by_host_name,
        "the VM found is {vm}: {r}"
    );
}

#[when("the operator captures the ZVM and serves the capture with zvm-sim")]
async fn captures_and_serves(world: &mut RewindWorld) {
    let file = world.dir.path().join("capture.toml");
    let args = cli_args(world, &format!("capture --out \"{}\"", file.display()));
    let answer = world.rewind(args, None).await;
    assert!(answer.ok, "the capture succeeds: {answer:#?}");
    let spec = zvm_sim::WorldSpec::from_file(&file).expect("the capture is a world zvm-sim reads");
    let options = zvm_sim::Options {
        world: spec,
        ..zvm_sim::Options::for_tests(world.seed)
    };
    world.captured = Some(
        zvm_sim::start(options)
            .await
            .expect("zvm-sim serves the capture"),
    );
}

#[when("the operator compares the ZVM with that simulator")]
async fn compares_with_simulator(world: &mut RewindWorld) {
    // Against a real ZVM the `ZVM_*` environment configures it as the site named `default`.
    let site = if world.is_real() { "default" } else { "boston" };
    let against = world
        .captured
        .as_ref()
        .expect("a captured world served")
        .local()
        .url
        .clone();
    let report = world.dir.path().join("parity.txt");
    let line = format!(
        "parity {site} --against {against} --out \"{}\"",
        report.display()
    );
    let args = cli_args(world, &line);
    world.rewind(args, None).await;
}

#[then("the parity report is written, one line per difference")]
async fn parity_report_written(world: &mut RewindWorld) {
    let r = result(world);
    let differences = r["differences"].as_array().expect("differences").clone();
    let report =
        std::fs::read_to_string(world.dir.path().join("parity.txt")).expect("the report file");
    let lines: Vec<&str> = report.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(lines.len(), differences.len(), "{report}");
    for line in &lines {
        eprintln!("parity: {line}");
    }
    if !world.is_real() {
        assert!(
            differences.is_empty(),
            "the simulator against its own capture: {report}"
        );
    }
}

#[when("the agent finds the protection of the test VM")]
async fn agent_finds_test_vm(world: &mut RewindWorld) {
    let vm = world.test_vm();
    world
        .call("zerto_find_protection", serde_json::json!({"vm": vm}))
        .await;
}

#[then("the agent and the operator see the same VPGs")]
async fn same_vpgs(world: &mut RewindWorld) {
    let finds: Vec<&Value> = world
        .answers
        .iter()
        .filter(|a| a.ok)
        .filter_map(|a| a.result.as_ref())
        .filter(|r| r.get("vpgs").is_some())
        .collect();
    assert!(finds.len() >= 2, "two finds to compare");
    let ids = |r: &Value| -> Vec<String> {
        let mut v: Vec<String> = r["vpgs"]
            .as_array()
            .expect("VPGs")
            .iter()
            .map(|v| format!("{} {} {}", v["vpg_id"], v["vpg_name"], v["protecting"]))
            .collect();
        v.sort();
        v
    };
    let (operator, agent) = (finds[finds.len() - 2], finds[finds.len() - 1]);
    assert_eq!(ids(operator), ids(agent));
    assert_eq!(operator["vm"]["id"], agent["vm"]["id"]);
}

#[given("the test VPG is the only protecting VPG of the test VM")]
async fn only_protecting(world: &mut RewindWorld) {
    let vm = world.test_vm();
    let vpg = world.test_vpg();
    look_up(world, &vm).await;
    let answer = world.last();
    assert!(answer.ok, "{vm} is found: {answer:#?}");
    let protecting: Vec<String> = answer.result()["vpgs"]
        .as_array()
        .expect("VPGs")
        .iter()
        .filter(|v| v["protecting"] == true)
        .map(|v| v["vpg_name"].as_str().unwrap_or_default().to_string())
        .collect();
    // A guard tags every protecting VPG of the VM; the suite may tag only the one the user named.
    assert_eq!(
        protecting,
        vec![vpg.clone()],
        "refusing to guard {vm}: its protecting VPGs are {protecting:?} (all of {:?}), and only {vpg} may be tagged; name a VM whose only protecting VPG is {vpg}",
        vpg_names(answer.result())
    );
}

#[when("the operator guards the test VM for a new change")]
async fn guard_test_vm(world: &mut RewindWorld) {
    let vm = world.test_vm();
    let change = format!("acceptance-{}", chrono::Utc::now().format("%Y%m%dT%H%M%S"));
    world
        .kept
        .insert("new change".into(), change.clone().into_bytes());
    let line = format!(
        "guard {vm} --agent {AGENT} --action \"rewind acceptance suite\" --change {change}"
    );
    let args = cli_args(world, &line);
    world.rewind(args, None).await;
}

fn new_change(world: &RewindWorld) -> String {
    String::from_utf8(world.kept["new change"].clone()).expect("a change id")
}

#[then("the test VPG is tagged, and its insert task Completed at the ZVM")]
async fn test_vpg_tagged(world: &mut RewindWorld) {
    let vpg = world.test_vpg();
    let v = world.last().vpg(&vpg).clone();
    assert_eq!(v["outcome"], "tagged", "{v}");
    let task_id = v["task_id"].as_str().expect("a task id").to_string();
    let state = match &world.mode {
        features::world::Mode::Real(real) => {
            let rewind = real.rewind(world.dir.path());
            let client = rewind.clients()[0].clone();
            client
                .task(&task_id)
                .await
                .unwrap_or_else(|e| panic!("the ZVM answers for task {task_id}: {e}"))
                .state()
        }
        features::world::Mode::Simulator => world
            .sim()
            .await
            .tasks()
            .await
            .iter()
            .find(|t| t["TaskIdentifier"] == task_id.as_str())
            .and_then(|t| t["State"].as_i64()),
    };
    assert_eq!(state, Some(6), "the ZVM's own task {task_id} Completed");
}

#[then("the operator sees the new change's tag in the test VPG")]
async fn sees_new_tag(world: &mut RewindWorld) {
    let vm = world.test_vm();
    let vpg = world.test_vpg();
    let change = new_change(world);
    let answer = operator_lists_tags(world, &vm, Some(&change)).await;
    let v = answer.vpg(&vpg);
    let tags = v["tags"].as_array().expect("tags");
    assert_eq!(tags.len(), 1, "one tag of {change} in {vpg}: {v}");
    assert_eq!(tags[0]["parts"]["change_id"], change.as_str(), "{v}");
}
