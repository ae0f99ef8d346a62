//! The `rewind` command line: a thin front over `rewind-core`. It parses, calls the core, and prints;
//! it holds no Zerto logic of its own.
//!
//! - [`cli`]: the command line as clap derives it, and the exit codes `--help` shows.
//! - [`context`]: the global options, the configuration (through the core's loader), the runtime.
//! - [`commands`]: one module per command family: `protection` (find, guard, tags), `recover`
//!   (file, test, clone), `tools` (check-tool, catalog), `journal`, `sites`.
//! - [`hook`]: `rewind hook pre-tool-use`, the pre-tool hook of every agent host that has one
//!   (catalog and journal only), and `rewind hook install`, which writes it into a host's settings.
//! - `demo`: `rewind demo`, the whole loop on a simulator started in this process (the default-on
//!   feature `demo`, the only one that links `zvm-sim`).
//! - [`output`]: everything printed: tables, the `--json` envelope, the one error line.
//! - [`progress`]: the live progress line on stderr while Zerto tasks run.
//! - [`exit`]: exit codes, mapped from the core's error kinds in one function.
//! - [`reference`]: the reference pages made from the code (exit codes, `--json` results).

pub mod cli;
pub mod commands;
pub mod context;
#[cfg(feature = "demo")]
pub mod demo;
pub mod exit;
pub mod hook;
pub mod output;
pub mod progress;
pub mod reference;

use clap::CommandFactory;
use std::future::Future;

use rewind_core::{
    AuditJournal, CancellationToken, CatalogStore, Config, DiffRequest, GuardRequest,
    JournalFilter, Rewind,
};

use crate::cli::{Cli, Command, HookCommand, JournalCommand};
use crate::context::{Context, block_on};
use crate::exit::CliError;
use crate::output::{Printer, Reply};

/// Sets up logging: tracing to stderr, rewind's own warnings by default, more with `-v`, less with
/// `-q`. `RUST_LOG`, when set, decides instead.
///
/// Other crates (rustls, hyper, reqwest, the in-process simulator of `rewind demo`) are silent by
/// default: rewind reports what went wrong in its own one clear line, and a library's copy of it (such
/// as rustls' `failed to verify TLS certificate`) would only say it twice, less clearly. From `-v` on
/// their warnings show, and `-vvv` shows everything at trace.
///
/// Colours only on a terminal: a script, a CI log or an agent host reading stderr gets plain text.
pub fn init_logging(verbose: u8, quiet: u8) {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(log_directives(verbose, quiet)));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .try_init();
}

/// The default filter of a verbosity: other crates' level first, then rewind's own crates'.
fn log_directives(verbose: u8, quiet: u8) -> String {
    let (own, others) = match (quiet, verbose) {
        (q, _) if q >= 2 => ("off", "off"),
        (1, _) => ("error", "off"),
        (_, 0) => ("warn", "off"),
        (_, 1) => ("info", "warn"),
        (_, 2) => ("debug", "warn"),
        _ => ("trace", "trace"),
    };
    format!("{others},rewind={own},rewind_cli={own},rewind_core={own}")
}

