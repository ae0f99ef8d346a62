//! # zvm-sim: a simulated ZVM 10.x appliance
//!
//! One process serves two sites, a local one and its peer, each a ZVM on its own listen address with
//! its own Keycloak token endpoint, sharing one world. It behaves like a real appliance, including its
//! inconvenient parts: a write answers with a task id, and only the task says what happened.
//!
//! ## Map
//!
//! - [`start`] binds both sites and serves them in the background (tests, `rewind demo`);
//!   [`run`] does the same until a shutdown future resolves (the binary); [`app`] is one site's
//!   router, for in-process handler tests with tower's `oneshot`.
//! - [`Options`]: listen addresses, seed, token lifetime, session limit, timings, time scale,
//!   world, HTTPS and the state file; [`Simulator`] and [`SiteEndpoint`] for what started.
//! - `decisions`: every decision taken where the real API is silent, and every default.
//! - `world`: the model (sites, VMs, VPGs, journals with their hard limits and history alerts,
//!   Extended Journal Copy repositories and retention sets, guest files, tasks and the operations
//!   they carry out, FLR sessions, Keycloak, call log, fault rules, simulated clock), behind one
//!   `std::sync::Mutex`, advanced lazily at the start of each request; also world files and
//!   generated worlds ([`WorldSpec`]) and the saved-state document.
//! - `api`: the `/v1` and Keycloak handlers, one file per resource, plus the extractors that bind
//!   query and body keys case-insensitively, the bearer check, the fault layer and the call log.
//! - `faults`: fault rules, their path patterns and their seeded decisions.
//! - `serve`: serving a site with axum-server, over HTTP or HTTPS; `tls`: its certificates.
//! - `wire`: the simulator's own PascalCase JSON views of the model.
//! - `control`: the `/_sim` control API (reset, saved state, clock, timings, resync, status,
//!   journal bursts, calls, tasks, retention sets, files, faults).
//! - [`test_kit`] (feature `test-kit`): the workspace's one test kit: a seeded simulator, a typed
//!   client of `/_sim` and a small ZVM client.
//! - `fuzzing` (hidden): the entry point of the request-parsing fuzz target and of the test that
//!   replays its corpus; not part of the API.
//!
//! ## Concurrency
//!
//! The world lives in one `std::sync::Mutex`. Handlers lock it, bring the world to "now", read or
//! change it, and unlock, all without an `.await` in between, so the lock is never held across a
//! suspension point and a plain mutex is both correct and the fastest choice.

mod api;
mod control;
pub mod decisions;
mod faults;
#[doc(hidden)]
pub mod fuzzing;
mod metrics;
mod realm;
mod serve;
#[cfg(feature = "test-kit")]
pub mod test_kit;
mod tls;
mod wire;
mod world;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use chrono::{DateTime, Utc};

pub use api::coverage_matrix;
pub use tls::TlsError;
pub use world::SiteRole;
pub use world::files::PathError;
pub use world::spec::{
    ClientSpec, GuestOs, RepositorySpec, Role, SiteSpec, UserSpec, VmSpec, VpgSpec, WorldError,
    WorldSpec,
};
pub use world::state::{STATE_FORMAT, StateError};

use world::auth::Lifetimes;
use world::clock::SimTime;
use world::{Setup, Timings, World};

