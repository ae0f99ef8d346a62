//! Handler-level tests: one site's router driven in-process with tower's `oneshot`, no listener.

use std::net::SocketAddr;

use axum::body::{Body, to_bytes};
use axum::extract::ConnectInfo;
use axum::http::{Request, StatusCode};
use axum::response::Response;
use serde_json::Value;
use tower::ServiceExt;
use zvm_sim::{Options, SimState, SiteRole, app};

use crate::expect::expect_refused;

fn state() -> SimState {
    SimState::new(&Options::for_tests(11)).expect("the default world builds")
}

async fn json(response: Response) -> Value {
    let bytes = to_bytes(response.into_body(), usize::MAX).await.unwrap();
    serde_json::from_slice(&bytes).unwrap_or(Value::Null)
}

/// Calls one site's router in-process, as its listener would.
async fn call(state: &SimState, site: SiteRole, request: Request<Body>) -> Response {
    app(state, site)
        .oneshot(request)
        .await
        .expect("the router answers")
}

/// `GET path` at Boston's router of a fresh world, without a token.
async fn get_at_boston(path: &str) -> Response {
    let request = Request::get(path).body(Body::empty()).unwrap();
    call(&state(), SiteRole::Local, request).await
}

/// The status and JSON body of a router's response.
async fn answer(response: Response) -> (StatusCode, Value) {
    (response.status(), json(response).await)
}

async fn token(state: &SimState, site: SiteRole) -> String {
    let request = Request::post("/auth/realms/zerto/protocol/openid-connect/token")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(Body::from(
            "grant_type=password&client_id=zerto-client&username=operator&password=operator",
        ))
        .unwrap();
    let response = call(state, site, request).await;
    assert_eq!(response.status(), StatusCode::OK);
    json(response).await["access_token"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn a_v1_call_without_a_token_is_401_before_anything_else() {
    let response = get_at_boston("/v1/vpgs").await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        response.headers()["www-authenticate"],
        "Bearer error=\"invalid_token\""
    );
}

#[tokio::test]
async fn both_routers_share_one_world_with_separate_tokens() {
    let state = state();
    let denver_token = token(&state, SiteRole::Peer).await;
    let request = |token: &str| {
        Request::get("/V1/LOCALSITE")
            .header("authorization", format!("Bearer {token}"))
            .body(Body::empty())
            .unwrap()
    };
    let at_denver = call(&state, SiteRole::Peer, request(&denver_token)).await;
    assert_eq!(at_denver.status(), StatusCode::OK);
    assert_eq!(json(at_denver).await["SiteName"], "Denver");
    let at_boston = call(&state, SiteRole::Local, request(&denver_token)).await;
    assert_eq!(at_boston.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn the_control_api_refuses_clients_that_are_not_on_loopback() {
    let mut request = Request::get("/_sim/clock").body(Body::empty()).unwrap();
    request
        .extensions_mut()
        .insert(ConnectInfo(SocketAddr::from(([192, 0, 2, 7], 40000))));
    let response = call(&state(), SiteRole::Local, request).await;
    expect_refused(answer(response).await, StatusCode::FORBIDDEN, &["loopback"]);

    // Loopback over IPv4, IPv6, and IPv4 as a site listening on [::] sees it.
    for loopback in ["127.0.0.1:40000", "[::1]:40000", "[::ffff:127.0.0.1]:40000"] {
        let mut request = Request::get("/_sim/clock").body(Body::empty()).unwrap();
        let addr: SocketAddr = loopback.parse().unwrap();
        request.extensions_mut().insert(ConnectInfo(addr));
        let response = call(&state(), SiteRole::Local, request).await;
        assert_eq!(response.status(), StatusCode::OK, "{loopback}");
    }
}

#[tokio::test]
async fn an_unknown_path_is_404_with_a_message() {
    let response = get_at_boston("/nowhere").await;
    expect_refused(answer(response).await, StatusCode::NOT_FOUND, &["/nowhere"]);
}

#[tokio::test]
async fn a_404_names_the_path_as_the_client_sent_it_not_as_it_was_routed() {
    let response = get_at_boston("/v1/NoSuchThing/Here").await;
    expect_refused(
        answer(response).await,
        StatusCode::NOT_FOUND,
        &["'/v1/NoSuchThing/Here'"],
    );
}

#[tokio::test]
async fn a_world_with_a_vm_in_four_vpgs_does_not_start() {
    let mut options = Options::for_tests(11);
    let mut extra = options.world.vpgs[0].clone();
    extra.name = "web-fourth".to_owned();
    options.world.vpgs.push(extra);
    let error = zvm_sim::start(options).await.unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("web-01") && message.contains("at most three VPGs"),
        "{message}"
    );
}
