//! The CLI against the verb table: every verb is a command, every field of its request is one
//! of its flags (or the positional argument its spec names), so no request field is out of the
//! command line's reach, and a flag defaults to what its field defaults to.

use forgestate::verbs::{self, SchemaAnswer};

/// The subcommand of the verb named `name`, as the binary builds it from the table.
fn command(name: &str) -> Option<clap::Command> {
    verbs::commands().into_iter().find(|c| c.get_name() == name)
}

/// The property names of a request schema.
fn request_fields(schema: &serde_json::Map<String, serde_json::Value>) -> Vec<String> {
    schema
        .get("properties")
        .and_then(|p| p.as_object())
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

#[test]
fn every_request_field_is_a_flag() {
    let mut missing = Vec::new();
    for verb in SchemaAnswer::new().verbs {
        let Some(command) = command(verb.name) else {
            missing.push(format!("{}: no such command", verb.name));
            continue;
        };
        let longs: Vec<String> = command
            .get_arguments()
            .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
            .collect();
        let positionals: Vec<String> = command
            .get_positionals()
            .flat_map(|a| a.get_value_names().unwrap_or_default().iter())
            .map(|n| format!("<{n}>"))
            .collect();
        assert_eq!(
            verb.flags.keys().cloned().collect::<Vec<_>>(),
            request_fields(&verb.request),
            "{}: schema names the CLI form of every request field",
            verb.name
        );
        for (field, form) in &verb.flags {
            if !longs.contains(form) && !positionals.contains(form) {
                missing.push(format!(
                    "{}: request field `{field}` has no flag ({form}); flags are {longs:?}, \
                     positionals {positionals:?}",
                    verb.name
                ));
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

/// A flag's default is its request field's, as the request schema publishes it (so `call`, MCP
/// and Python default alike): no default is written for the command line alone.
#[test]
fn every_flag_default_is_its_request_fields_default() {
    let mut wrong = Vec::new();
    for spec in verbs::table() {
        let Some(command) = command(spec.name) else {
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
