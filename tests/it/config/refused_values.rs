//! End-to-end: configuration values the binary refuses at load time (exit 78, key named).

use crate::common;
use common::cli::{run_with, stderr, words};

/// Runs `list` with `config` (a file's text) and returns the exit code and stderr.
fn with_config(config: &str) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("c.toml"), config).unwrap();
    let env = [("FORGESTATE_TOKEN", "0123456789abcdef")];
    let out = run_with(dir.path(), &words("list --config c.toml"), &env, None);
    (out.status.code(), stderr(&out))
}

#[test]
fn out_of_range_config_values_exit_78_naming_the_key_and_the_file() {
    // A forge that refuses connections, with no retries: a value that slipped through would
    // make the command fail otherwise (or panic), never exit 78.
    let forge = "[forge]\nurl = \"http://127.0.0.1:9\"\nowner = \"o\"\nrepo = \"r\"\n";
    let huge = i64::MAX.to_string();
    for (key, value) in [
        ("connect_timeout_secs", "0"),
        ("request_timeout_secs", huge.as_str()),
        ("recheck_secs", huge.as_str()),
        ("retry_budget_secs", huge.as_str()),
        ("quick_timeout_ms", "0"),
        ("max_response_mib", huge.as_str()),
        ("drain_budget_secs", huge.as_str()),
        ("drain_max_backoff_secs", huge.as_str()),
    ] {
        let budget = if key == "retry_budget_secs" {
            String::new()
        } else {
            "retry_budget_secs = 0\n".to_string()
        };
        let (code, err) = with_config(&format!("{forge}{budget}{key} = {value}\n"));
        assert_eq!(code, Some(78), "{key} = {value}: {err}");
        assert!(
            err.contains(&format!("[forge] {key} = {value}")) && err.contains("c.toml"),
            "{key}: {err}"
        );
    }
    let (code, err) = with_config("[format]\nmax_body_bytes = 0\n");
    assert_eq!(code, Some(78), "{err}");
    assert!(
        err.contains("max_body_bytes") && err.contains("c.toml"),
        "{err}"
    );
}

#[test]
fn empty_resume_points_and_author_exit_78_naming_the_key() {
    for (config, key) in [
        ("[resume]\ndefault = \"\"\n", "[resume] default"),
        ("[resume]\ndefault = \"  \"\n", "[resume] default"),
        (
            "[resume.agents.\"w\"]\ndone = \"\"\n",
            "[resume.agents.\"w\"] \"done\"",
        ),
        ("[local]\nauthor = \"\"\n", "[local] author"),
    ] {
        let (code, err) = with_config(config);
        assert_eq!(code, Some(78), "{config}: {err}");
        assert!(
            err.contains(key) && err.contains("is empty"),
            "{key}: {err}"
        );
    }
}

/// A forge with no token says how to give one, in words the stderr scrubber leaves alone (it
/// once read "token: set" as a secret assignment and printed "[REDACTED] $FORGESTATE_TOKEN").
#[test]
fn a_missing_token_is_explained_not_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_with(
        dir.path(),
        &words("--url http://127.0.0.1:9 --repo o/r checkpoint --agent a --session s --phase p"),
        &[],
        None,
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(78), "{err}");
    assert!(err.contains("set $FORGESTATE_TOKEN"), "{err}");
    assert!(!err.contains("[REDACTED]"), "{err}");
}

/// A token of a letter or two (a placeholder, a truncated paste) is refused before any request,
/// naming where it came from and never echoing it; and, while it is not used (the local store),
/// it garbles no answer: scrubbing it would cut every word holding that letter.
#[test]
fn a_token_too_short_to_be_one_is_refused_and_scrubs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let forge = [
        ("FORGESTATE_URL", "http://127.0.0.1:9"),
        ("FORGESTATE_REPO", "acme/app"),
        ("FORGESTATE_TOKEN", "tq7"),
    ];
    let out = run_with(dir.path(), &words("list"), &forge, None);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(78), "{err}");
    assert!(
        err.contains("$FORGESTATE_TOKEN is 3 character(s) long") && !err.contains("tq7"),
        "{err}"
    );
    let local = [("FORGESTATE_TOKEN", "t")];
    let line = "--store st checkpoint --agent w --session s --phase setting_up --json";
    let out = run_with(dir.path(), &words(line), &local, None);
    let answer = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        answer.contains("setting_up") && !answer.contains("REDACTED"),
        "{answer}"
    );
}
