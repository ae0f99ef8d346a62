//! The team server attacked as a security reviewer would, over HTTP against the simulator's realm:
//! a reader writing the catalog, another person's session, one person taking every session or every
//! guard slot, a token that stalls everyone, slow headers, a cleartext issuer, a foreign Host; and
//! the hardening a reviewer asks for (the issuer compared exactly, `iat`, two Authorization
//! headers, a discovery document or a JWKS the server must not trust, keys withdrawn, paths).
//! docs/mcp.md's threat model names the test of each.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helper::{Answer, HttpServer, Human, Setup, TestEnv, call, expect_guarded, structured};
use crate::sign_in::{signed_in, token_of};

/// The people of these tests and their realm roles.
const PEOPLE: &[(&str, &[&str])] = &[
    ("alice", &["rewind-read", "rewind-guard", "rewind-recover"]),
    ("bob", &["rewind-read"]),
    ("carol", &["rewind-read", "rewind-guard", "rewind-catalog"]),
    ("mallory", &[]),
];

/// A simulator whose realm has [`PEOPLE`], and a configuration signed in to its realm.
async fn team(seed: u64) -> TestEnv {
    let options = zvm_sim::Options {
        world: zvm_sim::test_kit::world_with_people(PEOPLE),
        ..zvm_sim::Options::for_tests(seed)
    };
    let env = TestEnv::start_with(options, Setup::File).await;
    signed_in(&env, "account");
    env
}

/// `person`'s access token from Boston's realm.
async fn token(env: &TestEnv, person: &str) -> String {
    token_of(&env.sim.local().url, person, &format!("{person}-password")).await
}

/// A JSON-RPC request.
fn rpc(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// `initialize` at protocol 2025-11-25.
fn initialize() -> Value {
    rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "raw", "version": "0"}}),
    )
}

/// A guard of `vm` for `change`, as a plain tool call.
fn guard_call(id: u64, vm: &str, change: &str) -> Value {
    rpc(
        id,
        "tools/call",
        json!({"name": "zerto_guard_before_mutate", "arguments": {
            "vm": vm, "agent": "raw", "action": "edit", "change_id": change}}),
    )
}

/// An MCP client written by hand: each request's status, headers and body.
struct Raw {
    http: reqwest::Client,
    url: String,
}

/// A response read whole.
#[derive(Debug, PartialEq)]
struct Answered {
    status: StatusCode,
    body: String,
    retry_after: Option<String>,
    session: Option<String>,
}

impl Raw {
    fn new(server: &HttpServer) -> Raw {
        Raw {
            http: reqwest::Client::new(),
            url: server.url.clone(),
        }
    }

