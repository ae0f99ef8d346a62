//! `[http.auth]`: rewind-mcp over HTTP as an OAuth resource server of the ZVM's Keycloak realm. No
//! token, a forged signature, another issuer's token, a token for another audience and an expired
//! one are refused with 401 and the `WWW-Authenticate` header the MCP specification asks for; a
//! good token is served; the protected-resource metadata names the issuer.

use reqwest::StatusCode;
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};

use crate::helper::{
    HttpServer, Human, Setup, TestEnv, call, expect_guarded, expect_ok, guard, line, recover_file,
};
use crate::recovery::APP_CONF;

/// The configuration's `[http.auth]`: the Boston realm, for `audience`.
pub(crate) fn signed_in(env: &TestEnv, audience: &str) {
    let text = std::fs::read_to_string(env.config_path()).unwrap();
    let auth = format!(
        "\n[http.auth]\nissuer = \"{}/auth/realms/zerto\"\naudience = \"{audience}\"\n",
        env.sim.local().url
    );
    std::fs::write(env.config_path(), text + &auth).unwrap();
}

/// An access token of `site`'s realm for the user admin.
async fn token(site: &str) -> String {
    token_of(site, "admin", "admin").await
}

/// A client of `server` signed in as `person` of the Boston realm (their password is
/// `<person>-password`), with a human who cannot be asked.
pub(crate) async fn client_as(
    env: &TestEnv,
    server: &HttpServer,
    person: &str,
) -> RunningService<RoleClient, Human> {
    let token = token_of(&env.sim.local().url, person, &format!("{person}-password")).await;
    server.client_with_token(Human::unreachable(), &token).await
}

/// An access token of `site`'s realm for `user` (the password grant of `zerto-client`).
pub(crate) async fn token_of(site: &str, user: &str, password: &str) -> String {
    let answer: Value =
        zvm_sim::test_kit::password_grant(&reqwest::Client::new(), site, user, password)
            .await
            .json()
            .await
            .unwrap();
    answer["access_token"].as_str().unwrap().to_owned()
}

/// `initialize` with this bearer token (if any): the status and the `WWW-Authenticate` header.
async fn initialize(url: &str, token: Option<&str>) -> (StatusCode, String) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}});
    let mut request = reqwest::Client::new()
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .json(&body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let answer = request.send().await.unwrap();
    let challenge = answer
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (answer.status(), challenge)
}

/// The token with its claims changed and its signature kept: a forgery.
fn forged(token: &str) -> String {
    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let parts: Vec<&str> = token.split('.').collect();
    let mut claims: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
    claims["preferred_username"] = json!("root");
    let body = URL_SAFE_NO_PAD.encode(claims.to_string());
    format!("{}.{body}.{}", parts[0], parts[2])
}

