//! Bounded recover against the in-process simulator: the whole loop (guard, change a guest file,
//! recover it from the tag), remote FLR and its refusal, the Operator's 403, paths that would leave
//! the destination, the unmount that always follows, failover test and clone, and the proof from the
//! call log that Failover and Move are never called. The kit the tests share is in `scene.rs`.

use rewind_core::audit_journal::{JournalFilter, JournalVerdict, RecordKind};
use rewind_core::{
    CloneAction, ErrorKind, FailoverTestAction, NoProgress, RecoverFileReport, RecoveryNote,
    RecoveryRefusal, RecoveryVerdict, RewindError,
};

use crate::common::{Sites, TestEnv, guarded, journal_records};

mod diff;
mod scene;

use scene::{
    APP_CONF, DOWNLOADS, Scene, answered, assert_completed, assert_noted, fault_once, files_under,
    flr_calls, is_mount, newest_unmount_state, recover_file, recoveries_of, refusal, request,
    sha256, started, unmounted_after, unmounts, wait_until,
};

#[tokio::test]
async fn the_whole_loop_recovers_the_original_file_while_the_guest_keeps_the_new_one() {
    let scene = Scene::guarded(101, "web-01", "chg-loop").await;
    let changed = b"listen = 0.0.0.0:9999\n# changed by the agent\n";
    let original = scene.replace_guest_file(APP_CONF, changed).await;

    let report = scene.recover(&[APP_CONF]).await.unwrap();

    let written = scene.out.join(APP_CONF);
    assert_eq!(std::fs::read(&written).unwrap(), original);
    assert_eq!(scene.guest_file(APP_CONF).await, changed);
    assert_ne!(original.as_slice(), changed.as_slice());
    assert_eq!(report.files.len(), 1);
    let file = &report.files[0];
    assert_eq!(file.guest_path, APP_CONF);
    assert_eq!(file.size, original.len() as u64);
    assert_eq!(file.sha256, sha256(&original));
    assert_eq!(file.path, written.canonicalize().unwrap());
    assert_eq!(
        report.from.vpg_name,
        "web-local",
        "the locally replicated VPG is used first: {}",
        report.summary()
    );
    assert_eq!(report.site, "boston");
    assert_eq!(report.change_id, "chg-loop");
    assert!(report.unmount.unmounted, "{}", report.summary());
    let mount = report.mount.as_ref().expect("the mount task was found");
    assert_eq!(mount.task_type, "FlrJournalMount");
    assert_eq!(mount.state.as_ref().map(|s| s.code), Some(6));

    let unmounts = unmounts(&scene.env).await;
    assert!(unmounts.contains(&200), "{unmounts:?}");
    let recovery = recoveries_of(&scene.env, "chg-loop");
    assert_eq!(recovery.len(), 1, "one record per recovery");
    assert_eq!(recovery[0].verdict, JournalVerdict::Recovered);
    assert_eq!(recovery[0].vpgs[0].vpg_name, "web-local");
    assert_eq!(
        recovery[0].vpgs[0].checkpoint_id.as_deref(),
        Some(report.from.checkpoint_id.as_str())
    );
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["files"][0]["sha256"], sha256(&original));
    assert_eq!(json["unmount"]["unmounted"], true);
    assert!(report.summary().contains(APP_CONF));
}

#[tokio::test]
async fn an_exact_tag_works_as_well_as_the_change_id() {
    let scene = Scene::guarded(102, "web-01", "chg-tag").await;
    let rewind = &scene.env.rewind;
    let tags = rewind.list_tags("web-01", Some("chg-tag")).await.unwrap();
    let local = tags
        .vpgs
        .iter()
        .find(|v| v.vpg_name == "web-local")
        .unwrap();
    let tag = local.tags[0].tag.clone();
    let by_tag = request("web-01", &tag, &["sda1/etc/hostname"], &scene.out);
    let report = recover_file(rewind, by_tag).await.unwrap();
    assert_eq!(report.from.tag, tag);
    assert_eq!(
        scene.recovered("sda1/etc/hostname"),
        scene.guest_file("sda1/etc/hostname").await
    );
}

