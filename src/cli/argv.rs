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
    let table = forgestate::verbs::table();
    let spec = words
        .iter()
        .find_map(|w| table.iter().find(|s| s.name == w.as_str()))?;
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
        if let Some(v) = value {
            found = match v.as_str() {
                "always" => Some(ColorArg::Always),
                "never" => Some(ColorArg::Never),
                "auto" => Some(ColorArg::Auto),
                _ => found,
            };
        }
    }
    found
}

/// The argv of `forgestate LINE` (split on spaces), as tests spell a command line.
#[cfg(test)]
pub fn test_argv(line: &str) -> Vec<OsString> {
    std::iter::once("forgestate")
        .chain(line.split_whitespace())
        .map(OsString::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::test_argv as argv;
    use super::*;

    #[test]
    fn json_and_color_are_found_before_the_double_dash() {
        assert!(wants_json(&argv("list --json")));
        assert!(wants_json(&argv("--json frobnicate")));
        assert!(!wants_json(&argv("parse -- --json")));
        assert!(!wants_json(&argv("list --jsonx")));
        assert!(wants_json(&argv("list --json=agent,phase")));
        assert!(wants_json(&argv("list --jq .records")));
        assert_eq!(
            color_in_argv(&argv("list --color never")),
            Some(ColorArg::Never)
        );
        assert_eq!(
            color_in_argv(&argv("--color=always list")),
            Some(ColorArg::Always)
        );
        assert_eq!(color_in_argv(&argv("list --color")), None);
        assert_eq!(color_in_argv(&argv("list")), None);
    }

    #[test]
    fn a_field_after_a_bare_json_is_found() {
        assert_eq!(
            json_word(&argv("resume --agent a --session s --json resume_point")),
            Some(("resume".into(), "resume_point".into()))
        );
        assert_eq!(
            json_word(&argv("resume --json resume_point,phase --agent a")),
            Some(("resume".into(), "resume_point,phase".into()))
        );
        assert_eq!(
            json_word(&argv("--json resume_point resume --agent a --session s")),
            Some(("resume".into(), "resume_point".into())),
            "before the verb too"
        );
        assert_eq!(json_word(&argv("resume --json nosuchfield")), None);
        assert_eq!(json_word(&argv("resume --json=resume_point")), None);
        assert_eq!(json_word(&argv("parse -- --json resume_point")), None);
    }

    /// The clap command, built as `parse_args` builds it (globals propagated).
    fn command() -> clap::Command {
        let mut cmd = <crate::cli::args::Cli as clap::CommandFactory>::command();
        cmd.build();
        cmd
    }

    #[test]
    fn help_globals_is_found_among_flags() {
        let cmd = command();
        let found = |line: &str| is_help_globals(&cmd, &argv(line));
        assert!(found("help globals"));
        assert!(found("--color never help globals"));
        assert!(found("--store /x help globals --jq ."));
        assert!(found("--config /x help globals"));
        assert!(found("--json help globals"), "--json takes no word");
        assert!(!found("help checkpoint"));
        assert!(!found("help"));
        assert!(!found("checkpoint help globals"));
    }

    /// Every global flag, read from clap's definition, before `help globals`, with a value
    /// when it takes one: issue #40's drift 4 (`--wait 3s help globals`) and any flag added later.
    #[test]
    fn help_globals_is_found_after_every_global_flag() {
        let cmd = command();
        let all: Vec<&clap::Arg> = globals(&cmd).collect();
        assert!(all.iter().any(|a| a.get_long() == Some("wait")), "{all:?}");
        for arg in all {
            let flag = format!("--{}", arg.get_long().unwrap_or_default());
            let value = match arg.get_action().takes_values() {
                false => "",
                true if arg.is_require_equals_set() => "",
                true if arg.get_long() == Some("color") => " never",
                true => " 3s",
            };
            for line in [
                format!("{flag}{value} help globals"),
                format!("help {flag}{value} globals"),
                format!("help globals {flag}{value}"),
            ] {
                assert!(is_help_globals(&cmd, &argv(&line)), "{line}");
            }
        }
    }
}
