//! What the CLI writes on stderr: at its default log level rewind's own lines only, never a
//! third-party crate's log line next to them; and plain text when stderr is not a terminal.

use crate::env::TestEnv;

#[tokio::test]
async fn an_untrusted_certificate_is_one_clear_line_on_stderr_without_rustls_own_error_line() {
    let env = TestEnv::start_with(zvm_sim::Options {
        tls: true,
        ..zvm_sim::Options::for_tests(61)
    })
    .await;
    // Both sites are HTTPS with a self-signed certificate this configuration does not trust.
    let run = env.rewind(&["find", "web-01"]).await;
    run.expect_code(5);
    let line = run.one_error_line();
    assert!(line.contains("ca_cert"), "{line}");
    assert!(
        !run.stderr.contains("failed to verify TLS certificate"),
        "a third-party log line reached stderr:\n{}",
        run.stderr
    );
    assert_eq!(run.stderr.trim_end().lines().count(), 1, "{}", run.stderr);
}

#[tokio::test]
async fn log_lines_on_a_stderr_that_is_not_a_terminal_carry_no_colour_codes() {
    let env = TestEnv::start(62).await;
    let input = r#"{"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {}}"#;
    // -v logs the hook's decision at info; stderr is a pipe here, as in a script, a CI log or a host.
    let run = env
        .rewind_with_stdin(&["-v", "hook", "pre-tool-use"], Some(input))
        .await;
    run.expect_code(0);
    assert!(run.stderr.contains("PreToolUse"), "{}", run.stderr);
    assert!(
        !run.stderr.contains('\u{1b}'),
        "a terminal escape reached a stderr that is not a terminal: {:?}",
        run.stderr
    );
}
