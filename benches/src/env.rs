//! A simulator with fixed timings and the client as users run it.
//!
//! The simulator runs in-process ([`zvm_sim::start`]) on loopback port 0, with a fixed task duration D
//! and listing lag L, and its task-duration jitter off (`Options::task_jitter` 0), so every insert runs
//! exactly D and the floors D + L and N × D are the real ones. The harness still reads each insert
//! task's real duration back from `/_sim/tasks` (see [`crate::truth`]): with a jitter, it reports the
//! ratio to that exact floor beside the ratio to the nominal one.
//!
//! The client is a [`Rewind`] configured as the CLI and the MCP server configure it: both sites
//! (`boston`, `denver`), each with the `rewind` service client, default guard and HTTP settings, a
//! journal and a catalog in a temporary folder. One such client serves a whole bench, as one MCP server
//! serves many calls, so it fetches exactly one token per site.
//!
//! The sites are served over plain HTTP, or over HTTPS ([`Transport::Https`]) as appliances serve
//! them: each with its own self-signed certificate, which the client pins as a user does after
//! `rewind trust` (the site's `ca_cert`).

use std::time::Duration;

use rewind_core::{Config, Rewind, SiteConfig};
pub use zvm_sim::test_kit::{CLIENT_ID, CLIENT_SECRET};
use zvm_sim::test_kit::{Control, trusting_client};
use zvm_sim::{Options, Simulator, SiteEndpoint, WorldSpec};

use crate::truth::GroundTruth;

/// The seed of every bench simulator, so a rerun builds the same world.
pub const SEED: u64 = 9;
/// The token lifetime of a bench simulator. Longer than any bench, so a bench needs exactly one token
/// per site: with the appliance's 300 s, a bench longer than about 270 s would rightly fetch a second
/// one, which says nothing about the cache.
pub const TOKEN_TTL: Duration = Duration::from_secs(3600);

/// The simulated timings of a bench.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    /// D: the nominal duration of an insert task (before the simulator's jitter).
    pub task: Duration,
    /// L: how long after its task Completed a tagged checkpoint is listed.
    pub listing_lag: Duration,
    /// The simulator's jitter on task durations, a fraction of D (`Options::task_jitter`); 0 gives
    /// every insert exactly D.
    pub task_jitter: f64,
}

impl Timing {
    /// The timings of the measured run: D = 50 ms exactly, L = 20 ms.
    pub const BENCH: Timing = Timing {
        task: Duration::from_millis(50),
        listing_lag: Duration::from_millis(20),
        task_jitter: 0.0,
    };

    /// The simulator's default timings, closer to an appliance's: D = 2 s exactly, L = 0.5 s. Here a
    /// poll that lands late costs little in ratio, but every extra read is a request to a shared
    /// appliance, so the summary also gives the reads each insert cost.
    pub const APPLIANCE: Timing = Timing {
        task: Duration::from_secs(2),
        listing_lag: Duration::from_millis(500),
        task_jitter: 0.0,
    };

    /// The timings of the smoke run under `cargo test`, which proves the ground-truth invariants and
    /// that the benches still run, not their speed: short, so the 64-guard queue takes well under a
    /// second.
    pub const SMOKE: Timing = Timing {
        task: Duration::from_millis(10),
        listing_lag: Duration::from_millis(4),
        task_jitter: 0.0,
    };
}

/// Whether criterion measures: `cargo bench` passes `--bench`; `cargo test` does not, and criterion
/// then runs each bench once, as a smoke run.
pub fn measuring() -> bool {
    std::env::args().any(|a| a == "--bench")
}

/// The runtime a bench runs on: tokio's default of one worker thread per core, as the MCP server
/// runs, the simulator on it too.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("a tokio runtime: {e}"))
}

/// How the simulator serves its sites.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// Plain HTTP.
    Http,
    /// HTTPS, each site with a self-signed certificate of its own that the client pins.
    Https,
}

/// Which configured sites a client has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sites {
    /// Boston only.
    Boston,
    /// Boston and Denver, as users configure a paired pair of ZVMs.
    Both,
}

/// One bench's simulator and client.
#[derive(Debug)]
pub struct BenchEnv {
    sim: Simulator,
    rewind: Rewind,
    control: Control,
    dir: tempfile::TempDir,
    timing: Timing,
}

impl BenchEnv {
    /// Starts a simulator serving `world` with `timing` over plain HTTP, and a client of both its
    /// sites.
    pub async fn start(world: WorldSpec, timing: Timing) -> Result<BenchEnv, HarnessError> {
        BenchEnv::start_over(world, timing, Transport::Http).await
    }

