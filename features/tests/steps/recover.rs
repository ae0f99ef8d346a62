//! Bounded recover: FLR, failover test and offsite clone from a change's tagged checkpoint, checked
//! against the guest's files and Zerto's tasks.

use std::path::Path;
use std::time::Duration;

use cucumber::{given, then, when};
use features::RewindWorld;
use features::world::{SignIn, Sites};
use rewind_core::audit_journal::JournalOutcome;
use serde_json::{Value, json};

use super::fronts::result;

fn kept_key(vm: &str, path: &str) -> String {
    format!("{vm}:{path}")
}

#[given(expr = "the agent then changes {string} on {string} to {string}")]
#[when(expr = "the agent then changes {string} on {string} to {string}")]
async fn change_file(world: &mut RewindWorld, path: String, vm: String, content: String) {
    let sim = world.sim().await.clone();
    let before = sim
        .try_file(&vm, &path)
        .await
        .unwrap_or_else(|| panic!("{vm} has {path}"));
    assert_ne!(before, content.as_bytes(), "the change changes something");
    sim.put_file(&vm, &path, content.as_bytes()).await;
    world.kept.insert(kept_key(&vm, &path), before);
    world.kept.insert(
        format!("{}:changed", kept_key(&vm, &path)),
        content.into_bytes(),
    );
}

#[when(expr = "the agent recovers {string} of {string} from change {string}")]
async fn agent_recovers(world: &mut RewindWorld, path: String, vm: String, change: String) {
    let destination = world.recovery_dir().display().to_string();
    world
        .call(
            "zerto_recover_file",
            json!({"vm": vm, "change_id": change, "paths": [path], "destination": destination}),
        )
        .await;
}

#[then(expr = "the recovered {string} holds the bytes {string} had before the change")]
async fn recovered_bytes(world: &mut RewindWorld, path: String, vm: String) {
    let before = world
        .kept
        .get(&kept_key(&vm, &path))
        .expect("the step that changed the file kept the original")
        .clone();
    let recovered = std::fs::read(world.recovery_dir().join(&path)).unwrap_or_else(|e| {
        panic!(
            "{path} was recovered under {}: {e}",
            world.recovery_dir().display()
        )
    });
    assert_eq!(
        String::from_utf8_lossy(&recovered),
        String::from_utf8_lossy(&before),
        "the recovered file is the one the tag captured"
    );
    // The result names the file it wrote, with its size.
    let files = result(world)["files"]
        .as_array()
        .expect("the files written");
    assert!(
        files.iter().any(|f| f["guest_path"] == path.as_str()
            && f["size"] == before.len()
            && f["replaced"] == false),
        "the result names {path}: {files:#?}"
    );
}

#[then(expr = "{string} still has the changed {string}")]
async fn still_changed(world: &mut RewindWorld, vm: String, path: String) {
    let changed = world
        .kept
        .get(&format!("{}:changed", kept_key(&vm, &path)))
        .expect("the change was kept")
        .clone();
    let now = world.sim().await.try_file(&vm, &path).await;
    assert_eq!(
        now.as_deref(),
        Some(changed.as_slice()),
        "the production VM keeps running with the change"
    );
}

#[then(
    expr = "the FLR ran at {string} from VPG {string}, and its mount and unmount tasks Completed"
)]
async fn flr_ran(world: &mut RewindWorld, site: String, vpg: String) {
    let r = result(world).clone();
    assert_eq!(r["from"]["vpg_name"], vpg.as_str(), "{r}");
    assert_eq!(
        r["unmount"]["unmounted"], true,
        "the session was unmounted: {r}"
    );
    let sim = world.sim().await.clone();
    for kind in ["FlrJournalMount", "FlrJournalUnmount"] {
        let tasks = sim.tasks_of_type(kind).await;
        assert_eq!(tasks.len(), 1, "one {kind} task: {tasks:#?}");
        let t = &tasks[0];
        assert_eq!(
            t["Site"],
            site.as_str(),
            "{kind} ran at the recovery site: {t}"
        );
        assert_eq!(t["VpgName"], vpg.as_str(), "{t}");
        assert_eq!(t["State"], 6, "{kind} Completed: {t}");
    }
}