    async fn send(
        &self,
        method: reqwest::Method,
        token: Option<&str>,
        session: Option<&str>,
        body: Option<&Value>,
    ) -> Answered {
        let mut request = self
            .http
            .request(method, &self.url)
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2025-11-25");
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(session) = session {
            request = request.header("Mcp-Session-Id", session);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let answer = tokio::time::timeout(Duration::from_secs(120), request.send())
            .await
            .expect("answered within two minutes")
            .expect("the request is sent");
        let header = |name: &str| {
            answer
                .headers()
                .get(name)
                .map(|v| v.to_str().unwrap().to_owned())
        };
        let (retry_after, session) = (header("retry-after"), header("mcp-session-id"));
        let status = answer.status();
        let body = answer.text().await.unwrap_or_default();
        Answered {
            status,
            body,
            retry_after,
            session,
        }
    }

    async fn post(&self, token: Option<&str>, session: Option<&str>, body: &Value) -> Answered {
        self.send(reqwest::Method::POST, token, session, Some(body))
            .await
    }

    /// Opens a session for `token`: its id.
    async fn open(&self, token: &str) -> String {
        let opened = self.post(Some(token), None, &initialize()).await;
        assert_eq!(opened.status, StatusCode::OK, "{opened:?}");
        let id = opened.session.expect("a session id");
        let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let acknowledged = self.post(Some(token), Some(&id), &done).await;
        assert!(acknowledged.status.is_success(), "{acknowledged:?}");
        id
    }
}

#[tokio::test]
async fn a_reader_cannot_make_a_tool_read_only_for_everyone_by_asking_to_remember() {
    let env = team(81).await;
    let server = env.http_server().await;
    let ssh_run = json!({"server": "ssh", "tool": "run", "vm": "web-01"});

    let bob = server
        .client_with_token(
            Human::answering(Answer::NoRemember),
            &token(&env, "bob").await,
        )
        .await;
    let answered = call(&bob, "zerto_check_tool", ssh_run.clone()).await;
    let human = &structured(&answered)["human"];
    assert_eq!(
        structured(&answered)["next"],
        "run_unguarded",
        "for this call"
    );
    assert!(human.get("remembered_as").is_none(), "{human}");
    let note = human["note"].as_str().unwrap_or_default();
    assert!(
        note.contains("rewind-catalog") && note.contains("this call only"),
        "{note}"
    );
    bob.cancel().await.unwrap();

    let alice = server
        .client_with_token(Human::unreachable(), &token(&env, "alice").await)
        .await;
    let asked = call(&alice, "zerto_check_tool", ssh_run.clone()).await;
    assert_eq!(
        structured(&asked)["state"],
        "held",
        "still unknown for alice: held for a person, as her client cannot ask her"
    );
    alice.cancel().await.unwrap();

    // With the catalog role, the answer is remembered.
    let carol = server
        .client_with_token(
            Human::answering(Answer::YesRemember),
            &token(&env, "carol").await,
        )
        .await;
    let remembered = call(&carol, "zerto_check_tool", ssh_run).await;
    assert_eq!(
        structured(&remembered)["human"]["remembered_as"],
        "mutating"
    );
    carol.cancel().await.unwrap();
}

#[tokio::test]
async fn another_persons_session_is_answered_as_one_that_does_not_exist_and_logged_as_a_hash() {
    let env = team(82).await;
    let server = env.http_server_logging(&[], Some("trace")).await;
    let raw = Raw::new(&server);
    let (alice, mallory) = (token(&env, "alice").await, token(&env, "mallory").await);
    let hers = raw.open(&alice).await;
    let list = rpc(2, "tools/list", json!({}));

    let unknown = raw
        .post(Some(&mallory), Some("no-such-session"), &list)
        .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND, "{unknown:?}");
    let into_hers = raw.post(Some(&mallory), Some(&hers), &list).await;
    assert_eq!(into_hers, unknown, "a call into alice's session");
    let guard = guard_call(3, "web-01", "mallory-1");
    assert_eq!(raw.post(Some(&mallory), Some(&hers), &guard).await, unknown);
    assert!(env.insert_tasks().await.is_empty(), "nothing was inserted");

    let resume = |session: &str| {
        let request = raw
            .http
            .get(&raw.url)
            .header("Accept", "text/event-stream")
            .header("MCP-Protocol-Version", "2025-11-25")
            .header("Last-Event-ID", "0")
            .header("Mcp-Session-Id", session)
            .bearer_auth(&mallory);
        async move {
            let answer = request.send().await.unwrap();
            (answer.status(), answer.text().await.unwrap())
        }
    };
    assert_eq!(resume(&hers).await, resume("no-such-session").await);
    assert_eq!(resume(&hers).await.0, StatusCode::NOT_FOUND);

    let delete = reqwest::Method::DELETE;
    assert_eq!(
        raw.send(delete.clone(), Some(&mallory), Some(&hers), None)
            .await,
        raw.send(delete, Some(&mallory), Some("no-such-session"), None)
            .await,
    );

    let still_hers = raw.post(Some(&alice), Some(&hers), &list).await;
    assert_eq!(still_hers.status, StatusCode::OK, "{still_hers:?}");
    assert!(still_hers.body.contains("zerto_find_protection"));

    let log = server.log().join("\n");
    assert!(!log.contains(&hers), "the session id is in the log:\n{log}");
    assert!(
        log.contains(&rewind_mcp::sessions::short_hash(&hers)),
        "its hash is: {log}"
    );
}

