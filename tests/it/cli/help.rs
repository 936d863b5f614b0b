//! The CLI explains itself: every flag is described, every verb's help ends with examples, and
//! a verb's help lists its own flags with one line pointing to `forgestate help globals`.

use crate::common;
use common::cli::{run_in, stderr, stdout, verbs, words};

fn help(args: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(dir.path(), &words(args), None);
    assert_eq!(out.status.code(), Some(0), "{args}: {}", stderr(&out));
    stdout(&out)
}

/// The option entries of a help text: (the flag line, whether a description goes with it).
fn entries(text: &str) -> Vec<(String, bool)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut in_args = false;
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        if !line.starts_with(' ') {
            in_args =
                line.ends_with("Options:") || line.ends_with("options:") || *line == "Arguments:";
            continue;
        }
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let starts_entry = trimmed.starts_with('-') || trimmed.starts_with('[');
        if !in_args || !starts_entry || indent > 6 {
            continue;
        }
        // Same line: the spec, two or more spaces, then the description. Or the next line,
        // indented deeper, holds it (clap's long help).
        let same_line = trimmed
            .split_once("  ")
            .is_some_and(|(_, rest)| !rest.trim().is_empty());
        let next_line = lines.get(i + 1).is_some_and(|next| {
            let t = next.trim_start();
            !t.is_empty() && !t.starts_with('-') && next.len() - t.len() > indent
        });
        found.push((trimmed.to_string(), same_line || next_line));
    }
    found
}

#[test]
fn every_flag_of_every_verb_has_a_description() {
    for verb in verbs()
        .iter()
        .map(|v| format!("{v} "))
        .chain([String::new()])
    {
        for flag in ["-h", "--help"] {
            let text = help(&format!("{verb}{flag}"));
            let entries = entries(&text);
            assert!(!entries.is_empty(), "{verb}{flag}: {text}");
            for (entry, described) in entries {
                assert!(
                    described,
                    "`{verb}{flag}`: {entry:?} has no description:\n{text}"
                );
            }
            // Each possible value of a flag is described too (`- auto: Colour when...`).
            let values = text.split("Possible values:").skip(1);
            for value in
                values.flat_map(|v| v.lines().skip(1).map_while(|l| l.trim().strip_prefix("- ")))
            {
                assert!(
                    value.contains(": "),
                    "`{verb}{flag}`: value {value:?} has no description"
                );
            }
        }
    }
}

#[test]
fn every_verb_ends_with_real_examples() {
    for verb in verbs() {
        for flag in ["-h", "--help"] {
            let text = help(&format!("{verb} {flag}"));
            let (_, examples) = text
                .rsplit_once("Examples:\n")
                .unwrap_or_else(|| panic!("{verb} {flag}: no examples:\n{text}"));
            let lines: Vec<&str> = examples.lines().filter(|l| !l.trim().is_empty()).collect();
            assert!(
                (2..=3).contains(&lines.len()),
                "{verb}: two or three examples: {lines:?}"
            );
            for line in lines {
                assert!(
                    line.starts_with("  ") && line.contains(&format!("forgestate {verb}")),
                    "{verb}: {line:?} is an example of this verb, at the end of the help"
                );
            }
        }
    }
}

#[test]
fn a_verbs_help_ends_its_flags_with_one_line_on_the_global_options() {
    let text = help("checkpoint --help");
    let own = text.find("--agent").unwrap();
    let line = text
        .find("`forgestate help globals`")
        .unwrap_or_else(|| panic!("{text}"));
    assert!(own < line, "{text}");
    assert!(
        !text.lines().any(|l| l == "Global options:"),
        "no repeated globals: {text}"
    );
    assert!(!text.contains("--token-file"), "{text}");
    let globals = help("help globals");
    assert!(
        globals.lines().any(|l| l == "Global options:") && globals.contains("--token-file"),
        "{globals}"
    );
    assert_eq!(
        entries(&globals)
            .iter()
            .filter(|(_, described)| !described)
            .count(),
        0,
        "every global is described: {globals}"
    );
}