#[tokio::test]
async fn remote_flr_of_db_01_runs_at_denver_when_both_sites_are_configured() {
    let env = TestEnv::start_with(zvm_sim::Options::for_tests(103), Sites::Both).await;
    let scene = Scene::guarded_in(env, "db-01", "chg-remote").await;
    let original = scene.replace_guest_file(APP_CONF, b"broken\n").await;

    let report = scene.recover(&[APP_CONF]).await.unwrap();

    assert_eq!(scene.recovered(APP_CONF), original);
    assert_eq!(report.from.vpg_name, "web-dr");
    assert_eq!(report.site, "denver");
    let flr_calls = scene.env.control.calls_to("/v1/flrs").await;
    assert!(!flr_calls.is_empty());
    assert!(
        flr_calls.iter().all(|(site, ..)| site == "Denver"),
        "FLR runs at the recovery site only: {flr_calls:?}"
    );
}

#[tokio::test]
async fn remote_flr_is_refused_before_anything_is_sent_in_one_line_with_the_sites_table_as_a_hint()
{
    let scene = Scene::guarded(104, "db-01", "chg-refused").await;
    let err = scene.recover(&[APP_CONF]).await.unwrap_err();
    assert!(
        matches!(err, RewindError::RecoverySiteNotConfigured { .. }),
        "{err:?}"
    );
    assert_eq!(err.kind(), ErrorKind::Refused);
    let message = err.to_string();
    assert!(message.contains("Denver"), "{message}");
    assert!(message.contains("[sites.denver]"), "{message}");
    assert!(
        !message.contains('\n'),
        "the message is one line: {message}"
    );
    let report = err.report();
    assert_eq!(report.message, message);
    let hint = report
        .hint
        .expect("the configuration block comes as a hint");
    assert!(
        hint.starts_with("[sites.denver]\n") && hint.contains("client_secret"),
        "{hint}"
    );
    assert_eq!(err.hint(), Some(hint));
    assert!(scene.env.control.calls_to("/v1/flrs").await.is_empty());
    assert!(
        !scene.out.exists(),
        "a refusal leaves nothing behind, not even the folder"
    );
    assert!(
        journal_records(&scene.env.rewind)
            .iter()
            .all(|r| r.kind == RecordKind::Guard),
        "a refusal before anything was sent is no recovery to journal"
    );
}

#[tokio::test]
async fn the_operator_is_refused_flr_with_the_rbac_defect_and_the_administrator_workaround() {
    let scene = Scene::guarded(105, "web-01", "chg-operator").await;
    let operator = scene.env.rewind_as_user("operator", "operator");
    let err = recover_file(&operator, scene.request(&[APP_CONF]))
        .await
        .unwrap_err();
    assert!(matches!(err, RewindError::FlrForbidden { .. }), "{err:?}");
    assert_eq!(err.kind(), ErrorKind::Refused);
    let message = err.to_string();
    assert!(message.contains("RBAC defect"), "{message}");
    assert!(message.contains("Operator"), "{message}");
    assert!(message.contains("Administrator"), "{message}");
    assert!(
        !message.contains("((") && !message.contains("))"),
        "no nested brackets: {message}"
    );
    assert!(
        message.contains("\"operator\""),
        "names the user: {message}"
    );
    assert!(!message.contains("operator\" with password"), "{message}");
    assert!(files_under(&scene.out).is_empty());
}

#[tokio::test]
async fn paths_that_would_leave_the_destination_are_refused_before_anything_is_sent() {
    let scene = Scene::guarded(106, "web-01", "chg-escape").await;
    // The folder to recover into is one level down here, so that nothing may appear beside it.
    let base = scene.env.dir.path().join("escape");
    let scene = Scene {
        out: base.join("dest"),
        ..scene
    };
    for bad in [
        "sda1/../../../escaped.txt",
        "/etc/passwd",
        "sda1/etc/../../escaped.txt",
        r"sda1\..\escaped.txt",
        "sda1//etc/hosts",
    ] {
        let err = scene.recover(&[bad]).await.unwrap_err();
        assert!(
            matches!(err, RewindError::UnsafePath { .. }),
            "{bad}: {err:?}"
        );
        assert_eq!(err.kind(), ErrorKind::Usage);
    }
    // A symbolic link inside the destination is never written through, even to a file that exists
    // at the checkpoint.
    #[cfg(unix)]
    {
        let outside = base.join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::create_dir_all(&scene.out).unwrap();
        std::os::unix::fs::symlink(&outside, scene.out.join("sda1")).unwrap();
        let err = scene.recover(&[APP_CONF]).await.unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert!(files_under(&outside).is_empty());
    }
    assert!(files_under(&base).is_empty(), "{:?}", files_under(&base));
    assert!(
        scene.env.control.calls_to("/v1/flrs").await.is_empty(),
        "refused before anything was sent"
    );
}

