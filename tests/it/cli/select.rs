//! `--json=FIELDS` and `--jq` (issue #29, holes 4 and 9): a failing expression after a write
//! never reads as the write's failure, jaq can neither panic the binary nor pick its exit code,
//! and a field list is deduplicated and never empty.

use crate::{common, fake_forge};
use std::path::Path;

use common::cli::{Bin, args, stderr, stdout};
use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO};
use serde_json::Value;

/// Expressions that fail on any answer: an error, `halt_error` (jaq would exit 5), and the
/// module import jaq 3 panics on.
const FAILING: [&str; 3] = ["error(\"boom\")", "halt_error", "import \"x\" as $x; $x"];

fn local(home: &Path) -> Bin {
    Bin::new(home).env("XDG_STATE_HOME", home.join("state").display().to_string())
}

fn records(bin: &Bin) -> usize {
    let out = bin.line("list --json");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["records"].as_array().unwrap().len()
}

/// A checkpoint with a failing `--jq`: exit 0, the whole answer on stdout (the saved record's
/// id in it), one warning saying the save stands.
fn assert_saved_despite(bin: &Bin, expr: &str, before: usize) {
    let line = [
        "checkpoint",
        "--agent",
        "w",
        "--session",
        "s",
        "--phase",
        "p",
    ];
    let mut argv = args(&line);
    argv.extend(["--jq".to_string(), expr.to_string()]);
    let out = bin.run(&argv);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{expr}: {err}");
    assert!(!err.contains("panicked"), "{expr}: {err}");
    let warned: Vec<&str> = err.lines().filter(|l| l.contains("--jq")).collect();
    assert_eq!(warned.len(), 1, "{expr}: {err}");
    assert!(
        warned[0].starts_with("forgestate: warning: --jq"),
        "{expr}: {err}"
    );
    assert!(warned[0].contains("changes stand"), "{expr}: {err}");
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{expr}: not the whole answer ({e}): {}", stdout(&out)));
    assert!(doc["id"].is_string(), "{expr}: {doc}");
    assert_eq!(doc["posted"], true, "{expr}: {doc}");
    assert_eq!(
        records(bin),
        before + 1,
        "{expr}: the record was saved once"
    );
}

#[test]
fn a_failing_jq_after_a_checkpoint_leaves_the_record_saved_on_the_local_store() {
    let dir = tempfile::tempdir().unwrap();
    let b = local(dir.path());
    for (i, expr) in FAILING.iter().enumerate() {
        assert_saved_despite(&b, expr, i);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_jq_after_a_checkpoint_leaves_the_record_saved_on_the_forge() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let b = Bin::new(dir.path())
        .coords(&fake.uri(), OWNER, REPO, BOT_TOKEN)
        .env(
            "XDG_CACHE_HOME",
            dir.path().join("cache").display().to_string(),
        );
    let init = b.line("init --json");
    assert_eq!(init.status.code(), Some(0), "{}", stderr(&init));
    for (i, expr) in FAILING.iter().enumerate() {
        assert_saved_despite(&b, expr, i);
    }
}

#[test]
fn a_failing_jq_on_a_read_is_a_usage_error_whatever_jaq_does() {
    let dir = tempfile::tempdir().unwrap();
    let b = local(dir.path());
    assert_eq!(
        b.line("checkpoint --agent w --session s --phase p")
            .status
            .code(),
        Some(0)
    );
    for expr in FAILING {
        let out = b.run(&args(&["list", "--jq", expr]));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(64), "{expr}: {err}");
        assert!(!err.contains("panicked"), "{expr}: {err}");
        assert!(err.contains("forgestate: error: --jq"), "{expr}: {err}");
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["error"]["code"], 64, "{expr}: {doc}");
    }
    let out = b.run(&args(&["list", "--jq", ".records[].agent, halt, 1"]));
    assert_eq!(out.status.code(), Some(0), "halt stops: {}", stderr(&out));
    assert_eq!(stdout(&out), "w\n");
}

#[test]
fn json_fields_are_printed_once_and_an_empty_list_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let b = local(dir.path());
    let out = b.line("checkpoint --agent w --session s --phase p --json=posted,posted,id");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(text.matches("\"posted\"").count(), 1, "{text}");
    let doc: Value = serde_json::from_str(&text).unwrap();
    let keys: Vec<&String> = doc.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["id", "posted"], "{text}");

    for list in ["--json=,", "--json=,,", "--json= , "] {
        let out = b.run(&args(&[
            "checkpoint",
            "--agent",
            "w",
            "--session",
            "s",
            "--phase",
            "q",
            list,
        ]));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(64), "{list}: {err}");
        assert!(err.contains("names no field"), "{list}: {err}");
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["error"]["code"], 64, "{list}: {doc}");
    }
    assert_eq!(records(&b), 1, "nothing posted after a refused list");
}
