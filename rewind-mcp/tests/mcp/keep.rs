//! `zerto_keep_way_back`: an agent may propose keeping a change's tags past the journal; only the
//! human's yes, asked every time, makes the server keep them.

use serde_json::json;

use crate::helper::*;

/// Keeps db-01's change `c1` (one VPG, web-dr, whose repository is at Denver) as `human` answers.
async fn keep_as(
    human: &Human,
    protocol: Protocol,
    seed: u64,
) -> (TestEnv, serde_json::Value, bool) {
    let env = TestEnv::start(seed, Setup::File).await;
    let client = env.stdio(human.clone(), protocol).await;
    expect_guarded(&guard(&client, "db-01", "edit", "c1").await);
    let result = call(
        &client,
        "zerto_keep_way_back",
        json!({"vm": "db-01", "change_id": "c1"}),
    )
    .await;
    let failed = result.is_error == Some(true);
    let answer = structured(&result).clone();
    client.cancel().await.unwrap();
    (env, answer, failed)
}

#[tokio::test]
async fn on_the_humans_yes_each_tag_is_kept_in_a_retention_set_and_journaled() {
    for (protocol, seed) in [(Protocol::Legacy, 61), (Protocol::Mrtr, 62)] {
        let human = Human::answering(Answer::Yes);
        let (env, answer, failed) = keep_as(&human, protocol, seed).await;
        assert!(!failed, "{protocol:?}: {answer}");
        assert_eq!(human.times_asked(), 1, "asked once, every time");
        let vpg = &answer["vpgs"][0];
        assert_eq!(vpg["vpg_name"], "web-dr", "{answer}");
        assert_eq!(vpg["outcome"], "kept", "{answer}");
        let id = vpg["retention_set"]["retention_set_id"].as_str().unwrap();
        let at_zerto = env.control.retention_sets().await;
        assert_eq!(at_zerto.len(), 1, "{at_zerto:?}");
        assert_eq!(at_zerto[0]["RetentionSetIdentifier"], id);
        let record = env.journal_record("c1");
        assert_eq!(record["kind"], "keep", "{record}");
        assert_eq!(
            record["vpgs"][0]["kept"]["retention_set_id"], id,
            "{record}"
        );
    }
}

#[tokio::test]
async fn without_a_yes_nothing_is_kept_and_the_answer_says_why() {
    for (human, why, seed) in [
        (Human::answering(Answer::No), "the human said no", 63),
        (Human::answering(Answer::Decline), "the human declined", 64),
        (Human::unreachable(), "the client cannot show a form", 65),
    ] {
        let (env, answer, failed) = keep_as(&human, Protocol::Legacy, seed).await;
        assert!(failed, "{answer}");
        assert_eq!(answer["kind"], "refused", "{answer}");
        let message = answer["message"].as_str().unwrap();
        assert!(
            message.contains(why) && message.contains("nothing was kept"),
            "{message}"
        );
        assert!(env.control.retention_sets().await.is_empty());
    }
}
