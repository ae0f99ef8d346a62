//! Bounded recover against the in-process simulator: the whole loop (guard, change a guest file,
//! recover it from the tag), remote FLR and its refusal, the Operator's 403, paths that would leave
//! the destination, the unmount that always follows, failover test and clone, and the proof from the
//! call log that Failover and Move are never called.

use std::path::Path;

use rewind_core::audit_journal::{JournalFilter, JournalVerdict, RecordKind};
use rewind_core::{
    CloneAction, ErrorKind, FailoverTestAction, NoProgress, RecoverFileRequest, RecoveryNote,
    RecoveryRefusal, RecoveryVerdict, Rewind, RewindError, SiteConfig,
};
use sha2::{Digest, Sha256};

use crate::common::{Sites, TestEnv, guarded};

mod diff;

const APP_CONF: &str = "sda1/etc/app/app.conf";

fn request(vm: &str, change: &str, paths: &[&str], destination: &Path) -> RecoverFileRequest {
    RecoverFileRequest {
        vm: vm.into(),
        change: change.into(),
        paths: paths.iter().map(|p| p.to_string()).collect(),
        destination: destination.to_path_buf(),
        overwrite: false,
        plan: None,
    }
}

fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Every file under `dir`, relative, sorted.
fn files_under(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.push(p.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

#[tokio::test]
async fn the_whole_loop_recovers_the_original_file_while_the_guest_keeps_the_new_one() {
    let env = TestEnv::start(101).await;
    let original = env.control.file("web-01", APP_CONF).await;
    guarded(&env.rewind, "web-01", "chg-loop").await;
    let changed = b"listen = 0.0.0.0:9999\n# changed by the agent\n";
    env.control.put_file("web-01", APP_CONF, changed).await;

    let out = env.dir.path().join("recovered");
    let report = env
        .rewind
        .recover_file(
            request("web-01", "chg-loop", &[APP_CONF], &out),
            &NoProgress,
        )
        .await
        .unwrap();

    let written = out.join(APP_CONF);
    assert_eq!(std::fs::read(&written).unwrap(), original);
    assert_eq!(env.control.file("web-01", APP_CONF).await, changed);
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

    let unmounts = env.control.calls_to("/v1/flrs/").await;
    assert!(
        unmounts
            .iter()
            .any(|(_, m, _, s)| m == "DELETE" && *s == 200),
        "{unmounts:?}"
    );
    let journal = env
        .rewind
        .journal()
        .read(&JournalFilter {
            change_id: Some("chg-loop".into()),
            ..Default::default()
        })
        .unwrap();
    let recovery: Vec<_> = journal
        .records
        .iter()
        .filter(|r| r.kind == RecordKind::Recovery)
        .collect();
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
    let env = TestEnv::start(102).await;
    guarded(&env.rewind, "web-01", "chg-tag").await;
    let tags = env
        .rewind
        .list_tags("web-01", Some("chg-tag"))
        .await
        .unwrap();
    let local = tags
        .vpgs
        .iter()
        .find(|v| v.vpg_name == "web-local")
        .unwrap();
    let tag = local.tags[0].tag.clone();
    let out = env.dir.path().join("by-tag");
    let report = env
        .rewind
        .recover_file(
            request("web-01", &tag, &["sda1/etc/hostname"], &out),
            &NoProgress,
        )
        .await
        .unwrap();
    assert_eq!(report.from.tag, tag);
    assert_eq!(
        std::fs::read(out.join("sda1/etc/hostname")).unwrap(),
        env.control.file("web-01", "sda1/etc/hostname").await
    );
}

#[tokio::test]
async fn remote_flr_of_db_01_runs_at_denver_when_both_sites_are_configured() {
    let env = TestEnv::start_with(zvm_sim::Options::for_tests(103), Sites::Both).await;
    let original = env.control.file("db-01", APP_CONF).await;
    guarded(&env.rewind, "db-01", "chg-remote").await;
    env.control.put_file("db-01", APP_CONF, b"broken\n").await;
    env.control.clear_calls().await;

    let out = env.dir.path().join("remote");
    let report = env
        .rewind
        .recover_file(
            request("db-01", "chg-remote", &[APP_CONF], &out),
            &NoProgress,
        )
        .await
        .unwrap();

    assert_eq!(std::fs::read(out.join(APP_CONF)).unwrap(), original);
    assert_eq!(report.from.vpg_name, "web-dr");
    assert_eq!(report.site, "denver");
    let flr_calls = env.control.calls_to("/v1/flrs").await;
    assert!(!flr_calls.is_empty());
    assert!(
        flr_calls.iter().all(|(site, ..)| site == "Denver"),
        "FLR runs at the recovery site only: {flr_calls:?}"
    );
}

#[tokio::test]
async fn remote_flr_is_refused_before_anything_is_sent_in_one_line_with_the_sites_table_as_a_hint()
{
    let env = TestEnv::start(104).await;
    guarded(&env.rewind, "db-01", "chg-refused").await;
    env.control.clear_calls().await;
    let out = env.dir.path().join("refused");
    let err = env
        .rewind
        .recover_file(
            request("db-01", "chg-refused", &[APP_CONF], &out),
            &NoProgress,
        )
        .await
        .unwrap_err();
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
    assert!(env.control.calls_to("/v1/flrs").await.is_empty());
    assert!(
        !out.exists(),
        "a refusal leaves nothing behind, not even the folder"
    );
    let journal = env
        .rewind
        .journal()
        .read(&JournalFilter::default())
        .unwrap();
    assert!(
        journal.records.iter().all(|r| r.kind == RecordKind::Guard),
        "a refusal before anything was sent is no recovery to journal"
    );
}

#[tokio::test]
async fn the_operator_is_refused_flr_with_the_rbac_defect_and_the_administrator_workaround() {
    let env = TestEnv::start(105).await;
    guarded(&env.rewind, "web-01", "chg-operator").await;
    let operator: Rewind = env.rewind_with(|mut c| {
        c.sites[0] =
            SiteConfig::with_password("boston", &env.sim.local().url, "operator", "operator")
                .unwrap();
        c
    });
    let out = env.dir.path().join("operator");
    let err = operator
        .recover_file(
            request("web-01", "chg-operator", &[APP_CONF], &out),
            &NoProgress,
        )
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
    assert!(files_under(&out).is_empty());
}

#[tokio::test]
async fn paths_that_would_leave_the_destination_are_refused_before_anything_is_sent() {
    let env = TestEnv::start(106).await;
    guarded(&env.rewind, "web-01", "chg-escape").await;
    env.control.clear_calls().await;
    let base = env.dir.path().join("escape");
    let out = base.join("dest");
    for bad in [
        "sda1/../../../escaped.txt",
        "/etc/passwd",
        "sda1/etc/../../escaped.txt",
        r"sda1\..\escaped.txt",
        "sda1//etc/hosts",
    ] {
        let err = env
            .rewind
            .recover_file(request("web-01", "chg-escape", &[bad], &out), &NoProgress)
            .await
            .unwrap_err();
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
        std::fs::create_dir_all(&out).unwrap();
        std::os::unix::fs::symlink(&outside, out.join("sda1")).unwrap();
        let err = env
            .rewind
            .recover_file(
                request("web-01", "chg-escape", &[APP_CONF], &out),
                &NoProgress,
            )
            .await
            .unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert!(files_under(&outside).is_empty());
    }
    assert!(files_under(&base).is_empty(), "{:?}", files_under(&base));
    assert!(
        env.control.calls_to("/v1/flrs").await.is_empty(),
        "refused before anything was sent"
    );
}

#[tokio::test]
async fn an_existing_file_is_kept_unless_overwrite_is_asked_for() {
    let env = TestEnv::start(107).await;
    guarded(&env.rewind, "web-01", "chg-exists").await;
    let out = env.dir.path().join("exists");
    std::fs::create_dir_all(out.join("sda1/etc")).unwrap();
    std::fs::write(out.join("sda1/etc/hosts"), "mine").unwrap();
    let err = env
        .rewind
        .recover_file(
            request("web-01", "chg-exists", &["sda1/etc/hosts"], &out),
            &NoProgress,
        )
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("overwriting was not asked for"),
        "{err}"
    );
    assert_eq!(std::fs::read(out.join("sda1/etc/hosts")).unwrap(), b"mine");

    let mut overwrite = request("web-01", "chg-exists", &["sda1/etc/hosts"], &out);
    overwrite.overwrite = true;
    let report = env
        .rewind
        .recover_file(overwrite, &NoProgress)
        .await
        .unwrap();
    assert!(report.files[0].replaced);
    assert_eq!(
        std::fs::read(out.join("sda1/etc/hosts")).unwrap(),
        env.control.file("web-01", "sda1/etc/hosts").await
    );
}

#[tokio::test]
async fn a_missing_path_lists_what_the_nearest_folder_holds_and_the_session_is_still_unmounted() {
    let env = TestEnv::start(108).await;
    guarded(&env.rewind, "web-01", "chg-missing").await;
    env.control.clear_calls().await;
    let out = env.dir.path().join("missing");
    let err = env
        .rewind
        .recover_file(
            request(
                "web-01",
                "chg-missing",
                &["sda1/etc/app/nope/app.conf"],
                &out,
            ),
            &NoProgress,
        )
        .await
        .unwrap_err();
    let RewindError::FlrAborted {
        error, unmounted, ..
    } = &err
    else {
        panic!("{err:?}");
    };
    assert!(*unmounted, "{err}");
    let RewindError::GuestPathNotFound { folder, holds, .. } = error.as_ref() else {
        panic!("{error:?}");
    };
    assert_eq!(folder, "sda1/etc/app");
    assert!(holds.contains("app.conf"), "{holds}");
    assert_eq!(err.kind(), ErrorKind::Usage);
    assert!(err.to_string().contains("was unmounted"), "{err}");
    let deletes: Vec<_> = env
        .control
        .calls_to("/v1/flrs/")
        .await
        .into_iter()
        .filter(|(_, m, ..)| m == "DELETE")
        .collect();
    assert_eq!(deletes.len(), 1, "{deletes:?}");
    let journal = env
        .rewind
        .journal()
        .read(&JournalFilter::default())
        .unwrap();
    let last = journal.records.last().unwrap();
    assert_eq!(
        (last.kind, &last.verdict),
        (RecordKind::Recovery, &JournalVerdict::Failed)
    );

    let err = env
        .rewind
        .recover_file(
            request("web-01", "chg-missing", &["sdz9/etc/hosts"], &out),
            &NoProgress,
        )
        .await
        .unwrap_err();
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
    let env = TestEnv::start(109).await;
    guarded(&env.rewind, "web-01", "chg-folder").await;
    let out = env.dir.path().join("folder");
    let report = env
        .rewind
        .recover_file(
            request(
                "web-01",
                "chg-folder",
                &["sda1/var/www/html/", "sda1/etc/hosts"],
                &out,
            ),
            &NoProgress,
        )
        .await
        .unwrap();
    assert_eq!(
        files_under(&out),
        vec![
            "sda1/etc/hosts",
            "sda1/var/www/html/health.json",
            "sda1/var/www/html/index.html"
        ]
    );
    for f in &report.files {
        let bytes = std::fs::read(&f.path).unwrap();
        assert_eq!(f.sha256, sha256(&bytes));
        assert_eq!(bytes, env.control.file("web-01", &f.guest_path).await);
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
    let env = TestEnv::start(110).await;
    guarded(&env.rewind, "web-01", "chg-real").await;
    let out = env.dir.path().join("none");
    let err = env
        .rewind
        .recover_file(
            request("web-01", "chg-typo", &[APP_CONF], &out),
            &NoProgress,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, RewindError::NoTaggedCheckpoint { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("change=chg-real"), "{err}");
}

/// How many tasks of `kind` are in progress at either site.
async fn running_tasks(env: &TestEnv, kind: &str) -> usize {
    env.control
        .tasks()
        .await
        .iter()
        .filter(|t| t["Type"] == kind && crate::common::state_of(t) == 1)
        .count()
}

#[tokio::test]
async fn a_start_whose_outcome_is_unknown_says_it_may_have_begun_and_never_to_just_try_again() {
    let env = TestEnv::start(122).await;
    guarded(&env.rewind, "web-01", "chg-unknown").await;
    // A gateway's 502 says nothing about whether the start reached the ZVM.
    env.control
        .fault(serde_json::json!({
            "Method": "POST", "Path": "/v1/vpgs/*/FailoverTest", "Action": "Respond",
            "Status": 502, "Count": 1
        }))
        .await;
    let err = env
        .rewind
        .failover_test(
            "web-01",
            "chg-unknown",
            FailoverTestAction::Start,
            &NoProgress,
        )
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
    env.control
        .fault(serde_json::json!({
            "Method": "POST", "Path": "/v1/vpgs/*/CloneStart", "Action": "LoseResponse",
            "Count": 1
        }))
        .await;
    let err = env
        .rewind
        .offsite_clone("web-01", "chg-unknown", CloneAction::Start, &NoProgress)
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("the clone start may have begun"),
        "{err}"
    );
}

#[tokio::test]
async fn a_failover_test_starts_at_the_tag_and_stops_with_its_result() {
    let env = TestEnv::start(111).await;
    guarded(&env.rewind, "web-01", "chg-test").await;
    let boston = env.rewind.client("boston").unwrap().clone();

    let started = env
        .rewind
        .failover_test("web-01", "chg-test", FailoverTestAction::Start, &NoProgress)
        .await
        .unwrap();
    assert_eq!(
        started.verdict,
        RecoveryVerdict::Completed,
        "{}",
        started.summary()
    );
    assert_eq!(started.task.task_type, "FailOverTest");
    assert_eq!(started.task.state.as_ref().map(|s| s.code), Some(6));
    assert_eq!(started.from.vpg_name, "web-local");
    let vpg = boston.vpg(&started.from.vpg_id).await.unwrap();
    assert!(vpg.running_failover_test().is_some(), "the test is running");
    let posted = env.control.calls_to("/v1/vpgs/").await;
    assert!(
        posted
            .iter()
            .any(|(_, m, p, s)| m == "POST" && p.ends_with("/FailoverTest") && *s == 200),
        "{posted:?}"
    );

    let stopped = env
        .rewind
        .failover_test(
            "web-01",
            "chg-test",
            FailoverTestAction::Stop {
                success: true,
                summary: "app.conf came back as it was".into(),
            },
            &NoProgress,
        )
        .await
        .unwrap();
    assert_eq!(stopped.verdict, RecoveryVerdict::Completed);
    assert_eq!(stopped.task.task_type, "StopFailOverTest");
    assert_eq!(stopped.from.vpg_id, started.from.vpg_id);
    assert!(stopped.summary().contains("recorded as successful"));
    let vpg = boston.vpg(&started.from.vpg_id).await.unwrap();
    assert!(vpg.running_failover_test().is_none());
    assert!(vpg.last_test.is_some(), "LastTest records the test");

    let err = env
        .rewind
        .failover_test(
            "web-01",
            "chg-test",
            FailoverTestAction::Stop {
                success: true,
                summary: String::new(),
            },
            &NoProgress,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            RewindError::NotPossible {
                reason: RecoveryRefusal::NoFailoverTest { .. }
            }
        ),
        "{err:?}"
    );

    let journal = env
        .rewind
        .journal()
        .read(&JournalFilter {
            change_id: Some("chg-test".into()),
            ..Default::default()
        })
        .unwrap();
    let actions: Vec<&str> = journal
        .records
        .iter()
        .filter(|r| r.kind == RecordKind::Recovery)
        .map(|r| r.action.as_str())
        .collect();
    assert_eq!(
        actions,
        vec!["failover_test start", "failover_test stop (success: true)"]
    );
}

#[tokio::test]
async fn a_clone_starts_at_the_tag_and_an_abort_stops_the_clone_in_progress() {
    let env = TestEnv::start(112).await;
    guarded(&env.rewind, "web-01", "chg-clone").await;

    let cloned = env
        .rewind
        .offsite_clone("web-01", "chg-clone", CloneAction::Start, &NoProgress)
        .await
        .unwrap();
    assert_eq!(
        cloned.verdict,
        RecoveryVerdict::Completed,
        "{}",
        cloned.summary()
    );
    assert_eq!(cloned.task.task_type, "Clone");
    assert_eq!(cloned.task.state.as_ref().map(|s| s.code), Some(6));

    let err = env
        .rewind
        .offsite_clone("web-01", "chg-clone", CloneAction::Abort, &NoProgress)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            RewindError::NotPossible {
                reason: RecoveryRefusal::NoClone { .. }
            }
        ),
        "{err:?}"
    );

    // A clone long enough to be aborted while it runs.
    env.control.timing(60_000, 20).await;
    let rewind = env.rewind.clone();
    let start = tokio::spawn(async move {
        rewind
            .offsite_clone("web-01", "chg-clone", CloneAction::Start, &NoProgress)
            .await
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while running_tasks(&env, "Clone").await == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the long clone starts"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let aborted = env
        .rewind
        .offsite_clone("web-01", "chg-clone", CloneAction::Abort, &NoProgress)
        .await
        .unwrap();
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
    let journal = env
        .rewind
        .journal()
        .read(&JournalFilter::default())
        .unwrap();
    let verdicts: Vec<(&str, &JournalVerdict)> = journal
        .records
        .iter()
        .filter(|r| r.kind == RecordKind::Recovery)
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
    guarded(&env.rewind, "web-01", "chg-every").await;
    guarded(&env.rewind, "db-01", "chg-every").await;
    rewind.list_tags("web-01", None).await.unwrap();
    let out = env.dir.path().join("every");
    rewind
        .recover_file(
            request("web-01", "chg-every", &[APP_CONF], &out),
            &NoProgress,
        )
        .await
        .unwrap();
    rewind
        .recover_file(
            request("db-01", "chg-every", &["sda1/etc/hosts"], &out),
            &NoProgress,
        )
        .await
        .unwrap();
    let _ = rewind
        .recover_file(
            request("web-01", "chg-every", &["sda1/nope"], &out.join("x")),
            &NoProgress,
        )
        .await;
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
    rewind.journal().read(&JournalFilter::default()).unwrap();

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
    let env = TestEnv::start(114).await;
    guarded(&env.rewind, "web-01", "chg-fault").await;
    env.control
        .fault(serde_json::json!({
            "Method": "GET", "Path": "/v1/flrs/*/downloads/*", "Action": "Respond",
            "Status": 500, "Body": {"Message": "the journal volume went away"}
        }))
        .await;
    env.control.clear_calls().await;
    let out = env.dir.path().join("fault");
    let err = env
        .rewind
        .recover_file(
            request("web-01", "chg-fault", &[APP_CONF], &out),
            &NoProgress,
        )
        .await
        .unwrap_err();
    let RewindError::FlrAborted {
        error, unmounted, ..
    } = &err
    else {
        panic!("{err:?}");
    };
    assert!(*unmounted, "{err}");
    assert!(
        matches!(error.as_ref(), RewindError::Zvm { status: 500, .. }),
        "{error:?}"
    );
    let message = err.to_string();
    assert!(
        message.contains("the journal volume went away"),
        "{message}"
    );
    assert!(message.contains("was unmounted"), "{message}");
    assert!(files_under(&out).is_empty(), "{:?}", files_under(&out));

    let flr: Vec<(String, String, i64)> = env
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
        newest_unmount_state(&env).await,
        Some(6),
        "the unmount task Completed"
    );
}