/// How to run the simulator. `Options::default()` gives the binary's defaults.
#[derive(Debug, Clone)]
pub struct Options {
    /// The local site's listen address (default `127.0.0.1:9669`; port 0 picks a free port).
    pub listen: SocketAddr,
    /// The peer site's listen address (default `127.0.0.1:9670`).
    pub peer_listen: SocketAddr,
    /// The seed of every random choice (default: random, and printed at start-up by the binary).
    pub seed: u64,
    /// Access-token lifetime on the simulated clock (default 300 s).
    pub token_ttl: Duration,
    /// When set, issuing a new token to a client or user revokes its older tokens at that site.
    pub session_limit: bool,
    /// Nominal task duration (default 2000 ms), with a seeded jitter of ± `task_jitter`.
    pub task_duration: Duration,
    /// The jitter on every task's duration, as a fraction of it: each task runs a seeded uniform
    /// factor in `1 ± task_jitter` of `task_duration` (default 0.2; 0 gives exact durations; at least
    /// 0 and less than 1).
    pub task_jitter: f64,
    /// Completed insert → checkpoint listed (default 500 ms).
    pub listing_lag: Duration,
    /// Simulated seconds per real second (default 1.0; 0 freezes time).
    pub time_scale: f64,
    /// Where simulated time starts. `None`: the wall clock at start (rounded down to the second),
    /// or, with a time scale of 0, the fixed 2026-01-01T00:00:00Z, so a frozen run is repeatable.
    pub epoch: Option<DateTime<Utc>>,
    /// The world (default: the embedded default world; see also [`WorldSpec::from_file`] and
    /// [`WorldSpec::generate`]).
    pub world: WorldSpec,
    /// Serve each site over HTTPS with its own self-signed certificate (default false).
    pub tls: bool,
    /// Where the certificates are kept: `<site>.pem` and `<site>.key.pem`, reused when present,
    /// made and written when not. `None`: a fresh temporary folder, removed when the simulator
    /// stops.
    pub tls_dir: Option<std::path::PathBuf>,
    /// A saved state: loaded at start when the file exists (instead of the initial world), written
    /// when the simulator shuts down ([`Simulator::shutdown`], Ctrl-C in the binary).
    pub state_file: Option<std::path::PathBuf>,
    /// How long a request's body may take to arrive (default 30 s); past it the answer is 408.
    pub body_deadline: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            listen: parse_addr(decisions::DEFAULT_LISTEN),
            peer_listen: parse_addr(decisions::DEFAULT_PEER_LISTEN),
            seed: rand::random(),
            token_ttl: decisions::DEFAULT_TOKEN_TTL,
            session_limit: false,
            task_duration: decisions::DEFAULT_TASK_DURATION,
            task_jitter: decisions::TASK_DURATION_JITTER,
            listing_lag: decisions::DEFAULT_LISTING_LAG,
            time_scale: decisions::DEFAULT_TIME_SCALE,
            epoch: None,
            world: WorldSpec::default_world(),
            tls: false,
            tls_dir: None,
            state_file: None,
            body_deadline: decisions::BODY_DEADLINE,
        }
    }
}

fn parse_addr(text: &str) -> SocketAddr {
    // The constants are literal socket addresses; a unit test parses them.
    text.parse()
        .unwrap_or(SocketAddr::from(([127, 0, 0, 1], 0)))
}

impl Options {
    /// Options for tests: both sites on a free loopback port, the given seed, 50 ms tasks and a
    /// 20 ms listing lag; everything else as the defaults.
    pub fn for_tests(seed: u64) -> Self {
        Options {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            peer_listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            seed,
            task_duration: decisions::TEST_TASK_DURATION,
            listing_lag: decisions::TEST_LISTING_LAG,
            ..Options::default()
        }
    }

    fn setup(&self) -> Result<Setup, StartError> {
        if !self.time_scale.is_finite() || self.time_scale < 0.0 {
            return Err(StartError::TimeScale(self.time_scale));
        }
        // At 1 or more a task could take no time at all (or less than none).
        if !(0.0..1.0).contains(&self.task_jitter) {
            return Err(StartError::TaskJitter(self.task_jitter));
        }
        let epoch = match self.epoch {
            Some(at) => SimTime::from_datetime(at),
            None if self.time_scale == 0.0 => frozen_epoch(),
            None => SimTime::from_millis(Utc::now().timestamp() * 1000),
        };
        let millis = |d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
        Ok(Setup {
            spec: self.world.clone(),
            seed: self.seed,
            epoch,
            time_scale: self.time_scale,
            task_jitter: self.task_jitter,
            timings: Timings {
                task_duration_ms: millis(self.task_duration),
                listing_lag_ms: millis(self.listing_lag),
            },
            lifetimes: Lifetimes {
                access_ms: millis(self.token_ttl),
                refresh_ms: millis(decisions::REFRESH_TOKEN_TTL),
                session_limit: self.session_limit,
            },
        })
    }
}

