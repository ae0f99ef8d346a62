//! Keycloak: token grants and their errors, bearer checks, expiry on the simulated clock, the
//! session limit, and no secret in the call log.

use reqwest::StatusCode;
use serde_json::Value;
use zvm_sim::Options;
use zvm_sim::test_kit::{Site, spawn, spawn_frozen, spawn_with, token};

const ADMIN: [(&str, &str); 4] = [
    ("grant_type", "password"),
    ("client_id", "zerto-client"),
    ("username", "admin"),
    ("password", "admin"),
];

/// The service client's client-credentials form.
const SERVICE: [(&str, &str); 3] = [
    ("grant_type", "client_credentials"),
    ("client_id", "rewind"),
    ("client_secret", "rewind-secret"),
];

#[tokio::test]
async fn the_password_grant_answers_with_a_keycloak_token_body() {
    let t = spawn(1).await;
    let response = token(&t.http, t.boston_url(), &ADMIN).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()["cache-control"].to_str().unwrap(),
        "no-store"
    );
    let body: Value = response.json().await.unwrap();
    assert!(body["access_token"].as_str().is_some_and(|t| t.len() >= 40));
    assert_eq!(body["expires_in"], 300);
    assert_eq!(body["refresh_expires_in"], 1800);
    assert!(body["refresh_token"].is_string());
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["not-before-policy"], 0);
    assert!(body["session_state"].is_string());
    assert!(body["scope"].is_string());
}

#[tokio::test]
async fn the_client_credentials_grant_gives_a_service_account_without_refresh_token() {
    let t = spawn(1).await;
    let response = token(&t.http, t.boston_url(), &SERVICE).await;
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = response.json().await.unwrap();
    assert!(body.get("refresh_token").is_none(), "{body}");
    assert_eq!(body["refresh_expires_in"], 0);
    let site = Site {
        base: t.boston_url().to_owned(),
        http: t.http.clone(),
        token: body["access_token"].as_str().unwrap().to_owned(),
    };
    let vpg = site.vpg_id("web-local").await;
    let task = site.insert(&vpg, "by-service-account").await;
    assert_eq!(
        site.task(&task).await["InitiatedBy"],
        "service-account-rewind"
    );
}