/// Runs one command line and returns the process's exit code.
pub fn run(cli: Cli) -> u8 {
    let ctx = cli.global.context();
    let printer = Printer { json: ctx.json };
    let name = cli.command.name();
    let result = match cli.command {
        // The hook speaks its host's protocol on stdout, not the `--json` envelope.
        Command::Hook(HookCommand::PreToolUse { host }) => return hook::pre_tool_use(&ctx, host),
        Command::Hook(HookCommand::Install {
            host,
            scope,
            print,
            program,
        }) => hook_install(host, scope, print, program),
        // A completion script is not a result: `--json` does not apply.
        Command::Completions { shell } => return completions(shell),
        Command::Find { vm } => online(&ctx, name, |rewind| async move {
            commands::protection::find(&rewind, &vm).await
        }),
        Command::Guard {
            vm,
            agent,
            action,
            change_id,
        } => {
            let req = GuardRequest {
                vm,
                agent,
                action,
                change_id,
            };
            starting_tasks(&ctx, |rewind, stop| async move {
                commands::protection::guard(&rewind, req, ctx.quiet, &stop).await
            })
        }
        Command::Tags {
            expiring: Some(within),
            ..
        } => offline(&ctx, |config| {
            commands::watch::expiring(&AuditJournal::of(&config)?, within)
        }),
        Command::Tags { vm, change_id, .. } => online(&ctx, name, |rewind| async move {
            let vm = vm.unwrap_or_default();
            commands::protection::tags(&rewind, &vm, change_id.as_deref()).await
        }),
        Command::Done { change_id } => offline(&ctx, |config| {
            commands::watch::done(&AuditJournal::of(&config)?, &change_id)
        }),
        Command::Sites => online(&ctx, name, |rewind| async move {
            commands::sites::sites(&rewind).await
        }),
        Command::Capture { anonymize, out } => online(&ctx, name, |rewind| async move {
            commands::capture::capture(&rewind, anonymize, out.as_deref()).await
        }),
        Command::Parity { site, against, out } => online(&ctx, name, |rewind| async move {
            commands::parity::parity(&rewind, &site, &against, out.as_deref()).await
        }),
        Command::Doctor => {
            let project = std::env::current_dir().unwrap_or_default();
            let home = directories::BaseDirs::new()
                .map(|d| d.home_dir().to_path_buf())
                .unwrap_or_default();
            match ctx.rewind() {
                Ok(rewind) => {
                    block_on(
                        async move { commands::doctor::doctor(&rewind, &project, &home).await },
                    )
                }
                // A configuration rewind cannot use is doctor's first finding, not its end.
                Err(e) => commands::doctor::unusable(&e),
            }
        }
        Command::Trust {
            site,
            fingerprint,
            replace,
        } => {
            let yes = commands::trust::Confirmation {
                fingerprint,
                replace,
                json: ctx.json,
            };
            ctx.config_warned().and_then(|config| {
                block_on(async move { commands::trust::trust(&config, &site, yes).await })
            })
        }
        // A recovery is not stopped half-way: a mount, a test or a clone started runs to its end.
        Command::Keep { vm, change, agent } => starting_tasks(&ctx, |rewind, _stop| async move {
            commands::recover::keep(&rewind, &vm, &change, agent.as_deref(), ctx.quiet).await
        }),
        // A diff stops reading at the first Ctrl-C, and unmounts what it mounted.
        Command::Diff {
            vm,
            change,
            paths,
            against,
            vpg,
            content,
        } => starting_tasks(&ctx, |rewind, stop| async move {
            let req = DiffRequest {
                vm,
                change,
                paths,
                against: Some(against),
                content,
            };
            commands::diff::diff(&rewind, req, vpg.as_deref(), &stop, ctx.quiet).await
        }),
        // A restore, a commit or a rollback sent is read to its end, as a recovery is.
        Command::Restore(command) => starting_tasks(&ctx, |rewind, _stop| async move {
            commands::restore::restore(&rewind, command, ctx.json, ctx.quiet).await
        }),
        Command::Recover(command) => starting_tasks(&ctx, |rewind, stop| async move {
            commands::recover::recover(&rewind, command, &stop, ctx.quiet).await
        }),
        Command::CheckTool { server, tool, vm } => offline(&ctx, |config| {
            let catalog = CatalogStore::new(&config.catalog_path);
            commands::tools::check_tool(&catalog, &server, &tool, vm.as_deref())
        }),
        Command::Approvals(command) => offline(&ctx, |config| {
            commands::approvals::approvals(&config, &command)
        }),
        Command::Catalog(command) => offline(&ctx, |config| {
            commands::tools::catalog(&CatalogStore::new(&config.catalog_path), &command)
        }),
        Command::Journal {
            command: Some(JournalCommand::Archive { before, to }),
            ..
        } => offline(&ctx, |config| {
            commands::journal::archive(&config, before, to)
        }),
        Command::Journal {
            command: Some(JournalCommand::Export { to }),
            ..
        } => offline(&ctx, |config| commands::journal::export(&config, to)),
        Command::Journal {
            command: Some(JournalCommand::Import { from }),
            ..
        } => offline(&ctx, |config| commands::journal::import(&config, &from)),
        Command::Journal {
            command: None,
            file,
            vm,
            change_id,
            person,
            since,
            last,
            timeline,
        } => offline(&ctx, |config| {
            let filter = JournalFilter {
                vm,
                change_id,
                person,
                since,
                last,
            };
            let journal = match file {
                Some(path) => AuditJournal::new(path),
                None => AuditJournal::of(&config)?,
            };
            commands::journal::journal(&journal, &filter, timeline)
        }),
        #[cfg(feature = "demo")]
        Command::Demo { seed } => block_on(demo::demo(seed, ctx.json, ctx.quiet)),
    };
    match result {
        Ok(reply) => printer.reply(name, &reply),
        Err(e) => printer.error(name, &e),
    }
}

