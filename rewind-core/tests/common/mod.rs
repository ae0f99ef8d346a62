//! The one test helper of rewind-core: a fresh seeded simulator on loopback port 0, a `Rewind`
//! configured for it (Boston, optionally Denver) with the `rewind`/`rewind-secret` service client and
//! temporary catalog and journal paths, and the workspace's `/_sim` client
//! (`zvm_sim::test_kit::Control`). A fault a test needs (a lost or withheld answer, a download cut
//! off, another client's insert first, a 503) is one of the simulator's fault rules, set through
//! `Control::fault`.
//!
//! Tests talk to the simulator over HTTP only, with their own JSON (`serde_json::Value`): rewind-core
//! never sees the simulator's types.

#![allow(dead_code)]

use rewind_core::audit_journal::{JournalFilter, JournalRecord};
use rewind_core::{Config, GuardReport, GuardRequest, NoProgress, Rewind, SiteConfig, Verdict};

// Each test binary that includes this module uses some of these.
#[allow(unused_imports)]
pub use zvm_sim::test_kit::{CLIENT_ID, CLIENT_SECRET, Control, Site, state_of};

/// The guard request of every test: claude-code editing app.conf on `vm`, for `change`.
pub fn request(vm: &str, change: &str) -> GuardRequest {
    GuardRequest {
        vm: vm.into(),
        agent: "claude-code".into(),
        action: "edit app.conf".into(),
        change_id: change.into(),
    }
}

/// Guards `vm` for `change` through `rewind`; the guard must run, whatever its verdict.
pub async fn guard(rewind: &Rewind, vm: &str, change: &str) -> GuardReport {
    rewind
        .guard(request(vm, change), &NoProgress)
        .await
        .expect("the guard runs")
}

/// Guards `vm` for `change` through `rewind` and asserts it is guarded.
pub async fn guarded(rewind: &Rewind, vm: &str, change: &str) -> GuardReport {
    let report = guard(rewind, vm, change).await;
    assert_eq!(report.verdict, Verdict::Guarded, "{}", report.summary());
    report
}

/// Every record of `rewind`'s journal, oldest first.
pub fn journal_records(rewind: &Rewind) -> Vec<JournalRecord> {
    rewind
        .journal()
        .read(&JournalFilter::default())
        .expect("the journal reads")
        .records
}

/// Which configured sites a test wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sites {
    /// Boston only.
    Boston,
    /// Boston and Denver.
    Both,
}

/// A started simulator, a Rewind for it, and the control client.
pub struct TestEnv {
    pub sim: zvm_sim::Simulator,
    pub rewind: Rewind,
    pub control: Control,
    pub dir: tempfile::TempDir,
    pub sites: Sites,
}

impl TestEnv {
    /// A simulator with the test options of `seed`, and Boston configured.
    pub async fn start(seed: u64) -> TestEnv {
        TestEnv::start_with(zvm_sim::Options::for_tests(seed), Sites::Boston).await
    }

    /// A simulator with `options`, and `sites` configured.
    pub async fn start_with(options: zvm_sim::Options, sites: Sites) -> TestEnv {
        zvm_sim::test_kit::init_logging();
        let sim = zvm_sim::start(options).await.expect("the simulator starts");
        let dir = tempfile::tempdir().expect("a temporary folder");
        let control = Control::new(&sim.local().url);
        let rewind = Rewind::new(build_config(&sim, dir.path(), sites, |c| c)).expect("a Rewind");
        TestEnv {
            sim,
            rewind,
            control,
            dir,
            sites,
        }
    }

    /// Boston's site configuration (service client), at `url`.
    pub fn boston_at(&self, url: &str) -> SiteConfig {
        SiteConfig::with_client("boston", url, CLIENT_ID, CLIENT_SECRET).unwrap()
    }

    /// The configuration of this environment's sites, with temporary paths, changed by `customize`.
    pub fn config_with(&self, customize: impl FnOnce(Config) -> Config) -> Config {
        build_config(&self.sim, self.dir.path(), self.sites, customize)
    }

    /// Another Rewind for the same simulator (as a second process would have), changed by `customize`.
    pub fn rewind_with(&self, customize: impl FnOnce(Config) -> Config) -> Rewind {
        Rewind::new(self.config_with(customize)).expect("a Rewind")
    }

    /// Another Rewind whose Boston signs in as `user` with `password`.
    pub fn rewind_as_user(&self, user: &str, password: &str) -> Rewind {
        let site = SiteConfig::with_password("boston", &self.sim.local().url, user, password);
        self.rewind_signing_in(site.unwrap())
    }

    /// Another Rewind whose Boston signs in as service client `id` with `secret`.
    pub fn rewind_as_client(&self, id: &str, secret: &str) -> Rewind {
        let site = SiteConfig::with_client("boston", &self.sim.local().url, id, secret);
        self.rewind_signing_in(site.unwrap())
    }

    fn rewind_signing_in(&self, boston: SiteConfig) -> Rewind {
        self.rewind_with(|mut c| {
            c.sites[0] = boston;
            c
        })
    }

    /// The identifier of the VPG named `name`, from the simulator's `/_sim/vpgs`.
    pub async fn vpg_id(&self, name: &str) -> String {
        self.control.vpg_id(name).await
    }

    /// The insert tasks the simulator has run, as `(TaskIdentifier, VpgIdentifier, State)`.
    pub async fn insert_tasks(&self) -> Vec<(String, String, i64)> {
        self.control
            .inserts(None)
            .await
            .into_iter()
            .map(|t| {
                (
                    t["TaskIdentifier"].as_str().unwrap_or_default().to_string(),
                    t["VpgIdentifier"].as_str().unwrap_or_default().to_string(),
                    state_of(&t),
                )
            })
            .collect()
    }
}

/// The configuration of `sites` of `sim` (Boston first), with the catalog and journal in `dir`,
/// changed by `customize`.
fn build_config(
    sim: &zvm_sim::Simulator,
    dir: &std::path::Path,
    sites: Sites,
    customize: impl FnOnce(Config) -> Config,
) -> Config {
    let site = |name, url: &str| SiteConfig::with_client(name, url, CLIENT_ID, CLIENT_SECRET);
    let mut config = Config {
        sites: vec![site("boston", &sim.local().url).unwrap()],
        ..Config::new(dir.join("catalog.toml"), dir.join("journal.jsonl"))
    };
    // The simulator's tasks take 50 ms, not an appliance's seconds: poll as finely as allowed.
    config.guard.poll_floor = rewind_core::zvm::task::MIN_POLL;
    if sites == Sites::Both {
        config.sites.push(site("denver", &sim.peer().url).unwrap());
    }
    customize(config)
}
