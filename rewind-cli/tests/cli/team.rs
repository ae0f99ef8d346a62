//! `[hook.team]`: the hook of a machine whose agent guards through a team server. The team server
//! (`rewind-mcp --http` with `[http.auth]`, here in this process) journals its guards in its own
//! home; the agent's machine (this test's home, which holds no ZVM credentials) asks the server
//! for its recent guards with the user's token, lets a change to a VM it guarded through, denies
//! one to a VM it did not, and fails closed when the server cannot tell it.

use serde_json::{Value, json};

use crate::env::{CLIENT_ID, CLIENT_SECRET, TestEnv};

/// The team server: its own home, its own journal, signed in by the Boston realm.
struct TeamServer {
    url: String,
    rewind: rewind_core::Rewind,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    served: tokio::task::JoinHandle<()>,
    _home: tempfile::TempDir,
}

impl TeamServer {
    async fn start(env: &TestEnv) -> TeamServer {
        let home = tempfile::tempdir().unwrap();
        let config = format!(
            "journal = \"{}\"\ncatalog = \"{}\"\n[sites.boston]\nurl = \"{}\"\nclient_id = \"{CLIENT_ID}\"\nclient_secret = \"{CLIENT_SECRET}\"\n[http.auth]\nissuer = \"{}/auth/realms/zerto\"\naudience = \"account\"\n",
            home.path().join("journal.jsonl").display(),
            home.path().join("catalog.toml").display(),
            env.sim.local().url,
            env.sim.local().url,
        );
        let path = home.path().join("config.toml");
        std::fs::write(&path, config).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let config = rewind_core::Config::load_with_env(Some(&path), &|_| None).unwrap();
        let rewind = rewind_core::Rewind::new(config).unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let served = tokio::spawn(rewind_mcp::serve_http(
            listener,
            rewind.clone(),
            rewind_mcp::HttpLimits::default(),
            async {
                let _ = stopped.await;
            },
        ));
        let served = tokio::spawn(async move {
            served.await.unwrap().unwrap();
        });
        TeamServer {
            url,
            rewind,
            stop: Some(stop),
            served,
            _home: home,
        }
    }

    /// A guard the server made for `user`, as a signed-in call of theirs makes it.
    async fn guard_for(&self, user: &str, vm: &str, change: &str) {
        let person = rewind_core::Person {
            subject: format!("sub-of-{user}"),
            name: Some(user.to_owned()),
        };
        let request = rewind_core::GuardRequest {
            vm: vm.to_owned(),
            agent: "claude-code".to_owned(),
            action: "edit app.conf".to_owned(),
            change_id: change.to_owned(),
        };
        let report = self
            .rewind
            .acting_for(person)
            .guard(request, &rewind_core::NoProgress)
            .await
            .unwrap();
        assert_eq!(report.verdict, rewind_core::Verdict::Guarded);
    }

    async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        self.served.await.unwrap();
    }
}

/// A simulator whose realm has carol, who may read what the team server holds, and dave, who
/// may not.
async fn start(seed: u64) -> TestEnv {
    let world = zvm_sim::test_kit::world_with_people(&[("carol", &["rewind-read"]), ("dave", &[])]);
    TestEnv::start_with(zvm_sim::Options {
        world,
        ..zvm_sim::Options::for_tests(seed)
    })
    .await
}

/// An access token of the Boston realm for `user`.
async fn token(env: &TestEnv, user: &str) -> String {
    let password = format!("{user}-password");
    let http = reqwest::Client::new();
    let answer: Value =
        zvm_sim::test_kit::password_grant(&http, &env.sim.local().url, user, &password)
            .await
            .json()
            .await
            .unwrap();
    answer["access_token"].as_str().unwrap().to_owned()
}

/// This machine's configuration: no site, only the team server, whose token `cat` prints.
fn agent_machine(env: &TestEnv, team_url: &str, token: &str) {
    let token_file = env.path("team-token");
    std::fs::write(&token_file, token).unwrap();
    env.write_config_text(&format!(
        "[hook.team]\nurl = \"{team_url}\"\ntoken_command = [\"cat\", \"{}\"]\ntimeout_secs = 5\n",
        token_file.display()
    ));
}

