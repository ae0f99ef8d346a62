//! Guard: the verdict, each VPG's outcome, and Zerto's own record of every insert.

use cucumber::{given, then, when};
use features::RewindWorld;
use features::answer::{Answer, Front};
use rewind_core::Verdict;
use serde_json::{Value, json};

use super::fronts::{AGENT, cli_args, result};
use super::words::names;

/// Whether an answer is a guard's (through either front).
fn is_guard(a: &Answer) -> bool {
    match &a.front {
        Front::Mcp { tool } => tool == "zerto_guard_before_mutate",
        Front::Cli { args, .. } => args.iter().any(|x| x == "guard"),
    }
}

#[then(expr = "the verdict is {string}")]
async fn verdict_is(world: &mut RewindWorld, verdict: String) {
    let answer = world.last();
    assert_eq!(
        answer.result()["verdict"],
        verdict.as_str(),
        "the verdict: {answer:#?}"
    );
    // A guard is a success only when it is guarded; anything else is reported as a failure.
    let verdict: Verdict = serde_json::from_value(json!(verdict)).expect("a guard's verdict");
    assert_eq!(answer.ok, verdict == Verdict::Guarded, "{answer:#?}");
}

/// Checks that one VPG of the last guard is tagged, and that Zerto agrees: the insert task the guard
/// names is Completed at Zerto, into that VPG, with the guard's tag as its checkpoint name.
async fn tagged(world: &mut RewindWorld, vpg: &str) {
    let answer = world.last().clone();
    let report = answer.result();
    let v = answer.vpg(vpg);
    assert_eq!(v["outcome"], "tagged", "{vpg} is tagged: {v}");
    let tag = report["tag"].as_str().expect("the guard's tag");
    let vm = report["vm"]["name"].as_str().expect("the VM's name");
    let change = report["change_id"].as_str().expect("the change id");
    assert!(
        tag.starts_with("ai:")
            && tag.contains(&format!(" | vm={vm} | "))
            && tag.contains(&format!(" | change={change} | ")),
        "the tag names the agent, the VM and the change: {tag}"
    );
    assert!(
        v["checkpoint_id"].as_str().is_some_and(|c| !c.is_empty()),
        "{v}"
    );
    assert_eq!(v["task_state"]["code"], 6, "{v}");
    let task_id = v["task_id"].as_str().expect("the insert's task id");
    if world.is_real() {
        return;
    }
    let task = world.sim().await.task(task_id).await;
    assert_eq!(task["State"], 6, "Zerto's task Completed: {task}");
    assert_eq!(task["VpgName"], vpg, "{task}");
    assert_eq!(task["CheckpointName"], tag, "{task}");
}

#[then(expr = "VPG {string} is tagged with the guard's tag")]
async fn vpg_tagged(world: &mut RewindWorld, vpg: String) {
    tagged(world, &vpg).await;
}

#[then(expr = "VPGs {string} are tagged with the guard's tag")]
async fn vpgs_tagged(world: &mut RewindWorld, list: String) {
    for vpg in names(&list) {
        tagged(world, &vpg).await;
    }
}

#[then(expr = "VPG {string} is skipped because {string}")]
async fn skipped(world: &mut RewindWorld, vpg: String, why: String) {
    let v = world.last().vpg(&vpg).clone();
    assert_eq!(v["outcome"], "skipped", "{v}");
    assert!(
        v["reason"].as_str().is_some_and(|r| r.contains(&why)),
        "the reason says {why:?}: {v}"
    );
    assert!(v.get("task_id").is_none(), "a skipped VPG has no task: {v}");
}

#[then(expr = "VPG {string} failed with task state {string} and Zerto's reason")]
async fn failed(world: &mut RewindWorld, vpg: String, state: String) {
    let v = world.last().vpg(&vpg).clone();
    assert_eq!(v["outcome"], "failed", "failed, not still running: {v}");
    assert_eq!(v["task_state"]["name"], state.as_str(), "{v}");
    let reason = v["complete_reason"].as_str().expect("a reason");
    assert!(!reason.is_empty(), "{v}");
    let task_id = v["task_id"].as_str().expect("a task id");
    let task = world.sim().await.task(task_id).await;
    assert_eq!(task["State"], 4, "Zerto failed it too: {task}");
    assert_eq!(task["CompleteReason"], reason, "Zerto's own reason: {task}");
}

