//! The journal kept in PostgreSQL (`journal = "postgresql://..."`), on a throwaway server of the
//! test kit: a guard reads back as on a file, and two replicas (two facades, each with a store of
//! its own, as two processes on two hosts would have) on one database keep the change lock, the
//! change id's check and the tag's one insert per VPG between them.

use std::time::Duration;

use rewind_core::audit_journal::{GuardLookup, JournalFilter, JournalVerdict, Retention};
use rewind_core::{NoProgress, Rewind, RewindError, Verdict};
use zvm_sim::test_kit::Postgres;

use crate::common::{TestEnv, guarded, journal_records, request};

// The database restarted, a replica cut off, sixteen agents through two replicas.
mod failures;
// A configuration's journal in a database.
mod place;

use place::in_database;

/// Two replicas of one team server: two facades on one database.
fn two_replicas(env: &TestEnv) -> (Rewind, Rewind) {
    let url = Postgres::shared().fresh_database();
    (
        env.rewind_with(in_database(&url)),
        env.rewind_with(in_database(&url)),
    )
}

#[tokio::test]
async fn a_guard_on_a_journal_in_postgresql_reads_back_as_one_guarded_record() {
    let env = TestEnv::start(901).await;
    let (rewind, other) = two_replicas(&env);
    let report = guarded(&rewind, "web-01", "pg-1").await;
    assert!(
        !env.dir.path().join("journal.jsonl").exists(),
        "no journal file is written beside the state"
    );
    // Another replica reads it from the database.
    let records = journal_records(&other);
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0].verdict, JournalVerdict::Guarded);
    assert_eq!(records[0].tag(), Some(report.tag.as_str()));
    let uses = other
        .journal()
        .change_uses("pg-1", chrono::DateTime::<chrono::Utc>::MIN_UTC)
        .unwrap();
    assert_eq!(uses.len(), 1, "{uses:?}");
    let lookup = other
        .journal()
        .last_guarded("web-01", Duration::from_secs(600))
        .unwrap();
    assert!(
        matches!(&lookup, GuardLookup::Guarded(r) if r.tag() == Some(report.tag.as_str())),
        "{lookup:?}"
    );
    let view = other
        .journal()
        .guards_view(Duration::from_secs(600))
        .unwrap();
    assert!(view.iter().any(|r| r.tag() == Some(report.tag.as_str())));
    let namings = other.journal().namings().unwrap();
    assert!(
        namings.iter().any(|(_, vm)| vm.name == "web-01"),
        "{namings:?}"
    );
    assert!(other.journal().place().starts_with("PostgreSQL 127.0.0.1:"));
}

#[tokio::test]
async fn the_same_change_guarded_through_two_replicas_at_once_inserts_one_tag_per_vpg() {
    let env = TestEnv::start(902).await;
    let (a, b) = two_replicas(&env);
    let (first, second) = tokio::join!(
        a.guard(request("web-01", "pg-lock"), &NoProgress),
        b.guard(request("web-01", "pg-lock"), &NoProgress),
    );
    let (first, second) = (first.unwrap(), second.unwrap());
    assert_eq!(first.verdict, Verdict::Guarded, "{}", first.summary());
    assert_eq!(second.verdict, Verdict::Guarded, "{}", second.summary());
    assert_eq!(first.tag, second.tag, "the second adopts the first's tag");
    assert_eq!(
        env.insert_tasks().await.len(),
        first.vpgs.len(),
        "one insert per VPG, whichever replica ran first"
    );
}