/// The hook's decision and reason on a call of vsphere's power_off for `vm`.
async fn power_off(env: &TestEnv, vm: &str) -> (String, String, i32) {
    let input = json!({
        "session_id": "s-1",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": "/work",
        "hook_event_name": "PreToolUse",
        "tool_name": "mcp__vsphere__power_off",
        "tool_input": {"vm": vm},
    });
    let run = env
        .rewind_with_stdin(&["hook", "pre-tool-use"], Some(&input.to_string()))
        .await;
    let out: Value = run.json();
    let specific = &out["hookSpecificOutput"];
    (
        specific["permissionDecision"].as_str().unwrap().to_owned(),
        specific["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .to_owned(),
        run.code,
    )
}

#[tokio::test]
async fn the_hook_of_another_machine_lets_through_a_change_the_team_server_guarded() {
    let env = start(81).await;
    let team = TeamServer::start(&env).await;
    team.guard_for("alice", "web-01", "team-1").await;
    agent_machine(&env, &team.url, &token(&env, "carol").await);
    env.catalog(&["add-mutating", "vsphere", "power_off", "--vm-arg", "vm"])
        .await;

    let (decision, reason, _) = power_off(&env, "web-01").await;
    assert_eq!(decision, "allow", "{reason}");
    assert!(
        reason.contains("team-1") && reason.contains("alice"),
        "{reason}"
    );
    let (decision, reason, _) = power_off(&env, "db-01").await;
    assert_eq!(decision, "deny", "{reason}");
    assert!(reason.contains("guard db-01 first"), "{reason}");
    assert!(
        !std::fs::exists(env.journal_file()).unwrap(),
        "this machine journaled nothing: the guard is the team server's"
    );

    // A tool whose VM argument the catalog does not name: the VMs its input mentions are looked
    // for among all the team server's records.
    env.catalog(&["add-mutating", "vsphere", "run_script"])
        .await;
    let input = json!({
        "session_id": "s-1",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": "/work",
        "hook_event_name": "PreToolUse",
        "tool_name": "mcp__vsphere__run_script",
        "tool_input": {"target": "web-01", "script": "systemctl restart app"},
    });
    let run = env
        .rewind_with_stdin(&["hook", "pre-tool-use"], Some(&input.to_string()))
        .await;
    let out: Value = run.json();
    assert_eq!(
        out["hookSpecificOutput"]["permissionDecision"], "allow",
        "{out}"
    );

    // A guard the team server makes later is seen by the next call, whatever it answered before.
    team.guard_for("bob", "db-01", "team-2").await;
    let (decision, reason, _) = power_off(&env, "db-01").await;
    assert_eq!(decision, "allow", "{reason}");
    assert!(reason.contains("bob"), "{reason}");
    team.stop().await;
}

#[tokio::test]
async fn a_team_server_that_cannot_tell_blocks_the_change() {
    let env = start(82).await;
    let team = TeamServer::start(&env).await;
    team.guard_for("alice", "web-01", "team-2").await;
    env.catalog(&["add-mutating", "vsphere", "power_off", "--vm-arg", "vm"])
        .await;

    // A token the server does not take: refused, and said so without the token.
    agent_machine(&env, &team.url, "not-a-token");
    let (decision, reason, code) = power_off(&env, "web-01").await;
    assert_eq!((decision.as_str(), code), ("deny", 2), "{reason}");
    assert!(
        reason.contains("fail closed")
            && reason.contains("401")
            && reason.contains("sign in again"),
        "{reason}"
    );
    assert!(!reason.contains("not-a-token"), "{reason}");

    // A user without the read role: refused, naming the role.
    agent_machine(&env, &team.url, &token(&env, "dave").await);
    let (decision, reason, code) = power_off(&env, "web-01").await;
    assert_eq!((decision.as_str(), code), ("deny", 2), "{reason}");
    assert!(
        reason.contains("403") && reason.contains("rewind-read"),
        "{reason}"
    );

    // The server gone: the call is blocked, naming it.
    let url = team.url.clone();
    team.stop().await;
    agent_machine(&env, &url, &token(&env, "carol").await);
    let (decision, reason, code) = power_off(&env, "web-01").await;
    assert_eq!((decision.as_str(), code), ("deny", 2), "{reason}");
    assert!(
        reason.contains("fail closed") && reason.contains(&url),
        "{reason}"
    );
}

/// The hook's answer as Codex CLI reads it: no output is an allow; else its decision and reason.
async fn codex_power_off(env: &TestEnv, vm: &str) -> (String, String) {
    let input = json!({
        "session_id": "01a2345b-e92d-7e40-984f-d4bb3642065c",
        "turn_id": "01a2345b-e93f-7ec0-9113-6762cbd5b471", "transcript_path": null,
        "cwd": "/work", "hook_event_name": "PreToolUse", "model": "gpt-5.5",
        "permission_mode": "bypassPermissions", "tool_name": "mcp__vsphere__power_off",
        "tool_input": {"vm": vm}, "tool_use_id": "call-exec-1",
    });
    let run = env
        .rewind_with_stdin(
            &["hook", "pre-tool-use", "--host", "codex"],
            Some(&input.to_string()),
        )
        .await;
    if run.stdout.trim().is_empty() {
        return ("allow".to_owned(), String::new());
    }
    let out: Value = run.json();
    let specific = &out["hookSpecificOutput"];
    (
        specific["permissionDecision"].as_str().unwrap().to_owned(),
        specific["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .to_owned(),
    )
}

#[tokio::test]
async fn a_codex_deny_carries_the_held_calls_id_and_the_approved_call_is_allowed_once() {
    let world = zvm_sim::test_kit::world_with_people(&[
        ("erin", &["rewind-read", "rewind-guard"]),
        ("frank", &["rewind-read", "rewind-guard", "rewind-approve"]),
    ]);
    let env = TestEnv::start_with(zvm_sim::Options {
        world,
        ..zvm_sim::Options::for_tests(83)
    })
    .await;
    let team = TeamServer::start(&env).await;
    agent_machine(&env, &team.url, &token(&env, "erin").await);
    env.catalog(&["add-mutating", "vsphere", "power_off", "--vm-arg", "vm"])
        .await;

    let (decision, reason) = codex_power_off(&env, "db-01").await;
    assert_eq!(decision, "deny", "{reason}");
    assert!(
        reason.contains("guard db-01 first"),
        "the reason it was blocked: {reason}"
    );
    let held = team.rewind.held_calls().list().unwrap();
    assert_eq!(held.len(), 1, "{held:?}");
    let id = &held[0].id;
    assert!(
        reason.contains(id.as_str()) && reason.contains(&format!("/v1/approvals/{id}")),
        "{reason}"
    );

    // Approved by frank with `rewind approvals`, which reaches the team server as the hook does.
    agent_machine(&env, &team.url, &token(&env, "frank").await);
    let listed = env.rewind(&["approvals", "list"]).await;
    assert!(
        listed.stdout.contains(id.as_str()) && listed.stdout.contains("held"),
        "{}",
        listed.stdout
    );
    let approved = env
        .rewind(&["approvals", "approve", id, "--comment", "power it off once"])
        .await;
    assert_eq!(approved.code, 0, "{}{}", approved.stdout, approved.stderr);
    assert!(approved.stdout.contains("runs once"), "{}", approved.stdout);
    agent_machine(&env, &team.url, &token(&env, "erin").await);

    let (decision, reason) = codex_power_off(&env, "db-01").await;
    assert_eq!(decision, "allow", "the approved call, once: {reason}");
    let (decision, reason) = codex_power_off(&env, "db-01").await;
    assert_eq!(decision, "deny", "{reason}");
    assert!(reason.contains("already let through once"), "{reason}");
    let states: Vec<String> = team
        .rewind
        .held_calls()
        .list()
        .unwrap()
        .iter()
        .map(|c| c.state.to_string())
        .collect();
    assert_eq!(states, ["allowed"]);
    team.stop().await;
}

#[tokio::test]
async fn a_hook_with_two_team_urls_goes_on_to_the_second_when_the_first_is_gone() {
    let env = start(84).await;
    let team = TeamServer::start(&env).await;
    team.guard_for("alice", "web-01", "team-3").await;
    env.catalog(&["add-mutating", "vsphere", "power_off", "--vm-arg", "vm"])
        .await;
    // A replica that is gone: a port nothing listens on.
    let gone = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let token_file = env.path("team-token");
    std::fs::write(&token_file, token(&env, "carol").await).unwrap();
    env.write_config_text(&format!(
        "[hook.team]\nurl = [\"{gone}\", \"{}\"]\ntoken_command = [\"cat\", \"{}\"]\ntimeout_secs = 5\n",
        team.url,
        token_file.display()
    ));
    let (decision, reason, _) = power_off(&env, "web-01").await;
    assert_eq!(decision, "allow", "the second URL answered: {reason}");
    assert!(reason.contains("team-3"), "{reason}");

    // Both gone: the call is blocked, naming each.
    let url = team.url.clone();
    team.stop().await;
    let (decision, reason, code) = power_off(&env, "web-01").await;
    assert_eq!((decision.as_str(), code), ("deny", 2), "{reason}");
    assert!(reason.contains(&gone) && reason.contains(&url), "{reason}");
}
