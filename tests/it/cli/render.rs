//! `forgestate render` and `forgestate resume-map`, the verbs the Python package's
//! `format_checkpoint_comment` and `PHASE_RESUME_MAP` stand on.

use crate::common;
use common::cli::{parse_ok, run_in, stderr, stdout, words};
use serde_json::{Value, json};

fn render(dir: &std::path::Path, input: &Value) -> std::process::Output {
    let args = words("--store s render --json");
    run_in(dir, &args, Some(&input.to_string()))
}

#[test]
fn render_prints_what_checkpoint_would_post_and_parse_reads_it_back() {
    let dir = tempfile::tempdir().unwrap();
    let input = json!({
        "agent": "implementation-worker",
        "session": "s1",
        "phase": "subtask_2_complete",
        "data": {"issue_number": 42, "db_password": "hunter2"},
        "time": "2026-01-02T03:04:05Z",
        "id": "01a22bcf-6619-7168-a9e9-2035090ef2b7",
    });
    let doc = parse_ok(&words("render --json"), &render(dir.path(), &input));
    let body = doc["body"].as_str().unwrap();
    assert!(body.starts_with("[CHECKPOINT] implementation-worker\nVersion: 2.0\n"));
    assert!(body.contains("Time: 2026-01-02T03:04:05.000000Z\n"));
    assert!(body.contains("Id: 01a22bcf-6619-7168-a9e9-2035090ef2b7\n"));
    assert!(!body.contains("hunter2"), "redacted as checkpoint would");
    assert_eq!(doc["record"]["redacted"], 1);
    // The same input renders the same body: id and time are kept.
    let again = parse_ok(&words("render --json"), &render(dir.path(), &input));
    assert_eq!(again["body"], doc["body"]);

    let parsed = parse_ok(
        &words("parse --json"),
        &run_in(dir.path(), &words("parse - --json"), Some(body)),
    );
    assert_eq!(parsed["phase"], "subtask_2_complete");
    assert_eq!(parsed["data"]["issue_number"], 42);
    assert_eq!(parsed["id"], "01a22bcf-6619-7168-a9e9-2035090ef2b7");
    // Nothing was posted: render writes no record.
    let list = parse_ok(
        &words("list"),
        &run_in(dir.path(), &words("--store s list --json"), None),
    );
    assert_eq!(list["records"], json!([]));
}

#[test]
fn render_stamps_a_new_record_and_renders_health_signals() {
    let dir = tempfile::tempdir().unwrap();
    let a = parse_ok(
        &words("render"),
        &render(
            dir.path(),
            &json!({"agent": "w", "session": "s", "phase": "p"}),
        ),
    );
    let b = parse_ok(
        &words("render"),
        &render(
            dir.path(),
            &json!({"agent": "w", "session": "s", "phase": "p"}),
        ),
    );
    assert_ne!(a["record"]["id"], b["record"]["id"], "each gets a fresh id");
    assert_eq!(a["record"]["data"], json!({}));

    let health = json!({"kind": "health", "agent": "o", "session": "s",
                        "metrics": {"workers": 3}, "next_check": "in 10 iterations"});
    let h = parse_ok(&words("render"), &render(dir.path(), &health));
    let body = h["body"].as_str().unwrap();
    assert!(body.starts_with("[HEALTH] o\n"));
    assert!(body.contains("Status: Active\n") && body.contains("Next check: in 10 iterations"));

    // Without --json the body itself is printed.
    let out = run_in(
        dir.path(),
        &words("--store s render"),
        Some(r#"{"agent": "w", "session": "s", "phase": "p"}"#),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("[CHECKPOINT] w\n"));
}

#[test]
fn render_refuses_what_checkpoint_refuses_with_exit_65() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        json!({"agent": "w", "session": "s\nPhase: evil", "phase": "p"}),
        json!({"agent": "w", "session": "s", "phase": "p", "data": [1]}),
        json!({"agent": "w", "session": "s"}),
        json!({"agent": "w", "session": "s", "phase": "p", "kind": "note"}),
        json!({"agent": "w", "session": "s", "phase": "p", "time": "yesterday"}),
        json!([1]),
    ];
    for input in cases {
        let out = render(dir.path(), &input);
        assert_eq!(out.status.code(), Some(65), "{input}: {}", stderr(&out));
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["error"]["category"], "data", "{input}");
    }
}

#[test]
fn resume_map_prints_the_effective_phase_table() {
    let dir = tempfile::tempdir().unwrap();
    let doc = parse_ok(
        &words("resume-map --json"),
        &run_in(dir.path(), &words("resume-map --json"), None),
    );
    assert_eq!(doc["agent"], "implementation-worker");
    assert_eq!(doc["default"], "start");
    assert_eq!(doc["phases"]["clone_complete"], "phase_2_subtasks");
    assert_eq!(doc["phases"]["subtask_*_complete"], "phase_2_continue");

    let config = dir.path().join("custom.toml");
    std::fs::write(
        &config,
        "[resume]\ndefault = \"begin\"\n[resume.agents.\"pr-*\"]\nreview_posted = \"done\"\n",
    )
    .unwrap();
    let args = vec![
        "--config".to_string(),
        config.display().to_string(),
        "resume-map".into(),
        "--agent".into(),
        "pr-self-reviewer".into(),
        "--json".into(),
    ];
    let doc = parse_ok(&args, &run_in(dir.path(), &args, None));
    assert_eq!(doc["default"], "begin");
    assert_eq!(doc["phases"], json!({"review_posted": "done"}));

    let out = run_in(dir.path(), &words("resume-map --agent nobody"), None);
    assert!(out.status.success());
    assert_eq!(stdout(&out).trim(), "(any other phase) -> start");
}

/// A body that is not a record fails alike through `parse` and `call parse`: exit 65, one error
/// line on stderr (said once), and one error document carrying the reason code.
#[test]
fn a_bad_body_is_said_once_through_parse_and_call_parse() {
    let dir = tempfile::tempdir().unwrap();
    let request = json!({"body": "just a comment"}).to_string();
    for (line, input) in [
        ("--store s parse - --json", "just a comment"),
        ("--store s call parse --json", request.as_str()),
    ] {
        let out = run_in(dir.path(), &words(line), Some(input));
        assert_eq!(out.status.code(), Some(65), "{line}: {}", stderr(&out));
        let errors = stderr(&out).matches("error:").count();
        assert_eq!(
            errors,
            1,
            "{line}: the error is said once: {}",
            stderr(&out)
        );
        let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(doc["error"]["reason"], "no_marker", "{line}: {doc}");
        assert!(
            doc["error"]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("not a record: ")),
            "{line}: {doc}"
        );
    }
}