/// The state of the newest `FlrJournalUnmount` task.
async fn newest_unmount_state(env: &TestEnv) -> Option<i64> {
    env.control
        .tasks()
        .await
        .iter()
        .rev()
        .find(|t| t["Type"] == "FlrJournalUnmount")
        .map(crate::common::state_of)
}

#[tokio::test]
async fn a_download_whose_connection_drops_once_is_fetched_again() {
    let env = TestEnv::start(115).await;
    let original = env.control.file("web-01", APP_CONF).await;
    guarded(&env.rewind, "web-01", "chg-drop").await;
    env.control
        .fault(serde_json::json!({
            "Method": "GET", "Path": "/v1/flrs/*/downloads/*", "Action": "LoseResponse", "Count": 1
        }))
        .await;
    let out = env.dir.path().join("drop");
    let report = env
        .rewind
        .recover_file(
            request("web-01", "chg-drop", &[APP_CONF], &out),
            &NoProgress,
        )
        .await
        .unwrap();
    assert_eq!(std::fs::read(out.join(APP_CONF)).unwrap(), original);
    assert!(report.unmount.unmounted);
}

#[tokio::test]
async fn a_download_cut_off_halfway_is_fetched_again_and_only_whole_bytes_are_written() {
    let env = TestEnv::start(118).await;
    let original = env.control.file("web-01", APP_CONF).await;
    guarded(&env.rewind, "web-01", "chg-cut").await;
    // The first download sends half the file, with the whole length announced, then drops.
    env.control
        .fault(serde_json::json!({
            "Method": "GET", "Path": "/v1/flrs/*/downloads/*", "Action": "CutResponse", "Count": 1
        }))
        .await;
    env.control.clear_calls().await;
    let out = env.dir.path().join("cut");
    let report = env
        .rewind
        .recover_file(request("web-01", "chg-cut", &[APP_CONF], &out), &NoProgress)
        .await
        .unwrap();
    assert_eq!(std::fs::read(out.join(APP_CONF)).unwrap(), original);
    assert_eq!(files_under(&out).len(), 1, "{:?}", files_under(&out));
    assert!(
        report.notes.iter().any(
            |n| matches!(n, RecoveryNote::DownloadCutOff { path, .. } if path.as_str() == APP_CONF)
        ),
        "{}",
        report.summary()
    );
    let downloads = env
        .control
        .calls_to("/v1/flrs")
        .await
        .into_iter()
        .filter(|(_, m, p, _)| m == "GET" && p.contains("/downloads/"))
        .count();
    assert_eq!(downloads, 2, "the cut download and the one fetched again");
    assert!(report.unmount.unmounted);
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
    guarded(&env.rewind, "web-01", "chg-large").await;
    env.control.put_file("web-01", last, b"{}").await;
    env.control.clear_calls().await;
    let out = env.dir.path().join("large");
    let report = env
        .rewind
        .recover_file(request("web-01", "chg-large", &[last], &out), &NoProgress)
        .await
        .unwrap();
    assert_eq!(
        std::fs::read(out.join(last)).unwrap(),
        b"{\"job\": 519}",
        "{}",
        report.summary()
    );
    let browses = env
        .control
        .calls_to("/v1/flrs")
        .await
        .into_iter()
        .filter(|(_, m, p, _)| m == "POST" && p.ends_with("/browse"))
        .count();
    assert_eq!(browses, 2, "the folder's two pages, read once each");
}