#[then(expr = "VPG {string} ended in an error")]
async fn errored(world: &mut RewindWorld, vpg: String) {
    let v = world.last().vpg(&vpg);
    assert_eq!(v["outcome"], "error", "{v}");
    assert!(v["message"].as_str().is_some_and(|m| !m.is_empty()), "{v}");
}

#[then(expr = "the guard's notes for VPG {string} say {string}")]
async fn vpg_notes(world: &mut RewindWorld, vpg: String, words: String) {
    let v = world.last().vpg(&vpg);
    let notes = v["notes"].to_string();
    assert!(notes.contains(&words), "the notes say {words:?}: {v}");
}

#[then(expr = "a guard note says {string}")]
async fn a_note(world: &mut RewindWorld, words: String) {
    let r = result(world);
    let notes: Vec<String> = r["vpgs"]
        .as_array()
        .expect("VPGs")
        .iter()
        .map(|v| v["notes"].to_string())
        .chain(std::iter::once(r["notes"].to_string()))
        .collect();
    assert!(
        notes.iter().any(|n| n.contains(&words)),
        "a note says {words:?}: {r}"
    );
}

/// Lists the tags of `vm` (of one change) as the operator would, keeping the answer under test the
/// last one.
pub async fn operator_lists_tags(
    world: &mut RewindWorld,
    vm: &str,
    change: Option<&str>,
) -> Answer {
    let mut line = format!("tags {vm}");
    if let Some(change) = change {
        line.push_str(&format!(" --change {change}"));
    }
    let args = cli_args(world, &line);
    let answer = world.rewind(args, None).await.clone();
    assert!(answer.ok, "the tags of {vm} are listed: {answer:#?}");
    // The tags listing is an observation: the answer the scenario is about stays the last one.
    let observed = world.answers.pop().expect("just kept");
    let at = world.answers.len().saturating_sub(1);
    world.answers.insert(at, observed);
    answer
}

/// The tags of one change that one VPG of a tags answer lists (and so can be recovered from).
fn tags_of(answer: &Answer, vpg: &Value, change: &str) -> Vec<Value> {
    vpg["tags"]
        .as_array()
        .unwrap_or_else(|| panic!("the VPG's tags are listed: {answer:#?}"))
        .iter()
        .filter(|t| t["parts"]["change_id"] == change && t["state"] == "listed")
        .cloned()
        .collect()
}

#[then(
    expr = "the operator sees the tag of change {string} on {string} in {string} and in no other VPG"
)]
async fn sees_tag(world: &mut RewindWorld, change: String, vm: String, list: String) {
    let answer = operator_lists_tags(world, &vm, Some(&change)).await;
    let want = names(&list);
    for v in answer.result()["vpgs"].as_array().expect("VPGs") {
        let name = v["vpg_name"].as_str().unwrap_or_default();
        let tags = tags_of(&answer, v, &change);
        let expected = usize::from(want.iter().any(|w| w == name));
        assert_eq!(
            tags.len(),
            expected,
            "{name} holds {expected} tag(s) of change {change}: {v}"
        );
    }
    for w in &want {
        answer.vpg(w);
    }
}

#[then(expr = "the journal records a guard of {string} for change {string} with verdict {string}")]
async fn journal_guard(world: &mut RewindWorld, vm: String, change: String, verdict: String) {
    let records = world.journal();
    // A guard's last line is its verdict (its intent and task lines come first).
    let record = records
        .iter()
        .rfind(|r| {
            r["kind"] == "guard"
                && r["vm"]["name"] == vm.as_str()
                && r["change_id"] == change.as_str()
        })
        .unwrap_or_else(|| panic!("no guard of {vm} for {change} in the journal: {records:#?}"));
    assert_eq!(record["verdict"], verdict.as_str(), "{record}");
    if let Some(secret) = world.shown_secret(&record.to_string()) {
        panic!("{secret} reached the journal");
    }
}

