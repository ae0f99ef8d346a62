//! The team server's page: people sign in with the realm's authorization-code flow with PKCE, get
//! an HttpOnly, SameSite=Strict session, see a guard made through MCP on the timeline, and sign
//! out with the page's CSRF token; a sign-in started elsewhere, or by someone without the read
//! role, is refused.

use std::collections::HashMap;

use reqwest::StatusCode;
use reqwest::redirect::Policy;

use crate::helper::*;
use crate::sign_in::token_of;

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
    let site = env.sim.local().url.clone();
    let alice = server
        .client_with_token(
            Human::unreachable(),
            &token_of(&site, "alice", "alice-password").await,
        )
        .await;
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