#[tokio::test]
async fn one_person_past_their_share_of_sessions_gets_429_and_the_others_still_get_in() {
    let env = team(83).await;
    let server = env
        .http_server_with(&["--max-sessions", "4", "--max-sessions-per-person", "2"])
        .await;
    let raw = Raw::new(&server);
    let mallory = token(&env, "mallory").await;
    raw.open(&mallory).await;
    raw.open(&mallory).await;
    let third = raw.post(Some(&mallory), None, &initialize()).await;
    assert_eq!(third.status, StatusCode::TOO_MANY_REQUESTS, "{third:?}");
    assert_eq!(third.retry_after.as_deref(), Some("5"));
    assert!(third.body.contains("per person"), "{}", third.body);

    let alice = token(&env, "alice").await;
    raw.open(&alice).await;
    raw.open(&alice).await;
    // Four are open: the server's own cap, for everyone.
    let carol = raw
        .post(Some(&token(&env, "carol").await), None, &initialize())
        .await;
    assert_eq!(carol.status, StatusCode::SERVICE_UNAVAILABLE, "{carol:?}");
}

/// The verdict of a guard answered on an event stream.
fn verdict(answered: &Answered) -> Value {
    let data = answered
        .body
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find(|m| m.get("result").is_some())
        .unwrap_or_else(|| panic!("no result in {answered:?}"));
    data["result"]["structuredContent"]["verdict"].clone()
}

#[tokio::test]
async fn one_person_past_their_share_of_running_guards_gets_429_and_the_others_still_guard() {
    let env = team(84).await;
    env.control.task_duration(3000).await;
    let server = env.http_server_with(&["--max-tasks-per-person", "1"]).await;
    let raw = Raw::new(&server);
    let alice = token(&env, "alice").await;
    let (first, second) = (raw.open(&alice).await, raw.open(&alice).await);

    let running = {
        let raw = Raw::new(&server);
        let (alice, first) = (alice.clone(), first.clone());
        tokio::spawn(async move {
            raw.post(
                Some(&alice),
                Some(&first),
                &guard_call(2, "web-01", "share-1"),
            )
            .await
        })
    };
    env.control.until_an_insert_started().await;
    let refused = raw
        .post(
            Some(&alice),
            Some(&second),
            &guard_call(3, "app-01", "share-2"),
        )
        .await;
    assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS, "{refused:?}");
    assert_eq!(refused.retry_after.as_deref(), Some("5"));
    assert!(refused.body.contains("alice"), "{}", refused.body);

    let carol = token(&env, "carol").await;
    let hers = raw.open(&carol).await;
    let guarded = raw
        .post(
            Some(&carol),
            Some(&hers),
            &guard_call(2, "app-01", "share-3"),
        )
        .await;
    assert_eq!(verdict(&guarded), "guarded", "carol is not held back");

    assert_eq!(verdict(&running.await.unwrap()), "guarded");
    // Her guard has ended: her share is hers again.
    let again = raw
        .post(
            Some(&alice),
            Some(&second),
            &guard_call(4, "app-02", "share-4"),
        )
        .await;
    assert_eq!(verdict(&again), "guarded", "{again:?}");
}

/// `token` with its header naming the key `kid` (its signature no longer matters).
fn naming_key(token: &str, kid: &str) -> String {
    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let parts: Vec<&str> = token.split('.').collect();
    let mut header: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[0]).unwrap()).unwrap();
    header["kid"] = json!(kid);
    format!(
        "{}.{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        parts[1],
        parts[2]
    )
}

/// A fault that makes every read of the realm's JWKS take 20 s; how many reads it has matched is
/// [`jwks_reads_since`].
async fn slow_jwks(env: &TestEnv) {
    env.control
        .fault(
            json!({"Method": "GET", "Path": "/auth/realms/zerto/protocol/openid-connect/certs",
                      "Action": "Latency", "LatencyMs": 20000}),
        )
        .await;
}

/// The reads of the JWKS since [`slow_jwks`] (counted as they start, not as they end).
async fn jwks_reads_since(env: &TestEnv) -> u64 {
    env.control.faults().await[0]["Matched"].as_u64().unwrap()
}

