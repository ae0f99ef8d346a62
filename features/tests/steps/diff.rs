//! What the agent changed: `zerto_diff_since_tag` and `rewind diff`, checked against the files the
//! scenario changed in the guest.

use cucumber::{given, then, when};
use features::RewindWorld;
use serde_json::{Value, json};

use super::fronts::{cli_args, result};

#[given(expr = "the agent then adds {string} on {string} holding {string}")]
async fn add_file(world: &mut RewindWorld, path: String, vm: String, content: String) {
    let sim = world.sim().await.clone();
    assert!(sim.try_file(&vm, &path).await.is_none(), "{path} is new");
    sim.put_file(&vm, &path, content.as_bytes()).await;
}

#[given(expr = "the agent then deletes {string} on {string}")]
async fn delete_file(world: &mut RewindWorld, path: String, vm: String) {
    let sim = world.sim().await.clone();
    assert!(sim.try_file(&vm, &path).await.is_some(), "{vm} has {path}");
    sim.delete_file(&vm, &path).await;
}

#[given(expr = "Zerto answers every FLR browse with {int}")]
async fn browse_refused(world: &mut RewindWorld, status: u16) {
    world
        .sim()
        .await
        .fault(json!({"Method": "POST", "Path": "/v1/flrs/*/browse",
            "Action": "Respond", "Status": status}))
        .await;
}

#[when(expr = "the agent asks what changed in {string} of {string} since change {string}")]
async fn agent_diffs(world: &mut RewindWorld, path: String, vm: String, change: String) {
    world
        .call(
            "zerto_diff_since_tag",
            json!({"vm": vm, "change_id": change, "paths": [path]}),
        )
        .await;
}

#[when(
    expr = "the agent asks what changed in {string} of {string} since change {string}, with content"
)]
async fn agent_diffs_content(world: &mut RewindWorld, path: String, vm: String, change: String) {
    world
        .call(
            "zerto_diff_since_tag",
            json!({"vm": vm, "change_id": change, "paths": [path], "content": true}),
        )
        .await;
}

/// The entries of the last diff, from whichever front ran it.
fn entries(world: &RewindWorld) -> Vec<Value> {
    let r = result(world);
    r["entries"]
        .as_array()
        .unwrap_or_else(|| panic!("a diff's result: {r:#}"))
        .clone()
}

#[then(expr = "the diff lists exactly: changed {string}, added {string}, removed {string}")]
async fn lists_exactly(world: &mut RewindWorld, changed: String, added: String, removed: String) {
    let got: Vec<(String, String)> = entries(world)
        .iter()
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap_or_default().to_string();
            (s("kind"), s("path"))
        })
        .collect();
    let mut want = vec![
        ("changed".to_string(), changed),
        ("added".to_string(), added),
        ("removed".to_string(), removed),
    ];
    want.sort_by(|a, b| a.1.cmp(&b.1));
    assert_eq!(got, want);
}

#[then("the diff lists nothing")]
async fn lists_nothing(world: &mut RewindWorld) {
    let entries = entries(world);
    assert!(entries.is_empty(), "{entries:#?}");
    let counts = &result(world)["counts"];
    assert_eq!(
        counts,
        &json!({"added": 0, "removed": 0, "changed": 0, "unknown": 0})
    );
}

#[then(expr = "the diff of {string} removes its first line and adds {string}")]
async fn content_diff(world: &mut RewindWorld, path: String, added: String) {
    let before = world
        .kept
        .get(&format!("web-01:{path}"))
        .expect("the step that changed the file kept the original")
        .clone();
    let first = String::from_utf8_lossy(&before)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    let entry = entries(world)
        .into_iter()
        .find(|e| e["path"] == path.as_str())
        .unwrap_or_else(|| panic!("{path} is listed"));
    assert_eq!(entry["content"]["kind"], "text", "{entry:#}");
    let unified = entry["content"]["unified"].as_str().unwrap_or_default();
    assert!(unified.contains(&format!("\n-{first}\n")), "{unified}");
    assert!(unified.contains(&format!("\n+{added}")), "{unified}");
}

#[when(regex = r"^the operator runs `rewind (.+)` with the plan it printed$")]
async fn operator_runs_the_plan(world: &mut RewindWorld, line: String) {
    let plan = result(world)["plan_id"]
        .as_str()
        .expect("a plan id")
        .to_owned();
    world
        .kept
        .insert("plan".into(), serde_json::to_vec(result(world)).unwrap());
    let args = cli_args(world, &format!("{line} --plan {plan}"));
    world.rewind(args, None).await;
}

#[when(expr = "the agent previews recovering {string} of {string} from change {string}")]
async fn agent_previews(world: &mut RewindWorld, path: String, vm: String, change: String) {
    let destination = world.recovery_dir().display().to_string();
    world
        .call(
            "zerto_recover_file",
            json!({"vm": vm, "change_id": change, "paths": [path],
                   "destination": destination, "dry_run": true}),
        )
        .await;
    let plan = result(world)["plan_id"]
        .as_str()
        .expect("a plan id")
        .to_owned();
    world.kept.insert("plan_id".into(), plan.into_bytes());
}

#[when(
    expr = "the agent recovers {string} of {string} from change {string} with the plan it was shown"
)]
async fn agent_recovers_plan(world: &mut RewindWorld, path: String, vm: String, change: String) {
    let destination = world.recovery_dir().display().to_string();
    let plan = String::from_utf8(world.kept["plan_id"].clone()).unwrap();
    world
        .call(
            "zerto_recover_file",
            json!({"vm": vm, "change_id": change, "paths": [path],
                   "destination": destination, "plan": plan}),
        )
        .await;
}

#[then("the files written are those the preview listed, each with its size at the tag")]
async fn written_as_planned(world: &mut RewindWorld) {
    let plan: Value = serde_json::from_slice(&world.kept["plan"]).unwrap();
    let planned: Vec<(String, u64)> = plan["files"]
        .as_array()
        .expect("the plan's files")
        .iter()
        .map(|f| {
            let to = f["written_to"].as_str().unwrap_or_default().to_owned();
            (to, f["at_tag"]["size"].as_u64().unwrap_or(u64::MAX))
        })
        .collect();
    let written: Vec<(String, u64)> = result(world)["files"]
        .as_array()
        .expect("the files written")
        .iter()
        .map(|f| {
            let to = f["path"].as_str().unwrap_or_default().to_owned();
            (to, f["size"].as_u64().unwrap_or_default())
        })
        .collect();
    assert!(!planned.is_empty(), "{plan:#}");
    assert_eq!(written, planned);
}
