//! The team server's page: people sign in with the realm's authorization-code flow with PKCE, get
//! an HttpOnly, SameSite=Strict session, see a guard made through MCP on the timeline, and sign
//! out with the page's CSRF token; a sign-in started elsewhere, or by someone without the read
//! role, is refused. A reader lists what changed since a tag; the actions (a diff's content, keep,
//! recover, restore) need the recover role, and each runs only after a confirmation page, sent
//! back with the session's CSRF token; one whose browser went away is finished before the server
//! exits.

use std::collections::HashMap;

use reqwest::StatusCode;
use reqwest::redirect::Policy;
use serde_json::json;

use crate::helper::*;
use crate::sign_in::client_as;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A browser that follows no redirect and keeps no cookie: each step is checked by hand.
fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(Policy::none())
        .build()
        .unwrap()
}

/// The value a response's `Set-Cookie` gives `name`, and the whole header.
fn set_cookie(response: &reqwest::Response, name: &str) -> Option<(String, String)> {
    response
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with(&format!("{name}=")))
        .map(|v| {
            let value = v.split(';').next().unwrap()[name.len() + 1..].to_string();
            (value, v.to_string())
        })
}

fn location(response: &reqwest::Response) -> String {
    response.headers()["location"].to_str().unwrap().to_string()
}

/// A team server with pages, signed in by the simulator's realm, at a port its configuration names.
async fn server() -> (TestEnv, HttpServer, String) {
    let mut world = zvm_sim::test_kit::world_with_people(&[
        ("alice", &["rewind-read", "rewind-guard"]),
        ("bob", &[]),
        ("carol", &["rewind-read", "rewind-guard", "rewind-recover"]),
        ("dave", &["rewind-read", "rewind-recover", "rewind-approve"]),
    ]);
    world.audiences = vec!["rewind-mcp".to_owned()];
    let options = zvm_sim::Options {
        world,
        ..zvm_sim::Options::for_tests(97)
    };
    let env = TestEnv::start_with(options, Setup::File).await;
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let issuer = format!("{}/auth/realms/zerto", env.sim.local().url);
    let mut config = std::fs::read_to_string(env.config_path()).unwrap();
    config.push_str(&format!(
        "\n[http.auth]\nissuer = {issuer:?}\naudience = \"rewind-mcp\"\n\n[http.auth.ui]\nredirect_uri = \"{base}/ui/callback\"\n"
    ));
    std::fs::write(env.config_path(), config).unwrap();
    let server = env
        .http_server_on(&format!("127.0.0.1:{port}"), &[], None)
        .await;
    (env, server, base)
}

/// Signs `user` in through the realm's login page; the session cookie's value and header.
async fn sign_in(base: &str, user: &str) -> Result<(String, String), reqwest::Response> {
    let http = browser();
    let start = http.get(format!("{base}/ui/login")).send().await.unwrap();
    assert_eq!(start.status(), StatusCode::SEE_OTHER);
    let (bound, _) = set_cookie(&start, "rewind_ui_login").expect("the login is bound");
    let realm = url::Url::parse(&location(&start)).unwrap();
    let params: HashMap<String, String> = realm.query_pairs().into_owned().collect();
    assert_eq!(params["code_challenge_method"], "S256");
    let page = http.get(realm.clone()).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let mut form: Vec<(String, String)> = params.into_iter().collect();
    form.push(("username".into(), user.into()));
    form.push(("password".into(), format!("{user}-password")));
    let signed = http.post(realm).form(&form).send().await.unwrap();
    assert!(signed.status().is_redirection());
    let callback = location(&signed);
    assert!(
        callback.starts_with(&format!("{base}/ui/callback")),
        "{callback}"
    );
    let back = http
        .get(&callback)
        .header("Cookie", format!("rewind_ui_login={bound}"))
        .send()
        .await
        .unwrap();
    match set_cookie(&back, "rewind_ui") {
        Some(session) if back.status() == StatusCode::OK => Ok(session),
        _ => Err(back),
    }
}

