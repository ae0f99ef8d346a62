//! The `rewind` binary: parse the command line, set up logging, and hand over to the library's `run`.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = match rewind_cli::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return std::process::ExitCode::from(rewind_cli::refused_command_line(e)),
    };
    rewind_cli::init_logging(cli.global.verbose, cli.global.quiet);
    std::process::ExitCode::from(rewind_cli::run(cli))
}