#[tokio::test]
async fn a_refresh_token_gives_a_new_access_token() {
    let t = spawn(1).await;
    let first: Value = token(&t.http, t.boston_url(), &ADMIN)
        .await
        .json()
        .await
        .unwrap();
    let response = token(
        &t.http,
        t.boston_url(),
        &[
            ("grant_type", "refresh_token"),
            ("client_id", "zerto-client"),
            ("refresh_token", first["refresh_token"].as_str().unwrap()),
        ],
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    let second: Value = response.json().await.unwrap();
    assert_ne!(second["access_token"], first["access_token"]);
}

/// A token request's form fields.
type Form = Vec<(&'static str, &'static str)>;

async fn keycloak_error(
    t: &zvm_sim::test_kit::TestSim,
    path_realm: &str,
    form: &[(&str, &str)],
) -> (StatusCode, Value) {
    let response = t
        .http
        .post(format!(
            "{}/auth/realms/{path_realm}/protocol/openid-connect/token",
            t.boston_url()
        ))
        .form(form)
        .send()
        .await
        .unwrap();
    let status = response.status();
    (status, response.json().await.unwrap())
}

/// Token requests Keycloak refuses: the form, the status and the `error` it answers.
fn refused_grants() -> Vec<(Form, StatusCode, &'static str)> {
    vec![
        (
            vec![
                ("grant_type", "password"),
                ("client_id", "zerto-client"),
                ("username", "admin"),
                ("password", "wrong"),
            ],
            StatusCode::UNAUTHORIZED,
            "invalid_grant",
        ),
        (
            vec![
                ("grant_type", "password"),
                ("client_id", "zerto-client"),
                ("username", "nobody"),
                ("password", "admin"),
            ],
            StatusCode::UNAUTHORIZED,
            "invalid_grant",
        ),
        (
            vec![
                ("grant_type", "client_credentials"),
                ("client_id", "rewind"),
                ("client_secret", "wrong"),
            ],
            StatusCode::UNAUTHORIZED,
            "invalid_client",
        ),
        (
            vec![
                ("grant_type", "password"),
                ("client_id", "no-such-client"),
                ("username", "admin"),
                ("password", "admin"),
            ],
            StatusCode::UNAUTHORIZED,
            "invalid_client",
        ),
        (
            vec![
                ("grant_type", "client_credentials"),
                ("client_id", "zerto-client"),
            ],
            StatusCode::BAD_REQUEST,
            "unauthorized_client",
        ),
        (
            vec![("grant_type", "device_code"), ("client_id", "zerto-client")],
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
        ),
        (
            vec![
                ("grant_type", "authorization_code"),
                ("client_id", "zerto-client"),
            ],
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
        (
            vec![("client_id", "zerto-client")],
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
        (
            vec![
                ("grant_type", "refresh_token"),
                ("client_id", "zerto-client"),
                ("refresh_token", "not-a-token"),
            ],
            StatusCode::BAD_REQUEST,
            "invalid_grant",
        ),
    ]
}

#[tokio::test]
async fn refused_grants_answer_with_keycloak_error_bodies() {
    let t = spawn(1).await;
    for (form, status, error) in refused_grants() {
        let (got_status, body) = keycloak_error(&t, "zerto", &form).await;
        assert_eq!(got_status, status, "{form:?}: {body}");
        assert_eq!(body["error"], error, "{form:?}: {body}");
        assert!(body["error_description"].is_string(), "{form:?}: {body}");
    }
    let (status, body) = keycloak_error(&t, "master", &ADMIN).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["error"], "Realm does not exist");
}

async fn raw_get(
    t: &zvm_sim::test_kit::TestSim,
    base: &str,
    bearer: Option<&str>,
) -> reqwest::Response {
    let mut request = t.http.get(format!("{base}/v1/vpgs"));
    if let Some(bearer) = bearer {
        request = request.header("Authorization", bearer);
    }
    request.send().await.unwrap()
}

async fn assert_unauthorized(response: reqwest::Response) {
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        response.headers()["www-authenticate"].to_str().unwrap(),
        "Bearer error=\"invalid_token\""
    );
    assert!(response.bytes().await.unwrap().is_empty());
}

#[tokio::test]
async fn v1_needs_a_bearer_token_of_the_same_site() {
    let t = spawn(1).await;
    let boston = t.boston().await;
    assert_unauthorized(raw_get(&t, t.boston_url(), None).await).await;
    assert_unauthorized(raw_get(&t, t.boston_url(), Some("Bearer not-a-token")).await).await;
    assert_unauthorized(raw_get(&t, t.boston_url(), Some("Basic YWRtaW46YWRtaW4=")).await).await;
    let denver_with_boston_token = raw_get(
        &t,
        t.denver_url(),
        Some(&format!("Bearer {}", boston.token)),
    )
    .await;
    assert_unauthorized(denver_with_boston_token).await;
    let accepted = raw_get(
        &t,
        t.boston_url(),
        Some(&format!("bearer {}", boston.token)),
    )
    .await;
    assert_eq!(accepted.status(), StatusCode::OK);
}

#[tokio::test]
async fn tokens_expire_on_the_simulated_clock() {
    let t = spawn_frozen(1).await;
    let boston = t.boston().await;
    t.control.advance(299.0).await;
    assert_eq!(boston.get("/v1/vpgs").await.0, StatusCode::OK);
    t.control.advance(1.0).await;
    let bearer = format!("Bearer {}", boston.token);
    assert_unauthorized(raw_get(&t, t.boston_url(), Some(&bearer)).await).await;
}

#[tokio::test]
async fn the_token_ttl_option_sets_expires_in() {
    let t = spawn_with(Options {
        token_ttl: std::time::Duration::from_secs(60),
        ..Options::for_tests(1)
    })
    .await;
    let body: Value = token(&t.http, t.boston_url(), &ADMIN)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(body["expires_in"], 60);
}

#[tokio::test]
async fn with_the_session_limit_a_new_token_revokes_the_older_ones_of_that_user() {
    let t = spawn_with(Options {
        session_limit: true,
        ..Options::for_tests(1)
    })
    .await;
    let first = t.boston().await;
    let operator = Site::login(&t.http, t.boston_url(), "operator", "operator").await;
    let at_denver = t.denver().await;
    let second = t.boston().await;
    assert_unauthorized(
        raw_get(&t, t.boston_url(), Some(&format!("Bearer {}", first.token))).await,
    )
    .await;
    assert_eq!(second.get("/v1/vpgs").await.0, StatusCode::OK);
    assert_eq!(operator.get("/v1/vpgs").await.0, StatusCode::OK);
    assert_eq!(at_denver.get("/v1/vpgs").await.0, StatusCode::OK);
}

#[tokio::test]
async fn without_the_session_limit_older_tokens_stay_valid() {
    let t = spawn(1).await;
    let first = t.boston().await;
    let _second = t.boston().await;
    assert_eq!(first.get("/v1/vpgs").await.0, StatusCode::OK);
}

#[tokio::test]
async fn the_call_log_records_token_calls_but_never_a_secret() {
    let t = spawn(1).await;
    let boston = t.boston().await;
    token(&t.http, t.boston_url(), &SERVICE).await;
    boston.get("/v1/vpgs?password=hunter2").await;
    let calls = t.control.calls().await;
    let token_calls: Vec<&Value> = calls
        .iter()
        .filter(|c| c["Path"] == "/auth/realms/zerto/protocol/openid-connect/token")
        .collect();
    assert_eq!(token_calls.len(), 2);
    assert!(
        token_calls
            .iter()
            .all(|c| c["Status"] == 200 && c["Method"] == "POST")
    );
    let log = serde_json::to_string(&calls).unwrap();
    for secret in [
        boston.token.as_str(),
        "rewind-secret",
        "hunter2",
        "password=admin",
    ] {
        assert!(!log.contains(secret), "the call log holds a secret: {log}");
    }
    assert!(log.contains("password=***"), "{log}");
}

async fn get_json(t: &zvm_sim::test_kit::TestSim, url: &str) -> Value {
    t.http.get(url).send().await.unwrap().json().await.unwrap()
}

async fn token_json(t: &zvm_sim::test_kit::TestSim, form: &[(&str, &str)]) -> Value {
    token(&t.http, t.boston_url(), form)
        .await
        .json()
        .await
        .unwrap()
}

/// A JWT's header and claims, after its signature was checked against the realm's JWKS.
async fn verified(t: &zvm_sim::test_kit::TestSim, jwt: &str) -> (Value, Value) {
    use aws_lc_rs::signature::{RSA_PKCS1_2048_8192_SHA256, RsaPublicKeyComponents};
    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let decode = |part: &str| URL_SAFE_NO_PAD.decode(part).expect("base64url");
    let parts: Vec<&str> = jwt.split('.').collect();
    assert_eq!(parts.len(), 3, "{jwt}");
    let header: Value = serde_json::from_slice(&decode(parts[0])).unwrap();
    let claims: Value = serde_json::from_slice(&decode(parts[1])).unwrap();
    let base = t.boston_url();
    let config_url = format!("{base}/auth/realms/zerto/.well-known/openid-configuration");
    let config = get_json(t, &config_url).await;
    let jwks = get_json(t, config["jwks_uri"].as_str().unwrap()).await;
    let key = jwks["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kid"] == header["kid"])
        .unwrap_or_else(|| panic!("the JWKS holds {}: {jwks}", header["kid"]));
    assert_eq!(
        (&key["kty"], &key["alg"]),
        (&Value::from("RSA"), &Value::from("RS256"))
    );
    let public = RsaPublicKeyComponents {
        n: decode(key["n"].as_str().unwrap()),
        e: decode(key["e"].as_str().unwrap()),
    };
    let signed = format!("{}.{}", parts[0], parts[1]);
    public
        .verify(
            &RSA_PKCS1_2048_8192_SHA256,
            signed.as_bytes(),
            &decode(parts[2]),
        )
        .expect("the signature verifies with the realm's key");
    assert_eq!(config["issuer"], claims["iss"]);
    (header, claims)
}

