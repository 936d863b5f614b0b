//! The `forgestate` command: parse flags, call the library, print, map errors to exit codes.
//!
//! Exit codes (sysexits): 0 ok, 64 usage, 65 bad input data, 74 IO, 75 temporary failure
//! (`--strict` and a spooled record; a forge that cannot be read and nothing known), 78
//! configuration.

mod args;
mod log;
mod output;

use std::process::ExitCode;

use clap::Parser;
use serde_json::{Value, json};

use forgestate::backend::AnyThread;
use forgestate::config::{Config, Overrides};
use forgestate::format::{Record, parse};
use forgestate::scan::Filter;
use forgestate::store::{Effort, Thread};
use forgestate::{Category, Client, Error, Outcome};

use args::{Cli, Command, InputError, apply_sets, json_object, parse_since, read_input};

const EX_USAGE: u8 = 64;
const EX_DATAERR: u8 = 65;
const EX_IOERR: u8 = 74;
const EX_TEMPFAIL: u8 = 75;
const EX_CONFIG: u8 = 78;

/// A failure with its exit code, already worded for the user.
struct Failure {
    code: u8,
    message: String,
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        let code = match e.category() {
            Category::Data => EX_DATAERR,
            Category::Io => EX_IOERR,
            Category::Config => EX_CONFIG,
            Category::TempFail => EX_TEMPFAIL,
        };
        Failure {
            code,
            message: e.to_string(),
        }
    }
}

