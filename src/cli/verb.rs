//! Running a verb of the table for the CLI: clap parses the flags into the verb's request (its
//! type derives clap's `Args`), the request goes through the same call as MCP and `call`
//! ([`forgestate::verbs::run`]), and the CLI only renders the typed answer.
//!
//! The verb's own checks name request fields (`reason "x" is not a reason…`); on the command
//! line those are flags, so a usage or data error that opens with a field's name is reworded to
//! open with its flag (`--reason "x" …`), as the Python package rewords flags to parameters.

use forgestate::backend::AnyThread;
use forgestate::report::StatusPolicy;
use forgestate::verbs::{self, Context, Run, Spec};
use forgestate::{Client, Error};
use serde_json::Value;

use super::args::{Cli, TableVerb};
use super::failure::Failure;
use super::open::load;
use super::open::opened;
use super::output;

/// The configured store, opened, and the `[status]` policy: what a verb runs with.
pub(super) struct Opened {
    client: Client<AnyThread>,
    policy: StatusPolicy,
    /// The line naming the default store, shown once the request passed its checks.
    note: Option<String>,
}

impl Opened {
    /// Loads the configuration and opens its store.
    pub(super) fn new(cli: &Cli) -> Result<Opened, Failure> {
        let config = load(cli)?;
        let policy = config.status_policy()?;
        let (client, note) = opened(cli, &config)?;
        Ok(Opened {
            client,
            policy,
            note,
        })
    }

    /// What a verb runs with.
    pub(super) fn context(&self) -> Context<'_> {
        Context {
            client: &self.client,
            policy: &self.policy,
        }
    }

    /// Shows the default store's line, unless the request itself was refused, and words a
    /// failure in the CLI's terms.
    pub(super) fn finish<T>(&self, spec: &Spec, result: forgestate::Result<T>) -> Result<T, Failure> {
        let refused = result.as_ref().err().is_some_and(|e| {
            matches!(
                e.category(),
                forgestate::Category::Usage | forgestate::Category::Data
            )
        });
        if let Some(note) = self.note.as_ref().filter(|_| !refused) {
            output::note(note);
        }
        result.map_err(|e| flagged(spec, e).into())
    }
}

/// Runs `V` on `request` over the configured store, with the configured `[status]` policy.
pub(super) async fn run<V: Run>(cli: &Cli, request: V::Request) -> Result<V::Answer, Failure> {
    let opened = Opened::new(cli)?;
    let answer = forgestate::verbs::run::<V>(&opened.context(), request).await;
    opened.finish(&V::SPEC, answer)
}

/// Runs a verb of the table with no command of the CLI's own: the request its flags make goes
/// through the library's call, and the answer is printed as JSON or as the verb's text.
pub(super) async fn table(cli: &Cli, verb: &TableVerb) -> Result<u8, Failure> {
    let Some(spec) = verbs::spec(&verb.name) else {
        return Err(Error::usage(format!("unrecognized verb '{}'", verb.name)).into());
    };
    let opened = Opened::new(cli)?;
    let answer = verbs::call_flags(&opened.context(), spec.name, &verb.matches)
        .await
        .unwrap_or_else(|| {
            Err(Error::usage(format!(
                "{} is not run on the command line this way; see `forgestate {} --help`",
                spec.name, spec.name
            )))
        });
    let answer = opened.finish(spec, answer)?;
    if let Some(warnings) = answer.get("warnings").and_then(Value::as_array) {
        let warnings: Vec<String> = warnings
            .iter()
            .filter_map(|w| w.as_str().map(str::to_string))
            .collect();
        warn(cli, &warnings);
    }
    if cli.json {
        output::json(&answer);
    } else {
        output::out(&output::printable(&verbs::cli::human(spec.name, &answer)));
    }
    Ok(0)
}

/// Prints `warnings` on stderr (not with `--quiet`), one `warning:` line each.
pub(super) fn warn(cli: &Cli, warnings: &[String]) {
    if !cli.quiet {
        for w in warnings {
            output::note(&format!("warning: {w}"));
        }
    }
}

/// `e` with a leading request field name written as the flag that sets it.
fn flagged(spec: &Spec, e: Error) -> Error {
    let fields = request_fields(&(spec.request)());
    match e {
        Error::Usage { message } => Error::usage(as_flag(&message, &fields, spec.flags)),
        Error::Invalid { message } => Error::invalid(as_flag(&message, &fields, spec.flags)),
        Error::NotAFile { message } => Error::NotAFile {
            message: as_flag(&message, &fields, spec.flags),
        },
        e => e,
    }
}

/// The property names of a request schema.
pub(super) fn request_fields(schema: &serde_json::Map<String, Value>) -> Vec<String> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

/// The flag that sets request field `field`: `--field-name`, or the one the verb's spec names.
/// `None` when the field is not a flag: a positional argument (`<FILE|->`), or every field of a
/// request read whole as a JSON document (spec entry `("*", "<FILE|->")`).
pub(super) fn flag_for(field: &str, renamed: &[(&str, &str)]) -> Option<String> {
    let named = renamed
        .iter()
        .find(|(f, _)| *f == field || *f == "*")
        .map(|(_, flag)| *flag);
    match named {
        Some(flag) if flag.starts_with('<') => None,
        Some(flag) => Some(format!("--{flag}")),
        None => Some(format!("--{}", field.replace('_', "-"))),
    }
}

fn as_flag(message: &str, fields: &[String], renamed: &[(&str, &str)]) -> String {
    // The longest name first, so `intent_data` is not read as `intent`.
    let mut fields: Vec<&String> = fields.iter().collect();
    fields.sort_by_key(|f| std::cmp::Reverse(f.len()));
    for field in fields {
        if let Some(rest) = message.strip_prefix(field.as_str())
            && (rest.starts_with(' ') || rest.starts_with(':'))
        {
            return match flag_for(field, renamed) {
                Some(flag) => format!("{flag}{rest}"),
                None => message.to_string(),
            };
        }
    }
    message.to_string()
}

#[cfg(test)]
#[path = "verb_tests.rs"]
mod parity;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_leading_field_becomes_its_flag() {
        let fields = vec!["intent".to_string(), "intent_data".to_string()];
        let renamed = [("blockers", "blocker")];
        assert_eq!(
            as_flag("intent_data needs an intent", &fields, &renamed),
            "--intent-data needs an intent"
        );
        assert_eq!(as_flag("intent: bad", &fields, &renamed), "--intent: bad");
        assert_eq!(
            as_flag("intentional text", &fields, &renamed),
            "intentional text"
        );
        assert_eq!(flag_for("blockers", &renamed).as_deref(), Some("--blocker"));
        let document = [("*", "<FILE|->")];
        assert_eq!(flag_for("agent", &document), None);
        assert_eq!(
            super::parity::positional_for("agent", &document),
            Some("FILE|-")
        );
        assert_eq!(
            as_flag("agent is bad", &["agent".into()], &document),
            "agent is bad"
        );
    }
}