#[tokio::test]
async fn scope_openid_answers_an_id_token_signed_with_the_realms_published_key() {
    let t = spawn(1).await;
    let mut form = ADMIN.to_vec();
    form.push(("scope", "openid"));
    let body = token_json(&t, &form).await;
    assert_eq!(body["scope"], "openid profile email");
    let (header, claims) = verified(&t, body["id_token"].as_str().expect("an id_token")).await;
    assert_eq!(header["alg"], "RS256");
    assert_eq!(
        claims["iss"],
        format!("{}/auth/realms/zerto", t.boston_url())
    );
    assert_eq!(claims["aud"], "zerto-client");
    assert_eq!(claims["azp"], "zerto-client");
    assert_eq!(claims["typ"], "ID");
    assert_eq!(claims["preferred_username"], "admin");
    assert_eq!(claims["session_state"], body["session_state"]);
    let lifetime = claims["exp"].as_i64().unwrap() - claims["iat"].as_i64().unwrap();
    assert_eq!(lifetime, 300);

    let mut service = SERVICE.to_vec();
    service.push(("scope", "openid profile"));
    let body = token_json(&t, &service).await;
    let (_, claims) = verified(&t, body["id_token"].as_str().unwrap()).await;
    assert_eq!(claims["preferred_username"], "service-account-rewind");

    let plain = token_json(&t, &ADMIN).await;
    assert_eq!(plain["scope"], "profile email", "without openid, as before");
    assert!(plain.get("id_token").is_none());
    let other = t
        .http
        .get(format!(
            "{}/auth/realms/master/protocol/openid-connect/certs",
            t.boston_url()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn the_access_token_is_an_rs256_jwt_of_the_realm_that_the_zvm_api_takes_as_opaque() {
    let t = spawn(1).await;
    let body = token_json(&t, &ADMIN).await;
    let access = body["access_token"].as_str().unwrap().to_owned();
    let (header, claims) = verified(&t, &access).await;
    assert_eq!(header["alg"], "RS256");
    assert_eq!(claims["typ"], "Bearer");
    assert_eq!(claims["azp"], "zerto-client");
    assert_eq!(claims["preferred_username"], "admin");
    assert_eq!(claims["scope"], "profile email");
    let roles = claims["realm_access"]["roles"].as_array().unwrap();
    assert!(roles.contains(&Value::from("Administrator")), "{claims}");
    assert_eq!(
        claims["exp"].as_i64().unwrap() - claims["iat"].as_i64().unwrap(),
        300
    );

    let ask = |token: String| {
        let url = format!("{}/v1/localsite", t.boston_url());
        let http = t.http.clone();
        async move {
            http.get(url)
                .bearer_auth(token)
                .send()
                .await
                .unwrap()
                .status()
        }
    };
    assert_eq!(
        ask(access.clone()).await,
        StatusCode::OK,
        "taken as it was given"
    );
    // Another token's id in the same envelope: the site keeps no such token.
    let parts: Vec<&str> = access.split('.').collect();
    let mut forged: Value = {
        use base64::Engine;
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(parts[1])
            .unwrap();
        serde_json::from_slice(&bytes).unwrap()
    };
    forged["jti"] = Value::from("0".repeat(80));
    let payload = {
        use base64::Engine;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(forged.to_string())
    };
    let other = format!("{}.{payload}.{}", parts[0], parts[2]);
    assert_eq!(ask(other).await, StatusCode::UNAUTHORIZED);
}

/// The kid a JWT's header names.
fn kid_of(jwt: &str) -> String {
    use base64::Engine;
    let head = jwt.split('.').next().unwrap();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(head)
        .unwrap();
    let header: Value = serde_json::from_slice(&bytes).unwrap();
    header["kid"].as_str().unwrap().to_owned()
}

/// The kids the realm's JWKS publishes.
async fn published(t: &zvm_sim::test_kit::TestSim) -> Vec<String> {
    let url = format!(
        "{}/auth/realms/zerto/protocol/openid-connect/certs",
        t.boston_url()
    );
    let jwks = get_json(t, &url).await;
    jwks["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["kid"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn the_realm_rotates_to_a_new_key_withdraws_one_and_names_another_issuer_until_reset() {
    let t = spawn(1).await;
    let first = kid_of(
        token_json(&t, &ADMIN).await["access_token"]
            .as_str()
            .unwrap(),
    );
    assert_eq!(published(&t).await, [first.as_str()]);

    let second = t.control.rotate_realm_key().await;
    assert_ne!(second, first);
    let access = token_json(&t, &ADMIN).await["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(kid_of(&access), second, "the new key signs");
    verified(&t, &access).await;
    assert_eq!(published(&t).await, [first.clone(), second.clone()]);

    t.control.withdraw_realm_key(&first).await;
    assert_eq!(published(&t).await, [second.as_str()]);
    let (status, _) = t
        .control
        .request(reqwest::Method::DELETE, "realm/keys/no-such-kid", None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    let config_url = format!(
        "{}/auth/realms/zerto/.well-known/openid-configuration",
        t.boston_url()
    );
    t.control
        .realm_discovery(Some("https://evil.example.com/realms/x"), None)
        .await;
    let config = get_json(&t, &config_url).await;
    assert_eq!(config["issuer"], "https://evil.example.com/realms/x");
    assert!(
        config["jwks_uri"]
            .as_str()
            .unwrap()
            .starts_with(t.boston_url())
    );

    t.control.post("reset", serde_json::json!({})).await;
    assert_eq!(published(&t).await, [first.as_str()]);
    let config = get_json(&t, &config_url).await;
    assert_eq!(
        config["issuer"],
        format!("{}/auth/realms/zerto", t.boston_url())
    );
}

/// The S256 challenge of a PKCE verifier.
fn challenge_of(verifier: &str) -> String {
    use base64::Engine;
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, verifier.as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest.as_ref())
}

#[tokio::test]
async fn the_login_page_hands_out_a_code_that_a_token_request_with_its_verifier_uses_once() {
    let t = spawn_frozen(95).await;
    let base = format!(
        "{}/auth/realms/zerto/protocol/openid-connect",
        t.boston_url()
    );
    let verifier = "a-verifier-of-at-least-forty-three-characters-0123";
    let redirect = "https://rewind.example.com/ui/callback";
    let authorize = [
        ("response_type", "code"),
        ("client_id", "zerto-client"),
        ("redirect_uri", redirect),
        ("state", "s-1"),
        ("code_challenge", &challenge_of(verifier)),
        ("code_challenge_method", "S256"),
        ("scope", "openid"),
    ];
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let page = browser
        .get(format!("{base}/auth"))
        .query(&authorize)
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().await.unwrap();
    assert!(
        html.contains("name=\"password\"") && html.contains("s-1"),
        "{html}"
    );
    let sign_in = |form: &[(&str, &str)]| browser.post(format!("{base}/auth")).form(form).send();
    let mut wrong = authorize.to_vec();
    wrong.extend([("username", "admin"), ("password", "nope")]);
    let refused = sign_in(&wrong).await.unwrap();
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    assert!(
        refused
            .text()
            .await
            .unwrap()
            .contains("Invalid username or password")
    );

    let mut good = authorize.to_vec();
    good.extend([("username", "admin"), ("password", "admin")]);
    let sent = sign_in(&good).await.unwrap();
    assert!(sent.status().is_redirection(), "{}", sent.status());
    let to = url::Url::parse(sent.headers()["location"].to_str().unwrap()).unwrap();
    assert!(to.as_str().starts_with(redirect), "{to}");
    let query: std::collections::HashMap<_, _> = to.query_pairs().into_owned().collect();
    assert_eq!(query["state"], "s-1");
    let code = query["code"].clone();

    let exchange = |code: &str, verifier: &str| {
        let form = [
            ("grant_type", "authorization_code"),
            ("client_id", "zerto-client"),
            ("code", code),
            ("redirect_uri", redirect),
            ("code_verifier", verifier),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()));
        reqwest::Client::new()
            .post(format!("{base}/token"))
            .form(&form)
            .send()
    };
    let bad = exchange(&code, "not-the-verifier").await.unwrap();
    assert_eq!(
        bad.status(),
        StatusCode::BAD_REQUEST,
        "a wrong verifier spends the code"
    );
    assert!(bad.text().await.unwrap().contains("invalid_grant"));
    // Sign in again for a fresh code, then use it with the verifier.
    let sent = sign_in(&good).await.unwrap();
    let to = url::Url::parse(sent.headers()["location"].to_str().unwrap()).unwrap();
    let code: String = to
        .query_pairs()
        .find(|(k, _)| k == "code")
        .unwrap()
        .1
        .into_owned();
    let ok = exchange(&code, verifier).await.unwrap();
    assert_eq!(ok.status(), StatusCode::OK);
    let body: Value = ok.json().await.unwrap();
    assert!(
        body["access_token"].is_string() && body["refresh_token"].is_string(),
        "{body}"
    );
    let again = exchange(&code, verifier).await.unwrap();
    assert_eq!(
        again.status(),
        StatusCode::BAD_REQUEST,
        "a code is good once"
    );
}