#[tokio::test]
async fn a_token_naming_an_unknown_key_stalls_no_one_and_reads_the_jwks_at_most_once() {
    let env = team(85).await;
    let server = env.http_server().await;
    let raw = Raw::new(&server);
    let alice = token(&env, "alice").await;
    raw.open(&alice).await;

    slow_jwks(&env).await;
    let bad = naming_key(&alice, "a-key-nobody-has");
    let unknown = {
        let raw = Raw::new(&server);
        let bad = bad.clone();
        tokio::spawn(async move { raw.post(Some(&bad), None, &initialize()).await })
    };
    for _ in 0..600 {
        if jwks_reads_since(&env).await > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        jwks_reads_since(&env).await,
        1,
        "the unknown key started a read"
    );
    let served = raw.post(Some(&alice), None, &initialize()).await;
    assert_eq!(served.status, StatusCode::OK, "{served:?}");
    assert!(
        !unknown.is_finished(),
        "alice was answered only after the token with an unknown key"
    );
    let refused = unknown.await.unwrap();
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED, "{refused:?}");

    for _ in 0..3 {
        let again = raw.post(Some(&bad), None, &initialize()).await;
        assert_eq!(again.status, StatusCode::UNAUTHORIZED);
    }
    assert_eq!(
        jwks_reads_since(&env).await,
        1,
        "four tokens naming an unknown key read the JWKS once"
    );
}

/// Sends `lines` to `url`'s server on a raw connection, one every `pause`, and says whether the
/// server closed it before they were all sent.
async fn cut_off_while_sending(url: &str, lines: &[&str], pause: Duration) -> bool {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let address = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let mut stream = tokio::net::TcpStream::connect(&address).await.unwrap();
    for line in lines {
        if stream.write_all(line.as_bytes()).await.is_err() {
            return true;
        }
        tokio::time::sleep(pause).await;
        let mut byte = [0u8; 512];
        match tokio::time::timeout(Duration::from_millis(10), stream.read(&mut byte)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            // A 408 or another answer, then the close.
            Ok(Ok(_)) => return true,
            Err(_) => {}
        }
    }
    false
}

