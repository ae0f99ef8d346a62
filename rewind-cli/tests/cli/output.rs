//! What every command shares: `--help` with the exit codes, completions, and a reader that goes away.

use std::process::Stdio;

use tokio::io::AsyncReadExt;

use crate::env::{TestEnv, guard_args};

#[tokio::test]
async fn help_documents_the_exit_codes() {
    let env = TestEnv::start(51).await;
    let run = env.rewind(&["--help"]).await;
    run.expect_code(0);
    for line in [
        "Exit codes:",
        "0    ok",
        "2    bad usage",
        "3    refused by a rule",
        "4    a Zerto task failed",
        "5    a ZVM could not be reached",
        "6    a Zerto task was still running",
        "130  interrupted twice",
    ] {
        assert!(run.stdout.contains(line), "{line}: {run:#?}");
    }
}

#[tokio::test]
async fn completions_are_printed_for_each_shell() {
    let env = TestEnv::start(52).await;
    for (shell, marker) in [
        ("bash", "_rewind()"),
        ("zsh", "#compdef rewind"),
        ("fish", "complete -c rewind"),
    ] {
        let run = env.rewind(&["completions", shell]).await;
        run.expect_code(0);
        assert!(run.stdout.contains(marker), "{shell}: {run:#?}");
        assert!(run.stdout.contains("pre-tool-use"), "{shell}");
    }
    env.rewind(&["completions", "tcsh"]).await.expect_code(2);
}

#[tokio::test]
async fn a_reader_that_goes_away_ends_the_command_quietly_with_code_0() {
    let env = TestEnv::start(53).await;
    // A journal far larger than a pipe's buffer, so the writer meets the closed pipe whatever the
    // timing.
    let text = std::fs::read_to_string(env.journal_file()).unwrap_or_default();
    assert!(text.is_empty());
    env.rewind(&guard_args("web-01", "a", "b", "c"))
        .await
        .expect_code(0);
    let line = std::fs::read_to_string(env.journal_file()).unwrap();
    std::fs::write(env.journal_file(), line.repeat(3000)).unwrap();

    let mut child = env
        .command(&["journal"])
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    stdout.read_exact(&mut first).await.unwrap();
    drop(stdout);
    let out = child.wait_with_output().await.unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
