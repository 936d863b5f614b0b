//! `forgestate completions SHELL` and `forgestate man`: generated from the clap command, so they
//! list every verb; the bash script is valid bash; `--json` keeps the one-document promise.

use crate::common;
use std::process::Command;

use common::cli::{Bin, parse_ok, stderr, stdout, verbs, words};

/// Verbs every completion script and the man page must know.
fn ok(line: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = Bin::new(dir.path()).line(line);
    assert_eq!(out.status.code(), Some(0), "{line}: {}", stderr(&out));
    assert_eq!(stderr(&out), "", "{line}: nothing on stderr");
    stdout(&out)
}

#[test]
fn every_shells_script_mentions_every_verb_and_its_flags() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let script = ok(&format!("completions {shell}"));
        assert!(script.len() > 1000, "{shell}: {script}");
        for verb in verbs() {
            assert!(script.contains(verb), "{shell} does not complete {verb}");
        }
        for flag in ["agent", "session", "phase", "since"] {
            // fish spells a long option `-l agent`; the others `--agent`.
            let spelled = match shell {
                "fish" => format!("-l {flag}"),
                _ => format!("--{flag}"),
            };
            assert!(
                script.contains(&spelled),
                "{shell} does not complete {spelled}"
            );
        }
    }
}

#[test]
fn the_bash_script_is_valid_bash() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("forgestate.bash");
    std::fs::write(&path, ok("completions bash")).unwrap();
    let check = Command::new("bash").arg("-n").arg(&path).output().unwrap();
    assert!(
        check.status.success(),
        "bash -n: {}",
        String::from_utf8_lossy(&check.stderr)
    );
    // And the script registers the completion for the command.
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("complete -F _forgestate"), "{text}");
}

#[test]
fn an_unknown_shell_is_a_usage_error_that_lists_the_shells() {
    let dir = tempfile::tempdir().unwrap();
    let out = Bin::new(dir.path()).line("completions tcsh");
    assert_eq!(out.status.code(), Some(64));
    let err = stderr(&out);
    assert!(
        err.contains("tcsh") && err.contains("bash") && err.contains("zsh"),
        "{err}"
    );
    assert_eq!(stdout(&out), "");
}

#[test]
fn the_man_page_has_the_usual_sections_and_every_verb() {
    let page = ok("man");
    assert!(
        page.starts_with(".ie") || page.starts_with(".TH"),
        "roff: {page}"
    );
    assert!(page.contains(".TH forgestate 1"), "{page}");
    for section in [".SH NAME", ".SH SYNOPSIS", ".SH OPTIONS", ".SH SUBCOMMANDS"] {
        assert!(page.contains(section), "no {section}: {page}");
    }
    for verb in verbs() {
        assert!(
            page.contains(&format!("forgestate\\-{}(1)", verb.replace('-', "\\-"))),
            "the page does not list {verb}"
        );
    }
    // The exit codes are in the page, as in --help.
    assert!(page.contains("75 try again later"), "{page}");
}

#[test]
fn man_dir_writes_one_page_per_verb() {
    let dir = tempfile::tempdir().unwrap();
    let out = Bin::new(dir.path()).line("man --dir pages --json");
    let doc = parse_ok(&words("man --dir pages --json"), &out);
    let pages = doc["pages"].as_array().unwrap();
    assert_eq!(pages.len(), verbs().len() + 1, "{doc}");
    let main = std::fs::read_to_string(dir.path().join("pages/forgestate.1")).unwrap();
    assert!(main.contains(".SH NAME"));
    for verb in verbs() {
        let page = dir.path().join(format!("pages/forgestate-{verb}.1"));
        let text =
            std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
        assert!(
            text.contains(&format!(".TH forgestate-{verb} 1")),
            "{verb}: {text}"
        );
        assert!(
            text.contains(".SH NAME") && text.contains(".SH OPTIONS"),
            "{verb}"
        );
    }
    let checkpoint =
        std::fs::read_to_string(dir.path().join("pages/forgestate-checkpoint.1")).unwrap();
    assert!(checkpoint.contains("\\-\\-phase"), "{checkpoint}");
}

#[test]
fn json_mode_wraps_the_script_and_the_page_in_one_document() {
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path());
    let doc = parse_ok(
        &words("completions fish --json"),
        &bin.line("completions fish --json"),
    );
    assert_eq!(doc["shell"], "fish");
    assert_eq!(
        doc["script"].as_str().unwrap().trim_end(),
        ok("completions fish").trim_end()
    );
    let doc = parse_ok(&words("man --json"), &bin.line("man --json"));
    assert_eq!(doc["page"], "forgestate.1");
    assert_eq!(
        doc["roff"].as_str().unwrap().trim_end(),
        ok("man").trim_end()
    );
}

/// The answers' scrubber leaves forgestate's own text alone: zsh writes a flag's description
/// as `--token-file=[…]`, an assignment to a secret-looking name by shape.
#[test]
fn completion_scripts_and_man_pages_are_not_scrubbed() {
    let zsh = ok("completions zsh");
    assert!(zsh.contains("'--token-file=[Read"), "{zsh}");
    assert!(!zsh.contains("[REDACTED]"), "{zsh}");
    let doc = ok("completions zsh --json");
    assert!(!doc.contains("[REDACTED]"), "{doc}");
}
