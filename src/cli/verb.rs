//! Running a verb of the table for the CLI: clap parses the flags into the verb's request (its
//! type derives clap's `Args`), the request goes through the same call as MCP and `call`
//! ([`forgestate::verbs::run`]), and the CLI only renders the typed answer.
//!
//! The verb's own checks name request fields (`reason "x" is not a reason…`); on the command
//! line those are flags, so a usage or data error that opens with a field's name is reworded to
//! open with its flag (`--reason "x" …`), as the Python package rewords flags to parameters.

use std::collections::BTreeMap;
use std::pin::Pin;

use clap::FromArgMatches;
use serde::Serialize;

use forgestate::backend::AnyThread;
use forgestate::config::{Config, Overrides};
use forgestate::report::StatusPolicy;
use forgestate::verbs::cli::{Command, MakeRequest, OnMachine, Streams, Visit};
use forgestate::verbs::{self, Context, Spec};
use forgestate::{Client, Error};

use super::args::{Cli, TableVerb};
use super::errors::ErrorBody;
use super::failure::Failure;
use super::open::{Writer, load, opened};
use super::output;

/// The configured store, opened, and the `[status]` policy: what a verb runs with; and the
/// line naming the default store, shown once the request passed its checks.
fn open(cli: &Cli) -> Result<(Client<AnyThread>, StatusPolicy, Option<String>), Failure> {
    let config = load(cli)?;
    let policy = config.status_policy()?;
    let (client, note) = opened(cli, &config, Writer::Machine)?;
    Ok((client, policy, note))
}

/// Whether the request itself was refused (a usage or data error): the default store's line is
/// then not shown.
fn refused<T>(result: &forgestate::Result<T>) -> bool {
    result.as_ref().err().is_some_and(|e| {
        matches!(
            e.category(),
            forgestate::Category::Usage | forgestate::Category::Data
        )
    })
}

/// Runs a verb of the table: clap's flags into the verb's request, the request through the
/// library's call, the answer shown by the verb's own [`Command::show`].
pub(super) async fn table(cli: &Cli, verb: &TableVerb) -> Result<u8, Failure> {
    let visit = Visitor {
        cli,
        matches: &verb.matches,
    };
    match verbs::visit(&verb.name, visit).flatten() {
        Some(ran) => ran.await,
        None => Err(Error::usage(format!("unrecognized verb '{}'", verb.name)).into()),
    }
}

/// What runs each verb: the command line and the verb's flags, as clap parsed them.
struct Visitor<'a> {
    cli: &'a Cli,
    matches: &'a clap::ArgMatches,
}

impl<'a> Visit for Visitor<'a> {
    type Out = Option<Pin<Box<dyn Future<Output = Result<u8, Failure>> + 'a>>>;

    fn visit<V: Command + 'static>(self) -> Self::Out {
        Some(Box::pin(command::<V>(self.cli, self.matches)))
    }

    fn visit_machine<V: OnMachine + 'static>(self) -> Self::Out {
        Some(Box::pin(machine::<V>(self.cli, self.matches)))
    }

    fn visit_stream<V: Streams + 'static>(self) -> Self::Out {
        Some(Box::pin(stream::<V>(self.cli, self.matches)))
    }
}

/// The verb's flags as clap parsed them.
fn flags_of<F: FromArgMatches>(spec: &Spec, matches: &clap::ArgMatches) -> Result<F, Error> {
    F::from_arg_matches(matches).map_err(|e| Error::usage(format!("{}: {e}", spec.name)))
}

/// Runs `V`, a stream, over the configured store until it stops; the default store's line
/// comes last, as the stream has no end to show it before.
async fn stream<V: Streams>(cli: &Cli, matches: &clap::ArgMatches) -> Result<u8, Failure> {
    let flags: V::Flags = flags_of(&V::SPEC, matches)?;
    let (client, policy, note) = open(cli)?;
    let ctx = Context {
        client: &client,
        policy: &policy,
    };
    let ran = V::run(&flags, &ctx, &Printer::new(cli)).await;
    if let Some(note) = note.filter(|_| !refused(&ran)) {
        output::note(&note);
    }
    ran.map_err(|e| flagged(&V::SPEC, e).into())
}

/// Runs `V` over this machine's configuration: its flags, then its run, which shows the answer.
async fn machine<V: OnMachine>(cli: &Cli, matches: &clap::ArgMatches) -> Result<u8, Failure> {
    let flags: V::Flags = flags_of(&V::SPEC, matches)?;
    let printer = Printer::new(cli);
    Ok(V::run(&flags, &Lent(cli), &printer).await?)
}

/// What the command line lends a verb run over this machine's configuration.
struct Lent<'a>(&'a Cli);

impl verbs::cli::Host for Lent<'_> {
    fn overrides(&self) -> forgestate::Result<Overrides> {
        super::open::overrides(self.0).map_err(|f| Error::usage(f.message))
    }

    fn with_remote(&self, config: Config) -> Config {
        super::open::with_remote(config)
    }

    fn open(&self, config: &Config) -> forgestate::Result<Client<AnyThread>> {
        super::open::open(self.0, config, Writer::Machine)
    }
}

