//! `zvm-sim`: flags → [`zvm_sim::Options`] → [`zvm_sim::run`] until Ctrl-C.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context;
use chrono::{DateTime, Utc};
use clap::Parser;
use futures::FutureExt;
use zvm_sim::{Options, WorldSpec, decisions};

/// A simulated ZVM 10.x appliance: two sites (local and peer), Keycloak tokens, inventory, tasks
/// and journals, plus a /_sim control API.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Flags {
    /// The local site's listen address (port 0 picks a free port).
    #[arg(long, default_value = decisions::DEFAULT_LISTEN)]
    listen: SocketAddr,
    /// The peer site's listen address.
    #[arg(long, default_value = decisions::DEFAULT_PEER_LISTEN)]
    peer_listen: SocketAddr,
    /// Seed of every random choice (default: random; always printed at start-up).
    #[arg(long)]
    seed: Option<u64>,
    /// Access-token lifetime in seconds of simulated time.
    #[arg(long, value_name = "SECS", default_value_t = decisions::DEFAULT_TOKEN_TTL.as_secs())]
    token_ttl: u64,
    /// Issuing a new token to a client or user revokes its older tokens.
    #[arg(long)]
    session_limit: bool,
    /// Nominal task duration in milliseconds (seeded jitter of ± --task-jitter).
    #[arg(long, value_name = "MS", default_value_t = millis(decisions::DEFAULT_TASK_DURATION))]
    task_duration: u64,
    /// Jitter on each task's duration, a fraction of it: 0.2 is ±20 %, 0 gives exact durations.
    #[arg(long, value_name = "FRACTION", default_value_t = decisions::TASK_DURATION_JITTER)]
    task_jitter: f64,
    /// Completed insert → tagged checkpoint listed, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = millis(decisions::DEFAULT_LISTING_LAG))]
    listing_lag: u64,
    /// Simulated seconds per real second (0 freezes time; see POST /_sim/clock/advance).
    #[arg(long, value_name = "X", default_value_t = decisions::DEFAULT_TIME_SCALE)]
    time_scale: f64,
    /// Where simulated time starts (RFC 3339). Default: the wall clock at start, or
    /// 2026-01-01T00:00:00Z with --time-scale 0.
    #[arg(long, value_name = "RFC3339")]
    epoch: Option<DateTime<Utc>>,
    /// Serve each site over HTTPS with a self-signed certificate (its PEM path is printed).
    #[arg(long)]
    tls: bool,
    /// Keep the certificates here (<site>.pem, <site>.key.pem), reused across runs. Implies --tls.
    #[arg(long, value_name = "DIR")]
    tls_dir: Option<std::path::PathBuf>,
    /// Serve this world instead of the default one (TOML, or JSON when it ends in .json).
    #[arg(long, value_name = "FILE", conflicts_with = "generate")]
    world: Option<std::path::PathBuf>,
    /// Serve a generated world of N VMs (names from `fake`, made from --seed; at most 100000).
    #[arg(
        long,
        value_name = "N",
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new()
            .range(0..=decisions::MAX_GENERATED_VMS)
    )]
    generate: Option<usize>,
    /// Load the whole world from FILE at start when it exists; write it there on Ctrl-C (an error
    /// if it cannot).
    #[arg(long, value_name = "FILE")]
    state: Option<std::path::PathBuf>,
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// Serves until Ctrl-C; a failure is one line on stderr (with its causes, never a backtrace, even
/// with `RUST_BACKTRACE` set) and exit code 1.
#[tokio::main]
async fn main() -> std::process::ExitCode {
    match serve().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("zvm-sim: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn serve() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("zvm_sim=info")),
        )
        .init();
    let flags = Flags::parse();
    let defaults = Options::default();
    let seed = flags.seed.unwrap_or(defaults.seed);
    let world = match (&flags.world, flags.generate) {
        (Some(path), _) => WorldSpec::from_file(path)
            .with_context(|| format!("zvm-sim cannot serve the world {}", path.display()))?,
        (None, Some(vms)) => WorldSpec::generate(vms, seed),
        (None, None) => defaults.world.clone(),
    };
    let options = Options {
        listen: flags.listen,
        peer_listen: flags.peer_listen,
        seed,
        token_ttl: Duration::from_secs(flags.token_ttl),
        session_limit: flags.session_limit,
        task_duration: Duration::from_millis(flags.task_duration),
        task_jitter: flags.task_jitter,
        listing_lag: Duration::from_millis(flags.listing_lag),
        time_scale: flags.time_scale,
        epoch: flags.epoch,
        world,
        tls: flags.tls || flags.tls_dir.is_some(),
        tls_dir: flags.tls_dir,
        state_file: flags.state,
        body_deadline: defaults.body_deadline,
    };
    // The handler is installed by the future's first poll: poll it now, before the banner tells
    // anyone the sites are up, so a Ctrl-C sent right after the banner saves the state instead of
    // killing the process.
    let mut ctrl_c = Box::pin(tokio::signal::ctrl_c());
    let early = (&mut ctrl_c).now_or_never();
    zvm_sim::run(options, async move {
        let outcome = match early {
            Some(outcome) => outcome,
            None => ctrl_c.await,
        };
        if let Err(error) = outcome {
            tracing::error!(%error, "cannot wait for Ctrl-C; stopping");
        }
    })
    .await
    .map_err(|error| {
        let context = match error {
            zvm_sim::StartError::NotSaved(_) => "zvm-sim stopped, but could not save its state",
            _ => "zvm-sim could not start",
        };
        anyhow::Error::new(error).context(context)
    })
}
