//! The binary: it prints its seed and one `<site> listening on http://ADDR` line per site, with
//! the real port when given port 0, and serves the default world.

use std::ffi::OsStr;
use std::process::{Output, Stdio};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout, Command};

/// The binary's stdout, line by line.
pub type StdoutLines = Lines<BufReader<ChildStdout>>;

/// Starts the binary on free loopback ports with `args` and `stderr` as asked; the child (killed
/// when dropped) and its stdout lines.
pub fn start_binary<S: AsRef<OsStr>>(args: &[S], stderr: Stdio) -> (Child, StdoutLines) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_zvm-sim"))
        .args(["--listen", "127.0.0.1:0", "--peer-listen", "127.0.0.1:0"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(stderr)
        .kill_on_drop(true)
        .spawn()
        .expect("the binary starts");
    let stdout = child.stdout.take().expect("the binary's stdout");
    (child, BufReader::new(stdout).lines())
}

/// Sends Ctrl-C (SIGINT) to the binary, as a user stopping it would, and waits (30 s at most) for
/// it to exit; what it wrote to the pipes left to it, and how it exited.
pub async fn stop_with_ctrl_c(child: Child) -> Output {
    let pid = child.id().expect("the binary runs").to_string();
    let sent = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status();
    assert!(sent.expect("kill runs").success());
    tokio::time::timeout(Duration::from_secs(30), child.wait_with_output())
        .await
        .expect("Ctrl-C stops the binary")
        .expect("the binary's exit")
}

#[tokio::test]
async fn the_binary_prints_its_seed_and_where_each_site_listens() {
    let (mut child, mut lines) = start_binary(&["--seed", "77"], Stdio::null());
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

#[tokio::test]
async fn a_start_up_error_is_one_line_without_a_backtrace_even_with_rust_backtrace_set() {
    let out = Command::new(env!("CARGO_BIN_EXE_zvm-sim"))
        .args(["--listen", "127.0.0.1:0", "--peer-listen", "127.0.0.1:0"])
        .args(["--world", "/no/such/world.toml"])
        .env("RUST_BACKTRACE", "1")
        .output()
        .await
        .expect("the binary runs");
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = said.lines().collect();
    assert_eq!(lines.len(), 1, "{said}");
    assert!(lines[0].starts_with("zvm-sim: "), "{said}");
    assert!(lines[0].contains("/no/such/world.toml"), "{said}");
    assert!(!said.contains("backtrace"), "{said}");
}
