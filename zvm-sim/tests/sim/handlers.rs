//! Handler-level tests: one site's router driven in-process with tower's `oneshot`, no listener.

use std::net::SocketAddr;

use axum::body::{Body, to_bytes};
use axum::extract::ConnectInfo;
use axum::http::{Request, StatusCode};
use serde_json::Value;
use tower::ServiceExt;
use zvm_sim::{Options, SimState, SiteRole, app};

fn state() -> SimState {
    SimState::new(&Options::for_tests(11)).expect("the default world builds")
}

async fn json(response: axum::response::Response) -> Value {
    let bytes = to_bytes(response.into_body(), usize::MAX).await.unwrap();
    serde_json::from_slice(&bytes).unwrap_or(Value::Null)
}

async fn token(state: &SimState, site: SiteRole) -> String {
    let request = Request::post("/auth/realms/zerto/protocol/openid-connect/token")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(Body::from(
            "grant_type=password&client_id=zerto-client&username=operator&password=operator",
        ))
        .unwrap();
    let response = app(state, site).oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    json(response).await["access_token"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn a_v1_call_without_a_token_is_401_before_anything_else() {
    let response = app(&state(), SiteRole::Local)
        .oneshot(Request::get("/v1/vpgs").body(Body::empty()).unwrap())
        .await
        .unwrap();
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
    let at_denver = app(&state, SiteRole::Peer)
        .oneshot(request(&denver_token))
        .await
        .unwrap();
    assert_eq!(at_denver.status(), StatusCode::OK);
    assert_eq!(json(at_denver).await["SiteName"], "Denver");
    let at_boston = app(&state, SiteRole::Local)
        .oneshot(request(&denver_token))
        .await
        .unwrap();
    assert_eq!(at_boston.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn the_control_api_refuses_clients_that_are_not_on_loopback() {
    let mut request = Request::get("/_sim/clock").body(Body::empty()).unwrap();
    request
        .extensions_mut()
        .insert(ConnectInfo(SocketAddr::from(([192, 0, 2, 7], 40000))));
    let response = app(&state(), SiteRole::Local)
        .oneshot(request)
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(
        json(response).await["Message"]
            .as_str()
            .unwrap()
            .contains("loopback")
    );

    // Loopback over IPv4, IPv6, and IPv4 as a site listening on [::] sees it.
    for loopback in ["127.0.0.1:40000", "[::1]:40000", "[::ffff:127.0.0.1]:40000"] {
        let mut request = Request::get("/_sim/clock").body(Body::empty()).unwrap();
        let addr: SocketAddr = loopback.parse().unwrap();
        request.extensions_mut().insert(ConnectInfo(addr));
        let response = app(&state(), SiteRole::Local)
            .oneshot(request)
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{loopback}");
    }
}

#[tokio::test]
async fn an_unknown_path_is_404_with_a_message() {
    let response = app(&state(), SiteRole::Local)
        .oneshot(Request::get("/nowhere").body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    assert!(
        json(response).await["Message"]
            .as_str()
            .unwrap()
            .contains("/nowhere")
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
