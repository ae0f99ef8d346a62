//! The binary: it prints its seed and one `<site> listening on http://ADDR` line per site, with
//! the real port when given port 0, and serves the default world.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

#[tokio::test]
async fn the_binary_prints_its_seed_and_where_each_site_listens() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_zvm-sim"))
        .args([
            "--listen",
            "127.0.0.1:0",
            "--peer-listen",
            "127.0.0.1:0",
            "--seed",
            "77",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the binary starts");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut read = Vec::new();
    while read.len() < 3 {
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("the binary prints its start-up lines in time")
            .unwrap()
            .expect("a line");
        read.push(line);
    }
    assert_eq!(read[0], "zvm-sim seed 77 (run again with --seed 77)");
    let boston = read[1]
        .strip_prefix("Boston listening on ")
        .expect("Boston's line");
    assert!(read[2].starts_with("Denver listening on http://127.0.0.1:"));
    assert!(!boston.ends_with(":0"), "the real port is shown: {boston}");

    let clock = reqwest::get(format!("{boston}/_sim/clock"))
        .await
        .expect("the site answers");
    assert!(clock.status().is_success());
    child.kill().await.unwrap();
}
