//! The CLI's face of the table: each verb's subcommand is built from its spec (`about`,
//! `examples`) and its request (which derives clap's `Args`, so a field's doc comment is its
//! flag's help), and runs through the same [`run`](super::run) as every other face.

use clap::{ArgMatches, Args, Command, FromArgMatches};
use serde_json::Value;

use super::{Context, Run, Verb, answer_value};
use crate::error::{Error, Result};

/// `V`'s subcommand: its name, its one line, its examples and its request's flags.
pub fn command<V: Verb>() -> Command
where
    V::Request: Args,
{
    let spec = V::SPEC;
    let about = match spec.about {
        "" => spec.title,
        about => about,
    };
    // After the flags: a request's own doc comment would otherwise be the verb's about.
    let command = V::Request::augment_args(Command::new(spec.name))
        .about(about)
        .long_about(None);
    match spec.examples {
        "" => command,
        examples => command.after_help(format!("Examples:\n{examples}")),
    }
}

/// Runs `V` on the flags clap parsed into `matches`: the request they make, run, and the
/// answer as a JSON value.
pub async fn call<V: Run>(ctx: &Context<'_>, matches: &ArgMatches) -> Result<Value>
where
    V::Request: Args,
{
    let request = V::Request::from_arg_matches(matches)
        .map_err(|e| Error::usage(format!("{}: {e}", V::SPEC.name)))?;
    answer_value::<V>(super::run::<V>(ctx, request).await?)
}

/// The CLI's text for the answer of the verb named `name`: its own, else its summary, else the
/// answer as JSON.
pub fn human(name: &str, answer: &Value) -> String {
    let spec = super::spec(name);
    spec.and_then(|s| (s.human)(answer).or_else(|| (s.summary)(answer)))
        .unwrap_or_else(|| serde_json::to_string_pretty(answer).unwrap_or_default())
}