#[tokio::test]
async fn a_lost_mount_answer_is_reconciled_to_the_session_it_created_which_is_then_unmounted() {
    let env = TestEnv::start(116).await;
    let original = env.control.file("web-01", APP_CONF).await;
    guarded(&env.rewind, "web-01", "chg-lost").await;
    env.control
        .fault(serde_json::json!({
            "Method": "POST", "Path": "/v1/flrs", "Action": "LoseResponse", "Count": 1
        }))
        .await;
    env.control.clear_calls().await;
    let out = env.dir.path().join("lost");
    let report = env
        .rewind
        .recover_file(
            request("web-01", "chg-lost", &[APP_CONF], &out),
            &NoProgress,
        )
        .await
        .unwrap();
    assert_eq!(std::fs::read(out.join(APP_CONF)).unwrap(), original);
    assert!(
        report
            .notes
            .iter()
            .any(|n| matches!(n, RecoveryNote::MountFound { .. })),
        "{}",
        report.summary()
    );
    assert!(report.unmount.unmounted);
    let mounts = env
        .control
        .calls_to("/v1/flrs")
        .await
        .into_iter()
        .filter(|(_, m, p, _)| m == "POST" && p.eq_ignore_ascii_case("/v1/flrs"))
        .count();
    assert_eq!(mounts, 1, "the mount was never sent twice");
}

