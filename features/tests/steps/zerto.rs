//! The simulated ZVM: how a scenario sets it up (timings, statuses, resyncs, faults, the clock, another
//! client's insert) and what it really did (its tasks and its call log), which the scenarios check
//! rather than trusting what a front printed.

use std::time::Duration;

use chrono::{DateTime, Utc};
use cucumber::{given, then, when};
use features::RewindWorld;
use features::sim::INSERT;
use serde_json::{Value, json};

use super::words::names;

// --- Setting Zerto up -------------------------------------------------------------------------------

#[given(expr = "each Zerto task takes {int} ms")]
#[when(expr = "each Zerto task takes {int} ms")]
async fn task_duration(world: &mut RewindWorld, ms: u64) {
    world.sim().await.task_duration(ms).await;
}

#[given(expr = "Zerto shows VPG {string} as Initializing")]
async fn initializing(world: &mut RewindWorld, vpg: String) {
    world.sim().await.pin_status(&vpg, 0.into(), 1.into()).await;
}

#[given(expr = "Zerto shows VPG {string} as paused by a person")]
async fn paused(world: &mut RewindWorld, vpg: String) {
    // MeetingSLA / ReplicationPausedUserInitiated, as `POST /v1/vpgs/{id}/pause` leaves it.
    world
        .sim()
        .await
        .pin_status(&vpg, 1.into(), 25.into())
        .await;
}

#[when(expr = "someone sets VPG {string} to keep {int} hour(s) of history in Zerto")]
async fn set_history(world: &mut RewindWorld, vpg: String, hours: u64) {
    let (zerto, path) = vpg_settings(world, &vpg).await;
    let mut basic = zerto.get_ok(&format!("{path}/basic")).await;
    basic["JournalHistoryInHours"] = json!(hours);
    let (status, _) = zerto
        .request(reqwest::Method::PUT, &format!("{path}/basic"), Some(&basic))
        .await;
    assert!(status.is_success(), "the new history is taken: {status}");
    commit(world, &zerto, &path).await;
}

#[when(expr = "someone adds VM {string} to VPG {string} in Zerto")]
async fn add_vm(world: &mut RewindWorld, vm: String, vpg: String) {
    let (zerto, path) = vpg_settings(world, &vpg).await;
    let rows = zerto.get_ok(&format!("/v1/vms?vmName={vm}")).await;
    let vm_id = rows[0]["VmIdentifier"]
        .as_str()
        .expect("the VM is protected");
    let (status, _) = zerto
        .post(&format!("{path}/vms"), &json!({"vmIdentifier": vm_id}))
        .await;
    assert!(status.is_success(), "the VM is added: {status}");
    commit(world, &zerto, &path).await;
}

#[when(expr = "someone deletes VPG {string} in Zerto")]
async fn delete_vpg(world: &mut RewindWorld, vpg: String) {
    let control = world.sim().await;
    let zerto = zvm_sim::test_kit::Site::service(control.http(), control.base()).await;
    let vpg_id = zerto.vpg_id(&vpg).await;
    let (status, task) = zerto.delete(&format!("/v1/vpgs/{vpg_id}")).await;
    assert!(status.is_success(), "the removal starts: {status} {task}");
    follow(world, &zerto, task.as_str().expect("the removal's task")).await;
}

/// A VPG's settings taken out through the ZVM's own API, as Zerto's automation edits a VPG: the
/// ZVM, and the document's path.
async fn vpg_settings(world: &mut RewindWorld, vpg: &str) -> (zvm_sim::test_kit::Site, String) {
    let control = world.sim().await;
    let zerto = zvm_sim::test_kit::Site::service(control.http(), control.base()).await;
    let vpg_id = zerto.vpg_id(vpg).await;
    let (_, settings) = zerto
        .post("/v1/vpgSettings", &json!({"vpgIdentifier": vpg_id}))
        .await;
    let path = format!(
        "/v1/vpgSettings/{}",
        settings.as_str().expect("the settings' id")
    );
    (zerto, path)
}

