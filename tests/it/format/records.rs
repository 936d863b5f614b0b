//! Record format: seed fixtures, the exact v2 layout, leniency and every rejection reason.

use forgestate::format::{
    Kind, ParseError, Payload, Record, Renderer, marker_line, parse, parse_keeping_data, parse_time,
};
use serde_json::json;

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn checkpoint_parts(r: &Record) -> (&str, &serde_json::Value) {
    match &r.payload {
        Payload::Checkpoint { phase, data } => (phase, data),
        other => panic!("expected a checkpoint, got {other:?}"),
    }
}

#[test]
fn seed_checkpoint_with_unclosed_fence() {
    let r = parse(&fixture("seed-checkpoint-unclosed.md")).unwrap();
    assert_eq!(r.kind(), Kind::Checkpoint);
    assert_eq!(r.version, "1.0");
    assert_eq!(r.agent, "implementation-worker");
    assert_eq!(r.session, "sess-42");
    assert_eq!(r.time, parse_time("2026-11-29T08:40:58.123456Z").unwrap());
    assert_eq!(r.id, None);
    let (phase, data) = checkpoint_parts(&r);
    assert_eq!(phase, "subtask_2_complete");
    assert_eq!(
        data,
        &json!({"branch_name": "feature/issue-42", "completed_subtasks": [1, 2],
                "issue_number": 42, "working_dir": "/tmp/work/issue-42"})
    );
}

#[test]
fn seed_checkpoint_with_closed_fence_and_whole_seconds() {
    let r = parse(&fixture("seed-checkpoint-closed.md")).unwrap();
    assert_eq!(r.time, parse_time("2026-11-29T08:40:58Z").unwrap());
    let (phase, data) = checkpoint_parts(&r);
    assert_eq!(phase, "clone_complete");
    assert_eq!(data["issue_number"], 42);
}

