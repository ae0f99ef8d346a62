//! `rewind hook pre-tool-use`: allow, ask and deny, and fail closed on input, a catalog or a journal
//! it cannot read.

use rewind_core::audit_journal::Phase;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::env::TestEnv;

/// Runs the hook on `input` and returns its decision and reason, once it exited with 0.
async fn hook(env: &TestEnv, input: &str) -> (String, String) {
    let (decision, reason, code) = hook_run(env, input).await;
    assert_eq!(code, 0, "{decision}: {reason}");
    (decision, reason)
}

/// Runs the hook on `input` and returns its decision, reason and exit code.
async fn hook_run(env: &TestEnv, input: &str) -> (String, String, i32) {
    let run = env
        .rewind_with_stdin(&["hook", "pre-tool-use"], Some(input))
        .await;
    let code = run.code;
    let out: Value = run.json();
    let specific = &out["hookSpecificOutput"];
    assert_eq!(specific["hookEventName"], "PreToolUse", "{out}");
    (
        specific["permissionDecision"].as_str().unwrap().to_string(),
        specific["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .to_string(),
        code,
    )
}

/// Runs the hook on `input` and checks that it failed closed (a deny, exit 2) because of `cause`.
async fn expect_fail_closed(env: &TestEnv, input: &str, cause: &str) {
    let (decision, reason, code) = hook_run(env, input).await;
    assert_eq!((decision.as_str(), code), ("deny", 2), "{reason}");
    assert!(
        reason.contains(cause) && reason.contains("fail closed"),
        "{reason}"
    );
}

/// Adds `record` as one more line of the audit journal, as another guard would have written it.
fn append_to_journal(env: &TestEnv, record: &Value) {
    let mut journal = std::fs::read_to_string(env.journal_file()).unwrap();
    journal.push_str(&format!("{record}\n"));
    std::fs::write(env.journal_file(), journal).unwrap();
}

fn call(tool_name: &str, tool_input: Value) -> String {
    json!({
        "session_id": "s-1",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": "/work",
        "hook_event_name": "PreToolUse",
        "tool_name": tool_name,
        "tool_input": tool_input,
    })
    .to_string()
}

#[tokio::test]
async fn a_read_only_tool_is_allowed() {
    let env = TestEnv::start(41).await;
    let (decision, reason) = hook(&env, &call("Read", json!({"file_path": "/etc/hosts"}))).await;
    assert_eq!(decision, "allow");
    assert!(reason.contains("claude-code/Read is read-only"), "{reason}");
    env.catalog(&["add-read-only", "vsphere", "*"]).await;
    let (decision, _) = hook(&env, &call("mcp__vsphere__list_vms", json!({}))).await;
    assert_eq!(decision, "allow");
}

#[tokio::test]
async fn the_guard_tool_runs_without_a_question_and_a_bounded_recover_is_put_to_the_human() {
    let env = TestEnv::start(49).await;
    let guard = call(
        "mcp__zerto-rewind__zerto_guard_before_mutate",
        json!({"vm": "web-01", "agent": "claude-code", "action": "edit", "change_id": "c1"}),
    );
    let (decision, reason) = hook(&env, &guard).await;
    assert_eq!(decision, "allow", "{reason}");
    let add = call(
        "mcp__zerto-rewind__zerto_add_mutating_tool",
        json!({"server": "ssh", "tool": "run"}),
    );
    assert_eq!(hook(&env, &add).await.0, "allow");
    for tool in [
        "zerto_add_read_only_tool",
        "zerto_recover_file",
        "zerto_clone",
    ] {
        let (decision, reason) = hook(
            &env,
            &call(&format!("mcp__zerto-rewind__{tool}"), json!({})),
        )
        .await;
        assert_eq!(decision, "ask", "{tool}: {reason}");
    }
}

#[tokio::test]
async fn a_tool_name_the_catalog_refuses_is_blocked_as_malformed_input() {
    let env = TestEnv::start(51).await;
    let input = call("mcp__ssh__run\u{7}", json!({}));
    expect_fail_closed(&env, &input, "invalid catalog tool").await;
}

#[tokio::test]
async fn an_unknown_tool_is_asked_about_with_the_catalogs_question() {
    let env = TestEnv::start(42).await;
    let (decision, reason) =
        hook(&env, &call("Bash", json!({"command": "ssh web-01 reboot"}))).await;
    assert_eq!(decision, "ask");
    assert!(
        reason.contains("The tool Bash of claude-code is not in the tool catalog"),
        "{reason}"
    );
    let (decision, reason) = hook(&env, &call("mcp__ansible__run_playbook", json!({}))).await;
    assert_eq!(decision, "ask");
    assert!(reason.contains("run_playbook of ansible"), "{reason}");
}

#[tokio::test]
async fn a_mutating_tool_is_allowed_only_after_a_guard_of_the_vm_its_argument_names() {
    let env = TestEnv::start(43).await;
    env.catalog(&["add-mutating", "ssh", "run", "--vm-arg", "target.host"])
        .await;
    let input = call(
        "mcp__ssh__run",
        json!({"target": {"host": "web-01"}, "cmd": "edit"}),
    );
    let (decision, reason) = hook(&env, &input).await;
    assert_eq!(decision, "deny");
    assert!(reason.contains("guard web-01 first"), "{reason}");

    env.guard("web-01", "claude-code", "c1").await;
    let (decision, reason) = hook(&env, &input).await;
    assert_eq!(decision, "allow", "{reason}");
    assert!(
        reason.contains("web-01 was guarded") && reason.contains("c1"),
        "{reason}"
    );

    // Another VM is still not guarded.
    let other = call("mcp__ssh__run", json!({"target": {"host": "db-01"}}));
    let (decision, reason) = hook(&env, &other).await;
    assert_eq!(decision, "deny");
    assert!(reason.contains("guard db-01 first"), "{reason}");
}

#[tokio::test]
async fn a_mutating_tool_naming_the_vm_by_host_name_or_ip_address_is_allowed_after_its_guard() {
    let env = TestEnv::start(50).await;
    env.catalog(&["add-mutating", "ssh", "run", "--vm-arg", "host"])
        .await;
    let (run, found) = env.rewind_json(&["find", "web-01"]).await;
    run.expect_code(0);
    let ip = found["result"]["vm"]["ip_addresses"][0]
        .as_str()
        .expect("web-01 has an address")
        .to_string();
    let (_, other) = env.rewind_json(&["find", "db-01"]).await;
    let other_ip = other["result"]["vm"]["ip_addresses"][0]
        .as_str()
        .unwrap()
        .to_string();
    let by_fqdn = call("mcp__ssh__run", json!({"host": "web-01.corp.example"}));
    let by_ip = call("mcp__ssh__run", json!({"host": ip}));
    assert_eq!(hook(&env, &by_fqdn).await.0, "deny");
    assert_eq!(hook(&env, &by_ip).await.0, "deny");

    env.guard("web-01", "claude-code", "c1").await;
    let (decision, reason) = hook(&env, &by_fqdn).await;
    assert_eq!(decision, "allow", "{reason}");
    let (decision, reason) = hook(&env, &by_ip).await;
    assert_eq!(decision, "allow", "{reason}");
    let (decision, reason) = hook(&env, &call("mcp__ssh__run", json!({"host": other_ip}))).await;
    assert_eq!(decision, "deny", "{reason}");

    // Without a VM argument, an address in the input names the VM as well.
    env.catalog(&["add-mutating", "claude-code", "Bash"]).await;
    let (decision, reason) = hook(
        &env,
        &call(
            "Bash",
            json!({"command": format!("ssh root@{ip} systemctl restart app")}),
        ),
    )
    .await;
    assert_eq!(decision, "allow", "{reason}");
}

#[tokio::test]
async fn a_mutating_tool_without_a_vm_argument_is_judged_by_the_vm_its_input_names() {
    let env = TestEnv::start(44).await;
    env.catalog(&["add-mutating", "claude-code", "Bash"]).await;
    // No VM the journal knows is named: ask.
    let (decision, reason) = hook(
        &env,
        &call(
            "Bash",
            json!({"command": "ssh web-01 'sed -i s/a/b/ app.conf'"}),
        ),
    )
    .await;
    assert_eq!(decision, "ask", "{reason}");
    assert!(reason.contains("cannot tell which VM"), "{reason}");

    env.guard("web-01", "claude-code", "c1").await;
    let (decision, reason) = hook(
        &env,
        &call(
            "Bash",
            json!({"command": "ssh web-01.corp.example 'sed -i s/a/b/ app.conf'"}),
        ),
    )
    .await;
    assert_eq!(decision, "allow", "{reason}");

    // A VM the journal knows but whose guard is not recent (here: never guarded) is denied.
    // The guard's verdict line, made into a record of its own (no attempt ties it to web-01's).
    let mut record: Value = serde_json::from_str(
        std::fs::read_to_string(env.journal_file())
            .unwrap()
            .lines()
            .last()
            .unwrap(),
    )
    .unwrap();
    record.as_object_mut().unwrap().remove("attempt");
    record["vm"] = json!({"id": "x.vm-99", "name": "db-01", "site": "Boston"});
    record["time"] = json!((chrono::Utc::now() - chrono::Duration::hours(2)).to_rfc3339());
    append_to_journal(&env, &record);
    let (decision, reason) = hook(
        &env,
        &call("Bash", json!({"command": "ssh web-01 x; ssh db-01 y"})),
    )
    .await;
    assert_eq!(decision, "deny", "{reason}");
    assert!(
        reason.contains("db-01") && reason.contains("guard db-01 first"),
        "{reason}"
    );

    // Two such VMs are both named, and the advice is to guard each of them.
    record["vm"] = json!({"id": "x.vm-98", "name": "files-01", "site": "Boston"});
    append_to_journal(&env, &record);
    let (decision, reason) = hook(
        &env,
        &call("Bash", json!({"command": "ssh db-01 y; ssh files-01 z"})),
    )
    .await;
    assert_eq!(decision, "deny", "{reason}");
    assert!(
        reason.contains("names VMs ")
            && reason.contains("which have no guarded record")
            && reason.contains("db-01")
            && reason.contains("files-01")
            && reason.contains("`rewind guard <vm> ")
            && reason.contains("for each"),
        "{reason}"
    );
}

#[tokio::test]
async fn a_guard_older_than_the_window_does_not_count() {
    let env = TestEnv::start(45).await;
    env.write_config("[hook]\nwindow_secs = 600\n");
    env.catalog(&["add-mutating", "ssh", "run", "--vm-arg", "host"])
        .await;
    env.guard("web-01", "claude-code", "c1").await;
    let text = std::fs::read_to_string(env.journal_file()).unwrap();
    let mut record: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    record["time"] = json!((chrono::Utc::now() - chrono::Duration::minutes(11)).to_rfc3339());
    std::fs::write(env.journal_file(), format!("{record}\n")).unwrap();
    let (decision, reason) = hook(&env, &call("mcp__ssh__run", json!({"host": "web-01"}))).await;
    assert_eq!(decision, "deny", "{reason}");
    assert!(reason.contains("last 10 min"), "{reason}");
}

#[tokio::test]
async fn malformed_input_is_blocked_with_exit_2_and_a_deny() {
    let env = TestEnv::start(46).await;
    for bad in [
        "",
        "{not json",
        "{\"hook_event_name\": \"PreToolUse\"}",
        "{\"hook_event_name\": \"PostToolUse\", \"tool_name\": \"Read\", \"tool_input\": {}}",
        "{\"tool_name\": \"\", \"tool_input\": {}}",
    ] {
        let (decision, reason, code) = hook_run(&env, bad).await;
        assert_eq!((decision.as_str(), code), ("deny", 2), "{bad:?}: {reason}");
        assert!(reason.contains("fail closed"), "{reason}");
    }
}

#[tokio::test]
async fn an_unreadable_catalog_or_journal_is_blocked_with_exit_2_and_a_deny() {
    let env = TestEnv::start(47).await;
    std::fs::write(env.catalog_file(), "[[mutating]\nbroken").unwrap();
    expect_fail_closed(&env, &call("Read", json!({})), "tool catalog").await;

    std::fs::remove_file(env.catalog_file()).unwrap();
    env.catalog(&["add-mutating", "ssh", "run", "--vm-arg", "host"])
        .await;
    std::fs::create_dir_all(env.journal_file()).unwrap();
    let input = call("mcp__ssh__run", json!({"host": "web-01"}));
    expect_fail_closed(&env, &input, "audit journal").await;
}

#[tokio::test]
async fn the_hook_needs_no_zvm_and_no_configuration() {
    let env = TestEnv::start(48).await;
    env.guard("web-01", "claude-code", "c1").await;
    env.catalog(&["add-mutating", "ssh", "run", "--vm-arg", "host"])
        .await;
    // No site configured at all: the hook cannot reach a ZVM, and needs none. It reads only the
    // catalog and the journal at their default places.
    std::fs::remove_file(env.config_file()).unwrap();
    let (decision, reason) = hook(&env, &call("mcp__ssh__run", json!({"host": "web-01"}))).await;
    assert_eq!(decision, "allow", "{reason}");
    let (decision, _) = hook(&env, &call("mcp__ssh__run", json!({"host": "db-01"}))).await;
    assert_eq!(decision, "deny");
}

#[tokio::test]
async fn a_vm_name_shared_by_two_guarded_vms_of_the_journal_is_put_to_the_human_naming_both() {
    let env = TestEnv::start(52).await;
    // build-agent is two VMs, one at each site: find names both, and each is guarded by identifier.
    let (run, found) = env.rewind_json(&["find", "build-agent"]).await;
    run.expect_code(3);
    let ids: Vec<String> = found["error"]["candidates"]
        .as_array()
        .unwrap_or_else(|| panic!("find lists the candidates: {found}"))
        .iter()
        .map(|c| c["vm_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 2, "{found}");
    for id in &ids {
        env.guard(id, "claude-code", "c1").await;
    }
    // The first guard is older than the window: only the second VM is guarded now.
    let journal = std::fs::read_to_string(env.journal_file()).unwrap();
    let mut lines: Vec<Value> = journal
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let verdicts = lines
        .iter()
        .filter(|l| Phase::deserialize(&l["attempt"]["phase"]).is_ok_and(|p| p == Phase::Verdict))
        .count();
    assert_eq!(verdicts, 2);
    for line in lines
        .iter_mut()
        .filter(|l| l["vm"]["id"] == ids[0].as_str())
    {
        line["time"] = json!((chrono::Utc::now() - chrono::Duration::hours(2)).to_rfc3339());
    }
    let rewritten: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(env.journal_file(), rewritten).unwrap();

    env.catalog(&["add-mutating", "ssh", "run", "--vm-arg", "host"])
        .await;
    env.catalog(&["add-mutating", "claude-code", "Bash"]).await;
    for input in [
        call("mcp__ssh__run", json!({"host": "build-agent"})),
        call("mcp__ssh__run", json!({"host": "build-agent.corp.example"})),
        call(
            "Bash",
            json!({"command": "ssh build-agent 'rm -rf /var/cache/ci'"}),
        ),
    ] {
        let (decision, reason) = hook(&env, &input).await;
        assert_eq!(decision, "ask", "{input}: {reason}");
        assert!(
            reason.contains("more than one VM") && ids.iter().all(|id| reason.contains(id)),
            "{input}: {reason}"
        );
    }
    // Named by its identifier, each VM is judged by its own guard.
    let (decision, reason) = hook(&env, &call("mcp__ssh__run", json!({"host": ids[1]}))).await;
    assert_eq!(decision, "allow", "{reason}");
    let (decision, reason) = hook(&env, &call("mcp__ssh__run", json!({"host": ids[0]}))).await;
    assert_eq!(decision, "deny", "{reason}");
}

#[tokio::test]
async fn a_reason_quotes_at_most_a_few_hundred_bytes_of_a_huge_vm_argument() {
    let env = TestEnv::start(53).await;
    env.catalog(&["add-mutating", "ssh", "run", "--vm-arg", "host"])
        .await;
    let huge = "web-01".repeat(200_000);
    let (decision, reason) = hook(&env, &call("mcp__ssh__run", json!({"host": huge}))).await;
    assert_eq!(decision, "deny", "{}", &reason[..reason.len().min(600)]);
    assert!(reason.len() < 1_000, "a reason of {} bytes", reason.len());
    assert!(reason.contains("1200000 bytes in all"), "{reason}");
}

#[tokio::test]
async fn a_gateway_tool_is_read_as_its_upstreams_and_a_mutating_one_goes_on_to_the_gateway_that_guards()
 {
    let env = TestEnv::start(61).await;
    env.catalog(&["add-mutating", "fs", "write_file"]).await;
    env.catalog(&["add-read-only", "fs", "read_text_file"])
        .await;
    let through = |tool: &str| {
        call(
            &format!("mcp__zerto-rewind__fs__{tool}"),
            json!({"path": "/srv/a"}),
        )
    };
    let (decision, reason) = hook(&env, &through("write_file")).await;
    assert_eq!(decision, "allow", "{reason}");
    assert!(
        reason.contains("fs/write_file") && reason.contains("the gateway guards"),
        "{reason}"
    );
    let (decision, reason) = hook(&env, &through("read_text_file")).await;
    assert_eq!(decision, "allow", "{reason}");
    assert!(
        reason.contains("fs/read_text_file is read-only"),
        "{reason}"
    );
    let (decision, reason) = hook(&env, &through("move_file")).await;
    assert_eq!(decision, "ask", "{reason}");
    assert!(reason.contains("move_file of fs"), "{reason}");
}
