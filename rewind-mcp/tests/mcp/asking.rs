use rmcp::model::{CallToolResponse, ElicitRequestParams, InputRequest};
use serde_json::{Value, json};

use crate::helper::{
    Answer, Human, Protocol, Setup, TestEnv, call, expect_ok, is_error, line, params, structured,
};
use zvm_sim::test_kit::texts;

/// Checks `server`/`tool` on `vm` with a client that plays `human`, over `protocol`.
async fn check(env: &TestEnv, human: &Human, protocol: Protocol, tool: &str) -> Value {
    let client = env.stdio(human.clone(), protocol).await;
    let result = call(
        &client,
        "zerto_check_tool",
        json!({"server": "ssh", "tool": tool, "vm": "web-01"}),
    )
    .await;
    assert!(!is_error(&result), "{}", line(&result));
    client.cancel().await.unwrap();
    structured(&result).clone()
}

/// The form the human was shown: its message and its fields.
fn form(human: &Human) -> (String, Value) {
    let asked = human.asked.lock().unwrap();
    match asked.first().expect("the human was asked") {
        ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } => (
            message.clone(),
            serde_json::to_value(requested_schema).unwrap(),
        ),
        other => panic!("a form, not {other:?}"),
    }
}

#[tokio::test]
async fn known_tools_are_answered_from_the_catalog_without_asking() {
    let env = TestEnv::start(31, Setup::File).await;
    let human = Human::answering(Answer::Yes);
    let client = env.stdio(human.clone(), Protocol::Legacy).await;
    let check_tool = |args| call(&client, "zerto_check_tool", args);
    let read = check_tool(json!({"server": "claude-code", "tool": "Read"})).await;
    assert_eq!(structured(&read)["class"], "read_only");
    assert_eq!(structured(&read)["next"], "run");

    let add_run = json!({"server": "ssh", "tool": "run", "vm_arg": "host"});
    let added = call(&client, "zerto_add_mutating_tool", add_run.clone()).await;
    expect_ok(&added);
    let again = call(&client, "zerto_add_mutating_tool", add_run).await;
    assert_eq!(
        structured(&again)["class"],
        "mutating",
        "adding twice is harmless"
    );
    let catalog = std::fs::read_to_string(env.catalog_path()).unwrap();
    assert_eq!(catalog.matches("tool = \"run\"").count(), 1, "{catalog}");

    let mutating = check_tool(json!({"server": "ssh", "tool": "run", "vm": "web-01"})).await;
    let m = structured(&mutating);
    assert_eq!(
        (m["class"].as_str(), m["next"].as_str()),
        (Some("mutating"), Some("guard_first"))
    );
    assert_eq!(m["vm_arg"], "host");
    assert!(line(&mutating).contains("VM web-01"), "{}", line(&mutating));
    assert_eq!(human.times_asked(), 0, "known tools are not asked about");

    // An agent cannot downgrade a mutating tool to read-only.
    let ssh_run = json!({"server": "ssh", "tool": "run"});
    let downgrade = call(&client, "zerto_add_read_only_tool", ssh_run.clone()).await;
    assert!(is_error(&downgrade), "{}", line(&downgrade));
    let still = check_tool(ssh_run).await;
    assert_eq!(structured(&still)["class"], "mutating");

    let ro = call(
        &client,
        "zerto_add_read_only_tool",
        json!({"server": "ssh", "tool": "ls"}),
    )
    .await;
    assert_eq!(structured(&ro)["class"], "read_only", "{}", line(&ro));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_unknown_tool_asks_the_human_and_yes_means_guard_first() {
    let env = TestEnv::start(32, Setup::File).await;
    let human = Human::answering(Answer::Yes);
    let r = check(&env, &human, Protocol::Legacy, "run").await;
    assert_eq!(r["class"], "unknown");
    assert_eq!(r["next"], "guard_first");
    assert_eq!(r["human"]["answered"], true);
    assert_eq!(r["human"]["checkpoint"], true);
    assert!(r["human"].get("remembered_as").is_none());
    assert!(
        r["message"]
            .as_str()
            .unwrap()
            .contains("zerto_guard_before_mutate for VM web-01"),
        "{r}"
    );
    assert_eq!(human.times_asked(), 1);
    let (message, schema) = form(&human);
    assert!(
        message.contains("run") && message.contains("ssh") && message.contains("web-01"),
        "{message}"
    );
    assert_eq!(schema["required"], json!(["checkpoint"]));
    let options: Vec<&str> = texts(&schema["properties"]["checkpoint"]["oneOf"], "const");
    assert_eq!(options, ["yes", "no"]);
    assert_eq!(schema["properties"]["remember"]["type"], "boolean");
    assert!(
        !env.catalog_path().exists(),
        "without remember, the catalog is untouched"
    );
}

#[tokio::test]
async fn an_unknown_tool_answered_no_may_run_but_cannot_be_rewound() {
    let env = TestEnv::start(33, Setup::File).await;
    let human = Human::answering(Answer::No);
    let r = check(&env, &human, Protocol::Legacy, "run").await;
    assert_eq!(r["next"], "run_unguarded");
    assert_eq!(r["human"]["checkpoint"], false);
    assert!(
        r["message"]
            .as_str()
            .unwrap()
            .contains("Zerto cannot rewind this change"),
        "{r}"
    );
}

#[tokio::test]
async fn a_remembered_answer_goes_into_the_catalog_as_mutating_or_read_only() {
    let env = TestEnv::start(34, Setup::File).await;
    for (answer, tool, remembered_as) in [
        (Answer::YesRemember, "run", "mutating"),
        (Answer::NoRemember, "ls", "read_only"),
    ] {
        let r = check(&env, &Human::answering(answer), Protocol::Legacy, tool).await;
        assert_eq!(r["human"]["remembered_as"], remembered_as);
    }

    // Later calls are answered from the catalog, even by a client that cannot ask.
    let nobody = Human::unreachable();
    for (tool, class, next) in [
        ("run", "mutating", "guard_first"),
        ("ls", "read_only", "run"),
    ] {
        let r = check(&env, &nobody, Protocol::Legacy, tool).await;
        assert_eq!(
            (r["class"].as_str(), r["next"].as_str()),
            (Some(class), Some(next))
        );
    }
}

#[tokio::test]
async fn a_client_that_cannot_ask_gets_unknown_and_the_question_never_a_yes() {
    let env = TestEnv::start(35, Setup::File).await;
    for (human, protocol) in [
        (Human::unreachable(), Protocol::Legacy),
        (Human::unreachable(), Protocol::Mrtr),
        (Human::answering(Answer::Decline), Protocol::Legacy),
        (Human::answering(Answer::Decline), Protocol::Mrtr),
    ] {
        let r = check(&env, &human, protocol, "run").await;
        assert_eq!(r["class"], "unknown", "{protocol:?}: {r}");
        assert_eq!(r["next"], "ask_human", "{protocol:?}: {r}");
        assert_eq!(r["human"]["answered"], false);
        let question = r["question"].as_str().unwrap();
        assert!(
            question.contains("web-01") && question.contains("run"),
            "{question}"
        );
        assert!(
            r["message"].as_str().unwrap().contains(question),
            "the question is handed to the agent: {r}"
        );
    }
    assert!(!env.catalog_path().exists());
}

#[tokio::test]
async fn on_protocol_2026_07_28_the_question_is_an_input_required_result() {
    let env = TestEnv::start(36, Setup::File).await;
    let human = Human::answering(Answer::YesRemember);
    let client = env.stdio(human.clone(), Protocol::Mrtr).await;
    let args = json!({"server": "ssh", "tool": "run", "vm": "web-01"});

    // One round by hand: the server answers with the form, not with a yes.
    let first = client
        .call_tool_once(params("zerto_check_tool", args.clone()))
        .await
        .unwrap();
    let CallToolResponse::InputRequired(asked) = first else {
        panic!("an InputRequiredResult, got {first:?}");
    };
    let requests = asked.input_requests.as_ref().unwrap();
    assert!(matches!(
        requests.get("checkpoint_question"),
        Some(InputRequest::Elicitation(_))
    ));
    assert!(asked.request_state.is_some());

    // rmcp's client drives the rounds through the human.
    let result = call(&client, "zerto_check_tool", args).await;
    let r = structured(&result);
    assert_eq!(r["next"], "guard_first", "{r}");
    assert_eq!(r["human"]["remembered_as"], "mutating");
    assert_eq!(human.times_asked(), 1);
    client.cancel().await.unwrap();
}