#[then(expr = "the journal records a recovery of {string} for change {string}")]
async fn journal_recovery(world: &mut RewindWorld, vm: String, change: String) {
    let records = world.journal();
    assert!(
        records.iter().any(|r| r["kind"] == "recovery"
            && r["vm"]["name"] == vm.as_str()
            && r["change_id"] == change.as_str()),
        "a recovery record: {records:#?}"
    );
}

#[given(expr = "rewind is configured with the site {string} only")]
async fn one_site(world: &mut RewindWorld, site: String) {
    assert_eq!(site, "boston", "the scenarios configure Boston alone");
    world.reconfigure(|w| w.sites = Sites::BostonOnly);
}

#[given(expr = "rewind signs in as the ZVM user {string} with password {string}")]
async fn sign_in_as(world: &mut RewindWorld, name: String, password: String) {
    world.reconfigure(|w| w.sign_in = SignIn::User { name, password });
}

fn files_under(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let path = e.path();
            if path.is_dir() {
                found.extend(files_under(&path));
            } else {
                found.push(path.display().to_string());
            }
        }
    }
    found
}

#[then("the recovery folder is empty")]
async fn folder_empty(world: &mut RewindWorld) {
    let files = files_under(&world.recovery_dir());
    assert!(files.is_empty(), "files were written: {files:#?}");
}

#[then(expr = "the recovery's verdict is {string}")]
async fn recovery_verdict(world: &mut RewindWorld, verdict: String) {
    let r = result(world);
    assert_eq!(r["verdict"], verdict.as_str(), "{r}");
}

