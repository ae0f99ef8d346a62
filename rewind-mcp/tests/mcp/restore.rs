//! `zerto_restore_vm`: an agent may propose restoring a VM to its tag; only the human's yes, asked
//! every time and naming what is lost, makes the server restore it, and then it waits for the
//! human's commit. Anything but a yes leaves the VM as it is and is journaled as declined.

use serde_json::json;

use crate::helper::*;

const APP_CONF: &str = "sda1/etc/app/app.conf";

/// Guards web-01 for `c1`, breaks its app.conf, and proposes a restore as `human` answers.
async fn restore_as(
    human: &Human,
    protocol: Protocol,
    seed: u64,
    how: serde_json::Value,
) -> (TestEnv, serde_json::Value, bool) {
    let env = TestEnv::start(seed, Setup::File).await;
    let client = env.stdio(human.clone(), protocol).await;
    expect_guarded(&guard(&client, "web-01", "edit", "c1").await);
    env.control.put_file("web-01", APP_CONF, b"broken\n").await;
    let mut args = json!({"vm": "web-01", "change_id": "c1"});
    args.as_object_mut()
        .unwrap()
        .extend(how.as_object().unwrap().clone());
    let result = call(&client, "zerto_restore_vm", args).await;
    let failed = result.is_error == Some(true);
    let answer = structured(&result).clone();
    client.cancel().await.unwrap();
    (env, answer, failed)
}

#[tokio::test]
async fn on_the_humans_yes_the_vm_is_restored_and_waits_for_their_commit() {
    for (protocol, seed) in [(Protocol::Legacy, 71), (Protocol::Mrtr, 72)] {
        let human = Human::answering(Answer::Yes);
        let how = json!({"as_name": "web-01-back"});
        let (env, answer, failed) = restore_as(&human, protocol, seed, how).await;
        assert!(!failed, "{protocol:?}: {answer}");
        assert_eq!(human.times_asked(), 1, "asked once, every time");
        assert_eq!(answer["verdict"], "waiting", "{answer}");
        assert_eq!(answer["operation"], "restore_vm", "{answer}");
        let next = answer["next_step"].as_str().unwrap();
        assert!(next.contains("Never commit it yourself"), "{next}");
        assert_ne!(env.control.file("web-01-back", APP_CONF).await, b"broken\n");
        assert_eq!(env.control.file("web-01", APP_CONF).await, b"broken\n");
        let record = env.journal_record("c1");
        assert_eq!(record["verdict"], "waiting", "{record}");
        assert_eq!(record["action"], "restore vm as web-01-back", "{record}");
    }
}

#[tokio::test]
async fn without_a_yes_nothing_is_restored_and_the_journal_says_it_was_declined() {
    for (human, why, seed) in [
        (Human::answering(Answer::No), "the human said no", 73),
        (Human::answering(Answer::Decline), "the human declined", 74),
        (Human::unreachable(), "the client cannot show a form", 75),
    ] {
        let how = json!({"in_place": true});
        let (env, answer, failed) = restore_as(&human, Protocol::Legacy, seed, how).await;
        assert!(failed, "{answer}");
        assert_eq!(answer["kind"], "refused", "{answer}");
        let message = answer["message"].as_str().unwrap();
        assert!(
            message.contains(why) && message.contains("nothing was restored"),
            "{message}"
        );
        assert!(
            env.control
                .tasks_of_type("JournalVmRestore")
                .await
                .is_empty()
        );
        assert_eq!(env.control.file("web-01", APP_CONF).await, b"broken\n");
        let record = env.journal_record("c1");
        assert_eq!(record["verdict"], "declined", "{record}");
        assert_eq!(record["action"], "restore vm in place", "{record}");
    }
}

#[tokio::test]
async fn a_restore_must_say_beside_or_in_place_before_anyone_is_asked() {
    let human = Human::answering(Answer::Yes);
    let (env, answer, failed) = restore_as(&human, Protocol::Legacy, 76, json!({})).await;
    assert!(failed, "{answer}");
    assert_eq!(human.times_asked(), 0);
    assert!(answer["message"].as_str().unwrap().contains("as_name"));
    assert!(
        env.control
            .tasks_of_type("JournalVmRestore")
            .await
            .is_empty()
    );
}