#[tokio::test]
async fn an_existing_file_is_kept_unless_overwrite_is_asked_for() {
    let scene = Scene::guarded(107, "web-01", "chg-exists").await;
    std::fs::create_dir_all(scene.out.join("sda1/etc")).unwrap();
    std::fs::write(scene.out.join("sda1/etc/hosts"), "mine").unwrap();
    let err = scene.recover(&["sda1/etc/hosts"]).await.unwrap_err();
    assert!(
        err.to_string().contains("overwriting was not asked for"),
        "{err}"
    );
    assert_eq!(scene.recovered("sda1/etc/hosts"), b"mine");

    let mut overwrite = scene.request(&["sda1/etc/hosts"]);
    overwrite.overwrite = true;
    let report = recover_file(&scene.env.rewind, overwrite).await.unwrap();
    assert!(report.files[0].replaced);
    assert_eq!(
        scene.recovered("sda1/etc/hosts"),
        scene.guest_file("sda1/etc/hosts").await
    );
}

#[tokio::test]
async fn a_missing_path_lists_what_the_nearest_folder_holds_and_the_session_is_still_unmounted() {
    let scene = Scene::guarded(108, "web-01", "chg-missing").await;
    let err = scene
        .recover(&["sda1/etc/app/nope/app.conf"])
        .await
        .unwrap_err();
    let RewindError::GuestPathNotFound { folder, holds, .. } = unmounted_after(&err) else {
        panic!("{err:?}");
    };
    assert_eq!(folder, "sda1/etc/app");
    assert!(holds.contains("app.conf"), "{holds}");
    assert_eq!(err.kind(), ErrorKind::Usage);
    let deletes = unmounts(&scene.env).await;
    assert_eq!(deletes.len(), 1, "{deletes:?}");
    let last = journal_records(&scene.env.rewind).pop().unwrap();
    assert_eq!(
        (last.kind, &last.verdict),
        (RecordKind::Recovery, &JournalVerdict::Failed)
    );

    let err = scene.recover(&["sdz9/etc/hosts"]).await.unwrap_err();
    let RewindError::GuestPathNotFound { folder, holds, .. } = err.root() else {
        panic!("{err:?}");
    };
    assert_eq!(folder, "the list of partitions");
    assert!(
        holds.contains("sda1/") && holds.contains("sdb1/"),
        "{holds}"
    );
}

#[tokio::test]
async fn a_folder_is_recovered_whole_from_its_archive() {
    let scene = Scene::guarded(109, "web-01", "chg-folder").await;
    let report = scene
        .recover(&["sda1/var/www/html/", "sda1/etc/hosts"])
        .await
        .unwrap();
    assert_eq!(
        files_under(&scene.out),
        vec![
            "sda1/etc/hosts",
            "sda1/var/www/html/health.json",
            "sda1/var/www/html/index.html"
        ]
    );
    for f in &report.files {
        let bytes = std::fs::read(&f.path).unwrap();
        assert_eq!(f.sha256, sha256(&bytes));
        assert_eq!(bytes, scene.guest_file(&f.guest_path).await);
    }
    assert_eq!(
        report
            .files
            .iter()
            .filter(|f| f.folder.as_deref() == Some("sda1/var/www/html"))
            .count(),
        2
    );
}

