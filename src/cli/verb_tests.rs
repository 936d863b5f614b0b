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