impl From<InputError> for Failure {
    fn from(e: InputError) -> Self {
        match e {
            InputError::Usage(message) => Failure {
                code: EX_USAGE,
                message,
            },
            InputError::Data(message) => Failure {
                code: EX_DATAERR,
                message,
            },
            InputError::Io(message) => Failure {
                code: EX_IOERR,
                message,
            },
        }
    }
}

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { EX_USAGE } else { 0 });
        }
    };
    init_logging(&cli);
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            output::note(&format!("cannot start the async runtime: {e}"));
            return ExitCode::from(EX_IOERR);
        }
    };
    match runtime.block_on(run(&cli)) {
        Ok(code) => ExitCode::from(code),
        Err(f) => {
            output::note(&format!("error: {}", f.message));
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
    let filter = Targets::new()
        .with_default(others)
        .with_target("forgestate", ours);
    let _ = tracing_subscriber::fmt()
        .with_max_level(Level::TRACE)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .event_format(log::Format::default())
        .finish()
        .with(filter)
        .try_init();
}

/// Runs one verb; the `Ok` value is the exit code.
async fn run(cli: &Cli) -> Result<u8, Failure> {
    let warn = |warnings: &[String]| {
        if !cli.quiet {
            warnings
                .iter()
                .for_each(|w| output::note(&format!("warning: {w}")));
        }
    };
    match &cli.command {
        Command::Init => {
            let client = open(cli)?;
            let location = client.thread().init().await.map_err(Error::from)?;
            let author = client.thread().whoami().await.map_err(Error::from)?;
            flush_first(cli, &client).await;
            output::initialized(&location, &author, cli.json);
            Ok(0)
        }
        Command::Checkpoint(a) => {
            let mut data = json_object(
                "--data",
                read_input(a.data.as_deref(), a.data_file.as_ref())?,
            )?;
            apply_sets(&mut data, &a.set)?;
            let record = Record::checkpoint(&a.agent, &a.session, &a.phase, Value::Object(data))
                .map_err(Error::from)?;
            save(cli, &open(cli)?, record).await
        }
        Command::Health(a) => {
            let metrics = json_object("--metrics", read_input(a.metrics.as_deref(), None)?)?;
            let record = Record::health(
                &a.agent,
                &a.session,
                &a.status,
                Value::Object(metrics),
                a.next_check.as_deref(),
            )
            .map_err(Error::from)?;
            save(cli, &open(cli)?, record).await
        }
        Command::Latest(a) => {
            let client = open(cli)?;
            flush_first(cli, &client).await;
            let filter = filter(&a.filter, None);
            let (entry, warnings) = client.latest(&filter).await?;
            warn(&warnings);
            output::latest(entry.as_ref(), cli.json);
            Ok(0)
        }
        Command::Resume(a) => {
            let client = open(cli)?;
            flush_first(cli, &client).await;
            let (resume, warnings) = client.resume(&a.agent, &a.session).await?;
            warn(&warnings);
            output::resume(&resume, &a.agent, &a.session, cli.json);
            Ok(0)
        }
        Command::List(a) => {
            let filter = filter(&a.filter, a.since.as_deref().map(parse_since).transpose()?);
            let client = open(cli)?;
            flush_first(cli, &client).await;
            let scan = client.list(&filter, a.limit).await?;
            warn(&scan.warnings);
            output::list(&scan, a.invalid, cli.json);
            Ok(0)
        }
        Command::Flush => {
            let client = open(cli)?;
            let report = client.flush(Effort::Full).await;
            output::flushed(&report, client.outbox().map(|o| o.dir()), cli.json);
            match report.error {
                // The forge is still unreachable: try again later.
                Some(e) if report.left > 0 && e.category() == Category::Io => {
                    output::note(&format!("error: {e}"));
                    Ok(EX_TEMPFAIL)
                }
                Some(e) if report.left > 0 => Err(e.into()),
                _ if report.busy => Ok(EX_TEMPFAIL),
                _ => Ok(0),
            }
        }
        Command::Parse(a) => {
            let file = a.file.clone().unwrap_or_else(|| "-".into());
            parse_verb(read_input(None, Some(&file))?, cli.json)
        }
    }
}

fn filter(f: &args::FilterArgs, since: Option<chrono::DateTime<chrono::Utc>>) -> Filter {
    Filter {
        agent: f.agent.clone(),
        session: f.session.clone(),
        kind: f.kind.map(Into::into),
        since,
    }
}

/// Loads the configuration and opens the store, saying so when a default store was chosen.
fn open(cli: &Cli) -> Result<Client<AnyThread>, Failure> {
    let config = Config::load(cli.config.as_deref())?;
    let over = Overrides {
        store: cli.store.clone(),
        url: cli.url.clone(),
        owner: cli.owner.clone(),
        repo: cli.repo.clone(),
        token_file: cli.token_file.clone(),
        allow_insecure_http: cli.allow_insecure_http,
    };
    let (client, note) = config.client(&over)?;
    if let Some(note) = note.filter(|_| !cli.quiet) {
        output::note(&note);
    }
    Ok(client)
}

/// Any forge command starts by trying, once and quickly, to post what the outbox holds.
async fn flush_first(cli: &Cli, client: &Client<AnyThread>) {
    if client.outbox().is_none_or(|o| o.is_empty()) {
        return;
    }
    let report = client.flush(Effort::Quick).await;
    if report.left > 0 && !cli.quiet {
        let dir = client
            .outbox()
            .map(|o| o.dir().display().to_string())
            .unwrap_or_default();
        output::note(&format!(
            "warning: {} record(s) still wait in the outbox {dir}; `forgestate flush` posts them",
            report.left
        ));
    }
}

/// Posts (or spools) a record and reports the outcome.
async fn save(cli: &Cli, client: &Client<AnyThread>, record: Record) -> Result<u8, Failure> {
    match client.save(record).await {
        Outcome::Posted(posted) => {
            output::posted(&posted, cli.json);
            Ok(0)
        }
        Outcome::Spooled {
            record,
            path,
            cause,
        } => {
            let permanent = matches!(cause.category(), Category::Config | Category::Data);
            if permanent {
                output::note(&format!(
                    "ERROR: {cause}\nforgestate: fix this, then run `forgestate flush`: flushing \
                     cannot succeed until it is fixed"
                ));
            }
            output::spooled(&record, &path, &cause, cli.json, cli.quiet && !permanent);
            Ok(if cli.strict { EX_TEMPFAIL } else { 0 })
        }
        Outcome::Failed(e) => Err(e.into()),
    }
}

/// `forgestate parse`: the record as JSON, or the reason with exit code 65.
fn parse_verb(body: Option<String>, as_json: bool) -> Result<u8, Failure> {
    match parse(&body.unwrap_or_default()) {
        Ok(record) => {
            output::json(&record);
            Ok(0)
        }
        Err(e) => {
            if as_json {
                output::json(&json!({"error": {"code": e.code(), "message": e.to_string()}}));
            }
            Err(Failure {
                code: EX_DATAERR,
                message: format!("not a valid record: {e}"),
            })
        }
    }
}
