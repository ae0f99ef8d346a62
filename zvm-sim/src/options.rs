//! How to run the simulator ([`Options`]), and the start-up setup of the world made from them.

use std::net::SocketAddr;
use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::decisions;
use crate::error::StartError;
use crate::world::auth::Lifetimes;
use crate::world::clock::SimTime;
use crate::world::spec::WorldSpec;
use crate::world::{Setup, Timings};

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
    /// when the simulator shuts down ([`crate::Simulator::shutdown`], Ctrl-C in the binary).
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

    pub(crate) fn setup(&self) -> Result<Setup, StartError> {
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
}