#[tokio::test]
async fn a_lost_mount_whose_sessions_cannot_be_read_says_the_mount_may_have_happened() {
    let env = TestEnv::start(117).await;
    guarded(&env.rewind, "web-01", "chg-lost-unread").await;
    // The mount is made and its answer never comes; from then on the sessions cannot be read.
    let lost = env
        .control
        .fault(serde_json::json!({
            "Method": "POST", "Path": "/v1/flrs", "Action": "WithholdResponse", "Count": 1
        }))
        .await;
    env.control
        .fault(serde_json::json!({
            "Method": "GET", "Path": "/v1/flrs", "Action": "Respond", "Status": 500,
            "Body": {"Message": "the FLR sessions cannot be read now"}, "After": lost["Id"]
        }))
        .await;
    let rewind = env.rewind_with(|mut c| {
        c.http.request_timeout = std::time::Duration::from_millis(700);
        c
    });
    let out = env.dir.path().join("lost-unread");
    let err = rewind
        .recover_file(
            request("web-01", "chg-lost-unread", &[APP_CONF], &out),
            &NoProgress,
        )
        .await
        .unwrap_err();
    let text = err.to_string();
    // The mount happened at the ZVM: the error must say so and what to do, not only that the
    // sessions could not be read.
    let mounted = env
        .control
        .calls_to("/v1/flrs")
        .await
        .into_iter()
        .filter(|(_, m, p, s)| m == "POST" && p.eq_ignore_ascii_case("/v1/flrs") && *s == 200)
        .count();
    assert_eq!(mounted, 1, "{text}");
    assert!(text.contains("the mount may have happened"), "{text}");
    assert!(text.contains("unmount it"), "{text}");
    assert!(text.contains("HTTP 500"), "the reason is kept: {text}");
}