/// Commits the settings at `path` and follows the commit's task to its end.
async fn commit(world: &mut RewindWorld, zerto: &zvm_sim::test_kit::Site, path: &str) {
    let (_, task) = zerto.post(&format!("{path}/commit"), &json!({})).await;
    follow(world, zerto, task.as_str().expect("the commit's task")).await;
}

/// Moves Zerto's clock until the task ends; it must complete.
async fn follow(world: &mut RewindWorld, zerto: &zvm_sim::test_kit::Site, task: &str) {
    let control = world.sim().await;
    while zerto.task_state(task).await == 1 {
        control.advance(1.0).await;
    }
    assert_eq!(zerto.task_state(task).await, 6, "the task {task} completed");
}

#[when(expr = "Zerto resyncs VPG {string} for {int} seconds")]
async fn resync(world: &mut RewindWorld, vpg: String, seconds: u64) {
    world.sim().await.resync_as(&vpg, seconds, "FullSync").await;
}

#[given(
    expr = "a burst of writes as big as {int} minutes of its usual writing fills the journal of VPG {string}"
)]
async fn journal_burst(world: &mut RewindWorld, minutes: u64, vpg: String) {
    let journal = world.sim().await.journal_burst(&vpg, minutes as f64).await;
    assert_eq!(
        journal["Full"], true,
        "the journal is at its hard limit: {journal}"
    );
}

#[when(expr = "Zerto's clock moves on {int} seconds")]
async fn clock_seconds(world: &mut RewindWorld, seconds: u64) {
    world.sim().await.advance(seconds as f64).await;
}

#[when(expr = "Zerto's clock moves on {int} minutes")]
async fn clock_minutes(world: &mut RewindWorld, minutes: u64) {
    world.sim().await.advance((minutes * 60) as f64).await;
}

#[given(expr = "another client has just inserted a tagged checkpoint into {string}")]
async fn another_client_inserts(world: &mut RewindWorld, vpg: String) {
    // The agent's session is open before the other insert starts, so the guard that follows meets
    // the insert still running however slowly the server starts on a busy machine.
    world.agent().await;
    let sim = world.sim().await.clone();
    let task = sim
        .insert_as_another_client(&vpg, "nightly | by the operations team")
        .await;
    // The scenario is about a guard that meets this insert still running.
    let t = sim
        .wait_for_task("the other client's insert", Duration::from_secs(5), |t| {
            t["TaskIdentifier"] == task.as_str()
        })
        .await;
    assert_eq!(t["State"], 1, "the other client's insert runs: {t}");
}

#[when(expr = "Zerto starts a resync of VPG {string} while its insert runs")]
async fn resync_while_inserting(world: &mut RewindWorld, vpg: String) {
    let sim = world.sim().await.clone();
    sim.wait_for_task(
        &format!("an insert into {vpg}"),
        Duration::from_secs(30),
        |t| t["Type"] == INSERT && t["VpgName"] == vpg.as_str() && t["State"] == 1,
    )
    .await;
    sim.resync_as(&vpg, 30, "FullSync").await;
}

#[given("Zerto will lose its answer to the next tagged-checkpoint insert")]
async fn lose_next_insert(world: &mut RewindWorld) {
    world
        .sim()
        .await
        .fault(json!({"Method": "POST", "Path": "/v1/vpgs/*/checkpoints",
            "Action": "LoseResponse", "Count": 1}))
        .await;
}

#[given(expr = "Zerto answers the next tagged-checkpoint insert with {int}")]
async fn next_insert_status(world: &mut RewindWorld, status: u16) {
    world
        .sim()
        .await
        .fault(json!({"Method": "POST", "Path": "/v1/vpgs/*/checkpoints",
            "Action": "Respond", "Status": status, "Count": 1}))
        .await;
}

