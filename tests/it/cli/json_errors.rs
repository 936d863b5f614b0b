//! `--json` failures: every verb prints exactly one `{"error": {"code", "category", "message"}}`
//! document on stdout, with `code` equal to the exit code and the keys in the same order.

use crate::{common, fake_forge};
use std::path::Path;
use std::process::Output;

use common::cli::{Bin, run_in, stderr, stdout, words};
use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO};
use serde_json::Value;

/// Checks `out` failed with `code` and printed exactly one error document; returns it.
fn error_doc(args: &[String], out: &Output, code: i32, category: &str) -> Value {
    let text = stdout(out);
    assert_eq!(
        out.status.code(),
        Some(code),
        "{args:?}: {}\n{text}",
        stderr(out)
    );
    let mut docs = serde_json::Deserializer::from_str(&text).into_iter::<Value>();
    let doc = match docs.next() {
        Some(Ok(doc)) => doc,
        other => panic!("{args:?}: no JSON document on stdout ({other:?}): {text:?}"),
    };
    assert!(docs.next().is_none(), "{args:?}: one document only: {text}");
    let error = &doc["error"];
    assert_eq!(error["code"], code, "{args:?}: {doc}");
    assert_eq!(error["category"], category, "{args:?}: {doc}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        !message.is_empty() && !message.contains('\n'),
        "{args:?}: {doc}"
    );
    let at = |key: &str| text.find(&format!("\"{key}\":")).unwrap_or(usize::MAX);
    assert!(
        at("code") < at("category") && at("category") < at("message"),
        "{args:?}: keys in the order code, category, message: {text}"
    );
    doc
}

/// Runs `line`, checks its error document, and that stderr keeps the same message.
fn check(dir: &Path, line: &str, code: i32, category: &str) -> Value {
    let args = words(line);
    let out = run_in(dir, &args, None);
    let doc = error_doc(&args, &out, code, category);
    let message = doc["error"]["message"].as_str().unwrap_or_default();
    let start: String = message.chars().take(30).collect();
    assert!(
        stderr(&out).contains(&format!("forgestate: error: {start}")),
        "{args:?}: the human line stays on stderr: {}",
        stderr(&out)
    );
    doc
}

#[test]
fn every_verb_fails_with_one_error_document() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("bad.toml"), "[locall]\ndir = \"x\"\n").unwrap();
    let cases = [
        ("init --json --config bad.toml", 78, "config"),
        (
            "checkpoint --agent a --session s --phase p --data [1] --json",
            65,
            "data",
        ),
        (
            "checkpoint --agent a --session s --phase p --data-file missing.json --json",
            74,
            "io",
        ),
        (
            "health --agent a --session s --metrics {oops --json",
            65,
            "data",
        ),
        ("latest --agent a[ --json", 64, "usage"),
        (
            "resume --agent a --session s --json --config bad.toml",
            78,
            "config",
        ),
        ("list --since whenever --json", 64, "usage"),
        ("flush --json --config missing.toml", 78, "config"),
        ("flush --from /nonexistent/outbox --json", 78, "config"),
        ("outbox --json --config missing.toml", 78, "config"),
    ];
    for (line, code, category) in cases {
        check(d, line, code, category);
    }
    let doc = error_doc(
        &words("parse - --json"),
        &run_in(d, &words("parse - --json"), Some("just a comment")),
        65,
        "data",
    );
    assert_eq!(doc["error"]["reason"], "no_marker");
    assert!(!d.join(".forgestate/thread.jsonl").exists());
}

#[test]
fn usage_errors_from_the_parser_too_wherever_json_is() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for line in [
        "--json frobnicate",
        "checkpoint --agent a --json",
        "resume --json --agent a --session s --bogus",
        "list --kind neither --json",
        "--json",
        "list --bogus --json=records,offline",
        "--jq .records list --bogus",
        "list --jq=.records --bogus",
    ] {
        check(d, line, 64, "usage");
    }
    for line in ["list --jsonx", "list --bogus -- --json"] {
        let out = run_in(d, &words(line), None);
        assert_eq!(out.status.code(), Some(64), "{line}");
        assert!(stdout(&out).is_empty(), "{line}: no JSON: {}", stdout(&out));
    }
    let out = run_in(d, &words("frobnicate"), None);
    assert_eq!(out.status.code(), Some(64));
    assert!(stdout(&out).is_empty(), "no JSON without --json");
    assert!(
        stderr(&out).starts_with("forgestate: error: "),
        "one prefix style: {}",
        stderr(&out)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn strict_spool_and_failed_flush_carry_the_error_in_their_one_document() {
    let fake = FakeForge::start().await;
    fake_forge::session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("forgestate.toml"),
        "[forge]\nretry_budget_secs = 1\nquick_timeout_ms = 300\nrequest_timeout_secs = 2\n",
    )
    .unwrap();
    let bin = Bin::new(d).forge(&fake.uri(), OWNER, REPO, BOT_TOKEN);
    fake.state().down = true;
    let args = words("checkpoint --agent a --session s --phase p --strict --json");
    let out = bin.run(&args);
    let doc = error_doc(&args, &out, 75, "tempfail");
    assert!(doc["spooled"].is_string(), "the spool report stays: {doc}");
    assert!(
        stderr(&out).contains("forgestate: warning: "),
        "{}",
        stderr(&out)
    );

    let args = words("flush --json");
    let out = bin.run(&args);
    let doc = error_doc(&args, &out, 75, "tempfail");
    assert_eq!(doc["left"], 1, "{doc}");
    assert!(
        stderr(&out).contains("forgestate: error: "),
        "{}",
        stderr(&out)
    );

    fake.state().down = false;
    let out = bin.run(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["error"], Value::Null, "{doc}");
    assert_eq!(doc["left"], 0, "{doc}");
}

/// A bare word after `--json` that names fields of the verb's answer (gh's spelling,
/// `--json resume_point`) gets a "did you mean `--json=...`", wherever the verb stands; a word
/// that names no field is clap's own error.
#[test]
fn a_field_after_a_bare_json_gets_the_equals_form_as_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (line, word) in [
        (
            "resume --agent a --session s --json resume_point",
            "resume_point",
        ),
        (
            "resume --json resume_point,phase --agent a",
            "resume_point,phase",
        ),
        (
            "--json resume_point resume --agent a --session s",
            "resume_point",
        ),
    ] {
        let doc = check(d, line, 64, "usage");
        let message = doc["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(&format!("did you mean `--json={word}`?"))
                && message.contains("`forgestate resume --json` alone"),
            "{line}: {message}"
        );
    }
    let doc = check(d, "resume --json nosuchfield", 64, "usage");
    assert_eq!(
        doc["error"]["message"],
        "unexpected argument 'nosuchfield' found"
    );
}