#[tokio::test]
async fn a_change_without_a_tag_is_refused_listing_the_tags_found() {
    let scene = Scene::guarded(110, "web-01", "chg-real").await;
    let typo = request("web-01", "chg-typo", &[APP_CONF], &scene.out);
    let err = recover_file(&scene.env.rewind, typo).await.unwrap_err();
    assert!(
        matches!(err, RewindError::NoTaggedCheckpoint { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("change=chg-real"), "{err}");
}

#[tokio::test]
async fn a_start_whose_outcome_is_unknown_says_it_may_have_begun_and_never_to_just_try_again() {
    let scene = Scene::guarded(122, "web-01", "chg-unknown").await;
    // A gateway's 502 says nothing about whether the start reached the ZVM.
    scene
        .env
        .control
        .fault(serde_json::json!({
            "Method": "POST", "Path": "/v1/vpgs/*/FailoverTest", "Action": "Respond",
            "Status": 502, "Count": 1
        }))
        .await;
    let err = scene
        .failover_test(FailoverTestAction::Start)
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("HTTP 502"), "{text}");
    assert!(
        text.contains("the failover test start may have begun")
            && text.contains("before asking again"),
        "{text}"
    );
    assert!(!text.contains("try again"), "{text}");
    // A lost answer says the same.
    fault_once(&scene.env, "POST", "/v1/vpgs/*/CloneStart", "LoseResponse").await;
    let err = scene.offsite_clone(CloneAction::Start).await.unwrap_err();
    assert!(
        err.to_string().contains("the clone start may have begun"),
        "{err}"
    );
}

#[tokio::test]
async fn a_failover_test_starts_at_the_tag_and_stops_with_its_result() {
    let scene = Scene::guarded(111, "web-01", "chg-test").await;
    let boston = scene.env.rewind.client("boston").unwrap().clone();

    let started = scene
        .failover_test(FailoverTestAction::Start)
        .await
        .unwrap();
    assert_completed(&started, "FailOverTest");
    assert_eq!(started.from.vpg_name, "web-local");
    let vpg = boston.vpg(&started.from.vpg_id).await.unwrap();
    assert!(vpg.running_failover_test().is_some(), "the test is running");
    let posted = scene.env.control.calls_to("/v1/vpgs/").await;
    assert!(
        posted
            .iter()
            .any(|(_, m, p, s)| m == "POST" && p.ends_with("/FailoverTest") && *s == 200),
        "{posted:?}"
    );

    let stopped = scene
        .failover_test(FailoverTestAction::Stop {
            success: true,
            summary: "app.conf came back as it was".into(),
        })
        .await
        .unwrap();
    assert_eq!(stopped.verdict, RecoveryVerdict::Completed);
    assert_eq!(stopped.task.task_type, "StopFailOverTest");
    assert_eq!(stopped.from.vpg_id, started.from.vpg_id);
    assert!(stopped.summary().contains("recorded as successful"));
    let vpg = boston.vpg(&started.from.vpg_id).await.unwrap();
    assert!(vpg.running_failover_test().is_none());
    assert!(vpg.last_test.is_some(), "LastTest records the test");

    let err = scene
        .failover_test(FailoverTestAction::Stop {
            success: true,
            summary: String::new(),
        })
        .await
        .unwrap_err();
    let reason = refusal(err);
    assert!(
        matches!(reason, RecoveryRefusal::NoFailoverTest { .. }),
        "{reason:?}"
    );

    let recoveries = recoveries_of(&scene.env, "chg-test");
    let actions: Vec<&str> = recoveries.iter().map(|r| r.action.as_str()).collect();
    assert_eq!(
        actions,
        vec!["failover_test start", "failover_test stop (success: true)"]
    );
}

#[tokio::test]
async fn a_clone_starts_at_the_tag_and_an_abort_stops_the_clone_in_progress() {
    let scene = Scene::guarded(112, "web-01", "chg-clone").await;

    let cloned = scene.offsite_clone(CloneAction::Start).await.unwrap();
    assert_completed(&cloned, "Clone");

    let err = scene.offsite_clone(CloneAction::Abort).await.unwrap_err();
    let reason = refusal(err);
    assert!(
        matches!(reason, RecoveryRefusal::NoClone { .. }),
        "{reason:?}"
    );

    // A clone long enough to be aborted while it runs.
    let rewind = scene.env.rewind.clone();
    let start = async move {
        rewind
            .offsite_clone("web-01", "chg-clone", CloneAction::Start, &NoProgress)
            .await
    };
    let (start, _) = started(&scene.env, "Clone", "the long clone starts", start).await;
    let aborted = scene.offsite_clone(CloneAction::Abort).await.unwrap();
    assert_eq!(
        aborted.verdict,
        RecoveryVerdict::Completed,
        "{}",
        aborted.summary()
    );
    assert_eq!(
        aborted.task.state.as_ref().map(|s| s.code),
        Some(5),
        "Stopped"
    );

    let started = start.await.unwrap().unwrap_err();
    assert_eq!(started.kind(), ErrorKind::TaskFailed, "{started}");
    let RewindError::TaskFailed { reason, state, .. } = &started else {
        panic!("{started:?}");
    };
    assert!(state.contains("Stopped"), "{state}");
    assert!(
        !reason.is_empty() && reason != "the ZVM gave no reason",
        "{reason}"
    );
    let recoveries = recoveries_of(&scene.env, "chg-clone");
    let verdicts: Vec<(&str, &JournalVerdict)> = recoveries
        .iter()
        .map(|r| (r.action.as_str(), &r.verdict))
        .collect();
    assert!(
        verdicts.contains(&("clone abort", &JournalVerdict::Completed)),
        "{verdicts:?}"
    );
    assert!(
        verdicts.contains(&("clone start", &JournalVerdict::Failed)),
        "{verdicts:?}"
    );
}

/// Whether a call is a Failover Live or a Move (or one of their commit and rollback steps): the last
/// segment of a VPG action's path, compared whole, so `FailoverTest` is not one.
fn is_failover_or_move(method: &str, path: &str) -> bool {
    let last = path.rsplit('/').next().unwrap_or_default().to_lowercase();
    method == "POST"
        && path.to_lowercase().starts_with("/v1/vpgs/")
        && [
            "failover",
            "failovercommit",
            "failoverrollback",
            "move",
            "movecommit",
            "moverollback",
        ]
        .contains(&last.as_str())
}

#[tokio::test]
async fn no_client_operation_ever_calls_failover_or_move() {
    let env = TestEnv::start_with(zvm_sim::Options::for_tests(113), Sites::Both).await;
    let rewind = &env.rewind;
    let _ = rewind.sites().await;
    rewind.find_protection("web-01").await.unwrap();
    guarded(rewind, "web-01", "chg-every").await;
    guarded(rewind, "db-01", "chg-every").await;
    rewind.list_tags("web-01", None).await.unwrap();
    let out = env.dir.path().join("every");
    let web = request("web-01", "chg-every", &[APP_CONF], &out);
    recover_file(rewind, web).await.unwrap();
    let db = request("db-01", "chg-every", &["sda1/etc/hosts"], &out);
    recover_file(rewind, db).await.unwrap();
    let missing = request("web-01", "chg-every", &["sda1/nope"], &out.join("x"));
    let _ = recover_file(rewind, missing).await;
    for vm in ["web-01", "db-01"] {
        rewind
            .failover_test(vm, "chg-every", FailoverTestAction::Start, &NoProgress)
            .await
            .unwrap();
        rewind
            .failover_test(
                vm,
                "chg-every",
                FailoverTestAction::Stop {
                    success: false,
                    summary: "seen".into(),
                },
                &NoProgress,
            )
            .await
            .unwrap();
        rewind
            .offsite_clone(vm, "chg-every", CloneAction::Start, &NoProgress)
            .await
            .unwrap();
        let _ = rewind
            .offsite_clone(vm, "chg-every", CloneAction::Abort, &NoProgress)
            .await;
    }
    journal_records(rewind);

    let calls = env.control.calls().await;
    let of = |c: &serde_json::Value| {
        (
            c["Method"].as_str().unwrap_or_default().to_string(),
            c["Path"].as_str().unwrap_or_default().to_string(),
        )
    };
    assert!(
        calls
            .iter()
            .map(of)
            .any(|(m, p)| m == "POST" && p.ends_with("/FailoverTest")),
        "the log holds the recoveries, so the check below looks at real VPG actions"
    );
    let forbidden: Vec<_> = calls
        .iter()
        .map(of)
        .filter(|(m, p)| is_failover_or_move(m, p))
        .collect();
    assert!(forbidden.is_empty(), "{forbidden:?}");

    // The check itself sees a Failover when one is made (by hand here, never by rewind).
    let vpg = env.vpg_id("web-local").await;
    let zvm = zvm_sim::test_kit::Site::service(&reqwest::Client::new(), &env.sim.local().url).await;
    zvm.post(&format!("/v1/vpgs/{vpg}/Failover"), &serde_json::json!({}))
        .await;
    let seen = env
        .control
        .calls()
        .await
        .iter()
        .map(of)
        .filter(|(m, p)| is_failover_or_move(m, p))
        .count();
    assert_eq!(seen, 1);
}

#[tokio::test]
async fn an_unmount_follows_a_failed_download_and_nothing_half_written_is_left() {
    let scene = Scene::guarded(114, "web-01", "chg-fault").await;
    let gone = answered("GET", DOWNLOADS, 500, "the journal volume went away");
    scene.env.control.fault(gone).await;
    let err = scene.recover(&[APP_CONF]).await.unwrap_err();
    let error = unmounted_after(&err);
    assert!(
        matches!(error, RewindError::Zvm { status: 500, .. }),
        "{error:?}"
    );
    let message = err.to_string();
    assert!(
        message.contains("the journal volume went away"),
        "{message}"
    );
    assert!(
        files_under(&scene.out).is_empty(),
        "{:?}",
        files_under(&scene.out)
    );

    let flr: Vec<(String, String, i64)> = scene
        .env
        .control
        .calls_to("/v1/flrs")
        .await
        .into_iter()
        .map(|(_, m, p, s)| (m, p, s))
        .collect();
    let failed = flr
        .iter()
        .position(|(m, p, s)| m == "GET" && p.contains("/downloads/") && *s == 500)
        .unwrap_or_else(|| panic!("{flr:?}"));
    let unmount = flr
        .iter()
        .position(|(m, _, s)| m == "DELETE" && *s == 200)
        .unwrap_or_else(|| panic!("{flr:?}"));
    assert!(
        unmount > failed,
        "the unmount follows the failed download: {flr:?}"
    );
    assert_eq!(
        newest_unmount_state(&scene.env).await,
        Some(6),
        "the unmount task Completed"
    );
}

/// web-01 guarded for `change` in a simulator of `seed`, then app.conf recovered through one
/// `[method, path, action]` fault: it must come back as it was, and its session unmounted.
async fn recovered_through(
    seed: u64,
    change: &'static str,
    [method, path, action]: [&str; 3],
) -> (Scene, RecoverFileReport) {
    let scene = Scene::guarded(seed, "web-01", change).await;
    let original = scene.guest_file(APP_CONF).await;
    fault_once(&scene.env, method, path, action).await;
    let report = scene.recover(&[APP_CONF]).await.unwrap();
    assert_eq!(scene.recovered(APP_CONF), original);
    assert!(report.unmount.unmounted);
    (scene, report)
}

#[tokio::test]
async fn a_download_whose_connection_drops_once_is_fetched_again() {
    recovered_through(115, "chg-drop", ["GET", DOWNLOADS, "LoseResponse"]).await;
}

#[tokio::test]
async fn a_download_cut_off_halfway_is_fetched_again_and_only_whole_bytes_are_written() {
    // The first download sends half the file, with the whole length announced, then drops.
    let (scene, report) =
        recovered_through(118, "chg-cut", ["GET", DOWNLOADS, "CutResponse"]).await;
    assert_eq!(
        files_under(&scene.out).len(),
        1,
        "{:?}",
        files_under(&scene.out)
    );
    assert_noted(
        &report,
        |n| matches!(n, RecoveryNote::DownloadCutOff { path, .. } if path.as_str() == APP_CONF),
    );
    let downloads = flr_calls(&scene.env, |m, p, _| {
        m == "GET" && p.contains("/downloads/")
    });
    assert_eq!(
        downloads.await,
        2,
        "the cut download and the one fetched again"
    );
}

#[tokio::test]
async fn a_file_on_the_second_page_of_a_large_folder_is_found_and_recovered() {
    let env = TestEnv::start(119).await;
    // 520 files: more than one page of a browse (500), so the last ones are on page 2.
    for i in 0..520 {
        let path = format!("sda1/var/spool/batch/job-{i:04}.json");
        env.control
            .put_file("web-01", &path, format!("{{\"job\": {i}}}").as_bytes())
            .await;
    }
    let last = "sda1/var/spool/batch/job-0519.json";
    let scene = Scene::guarded_in(env, "web-01", "chg-large").await;
    scene.replace_guest_file(last, b"{}").await;
    let report = scene.recover(&[last]).await.unwrap();
    assert_eq!(
        scene.recovered(last),
        b"{\"job\": 519}",
        "{}",
        report.summary()
    );
    let browses = flr_calls(&scene.env, |m, p, _| m == "POST" && p.ends_with("/browse")).await;
    assert_eq!(browses, 2, "the folder's two pages, read once each");
}

#[tokio::test]
async fn a_lost_mount_answer_is_reconciled_to_the_session_it_created_which_is_then_unmounted() {
    let fault = ["POST", "/v1/flrs", "LoseResponse"];
    let (scene, report) = recovered_through(116, "chg-lost", fault).await;
    assert_noted(&report, |n| matches!(n, RecoveryNote::MountFound { .. }));
    let mounts = flr_calls(&scene.env, |m, p, _| is_mount(m, p)).await;
    assert_eq!(mounts, 1, "the mount was never sent twice");
}

#[tokio::test]
async fn a_lost_mount_whose_sessions_cannot_be_read_says_the_mount_may_have_happened() {
    let scene = Scene::guarded(117, "web-01", "chg-lost-unread").await;
    // The mount is made and its answer never comes; from then on the sessions cannot be read.
    let lost = fault_once(&scene.env, "POST", "/v1/flrs", "WithholdResponse").await;
    let mut unread = answered(
        "GET",
        "/v1/flrs",
        500,
        "the FLR sessions cannot be read now",
    );
    unread["After"] = lost["Id"].clone();
    scene.env.control.fault(unread).await;
    let rewind = scene.env.rewind_with(|mut c| {
        c.http.request_timeout = std::time::Duration::from_millis(700);
        c
    });
    let err = recover_file(&rewind, scene.request(&[APP_CONF]))
        .await
        .unwrap_err();
    let text = err.to_string();
    // The mount happened at the ZVM: the error must say so and what to do, not only that the
    // sessions could not be read.
    let mounted = flr_calls(&scene.env, |m, p, s| is_mount(m, p) && s == 200).await;
    assert_eq!(mounted, 1, "{text}");
    assert!(text.contains("the mount may have happened"), "{text}");
    assert!(text.contains("unmount it"), "{text}");
    assert!(text.contains("HTTP 500"), "the reason is kept: {text}");
}

#[tokio::test]
async fn a_windows_guest_file_lands_under_its_drive_as_a_plain_folder() {
    let scene = Scene::guarded(117, "sql-01", "chg-win").await;
    let ini = "C:/ProgramData/App/app.ini";
    let original = scene.replace_guest_file(ini, b"[db]\nport=0\n").await;
    let report = scene
        .recover(&["c:/programdata/app/APP.INI"])
        .await
        .unwrap();
    assert_eq!(report.from.vpg_name, "sql-local");
    assert_eq!(
        scene.recovered("c/programdata/app/APP.INI"),
        original,
        "Windows paths are case-insensitive; the file keeps the name it was asked by"
    );
    assert_eq!(report.files[0].sha256, sha256(&original));
}

#[tokio::test]
async fn a_recovery_dropped_while_mounting_still_unmounts_its_session() {
    let scene = Scene::guarded(118, "web-01", "chg-drop-call").await;
    let (rewind, req) = (scene.env.rewind.clone(), scene.request(&[APP_CONF]));
    // A mount long enough to give up on while it runs (the call boxed, its future being large).
    let call = Box::pin(async move { recover_file(&rewind, req).await });
    let (call, deadline) = started(&scene.env, "FlrJournalMount", "the mount starts", call).await;
    call.abort();
    assert!(call.await.unwrap_err().is_cancelled());
    let env = &scene.env;
    wait_until(
        deadline,
        "the dropped recovery's session is unmounted",
        || async move { unmounts(env).await.contains(&200) },
    )
    .await;
}

#[tokio::test]
async fn every_result_of_the_loop_has_a_one_line_headline_naming_the_vm_and_what_happened() {
    let env = TestEnv::start(120).await;
    let one_line = |what: &str, line: &str| {
        assert!(
            !line.is_empty() && !line.contains('\n'),
            "{what}'s headline is one line: {line:?}"
        );
    };
    let found = env.rewind.find_protection("web-01").await.unwrap();
    one_line("protection", &found.headline());
    assert!(
        found.headline().starts_with("web-01 (") && found.headline().contains("3 VPG(s)"),
        "{}",
        found.headline()
    );
    assert!(found.summary().starts_with(&found.headline()));

    guarded(&env.rewind, "web-01", "chg-head").await;
    let journal = env
        .rewind
        .journal()
        .read(&JournalFilter::default())
        .unwrap();
    one_line("journal", &journal.headline());
    assert!(journal.headline().starts_with("1 journal record(s) from "));

    let tags = env
        .rewind
        .list_tags("web-01", Some("chg-head"))
        .await
        .unwrap();
    one_line("tags", &tags.headline());
    assert!(
        tags.headline()
            .contains("3 tagged checkpoint(s) of change chg-head in 3 of 3 VPG(s)"),
        "{}",
        tags.headline()
    );

    let out = env.dir.path().join("head");
    let head = request("web-01", "chg-head", &[APP_CONF], &out);
    let file = recover_file(&env.rewind, head).await.unwrap();
    one_line("file recovery", &file.headline());
    assert!(
        file.headline().starts_with("RECOVERED 1 file(s) of web-01")
            && file.headline().contains("from VPG web-local"),
        "{}",
        file.headline()
    );

    let test = env
        .rewind
        .failover_test("web-01", "chg-head", FailoverTestAction::Start, &NoProgress)
        .await
        .unwrap();
    one_line("failover test", &test.headline());
    assert!(
        test.headline()
            .starts_with("COMPLETED: failover test start of web-01")
            && test.headline().contains(&test.task.task_id),
        "{}",
        test.headline()
    );

    let catalog = env.rewind.catalog();
    one_line("catalog", &catalog.list().unwrap().headline());
    let c = catalog.classify("claude-code", "Read", None).unwrap();
    assert_eq!(c.headline(), "claude-code/Read: read-only (built in)");
    for site in env.rewind.sites().await {
        one_line("site", &site.headline());
    }
}

#[tokio::test]
async fn a_recovery_task_is_waited_for_as_long_as_the_recover_section_says_and_reported_still_running()
 {
    let scene = Scene::guarded(121, "web-01", "chg-wait").await;
    // A failover test that would take a minute, and a configuration that waits one second for it.
    let impatient = scene.impatient().await;
    // The task takes a minute: had the default ten minutes been waited, it would have Completed.
    let report = impatient
        .failover_test("web-01", "chg-wait", FailoverTestAction::Start, &NoProgress)
        .await
        .unwrap();
    assert_eq!(
        report.verdict,
        RecoveryVerdict::StillRunning,
        "{}",
        report.summary()
    );
}

#[tokio::test]
async fn an_flr_mount_still_running_when_waiting_stops_is_a_still_running_error_naming_its_task() {
    let scene = Scene::guarded(122, "web-01", "chg-slow-mount").await;
    // A mount that would take a minute, and a configuration that waits one second for it.
    let impatient = scene.impatient().await;
    let dir = tempfile::tempdir().unwrap();
    let scene = Scene {
        out: dir.path().to_path_buf(),
        ..scene
    };
    let err = recover_file(&impatient, scene.request(&[APP_CONF]))
        .await
        .expect_err("the mount did not finish in time");
    let mount = scene
        .env
        .control
        .tasks()
        .await
        .into_iter()
        .find(|t| t["Type"] == "FlrJournalMount")
        .expect("the simulator ran the mount");
    let mount_id = mount["TaskIdentifier"].as_str().unwrap().to_string();
    // Neither failed nor refused: still running, named by its id, so it can be followed.
    assert_eq!(err.kind(), ErrorKind::StillRunning, "{err}");
    assert!(
        matches!(err.root(), RewindError::StillRunning { task_id, .. } if *task_id == mount_id),
        "{err:?}"
    );
    assert!(err.to_string().contains(&mount_id), "{err}");
    // The session was still sent its unmount (DELETE /v1/flrs/{id}).
    let unmounts = unmounts(&scene.env).await;
    assert!(!unmounts.is_empty(), "{unmounts:?}");
    assert!(files_under(dir.path()).is_empty());
}