#[given(expr = "Zerto answers every tagged-checkpoint insert into {string} with {int}")]
async fn every_insert_status(world: &mut RewindWorld, vpg: String, status: u16) {
    let sim = world.sim().await.clone();
    let id = sim.vpg_id(&vpg).await;
    sim.fault(
        json!({"Method": "POST", "Path": format!("/v1/vpgs/{id}/checkpoints"),
        "Action": "Respond", "Status": status}),
    )
    .await;
}

#[given(expr = "Zerto answers the next {int} reads of {string} with {int}")]
async fn next_reads_status(world: &mut RewindWorld, count: u32, path: String, status: u16) {
    world
        .sim()
        .await
        .fault(json!({"Method": "GET", "Path": path, "Action": "Respond",
            "Status": status, "Count": count}))
        .await;
}

#[given(expr = "every read at Denver takes {int} ms longer")]
async fn denver_latency(world: &mut RewindWorld, ms: u64) {
    world
        .sim()
        .await
        .fault(json!({"Method": "GET", "Path": "/v1/**", "Site": "Denver",
            "Action": "Latency", "LatencyMs": ms}))
        .await;
}

#[given("Boston's Keycloak restarts when the next task is read")]
async fn keycloak_restart(world: &mut RewindWorld) {
    world
        .sim()
        .await
        .fault(
            json!({"Method": "GET", "Path": "/v1/tasks/*", "Site": "Boston",
            "Action": "RevokeTokens", "Count": 1}),
        )
        .await;
}

// --- What Zerto did -----------------------------------------------------------------------------

#[then("Zerto ran no tagged-checkpoint insert")]
async fn no_insert(world: &mut RewindWorld) {
    let inserts = world.sim().await.inserts(None).await;
    assert!(inserts.is_empty(), "Zerto ran inserts: {inserts:#?}");
}

#[then(expr = "Zerto ran no tagged-checkpoint insert into {string}")]
async fn no_insert_into(world: &mut RewindWorld, vpg: String) {
    let inserts = world.sim().await.inserts(Some(&vpg)).await;
    assert!(
        inserts.is_empty(),
        "Zerto ran inserts into {vpg}: {inserts:#?}"
    );
}

#[then(
    expr = "Zerto ran exactly one tagged-checkpoint insert into each of {string}, and each Completed"
)]
async fn one_insert_each(world: &mut RewindWorld, vpgs: String) {
    let sim = world.sim().await.clone();
    for vpg in names(&vpgs) {
        let inserts = sim.inserts(Some(&vpg)).await;
        assert_eq!(
            inserts.len(),
            1,
            "exactly one insert into {vpg}: {inserts:#?}"
        );
        assert_eq!(
            inserts[0]["State"], 6,
            "the insert into {vpg} Completed: {}",
            inserts[0]
        );
    }
}

#[then("no tagged-checkpoint insert failed at Zerto")]
async fn no_failed_insert(world: &mut RewindWorld) {
    let failed = inserts_where(world, |t| t["State"] != 6).await;
    assert!(
        failed.is_empty(),
        "inserts that did not Complete: {failed:#?}"
    );
}

/// The insert tasks Zerto ran that `keep` keeps.
async fn inserts_where(world: &mut RewindWorld, keep: impl Fn(&Value) -> bool) -> Vec<Value> {
    let mut inserts = world.sim().await.inserts(None).await;
    inserts.retain(|t| keep(t));
    inserts
}

fn time(v: &Value) -> Option<DateTime<Utc>> {
    v.as_str().and_then(|s| s.parse().ok())
}

#[then(expr = "Zerto never ran two tagged-checkpoint inserts into {string} at the same time")]
async fn never_overlapping(world: &mut RewindWorld, vpg: String) {
    let mut inserts = world.sim().await.inserts(Some(&vpg)).await;
    assert!(!inserts.is_empty(), "no insert into {vpg} at all");
    inserts.sort_by_key(|t| time(&t["Started"]));
    for pair in inserts.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        let a_end = time(&a["Completed"]).unwrap_or_else(|| panic!("{a} never ended"));
        let b_start = time(&b["Started"]).expect("a start time");
        assert!(
            a_end <= b_start,
            "two inserts ran into {vpg} at once:\n{a}\n{b}"
        );
    }
}