#[test]
fn parse_names_no_forge_flags_but_still_accepts_them() {
    let text = help("parse --help");
    for flag in [
        "--url",
        "--owner",
        "--repo",
        "--token-file",
        "--store",
        "--config",
        "--allow-insecure-http",
        "--strict",
    ] {
        assert!(!text.contains(flag), "parse --help names {flag}:\n{text}");
    }
    assert!(text.contains("--json"), "{text}");
    assert!(
        !help("latest --help").contains("--strict"),
        "--strict only matters to writers"
    );
    // Every verb that saves a record honours --strict, so its help names it (`end` once hid it).
    for writer in ["checkpoint", "health", "end", "fork"] {
        let text = help(&format!("{writer} --help"));
        assert!(text.contains("--strict"), "{writer} --help:\n{text}");
    }

    let dir = tempfile::tempdir().unwrap();
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/seed-health-unclosed.md"
    );
    let line = format!("--url https://forge.example.com parse {fixture}");
    let out = run_in(dir.path(), &words(&line), None);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn no_verb_names_every_verb() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(dir.path(), &[], None);
    assert_ne!(out.status.code(), Some(0));
    let err = stderr(&out);
    let line = err
        .lines()
        .find(|l| l.contains("a verb is required"))
        .unwrap_or_else(|| panic!("no 'a verb is required' line in: {err}"));
    for verb in verbs() {
        assert!(
            line.contains(&format!(" {verb},"))
                || line.contains(&format!("({verb},"))
                || line.contains(&format!(" {verb})")),
            "{verb} missing from: {line}"
        );
    }
}

/// Every global flag `help globals` lists, typed before `help globals` with a value when it
/// takes one, still shows the same page (issue #40's drift 4: `--wait 3s help globals` said
/// "unrecognized verb 'globals'").
#[test]
fn help_globals_answers_after_every_global_flag() {
    let page = help("help globals");
    let flags: Vec<(String, bool)> = entries(&page)
        .into_iter()
        .filter_map(|(spec, _)| {
            let spec = spec.split("  ").next().unwrap_or_default().to_string();
            let long = spec.split(", ").last().unwrap_or_default().to_string();
            let (name, rest) = long.split_once(' ').unwrap_or((long.as_str(), ""));
            let name = name.split('[').next().unwrap_or_default().to_string();
            name.starts_with("--")
                .then(|| (name, rest.trim_start().starts_with('<')))
        })
        .collect();
    assert!(
        flags.iter().any(|(f, takes)| f == "--wait" && *takes),
        "{flags:?}\n{page}"
    );
    for (flag, takes) in flags {
        let value = match (takes, flag.as_str()) {
            (false, _) => "",
            (true, "--color") => " never",
            (true, _) => " 3s",
        };
        for line in [
            format!("{flag}{value} help globals"),
            format!("help {flag}{value} globals"),
            format!("help globals {flag}{value}"),
        ] {
            assert_eq!(help(&line), page, "{line}");
        }
    }
    // `help globals` is the first two words; another verb's `help` is a stray argument.
    let dir = tempfile::tempdir().unwrap();
    for line in ["checkpoint help globals", "help frobnicate"] {
        let out = run_in(dir.path(), &words(line), None);
        assert_eq!(out.status.code(), Some(64), "{line}: {}", stdout(&out));
    }
    assert!(help("help checkpoint").contains("--phase"));
}

/// The global flags are hidden from a verb's own help, yet taken before or after any verb.
#[test]
fn hidden_globals_still_parse_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let body = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/seed-health-unclosed.md"
    );
    for line in [
        "list --color never --json".to_string(),
        format!("--url https://f.example parse {body} --json"),
        format!("parse --store d {body}"),
        "latest --strict -v".to_string(),
        "resume --agent a --session s --json".to_string(),
    ] {
        let out = run_in(dir.path(), &words(&line), None);
        assert_eq!(out.status.code(), Some(0), "{line}: {}", stderr(&out));
    }
}