#[tokio::test]
async fn a_person_signs_in_sees_a_guard_made_through_mcp_and_signs_out() {
    let (env, server, base) = server().await;
    let alice = client_as(&env, &server, "alice").await;
    expect_guarded(&guard(&alice, "web-01", "edit app.conf", "page-1").await);
    alice.cancel().await.unwrap();

    let http = browser();
    let anonymous = http.get(format!("{base}/ui")).send().await.unwrap();
    assert_eq!(anonymous.status(), StatusCode::SEE_OTHER);
    assert_eq!(location(&anonymous), "/ui/login");

    let (session, header) = sign_in(&base, "alice").await.expect("alice is signed in");
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/ui"] {
        assert!(header.contains(attribute), "{header}");
    }
    let page = http
        .get(format!("{base}/ui"))
        .header("Cookie", format!("rewind_ui={session}"))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().await.unwrap();
    for shown in [
        "Signed in as",
        "alice",
        "page-1",
        "web-01",
        "web-local",
        "recoverable until",
    ] {
        assert!(html.contains(shown), "the page shows {shown}: {html}");
    }
    let csrf = html
        .split("name=\"csrf\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the sign-out form carries its token")
        .to_string();

    let forged = http
        .post(format!("{base}/ui/logout"))
        .header("Cookie", format!("rewind_ui={session}"))
        .form(&[("csrf", "forged")])
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);
    let out = http
        .post(format!("{base}/ui/logout"))
        .header("Cookie", format!("rewind_ui={session}"))
        .form(&[("csrf", csrf.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), StatusCode::OK);
    let after = http
        .get(format!("{base}/ui"))
        .header("Cookie", format!("rewind_ui={session}"))
        .send()
        .await
        .unwrap();
    assert_eq!(after.status(), StatusCode::SEE_OTHER, "the session is gone");
}

#[tokio::test]
async fn a_sign_in_started_elsewhere_or_without_the_read_role_is_refused() {
    let (_env, _server, base) = server().await;
    let refused = sign_in(&base, "bob").await.expect_err("bob may not look");
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    assert!(refused.text().await.unwrap().contains("rewind-read"));

    // A callback whose state no login of this browser started.
    let http = browser();
    let forced = http
        .get(format!("{base}/ui/callback?code=stolen&state=theirs"))
        .header("Cookie", "rewind_ui_login=mine")
        .send()
        .await
        .unwrap();
    assert_eq!(forced.status(), StatusCode::BAD_REQUEST);
}

/// The value of the hidden field `name` of the first form of `html` that has one.
fn hidden(html: &str, name: &str) -> Option<String> {
    html.split(&format!("name=\"{name}\" value=\""))
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .map(str::to_owned)
}

/// A signed-in person's page, as their browser asks for it: the status and the HTML.
struct Person {
    http: reqwest::Client,
    base: String,
    session: String,
}

impl Person {
    async fn signed_in(base: &str, user: &str) -> Person {
        let (session, _) = sign_in(base, user).await.expect("signed in");
        Person {
            http: browser(),
            base: base.to_owned(),
            session,
        }
    }

    async fn get(&self, path_and_query: &str) -> (StatusCode, String) {
        let response = self
            .http
            .get(format!("{}{path_and_query}", self.base))
            .header("Cookie", format!("rewind_ui={}", self.session))
            .send()
            .await
            .unwrap();
        (response.status(), response.text().await.unwrap())
    }

    async fn post(&self, path: &str, form: &[(&str, &str)]) -> (StatusCode, String) {
        let response = self
            .http
            .post(format!("{}{path}", self.base))
            .header("Cookie", format!("rewind_ui={}", self.session))
            .form(form)
            .send()
            .await
            .unwrap();
        (response.status(), response.text().await.unwrap())
    }

    /// The session's CSRF token, from its page.
    async fn csrf(&self) -> String {
        let (_, html) = self.get("/ui").await;
        hidden(&html, "csrf").expect("the page carries the token")
    }
}

async fn guard_as(env: &TestEnv, server: &HttpServer, user: &str, vm: &str, change: &str) {
    let client = client_as(env, server, user).await;
    expect_guarded(&guard(&client, vm, "edit", change).await);
    client.cancel().await.unwrap();
}

const APP_CONF: &str = "sda1/etc/app/app.conf";

#[tokio::test]
async fn a_reader_lists_what_changed_but_every_action_needs_the_recover_role() {
    let (env, server, base) = server().await;
    guard_as(&env, &server, "alice", "web-01", "page-2").await;
    env.control.put_file("web-01", APP_CONF, b"broken\n").await;
    env.control.advance(60).await;

    let alice = Person::signed_in(&base, "alice").await;
    let (_, home) = alice.get("/ui").await;
    assert!(
        home.contains("/ui/diff?vm=web-01&amp;change=page-2"),
        "each change links its diff: {home}"
    );
    let (status, listed) = alice
        .get("/ui/diff?vm=web-01&change=page-2&path=sda1/etc")
        .await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    assert!(
        listed.contains("app.conf") && listed.contains("changed"),
        "{listed}"
    );
    assert!(
        !listed.contains("+broken"),
        "a listing shows no content: {listed}"
    );

    let csrf = alice.csrf().await;
    let asked = "/ui/act?do=keep&vm=web-01&change=page-2";
    for (status, html) in [
        alice.get(asked).await,
        alice
            .post(
                "/ui/act",
                &[
                    ("do", "keep"),
                    ("vm", "web-01"),
                    ("change", "page-2"),
                    ("csrf", &csrf),
                ],
            )
            .await,
    ] {
        assert_eq!(status, StatusCode::FORBIDDEN, "{html}");
        assert!(
            html.contains("rewind-recover"),
            "the refusal names the role: {html}"
        );
    }
    assert!(
        env.control.retention_sets().await.is_empty(),
        "nothing was kept"
    );
}

