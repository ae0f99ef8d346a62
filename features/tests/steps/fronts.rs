//! The fronts as their users meet them: the operator runs `rewind` (every command with `--json`, so
//! the steps read the documented JSON document; the hook speaks its own protocol), the agent calls
//! `rewind-mcp`'s tools. Then what they answered: success, refusal, exit code, words.

use cucumber::{given, then, when};
use features::answer::Front;
use features::{RewindWorld, split_command};
use serde_json::{Value, json};

/// The agent name the agent's guards use.
pub const AGENT: &str = "claude-code";

/// The arguments of `rewind <line>`, with `<recovery folder>` put in and `--json` in front (except for
/// the hook and completions, which have their own output).
pub fn cli_args(world: &RewindWorld, line: &str) -> Vec<String> {
    let folder = format!("\"{}\"", world.recovery_dir().display());
    let mut args = split_command(&line.replace("<recovery folder>", &folder));
    if !matches!(
        args.first().map(String::as_str),
        Some("hook" | "completions")
    ) {
        args.insert(0, "--json".into());
    }
    args
}

#[when(regex = r"^the operator runs `rewind (.+)`$")]
#[given(regex = r"^the operator runs `rewind (.+)`$")]
async fn operator_runs(world: &mut RewindWorld, line: String) {
    let args = cli_args(world, &line);
    world.rewind(args, None).await;
}

#[given(regex = r"^the operator has run `rewind (.+)`$")]
async fn operator_has_run(world: &mut RewindWorld, line: String) {
    let args = cli_args(world, &line);
    let answer = world.rewind(args, None).await;
    assert!(answer.ok, "`rewind {line}` succeeds: {answer:#?}");
}

#[when(regex = r#"^the operator starts `rewind (.+)` as "([^"]+)"$"#)]
async fn operator_starts(world: &mut RewindWorld, line: String, label: String) {
    let args = cli_args(world, &line);
    world.spawn_rewind(&label, args).await;
}

#[then(regex = r#"^"([^"]+)" ends with exit code (\d+)$"#)]
async fn background_ends(world: &mut RewindWorld, label: String, code: i32) {
    let answer = world.finish(&label).await;
    assert_eq!(answer.exit_code(), Some(code), "{label}: {answer:#?}");
}

#[then("rewind succeeds")]
async fn rewind_succeeds(world: &mut RewindWorld) {
    let answer = world.last();
    assert!(
        matches!(answer.front, Front::Cli { code: 0, .. }),
        "rewind exits 0: {answer:#?}"
    );
}

#[then(expr = "rewind stops with exit code {int}")]
async fn rewind_stops(world: &mut RewindWorld, code: i32) {
    let answer = world.last();
    assert_eq!(answer.exit_code(), Some(code), "exit code: {answer:#?}");
}

#[then(expr = "rewind refuses with exit code {int}")]
async fn rewind_refuses(world: &mut RewindWorld, code: i32) {
    let answer = world.last();
    assert_eq!(answer.exit_code(), Some(code), "exit code: {answer:#?}");
    let error = answer.error_message();
    assert!(!error.trim().is_empty(), "{answer:#?}");
    // The error also goes to stderr as one line: `rewind: ` and what failed.
    let Front::Cli { .. } = answer.front else {
        panic!("not a CLI answer: {answer:#?}")
    };
    let stderr_lines: Vec<&str> = answer
        .text
        .lines()
        .filter(|l| l.starts_with("rewind: "))
        .collect();
    assert_eq!(
        stderr_lines.len(),
        1,
        "one error line on stderr: {answer:#?}"
    );
}

#[then("the tool succeeds")]
async fn tool_succeeds(world: &mut RewindWorld) {
    let answer = world.last();
    assert!(
        matches!(answer.front, Front::Mcp { .. }) && answer.ok,
        "the tool succeeds: {answer:#?}"
    );
}

