//! What the CLI writes on stderr at its default log level: rewind's own lines only, never a third-party
//! crate's log line next to them.

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
