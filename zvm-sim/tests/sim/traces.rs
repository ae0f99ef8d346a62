//! Zerto's own actions leave Zerto's own traces (issue 18): a tagged checkpoint (done or failed), a
//! failover test started and stopped and an FLR mount raise events naming who did them; a VPG whose
//! RPO passes its target raises a warning, then an error past twice the target, which turn off
//! when it writes checkpoints again; a stopped test leaves a recovery report. Each as SW10 shapes
//! it, with the filters public clients send.

use reqwest::StatusCode;
use serde_json::{Value, json};
use zvm_sim::test_kit::{Site, TestSim, frozen_with_vpg, spawn_frozen};

/// The events a site lists for this query.
async fn events(site: &Site, query: &str) -> Vec<Value> {
    site.get_ok(&format!("/v1/events{query}"))
        .await
        .as_array()
        .unwrap()
        .clone()
}

/// The alerts on a VPG that a site lists, as `(HelpIdentifier, Level)`.
async fn alerts_of(site: &Site, vpg: &str) -> Vec<(String, String)> {
    let alerts = site
        .get_ok(&format!("/v1/alerts?vpgIdentifier={vpg}"))
        .await;
    alerts
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            assert_eq!(a["Entity"], "Vpg");
            assert_eq!(a["AffectedVpgs"][0]["identifier"], vpg);
            (
                a["HelpIdentifier"].as_str().unwrap().to_owned(),
                a["Level"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn pair(help: &str, level: &str) -> (String, String) {
    (help.to_owned(), level.to_owned())
}

#[tokio::test]
async fn a_resync_past_the_target_rpo_raises_a_warning_then_an_error_that_end_with_it() {
    let (t, boston, vpg) = frozen_with_vpg(18, "web-dr").await;
    t.control.resync("web-dr", 1_000).await;
    t.control.advance(299.0).await;
    assert!(alerts_of(&boston, &vpg).await.is_empty(), "within 300 s");

    // Tokens live 300 s of simulated time: each step logs in again.
    t.control.advance(2.0).await;
    let (boston, denver) = t.both_sites().await;
    assert_eq!(alerts_of(&boston, &vpg).await, [pair("VPG0009", "Warning")]);
    assert_eq!(
        alerts_of(&denver, &vpg).await,
        [pair("VPG0009", "Warning")],
        "the recovery site sees it too"
    );
    let rpo = boston.get_ok(&format!("/v1/vpgs/{vpg}")).await["ActualRPO"].clone();
    assert!(rpo.as_u64().unwrap() > 300, "{rpo}");

    t.control.advance(300.0).await;
    let boston = t.boston().await;
    assert_eq!(alerts_of(&boston, &vpg).await, [pair("VPG0010", "Error")]);
    let turned = events(&boston, &format!("?vpgIdentifier={vpg}&category=Alerts")).await;
    let kinds: Vec<u64> = turned
        .iter()
        .map(|e| e["EventType"].as_u64().unwrap())
        .collect();
    assert_eq!(kinds, [47, 48, 47], "warning on, warning off, error on");

    t.control.advance(400.0).await;
    let boston = t.boston().await;
    assert!(alerts_of(&boston, &vpg).await.is_empty(), "synced again");
    let query = format!("?vpgIdentifier={vpg}&eventType=AlertTurnedOff");
    let turned = events(&boston, &query).await;
    assert_eq!(turned.len(), 2, "{turned:?}");
    for event in &turned {
        assert_eq!(event["UserName"], "System");
        assert_eq!(event["EventCategory"], "Alerts");
        let alert = event["RelatedEntities"]["Alerts"][0]["identifier"]
            .as_str()
            .unwrap();
        let about = events(&boston, &format!("?alertIdentifier={alert}")).await;
        assert_eq!(about.len(), 2, "the alert's on and off: {about:?}");
    }
}

#[tokio::test]
async fn a_vpg_that_lags_its_target_while_writing_has_an_rpo_alert_and_a_healthy_one_has_none() {
    let t = spawn_frozen(18).await;
    let boston = t.boston().await;
    let lagging = boston.vpg_id("web-archive").await;
    let healthy = boston.vpg_id("app-tier").await;
    let shown = alerts_of(&boston, &lagging).await;
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(
        shown[0].0 == "VPG0009" || shown[0].0 == "VPG0010",
        "{shown:?}"
    );
    assert!(alerts_of(&boston, &healthy).await.is_empty());
    let initializing = boston.vpg_id("sql-init").await;
    assert!(
        alerts_of(&boston, &initializing).await.is_empty(),
        "a VPG that never wrote has no RPO yet"
    );
}

#[tokio::test]
async fn a_dismissed_alert_shows_dismissed_until_undismissed_and_an_unknown_one_is_404() {
    let t = spawn_frozen(18).await;
    let boston = t.boston().await;
    let all = boston.get_ok("/v1/alerts").await;
    let alert = all[0]["Link"]["identifier"].as_str().unwrap().to_owned();
    assert_eq!(all[0]["IsDismissed"], false);

    let (status, _) = boston
        .post(&format!("/v1/alerts/{alert}/dismiss"), &json!({}))
        .await;
    assert_eq!(status, StatusCode::OK);
    let one = boston.get_ok(&format!("/v1/alerts/{alert}")).await;
    assert_eq!(one["IsDismissed"], true);
    let dismissed = boston.get_ok("/v1/alerts?isDismissed=true").await;
    assert_eq!(dismissed.as_array().unwrap().len(), 1);

    let (status, _) = boston
        .post(&format!("/v1/alerts/{alert}/undismiss"), &json!({}))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        boston.get_ok(&format!("/v1/alerts/{alert}")).await["IsDismissed"],
        false
    );

    let (status, body) = boston
        .post("/v1/alerts/no-such-alert/dismiss", &json!({}))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(
        body["Message"].as_str().unwrap().contains("GET /v1/alerts"),
        "{body}"
    );
    let (status, body) = boston.get("/v1/alerts?level=Critical").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body["Message"].as_str().unwrap().contains("Warning"),
        "{body}"
    );
}

/// Starts a VPG action that answers a task id.
async fn act(site: &Site, vpg: &str, action: &str, body: Value) -> String {
    let (status, answer) = site.post(&format!("/v1/vpgs/{vpg}/{action}"), &body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    answer.as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_failed_insert_and_a_stopped_failover_test_leave_events_and_a_recovery_report() {
    let (t, boston, vpg) = frozen_with_vpg(18, "app-tier").await;
    boston.insert(&vpg, "rewind-first").await;
    boston.insert(&vpg, "rewind-second").await;
    t.control.advance(1.0).await;
    let inserts = events(&boston, "?eventType=12").await;
    let outcomes: Vec<(bool, &str)> = inserts
        .iter()
        .map(|e| {
            assert_eq!(e["UserName"], "admin");
            assert_eq!(e["EventCategory"], "Events");
            (
                e["EventCompletedSuccessfully"].as_bool().unwrap(),
                e["Description"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(outcomes.len(), 2, "{inserts:?}");
    assert!(
        outcomes
            .iter()
            .any(|(ok, d)| *ok && d.contains("rewind-first"))
    );
    assert!(
        outcomes
            .iter()
            .any(|(ok, d)| !ok && d.contains("rewind-second") && d.contains("Another")),
        "the second insert failed, and says why: {outcomes:?}"
    );

    act(&boston, &vpg, "FailoverTest", json!({})).await;
    t.control.advance(1.0).await;
    let summary = json!({"FailoverTestSuccess": true, "FailoverTestSummary": "app came up"});
    act(&boston, &vpg, "FailoverTestStop", summary).await;
    t.control.advance(1.0).await;
    let tests = events(&boston, "?eventType=FailOverTest").await;
    let stops = events(&boston, "?eventType=StopFailOverTest").await;
    assert_eq!((tests.len(), stops.len()), (1, 1));
    assert_eq!(tests[0]["RelatedEntities"]["Vpgs"][0]["identifier"], vpg);

    let reports = boston
        .get_ok("/v1/reports/recovery?vpgName=app-tier&recoveryType=FailoverTest")
        .await;
    let report = &reports[0];
    assert_eq!(report["General"]["Status"], "Success");
    assert_eq!(report["General"]["Notes"], "app came up");
    assert_eq!(report["General"]["InitiatedBy"], "admin");
    assert!(report["General"]["EndTime"].is_string(), "{report}");
    assert!(report["General"]["RtoInSeconds"].is_string(), "{report}");
    assert_eq!(
        report["RecoverySettings"]["Vms"].as_array().unwrap().len(),
        3
    );
    let id = report["RecoveryOperationIdentifier"].as_str().unwrap();
    let one = boston.get_ok(&format!("/v1/reports/recovery/{id}")).await;
    assert_eq!(&one, report);
    let failed = boston.get_ok("/v1/reports/recovery?state=Fail").await;
    assert_eq!(failed, json!([]));
}

#[tokio::test]
async fn an_flr_mount_raises_an_event_naming_its_session() {
    let t: TestSim = spawn_frozen(18).await;
    let boston = t.boston().await;
    let vpg = boston.vpg_id("web-local").await;
    let vm = boston.vm_id("web-01", "web-local").await;
    let checkpoint = boston.tag(&t.control, &vpg, "before-change").await;
    let (status, session) = boston.start_flr(&vpg, &vm, &checkpoint).await;
    assert_eq!(status, StatusCode::OK, "{session}");
    t.control.advance(1.0).await;
    let mounts = events(&boston, "?eventType=FlrJournalMount").await;
    assert_eq!(mounts.len(), 1, "{mounts:?}");
    assert_eq!(
        mounts[0]["RelatedEntities"]["FlrSessions"][0]["identifier"],
        session
    );
    let id = mounts[0]["EventIdentifier"].as_str().unwrap();
    assert_eq!(boston.get_ok(&format!("/v1/events/{id}")).await, mounts[0]);
}

#[tokio::test]
async fn events_alerts_and_reports_are_kept_in_a_saved_state() {
    let (t, boston, vpg) = frozen_with_vpg(18, "app-tier").await;
    boston.insert(&vpg, "kept").await;
    t.control.advance(1.0).await;
    let before = identified(events(&boston, "").await);
    assert!(!before.is_empty());
    let state = t.control.state().await;
    let restored = spawn_frozen(19).await;
    let (status, body) = restored
        .control
        .request(reqwest::Method::PUT, "state", Some(state))
        .await;
    assert!(status.is_success(), "{status} {body}");
    let after = identified(events(&restored.boston().await, "").await);
    assert_eq!(before, after);
}

/// Events by identifier and description (their links name the serving address).
fn identified(events: Vec<Value>) -> Vec<(Value, Value)> {
    events
        .into_iter()
        .map(|e| (e["EventIdentifier"].clone(), e["Description"].clone()))
        .collect()
}

#[tokio::test]
async fn alerts_and_events_take_every_filter_the_public_clients_send() {
    let (t, boston, vpg) = frozen_with_vpg(18, "app-tier").await;
    boston.insert(&vpg, "filtered").await;
    t.control.advance(1.0).await;
    let site = boston.get_ok("/v1/localsite").await["SiteIdentifier"].clone();
    let site = site.as_str().unwrap();
    let count = |v: Value| v.as_array().unwrap().len();

    let all = count(boston.get_ok("/v1/alerts").await);
    assert!(all > 0, "web-archive and files-dr are past their targets");
    for (query, expected) in [
        (format!("siteIdentifier={site}"), all),
        ("entity=Vpg".to_owned(), all),
        ("entity=Vra".to_owned(), 0),
        (
            "startDate=2020-01-01T00:00:00Z&endDate=2100-01-01T00:00:00Z".to_owned(),
            all,
        ),
        ("startDate=2100-01-01".to_owned(), 0),
        ("zorgIdentifier=any".to_owned(), 0),
    ] {
        let shown = count(boston.get_ok(&format!("/v1/alerts?{query}")).await);
        assert_eq!(shown, expected, "{query}");
    }
    let warnings = count(boston.get_ok("/v1/alerts?level=Warning").await);
    let errors = count(boston.get_ok("/v1/alerts?level=1").await);
    assert_eq!(warnings + errors, all, "a level by name or number");
    let help = count(boston.get_ok("/v1/alerts?helpIdentifier=VPG0009").await);
    assert_eq!(help, warnings);

    let ours = |query: &str| format!("/v1/events?eventType=InsertTaggedCP&{query}");
    for (query, expected) in [
        ("userName=admin".to_owned(), 1),
        ("userName=System".to_owned(), 0),
        ("siteName=boston".to_owned(), 1),
        (format!("siteIdentifier={site}"), 1),
        ("entityType=VPG".to_owned(), 1),
        ("entityType=Site".to_owned(), 0),
        ("vpg=app-tier".to_owned(), 1),
        (
            "category=Events&startDate=2020-01-01T00:00:00Z&endDate=2100-01-01T00:00:00Z"
                .to_owned(),
            1,
        ),
        ("eventCategory=Alerts".to_owned(), 0),
        ("endDate=2020-01-01".to_owned(), 0),
    ] {
        assert_eq!(
            count(boston.get_ok(&ours(&query)).await),
            expected,
            "{query}"
        );
    }
    let (status, body) = boston.get("/v1/events?eventType=NoSuchEvent").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body["Message"].as_str().unwrap().contains("InsertTaggedCP"),
        "{body}"
    );
}
