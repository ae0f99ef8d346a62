//! No secret leaves the MCP server: the built binary over stdio with `RUST_LOG=trace` (every crate,
//! rmcp's protocol traces included), distinctive passwords and client secrets, across 401 retries
//! (tokens revoked mid-guard), a guard, tags, a file-level recovery, the journal, an authentication
//! failure, and configuration errors that could quote the line holding a secret. Every secret and
//! every token the simulator issued is then looked for in the server's stderr and in every MCP result.
//! (rewind-cli's tests/secrets.rs proves the same of the core and the `rewind` binary.)

use std::path::Path;
use std::process::Stdio;

use rmcp::service::{RoleClient, RunningService};

use serde_json::{Value, json};

use zvm_sim::test_kit::{self, CLIENT_ID};

use crate::helper::{Human, Protocol, Setup, TestEnv, call, expect_guarded, is_error, line};

const CLIENT_SECRET: &str = "cs-M4p7-distinct-mcp-client-secret";
const ADMIN_PASSWORD: &str = "pw-R8d2-distinct-mcp-admin-password";
const OPERATOR_PASSWORD: &str = "pw-W6n1-distinct-mcp-operator-password";
const WRONG_SECRET: &str = "ws-J5c9-distinct-mcp-wrong-secret";

/// The default world with this test's passwords and client secret.
fn world() -> zvm_sim::WorldSpec {
    test_kit::world_with_secrets(ADMIN_PASSWORD, OPERATOR_PASSWORD, CLIENT_SECRET)
}

/// The configuration: Boston through the client secret, Denver through the admin's password.
fn config(env: &TestEnv, client_secret: &str, password: &str) -> String {
    format!(
        "catalog = {:?}\njournal = {:?}\n\n[sites.boston]\nurl = {:?}\nclient_id = {CLIENT_ID:?}\nclient_secret = {client_secret:?}\n\n[sites.denver]\nurl = {:?}\nusername = \"admin\"\npassword = {password:?}\n\n[guard]\ndeadline_secs = 30\n",
        env.catalog_path(),
        env.journal_path(),
        env.sim.local().url,
        env.sim.peer().url,
    )
}

/// The binary logging everything at trace level into the file `log`, and a client of it.
async fn at_trace(env: &TestEnv, log: &Path) -> RunningService<RoleClient, Human> {
    let stderr = Stdio::from(std::fs::File::create(log).expect("the log file is created"));
    env.stdio_at_trace(Human::unreachable(), Protocol::Legacy, stderr)
        .await
}

