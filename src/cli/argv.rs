//! What argv says before clap has parsed it: `--json` and `--color` (so clap's own errors come
//! out as asked), `forgestate help globals`, and a bare word after `--json` that names fields of
//! the verb's answer (gh's spelling, `--json resume_point`), for the "did you mean" hint.

use std::ffi::OsString;

use super::args::{ColorArg, globals};

/// Whether `--json`, `--json=FIELDS` or `--jq` appears in argv before a `--`; clap errors
/// happen before flags are known.
pub fn wants_json(argv: &[OsString]) -> bool {
    argv.iter()
        .skip(1)
        .take_while(|a| *a != "--")
        .map(|a| a.to_string_lossy())
        .any(|a| a == "--json" || a.starts_with("--json=") || a == "--jq" || a.starts_with("--jq="))
}

/// The verb and the word after a bare `--json` when that word names fields of the verb's answer
/// (`--json resume_point`, as gh spells it): clap takes it for a stray argument.
pub fn json_word(argv: &[OsString]) -> Option<(String, String)> {
    let words: Vec<String> = argv
        .iter()
        .skip(1)
        .take_while(|a| *a != "--")
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let at = words.iter().position(|w| w == "--json")?;
    let word = words.get(at + 1)?;
    let spec = words.iter().find_map(|w| forgestate::verbs::spec(w))?;
    let schema = (spec.answer)();
    let props = schema.get("properties").and_then(|p| p.as_object())?;
    word.split(',')
        .all(|f| props.contains_key(f.trim()))
        .then(|| (spec.name.to_string(), word.clone()))
}

/// The global flags of `cmd` that take their value from the next word (`--wait 3s`), spelled
/// as typed (`--wait`, and `-x` for a short name): read from clap's definition, so a new
/// global is known here as soon as it is declared. `--json[=FIELDS]` takes its value only
/// after `=`, so it is not one of them.
fn globals_taking_a_word(cmd: &clap::Command) -> Vec<String> {
    globals(cmd)
        .filter(|a| a.get_action().takes_values() && !a.is_require_equals_set())
        .filter(|a| a.get_num_args().is_none_or(|n| n.min_values() > 0))
        .flat_map(|a| {
            let long = a.get_long().map(|l| format!("--{l}"));
            let short = a.get_short().map(|s| format!("-{s}"));
            long.into_iter().chain(short)
        })
        .collect()
}

/// `forgestate help globals` (with any global flags of `cmd`, and their values, around it).
pub fn is_help_globals(cmd: &clap::Command, argv: &[OsString]) -> bool {
    let taking = globals_taking_a_word(cmd);
    let mut words = Vec::new();
    let mut args = argv.iter().skip(1).map(|a| a.to_string_lossy());
    while let Some(a) = args.next() {
        if taking.iter().any(|t| *t == a) {
            args.next();
        } else if !a.starts_with('-') {
            words.push(a.into_owned());
        }
    }
    words.len() >= 2 && words[0] == "help" && words[1] == "globals"
}

/// `--color` as typed in argv (the last one wins), for clap's own messages.
pub fn color_in_argv(argv: &[OsString]) -> Option<ColorArg> {
    let mut found = None;
    let mut args = argv.iter().skip(1).take_while(|a| *a != "--");
    while let Some(a) = args.next() {
        let a = a.to_string_lossy();
        let value = match a.strip_prefix("--color") {
            Some("") => args.next().map(|v| v.to_string_lossy().into_owned()),
            Some(rest) => rest.strip_prefix('=').map(str::to_string),
            None => None,
        };
        if let Some(v) = value.and_then(|v| clap::ValueEnum::from_str(&v, false).ok()) {
            found = Some(v);
        }
    }
    found
}
