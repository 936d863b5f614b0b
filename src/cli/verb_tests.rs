//! The CLI against the verb table: every verb is a command, and every field of its request is
//! one of its flags (or the positional argument its spec names), so no request field is out of
//! the command line's reach.

use clap::CommandFactory;

use forgestate::verbs;

use super::super::args::Cli;
use super::{flag_for, request_fields};

#[test]
fn every_request_field_is_a_flag() {
    let cli = Cli::command();
    let mut missing = Vec::new();
    for spec in verbs::table() {
        let Some(command) = cli.find_subcommand(spec.name) else {
            missing.push(format!("{}: no such command", spec.name));
            continue;
        };
        let longs: Vec<String> = command
            .get_arguments()
            .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
            .collect();
        let positionals: Vec<String> = command
            .get_positionals()
            .flat_map(|a| a.get_value_names().unwrap_or_default().iter())
            .map(|n| n.to_string())
            .collect();
        for field in request_fields(&(spec.request)()) {
            match (
                flag_for(&field, spec.flags),
                positional_for(&field, spec.flags),
            ) {
                (Some(flag), _) if longs.contains(&flag) => {}
                (None, Some(name)) if positionals.iter().any(|p| p == name) => {}
                (flag, name) => missing.push(format!(
                    "{}: request field `{field}` has no flag ({flag:?}, positional {name:?}); \
                     flags are {longs:?}",
                    spec.name
                )),
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn the_spec_renames_only_fields_that_exist() {
    for spec in verbs::table() {
        let fields = request_fields(&(spec.request)());
        for (field, _) in spec.flags {
            assert!(
                *field == "*" || fields.iter().any(|f| f == field),
                "{}: the spec renames `{field}`, which its request lacks",
                spec.name
            );
        }
    }
}

/// The positional argument that carries `field`, when the spec says one does (`FILE|-`).
pub(super) fn positional_for<'a>(field: &str, renamed: &[(&str, &'a str)]) -> Option<&'a str> {
    renamed
        .iter()
        .find(|(f, _)| *f == field || *f == "*")
        .and_then(|(_, flag)| flag.strip_prefix('<')?.strip_suffix('>'))
}

/// A flag's default is its request field's, as the request schema publishes it (so `call`, MCP
/// and Python default alike): no default is written for the command line alone.
#[test]
fn every_flag_default_is_its_request_fields_default() {
    let cli = Cli::command();
    let mut wrong = Vec::new();
    for spec in verbs::table() {
        let Some(command) = cli.find_subcommand(spec.name) else {
            continue;
        };
        let request = (spec.request)();
        for arg in command.get_arguments() {
            let Some(flag) = arg.get_default_values().first() else {
                continue;
            };
            let flag = flag.to_string_lossy();
            let field = arg.get_id().as_str();
            let published = request
                .get("properties")
                .and_then(|p| p.get(field))
                .and_then(|p| p.get("default"));
            let same = match published {
                Some(serde_json::Value::String(s)) => *s == flag,
                Some(v) => v.to_string() == flag,
                None => false,
            };
            if !same {
                wrong.push(format!(
                    "{} --{}: the flag defaults to {flag:?}, the request to {published:?}",
                    spec.name,
                    arg.get_long().unwrap_or(field)
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
