//! `/_sim/ui`: the pages show the world, and their forms act through the control API's own
//! checks, refused when posted from another origin.

use reqwest::StatusCode;
use reqwest::redirect::Policy;
use zvm_sim::test_kit::spawn_frozen;

fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(Policy::none())
        .build()
        .unwrap()
}

/// The HTML of the page at `url`, which must answer 200.
async fn page(url: String) -> String {
    let answer = browser().get(url).send().await.unwrap();
    assert_eq!(answer.status(), StatusCode::OK);
    answer.text().await.unwrap()
}

#[tokio::test]
async fn the_dashboard_shows_the_sites_vpgs_vms_tasks_and_calls_and_the_unmatched_ones() {
    let t = spawn_frozen(93).await;
    let boston = t.boston().await;
    let vpg = boston.vpg_id("web-local").await;
    boston
        .tag(
            &t.control,
            &vpg,
            "ai:me | edit | vm=web-01 | change=ui-1 | 2026-12-05T10:00:00Z",
        )
        .await;
    boston.get("/v1/not/a/route").await;
    let html = page(format!("{}/_sim/ui", t.boston_url())).await;
    for shown in [
        "Boston",
        "Denver",
        "web-local",
        "web-01",
        "InsertTaggedCP",
        "/v1/not/a/route",
        "(no route)",
        "Fault rules",
        "download the state",
    ] {
        assert!(html.contains(shown), "the page shows {shown}");
    }
    let journal = page(format!("{}/_sim/ui/vpgs/{vpg}", t.boston_url())).await;
    assert!(journal.contains("ui-1"), "the tag's change: {journal}");
    assert!(journal.contains("the history edge"), "{journal}");
    let only_unmatched = page(format!("{}/_sim/ui?unmatched=1", t.boston_url())).await;
    assert!(!only_unmatched.contains("/v1/vpgs?"), "filtered");
}

#[tokio::test]
async fn the_forms_act_through_the_control_api_and_not_from_another_origin() {
    let t = spawn_frozen(94).await;
    let base = t.boston_url().to_owned();
    let http = browser();
    let before = t.control.get("clock").await["Now"].clone();
    let advanced = http
        .post(format!("{base}/_sim/ui/clock"))
        .form(&[("seconds", "60")])
        .send()
        .await
        .unwrap();
    assert_eq!(advanced.status(), StatusCode::SEE_OTHER);
    assert_ne!(t.control.get("clock").await["Now"], before);

    let added = http
        .post(format!("{base}/_sim/ui/faults"))
        .form(&[
            ("method", "GET"),
            ("path", "/v1/vpgs"),
            ("action", "Respond"),
            ("status", "503"),
            ("expires_in_seconds", "120"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(added.status(), StatusCode::SEE_OTHER);
    let rules = t.control.get("faults").await;
    assert_eq!(rules[0]["Path"], "/v1/vpgs", "{rules}");
    assert!(rules[0]["ExpiresAt"].is_string(), "{rules}");
    let bad = http
        .post(format!("{base}/_sim/ui/faults"))
        .form(&[("path", "/v1/**"), ("action", "Nonsense")])
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
    assert!(
        bad.text().await.unwrap().contains("Nonsense"),
        "the control API's refusal"
    );

    let foreign = http
        .post(format!("{base}/_sim/ui/reset"))
        .header("Origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), StatusCode::FORBIDDEN);
    assert_eq!(t.control.get("faults").await.as_array().unwrap().len(), 1);

    let id = rules[0]["Id"].as_u64().unwrap();
    let removed = http
        .post(format!("{base}/_sim/ui/faults/{id}/remove"))
        .send()
        .await
        .unwrap();
    assert_eq!(removed.status(), StatusCode::SEE_OTHER);
    assert_eq!(t.control.get("faults").await, serde_json::json!([]));
    let reset = http
        .post(format!("{base}/_sim/ui/reset"))
        .send()
        .await
        .unwrap();
    assert_eq!(reset.status(), StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn a_deleted_vpg_leaves_the_dashboard_and_a_vras_task_shows_no_vpg() {
    let t = spawn_frozen(99).await;
    let boston = t.boston().await;
    let vpg = boston.vpg_id("web-archive").await;
    let (status, _) = boston.delete(&format!("/v1/vpgs/{vpg}")).await;
    assert_eq!(status, StatusCode::OK);
    let vras = boston.get_ok("/v1/vras").await;
    let vra = vras[0]["VraIdentifierStr"].as_str().unwrap().to_owned();
    let (status, _) = boston
        .post(&format!("/v1/vras/{vra}/upgrade"), &serde_json::json!({}))
        .await;
    assert_eq!(status, StatusCode::OK);
    t.control.advance(10).await;
    let html = page(format!("{}/_sim/ui", t.boston_url())).await;
    assert!(html.contains("UpgradeVra"), "{html}");
    assert!(html.contains("RemoveProtectionGroup"), "{html}");
    let vpgs = html
        .split("id=\"vpgs\"")
        .nth(1)
        .unwrap()
        .split("</section>")
        .next()
        .unwrap();
    assert!(!vpgs.contains("web-archive"), "no longer listed: {vpgs}");
    assert!(vpgs.contains("web-dr"));
}
