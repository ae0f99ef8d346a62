//! `Rewind::diff` against the in-process simulator: a diff stopped midway still unmounts, a walk
//! cut short by its bound says where and reports nothing beyond it as removed, and a checkpoint to
//! compare with that the VPG does not list is refused before anything is mounted.

use rewind_core::{
    CancellationToken, DiffKind, DiffRequest, NoProgress, RecoveryRefusal, RewindError, WalkStop,
};

use crate::common::{TestEnv, guarded};

fn request(change: &str, paths: &[&str]) -> DiffRequest {
    DiffRequest {
        vm: "web-01".into(),
        change: change.into(),
        paths: paths.iter().map(|p| p.to_string()).collect(),
        ..DiffRequest::default()
    }
}

/// Every FLR mount the simulator ran has its unmount, Completed; how many mounts.
async fn all_unmounted(env: &TestEnv) -> usize {
    let mounts = env.control.tasks_of_type("FlrJournalMount").await;
    let unmounts = env.control.tasks_of_type("FlrJournalUnmount").await;
    assert_eq!(mounts.len(), unmounts.len(), "{mounts:#?} {unmounts:#?}");
    assert!(unmounts.iter().all(|t| t["State"] == 6), "{unmounts:#?}");
    mounts.len()
}

#[tokio::test]
async fn a_diff_told_to_stop_reads_no_more_and_unmounts_what_it_mounted() {
    let env = TestEnv::start(131).await;
    guarded(&env.rewind, "web-01", "stop-me").await;
    let stop = CancellationToken::new();
    stop.cancel();
    let err = env
        .rewind
        .diff(request("stop-me", &["sda1/etc"]), &NoProgress, &stop)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err.root(),
            RewindError::NotPossible {
                reason: RecoveryRefusal::DiffInterrupted { .. }
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("was unmounted"), "{err}");
    assert_eq!(
        all_unmounted(&env).await,
        1,
        "the second one was never mounted"
    );
}

#[tokio::test]
async fn a_walk_cut_short_by_its_bound_says_where_and_calls_nothing_beyond_it_removed() {
    let env = TestEnv::start(132).await;
    guarded(&env.rewind, "web-01", "bounded").await;
    env.control
        .put_file("web-01", "sda1/var/www/html/index.html", b"<p>changed</p>")
        .await;
    env.control.advance(10.0).await;
    let rewind = env.rewind_with(|mut c| {
        c.diff.max_entries = 3;
        c
    });
    let report = rewind
        .diff(
            request("bounded", &["sda1"]),
            &NoProgress,
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert!(
        matches!(
            report.stopped.first(),
            Some(WalkStop::Entries { limit: 3, .. })
        ),
        "{:?}",
        report.stopped
    );
    assert!(
        report.entries.iter().all(|e| e.kind != DiffKind::Removed),
        "{:#?}",
        report.entries
    );
    assert!(
        report.footer()[0].contains("max_entries"),
        "{:?}",
        report.footer()
    );
    assert_eq!(all_unmounted(&env).await, 2);
}

#[tokio::test]
async fn a_checkpoint_the_vpg_does_not_list_is_refused_before_anything_is_mounted() {
    let env = TestEnv::start(133).await;
    guarded(&env.rewind, "web-01", "against").await;
    let req = DiffRequest {
        against: Some("999999999".into()),
        ..request("against", &["sda1/etc"])
    };
    let err = env
        .rewind
        .diff(req, &NoProgress, &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("\"999999999\""), "{err}");
    assert!(err.to_string().contains("latest"), "{err}");
    assert!(
        env.control
            .tasks_of_type("FlrJournalMount")
            .await
            .is_empty()
    );
}