#[tokio::test]
async fn a_recoverer_confirms_each_action_before_it_runs() {
    let (env, server, base) = server().await;
    let original = env.control.file("web-01", APP_CONF).await;
    guard_as(&env, &server, "carol", "web-01", "page-3").await;
    guard_as(&env, &server, "carol", "db-01", "page-4").await;
    env.control
        .put_file("web-01", APP_CONF, b"broken = true\n")
        .await;
    env.control.advance(60).await;
    let carol = Person::signed_in(&base, "carol").await;
    let csrf = carol.csrf().await;
    let mounts = || async { env.control.calls_to("/v1/flrs").await.len() };

    // The content of a diff: a confirmation first, which mounts nothing.
    let query = "do=diff_content&vm=web-01&change=page-3&path=sda1/etc/app";
    let (status, confirm) = carol.get(&format!("/ui/act?{query}")).await;
    assert_eq!(status, StatusCode::OK, "{confirm}");
    assert_eq!(hidden(&confirm, "csrf").as_deref(), Some(csrf.as_str()));
    assert!(!confirm.contains("+broken"), "{confirm}");
    assert_eq!(mounts().await, 0, "a confirmation sends nothing");
    let form = [
        ("do", "diff_content"),
        ("vm", "web-01"),
        ("change", "page-3"),
        ("path", "sda1/etc/app"),
    ];
    let forged: Vec<(&str, &str)> = form.iter().copied().chain([("csrf", "forged")]).collect();
    let (status, _) = carol.post("/ui/act", &forged).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "a forged form does nothing");
    assert_eq!(mounts().await, 0);
    let sent: Vec<(&str, &str)> = form
        .iter()
        .copied()
        .chain([("csrf", csrf.as_str())])
        .collect();
    let (status, shown) = carol.post("/ui/act", &sent).await;
    assert_eq!(status, StatusCode::OK, "{shown}");
    assert!(
        shown.contains("+broken = true"),
        "the unified diff: {shown}"
    );

    // A file recovery: the confirmation is the plan, and the recovery runs only that plan.
    let into = env.dir.path().join("from-the-page");
    let into = into.to_str().unwrap();
    let (status, plan) = carol
        .get(&format!(
            "/ui/act?do=recover&vm=web-01&change=page-3&path={APP_CONF}&destination={into}"
        ))
        .await;
    assert_eq!(status, StatusCode::OK, "{plan}");
    assert!(plan.contains(APP_CONF), "{plan}");
    let plan_id = hidden(&plan, "plan").expect("the plan is pinned");
    let (status, done) = carol
        .post(
            "/ui/act",
            &[
                ("do", "recover"),
                ("vm", "web-01"),
                ("change", "page-3"),
                ("path", APP_CONF),
                ("destination", into),
                ("plan", &plan_id),
                ("csrf", &csrf),
            ],
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{done}");
    assert!(done.contains("RECOVERED"), "{done}");
    let back = std::fs::read(std::path::Path::new(into).join(APP_CONF)).unwrap();
    assert_eq!(back, original, "the file as it was at the tag");

    // Keeping db-01's tag past its journal.
    let (status, confirm) = carol.get("/ui/act?do=keep&vm=db-01&change=page-4").await;
    assert_eq!(status, StatusCode::OK, "{confirm}");
    assert!(env.control.retention_sets().await.is_empty());
    let keep = [
        ("do", "keep"),
        ("vm", "db-01"),
        ("change", "page-4"),
        ("csrf", csrf.as_str()),
    ];
    let (status, kept) = carol.post("/ui/act", &keep).await;
    assert_eq!(status, StatusCode::OK, "{kept}");
    assert_eq!(env.control.retention_sets().await.len(), 1, "{kept}");

    // A restore beside the VM, which then waits for a person's commit.
    let (status, confirm) = carol
        .get("/ui/act?do=restore&vm=web-01&change=page-3&as_name=web-01-back")
        .await;
    assert_eq!(status, StatusCode::OK, "{confirm}");
    assert!(confirm.contains("web-01-back"), "{confirm}");
    let restore = [
        ("do", "restore"),
        ("vm", "web-01"),
        ("change", "page-3"),
        ("as_name", "web-01-back"),
        ("csrf", csrf.as_str()),
    ];
    let (status, restored) = carol.post("/ui/act", &restore).await;
    assert_eq!(status, StatusCode::OK, "{restored}");
    assert!(restored.contains("WAITING FOR A COMMIT"), "{restored}");
    let (_, home) = carol.get("/ui").await;
    let waiting = home.split("id=\"restores\"").nth(1).unwrap();
    assert!(
        waiting.contains("web-01") && waiting.contains("page-3"),
        "{home}"
    );
    let journal = env.journal_record("page-3");
    assert_eq!(journal["agent"], "rewind-ui", "made on the page: {journal}");
    assert_eq!(
        journal["person"]["name"], "carol",
        "by the person signed in: {journal}"
    );
}

