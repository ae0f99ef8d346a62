//! Rewinding a VM to its tag: `rewind restore` and `zerto_restore_vm`, checked against the guest's
//! files, Zerto's restore task and the journal.

use std::collections::BTreeMap;

use cucumber::{given, then, when};
use features::RewindWorld;
use serde_json::{Value, json};

use super::fronts::result;

/// The key under which a scenario keeps the files a folder held before the agent deleted it.
fn folder_key(vm: &str, folder: &str) -> String {
    format!("{vm}:{folder}/")
}

/// Every file of `vm` now, by path.
async fn files_of(world: &mut RewindWorld, vm: &str) -> BTreeMap<String, Vec<u8>> {
    let sim = world.sim().await.clone();
    let listed = sim.get(&format!("vms/{vm}/files")).await;
    let mut files = BTreeMap::new();
    for f in listed.as_array().expect("the VM's files").iter() {
        let path = f["Path"].as_str().unwrap_or_default().to_owned();
        let bytes = sim.file(vm, &path).await;
        files.insert(path, bytes);
    }
    files
}

#[given(expr = "the agent then deletes the folder {string} on {string}")]
async fn delete_folder(world: &mut RewindWorld, folder: String, vm: String) {
    let prefix = format!("{folder}/");
    let under: BTreeMap<String, Vec<u8>> = files_of(world, &vm)
        .await
        .into_iter()
        .filter(|(p, _)| p.starts_with(&prefix))
        .collect();
    assert!(!under.is_empty(), "{vm} has files under {folder}");
    let sim = world.sim().await.clone();
    for path in under.keys() {
        sim.delete_file(&vm, path).await;
    }
    world.kept.insert(
        folder_key(&vm, &folder),
        serde_json::to_vec(&under).unwrap(),
    );
}

#[given(expr = "Zerto shows VPG {string} in a delta sync")]
async fn delta_sync(world: &mut RewindWorld, vpg: String) {
    // MeetingSLA, DeltaSync: replicating, and not protecting until the sync ends.
    world.sim().await.pin_status(&vpg, 1.into(), 6.into()).await;
}

#[when(expr = "the agent proposes restoring {string} from change {string} as {string}")]
async fn agent_proposes_beside(world: &mut RewindWorld, vm: String, change: String, name: String) {
    world
        .call(
            "zerto_restore_vm",
            json!({"vm": vm, "change_id": change, "as_name": name}),
        )
        .await;
}

#[when(expr = "the agent proposes restoring {string} in place from change {string}")]
async fn agent_proposes_in_place(world: &mut RewindWorld, vm: String, change: String) {
    world
        .call(
            "zerto_restore_vm",
            json!({"vm": vm, "change_id": change, "in_place": true}),
        )
        .await;
}

#[then("the restore waits for a person's commit")]
async fn restore_waits(world: &mut RewindWorld) {
    let report = result(world).clone();
    assert_eq!(report["verdict"], "waiting", "{report:#}");
    assert!(report["rolls_back_at"].is_string(), "{report:#}");
    let task = report["task"]["task_id"]
        .as_str()
        .expect("its task")
        .to_owned();
    let tasks = world.sim().await.tasks_of_type("JournalVmRestore").await;
    let at_zerto = tasks
        .iter()
        .find(|t| t["TaskIdentifier"] == task.as_str())
        .unwrap_or_else(|| panic!("Zerto runs task {task}: {tasks:#?}"));
    assert_eq!(at_zerto["State"], 2, "WaitingForUserInput: {at_zerto:#}");
}

#[then(expr = "{string} has {string} and the folder {string} as {string} had them at the tag")]
async fn has_as_at_tag(
    world: &mut RewindWorld,
    vm: String,
    path: String,
    folder: String,
    source: String,
) {
    let file = world
        .kept
        .get(&format!("{source}:{path}"))
        .expect("the step that changed the file kept the original")
        .clone();
    let folder_then: BTreeMap<String, Vec<u8>> =
        serde_json::from_slice(&world.kept[&folder_key(&source, &folder)]).unwrap();
    let now = files_of(world, &vm).await;
    assert_eq!(now.get(&path), Some(&file), "{path} of {vm}");
    for (p, bytes) in &folder_then {
        assert_eq!(now.get(p), Some(bytes), "{p} of {vm}");
    }
}

#[then(expr = "the journal records the restore of {string} for change {string} as {string}")]
async fn journal_records_restore(
    world: &mut RewindWorld,
    vm: String,
    change: String,
    verdict: String,
) {
    let records = world.journal();
    let restores: Vec<&Value> = records
        .iter()
        .filter(|r| r["kind"] == "recovery" && r["vm"]["name"] == vm.as_str())
        .filter(|r| r["change_id"] == change.as_str())
        .filter(|r| {
            r["action"]
                .as_str()
                .is_some_and(|a| a.starts_with("restore"))
        })
        .collect();
    let last = restores
        .last()
        .unwrap_or_else(|| panic!("a restore of {vm} is journaled: {records:#?}"));
    assert_eq!(last["verdict"], verdict.as_str(), "{last:#}");
    assert!(
        last["person"]["subject"].is_string(),
        "with the person: {last:#}"
    );
}

#[then("no restore is listed as waiting")]
async fn none_waiting(world: &mut RewindWorld) {
    let status = result(world);
    assert_eq!(status["waiting"], json!([]), "{status:#}");
}

#[then("Zerto ran no restore")]
async fn no_restore(world: &mut RewindWorld) {
    let tasks = world.sim().await.tasks_of_type("JournalVmRestore").await;
    assert!(tasks.is_empty(), "{tasks:#?}");
}
