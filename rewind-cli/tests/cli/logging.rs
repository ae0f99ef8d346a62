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

/// A Keycloak that takes 2.5 s to answer at Boston.
async fn slow_boston_sign_in(env: &TestEnv) {
    env.control
        .fault(
            serde_json::json!({"Method": "POST", "Path": "/auth/**", "Site": "Boston",
                                  "Action": "Latency", "LatencyMs": 2500}),
        )
        .await;
}

#[tokio::test]
async fn with_v_a_slow_zvm_is_named_in_the_log_with_what_is_awaited_and_since_when() {
    let env = TestEnv::start(63).await;
    slow_boston_sign_in(&env).await;
    let run = env.rewind(&["-v", "find", "web-01"]).await;
    run.expect_code(0);
    let waited = run
        .stderr
        .lines()
        .find(|l| l.contains("waiting for site boston: signing in at http://"))
        .unwrap_or_else(|| panic!("no line names the wait:\n{}", run.stderr));
    assert!(waited.contains("for 1."), "{waited}");
}

#[tokio::test]
async fn on_a_terminal_a_slow_zvm_is_named_on_the_progress_line() {
    let env = TestEnv::start(64).await;
    slow_boston_sign_in(&env).await;
    // util-linux `script` runs the command on a pseudo-terminal, as a person's shell would.
    let rewind = env.command(&["find", "web-01"]);
    let rewind = rewind.as_std();
    let line: Vec<String> = std::iter::once(rewind.get_program())
        .chain(rewind.get_args())
        .map(|a| format!("'{}'", a.to_string_lossy()))
        .collect();
    let out = tokio::process::Command::new("script")
        .args(["-qec", &line.join(" "), "/dev/null"])
        .env_clear()
        .envs(rewind.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .env("TERM", "xterm")
        .output()
        .await
        .expect("script runs");
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("waiting for boston: signing in"),
        "the terminal showed:\n{shown}"
    );
    assert!(shown.contains("3 VPG(s)"), "{shown}");
}
