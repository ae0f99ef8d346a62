//! The simulator's `/_sim` control API, the suite's ground truth (what Zerto really ran, every call
//! each site received, the files inside the guests) and its levers (faults, the clock, timings): the
//! workspace's test kit, over an HTTP client that trusts the sites' own certificates when they serve
//! HTTPS.
//!
//! Like every other client of the simulator, the suite talks to it over HTTP with its own JSON, never
//! through the simulator's types.

use std::path::PathBuf;

pub use zvm_sim::test_kit::{CLIENT_ID, CLIENT_SECRET, Control, INSERT};

/// A client of the control API served at `boston`; over HTTPS it trusts exactly the sites' own
/// certificates (PEM files).
pub fn control(boston: &str, certificates: &[PathBuf]) -> Control {
    if certificates.is_empty() {
        return Control::new(boston);
    }
    let certs = certificates.iter().map(|path| {
        let pem = std::fs::read(path)
            .unwrap_or_else(|e| panic!("the certificate {}: {e}", path.display()));
        reqwest::Certificate::from_pem(&pem).expect("a PEM certificate")
    });
    let http = reqwest::Client::builder()
        .tls_certs_only(certs)
        .build()
        .expect("an HTTPS client of the simulator");
    Control::with_client(http, boston)
}