/// Two agents' guards of one change id at once through two replicas, on `vms`.
async fn reusing_at_once(seed: u64, vms: [&str; 2]) -> (TestEnv, usize, usize) {
    let env = TestEnv::start(seed).await;
    let (a, b) = two_replicas(&env);
    let other = rewind_core::GuardRequest {
        agent: "other".into(),
        action: "drop table".into(),
        ..request(vms[1], "pg-race")
    };
    let (first, second) = tokio::join!(
        a.guard(request(vms[0], "pg-race"), &NoProgress),
        b.guard(other, &NoProgress),
    );
    let outcomes = [first, second];
    let guarded = outcomes
        .iter()
        .filter(|o| matches!(o, Ok(r) if r.verdict == Verdict::Guarded))
        .count();
    let refused = outcomes
        .iter()
        .filter(|o| matches!(o, Err(RewindError::ChangeIdTaken { .. })))
        .count();
    (env, guarded, refused)
}

#[tokio::test]
async fn two_agents_reusing_one_change_id_at_once_through_two_replicas_are_not_both_guarded() {
    for (seed, vms) in [(903, ["web-01", "db-01"]), (904, ["web-01", "web-01"])] {
        let (env, guarded, refused) = reusing_at_once(seed, vms).await;
        assert_eq!((guarded, refused), (1, 1), "on {vms:?}");
        let sent = env.insert_tasks().await.len();
        assert!(sent <= 3, "the refused guard sent nothing: {sent} inserts");
    }
}

