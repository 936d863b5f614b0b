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
use forgestate::config::Config;
use forgestate::report::StatusPolicy;
use forgestate::verbs::cli::{CliVerb, Visit, refused};
use forgestate::verbs::{self, Spec};
use forgestate::{Client, Error};

use super::args::{Cli, TableVerb};
use super::errors::ErrorBody;
use super::failure::Failure;
use super::open::{Writer, opened};
use super::output;

/// Runs a verb of the table: clap's flags into the verb's, and the verb's one run over what the
/// command line lends, which shows its answer.
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

    fn visit<V: CliVerb + 'static>(self) -> Self::Out {
        Some(Box::pin(run::<V>(self.cli, self.matches)))
    }
}

/// Runs `V` on its flags as clap parsed them; the line naming a default store, held until the
/// first output, is shown at the end if nothing was, unless the request was refused.
async fn run<V: CliVerb>(cli: &Cli, matches: &clap::ArgMatches) -> Result<u8, Failure> {
    names_fit(matches).map_err(|e| Failure::from(flagged(&V::SPEC, e)))?;
    let flags = V::Flags::from_arg_matches(matches)
        .map_err(|e| Error::usage(format!("{}: {e}", V::SPEC.name)))?;
    let face = Face {
        cli,
        note: std::cell::Cell::new(None),
    };
    let ran = V::run_cli(&flags, &face, &face).await;
    if !refused(&ran) {
        face.flush_note();
    }
    ran.map_err(|e| flagged(&V::SPEC, e).into())
}

/// Every name or glob flag (`--agent`, `--session`, `--phase`, ...) within the one limit every
/// face keeps ([`verbs::input::name_length`]), before anything is opened.
fn names_fit(matches: &clap::ArgMatches) -> forgestate::Result<()> {
    for field in verbs::input::NAME_FIELDS {
        let Ok(Some(values)) = matches.try_get_raw(field) else {
            continue;
        };
        for value in values {
            verbs::input::name_length(field, &value.to_string_lossy())?;
        }
    }
    Ok(())
}

/// What the command line lends a verb, and where its output goes: the default store's line
/// goes first, before anything the verb prints.
struct Face<'a> {
    cli: &'a Cli,
    note: std::cell::Cell<Option<String>>,
}

impl Face<'_> {
    fn flush_note(&self) {
        if let Some(note) = self.note.take() {
            output::note(&note);
        }
    }
}

impl verbs::cli::Host for Face<'_> {
    fn config(&self) -> forgestate::Result<Config> {
        super::open::load(self.cli)
    }

    fn open(&self, config: &Config) -> forgestate::Result<Client<AnyThread>> {
        super::open::open(self.cli, config, Writer::Machine)
    }

    fn store(&self) -> forgestate::Result<(Client<AnyThread>, StatusPolicy)> {
        let config = verbs::cli::Host::config(self)?;
        let policy = config.status_policy()?;
        let (client, note) = opened(self.cli, &config, Writer::Machine)?;
        self.note.set(note);
        Ok((client, policy))
    }

    fn take_note(&self) -> Option<String> {
        self.note.take()
    }
}

impl verbs::cli::Printer for Face<'_> {
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
