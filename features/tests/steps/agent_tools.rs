//! The agent's tools: what `rewind-mcp` lists, reading back a change, and recording tools in the
//! catalog through MCP.

use cucumber::gherkin::Step;
use cucumber::{then, when};
use features::RewindWorld;
use serde_json::{Value, json};

use super::fronts::result;
use super::protection::{cell, rows};
use super::words::names;

#[when("the agent lists rewind's tools")]
async fn lists_tools(world: &mut RewindWorld) {
    let tools = world.agent().await.tools().await;
    let listed: Value = tools
        .into_iter()
        .collect::<serde_json::Map<String, Value>>()
        .into();
    world
        .kept
        .insert("tools".into(), serde_json::to_vec(&listed).expect("JSON"));
}

#[then("it sees exactly these tools:")]
async fn sees_tools(world: &mut RewindWorld, step: &Step) {
    let listed: Value = serde_json::from_slice(&world.kept["tools"]).expect("the tools listed");
    let listed = listed.as_object().expect("tools by name");
    let expected = rows(step);
    let mut want: Vec<&str> = expected.iter().map(|r| cell(r, "tool")).collect();
    let mut got: Vec<&str> = listed.keys().map(String::as_str).collect();
    want.sort();
    got.sort();
    assert_eq!(got, want, "the tools rewind-mcp lists");
    for row in &expected {
        let tool = cell(row, "tool");
        let a = &listed[tool];
        let hint = |key: &str| a[key].as_bool();
        let read_only = cell(row, "read-only") == "yes";
        let destructive = cell(row, "destructive") == "yes";
        assert_eq!(hint("readOnlyHint"), Some(read_only), "{tool}: {a}");
        if !read_only {
            // For a tool that writes, the host reads destructiveHint (true when absent).
            assert_eq!(
                hint("destructiveHint").unwrap_or(true),
                destructive,
                "{tool}: {a}"
            );
        }
    }
}

#[when(expr = "the agent lists the tags of {string} for change {string}")]
async fn agent_lists_tags(world: &mut RewindWorld, vm: String, change: String) {
    world
        .call("zerto_list_tags", json!({"vm": vm, "change_id": change}))
        .await;
}

#[then(expr = "VPGs {string} each hold one tag of change {string}")]
async fn each_one_tag(world: &mut RewindWorld, list: String, change: String) {
    let answer = world.last();
    for vpg in names(&list) {
        let v = answer.vpg(&vpg);
        let tags: Vec<&Value> = v["tags"]
            .as_array()
            .expect("tags")
            .iter()
            .filter(|t| t["parts"]["change_id"] == change.as_str())
            .collect();
        assert_eq!(tags.len(), 1, "{vpg}: {v}");
    }
}

#[when(expr = "the agent reads the journal of change {string}")]
async fn agent_reads_journal(world: &mut RewindWorld, change: String) {
    world
        .call("zerto_journal", json!({"change_id": change}))
        .await;
}

#[then(expr = "the journal it read holds one guard of {string} with verdict {string}")]
async fn journal_read(world: &mut RewindWorld, vm: String, verdict: String) {
    let r = result(world);
    let records = r["records"].as_array().expect("records");
    assert_eq!(records.len(), 1, "{r}");
    assert_eq!(records[0]["kind"], "guard", "{r}");
    assert_eq!(records[0]["vm"]["name"], vm.as_str(), "{r}");
    assert_eq!(records[0]["verdict"], verdict.as_str(), "{r}");
}

#[when(
    expr = "the agent records tool {string} of server {string} as mutating, its VM in argument {string}"
)]
async fn records_mutating(world: &mut RewindWorld, tool: String, server: String, arg: String) {
    let answer = world
        .call(
            "zerto_add_mutating_tool",
            json!({"server": server, "tool": tool, "vm_arg": arg}),
        )
        .await;
    assert!(answer.ok, "{answer:#?}");
}

#[when(expr = "the agent records tool {string} of server {string} as read-only")]
async fn records_read_only(world: &mut RewindWorld, tool: String, server: String) {
    world
        .call(
            "zerto_add_read_only_tool",
            json!({"server": server, "tool": tool}),
        )
        .await;
}