#[tokio::test]
async fn a_windows_guest_file_lands_under_its_drive_as_a_plain_folder() {
    let env = TestEnv::start(117).await;
    let ini = "C:/ProgramData/App/app.ini";
    let original = env.control.file("sql-01", ini).await;
    guarded(&env.rewind, "sql-01", "chg-win").await;
    env.control.put_file("sql-01", ini, b"[db]\nport=0\n").await;
    let out = env.dir.path().join("win");
    let report = env
        .rewind
        .recover_file(
            request("sql-01", "chg-win", &["c:/programdata/app/APP.INI"], &out),
            &NoProgress,
        )
        .await
        .unwrap();
    assert_eq!(report.from.vpg_name, "sql-local");
    assert_eq!(
        std::fs::read(out.join("c/programdata/app/APP.INI")).unwrap(),
        original,
        "Windows paths are case-insensitive; the file keeps the name it was asked by"
    );
    assert_eq!(report.files[0].sha256, sha256(&original));
}

#[tokio::test]
async fn a_recovery_dropped_while_mounting_still_unmounts_its_session() {
    let env = TestEnv::start(118).await;
    guarded(&env.rewind, "web-01", "chg-drop-call").await;
    // A mount long enough to give up on while it runs.
    env.control.timing(60_000, 20).await;
    let rewind = env.rewind.clone();
    let out = env.dir.path().join("dropped");
    let call = tokio::spawn(async move {
        rewind
            .recover_file(
                request("web-01", "chg-drop-call", &[APP_CONF], &out),
                &NoProgress,
            )
            .await
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while running_tasks(&env, "FlrJournalMount").await == 0 {
        assert!(std::time::Instant::now() < deadline, "the mount starts");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    call.abort();
    assert!(call.await.unwrap_err().is_cancelled());
    while !env
        .control
        .calls_to("/v1/flrs/")
        .await
        .iter()
        .any(|(_, m, _, s)| m == "DELETE" && *s == 200)
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the dropped recovery's session is unmounted"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
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
    let file = env
        .rewind
        .recover_file(
            request("web-01", "chg-head", &[APP_CONF], &out),
            &NoProgress,
        )
        .await
        .unwrap();
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
    let env = TestEnv::start(121).await;
    guarded(&env.rewind, "web-01", "chg-wait").await;
    // A failover test that would take a minute, and a configuration that waits one second for it.
    env.control.timing(60_000, 20).await;
    let impatient = env.rewind_with(|mut c| {
        c.guard.deadline = std::time::Duration::from_secs(1);
        c.recover.wait_floor = std::time::Duration::from_secs(1);
        c
    });
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
    let env = TestEnv::start(122).await;
    guarded(&env.rewind, "web-01", "chg-slow-mount").await;
    // A mount that would take a minute, and a configuration that waits one second for it.
    env.control.timing(60_000, 20).await;
    let impatient = env.rewind_with(|mut c| {
        c.guard.deadline = std::time::Duration::from_secs(1);
        c.recover.wait_floor = std::time::Duration::from_secs(1);
        c
    });
    let dir = tempfile::tempdir().unwrap();
    let err = impatient
        .recover_file(
            request("web-01", "chg-slow-mount", &[APP_CONF], dir.path()),
            &NoProgress,
        )
        .await
        .expect_err("the mount did not finish in time");
    let mount = env
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
    assert!(
        env.control
            .calls_to("/v1/flrs/")
            .await
            .iter()
            .any(|(_, method, _, _)| method == "DELETE"),
        "{:?}",
        env.control.calls_to("/v1/flrs/").await
    );
    assert!(files_under(dir.path()).is_empty());
}