#[tokio::test]
async fn a_client_sending_its_headers_slowly_is_cut_off_and_connections_are_bounded() {
    let env = TestEnv::start(86, Setup::File).await;
    let server = env
        .http_server_with(&["--header-read-secs", "2", "--max-connections", "3"])
        .await;
    let mut slow = vec!["POST /mcp HTTP/1.1\r\n"];
    slow.extend(std::iter::repeat_n("X-Slow: 1\r\n", 30));
    assert!(
        cut_off_while_sending(&server.url, &slow, Duration::from_millis(500)).await,
        "a client sending a header line every 0.5 s for 15 s was held"
    );

    // Three connections that send nothing hold every slot: the fourth is answered 503.
    let address = server
        .url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(tokio::net::TcpStream::connect(&address).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let busy = reqwest::get(server.at("/v1/guards")).await.unwrap();
    assert_eq!(busy.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(busy.headers()["retry-after"], "5");
    drop(held);
    // Once they are closed (or cut off for sending nothing), the server answers again.
    let mut answered = None;
    for _ in 0..100 {
        let got = reqwest::get(server.at("/v1/guards"))
            .await
            .unwrap()
            .status();
        if got == StatusCode::OK {
            answered = Some(got);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(answered, Some(StatusCode::OK));
}

#[tokio::test]
async fn a_cleartext_issuer_beyond_this_machine_is_refused_at_start() {
    let env = TestEnv::start(87, Setup::File).await;
    let text = std::fs::read_to_string(env.config_path()).unwrap();
    std::fs::write(
        env.config_path(),
        text + "\n[http.auth]\nissuer = \"http://zvm.example.com/auth/realms/zerto\"\naudience = \"rewind-mcp\"\n",
    )
    .unwrap();
    let ran = tokio::time::timeout(
        Duration::from_secs(60),
        env.command(&["--http", "127.0.0.1:0"]).output(),
    )
    .await
    .expect("it answers at once")
    .unwrap();
    assert!(!ran.status.success());
    let said = String::from_utf8_lossy(&ran.stderr);
    assert!(
        said.contains("http.auth.issuer") && said.contains("https") && said.contains("ca_cert"),
        "{said}"
    );
}

#[tokio::test]
async fn a_realm_with_its_own_certificate_is_trusted_through_ca_cert_and_not_otherwise() {
    let options = zvm_sim::Options {
        tls: true,
        world: zvm_sim::test_kit::world_with_people(PEOPLE),
        ..zvm_sim::Options::for_tests(88)
    };
    let env = TestEnv::start_with(options, Setup::NoSites).await;
    let local = env.sim.local().clone();
    let auth = |ca: &str| {
        format!(
            "\n[http.auth]\nissuer = \"{}/auth/realms/zerto\"\naudience = \"account\"\n{ca}",
            local.url
        )
    };
    let base = std::fs::read_to_string(env.config_path()).unwrap();
    let pem = local.certificate_pem.clone().unwrap();
    let http = reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(&std::fs::read(&pem).unwrap()).unwrap()])
        .build()
        .unwrap();
    let form = [
        ("grant_type", "password"),
        ("client_id", "zerto-client"),
        ("username", "alice"),
        ("password", "alice-password"),
    ];
    let answer: Value = http
        .post(format!(
            "{}/auth/realms/zerto/protocol/openid-connect/token",
            local.url
        ))
        .form(&form)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let alice = answer["access_token"].as_str().unwrap().to_owned();

    std::fs::write(env.config_path(), base.clone() + &auth("")).unwrap();
    let untrusted = env.http_server().await;
    let refused = Raw::new(&untrusted)
        .post(Some(&alice), None, &initialize())
        .await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
    drop(untrusted);

    let ca = format!("ca_cert = {:?}\n", pem.display().to_string());
    std::fs::write(env.config_path(), base + &auth(&ca)).unwrap();
    let trusted = env.http_server().await;
    let served = Raw::new(&trusted)
        .post(Some(&alice), None, &initialize())
        .await;
    assert_eq!(served.status, StatusCode::OK, "{served:?}");
}

#[tokio::test]
async fn a_foreign_host_is_refused_before_the_token_is_read_on_every_route() {
    let env = team(89).await;
    let server = env.http_server().await;
    let http = reqwest::Client::new();
    for path in [
        "/mcp",
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
        "/v1/guards",
    ] {
        let answer = http
            .get(server.at(path))
            .header("Host", "evil.example.com")
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), StatusCode::FORBIDDEN, "{path}");
        assert!(answer.headers().get("www-authenticate").is_none(), "{path}");
        assert!(
            !answer.text().await.unwrap().contains("evil.example.com"),
            "{path}"
        );
    }
    let page = http
        .post(&server.url)
        .header("Origin", "https://evil.example.com")
        .json(&initialize())
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn the_issuer_is_compared_exactly_and_two_authorization_headers_are_refused() {
    let env = TestEnv::start(90, Setup::File).await;
    let issuer = format!("{}/auth/realms/zerto/", env.sim.local().url);
    let text = std::fs::read_to_string(env.config_path()).unwrap();
    std::fs::write(
        env.config_path(),
        text + &format!("\n[http.auth]\nissuer = \"{issuer}\"\naudience = \"account\"\n"),
    )
    .unwrap();
    let admin = token_of(&env.sim.local().url, "admin", "admin").await;
    // The realm's discovery names its issuer without the slash: its keys are not used.
    let server = env.http_server().await;
    let refused = Raw::new(&server)
        .post(Some(&admin), None, &initialize())
        .await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED, "{refused:?}");
    assert!(
        refused.body.contains("names the issuer"),
        "{}",
        refused.body
    );
    drop(server);
    // With the JWKS named outright, the token's own iss is compared, exactly.
    let jwks = format!("{issuer}protocol/openid-connect/certs");
    let text = std::fs::read_to_string(env.config_path()).unwrap();
    std::fs::write(env.config_path(), text + &format!("jwks_uri = {jwks:?}\n")).unwrap();
    let server = env.http_server().await;
    let raw = Raw::new(&server);
    let refused = raw.post(Some(&admin), None, &initialize()).await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED, "{refused:?}");
    assert!(refused.body.contains("issued by"), "{}", refused.body);

    let twice = raw
        .http
        .post(&server.url)
        .header("Accept", "application/json, text/event-stream")
        .header("Authorization", format!("Bearer {admin}"))
        .header("Authorization", "Bearer another")
        .json(&initialize())
        .send()
        .await
        .unwrap();
    assert_eq!(twice.status(), StatusCode::BAD_REQUEST);
    let challenge = twice.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(challenge.contains("invalid_request"), "{challenge}");
}

