//! The state both sites of one simulator share: the world behind its mutex, the realm's controls
//! and the metrics ([`Shared`]), and the handle a caller holds on them ([`SimState`]).

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::error::StartError;
use crate::metrics::SimMetrics;
use crate::options::Options;
use crate::realm::RealmControl;
use crate::world::resolve::WorldError;
use crate::world::state::StateError;
use crate::world::{Setup, SiteRole, World};

/// The state both sites share: the world, and how to build it again on reset.
#[derive(Debug)]
pub(crate) struct Shared {
    setup: Setup,
    world: Mutex<World>,
    /// What the control API changed in the realm (keys, discovery); not part of the saved world.
    realm: Mutex<RealmControl>,
    /// How long a request's body may take to arrive.
    pub(crate) body_deadline: Duration,
    /// `GET /metrics`'s counters and gauges.
    pub(crate) metrics: SimMetrics,
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
    pub(crate) fn realm(&self) -> MutexGuard<'_, RealmControl> {
        self.realm
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// `POST /_sim/reset`: the initial world of this seed again, as if just started: clock back to
    /// the epoch, start-up timings and time scale, no tokens, no tasks, an empty call log.
    pub(crate) fn reset(&self) -> Result<(), WorldError> {
        let fresh = World::new(&self.setup)?;
        *self.lock() = fresh;
        *self.realm() = RealmControl::default();
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
    pub(crate) shared: Arc<Shared>,
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
                metrics: SimMetrics::default(),
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

#[cfg(test)]
mod tests {
    use super::*;

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