#[tokio::test]
async fn on_sigterm_a_restore_from_a_page_whose_browser_went_away_is_finished_and_journaled() {
    let (env, mut server, base) = server().await;
    guard_as(&env, &server, "carol", "web-01", "page-5").await;
    let carol = Person::signed_in(&base, "carol").await;
    let csrf = carol.csrf().await;
    env.control.task_duration(3000).await;
    let browser = tokio::spawn(async move {
        let restore = [
            ("do", "restore"),
            ("vm", "web-01"),
            ("change", "page-5"),
            ("as_name", "web-01-back"),
            ("csrf", csrf.as_str()),
        ];
        carol.post("/ui/act", &restore).await
    });
    env.control
        .wait_for_task("a restore", std::time::Duration::from_secs(30), |t| {
            t["Type"] == "JournalVmRestore"
        })
        .await;
    // The person closes the tab, then a service manager stops the server, while Zerto's restore
    // task still runs.
    browser.abort();
    let status = terminate(server.process()).await;
    assert_eq!(status.code(), Some(143), "{status}");
    let record = env.journal_record("page-5");
    assert_eq!(
        record["agent"], "rewind-ui",
        "the restore reached the journal: {record}"
    );
    assert_eq!(record["action"], "restore vm as web-01-back", "{record}");
    assert_eq!(
        record["verdict"], "waiting",
        "read until it waits for a commit: {record}"
    );
}

#[tokio::test]
async fn a_held_restore_is_approved_from_the_page_behind_a_confirmation_and_a_forged_token_approves_nothing()
 {
    let (env, server, base) = server().await;
    let carol = client_as(&env, &server, "carol").await;
    expect_guarded(&guard(&carol, "web-01", "edit", "c1").await);
    let restore = json!({"vm": "web-01", "change_id": "c1", "as_name": "web-01-back"});
    let held = call(&carol, "zerto_restore_vm", restore.clone()).await;
    let id = structured(&held)["approval_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let path = format!("/ui/approvals/{id}");
    assert_eq!(structured(&held)["url"], format!("{base}{path}"));

    let alice = Person::signed_in(&base, "alice").await;
    let (status, refused) = alice.get(&path).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{refused}");
    assert!(refused.contains("rewind-approve"), "{refused}");

    let dave = Person::signed_in(&base, "dave").await;
    let (status, list) = dave.get("/ui/approvals").await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        list.contains(&id) && list.contains("zerto_restore_vm"),
        "{list}"
    );
    let (status, page) = dave.get(&path).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        page.contains("web-01-back") && page.contains("Approve"),
        "{page}"
    );
    let csrf = dave.csrf().await;

    let forged = [
        ("decision", "approve"),
        ("confirmed", "1"),
        ("csrf", "forged"),
    ];
    let (status, _) = dave.post(&path, &forged).await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "a forged token approves nothing"
    );
    let unconfirmed = [
        ("decision", "approve"),
        ("comment", "ok"),
        ("csrf", csrf.as_str()),
    ];
    let (status, confirm) = dave.post(&path, &unconfirmed).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        hidden(&confirm, "confirmed").as_deref(),
        Some("1"),
        "{confirm}"
    );
    let (_, still) = dave.get(&path).await;
    assert!(
        still.contains(": held"),
        "nothing is decided before the confirmation: {still}"
    );
    let confirmed = [
        ("decision", "approve"),
        ("comment", "ok"),
        ("confirmed", "1"),
        ("csrf", csrf.as_str()),
    ];
    let (status, done) = dave.post(&path, &confirmed).await;
    assert_eq!(status, StatusCode::OK, "{done}");
    assert!(done.contains("approved"), "{done}");

    let ran = call(&carol, "zerto_restore_vm", restore).await;
    assert!(!is_error(&ran), "{ran:?}");
    assert_eq!(structured(&ran)["verdict"], "waiting");
}
