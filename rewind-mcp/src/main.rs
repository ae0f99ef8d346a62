//! `rewind-mcp`: parses flags, sets up logging on stderr, builds the configuration as the `rewind` CLI
//! does, and serves MCP on stdio (the default) or streamable HTTP.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};

use anyhow::{Context, bail};
use clap::{ArgAction, Parser};
use rewind_core::{Config, Rewind};

/// The MCP server an agent calls before it changes a VM: Zerto tagged checkpoints and bounded recover.
///
/// The sites come from the configuration file ($XDG_CONFIG_HOME/zerto-ai-rewind/config.toml, or
/// --config) merged with ZVM_URL, ZVM_CLIENT_ID + ZVM_CLIENT_SECRET or ZVM_USERNAME + ZVM_PASSWORD,
/// ZVM_CA_CERT and ZVM_INSECURE, exactly as for the `rewind` CLI. Serves MCP on stdin/stdout unless
/// --http is given. Logs go to stderr only.
#[derive(Debug, Parser)]
#[command(name = "rewind-mcp", version)]
struct Flags {
    /// The configuration file (default: $XDG_CONFIG_HOME/zerto-ai-rewind/config.toml).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The ZVM to talk to, as the site named `default` (the same as ZVM_URL; credentials still come
    /// from ZVM_CLIENT_ID + ZVM_CLIENT_SECRET or ZVM_USERNAME + ZVM_PASSWORD, or from [sites.default]).
    #[arg(long, value_name = "URL")]
    zvm: Option<String>,
    /// Serve streamable HTTP at http://ADDR/mcp instead of stdio. ADDR is a port (on 127.0.0.1) or
    /// IP:PORT; port 0 picks a free one. The address served is printed on stderr.
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
    /// Serve the tools of the configuration's [[gateway.upstream]] servers too, as
    /// <upstream>__<tool>, each mutating call guarded before it is forwarded (docs/gateway.md).
    #[arg(long)]
    gateway: bool,
    /// A host name (or host:port) HTTP clients may use besides localhost, 127.0.0.1 and ::1. Requests
    /// naming any other host are refused (DNS-rebinding guard). Needed to listen beyond loopback.
    #[arg(long = "allowed-host", value_name = "HOST", requires = "http")]
    allowed_hosts: Vec<String>,
    /// Over HTTP, the most MCP sessions open at once; a client that would open one more is answered
    /// 503 with Retry-After.
    #[arg(long, value_name = "N", default_value_t = 64, requires = "http", value_parser = cap())]
    max_sessions: u32,
    /// Over HTTP with [http.auth], the most sessions one person may hold; one more is answered 429
    /// with Retry-After, to that person only.
    #[arg(long, value_name = "N", default_value_t = 8, requires = "http", value_parser = cap())]
    max_sessions_per_person: u32,
    /// Over HTTP, the most guards and recoveries running at once (as MCP tasks or not); one more is
    /// answered 503 with Retry-After.
    #[arg(long, value_name = "N", default_value_t = 64, requires = "http", value_parser = cap())]
    max_tasks: u32,
    /// Over HTTP with [http.auth], the most guards and recoveries one person may run at once; one
    /// more is answered 429 with Retry-After, to that person only.
    #[arg(long, value_name = "N", default_value_t = 4, requires = "http", value_parser = cap())]
    max_tasks_per_person: u32,
    /// Over HTTP, the most connections open at once; one more is answered 503 and closed.
    #[arg(long, value_name = "N", default_value_t = 512, requires = "http",
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    max_connections: u32,
    /// Over HTTP, how long a client has to send a request's headers, and a kept-alive connection
    /// waits for its next request, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 10, requires = "http",
          value_parser = secs(1, 3_600))]
    header_read_secs: u64,
    /// Over HTTP, how long a connection on which nothing moves either way is kept, in seconds
    /// (an event stream sends a keep-alive every 15 s).
    #[arg(long, value_name = "SECS", default_value_t = 120, requires = "http",
          value_parser = secs(20, 86_400))]
    idle_secs: u64,
    /// Over HTTP, how long a session with no message either way is kept, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 120, requires = "http",
          value_parser = secs(1, 86_400))]
    session_idle_secs: u64,
    /// Log more to stderr (-v info, -vv debug, -vvv trace).
    #[arg(short, long, action = ArgAction::Count, conflicts_with = "quiet")]
    verbose: u8,
    /// Log less to stderr (-q errors only, -qq nothing).
    #[arg(short, long, action = ArgAction::Count)]
    quiet: u8,
}

