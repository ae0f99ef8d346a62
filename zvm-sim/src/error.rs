//! Why the simulator could not start ([`StartError`]).

use std::net::SocketAddr;

use crate::tls::TlsError;
use crate::world::resolve::WorldError;
use crate::world::state::StateError;

/// Why the simulator could not start, or, for [`crate::run`], could not save its state when it stopped.
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
    /// The state file could not be written when the simulator stopped ([`crate::run`] only).
    #[error(
        "{0}. The run's state was not saved (the file, if there is one, is as it was before \
         this run): make its folder writable, or choose another --state FILE, before the next run."
    )]
    NotSaved(StateError),
}
