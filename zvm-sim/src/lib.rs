//! # zvm-sim: a simulated ZVM 10.x appliance
//!
//! One process serves two sites, a local one and its peer, each a ZVM on its own listen address with
//! its own Keycloak token endpoint, sharing one world. It behaves like a real appliance, including its
//! inconvenient parts: a write answers with a task id, and only the task says what happened.
//!
//! ## Map
//!
//! - [`start`] binds both sites and serves them in the background (tests, `rewind demo`);
//!   [`run`] does the same until a shutdown future resolves (the binary); both in `simulator`.
//!   [`app()`] is one site's router, for in-process handler tests with tower's `oneshot`, assembled
//!   in `app` from the handlers and layers below.
//! - [`Options`] (`options`): listen addresses, seed, token lifetime, session limit, timings, time
//!   scale, world, HTTPS and the state file; [`StartError`] (`error`) for why a start failed;
//!   [`Simulator`] and [`SiteEndpoint`] for what started.
//! - `shared`: the state both sites share ([`SimState`]: the world behind its mutex, the realm's
//!   controls, the metrics).
//! - `decisions`: every decision taken where the real API is silent, and every default.
//! - `world`: the model (sites, VMs, VPGs, journals with their hard limits and history alerts,
//!   Extended Journal Copy repositories and retention sets, guest files, tasks and the operations
//!   they carry out, FLR sessions, Keycloak, call log, fault rules with their path patterns and
//!   seeded decisions, simulated clock), behind one `std::sync::Mutex`, advanced lazily at the
//!   start of each request; also world files and generated worlds ([`WorldSpec`]) and the
//!   saved-state document.
//! - `http`: the HTTP kit `api` and `control` share: errors, the extractors that bind query and
//!   body keys case-insensitively, the site context, and the marks layers leave for one another.
//! - `api`: the `/v1` and Keycloak handlers, one file per resource, plus the bearer check, the
//!   body deadline, the fault layer and the call log.
//! - `control`: the `/_sim` control API (reset, saved state, clock, timings, resync, status,
//!   journal bursts, calls, tasks, retention sets, files, faults, the realm, the pages) and
//!   `GET /metrics`; `metrics`: the counters and gauges it serves.
//! - `enums`: the ZVM's enumerations, by number and name.
//! - `serve`: serving a site with axum-server, over HTTP or HTTPS; `tls`: its certificates.
//! - `wire`: the simulator's own PascalCase JSON views of the model.
//! - `realm`: the Keycloak realm's signing keys and OpenID configuration.
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
mod app;
mod control;
pub mod decisions;
mod enums;
mod error;
#[doc(hidden)]
pub mod fuzzing;
mod http;
mod metrics;
mod options;
mod realm;
mod serve;
mod shared;
mod simulator;
#[cfg(feature = "test-kit")]
pub mod test_kit;
mod tls;
mod wire;
mod world;

pub use api::coverage_matrix;
pub use app::app;
pub use error::StartError;
pub use options::Options;
pub use serve::SiteEndpoint;
pub use shared::SimState;
pub use simulator::{Simulator, run, start};
pub use tls::TlsError;
pub use world::SiteRole;
pub use world::files::PathError;
pub use world::resolve::WorldError;
pub use world::spec::{
    ClientSpec, GuestOs, RepositorySpec, Role, SiteSpec, UserSpec, VmSpec, VpgSpec, WorldSpec,
};
pub use world::state::{STATE_FORMAT, StateError};
