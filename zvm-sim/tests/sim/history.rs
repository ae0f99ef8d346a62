//! How long the way back lasts (issue 30): a resync wipes the journal and says so in an event; a
//! burst of writes fills a journal to its hard limit, so its oldest checkpoints go early, its
//! actual history falls short of the configured one, its status and alerts say so, and they clear
//! when the history grows back.

use reqwest::StatusCode;
use serde_json::{Value, json};
use zvm_sim::test_kit::{Site, TestSim, frozen_with_vpg, spawn_with, texts};
use zvm_sim::{Options, WorldSpec};

use crate::expect::{expect_refused, vpg_status};

const MINUTE: f64 = 60.0;

/// The alerts on a VPG that a site lists, as `(HelpIdentifier, Level, Entity)`.
async fn alerts_of(site: &Site, vpg: &str) -> Vec<(String, String, String)> {
    let alerts = site
        .get_ok(&format!("/v1/alerts?vpgIdentifier={vpg}"))
        .await;
    let text = |a: &Value, key: &str| a[key].as_str().unwrap().to_owned();
    alerts
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            assert_eq!(a["AffectedVpgs"][0]["identifier"], vpg, "{a}");
            (
                text(a, "HelpIdentifier"),
                text(a, "Level"),
                text(a, "Entity"),
            )
        })
        .collect()
}

fn alert(help: &str, level: &str, entity: &str) -> (String, String, String) {
    (help.to_owned(), level.to_owned(), entity.to_owned())
}

/// `HistoryStatusApi` of a VPG.
async fn history(site: &Site, vpg: &str) -> Value {
    site.get_ok(&format!("/v1/vpgs/{vpg}")).await["HistoryStatusApi"].clone()
}

/// Moves the clock and logs in to Boston again (tokens live 300 s of simulated time).
async fn later(t: &TestSim, seconds: f64) -> Site {
    t.control.advance(seconds).await;
    t.boston().await
}