/// A command line clap could not parse, or `--help` and `--version`: clap prints them as usual, and
/// returns its code (2 for a refusal, 0 for help). With `--json`, a refusal is the `--json` envelope
/// instead (`error.kind` `usage`, the command as far as it was named), so that a script reading stdout
/// gets its one document whatever went wrong.
pub fn refused_command_line(e: clap::Error) -> u8 {
    use clap::error::ErrorKind as Clap;
    // Not env::args(), which panics on an argument that is not UTF-8.
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let shown = matches!(
        e.kind(),
        Clap::DisplayHelp | Clap::DisplayVersion | Clap::DisplayHelpOnMissingArgumentOrSubcommand
    );
    if shown || !args.iter().any(|a| a == "--json") {
        let _ = e.print();
        return u8::try_from(e.exit_code()).unwrap_or(exit::USAGE);
    }
    // clap's text: `error: <what>`, indented details, then `Usage: ...`; the error line keeps what
    // comes before the usage, on one line.
    let text = e.to_string();
    // A value's own refusal has no usage block, only clap's pointer to --help, which the line below
    // gives with the command's name.
    let what = text
        .split("\nUsage:")
        .next()
        .unwrap_or(&text)
        .split("\nFor more information")
        .next()
        .unwrap_or(&text)
        .trim()
        .trim_start_matches("error:")
        .trim();
    let name = command_name(&args);
    let help = if name == "rewind" {
        "rewind --help".to_string()
    } else {
        format!("rewind {name} --help")
    };
    let error = CliError::new(
        rewind_core::ErrorKind::Usage,
        format!("{what}; `{help}` lists what it takes"),
    );
    Printer { json: true }.error(&name, &error)
}

/// The command a command line names, as the `--json` envelope gives it (`guard`, `recover file`,
/// [`Command::name`]); `rewind` when it names none.
fn command_name(args: &[String]) -> String {
    let top = Cli::command();
    let mut words = args.iter().filter(|a| !a.starts_with('-'));
    // The first word that is a command (an option's value before it is passed over).
    let Some(command) = words.by_ref().find_map(|w| top.find_subcommand(w)) else {
        return "rewind".to_string();
    };
    // Only the families name their subcommand in the envelope (`catalog list`, `recover test`).
    let family = command.has_subcommands();
    match words.next().and_then(|w| command.find_subcommand(w)) {
        Some(sub) if family => format!("{} {}", command.get_name(), sub.get_name()),
        _ => command.get_name().to_string(),
    }
}

/// A command that talks to the configured ZVMs: the full configuration, a `Rewind`, a runtime.
/// A slow ZVM is named on a progress line (on a terminal) once an exchange has taken a second.
fn online<F, Fut>(ctx: &Context, name: &str, command: F) -> Result<Reply, CliError>
where
    F: FnOnce(Rewind) -> Fut,
    Fut: Future<Output = Result<Reply, CliError>>,
{
    let rewind = ctx.rewind()?;
    block_on(async move {
        let line = progress::ProgressLine::new(name, ctx.quiet).watching(&rewind);
        let result = command(rewind).await;
        line.finish();
        result
    })
}

