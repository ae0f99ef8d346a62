use std::time::Duration;

use super::*;
use crate::audit_journal::Person;
use crate::config::ApprovalSettings;

fn person(subject: &str) -> Person {
    Person {
        subject: subject.to_owned(),
        name: Some(subject.to_owned()),
    }
}

struct Kit {
    dir: tempfile::TempDir,
    settings: ApprovalSettings,
}

impl Kit {
    fn new() -> Kit {
        Kit {
            dir: tempfile::tempdir().unwrap(),
            settings: ApprovalSettings::default(),
        }
    }

    /// The store as a fresh process opens it.
    fn store(&self) -> HeldCalls {
        HeldCalls::new(
            self.dir.path(),
            &self.dir.path().join("catalog.toml"),
            self.settings.clone(),
        )
    }
}

fn restore(requester: &str, as_name: &str) -> CallToHold {
    CallToHold {
        requester: person(requester),
        agent: "claude-code".to_owned(),
        server: "zerto-rewind".to_owned(),
        tool: "zerto_restore_vm".to_owned(),
        vm: Some("web-01".to_owned()),
        arguments: serde_json::json!({"vm": "web-01", "change_id": "c1", "as_name": as_name}),
        what: "restore web-01 beside it".to_owned(),
    }
}

fn held_id(standing: Standing) -> String {
    match standing {
        Standing::NewlyHeld(call) => call.id,
        other => panic!("expected a new held call, got {other:?}"),
    }
}

#[test]
fn an_approved_call_runs_once_and_its_next_try_answers_that_it_ran() {
    let kit = Kit::new();
    let store = kit.store();
    let id = held_id(store.ask(restore("alice", "web-01-back"), false).unwrap());
    assert!(matches!(
        store.ask(restore("alice", "web-01-back"), false).unwrap(),
        Standing::StillHeld(c) if c.id == id
    ));
    let approved = store
        .decide(&id, &person("bob"), true, Some(" fine ".into()))
        .unwrap();
    assert_eq!(approved.state, HeldState::Approved);
    assert_eq!(approved.comment(), Some("fine"));
    let Standing::Run(run) = store.ask(restore("alice", "web-01-back"), false).unwrap() else {
        panic!("the approved call runs");
    };
    assert_eq!(
        (run.id.as_str(), run.state),
        (id.as_str(), HeldState::Executed)
    );
    store
        .ran(&id, "restored web-01 as web-01-back", false)
        .unwrap();
    let again = kit
        .store()
        .ask(restore("alice", "web-01-back"), false)
        .unwrap();
    assert!(
        matches!(&again, Standing::AlreadyRan(c) if c.outcome() == "restored web-01 as web-01-back"),
        "{again:?}"
    );
}

#[test]
fn other_arguments_another_requester_or_a_changed_catalog_make_another_held_call() {
    let kit = Kit::new();
    let store = kit.store();
    let first = held_id(store.ask(restore("alice", "a"), false).unwrap());
    store.decide(&first, &person("bob"), true, None).unwrap();
    let other_args = held_id(store.ask(restore("alice", "b"), false).unwrap());
    let other_person = held_id(store.ask(restore("carol", "a"), false).unwrap());
    std::fs::write(kit.dir.path().join("catalog.toml"), "[[mutating]]\n").unwrap();
    let other_catalog = held_id(store.ask(restore("alice", "a"), false).unwrap());
    let ids = [&first, &other_args, &other_person, &other_catalog];
    for (i, a) in ids.iter().enumerate() {
        for b in &ids[i + 1..] {
            assert_ne!(a, b);
        }
    }
}

#[test]
fn under_four_eyes_the_requester_cannot_approve_a_restore_but_may_approve_another_tool() {
    let kit = Kit::new();
    let store = kit.store();
    let id = held_id(store.ask(restore("alice", "a"), false).unwrap());
    let refused = store.decide(&id, &person("alice"), true, None).unwrap_err();
    assert!(
        matches!(refused, ApprovalError::FourEyes { .. }),
        "{refused}"
    );
    assert!(refused.to_string().contains("another person"));
    let mut grow = restore("alice", "a");
    grow.tool = "grow_disk".into();
    let own = held_id(store.ask(grow, false).unwrap());
    assert_eq!(
        store
            .decide(&own, &person("alice"), true, None)
            .unwrap()
            .state,
        HeldState::Approved
    );
    let denied = store
        .decide(&id, &person("alice"), false, Some("not now".into()))
        .unwrap();
    assert_eq!(
        denied.state,
        HeldState::Denied,
        "the requester may withdraw their own call"
    );
}

#[test]
fn a_denial_and_its_comment_answer_the_identical_call_and_a_decided_call_cannot_be_decided_again() {
    let kit = Kit::new();
    let store = kit.store();
    let id = held_id(store.ask(restore("alice", "a"), false).unwrap());
    store
        .decide(
            &id,
            &person("bob"),
            false,
            Some("use a file recovery".into()),
        )
        .unwrap();
    let answer = store.ask(restore("alice", "a"), false).unwrap();
    assert!(matches!(&answer, Standing::Denied(c) if c.comment() == Some("use a file recovery")));
    let again = store.decide(&id, &person("carol"), true, None).unwrap_err();
    assert!(matches!(
        again,
        ApprovalError::NotHeld {
            state: HeldState::Denied,
            ..
        }
    ));
}