#[then("the tool reports an error")]
async fn tool_reports_error(world: &mut RewindWorld) {
    let answer = world.last();
    assert!(
        matches!(answer.front, Front::Mcp { .. }) && !answer.ok,
        "the tool reports an error (isError): {answer:#?}"
    );
    assert!(
        !answer.error_message().trim().is_empty(),
        "the error says what went wrong: {answer:#?}"
    );
}

#[then(expr = "the answer says {string}")]
async fn answer_says(world: &mut RewindWorld, words: String) {
    let answer = world.last();
    let said = answer
        .error
        .as_ref()
        .and_then(|e| e["message"].as_str())
        .map(|m| format!("{m}\n{}", answer.text))
        .unwrap_or_else(|| answer.text.clone());
    assert!(
        said.contains(&words),
        "the answer says {words:?}: {answer:#?}"
    );
}

#[then(expr = "the error is of kind {string}")]
async fn error_kind(world: &mut RewindWorld, kind: String) {
    let answer = world.last();
    let got = answer.error.as_ref().map(|e| e["kind"].clone());
    assert_eq!(got, Some(json!(kind)), "{answer:#?}");
}

#[then(expr = "the answer does not show {string}")]
async fn answer_does_not_show(world: &mut RewindWorld, secret: String) {
    for answer in &world.answers {
        assert!(
            !answer.text.contains(&secret),
            "{secret:?} must never be shown: {answer:#?}"
        );
    }
}

/// Whether `text` shows a refused token or a server error to its reader: the phrases a front would
/// use if it passed one on (identifiers and durations are digits too, so a bare number is not one).
fn shows_auth_or_server_error(text: &str) -> Option<&'static str> {
    let lower = text.to_lowercase();
    [
        "http 401",
        "status 401",
        "401 unauthorized",
        "(401)",
        "unauthorized",
        "invalid_token",
        "http 500",
        "http 502",
        "http 503",
        "http 504",
        "status 503",
        "service unavailable",
        "internal server error",
        "bad gateway",
    ]
    .into_iter()
    .find(|w| lower.contains(w))
}

#[then("no answer mentioned a 401 or 5xx")]
async fn no_401(world: &mut RewindWorld) {
    assert!(!world.answers.is_empty(), "no front was called");
    for answer in &world.answers {
        if let Some(w) = shows_auth_or_server_error(&answer.text) {
            panic!("an answer showed {w:?}: {answer:#?}");
        }
    }
}

/// Calls `zerto_guard_before_mutate` as the agent.
pub async fn agent_guards(world: &mut RewindWorld, vm: &str, change: &str) {
    let args = json!({
        "vm": vm,
        "agent": AGENT,
        "action": format!("change {vm}"),
        "change_id": change,
    });
    world.call("zerto_guard_before_mutate", args).await;
}

#[when(expr = "the agent guards {string} for change {string}")]
async fn when_agent_guards(world: &mut RewindWorld, vm: String, change: String) {
    agent_guards(world, &vm, &change).await;
}

#[given(expr = "the agent has guarded {string} for change {string}")]
async fn given_agent_guarded(world: &mut RewindWorld, vm: String, change: String) {
    agent_guards(world, &vm, &change).await;
    let answer = world.last();
    assert_eq!(
        answer.result()["verdict"],
        "guarded",
        "the guard of {vm}: {answer:#?}"
    );
}

#[when(expr = "the agent finds the protection of {string}")]
async fn when_agent_finds(world: &mut RewindWorld, vm: String) {
    world.call("zerto_find_protection", json!({"vm": vm})).await;
}

#[given(expr = "the agent has found the protection of {string}")]
async fn given_agent_found(world: &mut RewindWorld, vm: String) {
    let answer = world.call("zerto_find_protection", json!({"vm": vm})).await;
    assert!(answer.ok, "the agent finds {vm}: {answer:#?}");
}

/// The result as a JSON value, for steps that read one field.
pub fn result(world: &RewindWorld) -> &Value {
    world.last().result()
}
