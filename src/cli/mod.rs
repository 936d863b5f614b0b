//! The `forgestate` command: parse flags, call the library, print, map errors to exit codes.
//!
//! Exit codes (sysexits): 0 ok, 64 usage, 65 bad input data, 74 IO, 75 temporary failure
//! (`--strict` and a spooled record; a forge that cannot be read and nothing known), 78
//! configuration.

pub(crate) mod args;
mod argv;
mod call;
mod completions;
pub(crate) mod errors;
mod failure;
mod help;
mod logging;
mod man;
mod mcp;
mod open;
pub(crate) mod output;
mod progress;
mod remote;
mod terminal;
mod verb;

use std::process::ExitCode;

use forgestate::verbs::cli::table;

use args::{Cli, Command};
use failure::Failure;

use crate::face::scrub;
use crate::face::{EX_IOERR, EX_USAGE, ErrorBody};

pub fn main() -> ExitCode {
    let cli = match errors::parse_args() {
        Ok(cli) => cli,
        Err(code) => return ExitCode::from(code),
    };
    terminal::set_color(cli.color);
    scrub::install(cli.token_file.as_deref());
    init_logging(&cli);
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let message = format!("cannot start the async runtime: {e}");
            errors::report(EX_IOERR, &message, cli.json);
            return ExitCode::from(EX_IOERR);
        }
    };
    let ran = runtime.block_on(run(&cli));
    if let Some(message) = output::select_failed() {
        errors::report(EX_USAGE, message, cli.json);
        return ExitCode::from(EX_USAGE);
    }
    match ran {
        Ok(code) => match output::write_failed() {
            Some(e) if code == 0 => {
                let message = format!("cannot write the answer to stdout: {e}");
                errors::report(EX_IOERR, &message, false);
                ExitCode::from(EX_IOERR)
            }
            _ => ExitCode::from(code),
        },
        Err(f) => {
            let body = ErrorBody {
                reason: f.reason.clone(),
                ..ErrorBody::new(f.code, &f.message)
            };
            errors::report_body(body, &f.message, cli.json);
            ExitCode::from(f.code)
        }
    }
}

/// `-v` shows forgestate's own debug lines (requests, retries); `-vv` adds its trace lines and
/// the HTTP stack's info; `-vvv` shows everything.
fn init_logging(cli: &Cli) {
    use tracing::Level;
    use tracing_subscriber::filter::Targets;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let (ours, others) = match (cli.quiet, cli.verbose) {
        (true, _) => (Level::ERROR, Level::ERROR),
        (false, 0) => (Level::WARN, Level::WARN),
        (false, 1) => (Level::DEBUG, Level::WARN),
        (false, 2) => (Level::TRACE, Level::INFO),
        _ => (Level::TRACE, Level::TRACE),
    };
    // rmcp logs each error answer it sends (a Debug dump) at warn: the answer itself is the
    // report, so its own log shows only from -vv.
    let rmcp = if cli.verbose >= 2 {
        others
    } else {
        Level::ERROR
    };
    let filter = Targets::new()
        .with_default(others)
        .with_target("rmcp", rmcp)
        .with_target("forgestate", ours);
    let _ = tracing_subscriber::fmt()
        .with_max_level(Level::TRACE)
        .with_writer(|| progress::Stderr)
        .with_ansi(terminal::stderr_color())
        .event_format(logging::Prefixed)
        .finish()
        .with(filter)
        .try_init();
}

/// Runs one command; the `Ok` value is the exit code.
async fn run(cli: &Cli) -> Result<u8, Failure> {
    match &cli.command {
        Command::Mcp => mcp::mcp(cli).await,
        Command::Call(a) => call::call(cli, a).await,
        Command::Completions(a) => completions::completions(cli, a),
        Command::Man(a) => man::man(cli, a),
        Command::Table(v) => verb::table(cli, v).await,
    }
}