/// Runs `V`: its request from its flags (checked before the store is opened), then the verb
/// over the configured store (or alone, for a verb that opens none), its answer shown.
async fn command<V: Command>(cli: &Cli, matches: &clap::ArgMatches) -> Result<u8, Failure> {
    let flags: V::Flags = flags_of(&V::SPEC, matches)?;
    let request = flags.request().map_err(|e| flagged(&V::SPEC, e))?;
    let printer = Printer::new(cli);
    if !V::SPEC.opens_store
        && let Some(answer) = V::alone(&request)
    {
        let answer = answer.map_err(|e| flagged(&V::SPEC, e))?;
        return Ok(V::show(&request, answer, &printer));
    }
    let (client, policy, note) = open(cli)?;
    printer.note.set(note);
    let ctx = Context {
        client: &client,
        policy: &policy,
    };
    let ran = V::call(&ctx, &flags, request, &printer).await;
    if !refused(&ran) {
        printer.flush_note();
    }
    ran.map_err(|e| flagged(&V::SPEC, e).into())
}

/// The CLI's output for a verb's [`Command::show`]; the default store's line goes first, before
/// anything the verb prints.
struct Printer<'a> {
    cli: &'a Cli,
    note: std::cell::Cell<Option<String>>,
}

impl<'a> Printer<'a> {
    fn new(cli: &'a Cli) -> Printer<'a> {
        let note = std::cell::Cell::new(None);
        Printer { cli, note }
    }

    fn flush_note(&self) {
        if let Some(note) = self.note.take() {
            output::note(&note);
        }
    }
}

impl verbs::cli::Printer for Printer<'_> {
    fn json_mode(&self) -> bool {
        self.cli.json
    }

    fn quiet(&self) -> bool {
        self.cli.quiet
    }

    fn strict(&self) -> bool {
        self.cli.strict
    }

    fn json<T: Serialize>(&self, value: &T) {
        self.flush_note();
        output::json(value);
    }

    fn json_line<T: Serialize>(&self, value: &T) {
        self.flush_note();
        output::json_line(value);
    }

    fn json_failed<T: Serialize>(&self, value: &T, code: u8, message: &str) {
        self.flush_note();
        output::json(&Failed {
            answer: value,
            error: ErrorBody::new(code, message),
        });
    }

    fn page<T: Serialize>(&self, value: &T) {
        self.flush_note();
        output::json_page(value);
    }

    fn out(&self, text: &str) {
        self.flush_note();
        output::out(text);
    }

    fn note(&self, text: &str) {
        self.flush_note();
        output::note(text);
    }

    fn layout(&self) -> verbs::cli::table::Layout {
        super::terminal::stdout_layout()
    }

    fn color(&self) -> bool {
        super::terminal::stdout_color()
    }

    fn printable(&self, text: &str) -> String {
        crate::face::scrub::printable(text)
    }

    fn error_object(&self, e: &Error) -> verbs::FlushError {
        ErrorBody::new(super::errors::exit_code(e), &e.to_string()).into()
    }
}

/// An answer whose change stands but failed the caller (`--strict` and a spooled record): the
/// answer's fields and the `error` object beside them.
#[derive(Serialize)]
struct Failed<'a, T> {
    #[serde(flatten)]
    answer: &'a T,
    error: ErrorBody,
}

/// `e` with a leading request field name written as the flag that sets it.
fn flagged(spec: &Spec, e: Error) -> Error {
    let flags = spec.cli_flags();
    match e {
        Error::Usage { message } => Error::usage(as_flag(&message, &flags)),
        Error::Invalid { message } => Error::invalid(as_flag(&message, &flags)),
        Error::NotAFile { message } => Error::NotAFile {
            message: as_flag(&message, &flags),
        },
        e => e,
    }
}

/// `message` with a leading request field written as its flag; a field read from a positional
/// file (`<FILE|->`) has no flag, and stays.
fn as_flag(message: &str, flags: &BTreeMap<String, String>) -> String {
    // The longest name first, so `intent_data` is not read as `intent`.
    let mut fields: Vec<(&String, &String)> = flags.iter().collect();
    fields.sort_by_key(|(field, _)| std::cmp::Reverse(field.len()));
    for (field, form) in fields {
        if let Some(rest) = message.strip_prefix(field.as_str())
            && (rest.starts_with(' ') || rest.starts_with(':'))
        {
            return match form.starts_with('<') {
                true => message.to_string(),
                false => format!("{form}{rest}"),
            };
        }
    }
    message.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_leading_field_becomes_its_flag() {
        let flags = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(f, form)| (f.to_string(), form.to_string()))
                .collect()
        };
        let flags = flags(&[
            ("intent", "--intent"),
            ("intent_data", "--intent-data"),
            ("blockers", "--blocker"),
            ("body", "<FILE|->"),
        ]);
        assert_eq!(
            as_flag("intent_data needs an intent", &flags),
            "--intent-data needs an intent"
        );
        assert_eq!(as_flag("intent: bad", &flags), "--intent: bad");
        assert_eq!(as_flag("blockers: bad", &flags), "--blocker: bad");
        assert_eq!(as_flag("intentional text", &flags), "intentional text");
        assert_eq!(as_flag("body is bad", &flags), "body is bad");
    }

    #[test]
    fn every_field_of_a_request_read_from_a_file_has_no_flag() {
        let spec = forgestate::verbs::spec("render").expect("render is a verb");
        let flags = spec.cli_flags();
        assert!(flags.values().all(|form| form == "<FILE|->"), "{flags:?}");
        assert_eq!(as_flag("agent is bad", &flags), "agent is bad");
    }
}
