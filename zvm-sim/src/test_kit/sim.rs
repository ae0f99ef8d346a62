//! A fresh seeded simulator on free loopback ports ([`TestSim`]) with an HTTP client and the
//! control client, the ways a test starts one, an HTTP client that trusts a simulator's own
//! certificates ([`trusting_client`]), and the test's logs.

use super::control::Control;
use super::site::Site;
use crate::options::Options;
use crate::simulator::{Simulator, start};

/// Logs go to the test's output when `TEST_LOG` is set (its value is the filter, `debug` when empty).
pub fn init_logging() {
    let Some(filter) = std::env::var_os("TEST_LOG") else {
        return;
    };
    let filter = match filter.to_string_lossy().trim() {
        "" | "1" => "debug".to_owned(),
        other => other.to_owned(),
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_test_writer()
        .try_init();
}

/// A running simulator, an HTTP client and the control client.
#[derive(Debug)]
pub struct TestSim {
    /// The simulator; dropping it stops both sites.
    pub sim: Simulator,
    /// A plain HTTP client, for requests a test builds itself.
    pub http: reqwest::Client,
    /// The `/_sim` control API.
    pub control: Control,
}

/// A fresh simulator with `Options::for_tests(seed)`.
pub async fn spawn(seed: u64) -> TestSim {
    spawn_with(Options::for_tests(seed)).await
}

/// A fresh simulator whose clock is frozen, so time moves only through [`Control::advance`].
pub async fn spawn_frozen(seed: u64) -> TestSim {
    spawn_with(Options {
        time_scale: 0.0,
        ..Options::for_tests(seed)
    })
    .await
}

/// A fresh frozen simulator ([`spawn_frozen`]), Boston logged in as admin, and the identifier of
/// the VPG named `vpg`: how most tests of one VPG begin.
pub async fn frozen_with_vpg(seed: u64, vpg: &str) -> (TestSim, Site, String) {
    let t = spawn_frozen(seed).await;
    let (boston, vpg) = t.boston_with_vpg(vpg).await;
    (t, boston, vpg)
}

/// A fresh simulator with these options.
pub async fn spawn_with(options: Options) -> TestSim {
    init_logging();
    let sim = start(options).await.expect("the simulator starts");
    let http = reqwest::Client::new();
    let control = Control::with_client(http.clone(), &sim.local().url);
    TestSim { sim, http, control }
}

impl TestSim {
    /// Boston's URL (the local site).
    pub fn boston_url(&self) -> &str {
        &self.sim.local().url
    }

    /// Denver's URL (the peer site).
    pub fn denver_url(&self) -> &str {
        &self.sim.peer().url
    }

    /// Boston, logged in as admin.
    pub async fn boston(&self) -> Site {
        Site::login(&self.http, self.boston_url(), "admin", "admin").await
    }

    /// Denver, logged in as admin.
    pub async fn denver(&self) -> Site {
        Site::login(&self.http, self.denver_url(), "admin", "admin").await
    }

    /// Boston and Denver, each logged in as admin.
    pub async fn both_sites(&self) -> (Site, Site) {
        (self.boston().await, self.denver().await)
    }

    /// Boston, logged in as admin, and the identifier of the VPG named `vpg`.
    pub async fn boston_with_vpg(&self, vpg: &str) -> (Site, String) {
        let boston = self.boston().await;
        let vpg = boston.vpg_id(vpg).await;
        (boston, vpg)
    }
}

/// An HTTP client that trusts exactly the certificates `sim`'s sites serve (their PEM files) when
/// they serve HTTPS, and a plain one when they serve HTTP: how a test, a bench or the acceptance
/// suite reaches a simulator started with `tls`.
pub fn trusting_client(sim: &Simulator) -> reqwest::Client {
    let certificates: Vec<reqwest::Certificate> = [sim.local(), sim.peer()]
        .into_iter()
        .filter_map(|site| site.certificate_pem.as_ref())
        .map(|pem| {
            let bytes = std::fs::read(pem)
                .unwrap_or_else(|e| panic!("the certificate {}: {e}", pem.display()));
            reqwest::Certificate::from_pem(&bytes).expect("a PEM certificate")
        })
        .collect();
    if certificates.is_empty() {
        return reqwest::Client::new();
    }
    reqwest::Client::builder()
        .tls_certs_only(certificates)
        .build()
        .expect("an HTTPS client of the simulator")
}