#[test]
fn seed_health_closed_and_unclosed() {
    for name in ["seed-health-unclosed.md", "seed-health-closed.md"] {
        let r = parse(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(r.kind(), Kind::Health, "{name}");
        assert_eq!(
            r.version, "1.0",
            "{name}: no Version line means the seed's 1.0"
        );
        assert_eq!(r.agent, "implementation-orchestrator");
        assert_eq!(r.session, "sess-7");
        match &r.payload {
            Payload::Health {
                status,
                metrics,
                next_check,
            } => {
                assert_eq!(status, "Active");
                assert_eq!(
                    metrics,
                    &json!({"cycle_count": 12, "active_workers": 3, "queue_depth": 5})
                );
                assert_eq!(next_check.as_deref(), Some("in 10 iterations"), "{name}");
            }
            other => panic!("{other:?}"),
        }
    }
}

fn sample() -> Record {
    let mut r = Record::checkpoint(
        "implementation-worker",
        "sess-42",
        "subtask_3_complete",
        json!({"issue_number": 42, "branch_name": "feat/x", "nested": {"b": 1, "a": [true, null]}}),
    )
    .unwrap()
    .with_lineage(Some(7), Some("0192f000-0000-7000-8000-000000000001".into()));
    r.id = Some("0192f000-0000-7000-8000-000000000002".into());
    r.time = parse_time("2026-11-29T08:40:58.000123Z").unwrap();
    r
}

#[test]
fn v2_checkpoint_has_the_exact_seed_layout() {
    let body = Renderer::embedded().unwrap().render(&sample()).unwrap();
    let expected = r#"[CHECKPOINT] implementation-worker
Version: 2.0
Phase: subtask_3_complete
Session: sess-42
Time: 2026-11-29T08:40:58.000123Z
Id: 0192f000-0000-7000-8000-000000000002
Seq: 7
Parent: 0192f000-0000-7000-8000-000000000001

State Data:
```json
{
  "branch_name": "feat/x",
  "issue_number": 42,
  "nested": {
    "a": [
      true,
      null
    ],
    "b": 1
  }
}
```

---

Automated by CleverAgents Bot Agent: implementation-worker"#;
    assert_eq!(body, expected);
    assert_eq!(parse(&body).unwrap(), sample());
}

#[test]
fn v2_health_layout_mirrors_the_seed() {
    let mut r = Record::health(
        "sup",
        "s1",
        "Active",
        json!({"queue_depth": 5}),
        Some("in 10 iterations"),
    )
    .unwrap();
    r.id = Some("abc".into());
    r.time = parse_time("2026-11-29T08:40:58.5Z").unwrap();
    let body = Renderer::embedded().unwrap().render(&r).unwrap();
    let expected = "[HEALTH] sup\nVersion: 2.0\nSession: s1\nTime: 2026-11-29T08:40:58.500000Z\n\
        Status: Active\nId: abc\n\nMetrics:\n```json\n{\n  \"queue_depth\": 5\n}\n```\n\n\
        Next check: in 10 iterations\n\n---\n\nAutomated by CleverAgents Bot Agent: sup";
    assert_eq!(body, expected);
    assert_eq!(parse(&body).unwrap(), r);

    let mut quiet = r.clone();
    quiet.payload = Payload::Health {
        status: "Idle".into(),
        metrics: json!({}),
        next_check: None,
    };
    let body = Renderer::embedded().unwrap().render(&quiet).unwrap();
    assert!(!body.contains("Next check"), "{body}");
    assert_eq!(parse(&body).unwrap(), quiet);
}

#[test]
fn tolerates_crlf_bom_trailing_space_unknown_headers_and_case() {
    let body = Renderer::embedded().unwrap().render(&sample()).unwrap();
    let crlf = format!("\u{feff}\r\n{}", body.replace('\n', "  \r\n"));
    assert_eq!(parse(&crlf).unwrap(), sample());
    let extra = body.replacen(
        "Version: 2.0\n",
        "Version: 2.0\nHost: build-7\nphase: x\n",
        1,
    );
    assert_eq!(
        parse(&extra),
        Err(ParseError::DuplicateField { header: "Phase" })
    );
    let extra = body.replacen("Version: 2.0\n", "Version: 2.0\nHost: build-7\n", 1);
    assert_eq!(parse(&extra).unwrap(), sample());
    let lower = body.replacen("Session:", "SESSION:", 1);
    assert_eq!(parse(&lower).unwrap(), sample());
}

#[test]
fn future_versions_read_best_effort() {
    let body = Renderer::embedded().unwrap().render(&sample()).unwrap();
    let future = body
        .replacen("Version: 2.0", "Version: 3.1", 1)
        .replacen("Id: ", "Key: ", 1);
    let r = parse(&future).unwrap();
    assert_eq!(r.version, "3.1");
    assert_eq!(r.id, None);
}

#[test]
fn quoted_or_mentioned_markers_are_not_records() {
    let body = Renderer::embedded().unwrap().render(&sample()).unwrap();
    let quoted: String = body.lines().map(|l| format!("> {l}\n")).collect();
    assert_eq!(parse(&quoted), Err(ParseError::NoMarker));
    let mention = "Why did this fail?\n[CHECKPOINT] lines are the bot's.\n".to_string();
    assert_eq!(parse(&mention), Err(ParseError::NoMarker));
    assert_eq!(marker_line(&mention), None);
    let fenced = format!("Why did this fail?\n\n    {}", body.replace('\n', "\n    "));
    assert_eq!(parse(&fenced), Err(ParseError::NoMarker));
    assert_eq!(parse(""), Err(ParseError::NoMarker));
    assert_eq!(parse(" [CHECKPOINT] a"), Err(ParseError::NoMarker));
}

/// A person's note added above a record (which seed 003's parser still reads) is not a record,
/// but a near miss with its own reason, naming the record's marker line; the marker line is
/// the record's, so a reader knows whose it was.
#[test]
fn a_record_below_a_note_is_a_near_miss() {
    let body = Renderer::embedded().unwrap().render(&sample()).unwrap();
    let noted = format!("> Alice: this step was flaky, re-check it.\n\n{body}");
    let err = parse(&noted).unwrap_err();
    assert_eq!(
        err,
        ParseError::MarkerNotFirst {
            marker: "[CHECKPOINT]",
            line: 3
        }
    );
    assert_eq!(err.code(), "marker_not_first");
    assert_eq!(parse_keeping_data(&noted).unwrap_err(), err);
    assert_eq!(
        marker_line(&noted),
        Some((Kind::Checkpoint, "implementation-worker".into()))
    );
    // A note that mentions a marker at a line's start, then the record.
    let mention = format!("\u{feff}See:\n[END] is what it posts last\nwas flaky\n{body}");
    assert_eq!(
        parse(&mention),
        Err(ParseError::MarkerNotFirst {
            marker: "[CHECKPOINT]",
            line: 4
        })
    );
    // Below a note, a broken record is no record at all.
    let broken = noted.replacen("Session: sess-42\n", "", 1);
    assert_eq!(parse(&broken), Err(ParseError::NoMarker));
    assert_eq!(marker_line(&broken), None);
    // Many marker lines that are not records cost a few tries, and are no record.
    let many = format!("note\n{}{body}", "[HEALTH] x\n".repeat(50_000));
    assert_eq!(parse(&many), Err(ParseError::NoMarker));
}

#[test]
fn every_rejection_has_its_reason() {
    let body = Renderer::embedded().unwrap().render(&sample()).unwrap();
    let cases: Vec<(String, &str)> = vec![
        (body.replacen("Session: sess-42\n", "", 1), "missing_field"),
        (
            body.replacen("Phase: subtask_3_complete\n", "", 1),
            "missing_field",
        ),
        (
            body.replacen("Id: 0192f000-0000-7000-8000-000000000002\n", "", 1),
            "missing_field",
        ),
        (
            body.replacen("[CHECKPOINT] implementation-worker", "[CHECKPOINT]  ", 1),
            "missing_field",
        ),
        (
            body.replacen("2026-11-29T08:40:58.000123Z", "last tuesday", 1),
            "bad_time",
        ),
        (
            body.replacen("\"issue_number\": 42", "\"issue_number\": 42,,", 1),
            "bad_json",
        ),
        (body.replacen("```json", "```text", 1), "no_json_block"),
        (
            body.replacen("Version: 2.0", "Version: two", 1),
            "unsupported_version",
        ),
        (
            body.replacen("Version: 2.0", "Version: 0.9", 1),
            "unsupported_version",
        ),
        (body.replacen("Seq: 7", "Seq: -1", 1), "bad_field"),
        ("x".repeat(1024 * 1024 + 1), "too_large"),
        ("hello".into(), "no_marker"),
        (format!("A note.\n{body}"), "marker_not_first"),
    ];
    for (text, code) in cases {
        let err = parse(&text).expect_err(code);
        assert_eq!(err.code(), code, "{err}");
        assert!(!err.to_string().is_empty());
    }
}

#[test]
fn bad_json_reports_the_body_line_and_column() {
    let body = Renderer::embedded().unwrap().render(&sample()).unwrap();
    let broken = body.replacen("\"issue_number\": 42", "\"issue_number\": 4 2", 1);
    let line = broken.lines().position(|l| l.contains("4 2")).unwrap() + 1;
    match parse(&broken) {
        Err(ParseError::BadJson {
            line: l, column, ..
        }) => {
            assert_eq!(l, line);
            assert_eq!(column, 21, "points at the stray 2");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn write_refuses_oversized_bodies() {
    let big = json!({"blob": "x".repeat(300 * 1024)});
    let r = Record::checkpoint("a", "s", "p", big).unwrap();
    let err = Renderer::embedded().unwrap().render(&r).unwrap_err();
    assert!(
        err.to_string().contains("over the 262144-byte limit"),
        "{err}"
    );
}

#[test]
fn broken_template_override_is_refused_not_written() {
    use forgestate::format::Templates;
    let mut t = Templates::embedded();
    t.replace("checkpoint.md", "[CHECKPOINT] {{ agent }}\nhello".into());
    let renderer = Renderer::new(t, 1000).unwrap();
    let err = renderer.render(&sample()).unwrap_err();
    assert!(err.to_string().contains("does not read back"), "{err}");
    let mut t = Templates::embedded();
    t.replace("health.md", "{% if %}".into());
    assert!(Renderer::new(t, 1000).is_err());
}

#[test]
fn session_issue_body_renders() {
    use forgestate::format::SessionIssue;
    let r = Renderer::embedded().unwrap();
    let issue = SessionIssue {
        owner: "acme".into(),
        repo: "app".into(),
        trusted: "bot".into(),
    };
    let body = r.session_issue(&issue).unwrap();
    assert!(
        body.contains("acme/app") && body.contains("(bot)"),
        "{body}"
    );
}

#[test]
fn redacted_count_round_trips_in_both_templates() {
    let mut c = sample();
    c.redacted = Some(3);
    let body = Renderer::embedded().unwrap().render(&c).unwrap();
    assert!(body.contains("\nRedacted: 3\n"), "{body}");
    assert_eq!(parse(&body).unwrap(), c);
    let mut h = Record::health("a", "s", "Active", json!({}), None).unwrap();
    h.redacted = Some(2);
    let body = Renderer::embedded()
        .unwrap()
        .render(&h)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(parse(&body).unwrap(), h);
}

#[test]
fn integers_of_any_size_round_trip_exactly() {
    let text = r#"{"big": 18446744073709551616, "neg": -123456789012345678901234567890,
                   "odd": 9007199254740993, "ratio": 0.1, "tiny": 1e-7, "n": 1e400}"#;
    let data: serde_json::Value = serde_json::from_str(text).unwrap();
    let r = Record::checkpoint("a", "s", "p", data).unwrap();
    let body = Renderer::embedded().unwrap().render(&r).unwrap();
    for written in [
        "\"big\": 18446744073709551616,",
        "\"neg\": -123456789012345678901234567890,",
        "\"odd\": 9007199254740993,",
        "\"n\": 1e+400,",
    ] {
        assert!(body.contains(written), "{written} in {body}");
    }
    let back = parse(&body).unwrap();
    assert_eq!(back, r);
    assert_eq!(back.data()["big"].to_string(), "18446744073709551616");
}

#[test]
fn seed_records_with_big_integers_are_read_exactly() {
    let body = "[CHECKPOINT] implementation-worker\nPhase: p\nSession: s\n\
                Time: 2026-11-29T08:40:58.123456Z\n\nState Data:\n```json\n\
                {\n  \"run_id\": 123456789012345678901234567890\n}\n\n---\n";
    let r = parse(body).unwrap();
    assert_eq!(
        r.data()["run_id"].to_string(),
        "123456789012345678901234567890"
    );
}

#[test]
fn the_example_config_lists_the_default_redact_keys() {
    let path = format!("{}/config/forgestate.toml", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let doc: toml::Table = toml::from_str(&text).unwrap();
    let listed: Vec<&str> = doc["redact_keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    assert_eq!(listed, forgestate::format::DEFAULT_REDACT_KEYS);
}
