//! `rewind demo`: the whole loop on the in-process simulator, with no configuration.

use crate::env::TestEnv;

#[tokio::test]
async fn the_demo_walks_the_loop_and_exits_0() {
    let env = TestEnv::start(61).await;
    // The demo needs no configuration: remove it to prove it.
    std::fs::remove_file(env.config_file()).unwrap();
    let run = env.rewind(&["demo"]).await;
    run.expect_code(0);
    for step in [
        "== 1. Find web-01",
        "== 2. Guard web-01",
        "GUARDED: web-01",
        "== 3.",
        "== 4.",
        "demo-app-conf",
    ] {
        assert!(run.stdout.contains(step), "{step}: {run:#?}");
    }
    assert!(
        !env.journal_file().exists(),
        "the user's journal is never touched"
    );
    assert!(
        !env.catalog_file().exists(),
        "the user's catalog is never touched"
    );

    let (run, json) = env.rewind_json(&["demo", "--seed", "7"]).await;
    run.expect_code(0);
    let result = &json["result"];
    assert_eq!(result["seed"], 7);
    assert_eq!(result["guard"]["verdict"], "guarded");
    assert_eq!(result["protection"]["vpgs"].as_array().unwrap().len(), 3);
    let sums = &result["checksums"];
    assert_ne!(sums["original"], sums["changed"]);
    assert_eq!(result["journal"]["records"].as_array().unwrap().len(), 1);
}
