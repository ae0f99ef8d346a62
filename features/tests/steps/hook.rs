//! The Claude Code PreToolUse hook: `rewind hook pre-tool-use` as Claude Code runs it, with the hook's
//! JSON on stdin and its decision on stdout.

use cucumber::{given, then, when};
use features::RewindWorld;
use serde_json::{Value, json};

async fn ask_hook(world: &mut RewindWorld, input: String) {
    let answer = world
        .rewind(
            vec!["hook".into(), "pre-tool-use".into()],
            Some(input.clone()),
        )
        .await;
    assert_eq!(
        answer.exit_code(),
        Some(0),
        "the hook answers with a decision for {input:?}: {answer:#?}"
    );
}

#[when(expr = "Claude Code asks the hook about {string} with input {string}")]
async fn asks_about(world: &mut RewindWorld, tool: String, input: String) {
    let tool_input: Value = serde_json::from_str(&input).expect("the scenario's input is JSON");
    let event = json!({
        "session_id": "acceptance",
        "transcript_path": "/tmp/acceptance.jsonl",
        "cwd": "/work",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
    });
    ask_hook(world, event.to_string()).await;
}

#[when(expr = "Claude Code sends the hook {string}")]
async fn sends_raw(world: &mut RewindWorld, input: String) {
    ask_hook(world, input).await;
}

/// The hook's decision and reason, read from its stdout.
fn decision(world: &RewindWorld) -> (String, String) {
    let answer = world.last();
    let mut docs = serde_json::Deserializer::from_str(&answer.text).into_iter::<Value>();
    let out = docs
        .next()
        .and_then(Result::ok)
        .unwrap_or_else(|| panic!("the hook prints one JSON document: {answer:#?}"));
    let specific = &out["hookSpecificOutput"];
    assert_eq!(specific["hookEventName"], "PreToolUse", "{out}");
    (
        specific["permissionDecision"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        specific["permissionDecisionReason"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    )
}

#[then(expr = "the hook answers {string}")]
async fn hook_answers(world: &mut RewindWorld, expected: String) {
    let (got, reason) = decision(world);
    assert_eq!(got, expected, "the reason: {reason}");
    assert!(
        !reason.trim().is_empty(),
        "a decision comes with its reason"
    );
}

#[then(expr = "the hook's reason says {string}")]
async fn reason_says(world: &mut RewindWorld, words: String) {
    let (_, reason) = decision(world);
    assert!(
        reason.contains(&words),
        "the reason says {words:?}: {reason}"
    );
}

#[given(expr = "the hook's window is {int} minutes")]
async fn hook_window(world: &mut RewindWorld, minutes: u64) {
    world.reconfigure(|w| {
        w.extra_config
            .push_str(&format!("[hook]\nwindow_secs = {}\n", minutes * 60));
    });
}

#[given(expr = "that guard was {int} minutes ago")]
async fn guard_was_ago(world: &mut RewindWorld, minutes: i64) {
    let mut records = world.journal();
    let last = records.last_mut().expect("a journal record");
    assert_eq!(last["kind"], "guard", "{last}");
    last["time"] = json!((chrono::Utc::now() - chrono::Duration::minutes(minutes)).to_rfc3339());
    let text: String = records.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(world.journal_file(), text).expect("the journal is rewritten");
}

#[given("the tool catalog is damaged")]
async fn damaged_catalog(world: &mut RewindWorld) {
    let path = world.catalog_file();
    std::fs::create_dir_all(path.parent().expect("a folder")).expect("the catalog's folder");
    std::fs::write(path, "[[mutating]\nserver = ").expect("the catalog is written");
}

#[when(expr = "Claude Code asks the hook about {string} for the IP address of {string}")]
async fn asks_by_address(world: &mut RewindWorld, tool: String, vm: String) {
    let args = vec!["--json".to_string(), "find".to_string(), vm.clone()];
    let found = world.rewind(args, None).await.clone();
    let ip = found.result()["vm"]["ip_addresses"][0]
        .as_str()
        .unwrap_or_else(|| panic!("{vm} has an IP address: {found:#?}"))
        .to_string();
    let event = json!({
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": {"host": ip},
    });
    ask_hook(world, event.to_string()).await;
}

/// Guards, through the CLI, every VM the name stands for: `rewind find` lists them as candidates of
/// its refusal, and each is guarded by its vmIdentifier, which is unambiguous.
#[given(expr = "the operator has guarded every VM named {string}, each by its vmIdentifier")]
async fn guarded_every_vm_named(world: &mut RewindWorld, name: String) {
    let find = world
        .rewind(vec!["--json".into(), "find".into(), name.clone()], None)
        .await;
    let ids: Vec<String> = find.error.as_ref().expect("the name is ambiguous")["candidates"]
        .as_array()
        .unwrap_or_else(|| panic!("{name} lists its candidates: {find:#?}"))
        .iter()
        .map(|c| c["vm_id"].as_str().expect("a vm_id").to_string())
        .collect();
    assert!(ids.len() > 1, "{name} names several VMs: {ids:?}");
    for (n, id) in ids.iter().enumerate() {
        let args = [
            "--json", "guard", id, "--agent", "ops", "--action", "patch", "--change",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([format!("shared-name-{n}")])
        .collect();
        let answer = world.rewind(args, None).await;
        assert!(answer.ok, "the guard of {id} succeeds: {answer:#?}");
    }
}