#[when(expr = "two operators guard {string} at the same moment, for changes {string} and {string}")]
async fn two_operators(world: &mut RewindWorld, vm: String, a: String, b: String) {
    for change in [&a, &b] {
        let line =
            format!("guard {vm} --agent ops-{change} --action \"edit {vm}\" --change {change}");
        let args = cli_args(world, &line);
        world.spawn_rewind(change, args).await;
    }
    world.finish(&a).await;
    world.finish(&b).await;
}

#[then(expr = "both guards are {string}")]
async fn both_guards(world: &mut RewindWorld, verdict: String) {
    let guards: Vec<&Answer> = world.answers.iter().filter(|a| is_guard(a)).collect();
    assert_eq!(guards.len(), 2, "two guards ran");
    for g in guards {
        assert_eq!(g.result()["verdict"], verdict.as_str(), "{g:#?}");
    }
}

#[when(
    regex = r#"^the agent guards "([^"]+)", "([^"]+)" and "([^"]+)" at the same moment, each for its own change$"#
)]
async fn concurrent_guards(world: &mut RewindWorld, a: String, b: String, c: String) {
    let calls = [a, b, c]
        .iter()
        .map(|vm| {
            let args = json!({
                "vm": vm, "agent": AGENT, "action": format!("change {vm}"),
                "change_id": format!("{vm}-change"),
            });
            ("zerto_guard_before_mutate", args)
        })
        .collect();
    let answers = world.agent().await.call_at_once(calls).await;
    for answer in answers {
        world.keep(answer);
    }
}

#[then(expr = "every guard's verdict is {string}")]
async fn every_verdict(world: &mut RewindWorld, verdict: String) {
    let guards: Vec<&Answer> = world.answers.iter().filter(|a| is_guard(a)).collect();
    assert!(!guards.is_empty(), "no guard ran");
    for g in guards {
        assert_eq!(g.result()["verdict"], verdict.as_str(), "{g:#?}");
    }
}

#[then(expr = "VPG {string} holds one tag for each of the three changes")]
async fn one_tag_per_change(world: &mut RewindWorld, vpg: String) {
    let changes: Vec<String> = world
        .answers
        .iter()
        .filter(|a| is_guard(a))
        .map(|a| {
            a.result()["change_id"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(changes.len(), 3, "three guards ran: {changes:?}");
    let vm = world
        .answers
        .iter()
        .find(|a| is_guard(a))
        .map(|a| {
            a.result()["vm"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .expect("a guard");
    let answer = operator_lists_tags(world, &vm, None).await;
    let v = answer.vpg(&vpg);
    for change in &changes {
        assert_eq!(
            tags_of(&answer, v, change).len(),
            1,
            "{vpg} holds one tag of {change}: {v}"
        );
    }
}

#[then(expr = "VPG {string} is still running, and the guard names its task")]
async fn still_running(world: &mut RewindWorld, vpg: String) {
    let v = world.last().vpg(&vpg).clone();
    assert_eq!(v["outcome"], "still_running", "{v}");
    let task_id = v["task_id"].as_str().expect("the task still running");
    assert!(
        world.last().text.contains(task_id),
        "the task id is handed back: {:#?}",
        world.last()
    );
    world
        .kept
        .insert("running task".into(), task_id.as_bytes().to_vec());
}

#[then("that task is still running at Zerto: it was not stopped")]
async fn task_still_running(world: &mut RewindWorld) {
    let task_id = String::from_utf8(world.kept["running task"].clone()).expect("a task id");
    let tasks = world.sim().await.tasks().await;
    let task = tasks
        .iter()
        .find(|t| t["TaskIdentifier"] == task_id.as_str())
        .unwrap_or_else(|| panic!("Zerto has no task {task_id}"));
    assert_eq!(task["State"], 1, "the task runs on: {task}");
}

#[given(expr = "a guard may take at most {int} seconds")]
async fn guard_deadline(world: &mut RewindWorld, seconds: u64) {
    world.reconfigure(|w| {
        w.extra_config
            .push_str(&format!("[guard]\ndeadline_secs = {seconds}\n"));
    });
}
