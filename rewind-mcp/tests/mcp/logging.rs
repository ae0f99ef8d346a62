//! What the server writes on stderr at its default log level: rewind's own lines only, never a
//! third-party crate's log line (the host shows the server's stderr to its user).

use std::process::Stdio;

use serde_json::json;

use crate::helper::{Human, Protocol, Setup, TestEnv, call, is_error, line};

#[tokio::test]
async fn an_untrusted_certificate_is_the_tools_error_and_rustls_writes_nothing_on_stderr() {
    let env = TestEnv::start_with(
        zvm_sim::Options {
            tls: true,
            ..zvm_sim::Options::for_tests(71)
        },
        Setup::File,
    )
    .await;
    let log = env.dir.path().join("stderr.log");
    let stderr = Stdio::from(std::fs::File::create(&log).unwrap());
    let client = env
        .stdio_with_stderr(Human::unreachable(), Protocol::Legacy, stderr)
        .await;
    let result = call(&client, "zerto_find_protection", json!({"vm": "web-01"})).await;
    assert!(is_error(&result), "{result:?}");
    assert!(line(&result).contains("ca_cert"), "{}", line(&result));
    client.cancel().await.unwrap();
    let written = std::fs::read_to_string(&log).unwrap();
    assert!(
        !written.contains("failed to verify TLS certificate"),
        "a third-party log line reached stderr:\n{written}"
    );
}