#[tokio::test]
async fn at_trace_level_no_password_client_secret_or_token_reaches_stderr_or_a_result() {
    let env = TestEnv::start_with(
        zvm_sim::Options {
            world: world(),
            ..zvm_sim::Options::for_tests(91)
        },
        Setup::File,
    )
    .await;
    let boston = env.sim.local().url.clone();
    std::fs::write(
        env.config_path(),
        config(&env, CLIENT_SECRET, ADMIN_PASSWORD),
    )
    .unwrap();
    let http = reqwest::Client::new();
    let mut results = Vec::new();

    // A token this test fetches itself, as an operator would with curl.
    let token: Value = test_kit::password_grant(&http, &boston, "admin", ADMIN_PASSWORD)
        .await
        .json()
        .await
        .unwrap();
    let mut tokens: Vec<String> = ["access_token", "refresh_token"]
        .iter()
        .filter_map(|k| token[*k].as_str().map(str::to_string))
        .collect();
    assert!(!tokens.is_empty(), "{token}");

    // 401 retries: every Boston token is revoked at the first task poll.
    env.control
        .post(
            "faults",
            json!({"Method": "GET", "Path": "/v1/tasks/*", "Site": "Boston",
            "Action": "RevokeTokens", "Count": 1}),
        )
        .await;
    let traced = env.dir.path().join("stderr.log");
    let client = at_trace(&env, &traced).await;
    let guard = json!({"vm": "web-01", "agent": "secret-test", "action": "edit app.conf", "change_id": "chg-secrets"});
    let guarded = call(&client, "zerto_guard_before_mutate", guard).await;
    expect_guarded(&guarded);
    let destination = env.dir.path().join("recovered");
    for (tool, args) in [
        ("zerto_find_protection", json!({"vm": "web-01"})),
        (
            "zerto_list_tags",
            json!({"vm": "web-01", "change_id": "chg-secrets"}),
        ),
        (
            "zerto_recover_file",
            json!({"vm": "web-01", "change_id": "chg-secrets", "paths": ["sda1/etc/hostname"],
                   "destination": destination.to_str().unwrap()}),
        ),
        ("zerto_journal", json!({"vm": "web-01"})),
        (
            "zerto_check_tool",
            json!({"server": "some-server", "tool": "deploy"}),
        ),
    ] {
        let result = call(&client, tool, args).await;
        assert!(!is_error(&result), "{tool}: {}", line(&result));
        results.push(serde_json::to_string(&result).unwrap());
    }
    results.push(serde_json::to_string(&guarded).unwrap());
    client.cancel().await.unwrap();
    let calls = env.control.get("calls").await;
    assert!(
        calls.as_array().unwrap().iter().any(|c| c["Status"] == 401),
        "a token was refused and the call retried with a new one"
    );

    // An authentication failure: a wrong client secret and a wrong password.
    std::fs::write(env.config_path(), config(&env, WRONG_SECRET, WRONG_SECRET)).unwrap();
    let refused_log = env.dir.path().join("stderr-refused.log");
    let client = at_trace(&env, &refused_log).await;
    let refused = call(&client, "zerto_find_protection", json!({"vm": "web-01"})).await;
    assert!(is_error(&refused), "{}", line(&refused));
    results.push(serde_json::to_string(&refused).unwrap());
    client.cancel().await.unwrap();

    // Configuration errors whose messages could quote the line holding the secret: the server stops
    // with one line on stderr.
    let mut stderr =
        std::fs::read_to_string(&traced).unwrap() + &std::fs::read_to_string(&refused_log).unwrap();
    assert!(
        stderr.contains("TRACE") && stderr.contains("rmcp"),
        "the server logged at trace level, rmcp included"
    );
    let head = format!(
        "catalog = {:?}\njournal = {:?}\n\n[sites.boston]\nurl = {boston:?}\n",
        env.catalog_path(),
        env.journal_path()
    );
    for broken in [
        format!("client_id = {CLIENT_ID:?}\nclient_secret = \"{CLIENT_SECRET}\n"),
        format!("client_id = {CLIENT_ID:?}\nclient_secret = [{CLIENT_SECRET:?}]\n"),
        format!("username = \"admin\"\npassword = {{ value = {ADMIN_PASSWORD:?} }}\n"),
        format!(
            "client_id = {CLIENT_ID:?}\nclient_secret = {CLIENT_SECRET:?}\nusername = \"admin\"\npassword = {ADMIN_PASSWORD:?}\n"
        ),
    ] {
        std::fs::write(env.config_path(), format!("{head}{broken}")).unwrap();
        let out = env
            .command(&[])
            .env("RUST_LOG", "trace")
            .stdin(Stdio::null())
            .output()
            .await
            .unwrap();
        assert!(
            !out.status.success(),
            "a broken configuration stops the server"
        );
        let text = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(text.contains("rewind-mcp: "), "{text}");
        stderr.push_str(&text);
        stderr.push_str(&String::from_utf8_lossy(&out.stdout));
    }

    // Every token the simulator issued in this run, live or revoked, as its saved state holds them.
    tokens.extend(env.control.issued_tokens().await);
    assert!(
        tokens.len() > 2,
        "the run's tokens were found: {}",
        tokens.len()
    );
    let results = results.join("\n");
    let secrets: Vec<String> = [
        CLIENT_SECRET,
        ADMIN_PASSWORD,
        OPERATOR_PASSWORD,
        WRONG_SECRET,
    ]
    .into_iter()
    .map(str::to_string)
    .chain(tokens)
    .collect();
    test_kit::assert_no_secret(
        &secrets,
        &[
            ("the server's stderr", stderr.as_str()),
            ("an MCP result", results.as_str()),
        ],
    );
}