#[test]
fn a_held_call_and_an_unused_approval_expire_on_time_and_the_call_is_then_held_anew() {
    let mut kit = Kit::new();
    kit.settings.expire_after = Duration::from_millis(300);
    let store = kit.store();
    let id = held_id(store.ask(restore("alice", "a"), false).unwrap());
    std::thread::sleep(Duration::from_millis(400));
    let late = store.decide(&id, &person("bob"), true, None).unwrap_err();
    assert!(matches!(
        late,
        ApprovalError::NotHeld {
            state: HeldState::Expired,
            ..
        }
    ));
    let anew = held_id(store.ask(restore("alice", "a"), false).unwrap());
    assert_ne!(anew, id);
    store.decide(&anew, &person("bob"), true, None).unwrap();
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(kit.store().get(&anew).unwrap().0.state, HeldState::Expired);
    assert!(matches!(
        store.ask(restore("alice", "a"), false).unwrap(),
        Standing::NewlyHeld(_)
    ));
    let text = std::fs::read_to_string(store.path()).unwrap();
    assert_eq!(text.matches("\"event\":\"expired\"").count(), 2, "{text}");
}

#[test]
fn a_crash_after_the_use_leaves_may_have_run_and_never_a_second_run() {
    let kit = Kit::new();
    let store = kit.store();
    let id = held_id(store.ask(restore("alice", "a"), false).unwrap());
    store.decide(&id, &person("bob"), true, None).unwrap();
    assert!(matches!(
        store.ask(restore("alice", "a"), false).unwrap(),
        Standing::Run(_)
    ));
    // The process dies here, before `ran`: a new one reads the store.
    let after = kit.store().ask(restore("alice", "a"), false).unwrap();
    let Standing::AlreadyRan(call) = after else {
        panic!("the approval was used: {after:?}");
    };
    assert!(
        call.outcome().contains("may have run"),
        "{}",
        call.outcome()
    );
}

#[test]
fn a_person_may_have_only_so_many_calls_waiting() {
    let mut kit = Kit::new();
    kit.settings.max_held_per_person = 2;
    let store = kit.store();
    held_id(store.ask(restore("alice", "a"), false).unwrap());
    held_id(store.ask(restore("alice", "b"), false).unwrap());
    let third = store.ask(restore("alice", "c"), false).unwrap_err();
    assert!(third.to_string().contains("max_held_per_person"), "{third}");
    held_id(store.ask(restore("bob", "c"), false).unwrap());
}

#[test]
fn a_hooks_use_of_an_approval_is_allowed_not_executed() {
    let kit = Kit::new();
    let store = kit.store();
    let id = held_id(store.ask(restore("alice", "a"), true).unwrap());
    store.decide(&id, &person("bob"), true, None).unwrap();
    let Standing::Run(call) = store.ask(restore("alice", "a"), true).unwrap() else {
        panic!("approved");
    };
    assert_eq!(call.state, HeldState::Allowed);
}

#[test]
fn the_raw_arguments_stay_in_the_private_store_and_out_of_the_call_people_list() {
    let kit = Kit::new();
    let store = kit.store();
    let id = held_id(store.ask(restore("alice", "secret-name"), false).unwrap());
    let listed = serde_json::to_string(&store.list().unwrap()).unwrap();
    assert!(!listed.contains("secret-name"), "{listed}");
    assert!(listed.contains(&id));
    let (_, arguments) = store.get(&id).unwrap();
    assert_eq!(arguments["as_name"], "secret-name");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(store.path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

#[test]
fn a_line_cut_short_by_a_crash_is_cut_off_and_the_store_goes_on() {
    let kit = Kit::new();
    let store = kit.store();
    let id = held_id(store.ask(restore("alice", "a"), false).unwrap());
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(store.path())
        .unwrap();
    file.write_all(br#"{"event":"decided","id":"#).unwrap();
    assert_eq!(store.list().unwrap().len(), 1);
    store.decide(&id, &person("bob"), true, None).unwrap();
    assert_eq!(kit.store().get(&id).unwrap().0.state, HeldState::Approved);
}

#[test]
fn pending_calls_are_listed_first() {
    let kit = Kit::new();
    let store = kit.store();
    let first = held_id(store.ask(restore("alice", "a"), false).unwrap());
    let second = held_id(store.ask(restore("alice", "b"), false).unwrap());
    store.decide(&first, &person("bob"), false, None).unwrap();
    let third = held_id(store.ask(restore("alice", "c"), false).unwrap());
    let order: Vec<String> = store.list().unwrap().into_iter().map(|c| c.id).collect();
    assert_eq!(order, [second, third, first]);
}

#[test]
fn the_announcement_names_the_call_and_never_its_arguments() {
    let kit = Kit::new();
    let store = kit.store();
    let Standing::NewlyHeld(call) = store.ask(restore("alice", "secret-name"), false).unwrap()
    else {
        panic!("held");
    };
    let body =
        serde_json::to_string(&Announcement::of(&call, "https://rewind/ui/approvals")).unwrap();
    assert!(!body.contains("secret-name"), "{body}");
    assert!(body.contains(&call.id) && body.contains("web-01") && body.contains("alice"));
}