/// The checkpoints the journal's guards of `change` tagged, as (VPG name, checkpoint id).
fn tagged_checkpoints(world: &RewindWorld, change: &str) -> Vec<(String, String)> {
    world
        .journal()
        .iter()
        .filter(|r| r["kind"] == "guard" && r["change_id"] == change)
        .flat_map(|r| r["vpgs"].as_array().cloned().unwrap_or_default())
        .filter(|v| {
            serde_json::from_value::<JournalOutcome>(v["outcome"].clone())
                .is_ok_and(|o| o == JournalOutcome::Tagged)
        })
        .map(|v| {
            (
                v["vpg_name"].as_str().unwrap_or_default().to_string(),
                v["checkpoint_id"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// The checkpoint a recovery task was asked to use.
fn checkpoint_of(task: &Value) -> String {
    let d = &task["Details"];
    let id = if d["CheckpointIdentifier"].is_null() {
        &d["CheckpointId"]
    } else {
        &d["CheckpointIdentifier"]
    };
    match id {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        other => panic!("the task names no checkpoint ({other}): {task}"),
    }
}

/// Checks that a recovery task used a checkpoint the guard of `change` tagged, for the guarded VM
/// only.
fn from_the_tag(world: &RewindWorld, task: &Value, change: &str) {
    let guarded_vm = world
        .journal()
        .iter()
        .find(|r| r["kind"] == "guard" && r["change_id"] == change)
        .map(|r| r["vm"]["id"].clone())
        .expect("the journal holds the guard");
    assert_eq!(
        task["Details"]["VmIdentifiers"],
        json!([guarded_vm]),
        "only the guarded VM, not the others of its VPG: {task}"
    );
    let tagged = tagged_checkpoints(world, change);
    assert!(
        !tagged.is_empty(),
        "the journal holds the guard of {change}"
    );
    let used = (
        task["VpgName"].as_str().unwrap_or_default().to_string(),
        checkpoint_of(task),
    );
    assert!(
        tagged.contains(&used),
        "the task used checkpoint {used:?}, not one tagged for {change} ({tagged:?}): {task}"
    );
}

/// The one task of type `kind` Zerto ran, which ended in `state` (named `state_name`).
async fn the_one_task(world: &mut RewindWorld, kind: &str, state: u8, state_name: &str) -> Value {
    let tasks = world.sim().await.tasks_of_type(kind).await;
    assert_eq!(tasks.len(), 1, "one {kind} task: {tasks:#?}");
    assert_eq!(
        tasks[0]["State"], state,
        "{kind} {state_name}: {}",
        tasks[0]
    );
    tasks[0].clone()
}

#[then(
    expr = "Zerto ran a {string} task from the checkpoint tagged for change {string}, and it Completed"
)]
async fn task_from_tag(world: &mut RewindWorld, kind: String, change: String) {
    let task = the_one_task(world, &kind, 6, "Completed").await;
    from_the_tag(world, &task, &change);
}

#[then(expr = "Zerto ran a {string} task, and it Completed")]
async fn task_completed(world: &mut RewindWorld, kind: String) {
    the_one_task(world, &kind, 6, "Completed").await;
}

#[when(expr = "Zerto shows the clone running from the checkpoint tagged for change {string}")]
async fn clone_running(world: &mut RewindWorld, change: String) {
    let task = world
        .sim()
        .await
        .wait_for_task("the clone", Duration::from_secs(30), |t| {
            t["Type"] == "Clone" && t["State"] == 1
        })
        .await;
    from_the_tag(world, &task, &change);
}

#[then(expr = "Zerto's {string} task ended Stopped")]
async fn task_stopped(world: &mut RewindWorld, kind: String) {
    the_one_task(world, &kind, 5, "Stopped").await;
}

#[then(expr = "the clone {string} has the {string} that {string} had before the change")]
async fn clone_has_file(world: &mut RewindWorld, clone: String, path: String, vm: String) {
    let before = world
        .kept
        .get(&kept_key(&vm, &path))
        .expect("the original was kept")
        .clone();
    let got = world.sim().await.try_file(&clone, &path).await;
    assert_eq!(
        got.as_deref().map(String::from_utf8_lossy),
        Some(String::from_utf8_lossy(&before)),
        "the clone has the file as the tag captured it"
    );
}

#[when(expr = "the agent starts a failover test of {string} from change {string}")]
async fn agent_starts_test(world: &mut RewindWorld, vm: String, change: String) {
    world
        .call(
            "zerto_failover_test",
            json!({"vm": vm, "change_id": change, "action": "start"}),
        )
        .await;
}

#[when(
    expr = "the agent stops the failover test of {string} for change {string}, recording it failed with {string}"
)]
async fn agent_stops_test(world: &mut RewindWorld, vm: String, change: String, summary: String) {
    world
        .call(
            "zerto_failover_test",
            json!({"vm": vm, "change_id": change, "action": "stop", "success": false, "summary": summary}),
        )
        .await;
}

#[then(expr = "Zerto recorded the test as failed with {string}")]
async fn test_recorded_failed(world: &mut RewindWorld, summary: String) {
    let r = result(world).clone();
    assert_eq!(r["operation"], "failover_test_stop", "{r}");
    assert_eq!(r["success"], false, "{r}");
    assert_eq!(r["summary"], summary.as_str(), "{r}");
    let tasks = world.sim().await.tasks_of_type("StopFailOverTest").await;
    let details = &tasks.last().expect("a stop task")["Details"];
    assert_eq!(details["FailoverTestSuccess"], false, "{details}");
    assert_eq!(
        details["FailoverTestSummary"],
        summary.as_str(),
        "{details}"
    );
}

#[given(expr = "the recovered {string} is then edited by hand to {string}")]
async fn edit_recovered(world: &mut RewindWorld, path: String, content: String) {
    let file = world.recovery_dir().join(&path);
    assert!(file.is_file(), "{} was recovered", file.display());
    std::fs::write(&file, content).expect("the recovered file is edited");
}

#[then(expr = "the recovered {string} still holds {string}")]
async fn recovered_still_holds(world: &mut RewindWorld, path: String, content: String) {
    let file = world.recovery_dir().join(&path);
    let now = std::fs::read_to_string(&file).expect("the file is still there");
    assert_eq!(now, content, "{} was not replaced", file.display());
}

#[then("no FLR session is left mounted at Zerto")]
async fn no_session_left(world: &mut RewindWorld) {
    let sim = world.sim().await.clone();
    let mounts = sim.tasks_of_type("FlrJournalMount").await;
    let unmounts = sim.tasks_of_type("FlrJournalUnmount").await;
    assert!(!mounts.is_empty(), "a session was mounted");
    assert_eq!(
        mounts.len(),
        unmounts.len(),
        "every mount has its unmount: {mounts:#?} {unmounts:#?}"
    );
    assert!(
        unmounts.iter().all(|t| t["State"] == 6),
        "every unmount Completed: {unmounts:#?}"
    );
}

#[when(expr = "the agent recovers {string} of {string} from change {string} into {string}")]
async fn agent_recovers_into(
    world: &mut RewindWorld,
    path: String,
    vm: String,
    change: String,
    destination: String,
) {
    world
        .call(
            "zerto_recover_file",
            json!({"vm": vm, "change_id": change, "paths": [path], "destination": destination}),
        )
        .await;
}
