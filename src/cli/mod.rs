//! The `forgestate` command: parse flags, call the library, print, map errors to exit codes.
//!
//! Exit codes (sysexits): 0 ok, 64 usage, 65 bad input data, 74 IO, 75 temporary failure
//! (`--strict` and a spooled record; a forge that cannot be read and nothing known), 78
//! configuration.

pub(crate) mod args;
mod argv;
mod call;
mod carry;
mod completions;
mod doctor;
pub(crate) mod errors;
mod failure;
mod flush;
mod fork;
mod help;
mod history;
pub(crate) mod input;
mod logging;
mod man;
mod mcp;
mod open;
pub(crate) mod output;
mod progress;
mod prune;
mod remote;
mod render;
mod requests;
mod rotate;
mod status;
mod table;
mod verb;
mod watch;

use std::process::ExitCode;

use forgestate::format::parse;
use forgestate::verbs;

use args::{Cli, Command};
use failure::Failure;
use input::read_input;

use crate::face::scrub;
use crate::face::{EX_DATAERR, EX_IOERR, EX_TEMPFAIL, EX_USAGE};

pub fn main() -> ExitCode {
    let cli = match errors::parse_args() {
        Ok(cli) => cli,
        Err(code) => return ExitCode::from(code),
    };
    table::set_color(cli.color);
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
            errors::report(f.code, &f.message, cli.json);
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
        .with_ansi(table::stderr_color())
        .event_format(logging::Prefixed)
        .finish()
        .with(filter)
        .try_init();
}

/// Runs one verb; the `Ok` value is the exit code.
async fn run(cli: &Cli) -> Result<u8, Failure> {
    match &cli.command {
        Command::Checkpoint(a) => {
            let request = requests::checkpoint(a)?;
            saved(cli, verb::run::<verbs::Checkpoint>(cli, request).await?)
        }
        Command::Health(a) => {
            let request = requests::health(a)?;
            saved(cli, verb::run::<verbs::Health>(cli, request).await?)
        }
        Command::End(a) => saved(cli, verb::run::<verbs::End>(cli, a.clone()).await?),
        Command::Fork(a) => {
            let answer = verb::run::<verbs::Fork>(cli, a.clone()).await?;
            fork::forked(cli, a, &answer);
            saved(cli, answer)
        }
        Command::Latest(a) => {
            let answer = verb::run::<verbs::LatestVerb>(cli, a.clone()).await?;
            verb::warn(cli, &answer.warnings);
            output::latest(answer, cli.json);
            Ok(0)
        }
        Command::Resume(a) => {
            let answer = verb::run::<verbs::ResumeVerb>(cli, a.clone()).await?;
            verb::warn(cli, &answer.warnings);
            output::resume(answer, &a.agent, &a.session, cli.json);
            Ok(0)
        }
        Command::List(a) => {
            let answer = verb::run::<verbs::ListVerb>(cli, a.clone()).await?;
            verb::warn(cli, &answer.warnings);
            output::list(&answer, a.invalid, cli.json);
            Ok(0)
        }
        Command::Flush(a) => flush::flush(cli, a).await,
        Command::Outbox => flush::outboxes(cli),
        Command::Status(a) => status::status(cli, a).await,
        Command::History(a) => history::history(cli, a).await,
        Command::Watch(a) => watch::watch(cli, a).await,
        Command::Prune(a) => prune::prune(cli, a).await,
        Command::Doctor => doctor::doctor(cli).await,
        Command::Render(a) => render::render(cli, a).await,
        Command::ResumeMap(a) => render::resume_map(cli, a).await,
        Command::Mcp => mcp::mcp(cli).await,
        Command::Call(a) => call::call(cli, a).await,
        Command::Completions(a) => completions::completions(cli, a),
        Command::Man(a) => man::man(cli, a),
        Command::Rotate => rotate::rotate(cli).await,
        Command::Publish(a) => carry::publish(cli, a.clone()).await,
        Command::Export(a) => carry::export(cli, a).await,
        Command::Import(a) => carry::import(cli, a).await,
        Command::Schema => {
            output::json_page(&verbs::SchemaAnswer::new());
            Ok(0)
        }
        Command::Table(v) => verb::table(cli, v).await,
        Command::Parse(a) => {
            let file = a.file.clone().unwrap_or_else(|| "-".into());
            parse_verb(read_input(None, Some(&file))?, cli.json)
        }
    }
}

/// Reports a save: posted (with what its automatic rotation did), or spooled to the outbox,
/// which `--strict` makes a failure (exit 75).
fn saved(cli: &Cli, answer: verbs::SaveAnswer) -> Result<u8, Failure> {
    if answer.posted {
        rotate::after_save(cli, &answer);
        verb::warn(cli, &answer.warnings);
        output::posted(answer, cli.json);
        return Ok(0);
    }
    // A cause only fixing something can cure is an error line (the first warning says what
    // to fix), shown even with --quiet.
    if !cli.quiet || answer.permanent {
        for (i, w) in answer.warnings.iter().enumerate() {
            let level = if answer.permanent && i == 0 {
                "error"
            } else {
                "warning"
            };
            output::note(&format!("{level}: {w}"));
        }
    }
    let code = if cli.strict { EX_TEMPFAIL } else { 0 };
    output::spooled(answer, cli.json, Some(code).filter(|&c| c != 0));
    Ok(code)
}

/// `forgestate parse`: the record as JSON, or the reason with exit code 65.
fn parse_verb(body: Option<String>, as_json: bool) -> Result<u8, Failure> {
    match parse(&body.unwrap_or_default()) {
        Ok(record) => {
            output::json(&record);
            Ok(0)
        }
        Err(e) => {
            // Say "not a record" once, whether or not the reason already does.
            let reason = e.to_string();
            let message = if reason.starts_with("not a record") {
                reason
            } else {
                format!("not a record: {reason}")
            };
            output::error(&message);
            if as_json {
                errors::print_doc(errors::ErrorBody {
                    reason: Some(e.code().to_string()),
                    ..errors::ErrorBody::new(EX_DATAERR, &message)
                });
            }
            Ok(EX_DATAERR)
        }
    }
}