fn frozen_epoch() -> SimTime {
    DateTime::parse_from_rfc3339(decisions::FROZEN_EPOCH_RFC3339)
        .map(|at| SimTime::from_datetime(at.to_utc()))
        .unwrap_or(SimTime::from_millis(0))
}

/// Why the simulator could not start, or, for [`run`], could not save its state when it stopped.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// A listen address could not be bound.
    #[error(
        "site {site} could not listen on {addr}: {source}. Choose another address with --listen or \
         --peer-listen (port 0 picks a free port)."
    )]
    Bind {
        /// The site name.
        site: String,
        /// The address.
        addr: SocketAddr,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The world is not one a ZVM could have.
    #[error("the world is not valid: {0}")]
    World(#[from] WorldError),
    /// The state file could not be loaded.
    #[error(transparent)]
    State(#[from] StateError),
    /// HTTPS could not be set up.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// A time scale that is negative or not a number.
    #[error(
        "the time scale {0} is not valid: give the simulated seconds per real second as a finite \
         number, 0 (frozen) or more"
    )]
    TimeScale(f64),
    /// A task jitter that is not at least 0 and less than 1.
    #[error(
        "the task jitter {0} is not valid: give the spread of task durations as a fraction from 0 \
         (exact durations) up to but not including 1 (0.2 is ±20 %)"
    )]
    TaskJitter(f64),
    /// The state file could not be written when the simulator stopped ([`run`] only).
    #[error(
        "{0}. The run's state was not saved (the file, if there is one, is as it was before \
         this run): make its folder writable, or choose another --state FILE, before the next run."
    )]
    NotSaved(StateError),
}

/// The state both sites share: the world, and how to build it again on reset.
#[derive(Debug)]
pub(crate) struct Shared {
    setup: Setup,
    world: Mutex<World>,
    /// What the control API changed in the realm (keys, discovery); not part of the saved world.
    realm: Mutex<realm::RealmControl>,
    /// How long a request's body may take to arrive.
    pub(crate) body_deadline: Duration,
    /// `GET /metrics`'s counters and gauges.
    pub(crate) metrics: metrics::SimMetrics,
}

impl Shared {
    /// Locks the world. A handler that panicked while holding the lock leaves a world that is
    /// still consistent enough to serve (every change is a few field writes), so poisoning is
    /// ignored rather than turning every later request into a 500.
    pub(crate) fn lock(&self) -> MutexGuard<'_, World> {
        self.world
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Locks the realm's controls (poisoning ignored, as for the world).
    pub(crate) fn realm(&self) -> MutexGuard<'_, realm::RealmControl> {
        self.realm
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// `POST /_sim/reset`: the initial world of this seed again, as if just started: clock back to
    /// the epoch, start-up timings and time scale, no tokens, no tasks, an empty call log.
    pub(crate) fn reset(&self) -> Result<(), WorldError> {
        let fresh = World::new(&self.setup)?;
        *self.lock() = fresh;
        *self.realm() = realm::RealmControl::default();
        Ok(())
    }

    pub(crate) fn seed(&self) -> u64 {
        self.setup.seed
    }

    /// The whole world as saved-state JSON, at the simulated "now".
    pub(crate) fn save_json(&self) -> Result<Vec<u8>, StateError> {
        let mut world = self.lock();
        let now = world.clock.now();
        world.advance(now);
        world.to_state_json()
    }

    /// Replaces the world with a saved state; the running world stays if the state is refused.
    pub(crate) fn load_json(&self, bytes: &[u8]) -> Result<(), StateError> {
        let loaded = World::from_state_json(bytes, self.setup.task_jitter)?;
        *self.lock() = loaded;
        Ok(())
    }
}

/// The shared state of one simulator, from which each site's router is made.
#[derive(Debug, Clone)]
pub struct SimState {
    shared: Arc<Shared>,
}

impl SimState {
    /// Builds the initial world of these options, or loads their state file when it exists.
    pub fn new(options: &Options) -> Result<Self, StartError> {
        let setup = options.setup()?;
        let world = match &options.state_file {
            Some(path) if path.exists() => {
                let bytes = std::fs::read(path).map_err(|source| StateError::Io {
                    path: path.display().to_string(),
                    source,
                })?;
                World::from_state_json(&bytes, setup.task_jitter)?
            }
            _ => World::new(&setup)?,
        };
        Ok(SimState {
            shared: Arc::new(Shared {
                setup,
                world: Mutex::new(world),
                realm: Mutex::default(),
                body_deadline: options.body_deadline,
                metrics: metrics::SimMetrics::default(),
            }),
        })
    }

