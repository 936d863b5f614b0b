//! What argv says before clap has parsed it: `--json` and `--color` (so clap's own errors come
//! out as asked), `forgestate help globals`, and a bare word after `--json` that names fields of
//! the verb's answer (gh's spelling, `--json resume_point`), for the "did you mean" hint.

use std::ffi::OsString;

use super::args::ColorArg;

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

/// `forgestate help globals` (with any global flags, and their values, around it).
pub fn is_help_globals(argv: &[OsString]) -> bool {
    const TAKES_VALUE: &[&str] = &[
        "--config",
        "--store",
        "--url",
        "--owner",
        "--repo",
        "--token-file",
        "--jq",
        "--color",
    ];
    let mut words = Vec::new();
    let mut args = argv.iter().skip(1).map(|a| a.to_string_lossy());
    while let Some(a) = args.next() {
        if TAKES_VALUE.contains(&a.as_ref()) {
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

    #[test]
    fn help_globals_is_found_among_flags() {
        assert!(is_help_globals(&argv("help globals")));
        assert!(is_help_globals(&argv("--color never help globals")));
        assert!(is_help_globals(&argv("--store /x help globals --jq .")));
        assert!(is_help_globals(&argv("--config /x help globals")));
        assert!(!is_help_globals(&argv("help checkpoint")));
        assert!(!is_help_globals(&argv("help")));
        assert!(!is_help_globals(&argv("checkpoint help globals")));
    }
}