#[tokio::test]
async fn an_archive_moves_whole_changes_to_a_file_and_keeps_every_naming() {
    let env = TestEnv::start(905).await;
    let (rewind, _) = two_replicas(&env);
    guarded(&rewind, "web-01", "pg-old").await;
    let file = env.dir.path().join("archive.jsonl");
    let far = chrono::Utc::now() + chrono::Duration::days(1);
    let archived = rewind
        .journal()
        .archive(far, &file, Retention { keep_since: far })
        .unwrap();
    assert!(archived.lines_moved >= 3, "{archived:?}");
    assert_eq!(archived.lines_kept, 0, "{archived:?}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text.lines().count() as u64, archived.lines_moved);
    assert!(journal_records(&rewind).is_empty());
    let namings = rewind.journal().namings().unwrap();
    assert!(
        namings.iter().any(|(_, vm)| vm.name == "web-01"),
        "an archived VM is still known by its name: {namings:?}"
    );
    // The file's lines are the journal's exchange format: a journal of that file reads them.
    let back = rewind_core::AuditJournal::new(&file)
        .read(&JournalFilter::default())
        .unwrap();
    assert_eq!(back.records.len(), 1);
}

#[tokio::test]
async fn a_guard_whose_database_cannot_be_reached_sends_nothing_and_names_the_database() {
    let env = TestEnv::start(906).await;
    let rewind = env.rewind_with(in_database(
        "postgresql://rewind:hunter2@127.0.0.1:1/team?sslmode=disable&connect_timeout=1",
    ));
    let err = rewind
        .guard(request("web-01", "pg-down"), &NoProgress)
        .await
        .unwrap_err();
    let said = err.to_string();
    assert!(matches!(err, RewindError::NotJournaled { .. }), "{err:?}");
    assert!(said.contains("127.0.0.1:1/team"), "{said}");
    assert!(!said.contains("hunter2"), "{said}");
    assert!(env.insert_tasks().await.is_empty(), "nothing was inserted");
}

#[tokio::test]
async fn a_replica_that_loses_its_database_sends_no_insert_once_its_lease_may_have_run_out() {
    let server = Postgres::start();
    let url = server.fresh_database();
    let env = TestEnv::start(907).await;
    // Every VPG's look for running inserts takes 9 s: long enough for the leases taken before it
    // to run out by the replica's own clock (10 s less a 3 s margin) once the database is gone.
    env.control
        .fault(serde_json::json!({"Method": "GET", "Path": "/v1/tasks",
            "Action": "Latency", "LatencyMs": 9000, "Count": 3}))
        .await;
    let rewind = env.rewind_with(in_database(&url));
    let guard = tokio::spawn({
        let rewind = rewind.clone();
        async move { rewind.guard(request("web-01", "pg-cut"), &NoProgress).await }
    });
    tokio::time::sleep(Duration::from_millis(1500)).await;
    server.stop_immediately();
    let report = guard.await.unwrap().expect("the guard reports");
    assert_eq!(report.verdict, Verdict::NotGuarded, "{}", report.summary());
    for vpg in &report.vpgs {
        let said = format!("{:?}", vpg.outcome);
        assert!(said.contains("LockLost"), "{said}");
    }
    assert!(
        env.insert_tasks().await.is_empty(),
        "no insert was sent once the lease could not be renewed"
    );
    assert!(
        report.journal_error.is_some(),
        "the verdict was not written"
    );
    // The database back, another replica takes the change over once the leases ran out.
    server.up();
    let other = env.rewind_with(in_database(&url));
    let again = guarded(&other, "web-01", "pg-cut").await;
    assert!(
        again
            .notes
            .iter()
            .any(|n| format!("{n:?}").contains("TookOver")),
        "{}",
        again.summary()
    );
    assert_eq!(env.insert_tasks().await.len(), again.vpgs.len());
}

#[tokio::test]
async fn two_replicas_guarding_vms_that_share_a_vpg_at_once_never_fail_each_others_insert() {
    for seed in [908, 909, 910] {
        let env = TestEnv::start(seed).await;
        // Each insert reaches the ZVM 300 ms after it is sent: two sent at once would meet.
        env.control
            .fault(
                serde_json::json!({"Method": "POST", "Path": "/v1/vpgs/*/checkpoints",
                "Action": "Latency", "LatencyMs": 300, "Count": 2}),
            )
            .await;
        let (a, b) = two_replicas(&env);
        let (first, second) = tokio::join!(
            a.guard(request("app-01", "pg-share-a"), &NoProgress),
            b.guard(request("app-02", "pg-share-b"), &NoProgress),
        );
        assert_eq!(first.unwrap().verdict, Verdict::Guarded);
        assert_eq!(second.unwrap().verdict, Verdict::Guarded);
        let inserts = env.insert_tasks().await;
        assert_eq!(inserts.len(), 2, "{inserts:?}");
        assert!(
            inserts.iter().all(|(_, _, state)| *state == 6),
            "no insert failed back to back: {inserts:?}"
        );
    }
}

#[tokio::test]
async fn a_call_held_on_one_replica_is_approved_on_another_and_runs_once_on_the_first() {
    use rewind_core::approvals::{CallToHold, HeldState, Standing};
    use rewind_core::audit_journal::Person;
    let env = TestEnv::start(911).await;
    let (a, b) = two_replicas(&env);
    let alice = Person {
        subject: "alice".into(),
        name: Some("alice".into()),
    };
    let call = || CallToHold {
        requester: alice.clone(),
        agent: "claude-code".into(),
        server: "zerto-rewind".into(),
        tool: "zerto_restore_vm".into(),
        vm: Some("web-01".into()),
        // Another key order: the digest is of the canonical form, with the key every replica shares.
        arguments: serde_json::json!({"vm": "web-01", "change_id": "c-1"}),
        what: "restore web-01".into(),
    };
    let held = match a.held_calls().ask(call(), false).unwrap() {
        Standing::NewlyHeld(held) => held,
        other => panic!("{other:?}"),
    };
    let listed = b.held_calls().list().unwrap();
    assert_eq!(listed.len(), 1, "the other replica sees it");
    let bob = Person {
        subject: "bob".into(),
        name: Some("bob".into()),
    };
    let decided = b.held_calls().decide(&held.id, &bob, true, None).unwrap();
    assert_eq!(decided.state, HeldState::Approved);
    let mut again = call();
    again.arguments = serde_json::json!({"change_id": "c-1", "vm": "web-01"});
    assert!(matches!(
        a.held_calls().ask(again, false).unwrap(),
        Standing::Run(_)
    ));
    assert!(
        matches!(
            b.held_calls().ask(call(), false).unwrap(),
            Standing::AlreadyRan(_)
        ),
        "the approval is used once, whichever replica is asked"
    );
    assert!(
        !env.dir.path().join("held-calls.jsonl").exists(),
        "no file beside the state"
    );
}

#[tokio::test]
async fn a_recovery_previewed_on_one_replica_runs_its_plan_on_another() {
    let env = TestEnv::start(912).await;
    let (a, b) = two_replicas(&env);
    guarded(&a, "web-01", "pg-plan").await;
    let request = |plan: Option<String>| rewind_core::RecoverFileRequest {
        vm: "web-01".into(),
        change: "pg-plan".into(),
        paths: vec!["sda1/etc/hostname".into()],
        destination: env.dir.path().join("restored"),
        overwrite: false,
        plan,
    };
    let stop = tokio_util::sync::CancellationToken::new();
    let plan = a
        .preview_recover_file(request(None), &NoProgress, &stop)
        .await
        .unwrap();
    let report = b
        .recover_file(request(Some(plan.plan_id.clone())), &NoProgress)
        .await
        .unwrap();
    assert!(env.dir.path().join("restored").exists(), "{report:?}");
    assert!(
        !env.dir.path().join("plans").exists(),
        "no plan file beside the state"
    );
}

#[tokio::test]
async fn one_replica_at_a_time_holds_the_watchers_role() {
    let env = TestEnv::start(913).await;
    let (a, b) = two_replicas(&env);
    let first = a.journal().lead("watcher").await.unwrap();
    assert!(first.as_ref().is_some_and(|l| l.holds()));
    assert!(b.journal().lead("watcher").await.unwrap().is_none());
    drop(first);
    let mut taken = None;
    for _ in 0..50 {
        taken = b.journal().lead("watcher").await.unwrap();
        if taken.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        taken.is_some(),
        "let go, the role is the other replica's to take"
    );
    // On a journal file, the one process holds it at once.
    assert!(
        env.rewind
            .journal()
            .lead("watcher")
            .await
            .unwrap()
            .is_some()
    );
}

#[tokio::test]
async fn a_journal_reached_over_tls_checks_the_server_against_its_root_certificate() {
    let (server, ca) = Postgres::start_with_tls();
    let plain = server.fresh_database();
    let base = plain.replace("?sslmode=disable", "");
    let env = TestEnv::start(915).await;
    let verified = format!("{base}?sslmode=verify-full&sslrootcert={}", ca.display());
    let rewind = env.rewind_with(in_database(&verified));
    guarded(&rewind, "web-01", "tls-1").await;
    assert!(
        env.rewind_with(in_database(&plain))
            .journal()
            .reachable()
            .is_err(),
        "the server takes TLS connections only: the guard above went over TLS"
    );
    let required = format!("{base}?sslmode=require");
    assert!(
        env.rewind_with(in_database(&required))
            .journal()
            .reachable()
            .is_ok(),
        "require without a root certificate encrypts without checking, as libpq's does"
    );
    // Checked against a CA that did not sign the server's certificate: refused, nothing sent.
    let wrong_ca = env.dir.path().join("other-ca.pem");
    zvm_sim::test_kit::self_signed(&wrong_ca, None);
    let wrong = format!(
        "{base}?sslmode=verify-full&sslrootcert={}",
        wrong_ca.display()
    );
    let before = env.insert_tasks().await.len();
    let err = env
        .rewind_with(in_database(&wrong))
        .guard(request("web-01", "tls-2"), &NoProgress)
        .await
        .unwrap_err();
    assert!(matches!(err, RewindError::NotJournaled { .. }), "{err:?}");
    assert!(err.to_string().contains("127.0.0.1:"), "{err}");
    assert_eq!(
        env.insert_tasks().await.len(),
        before,
        "nothing was inserted"
    );
}