    /// Writes the whole world to `path` as saved state (through a temporary file, so a crash
    /// midway leaves the previous file whole).
    pub fn save(&self, path: &std::path::Path) -> Result<(), StateError> {
        let bytes = self.shared.save_json()?;
        let io = |source| StateError::Io {
            path: path.display().to_string(),
            source,
        };
        let mut temporary = path.as_os_str().to_owned();
        temporary.push(".tmp");
        std::fs::write(&temporary, bytes).map_err(io)?;
        std::fs::rename(&temporary, path).map_err(io)
    }

    /// Replaces the world with the saved state in `path`.
    pub fn load(&self, path: &std::path::Path) -> Result<(), StateError> {
        let bytes = std::fs::read(path).map_err(|source| StateError::Io {
            path: path.display().to_string(),
            source,
        })?;
        self.shared.load_json(&bytes)
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.shared.seed()
    }

    /// The name of a site.
    pub fn site_name(&self, site: SiteRole) -> String {
        self.shared.lock().site(site).name.clone()
    }

    /// The `SiteIdentifier` of a site.
    pub fn site_identifier(&self, site: SiteRole) -> String {
        self.shared.lock().site(site).id.clone()
    }
}

/// One site's router: Keycloak, `/v1` and `/_sim`, with the call log around them. For in-process
/// tests with tower's `oneshot`; [`start`] serves it with peer addresses attached, which the
/// control API uses to stay loopback-only.
pub fn app(state: &SimState, site: SiteRole) -> axum::Router {
    api::site_app(state.shared.clone(), site, api::Scheme("http"))
}

/// Where one simulated ZVM listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteEndpoint {
    /// The site name (`Boston`, `Denver` in the default world).
    pub name: String,
    /// `http://127.0.0.1:PORT` (`https://` with TLS), no trailing `/`.
    pub url: String,
    /// The site's `SiteIdentifier`.
    pub site_identifier: String,
    /// With TLS: the PEM file of the site's self-signed certificate, for clients to pin.
    pub certificate_pem: Option<std::path::PathBuf>,
}

/// A running simulator. Dropping it stops both sites at once; [`Simulator::shutdown`] stops them
/// gracefully and waits for them to finish.
#[derive(Debug)]
pub struct Simulator {
    local: SiteEndpoint,
    peer: SiteEndpoint,
    state: SimState,
    servers: Vec<serve::ServedSite>,
    state_file: Option<std::path::PathBuf>,
    /// Kept for its lifetime: a temporary certificate folder is removed when the simulator goes.
    _certificates: Option<tls::CertificateFolder>,
}

impl Simulator {
    /// The local site (Boston in the default world).
    pub fn local(&self) -> &SiteEndpoint {
        &self.local
    }

    /// The peer site (Denver in the default world).
    pub fn peer(&self) -> &SiteEndpoint {
        &self.peer
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.state.seed()
    }

    /// The shared state, to build extra routers on the same world.
    pub fn state(&self) -> &SimState {
        &self.state
    }

    /// Writes the whole world to the state file of the options, if they name one.
    pub fn save_state(&self) -> Result<(), StateError> {
        match &self.state_file {
            Some(path) => self.state.save(path),
            None => Ok(()),
        }
    }

    /// Stops both sites, waits until they have finished serving, then writes the state file if
    /// the options name one (a failure to write it is logged; [`Simulator::shutdown_saving`]
    /// returns it instead).
    pub async fn shutdown(self) {
        if let Err(error) = self.shutdown_saving().await {
            tracing::error!(%error, "the state could not be saved");
        }
    }

    /// Like [`Simulator::shutdown`], with the failure to write the state file returned, so a
    /// caller can say the run's state was lost (the binary exits with an error).
    pub async fn shutdown_saving(mut self) -> Result<(), StateError> {
        for server in std::mem::take(&mut self.servers) {
            server.shutdown().await;
        }
        self.save_state()?;
        if let Some(path) = &self.state_file {
            tracing::info!(path = %path.display(), "state saved");
        }
        Ok(())
    }
}

