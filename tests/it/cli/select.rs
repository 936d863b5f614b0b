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
        assert!(err.contains("--json alone"), "{err}");
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["error"]["code"], 64, "{list}: {doc}");
    }
    assert_eq!(records(&b), 1, "nothing posted after a refused list");
}

/// A parsed record to select from (`parse` opens no store): its data holds the values the
/// formats quote, an integer past 64 bits and a cell no format takes.
struct Parsed {
    dir: tempfile::TempDir,
}

impl Parsed {
    fn new() -> Parsed {
        let dir = tempfile::tempdir().unwrap();
        let record = r#"{"kind": "checkpoint", "agent": "w", "session": "s", "phase": "p",
            "data": {"r": ["a\"b", "t\tn\nr\rs\\", 3, true, null],
                     "n": 18446744073709551616, "deep": [[1]]}}"#;
        let out = Bin::new(dir.path())
            .stdin(record)
            .line("--store st render -");
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        std::fs::write(dir.path().join("body.md"), &out.stdout).unwrap();
        Parsed { dir }
    }

    /// `forgestate SELECT parse body.md`: stdout on success, the one-line error on a usage error.
    fn run(&self, select: &[&str]) -> Result<String, String> {
        let mut argv = args(select);
        argv.extend(args(&["parse", "body.md"]));
        let out = Bin::new(self.dir.path()).run(&argv);
        match out.status.code() {
            Some(0) => Ok(stdout(&out).trim_end_matches('\n').to_string()),
            Some(64) => Err(stderr(&out)
                .trim_end()
                .trim_start_matches("forgestate: error: ")
                .to_string()),
            code => panic!("{select:?}: exit {code:?}: {}", stderr(&out)),
        }
    }

    fn jq(&self, expr: &str) -> Result<String, String> {
        self.run(&["--jq", expr])
    }
}

#[test]
fn fields_keep_the_named_top_level_fields_in_the_order_given() {
    let p = Parsed::new();
    let text = p.run(&["--json=session,session, agent"]).unwrap();
    assert_eq!(text, "{\n  \"session\": \"s\",\n  \"agent\": \"w\"\n}");
    let err = p.run(&["--json=nope,agent"]).unwrap_err();
    assert!(
        err.starts_with("--json: unknown field \"nope\"; the answer's fields are: agent, "),
        "{err}"
    );
    assert_eq!(
        p.run(&["--json=agent,session", "--jq", "keys | join(\",\")"]),
        Ok("agent,session".into()),
        "--jq reads what --json=FIELDS kept"
    );
}

#[test]
fn jq_prints_strings_raw_the_rest_compact_and_big_integers_exactly() {
    let p = Parsed::new();
    assert_eq!(p.jq(".data.r[0]"), Ok("a\"b".into()));
    assert_eq!(p.jq(".data.r | length"), Ok("5".into()));
    assert_eq!(p.jq(".data.deep"), Ok("[[1]]".into()));
    assert_eq!(p.jq(".data.n"), Ok("18446744073709551616".into()));
    assert_eq!(
        p.jq(".["),
        Err("--jq \".[\" is not a jq expression jaq can parse".into())
    );
    assert!(p.jq("nosuchfn").unwrap_err().contains("compile"));
    assert!(
        p.jq(".agent | .x")
            .unwrap_err()
            .starts_with("--jq \".agent | .x\" failed")
    );
}

#[test]
fn jq_formats_as_gh_users_write_them() {
    let p = Parsed::new();
    assert_eq!(
        p.jq(".data.r | @csv"),
        Ok("\"a\"\"b\",\"t\tn\nr\rs\\\",3,true,".into())
    );
    assert_eq!(
        p.jq(".data.r | @tsv"),
        Ok("a\"b\tt\\tn\\nr\\rs\\\\\t3\ttrue\t".into())
    );
    assert_eq!(p.jq("[\"it's\", 1] | @sh"), Ok(r#"'it'\''s' 1"#.into()));
    assert_eq!(p.jq("\"hi\" | @base64"), Ok("aGk=".into()));
    let csv = p.jq(".data.deep | @csv").unwrap_err();
    assert!(csv.contains("cannot be a CSV cell"), "{csv}");
    let tsv = p.jq(".data.n | @tsv").unwrap_err();
    assert!(tsv.contains("must be an array"), "{tsv}");
}

#[test]
fn a_jq_failure_quotes_at_most_a_little_of_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let record = format!(
        r#"{{"kind": "checkpoint", "agent": "w", "session": "s", "phase": "p", "data": {{"r": ["{}"]}}}}"#,
        "x".repeat(100_000)
    );
    let out = Bin::new(dir.path())
        .stdin(record)
        .line("--jq .body|ltrimstr(1)|.x --store st render -");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(64), "{err}");
    let line = err.lines().find(|l| l.contains("--jq")).unwrap_or_default();
    assert!(line.chars().count() < 400, "{}", line.len());
}

#[test]
fn halt_and_a_panic_in_jaq_are_failures_of_the_expression() {
    let p = Parsed::new();
    assert!(
        p.jq("halt_error")
            .unwrap_err()
            .contains("halted with code 5")
    );
    assert!(p.jq("halt_error(1)").unwrap_err().contains("code 1"));
    assert_eq!(p.jq("1, halt, 2"), Ok("1".into()), "halt stops, as in jq");
    // jaq 3 unwraps a module it never loaded: a panic, caught.
    let err = p.jq("import \"x\" as $x; $x").unwrap_err();
    assert!(err.contains("not an expression jaq can run"), "{err}");
}
