//! `rewind demo`: the whole loop on the in-process simulator, with no configuration.

use crate::env::TestEnv;
use zvm_sim::test_kit::texts;

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
        "== 5. What changed since the tag",
        "app.conf",
        "== 6. Recover sda1/etc/app/app.conf",
        "RECOVERED 1 file(s) of web-01",
        "unmounted",
        "same as the original",
        "== 8. Restore web-01 to the tag beside it",
        "rewind restore commit web-01",
        "== 9.",
        "recover_file",
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
    assert_eq!(sums["original"], sums["recovered"]);
    assert_eq!(result["recovery"]["files"][0]["sha256"], sums["original"]);
    assert_eq!(result["diff"]["counts"]["changed"], 1, "{}", result["diff"]);
    assert_eq!(
        result["restore"]["verdict"], "waiting",
        "a demo never commits a restore"
    );
    let kinds: Vec<&str> = texts(&result["journal"]["records"], "kind");
    assert_eq!(kinds, ["guard", "recovery", "recovery"]);
}