impl Drop for Simulator {
    fn drop(&mut self) {
        for server in &self.servers {
            server.abort();
        }
    }
}

/// Binds both sites and serves them in the background.
pub async fn start(options: Options) -> Result<Simulator, StartError> {
    let state = SimState::new(&options)?;
    let certificates = if options.tls {
        Some(tls::CertificateFolder::open(options.tls_dir.as_deref())?)
    } else {
        None
    };
    let mut servers = Vec::with_capacity(2);
    for (site, addr) in [
        (SiteRole::Local, options.listen),
        (SiteRole::Peer, options.peer_listen),
    ] {
        let tls = match &certificates {
            Some(folder) => Some(folder.site(&state.site_name(site), addr).await?),
            None => None,
        };
        servers.push(serve::serve_site(&state, site, addr, tls).await?);
    }
    Ok(Simulator {
        local: servers[0].endpoint.clone(),
        peer: servers[1].endpoint.clone(),
        state,
        servers,
        state_file: options.state_file,
        _certificates: certificates,
    })
}

/// What the binary runs: starts both sites, prints the seed and one `<site> listening on
/// http://ADDR` line per site to stdout (with TLS, `https://` and then one `<site> certificate
/// PATH` line per site), serves until `shutdown` resolves, then stops and writes the state file
/// if the options name one ([`StartError::NotSaved`] if it cannot).
pub async fn run(
    options: Options,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), StartError> {
    let simulator = start(options).await?;
    print_banner(&simulator);
    shutdown.await;
    simulator
        .shutdown_saving()
        .await
        .map_err(StartError::NotSaved)
}

/// The binary's documented start-up lines, read by people and scripts. A closed stdout (a
/// script that read what it needed and went away) must not stop the simulator, so write errors
/// are ignored rather than panicking as `println!` would.
fn print_banner(simulator: &Simulator) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let seed = simulator.seed();
    let _ = writeln!(out, "zvm-sim seed {seed} (run again with --seed {seed})");
    for site in [simulator.local(), simulator.peer()] {
        let _ = writeln!(out, "{} listening on {}", site.name, site.url);
    }
    for site in [simulator.local(), simulator.peer()] {
        if let Some(pem) = &site.certificate_pem {
            let _ = writeln!(out, "{} certificate {}", site.name, pem.display());
        }
    }
    let _ = out.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_addresses_parse() {
        assert_eq!(
            decisions::DEFAULT_LISTEN.parse::<SocketAddr>().ok(),
            Some(Options::default().listen)
        );
        assert_eq!(
            decisions::DEFAULT_PEER_LISTEN.parse::<SocketAddr>().ok(),
            Some(Options::default().peer_listen)
        );
    }

    #[test]
    fn a_frozen_clock_without_an_epoch_starts_at_the_fixed_epoch() {
        let options = Options {
            time_scale: 0.0,
            ..Options::for_tests(1)
        };
        assert_eq!(
            options.setup().unwrap().epoch.to_wire(),
            "2026-01-01T00:00:00.000Z"
        );
    }

    #[test]
    fn a_task_jitter_below_zero_from_one_or_not_a_number_is_refused() {
        for task_jitter in [-0.1, 1.0, 2.5, f64::NAN, f64::INFINITY] {
            let options = Options {
                task_jitter,
                ..Options::for_tests(1)
            };
            assert!(
                matches!(SimState::new(&options), Err(StartError::TaskJitter(_))),
                "{task_jitter}"
            );
        }
        for task_jitter in [0.0, 0.2, 0.99] {
            let options = Options {
                task_jitter,
                ..Options::for_tests(1)
            };
            assert!(SimState::new(&options).is_ok(), "{task_jitter}");
        }
    }

    #[test]
    fn a_negative_time_scale_is_refused() {
        let options = Options {
            time_scale: -1.0,
            ..Options::for_tests(1)
        };
        assert!(matches!(
            SimState::new(&options),
            Err(StartError::TimeScale(_))
        ));
    }
}