#[tokio::main]
async fn main() -> ExitCode {
    let flags = Flags::parse();
    init_logs(&flags);
    match Box::pin(run(flags)).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // One line with the whole chain of causes, never a backtrace.
            eprintln!("rewind-mcp: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(flags: Flags) -> anyhow::Result<()> {
    #[cfg(unix)]
    let _caught = rewind_core::local_state::catch_file_size_limit();
    let config = load_config(&flags)?;
    // The configuration's warnings (TLS verification off, say), once per run: the core logs none.
    for warning in config.warnings() {
        tracing::warn!("{warning}");
    }
    // Without a site the server still starts: the catalog and journal tools need no ZVM, and every
    // tool that does answers with what to configure.
    if let Err(e) = config.require_sites() {
        tracing::warn!(
            "{e}; until then only zerto_check_tool, the catalog tools and zerto_journal work"
        );
    }
    // Rewind::new sends nothing: a ZVM that is down shows up in the tools' answers, not as a server
    // that will not start.
    let mut rewind = Rewind::new(config).context("the ZVM clients could not be built")?;
    // Without sign-in, the person behind every guard and recovery is the one running the server;
    // signed in, each call acts for its caller instead.
    if rewind.config().http.auth.is_none()
        && let Some(person) = rewind_core::Person::local()
    {
        rewind = rewind.acting_for(person);
    }
    let gateway = match flags.gateway {
        true => Some(start_gateway(rewind.config()).await?),
        false => None,
    };
    match &flags.http {
        None => {
            let mut server = rewind_mcp::RewindServer::new(rewind);
            if let Some(gateway) = gateway {
                server = server.with_gateway(gateway);
            }
            finish_on_terminate(server.in_flight());
            Box::pin(rewind_mcp::serve_stdio(server)).await?
        }
        Some(addr) => {
            let addr = parse_addr(addr)?;
            let signed_in = rewind.config().http.auth.is_some();
            if !addr.ip().is_loopback() && !signed_in {
                bail!(
                    "--http {addr} listens beyond this machine, and without [http.auth] anyone who reaches it could guard and recover VMs; \
                     sign callers in with [http.auth] (issuer, audience: see docs/mcp.md, \"A team server\"), \
                     or listen on 127.0.0.1 behind a proxy that authenticates"
                );
            }
            if !addr.ip().is_loopback() && flags.allowed_hosts.is_empty() {
                bail!(
                    "--http {addr} listens beyond this machine, and only requests naming localhost, 127.0.0.1 or ::1 are accepted; \
                     name the host clients will use with --allowed-host, or listen on 127.0.0.1"
                );
            }
            let service = rewind_mcp::HttpService::serving(rewind, http_limits(&flags), gateway)?;
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .with_context(|| format!("cannot listen on {addr}"))?;
            let local = listener.local_addr()?;
            if !signed_in && !flags.allowed_hosts.is_empty() {
                tracing::warn!(
                    "answering to {} without [http.auth]: rewind-mcp checks no caller, so the proxy in front of it must",
                    flags.allowed_hosts.join(", ")
                );
            }
            eprintln!(
                "rewind-mcp: serving MCP on http://{local}{}",
                rewind_mcp::HTTP_PATH
            );
            let stopped = Arc::new(AtomicI32::new(0));
            let code = stopped.clone();
            service
                .serve(listener, async move {
                    code.store(interrupted().await, Ordering::SeqCst);
                    // The server now finishes the guards and recoveries still running; a second
                    // Ctrl-C or SIGTERM leaves at once, as the rewind CLI's second Ctrl-C does.
                    tokio::spawn(async {
                        let code = interrupted().await;
                        eprintln!(
                            "rewind-mcp: interrupted again: leaving now; what was started may still run at the ZVM: a guard shows as interrupted in the journal, and the next guard of that VM and change takes it over; check zerto_list_tags and the ZVM's tasks"
                        );
                        std::process::exit(code);
                    });
                })
                .await?;
            // Stopped by SIGTERM (a service manager, a container runtime): leave as a terminated
            // process does, once the work is finished, so the supervisor sees what stopped it.
            let code = stopped.load(Ordering::SeqCst);
            if code == SIGTERM_EXIT {
                std::process::exit(code);
            }
        }
    }
    Ok(())
}

/// The gateway of the configuration's upstreams, each started or reached once before serving; one
/// that cannot be is named in a line of the log, and its tools are absent until it can.
async fn start_gateway(config: &Config) -> anyhow::Result<rewind_mcp::gateway::Gateway> {
    if config.gateway.upstreams.is_empty() {
        bail!(
            "--gateway serves the tools of the configuration's upstream servers, and it names none; add a [[gateway.upstream]] table (docs/gateway.md)"
        );
    }
    Ok(rewind_mcp::gateway::Gateway::start(&config.gateway).await)
}

/// The HTTP server's bounds, from the flags.
fn http_limits(flags: &Flags) -> rewind_mcp::HttpLimits {
    let n = |v: u32| v as usize;
    rewind_mcp::HttpLimits {
        extra_hosts: flags.allowed_hosts.clone(),
        caps: rewind_mcp::sessions::Caps {
            sessions: n(flags.max_sessions),
            sessions_per_person: n(flags.max_sessions_per_person),
            tasks: n(flags.max_tasks),
            tasks_per_person: n(flags.max_tasks_per_person),
        },
        session_idle: std::time::Duration::from_secs(flags.session_idle_secs),
        connections: rewind_mcp::listen::ConnectionLimits {
            max_connections: n(flags.max_connections),
            header_read: std::time::Duration::from_secs(flags.header_read_secs),
            idle: std::time::Duration::from_secs(flags.idle_secs),
        },
    }
}

/// A cap on sessions, or on guards and recoveries: 1 to 100 000.
fn cap() -> clap::builder::RangedI64ValueParser<u32> {
    clap::value_parser!(u32).range(1..=100_000)
}

/// A time in whole seconds, `min` to `max`.
fn secs(min: u64, max: u64) -> clap::builder::RangedU64ValueParser<u64> {
    clap::value_parser!(u64).range(min..=max)
}

/// The exit code of a process that leaves because of SIGTERM (128 + 15).
const SIGTERM_EXIT: i32 = 143;

/// Waits for the next Ctrl-C or SIGTERM; the exit code it stands for (130 or 143).
async fn interrupted() -> i32 {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            return tokio::select! {
                _ = tokio::signal::ctrl_c() => 130,
                _ = term.recv() => SIGTERM_EXIT,
            };
        }
    }
    let _ = tokio::signal::ctrl_c().await;
    130
}