#[tokio::test]
async fn a_signed_in_server_takes_the_realms_token_and_refuses_every_other_with_401() {
    let env = TestEnv::start(51, Setup::File).await;
    signed_in(&env, "account");
    let server = env.http_server().await;
    let (status, challenge) = initialize(&server.url, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(
        challenge.starts_with("Bearer resource_metadata=\""),
        "{challenge}"
    );
    let metadata_url = challenge.split('"').nth(1).unwrap().to_owned();
    let metadata: Value = reqwest::get(&metadata_url)
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let issuer = format!("{}/auth/realms/zerto", env.sim.local().url);
    assert_eq!(metadata["authorization_servers"], json!([issuer]));
    assert_eq!(metadata["resource"], server.url.as_str());

    let good = token(&env.sim.local().url).await;
    assert_eq!(initialize(&server.url, Some(&good)).await.0, StatusCode::OK);
    for (bad, why) in [
        (forged(&good), "signature"),
        (token(&env.sim.peer().url).await, "issued by"),
        ("not-a-jwt".to_owned(), "not a JWT"),
    ] {
        let (status, challenge) = initialize(&server.url, Some(&bad)).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{why}");
        assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
        assert!(challenge.contains(why), "{why}: {challenge}");
        assert!(!challenge.contains(&bad), "the token is never echoed");
    }
}

#[tokio::test]
async fn a_token_for_another_audience_is_refused() {
    let env = TestEnv::start(52, Setup::File).await;
    signed_in(&env, "rewind-mcp");
    let server = env.http_server().await;
    let (status, challenge) =
        initialize(&server.url, Some(&token(&env.sim.local().url).await)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(challenge.contains("audience"), "{challenge}");
}

#[tokio::test]
async fn an_expired_token_is_refused() {
    // A realm whose clock runs two hours behind: every token it issues has expired here.
    let options = zvm_sim::Options {
        epoch: Some(chrono::Utc::now() - chrono::Duration::hours(2)),
        ..zvm_sim::Options::for_tests(53)
    };
    let env = TestEnv::start_with(options, Setup::File).await;
    signed_in(&env, "account");
    let server = env.http_server().await;
    let (status, challenge) =
        initialize(&server.url, Some(&token(&env.sim.local().url).await)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(challenge.contains("expired"), "{challenge}");
}

#[tokio::test]
async fn a_caller_without_the_role_a_tool_needs_gets_a_tool_error_naming_it() {
    let world = zvm_sim::test_kit::world_with_people(&[
        ("alice", &["rewind-read", "rewind-guard"]),
        ("bob", &["rewind-read"]),
    ]);
    let options = zvm_sim::Options {
        world,
        ..zvm_sim::Options::for_tests(54)
    };
    let env = TestEnv::start_with(options, Setup::File).await;
    signed_in(&env, "account");
    let server = env.http_server().await;

    let bob = client_as(&env, &server, "bob").await;
    expect_ok(&call(&bob, "zerto_find_protection", json!({"vm": "web-01"})).await);
    let refused = guard(&bob, "web-01", "edit app.conf", "role-1").await;
    assert_eq!(refused.is_error, Some(true));
    let said = line(&refused);
    assert!(
        said.contains("rewind-guard") && said.contains("bob"),
        "{said}"
    );
    assert!(env.insert_tasks().await.is_empty(), "nothing was inserted");
    bob.cancel().await.unwrap();

    let alice = client_as(&env, &server, "alice").await;
    expect_guarded(&guard(&alice, "web-01", "edit app.conf", "role-2").await);
    // A diff's list is a read; its content hands out the guest's bytes, as a recovery does.
    let diff = |content: bool| json!({"vm": "web-01", "change_id": "role-2", "paths": ["sda1/etc"], "content": content});
    expect_ok(&call(&alice, "zerto_diff_since_tag", diff(false)).await);
    let refused = call(&alice, "zerto_diff_since_tag", diff(true)).await;
    assert_eq!(refused.is_error, Some(true));
    let said = line(&refused);
    assert!(
        said.contains("rewind-recover") && said.contains("alice"),
        "{said}"
    );
    alice.cancel().await.unwrap();
}

/// The claims of a JWT, unchecked.
fn claims(token: &str) -> Value {
    use base64::Engine;
    let body = token.split('.').nth(1).unwrap();
    let decoded = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(body)
        .unwrap();
    serde_json::from_slice(&decoded).unwrap()
}

#[tokio::test]
async fn a_guard_over_http_journals_the_signed_in_person_and_the_journal_filters_by_them() {
    // A realm set up for rewind-mcp as Keycloak is: an audience mapper adds "rewind-mcp" to
    // every access token, and alice holds the roles to read and guard.
    let mut world = zvm_sim::test_kit::world_with_people(&[(
        "alice",
        &["rewind-read", "rewind-guard", "rewind-recover"],
    )]);
    world.audiences = vec!["rewind-mcp".to_owned()];
    let options = zvm_sim::Options {
        world,
        ..zvm_sim::Options::for_tests(55)
    };
    let env = TestEnv::start_with(options, Setup::File).await;
    signed_in(&env, "rewind-mcp");
    let server = env.http_server().await;
    let token = token_of(&env.sim.local().url, "alice", "alice-password").await;
    assert_eq!(claims(&token)["aud"], json!(["rewind-mcp", "account"]));
    let subject = claims(&token)["sub"].as_str().unwrap().to_owned();

    let alice = server.client_with_token(Human::unreachable(), &token).await;
    let guarded = guard(&alice, "web-01", "edit app.conf", "team-1").await;
    expect_guarded(&guarded);
    assert_eq!(
        guarded.structured_content.as_ref().unwrap()["person"],
        json!({"subject": subject, "name": "alice"})
    );
    let record = env.journal_record("team-1");
    assert_eq!(
        record["agent"], "claude-code",
        "the agent's own name is kept"
    );
    assert_eq!(record["person"]["subject"], subject.as_str());
    assert_eq!(record["person"]["name"], "alice");

    let journal = |person: &str| {
        call(
            &alice,
            "zerto_journal",
            json!({"person": person, "change_id": "team-1"}),
        )
    };
    let hers = journal("ALICE").await;
    expect_ok(&hers);
    let records = &hers.structured_content.as_ref().unwrap()["records"];
    assert_eq!(records.as_array().unwrap().len(), 1, "{records}");
    let by_subject = journal(&subject).await;
    assert_eq!(
        by_subject.structured_content.as_ref().unwrap()["records"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let nobody = journal("bob").await;
    assert!(
        nobody.structured_content.as_ref().unwrap()["records"]
            .as_array()
            .unwrap()
            .is_empty()
    );

    let destination = env.dir.path().join("restored");
    let recovered = recover_file(&alice, "web-01", "team-1", APP_CONF, &destination).await;
    expect_ok(&recovered);
    let records = journal("alice").await;
    let records = records.structured_content.as_ref().unwrap()["records"]
        .as_array()
        .unwrap()
        .clone();
    let recovery = records.iter().find(|r| r["kind"] == "recovery").unwrap();
    assert_eq!(recovery["person"]["subject"], subject.as_str());
    alice.cancel().await.unwrap();
}

#[tokio::test]
async fn behind_a_tls_proxy_the_metadata_names_the_resource_as_clients_reach_it() {
    let env = TestEnv::start(56, Setup::File).await;
    signed_in(&env, "account");
    let text = std::fs::read_to_string(env.config_path()).unwrap();
    std::fs::write(
        env.config_path(),
        text + "resource = \"https://rewind.example.com/mcp\"\n",
    )
    .unwrap();
    let server = env.http_server().await;
    let (status, challenge) = initialize(&server.url, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(
        challenge.contains(
            "resource_metadata=\"https://rewind.example.com/.well-known/oauth-protected-resource\""
        ),
        "{challenge}"
    );
    let here = server
        .url
        .replace("/mcp", "/.well-known/oauth-protected-resource");
    let metadata: Value = reqwest::get(&here).await.unwrap().json().await.unwrap();
    assert_eq!(metadata["resource"], "https://rewind.example.com/mcp");
}
