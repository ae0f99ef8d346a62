//! The way back: how long each tag stays recoverable, said at guard, and what became of each tag once
//! the clock moves, as the operator (the CLI) and the agent (MCP) see it.

use chrono::{DateTime, Utc};
use cucumber::then;
use features::RewindWorld;
use features::answer::Answer;
use serde_json::{Value, json};

use super::guard::operator_lists_tags;

/// A time of an answer.
#[track_caller]
fn time(v: &Value) -> DateTime<Utc> {
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{v} is a time: {e}"))
}

#[then(expr = "VPG {string} is recoverable for {int} minutes from its tag")]
async fn recoverable_for(world: &mut RewindWorld, vpg: String, minutes: i64) {
    let v = world.last().vpg(&vpg).clone();
    let way_back = &v["way_back"];
    let lasts = time(&way_back["recoverable_until"]) - time(&way_back["tagged_at"]);
    assert_eq!(lasts.num_minutes(), minutes, "{v}");
    assert_eq!(
        time(&way_back["tagged_at"]),
        time(&v["timestamp"]),
        "counted from the checkpoint's own time: {v}"
    );
    assert_eq!(way_back["estimate"], false, "{v}");
}

#[then("the guard is recoverable until the end of its shortest way back")]
async fn overall(world: &mut RewindWorld) {
    let answer = world.last();
    let shortest = answer.result()["vpgs"]
        .as_array()
        .expect("VPGs")
        .iter()
        .filter_map(|v| v["way_back"].get("recoverable_until"))
        .map(time)
        .min()
        .expect("a tagged VPG's way back");
    assert_eq!(
        time(&answer.result()["recoverable_until"]),
        shortest,
        "{answer:#?}"
    );
}

/// The state of the tag of `change` in `vpg` of a tags answer.
#[track_caller]
fn state_in(answer: &Answer, vpg: &str, change: &str) -> Value {
    let v = answer.vpg(vpg);
    let tags: Vec<&Value> = v["tags"]
        .as_array()
        .unwrap_or_else(|| panic!("the VPG's tags are listed: {answer:#?}"))
        .iter()
        .filter(|t| t["parts"]["change_id"] == change)
        .collect();
    assert_eq!(tags.len(), 1, "one tag of change {change} in {vpg}: {v}");
    tags[0].clone()
}

#[then(
    expr = "the operator sees the tag of change {string} on {string} in VPG {string} as {string}"
)]
async fn operator_sees(
    world: &mut RewindWorld,
    change: String,
    vm: String,
    vpg: String,
    state: String,
) {
    let answer = operator_lists_tags(world, &vm, Some(&change)).await;
    let tag = state_in(&answer, &vpg, &change);
    assert_eq!(tag["state"], state.as_str(), "{tag}");
}

#[then(
    expr = "the operator sees the tag of change {string} on {string} in VPG {string} gone because {string}"
)]
async fn operator_sees_gone(
    world: &mut RewindWorld,
    change: String,
    vm: String,
    vpg: String,
    because: String,
) {
    let answer = operator_lists_tags(world, &vm, Some(&change)).await;
    let tag = state_in(&answer, &vpg, &change);
    assert_eq!(tag["state"], "gone", "{tag}");
    let why = tag["why"].as_str().unwrap_or_default();
    assert!(why.contains(&because), "gone because {because:?}: {tag}");
}

#[then(expr = "the journal records that VPG {string} was {word} after the guard of {string}")]
async fn journal_protection_changed(world: &mut RewindWorld, vpg: String, how: String, vm: String) {
    let records = world.journal();
    let changed = records.iter().rfind(|r| {
        r["kind"] == "protection_changed"
            && r["vm"]["name"] == vm.as_str()
            && r["vpgs"].as_array().is_some_and(|l| {
                l.iter()
                    .any(|v| v["vpg_name"] == vpg.as_str() && v["outcome"] == how.as_str())
            })
    });
    assert!(
        changed.is_some(),
        "a protection_changed record of {vm}: {vpg} {how}: {records:#?}"
    );
}

#[then(expr = "the agent sees the tag of change {string} on {string} in VPG {string} as {string}")]
async fn agent_sees(
    world: &mut RewindWorld,
    change: String,
    vm: String,
    vpg: String,
    state: String,
) {
    let answer = world
        .call("zerto_list_tags", json!({"vm": vm, "change_id": change}))
        .await
        .clone();
    assert!(answer.ok, "{answer:#?}");
    let tag = state_in(&answer, &vpg, &change);
    assert_eq!(tag["state"], state.as_str(), "{tag}");
    if state == "aged_out" {
        let about = time(&tag["about"]);
        let listed = time(&tag["timestamp"]);
        assert!(about > listed, "it left after it was written: {tag}");
    }
}

#[then(expr = "the journal records a done of {string} for change {string}")]
async fn journal_done(world: &mut RewindWorld, vm: String, change: String) {
    let records = world.journal();
    let done = records
        .iter()
        .rfind(|r| r["kind"] == "done" && r["change_id"] == change.as_str())
        .unwrap_or_else(|| panic!("a done record of {change}: {records:#?}"));
    assert_eq!(done["vm"]["name"], vm.as_str(), "{done}");
    assert_eq!(done["verdict"], "closed", "{done}");
}

#[then("no open change is listed as expiring")]
async fn none_expiring(world: &mut RewindWorld) {
    let answer = world.last();
    assert_eq!(answer.result()["changes"], json!([]), "{answer:#?}");
}

#[then(
    expr = "VPG {string} is recoverable for about {int} minutes from its tag, an estimate because {string}"
)]
async fn recoverable_about(world: &mut RewindWorld, vpg: String, minutes: i64, because: String) {
    let v = world.last().vpg(&vpg).clone();
    let way_back = &v["way_back"];
    let lasts = time(&way_back["recoverable_until"]) - time(&way_back["tagged_at"]);
    assert!(
        (lasts.num_minutes() - minutes).abs() <= 2,
        "about {minutes} minutes: {v}"
    );
    assert_eq!(way_back["estimate"], true, "{v}");
    assert!(
        way_back["estimate_because"]
            .as_str()
            .is_some_and(|b| b.contains(&because)),
        "{v}"
    );
}
