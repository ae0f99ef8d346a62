//! Tool classification: read-only, mutating, unknown; the human's answer, and the catalog that
//! remembers it.

use cucumber::{given, then, when};
use features::RewindWorld;
use features::mcp::{HumanAnswer, Protocol};
use serde_json::json;

use super::fronts::{cli_args, result};

#[given(expr = "the human will answer {string}")]
async fn human_answers(world: &mut RewindWorld, words: String) {
    *world.human.answer.lock().unwrap_or_else(|p| p.into_inner()) = HumanAnswer::parse(&words);
}

#[given("the agent's client cannot show forms")]
async fn no_forms(world: &mut RewindWorld) {
    assert!(
        !world.agent_started(),
        "what the client can do is fixed when its session starts"
    );
    world.human.can_show_forms = false;
}

#[given("the agent's client speaks protocol 2026-07-28")]
async fn newest_protocol(world: &mut RewindWorld) {
    assert!(
        !world.agent_started(),
        "the protocol is fixed when the session starts"
    );
    world.protocol = Protocol::Mrtr;
}

async fn check(world: &mut RewindWorld, server: &str, tool: &str, vm: Option<&str>) {
    let mut args = json!({"server": server, "tool": tool});
    if let Some(vm) = vm {
        args["vm"] = json!(vm);
    }
    let answer = world.call("zerto_check_tool", args).await;
    // Whatever the class, checking a tool is not a failure of the tool.
    assert!(answer.ok, "zerto_check_tool answers: {answer:#?}");
}

#[when(expr = "the agent checks tool {string} of server {string}")]
async fn checks(world: &mut RewindWorld, tool: String, server: String) {
    check(world, &server, &tool, None).await;
}

#[when(expr = "the agent checks tool {string} of server {string} for VM {string}")]
async fn checks_for_vm(world: &mut RewindWorld, tool: String, server: String, vm: String) {
    check(world, &server, &tool, Some(&vm)).await;
}

#[then(expr = "the tool is {string} and the agent is told to {string}")]
async fn class_and_next(world: &mut RewindWorld, class: String, next: String) {
    let r = result(world);
    assert_eq!(r["class"], class.as_str(), "{r}");
    assert_eq!(r["next"], next.as_str(), "{r}");
}

#[then(expr = "the agent is told to {string}")]
async fn told_to(world: &mut RewindWorld, next: String) {
    let r = result(world);
    assert_eq!(r["next"], next.as_str(), "{r}");
}

#[then(expr = "the tool is {string}")]
async fn class_is(world: &mut RewindWorld, class: String) {
    let r = result(world);
    assert_eq!(r["class"], class.as_str(), "{r}");
}

#[then(regex = r"^the human was asked (\d+) times?$")]
async fn times_asked(world: &mut RewindWorld, times: usize) {
    let asked = world.human.questions();
    assert_eq!(asked.len(), times, "the questions: {asked:#?}");
}

#[then(expr = "the question names {string} and {string}")]
async fn question_names(world: &mut RewindWorld, a: String, b: String) {
    let asked = world.human.questions();
    let q = asked.last().expect("a question was asked");
    assert!(q.contains(&a) && q.contains(&b), "the question: {q}");
}

#[then("the answer carries the question for the human")]
async fn carries_question(world: &mut RewindWorld) {
    let r = result(world);
    let question = r["question"].as_str().unwrap_or_default();
    assert!(
        question.contains("checkpoint"),
        "the question for the human: {r}"
    );
    assert_ne!(
        r["human"]["checkpoint"], true,
        "nobody answered yes here: {r}"
    );
}

/// What the catalog says now, as the operator's `rewind check-tool` reads it.
async fn catalog_class(world: &mut RewindWorld, server: &str, tool: &str) -> String {
    let args = cli_args(world, &format!("check-tool {server} {tool}"));
    let answer = world.rewind(args, None).await.clone();
    // An observation: the answer under test stays the last one.
    let observed = world.answers.pop().expect("just kept");
    let at = world.answers.len().saturating_sub(1);
    world.answers.insert(at, observed);
    answer.result()["class"]
        .as_str()
        .unwrap_or_else(|| panic!("check-tool gives a class: {answer:#?}"))
        .to_string()
}

#[then(regex = r#"^the catalog (?:still )?calls tool "([^"]+)" of server "([^"]+)" "([^"]+)"$"#)]
async fn catalog_calls(world: &mut RewindWorld, tool: String, server: String, class: String) {
    let got = catalog_class(world, &server, &tool).await;
    assert_eq!(got, class, "the catalog's class of {server}/{tool}");
}