#[then("every tagged-checkpoint insert that Zerto failed is named in a guard's notes")]
async fn failures_named(world: &mut RewindWorld) {
    let failed = inserts_where(world, |t| t["State"] == 4).await;
    let reports: String = world
        .answers
        .iter()
        .filter_map(|a| a.result.as_ref())
        .map(Value::to_string)
        .collect();
    for t in failed {
        let id = t["TaskIdentifier"].as_str().expect("a task id");
        assert!(
            reports.contains(id),
            "Zerto failed insert {id}, and no guard said so: {t}\n{reports}"
        );
    }
}

#[then("Zerto received no FLR request")]
async fn no_flr(world: &mut RewindWorld) {
    let flr = world.sim().await.calls_to("/v1/flrs").await;
    assert!(flr.is_empty(), "FLR requests: {flr:#?}");
}

#[then("Zerto never received a Failover or Move request")]
async fn no_failover(world: &mut RewindWorld) {
    let calls = world.sim().await.calls().await;
    assert!(!calls.is_empty(), "no call at all");
    let live: Vec<&Value> = calls
        .iter()
        .filter(|c| {
            c["Path"].as_str().is_some_and(|p| {
                let last = p.rsplit('/').next().unwrap_or_default().to_lowercase();
                matches!(
                    last.as_str(),
                    "failover" | "move" | "failovercommit" | "movecommit"
                )
            })
        })
        .collect();
    assert!(
        live.is_empty(),
        "Failover Live or Move was called: {live:#?}"
    );
}

#[then(expr = "Zerto's call log shows {int} faulted calls")]
async fn faulted_calls(world: &mut RewindWorld, count: usize) {
    let faulted: Vec<Value> = world
        .sim()
        .await
        .calls()
        .await
        .into_iter()
        .filter(|c| c["Faults"].as_array().is_some_and(|f| !f.is_empty()))
        .collect();
    assert_eq!(faulted.len(), count, "faulted calls: {faulted:#?}");
}

#[then("Zerto's call log shows that Denver was slow")]
async fn denver_was_slow(world: &mut RewindWorld) {
    let slow = world
        .sim()
        .await
        .calls()
        .await
        .into_iter()
        .filter(|c| {
            c["Site"] == "Denver"
                && c["Faults"]
                    .as_array()
                    .is_some_and(|f| f.iter().any(|x| x["Action"] == "Latency"))
        })
        .count();
    assert!(slow > 0, "no Denver call was delayed");
}

/// The calls to one site's token endpoint that Keycloak answered with a token.
async fn tokens_issued(world: &mut RewindWorld, site: &str) -> usize {
    world
        .sim()
        .await
        .calls()
        .await
        .iter()
        .filter(|c| {
            c["Site"] == site
                && c["Status"] == 200
                && c["Path"]
                    .as_str()
                    .is_some_and(|p| p.ends_with("/openid-connect/token"))
        })
        .count()
}

#[then(regex = r"^(Boston|Denver)'s Keycloak issued (\d+) tokens? to rewind$")]
async fn keycloak_issued(world: &mut RewindWorld, site: String, count: usize) {
    let issued = tokens_issued(world, &site).await;
    assert_eq!(issued, count, "tokens issued at {site}");
}

#[then(regex = r"^Zerto refused an? (?:expired or revoked|revoked) token at least once$")]
async fn refused_token(world: &mut RewindWorld) {
    let refused = world
        .sim()
        .await
        .calls()
        .await
        .into_iter()
        .filter(|c| c["Status"] == 401 && c["Path"].as_str().is_some_and(|p| p.starts_with("/v1")))
        .count();
    assert!(
        refused > 0,
        "Zerto never refused a token, so the scenario proved nothing about renewing one"
    );
}
