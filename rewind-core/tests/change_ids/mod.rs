//! A change id ties one change's tags together: reused by another agent, action or person, or after
//! its change was recovered, a guard is refused before anything is sent, naming the earlier use;
//! the same agent, action and person go on. The check reads the change index beside the journal,
//! which is made again from the journal when it is missing.

use rewind_core::{GuardRequest, NoProgress, RewindError, Verdict};

use crate::common::{TestEnv, request};

fn as_other(vm: &str, change: &str) -> GuardRequest {
    GuardRequest {
        agent: "other".into(),
        action: "drop table".into(),
        ..request(vm, change)
    }
}

#[tokio::test]
async fn a_change_id_reused_for_another_action_is_refused_naming_the_earlier_guard() {
    let env = TestEnv::start(321).await;
    let first = env
        .rewind
        .guard(request("web-01", "time-1"), &NoProgress)
        .await
        .unwrap();
    assert_eq!(first.verdict, Verdict::Guarded);
    let inserts = env.insert_tasks().await.len();

    let err = env
        .rewind
        .guard(as_other("web-01", "time-1"), &NoProgress)
        .await
        .unwrap_err();
    let RewindError::ChangeIdTaken { change_id, earlier } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(change_id, "time-1");
    assert!(
        earlier.contains("claude-code") && earlier.contains("edit app.conf"),
        "{earlier}"
    );
    assert_eq!(err.kind(), rewind_core::ErrorKind::Usage);
    assert_eq!(env.insert_tasks().await.len(), inserts, "nothing was sent");
    // On another VM too: the id is the change's, whatever VM it touches.
    assert!(matches!(
        env.rewind
            .guard(as_other("db-01", "time-1"), &NoProgress)
            .await,
        Err(RewindError::ChangeIdTaken { .. })
    ));

    // The same agent and action take the earlier attempt over, as before.
    let again = env
        .rewind
        .guard(request("web-01", "time-1"), &NoProgress)
        .await
        .unwrap();
    assert_eq!(again.verdict, Verdict::Guarded);
    assert_eq!(again.tag, first.tag);
}

#[tokio::test]
async fn a_change_that_was_recovered_keeps_its_id() {
    let env = TestEnv::start(322).await;
    env.rewind
        .guard(request("web-01", "rec-1"), &NoProgress)
        .await
        .unwrap();
    let destination = env.dir.path().join("restored");
    env.rewind
        .recover_file(
            rewind_core::RecoverFileRequest {
                vm: "web-01".into(),
                change: "rec-1".into(),
                paths: vec!["sda1/etc/hostname".into()],
                destination,
                overwrite: false,
                plan: None,
            },
            &NoProgress,
        )
        .await
        .unwrap();
    let err = env
        .rewind
        .guard(request("web-01", "rec-1"), &NoProgress)
        .await
        .unwrap_err();
    let said = err.to_string();
    assert!(matches!(err, RewindError::ChangeIdTaken { .. }), "{err:?}");
    assert!(said.contains("recovered"), "{said}");
}

#[tokio::test]
async fn the_change_index_is_made_again_from_the_journal_when_it_is_missing() {
    let env = TestEnv::start(323).await;
    env.rewind
        .guard(request("web-01", "idx-1"), &NoProgress)
        .await
        .unwrap();
    let index = env.dir.path().join("journal.changes");
    assert!(index.exists(), "the index lies beside the journal");
    std::fs::remove_file(&index).unwrap();
    // Another process (a fresh facade) reads the journal once to make it again.
    let other = env.rewind_with(|c| c);
    assert!(matches!(
        other.guard(as_other("web-01", "idx-1"), &NoProgress).await,
        Err(RewindError::ChangeIdTaken { .. })
    ));
    assert!(index.exists(), "made again");
    let uses = other
        .journal()
        .change_uses("idx-1", chrono::DateTime::<chrono::Utc>::MIN_UTC)
        .unwrap();
    assert_eq!(uses.len(), 1, "{uses:?}");
}

/// Two guards of one change id by two agents at once, each through a facade of its own on one
/// journal (as two processes would be): on `vms`.
async fn at_once(
    seed: u64,
    vms: [&str; 2],
) -> (TestEnv, [Result<rewind_core::GuardReport, RewindError>; 2]) {
    let env = TestEnv::start(seed).await;
    let other_process = env.rewind_with(|c| c);
    let (first, second) = tokio::join!(
        env.rewind.guard(request(vms[0], "race-1"), &NoProgress),
        other_process.guard(as_other(vms[1], "race-1"), &NoProgress),
    );
    (env, [first, second])
}

#[tokio::test]
async fn two_agents_reusing_one_change_id_at_once_on_two_vms_are_not_both_guarded() {
    for seed in [331, 332, 333] {
        let (env, outcomes) = at_once(seed, ["web-01", "db-01"]).await;
        let guarded = outcomes
            .iter()
            .filter(|o| matches!(o, Ok(r) if r.verdict == Verdict::Guarded))
            .count();
        let refused = outcomes
            .iter()
            .filter(|o| matches!(o, Err(RewindError::ChangeIdTaken { .. })))
            .count();
        assert_eq!((guarded, refused), (1, 1), "{outcomes:?}");
        let report = outcomes.iter().find_map(|o| o.as_ref().ok()).unwrap();
        assert_eq!(
            env.insert_tasks().await.len(),
            report.vpgs.len(),
            "the refused guard sent nothing: {outcomes:?}"
        );
    }
}

#[tokio::test]
async fn two_agents_reusing_one_change_id_at_once_on_one_vm_are_not_both_guarded() {
    for seed in [334, 335, 336] {
        let (_env, outcomes) = at_once(seed, ["web-01", "web-01"]).await;
        let refused = outcomes
            .iter()
            .filter(|o| matches!(o, Err(RewindError::ChangeIdTaken { .. })))
            .count();
        assert_eq!(
            refused, 1,
            "the second neither guards nor adopts the first's tag: {outcomes:?}"
        );
    }
}