    /// Starts a simulator serving `world` with `timing` over `transport`, and a client of both its
    /// sites.
    pub async fn start_over(
        world: WorldSpec,
        timing: Timing,
        transport: Transport,
    ) -> Result<BenchEnv, HarnessError> {
        let sim = zvm_sim::start(Options {
            seed: SEED,
            world,
            task_duration: timing.task,
            task_jitter: timing.task_jitter,
            listing_lag: timing.listing_lag,
            token_ttl: TOKEN_TTL,
            tls: transport == Transport::Https,
            ..Options::for_tests(SEED)
        })
        .await?;
        let dir = tempfile::tempdir()?;
        let rewind = client(&sim, dir.path(), Sites::Both)?;
        let control = Control::with_client(trusting_client(&sim), &sim.local().url);
        Ok(BenchEnv {
            sim,
            rewind,
            control,
            dir,
            timing,
        })
    }

    /// The bench's client (both sites), shared by every iteration of the bench.
    pub fn rewind(&self) -> &Rewind {
        &self.rewind
    }

    /// The simulator, for a client configured elsewhere (a `rewind` process's configuration file).
    pub fn sim(&self) -> &Simulator {
        &self.sim
    }

    /// The timings the simulator runs with.
    pub fn timing(&self) -> Timing {
        self.timing
    }

    /// A new client with its own connections and an empty token cache, as a new process has.
    pub fn new_client(&self, sites: Sites) -> Result<Rewind, HarnessError> {
        client(&self.sim, self.dir.path(), sites)
    }

    /// The simulator's ground truth now: every call both sites received and every task they ran.
    pub async fn ground_truth(&self) -> GroundTruth {
        let calls = self.control.get("calls").await;
        let tasks = self.control.get("tasks").await;
        GroundTruth::from_json(&calls, &tasks)
    }

    /// The simulator's `/_sim` control API (the workspace's test kit).
    pub fn control(&self) -> &Control {
        &self.control
    }

    /// Stops the simulator.
    pub async fn shutdown(self) {
        self.sim.shutdown().await;
    }
}

/// Whether the benches' clients keep their journal in PostgreSQL (`REWIND_BENCH_JOURNAL=postgresql`:
/// a fresh database of the test kit's server per client, as a team server's replica would), rather
/// than in a file of their folder.
pub fn journal_in_postgresql() -> bool {
    std::env::var("REWIND_BENCH_JOURNAL").is_ok_and(|v| v == "postgresql")
}

/// A client of `sites` of `sim`, with its catalog and journal in `dir` (or the journal in
/// PostgreSQL: [`journal_in_postgresql`]).
fn client(sim: &Simulator, dir: &std::path::Path, sites: Sites) -> Result<Rewind, HarnessError> {
    let failed = |e: &dyn std::fmt::Display| HarnessError::Client(e.to_string());
    let site = |name: &str, at: &SiteEndpoint| {
        let mut site = SiteConfig::with_client(name, &at.url, CLIENT_ID, CLIENT_SECRET)
            .map_err(|e| failed(&e))?;
        site.ca_cert = at.certificate_pem.clone();
        Ok::<_, HarnessError>(site)
    };
    let mut config = Config {
        sites: vec![site("boston", sim.local())?],
        ..Config::new(dir.join("catalog.toml"), dir.join("journal.jsonl"))
    };
    // The simulator's tasks take 50 ms, not an appliance's seconds: poll as finely as allowed.
    config.guard.poll_floor = rewind_core::zvm::task::MIN_POLL;
    if journal_in_postgresql() {
        let url = zvm_sim::test_kit::Postgres::shared().fresh_database();
        config.journal_database =
            Some(rewind_core::config::JournalDatabase::parse(&url).map_err(|e| failed(&e))?);
    }
    if sites == Sites::Both {
        config.sites.push(site("denver", sim.peer())?);
    }
    Rewind::new(config).map_err(|e| failed(&e))
}

/// Why the harness could not set up or read a bench.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// The simulator did not start.
    #[error("the simulator did not start: {0}")]
    Start(#[from] zvm_sim::StartError),
    /// The client could not be configured or built.
    #[error("rewind-core could not be set up for the simulator: {0}")]
    Client(String),
    /// A temporary folder for the catalog and the journal could not be made.
    #[error("no temporary folder for the journal and the catalog: {0}")]
    TempDir(#[from] std::io::Error),
}