/// A command that starts Zerto tasks (guard, recover). A first Ctrl-C (or SIGTERM, as a CI run's
/// timeout or a supervisor sends) does not abandon them: it cancels the token the command is
/// given (a guard then sends no insert it has not sent yet), and the command goes on until the
/// tasks it started are read to their end, an FLR session is unmounted and the journal is written,
/// and says so; a second one leaves at once, with exit code 130.
fn starting_tasks<F, Fut>(ctx: &Context, command: F) -> Result<Reply, CliError>
where
    F: FnOnce(Rewind, CancellationToken) -> Fut,
    Fut: Future<Output = Result<Reply, CliError>>,
{
    let rewind = ctx.rewind()?;
    block_on(async move {
        let mut stop = Interruptions::new();
        let told = CancellationToken::new();
        let work = command(rewind, told.clone());
        tokio::pin!(work);
        tokio::select! {
            result = &mut work => return result,
            () = stop.next() => {
                told.cancel();
                output::error_line(
                    "interrupted: finishing what was started at the ZVM (Zerto tasks read to their end, an FLR session unmounted, the journal written), and sending nothing new; press Ctrl-C again to leave now",
                )
            }
        }
        tokio::select! {
            result = &mut work => result,
            () = stop.next() => {
                output::error_line(
                    "interrupted again: leaving now; what was started may still run at the ZVM: a guard shows as interrupted in `rewind journal`, and the next guard of that VM and change takes it over; check `rewind tags` and the ZVM's tasks",
                );
                std::process::exit(exit::INTERRUPTED.into())
            }
        }
    })
}

/// Ctrl-C and, on Unix, SIGTERM: either asks a command that started Zerto tasks to stop.
struct Interruptions {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
}

impl Interruptions {
    /// Listens from now on (a signal whose handler cannot be installed is simply not listened to).
    fn new() -> Interruptions {
        Interruptions {
            #[cfg(unix)]
            term: tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok(),
        }
    }

    /// The next Ctrl-C or SIGTERM; never, if neither can be listened to.
    async fn next(&mut self) {
        #[cfg(unix)]
        let term = async {
            match self.term.as_mut() {
                Some(t) => {
                    t.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        #[cfg(not(unix))]
        let term = std::future::pending::<()>();
        tokio::select! {
            Ok(()) = tokio::signal::ctrl_c() => {}
            () = term => {}
        }
    }
}

/// A command that reads or writes only local files (the catalog, the journal): it works with no site
/// configured and starts no runtime.
fn offline(
    ctx: &Context,
    command: impl FnOnce(Config) -> Result<Reply, CliError>,
) -> Result<Reply, CliError> {
    command(ctx.config_warned()?)
}

/// `rewind hook install`: the host's settings file for the scope, and the hook merged into it.
fn hook_install(
    host: hook::Host,
    scope: hook::install::Scope,
    print: bool,
    program: Option<String>,
) -> Result<Reply, CliError> {
    let internal = |what: String| CliError::new(rewind_core::ErrorKind::Internal, what);
    let program = match program {
        Some(p) => p,
        None => std::env::current_exe()
            .map_err(|e| {
                internal(format!(
                    "cannot tell where this rewind is ({e}); give --program"
                ))
            })?
            .to_string_lossy()
            .into_owned(),
    };
    let project = std::env::current_dir()
        .map_err(|e| internal(format!("cannot read the current folder ({e})")))?;
    let home = directories::BaseDirs::new()
        .map(|d| d.home_dir().to_path_buf())
        .ok_or_else(|| internal("cannot tell the home folder; use --scope project".into()))?;
    let file = hook::install::settings_file(host, scope, &project, &home);
    let command = hook::install::command_line(host, &program);
    let installed = hook::install::install(host, &file, &command, print)?;
    Reply::new(&installed, hook::install::human(&installed, print))
}

/// `rewind completions <shell>`: the script on stdout.
fn completions(shell: clap_complete::Shell) -> u8 {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "rewind", &mut script);
    match output::write_stdout(&String::from_utf8_lossy(&script)) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            output::error_line(&format!("cannot write the completion script: {e}"));
            exit::INTERNAL
        }
        _ => exit::OK,
    }
}
