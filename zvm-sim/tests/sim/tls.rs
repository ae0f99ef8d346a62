//! HTTPS: each site serves its own self-signed certificate, whose PEM file a client pins; links and
//! download URLs are https; certificates in a given folder are reused across runs.

use reqwest::StatusCode;
use serde_json::json;
use zvm_sim::Options;
use zvm_sim::test_kit::{Site, TestSim, spawn_with};

fn tls_options(seed: u64) -> Options {
    Options {
        tls: true,
        ..Options::for_tests(seed)
    }
}

/// A client that trusts only this PEM file's certificate.
fn pinned(pem_file: &std::path::Path) -> reqwest::Client {
    let pem = std::fs::read(pem_file).expect("the PEM file exists");
    reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(&pem).expect("a PEM certificate")])
        .build()
        .expect("a client")
}

#[tokio::test]
async fn an_https_round_trip_with_the_pinned_certificate() {
    let t: TestSim = spawn_with(tls_options(61)).await;
    let boston = t.sim.local();
    assert!(
        boston.url.starts_with("https://127.0.0.1:"),
        "{}",
        boston.url
    );
    let pem = boston.certificate_pem.clone().expect("a certificate path");
    assert!(pem.ends_with("boston.pem"), "{}", pem.display());
    assert_ne!(
        t.sim.peer().certificate_pem,
        Some(pem.clone()),
        "each site has its own certificate"
    );

    let http = pinned(&pem);
    let site = Site::login(&http, &boston.url, "admin", "admin").await;
    let local = site.get_ok("/v1/localsite").await;
    assert_eq!(local["SiteName"], "Boston");
    let href = local["Link"]["href"].as_str().unwrap();
    assert!(href.starts_with(&format!("{}/v1/", boston.url)), "{href}");
    let clock = http
        .get(format!("{}/_sim/clock", boston.url))
        .send()
        .await
        .unwrap();
    assert_eq!(clock.status(), StatusCode::OK);

    let unpinned = reqwest::Client::new()
        .get(format!("{}/v1/localsite", boston.url))
        .send()
        .await
        .expect_err("a client that does not trust the certificate is refused");
    assert!(unpinned.is_connect(), "{unpinned}");
    let wrong_pin = pinned(t.sim.peer().certificate_pem.as_ref().unwrap())
        .get(format!("{}/v1/localsite", boston.url))
        .send()
        .await;
    assert!(
        wrong_pin.is_err(),
        "Denver's certificate does not vouch for Boston"
    );
}

#[tokio::test]
async fn certificates_in_a_given_folder_are_reused_and_a_temporary_folder_is_removed() {
    let folder = tempfile::tempdir().unwrap();
    let options = || Options {
        tls_dir: Some(folder.path().to_owned()),
        ..tls_options(62)
    };
    let first = zvm_sim::start(options()).await.unwrap();
    let pem = first.local().certificate_pem.clone().unwrap();
    assert_eq!(
        pem,
        folder.path().canonicalize().unwrap().join("boston.pem")
    );
    assert!(folder.path().join("denver.key.pem").is_file());
    let bytes = std::fs::read(&pem).unwrap();
    first.shutdown().await;
    let second = zvm_sim::start(options()).await.unwrap();
    assert_eq!(
        std::fs::read(&pem).unwrap(),
        bytes,
        "the same certificate again"
    );
    let site = Site::login(&pinned(&pem), &second.local().url, "admin", "admin").await;
    assert_eq!(site.get("/v1/vpgs").await.0, StatusCode::OK);
    second.shutdown().await;
    assert!(pem.is_file(), "a given folder is kept");

    let temporary = zvm_sim::start(tls_options(63)).await.unwrap();
    let pem = temporary.local().certificate_pem.clone().unwrap();
    assert!(pem.is_file());
    temporary.shutdown().await;
    assert!(
        !pem.exists(),
        "a temporary folder is removed when the simulator stops"
    );
}

#[tokio::test]
async fn a_lost_response_over_https_and_http2_is_a_transport_error_too() {
    let t: TestSim = spawn_with(Options {
        time_scale: 0.0,
        ..tls_options(64)
    })
    .await;
    let http = pinned(t.sim.local().certificate_pem.as_ref().unwrap());
    let boston = Site::login(&http, &t.sim.local().url, "admin", "admin").await;
    let vpg = boston.vpg_id("web-local").await;
    let control = |path: &str, body: serde_json::Value| {
        http.post(format!("{}/_sim/{path}", boston.base))
            .json(&body)
            .send()
    };
    let rule = control(
        "faults",
        json!({"Path": "/v1/vpgs/*/checkpoints", "Action": "LoseResponse", "Count": 1}),
    )
    .await
    .unwrap();
    assert_eq!(rule.status(), StatusCode::OK);
    let response = http
        .post(format!("{}/v1/vpgs/{vpg}/checkpoints", boston.base))
        .bearer_auth(&boston.token)
        .json(&json!({"CheckpointName": "lost over h2"}))
        .send()
        .await;
    let error = response.expect_err("no answer arrives");
    assert!(error.is_request() && !error.is_timeout(), "{error:?}");
    let advanced = control("clock/advance", json!({"Seconds": 1}))
        .await
        .unwrap();
    assert_eq!(advanced.status(), StatusCode::OK);
    assert_eq!(
        boston.tagged(&vpg, "lost over h2").await.len(),
        1,
        "the insert happened"
    );
    let version = http
        .get(format!("{}/v1/localsite", boston.base))
        .bearer_auth(&boston.token)
        .send()
        .await
        .unwrap()
        .version();
    assert_eq!(
        version,
        reqwest::Version::HTTP_2,
        "the client speaks HTTP/2 here"
    );
}