#[tokio::test]
async fn a_token_issued_in_the_future_is_refused() {
    // A realm whose clock runs two hours ahead: its tokens are issued (iat) in the future here.
    let options = zvm_sim::Options {
        epoch: Some(chrono::Utc::now() + chrono::Duration::hours(2)),
        ..zvm_sim::Options::for_tests(91)
    };
    let env = TestEnv::start_with(options, Setup::File).await;
    signed_in(&env, "account");
    let server = env.http_server().await;
    let admin = token_of(&env.sim.local().url, "admin", "admin").await;
    let refused = Raw::new(&server)
        .post(Some(&admin), None, &initialize())
        .await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
    assert!(refused.body.contains("future"), "{}", refused.body);
}

#[tokio::test]
async fn a_discovery_document_naming_another_issuer_or_a_foreign_jwks_is_not_trusted() {
    let env = team(92).await;
    let alice = token(&env, "alice").await;
    let peer_jwks = format!(
        "{}/auth/realms/zerto/protocol/openid-connect/certs",
        env.sim.peer().url
    );
    let refused_because = |server: &HttpServer, alice: String| {
        let raw = Raw::new(server);
        async move {
            let answered = raw.post(Some(&alice), None, &initialize()).await;
            assert_eq!(answered.status, StatusCode::UNAUTHORIZED, "{answered:?}");
            answered.body
        }
    };

    env.control
        .realm_discovery(Some("https://evil.example.com/auth/realms/zerto"), None)
        .await;
    let server = env.http_server().await;
    let said = refused_because(&server, alice.clone()).await;
    assert!(said.contains("names the issuer"), "{said}");
    drop(server);

    env.control.realm_discovery(None, Some(&peer_jwks)).await;
    let server = env.http_server().await;
    let said = refused_because(&server, alice.clone()).await;
    assert!(said.contains("another origin"), "{said}");
    drop(server);

    // A redirect to another origin is not followed either.
    env.control.realm_discovery(None, None).await;
    env.control
        .fault(
            json!({"Method": "GET", "Path": "/auth/realms/zerto/protocol/openid-connect/certs",
                      "Site": "Boston", "Action": "Respond", "Status": 302,
                      "Headers": {"Location": peer_jwks}}),
        )
        .await;
    let server = env.http_server().await;
    let said = refused_because(&server, alice.clone()).await;
    assert!(said.contains("redirects to another origin"), "{said}");
    drop(server);

    // Named in the configuration, the JWKS there is used.
    let text = std::fs::read_to_string(env.config_path()).unwrap();
    std::fs::write(
        env.config_path(),
        text + &format!("jwks_uri = {peer_jwks:?}\n"),
    )
    .unwrap();
    let server = env.http_server().await;
    let served = Raw::new(&server)
        .post(Some(&alice), None, &initialize())
        .await;
    assert_eq!(served.status, StatusCode::OK, "{served:?}");
}