/// The alert events of a VPG, as `(EventType, OccurredOn, Description)`, oldest first.
async fn alert_events(site: &Site, vpg: &str) -> Vec<(u64, String, String)> {
    let listed = events(site, &format!("?vpgIdentifier={vpg}&category=Alerts")).await;
    listed
        .iter()
        .map(|e| {
            (
                e["EventType"].as_u64().unwrap(),
                e["OccurredOn"].as_str().unwrap().to_owned(),
                e["Description"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// The events a site lists for this query.
async fn events(site: &Site, query: &str) -> Vec<Value> {
    let events = site.get_ok(&format!("/v1/events{query}")).await;
    events.as_array().expect("a list").clone()
}

#[tokio::test]
async fn a_resync_leaves_an_event_that_names_the_vpg_the_time_and_the_tags_it_removed() {
    let (t, boston, vpg) = frozen_with_vpg(30, "web-dr").await;
    boston.tag(&t.control, &vpg, "before-change").await;
    let at = t.control.now().await;
    t.control.resync_as("web-dr", 60, "DeltaSync").await;
    assert!(boston.checkpoints(&vpg).await.is_empty());

    let wiped = events(
        &boston,
        &format!("?vpgIdentifier={vpg}&eventType=InitFullSync"),
    )
    .await;
    assert_eq!(wiped.len(), 1, "{wiped:?}");
    let event = &wiped[0];
    assert_eq!(event["EventType"], 22);
    assert_eq!(event["OccurredOn"], at.as_str());
    assert_eq!(event["UserName"], "System");
    assert_eq!(event["EventCompletedSuccessfully"], true);
    assert_eq!(event["EventCategory"], "Events");
    assert_eq!(
        event["RelatedEntities"]["Vpgs"][0]["identifier"],
        vpg.as_str()
    );
    let description = event["Description"].as_str().unwrap();
    for words in [
        "web-dr",
        "DeltaSync",
        "removed every checkpoint",
        "1 tagged",
        "'before-change'",
    ] {
        assert!(description.contains(words), "{words:?} in {description}");
    }
    // The recovery site's ZVM sees the VPG, and so its event; the resync is no task.
    let denver = t.denver().await;
    assert_eq!(events(&denver, "?eventType=22").await.len(), 1);
    assert!(
        t.control
            .tasks()
            .await
            .iter()
            .all(|task| task["Type"] == "InsertTaggedCP")
    );
}

#[tokio::test]
async fn a_force_sync_keeps_its_checkpoints_and_leaves_no_wipe_event() {
    let (t, boston, vpg) = frozen_with_vpg(30, "web-local").await;
    boston.tag(&t.control, &vpg, "kept").await;
    let (status, _) = boston
        .post(&format!("/v1/vpgs/{vpg}/forcesync"), &Value::Null)
        .await;
    assert_eq!(status, 200);
    t.control.advance(1.0).await;
    assert_eq!(boston.tagged(&vpg, "kept").await.len(), 1);
    assert!(events(&boston, "?eventType=InitFullSync").await.is_empty());
}

#[tokio::test]
async fn a_burst_within_the_headroom_costs_no_history() {
    let (t, boston, vpg) = frozen_with_vpg(30, "web-dr").await;
    // web-dr keeps 120 minutes; without a world-file limit its journal holds 180 minutes of writes.
    let journal = t.control.journal_burst("web-dr", 60.0).await;
    assert_eq!(journal["LimitInMinutes"], 180);
    assert_eq!(journal["BurstMinutes"], 60.0);
    assert_eq!(journal["ActualHistoryInMinutes"], 120);
    assert_eq!(journal["Full"], false);
    assert_eq!(vpg_status(&boston, &vpg).await, (Some(1), Some(0)));
    assert!(alerts_of(&boston, &vpg).await.is_empty());
}

#[tokio::test]
async fn a_burst_past_the_headroom_promotes_the_oldest_checkpoints_and_the_tag_with_them() {
    let (t, boston, vpg) = frozen_with_vpg(30, "web-dr").await;
    let configured = history(&boston, &vpg).await;
    assert_eq!(configured["ActualHistoryInMinutes"], 120);
    let tag = boston.tag(&t.control, &vpg, "before-rewrite").await;
    let boston = later(&t, 30.0 * MINUTE).await;
    // 120 minutes of writes and 85 of burst in room for 180: the oldest 25 minutes go, and the tag
    // written 30 minutes ago stays. (The tag took a second, so now is 00:30:01.)
    t.control.journal_burst("web-dr", 85.0).await;
    let short = history(&boston, &vpg).await;
    assert_eq!(short["ActualHistoryInMinutes"], 95);
    assert_eq!(short["ConfiguredHistoryInMinutes"], 120);
    assert_eq!(
        short["EarliestCheckpoint"]["TimeStamp"],
        "2025-12-31T22:55:05.000Z"
    );
    assert_eq!(boston.tagged(&vpg, "before-rewrite").await.len(), 1);
    // A second burst leaves room for 25 minutes only: the tag goes with its automatic neighbours.
    t.control.journal_burst("web-dr", 70.0).await;
    assert!(boston.tagged(&vpg, "before-rewrite").await.is_empty());
    assert_eq!(history(&boston, &vpg).await["ActualHistoryInMinutes"], 25);
    let web_01 = boston.vm_id("web-01", "web-dr").await;
    let denver = t.denver().await;
    let answer = denver.start_flr(&vpg, &web_01, &tag).await;
    expect_refused(
        answer,
        StatusCode::BAD_REQUEST,
        &["is not in the journal", "web-dr"],
    );
}

#[tokio::test]
async fn a_short_history_shows_history_not_meeting_sla_and_a_low_history_warning() {
    let (t, boston, vpg) = frozen_with_vpg(30, "web-dr").await;
    let journal = t.control.journal_burst("web-dr", 85.0).await;
    assert_eq!(journal["ActualHistoryInMinutes"], 95);
    assert_eq!(journal["Full"], true);
    assert_eq!(journal["Status"], 4);
    let vpg_row = boston.get_ok(&format!("/v1/vpgs/{vpg}")).await;
    assert_eq!(vpg_row["Status"], 4);
    assert_eq!(vpg_row["StatusDescription"], "HistoryNotMeetingSLA");
    assert_eq!(vpg_row["AlertStatus"], 1);
    let rows = boston.get_ok("/v1/vms?vpgName=web-dr").await;
    assert!(rows.as_array().unwrap().iter().all(|r| r["Status"] == 4));
    let short = boston.get_ok("/v1/vpgs?status=HistoryNotMeetingSLA").await;
    assert_eq!(texts(&short, "VpgName"), ["web-dr"]);
    // 95 of 120 minutes is 79 %: below 85 %, not below 75 %. The journal is at its limit too.
    assert_eq!(
        alerts_of(&boston, &vpg).await,
        [
            alert("VPG0003", "Warning", "Vpg"),
            alert("VRA0039", "Error", "Vra")
        ]
    );
    let all = boston
        .get_ok(&format!(
            "/v1/alerts?vpgIdentifier={vpg}&helpIdentifier=VPG0003"
        ))
        .await;
    let warning = &all[0];
    assert_eq!(warning["TurnedOn"], "2026-01-01T00:00:00.000Z");
    assert_eq!(warning["IsDismissed"], false);
    assert_eq!(
        warning["Site"]["identifier"],
        t.sim.local().site_identifier.as_str()
    );
    let description = warning["Description"].as_str().unwrap();
    assert!(
        description.contains("web-dr") && description.contains("85%"),
        "{description}"
    );
    let full = boston
        .get_ok(&format!("/v1/alerts?vpgIdentifier={vpg}&entity=Vra"))
        .await;
    assert_eq!(full[0]["HelpIdentifier"], "VRA0039");
    assert_eq!(
        full[0]["Site"]["identifier"],
        t.sim.peer().site_identifier.as_str()
    );
    assert!(
        full[0]["Description"]
            .as_str()
            .unwrap()
            .contains("Journal reached configured limit")
    );
    let helps = boston.get_ok("/v1/alerts/helpidentifiers").await;
    for help in ["VPG0003", "VPG0004", "VRA0039", "VPG0009", "VPG0010"] {
        assert!(
            helps.as_array().unwrap().contains(&json!(help)),
            "{help} in {helps}"
        );
    }
}

#[tokio::test]
async fn a_history_below_three_quarters_raises_the_error_instead_of_the_warning() {
    let (t, boston, vpg) = frozen_with_vpg(30, "web-dr").await;
    t.control.journal_burst("web-dr", 100.0).await;
    assert_eq!(history(&boston, &vpg).await["ActualHistoryInMinutes"], 80);
    assert_eq!(
        alerts_of(&boston, &vpg).await,
        [
            alert("VPG0004", "Error", "Vpg"),
            alert("VRA0039", "Error", "Vra")
        ]
    );
}

#[tokio::test]
async fn a_short_history_and_a_missed_rpo_together_show_not_meeting_sla() {
    let (t, boston, vpg) = frozen_with_vpg(30, "web-archive").await;
    assert_eq!(vpg_status(&boston, &vpg).await, (Some(3), Some(0)));
    // 60 minutes in room for 90: a burst of 40 leaves 50 minutes, 83 %.
    t.control.journal_burst("web-archive", 40.0).await;
    assert_eq!(vpg_status(&boston, &vpg).await, (Some(2), Some(0)));
    let helps: Vec<String> = alerts_of(&boston, &vpg)
        .await
        .into_iter()
        .map(|a| a.0)
        .collect();
    assert!(helps.contains(&"VPG0003".to_owned()), "{helps:?}");
}

#[tokio::test]
async fn the_alerts_clear_and_the_status_returns_as_the_history_grows_back() {
    let (t, _, vpg) = frozen_with_vpg(30, "web-dr").await;
    t.control.journal_burst("web-dr", 85.0).await;
    // The journal stays full, holding 95 minutes, until the burst is the oldest thing in it ...
    let boston = later(&t, 95.0 * MINUTE).await;
    assert_eq!(history(&boston, &vpg).await["ActualHistoryInMinutes"], 95);
    assert_eq!(alerts_of(&boston, &vpg).await.len(), 2);
    // ... then the burst is promoted, the journal is no longer full, and what came after it grows.
    let boston = later(&t, 1.0).await;
    assert_eq!(
        alerts_of(&boston, &vpg).await,
        [alert("VPG0003", "Warning", "Vpg")]
    );
    // 85 % of 120 minutes is 102 minutes.
    let boston = later(&t, 7.0 * MINUTE).await;
    assert!(alerts_of(&boston, &vpg).await.is_empty());
    assert_eq!(
        vpg_status(&boston, &vpg).await,
        (Some(4), Some(0)),
        "103 of 120 minutes"
    );
    let boston = later(&t, 17.0 * MINUTE).await;
    assert_eq!(
        vpg_status(&boston, &vpg).await,
        (Some(4), Some(0)),
        "119 of 120 minutes"
    );
    let boston = later(&t, MINUTE).await;
    assert_eq!(vpg_status(&boston, &vpg).await, (Some(1), Some(0)));
    assert_eq!(history(&boston, &vpg).await["ActualHistoryInMinutes"], 120);

    let turned = alert_events(&boston, &vpg).await;
    let moments: Vec<(u64, &str)> = turned.iter().map(|(k, at, _)| (*k, at.as_str())).collect();
    assert_eq!(
        moments,
        [
            (47, "2026-01-01T00:00:00.000Z"),
            (47, "2026-01-01T00:00:00.000Z"),
            (48, "2026-01-01T01:35:00.001Z"),
            (48, "2026-01-01T01:42:00.001Z"),
        ],
        "{turned:?}"
    );
    assert!(turned[2].2.contains("VRA0039"), "{turned:?}");
    assert!(turned[3].2.contains("VPG0003"), "{turned:?}");
}

#[tokio::test]
async fn a_journal_still_filling_after_a_resync_raises_nothing_until_it_has_its_history() {
    let (t, _, vpg) = frozen_with_vpg(30, "web-dr").await;
    t.control.resync("web-dr", 60).await;
    let boston = later(&t, 60.0 + 60.0 * MINUTE).await;
    // An hour into its two hours, a burst larger than the room: the checkpoints before it go.
    t.control.journal_burst("web-dr", 200.0).await;
    let young = history(&boston, &vpg).await;
    assert_eq!(young["ActualHistoryInMinutes"], 0);
    assert_eq!(vpg_status(&boston, &vpg).await, (Some(1), Some(0)));
    assert!(
        alerts_of(&boston, &vpg).await.is_empty(),
        "a young journal is no shortfall"
    );
    let boston = later(&t, 60.0 * MINUTE - 1.0).await;
    assert!(alerts_of(&boston, &vpg).await.is_empty());
    // Once it has written for its 120 minutes, it holds only the hour after the burst: 50 %.
    let boston = later(&t, 1.0).await;
    assert_eq!(
        alerts_of(&boston, &vpg).await,
        [alert("VPG0004", "Error", "Vpg")]
    );
    assert_eq!(vpg_status(&boston, &vpg).await, (Some(4), Some(0)));
    let turned = alert_events(&boston, &vpg).await;
    let on: Vec<&str> = turned
        .iter()
        .filter(|(kind, _, text)| *kind == 47 && text.contains("VPG0004"))
        .map(|(_, at, _)| at.as_str())
        .collect();
    assert_eq!(on, ["2026-01-01T02:01:00.000Z"]);
}

#[tokio::test]
async fn a_world_file_limit_below_the_history_keeps_the_vpg_short_of_it_from_the_start() {
    let mut world = WorldSpec::default_world();
    world.journal_limits.insert("web-dr".to_owned(), 60);
    let t = spawn_with(Options {
        world,
        time_scale: 0.0,
        ..Options::for_tests(30)
    })
    .await;
    let (boston, vpg) = t.boston_with_vpg("web-dr").await;
    assert_eq!(history(&boston, &vpg).await["ActualHistoryInMinutes"], 60);
    assert_eq!(vpg_status(&boston, &vpg).await, (Some(4), Some(0)));
    let alerts = boston
        .get_ok(&format!("/v1/alerts?vpgIdentifier={vpg}"))
        .await;
    assert_eq!(texts(&alerts, "HelpIdentifier"), ["VPG0004", "VRA0039"]);
    assert_eq!(texts(&alerts, "TurnedOn"), ["2026-01-01T00:00:00.000Z"; 2]);
    let journal = t.control.journal("web-dr").await;
    assert_eq!(journal["LimitInMinutes"], 60);
    assert_eq!(journal["Full"], true);
}

#[tokio::test]
async fn a_journal_limit_naming_no_vpg_or_out_of_range_is_refused() {
    for (name, minutes) in [("no-such-vpg", 60), ("web-dr", 0), ("web-dr", 500_000)] {
        let mut world = WorldSpec::default_world();
        world.journal_limits.insert(name.to_owned(), minutes);
        let error = zvm_sim::start(Options {
            world,
            ..Options::for_tests(30)
        })
        .await
        .expect_err("refused");
        let message = error.to_string();
        assert!(
            message.contains("journal_limits") && message.contains(name),
            "{message}"
        );
    }
}

#[tokio::test]
async fn a_status_change_that_stops_writing_turns_the_history_alerts_off() {
    let (t, boston, vpg) = frozen_with_vpg(30, "web-dr").await;
    t.control.journal_burst("web-dr", 85.0).await;
    assert_eq!(alerts_of(&boston, &vpg).await.len(), 2);
    t.control
        .pin_status("web-dr", json!("NotMeetingSLA"), json!("BitmapSync"))
        .await;
    assert!(alerts_of(&boston, &vpg).await.is_empty());
    let turned = alert_events(&boston, &vpg).await;
    assert_eq!(turned.iter().filter(|e| e.0 == 48).count(), 2);
}

#[tokio::test]
async fn a_burst_is_refused_for_a_vpg_that_writes_no_checkpoints_or_without_minutes() {
    let (t, _boston, _vpg) = frozen_with_vpg(30, "files-dr").await;
    let answer = t
        .control
        .try_post("vpgs/files-dr/journal-burst", json!({"Minutes": 30}))
        .await;
    expect_refused(answer, StatusCode::CONFLICT, &["files-dr", "DeltaSync"]);
    for body in [
        json!({}),
        json!({"Minutes": 0}),
        json!({"Minutes": -5}),
        json!({"Minutes": 1e12}),
    ] {
        let answer = t.control.try_post("vpgs/web-dr/journal-burst", body).await;
        expect_refused(answer, StatusCode::BAD_REQUEST, &["Minutes"]);
    }
    let answer = t
        .control
        .try_post("vpgs/no-such-vpg/journal-burst", json!({"Minutes": 30}))
        .await;
    expect_refused(answer, StatusCode::NOT_FOUND, &["no-such-vpg"]);
}