/// On SIGTERM, which a host sends to stop a stdio server (often as soon as it closes the session),
/// the guards and recoveries still running are finished first (their Zerto tasks read to the end, an
/// FLR session unmounted, the journal written), then the server leaves with 143 (128 + SIGTERM); a
/// second SIGTERM leaves at once. This is the CLI's first and second Ctrl-C.
fn finish_on_terminate(in_flight: rewind_mcp::in_flight::InFlight) {
    #[cfg(unix)]
    tokio::spawn(async move {
        use tokio::signal::unix::{SignalKind, signal};
        let Ok(mut term) = signal(SignalKind::terminate()) else {
            return;
        };
        term.recv().await;
        tokio::spawn(async move {
            term.recv().await;
            eprintln!(
                "rewind-mcp: terminated again: leaving now; what was started may still run at the ZVM: a guard shows as interrupted in the journal, and the next guard of that VM and change takes it over; check zerto_list_tags and the ZVM's tasks"
            );
            std::process::exit(SIGTERM_EXIT);
        });
        in_flight.settle().await;
        std::process::exit(SIGTERM_EXIT);
    });
    #[cfg(not(unix))]
    let _ = in_flight;
}

/// The configuration as the `rewind` CLI builds it: the file (or the default one) merged with the
/// `ZVM_*` environment, with --zvm standing in for ZVM_URL. Sites are optional.
fn load_config(flags: &Flags) -> anyhow::Result<Config> {
    Ok(Config::load_with_zvm(
        flags.config.as_deref(),
        flags.zvm.as_deref(),
    )?)
}

/// `8765` → 127.0.0.1:8765; `IP:PORT` as given; `localhost:PORT` → 127.0.0.1:PORT.
fn parse_addr(raw: &str) -> anyhow::Result<SocketAddr> {
    let raw = raw.trim();
    if let Ok(port) = raw.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    if let Some(Ok(port)) = raw.strip_prefix("localhost:").map(str::parse::<u16>) {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    raw.parse::<SocketAddr>().with_context(|| {
        format!("--http {raw:?} is not an address: give a port (8765) or IP:PORT (127.0.0.1:8765)")
    })
}

/// Logs on stderr only: stdout carries the protocol on stdio. RUST_LOG, when set, wins over -v/-q.
///
/// Other crates (rustls, hyper, reqwest, rmcp) are silent by default: a tool's result already says
/// what went wrong in rewind's words, and a library's copy of it (such as rustls' `failed to verify
/// TLS certificate`) would only be noise on the host's stderr. From `-v` on their warnings show, and
/// `-vvv` shows everything at trace.
fn init_logs(flags: &Flags) {
    let (own, others) = match (flags.verbose, flags.quiet) {
        (0, 0) => ("warn", "off"),
        (1, _) => ("info", "warn"),
        (2, _) => ("debug", "warn"),
        (v, _) if v >= 3 => ("trace", "trace"),
        (_, 1) => ("error", "off"),
        _ => ("off", "off"),
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new(format!("{others},rewind_mcp={own},rewind_core={own}"))
    });
    // Session ids are what a client presents to use its session: logged as short hashes only.
    let format = tracing_subscriber::fmt::format().with_ansi(false);
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .event_format(rewind_mcp::logs::HashSessionIds(format))
        .init();
}