#[tokio::test]
async fn a_key_the_issuer_stops_publishing_is_distrusted_within_the_keys_max_age() {
    let env = team(93).await;
    let text = std::fs::read_to_string(env.config_path()).unwrap();
    std::fs::write(env.config_path(), text + "jwks_max_age_secs = 2\n").unwrap();
    let server = env.http_server().await;
    let http = reqwest::Client::new();
    // Reading the team server's guards: a checked token that opens no session.
    let guards = |token: String| {
        let request = http.get(server.at("/v1/guards")).bearer_auth(token);
        async move {
            let answer = request.send().await.unwrap();
            (answer.status(), answer.text().await.unwrap())
        }
    };
    let old = token(&env, "alice").await;
    assert_eq!(guards(old.clone()).await.0, StatusCode::OK);

    // A rotation: the new key signs, and tokens of it are taken at once.
    let first = env.control.realm().await["Keys"][0]["Kid"]
        .as_str()
        .unwrap()
        .to_owned();
    env.control.rotate_realm_key().await;
    let new = token(&env, "alice").await;
    assert_eq!(guards(new.clone()).await.0, StatusCode::OK);

    // The old key leaves the JWKS: its tokens stop being taken within the keys' max age.
    env.control.withdraw_realm_key(&first).await;
    let mut refused = None;
    for _ in 0..300 {
        let (status, body) = guards(old.clone()).await;
        if status == StatusCode::UNAUTHORIZED {
            refused = Some(body);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let said = refused.expect("a token of a withdrawn key was still taken after 30 s");
    assert!(said.contains("does not publish"), "{said}");
    assert_eq!(guards(new).await.0, StatusCode::OK);
}

#[tokio::test]
async fn the_journal_over_http_names_no_file_of_the_server() {
    let env = team(94).await;
    let server = env.http_server().await;
    let alice = server
        .client_with_token(Human::unreachable(), &token(&env, "alice").await)
        .await;
    expect_guarded(&crate::helper::guard(&alice, "web-01", "edit", "paths-1").await);
    let read = call(&alice, "zerto_journal", json!({})).await;
    let folder = env.dir.path().display().to_string();
    let said = serde_json::to_string(&read).unwrap();
    assert!(!said.contains(&folder), "{said}");
    assert!(structured(&read).get("path").is_none(), "{said}");
    assert_eq!(structured(&read)["records"].as_array().unwrap().len(), 1);
    alice.cancel().await.unwrap();
}

/// `token` with its header replaced by `header` (the claims and signature kept).
fn with_header(token: &str, header: Value) -> String {
    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let parts: Vec<&str> = token.split('.').collect();
    format!(
        "{}.{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        parts[1],
        parts[2]
    )
}

#[tokio::test]
async fn crafted_headers_and_an_oversized_token_are_refused_and_no_url_in_a_token_is_fetched() {
    let env = team(95).await;
    let server = env.http_server().await;
    let raw = Raw::new(&server);
    let alice = token(&env, "alice").await;
    let kid = {
        use base64::Engine;
        let head = alice.split('.').next().unwrap();
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(head)
            .unwrap();
        serde_json::from_slice::<Value>(&bytes).unwrap()["kid"].clone()
    };
    let elsewhere = format!("{}/keys-of-mine", env.sim.peer().url);
    let unsigned = {
        let parts: Vec<&str> = alice.split('.').collect();
        use base64::Engine;
        let none = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(r#"{"alg":"none"}"#);
        format!("{none}.{}.", parts[1])
    };
    let crafted = [
        ("alg none", unsigned),
        (
            "HS256 as if keyed by the public key",
            with_header(&alice, json!({"alg": "HS256", "kid": kid})),
        ),
        (
            "a path for a kid",
            with_header(
                &alice,
                json!({"alg": "RS256", "kid": "../../../etc/passwd"}),
            ),
        ),
        (
            "jku",
            with_header(
                &alice,
                json!({"alg": "RS256", "kid": kid, "jku": elsewhere}),
            ),
        ),
        (
            "x5u",
            with_header(
                &alice,
                json!({"alg": "RS256", "kid": kid, "x5u": elsewhere}),
            ),
        ),
        (
            "an embedded jwk",
            with_header(
                &alice,
                json!({"alg": "RS256", "kid": kid,
            "jwk": {"kty": "RSA", "n": "AQAB", "e": "AQAB"}}),
            ),
        ),
    ];
    for (what, bad) in crafted {
        let refused = raw.post(Some(&bad), None, &initialize()).await;
        assert_eq!(
            refused.status,
            StatusCode::UNAUTHORIZED,
            "{what}: {refused:?}"
        );
    }
    assert!(
        env.control.calls_to("/keys-of-mine").await.is_empty(),
        "a URL named in a token was fetched"
    );

    let huge = "a".repeat(1024 * 1024);
    let refused = raw.post(Some(&huge), None, &initialize()).await;
    assert!(refused.status.is_client_error(), "{:?}", refused.status);
    assert_eq!(
        raw.post(Some(&alice), None, &initialize()).await.status,
        StatusCode::OK
    );
}

#[tokio::test]
async fn a_server_started_while_the_realms_keys_answer_503_serves_within_30_s_of_their_return() {
    let env = team(97).await;
    env.control
        .fault(
            json!({"Method": "GET", "Path": "/auth/realms/zerto/protocol/openid-connect/certs",
                      "Action": "Respond", "Status": 503}),
        )
        .await;
    let alice = token(&env, "alice").await;
    let server = env.http_server().await;
    let raw = Raw::new(&server);
    let refused = raw.post(Some(&alice), None, &initialize()).await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED, "{refused:?}");
    env.control.clear_faults().await;
    let back = std::time::Instant::now();
    loop {
        let answer = raw.post(Some(&alice), None, &initialize()).await;
        if answer.status == StatusCode::OK {
            break;
        }
        assert!(
            back.elapsed() < Duration::from_secs(30),
            "still refused 30 s after the keys were back: {answer:?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}
