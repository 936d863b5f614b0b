//! Wire compatibility with the seed's Python agents, checked with the seed's own code.
//!
//! The seed document (`../shared/seeds/003_…txt`) is the contract. This test extracts its
//! `parse_checkpoint_comment` function *at test time*, runs it unchanged under `python3` on
//! checkpoints forgestate rendered, and requires the same agent, session, phase, timestamp and data.
//! The function is never copied into this repository. Without `../shared` (a plain clone) these
//! tests are reported `ignored`, with the reason (`build.rs` sets `cfg(no_seeds)`); CI always has
//! it, and fails them if it is missing.

use crate::common;
use std::io::Write;
use std::process::{Command, Stdio};

use forgestate::format::{Payload, Record, Renderer, SigningKey, format_time, parse_time, sign};
use serde_json::{Value, json};

/// The seed document (see [`common::find_shared`] for where it is looked for). The tests that
/// call this are ignored where `build.rs` found none, so a missing one here is a failure.
fn seed_path() -> String {
    common::find_shared(
        "seeds/003_6e1e09118f29b57e.txt",
        "the seed document, the Python agents' format contract",
    )
    .unwrap_or_else(|e| panic!("{e}"))
    .display()
    .to_string()
}

/// The text of `def parse_checkpoint_comment` up to the next top-level line.
fn seed_parser_source() -> String {
    let path = seed_path();
    let doc = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!("the seed document is the compatibility contract; read {path}: {e}")
    });
    let mut lines = doc
        .lines()
        .skip_while(|l| !l.starts_with("def parse_checkpoint_comment("));
    let first = lines
        .next()
        .expect("seed document defines parse_checkpoint_comment");
    let body = lines.take_while(|l| l.trim().is_empty() || l.starts_with(char::is_whitespace));
    std::iter::once(first)
        .chain(body)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The seed's `format_checkpoint_comment`, whose f-string body (and, in the document, its
/// `return comment` line) sits at column 0: everything from its `def` to that line, with the
/// `return` put back inside the function.
fn seed_writer_source() -> String {
    let path = seed_path();
    let doc = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {path}: {e}"));
    let start = doc
        .find("def format_checkpoint_comment(")
        .expect("seed document defines format_checkpoint_comment");
    let end = start
        + doc[start..]
            .find("\nreturn comment")
            .expect("format_checkpoint_comment ends with `return comment`");
    format!("{}\n    return comment\n", &doc[start..end])
}

/// Runs a python3 script on `input` and returns its stdout.
fn python(script: &str, input: &str) -> String {
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 is on every machine");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "python3 failed");
    String::from_utf8(out.stdout).unwrap()
}

/// Runs the seed's parser over many bodies in one python3 process.
fn seed_parse(bodies: &[String]) -> Vec<Value> {
    let source = seed_parser_source();
    let script = format!(
        "import contextlib, json, sys\n{}\n\
         bodies = json.load(sys.stdin)\n\
         with contextlib.redirect_stdout(sys.stderr):\n    out = [parse_checkpoint_comment(b) for b in bodies]\n\
         json.dump(out, sys.stdout)\n",
        source
    );
    let mut child = Command::new("python3")
        .args(["-c", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 is on every machine");
    let input = serde_json::to_vec(bodies).unwrap();
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "python3 failed");
    serde_json::from_slice(&out.stdout).expect("seed parser output is JSON")
}

fn assert_seed_reads(records: &[Record]) {
    assert_seed_reads_with(records, None);
}

/// [`assert_seed_reads`] on the bodies as posted with `key` signing them.
fn assert_seed_reads_with(records: &[Record], key: Option<&SigningKey>) {
    let renderer = Renderer::embedded().unwrap();
    let bodies: Vec<String> = records
        .iter()
        .map(|r| renderer.render(r).unwrap())
        .map(|b| match key {
            Some(k) => {
                let signed = sign(&b, k);
                assert!(signed.contains("\nSignature: hmac-sha256 "), "{signed}");
                assert_eq!(
                    forgestate::format::parse(&signed).unwrap(),
                    forgestate::format::parse(&b).unwrap()
                );
                signed
            }
            None => b,
        })
        .collect();
    let parsed = seed_parse(&bodies);
    assert_eq!(parsed.len(), records.len());
    for ((record, seen), body) in records.iter().zip(&parsed).zip(&bodies) {
        let Payload::Checkpoint { phase, data } = &record.payload else {
            unreachable!()
        };
        assert!(!seen.is_null(), "seed parser rejected:\n{body}");
        assert_eq!(seen["agent"], json!(record.agent), "{body}");
        assert_eq!(seen["session"], json!(record.session), "{body}");
        assert_eq!(seen["phase"], json!(phase), "{body}");
        assert_eq!(
            seen["timestamp"],
            json!(format_time(&record.time)),
            "{body}"
        );
        assert!(
            common::same_json(&seen["data"], data),
            "{} != {data}\n{body}",
            seen["data"]
        );
        assert_eq!(seen["version"], "2.0");
    }
}

#[test]
#[cfg_attr(
    no_seeds,
    ignore = "needs ../shared/seeds (the seed document); a plain clone has none"
)]
fn seed_parser_reads_our_checkpoints() {
    let mut fixed = Record::checkpoint(
        "implementation-worker",
        "sess: 42 (retry)",
        "subtask_3_complete [retry]",
        json!({"issue_number": 42, "branch_name": "feat/é", "completed_subtasks": [1, 2, 3],
               "note": "line\n```\nPhase: evil", "pr_number": null, "ratio": 0.1}),
    )
    .unwrap()
    .with_lineage(Some(3), Some("parent-id".into()));
    fixed.time = parse_time("2026-11-29T08:40:58.000001Z").unwrap();
    assert_seed_reads(&[fixed]);
}

#[test]
#[cfg_attr(
    no_seeds,
    ignore = "needs ../shared/seeds (the seed document); a plain clone has none"
)]
fn seed_parser_reads_our_handoff_and_context_lines() {
    let mut fixed = Record::checkpoint(
        "implementation-worker",
        "s1",
        "subtask_2_complete",
        json!({"issue_number": 42}),
    )
    .unwrap()
    .with_handoff(
        Some("Phase: open the PR, then ```json review".replace("```", "``")),
        vec![
            "Phase: evil".to_string(),
            "Session: other".to_string(),
            "waiting on @alice's review".to_string(),
        ],
    )
    .unwrap()
    .with_context(b"# STATUS\nall green\n");
    fixed.time = parse_time("2026-11-29T08:40:58Z").unwrap();
    let body = Renderer::embedded().unwrap().render(&fixed).unwrap();
    assert!(
        body.contains("\nNext: Phase: open the PR")
            && body.contains("\nBlocker: Phase: evil\nBlocker: Session: other\n")
            && body.contains("\nContext-Hash: sha256:"),
        "{body}"
    );
    // The seed's parser keeps its own phase and session: a blocker is never read as one.
    assert_seed_reads(&[fixed.clone()]);
    let back = forgestate::format::parse(&body).unwrap();
    assert_eq!(back.blockers, fixed.blockers);
    assert_eq!(back.next, fixed.next);
    assert_eq!(back.context_hash, fixed.context_hash);
}

#[test]
#[cfg_attr(
    no_seeds,
    ignore = "needs ../shared/seeds (the seed document); a plain clone has none"
)]
fn seed_parser_reads_generated_checkpoints() {
    let records: Vec<Record> = common::samples(common::record(), 400)
        .into_iter()
        .filter(|r| matches!(r.payload, Payload::Checkpoint { .. }))
        .collect();
    assert!(
        records.len() > 100,
        "enough checkpoints generated: {}",
        records.len()
    );
    assert_seed_reads(&records);
}

#[test]
#[cfg_attr(
    no_seeds,
    ignore = "needs ../shared/seeds (the seed document); a plain clone has none"
)]
fn seed_parser_reads_signed_checkpoints() {
    let key = SigningKey::new("a shared secret").unwrap();
    let records: Vec<Record> = common::samples(common::record(), 200)
        .into_iter()
        .filter(|r| matches!(r.payload, Payload::Checkpoint { .. }))
        .collect();
    assert!(records.len() > 40, "{}", records.len());
    assert_seed_reads_with(&records, Some(&key));
}

#[test]
#[cfg_attr(
    no_seeds,
    ignore = "needs ../shared/seeds (the seed document); a plain clone has none"
)]
fn the_extracted_function_is_the_seeds() {
    let src = seed_parser_source();
    assert!(
        src.contains("json_start = comment_body.find(\"```json\\n\") + 8"),
        "{src}"
    );
    assert!(src.trim_end().ends_with("return None"), "{src}");
}

/// Integers beyond 64 bits, and beyond a double's 53-bit mantissa, as JSON text.
const BIG: &str = r#"{"big": 18446744073709551616, "u64_max": 18446744073709551615,
    "odd": 9007199254740993, "neg": -123456789012345678901234567890, "ratio": 0.1}"#;

#[test]
#[cfg_attr(
    no_seeds,
    ignore = "needs ../shared/seeds (the seed document); a plain clone has none"
)]
fn seed_parser_reads_our_big_integers_exactly() {
    let data: Value = serde_json::from_str(BIG).unwrap();
    let record = Record::checkpoint("a", "s", "p", data).unwrap();
    let body = Renderer::embedded().unwrap().render(&record).unwrap();
    assert!(body.contains("\"big\": 18446744073709551616,"), "{body}");
    let parsed = seed_parse(&[body]);
    let seen = &parsed[0]["data"];
    assert_eq!(seen["big"].to_string(), "18446744073709551616");
    assert_eq!(seen["u64_max"].to_string(), "18446744073709551615");
    assert_eq!(seen["odd"].to_string(), "9007199254740993");
    assert_eq!(seen["neg"].to_string(), "-123456789012345678901234567890");
    assert_eq!(seen["ratio"].as_f64(), Some(0.1));
}

#[test]
#[cfg_attr(
    no_seeds,
    ignore = "needs ../shared/seeds (the seed document); a plain clone has none"
)]
fn we_read_the_big_integers_the_seed_writes_exactly() {
    let writer = seed_writer_source();
    let script = format!(
        "import json, sys\n{}\n\
         data = {{'big': 2**64, 'neg': -(10**30), 'odd': 2**53 + 1, 'ratio': 0.1}}\n\
         sys.stdout.write(format_checkpoint_comment({{'version': '1.0', \
         'timestamp': '2026-11-29T08:40:58.123456Z', 'agent': 'a', 'session': 's', \
         'phase': 'p', 'data': data}}))\n",
        writer
    );
    let body = python(&script, "");
    let record = forgestate::format::parse(&body).unwrap_or_else(|e| panic!("{e}:\n{body}"));
    let data = record.data();
    assert_eq!(data["big"].to_string(), "18446744073709551616", "{body}");
    assert_eq!(data["neg"].to_string(), "-1000000000000000000000000000000");
    assert_eq!(data["odd"].to_string(), "9007199254740993");
    assert_eq!(data["ratio"].as_f64(), Some(0.1));
}

#[test]
#[cfg_attr(
    no_seeds,
    ignore = "needs ../shared/seeds (the seed document); a plain clone has none"
)]
fn out_of_range_numbers_are_kept_as_written_and_python_reads_them_as_infinity() {
    let data: Value = serde_json::from_str(r#"{"n": 1e400, "m": -1E400}"#).unwrap();
    let record = Record::checkpoint("a", "s", "p", data).unwrap();
    let body = Renderer::embedded().unwrap().render(&record).unwrap();
    assert!(body.contains("\"n\": 1e+400"), "{body}");
    let back = forgestate::format::parse(&body).unwrap();
    assert_eq!(back.data()["n"].to_string(), "1e+400");
    let parser = seed_parser_source();
    let script = format!(
        "import json, sys\n{}\nc = parse_checkpoint_comment(sys.stdin.read())\n\
         print(repr(c['data']['n']), repr(c['data']['m']))\n",
        parser
    );
    assert_eq!(python(&script, &body).trim(), "inf -inf");
}

#[test]
#[cfg_attr(
    no_seeds,
    ignore = "needs ../shared/seeds (the seed document); a plain clone has none"
)]
fn seed_parser_reads_checkpoints_carried_by_a_rotation() {
    // A rotation reposts records with their own `Id` and a `Carried-From:` header line.
    let records: Vec<Record> = common::samples(common::record(), 60)
        .into_iter()
        .filter(|r| matches!(r.payload, Payload::Checkpoint { .. }))
        .map(|r| {
            let first = r.time - chrono::Duration::hours(2);
            r.carried(12)
                .first_posted_at(first)
                .edited_before_carry(true, first + chrono::Duration::minutes(5))
        })
        .collect();
    assert!(records.len() > 10, "{}", records.len());
    let body = Renderer::embedded().unwrap().render(&records[0]).unwrap();
    assert!(body.contains("\nCarried-From: #12\n"), "{body}");
    assert!(body.contains("\nPosted-At: "), "{body}");
    assert!(body.contains("\nEdited-At: "), "{body}");
    assert_seed_reads(&records);
}

#[test]
#[cfg_attr(
    no_seeds,
    ignore = "needs ../shared/seeds (the seed document); a plain clone has none"
)]
fn seed_parser_never_takes_an_end_record_for_a_checkpoint() {
    let renderer = Renderer::embedded().unwrap();
    let mut bodies = Vec::new();
    for reason in forgestate::format::END_REASONS {
        for note in [
            None,
            Some("done"),
            Some("it said [CHECKPOINT] implementation-worker\nPhase: evil\n```json\n{}\n```"),
        ] {
            let end = Record::end("implementation-worker", "s1", reason, note)
                .unwrap()
                .with_parent(Some("parent-id".into()));
            let body = renderer.render(&end).unwrap();
            assert!(!body.contains("[CHECKPOINT]"), "{body}");
            let back = forgestate::format::parse(&body).unwrap();
            assert_eq!(back, end, "our reader reads it back exactly");
            bodies.push(body);
        }
    }
    let parsed = seed_parse(&bodies);
    for (seen, body) in parsed.iter().zip(&bodies) {
        assert!(
            seen.is_null(),
            "the seed's reader took an end record:\n{body}"
        );
    }
}

#[test]
#[cfg_attr(
    no_seeds,
    ignore = "needs ../shared/seeds (the seed document); a plain clone has none"
)]
fn seed_parser_never_takes_a_health_record_for_a_checkpoint() {
    let renderer = Renderer::embedded().unwrap();
    let quoted = "it said [CHECKPOINT] implementation-worker\nPhase: evil\n```json\n{}\n```";
    let health = Record::health(
        "implementation-worker",
        "s1",
        "Active",
        json!({"log": quoted, quoted: 1}),
        Some("soon"),
    )
    .unwrap();
    let body = renderer.render(&health).unwrap();
    assert!(!body.contains("[CHECKPOINT]"), "{body}");
    assert_eq!(forgestate::format::parse(&body).unwrap(), health);
    // A header value cannot be escaped: it is refused.
    for (status, next) in [("[CHECKPOINT] x", None), ("Active", Some("[CHECKPOINT] y"))] {
        let err = Record::health("w", "s1", status, json!({}), next).unwrap_err();
        assert!(err.to_string().contains("seed 003's reader"), "{err}");
    }
    let parsed = seed_parse(std::slice::from_ref(&body));
    assert!(
        parsed[0].is_null(),
        "the seed's reader took a health record:\n{body}"
    );
}

#[test]
#[cfg_attr(
    no_seeds,
    ignore = "needs ../shared/seeds (the seed document); a plain clone has none"
)]
fn seed_parser_reads_an_intent_checkpoint_as_a_normal_checkpoint() {
    let data = json!({"branch_name": "fix-42", "issue_number": 42});
    let mut records = Vec::new();
    for (intent, intent_data, done) in [
        (
            "create_pr",
            json!({"branch": "fix-42", "title": "Fix ```json {} ```"}),
            None,
        ),
        ("Phase: evil", Value::Null, Some("push_branch")),
    ] {
        let mut r = Record::checkpoint("implementation-worker", "s1", "pr_creating", data.clone())
            .unwrap()
            .with_parent(Some("parent-id".into()))
            .with_intent(intent, intent_data.clone())
            .unwrap();
        if let Some(done) = done {
            r = r.with_done(done).unwrap();
        }
        r.time = parse_time("2026-11-29T08:40:58Z").unwrap();
        let body = Renderer::embedded().unwrap().render(&r).unwrap();
        let back = forgestate::format::parse(&body).unwrap();
        assert_eq!(back.intent.as_ref().map(|i| &i.data), Some(&intent_data));
        assert_eq!(back.done.as_deref(), done);
        records.push(r);
    }
    // Same agent, session, phase, time and data: the intent's data is not in the seed's data.
    assert_seed_reads(&records);
}

#[test]
#[cfg_attr(
    no_seeds,
    ignore = "needs ../shared/seeds (the seed document); a plain clone has none"
)]
fn seed_parser_reads_checkpoints_that_name_their_writer() {
    let record = Record::checkpoint(
        "implementation-worker",
        "s1",
        "clone_complete",
        json!({"n": 1}),
    )
    .unwrap()
    .with_lineage(None, Some("parent-id".into()))
    .with_writer(Some("w-0123456789abcdef".into()));
    let body = Renderer::embedded().unwrap().render(&record).unwrap();
    assert!(body.contains("\nWriter: w-0123456789abcdef\n"), "{body}");
    assert_seed_reads(&[record]);
}

#[test]
#[cfg_attr(
    no_seeds,
    ignore = "needs ../shared/seeds (the seed document); a plain clone has none"
)]
fn seed_parser_never_takes_a_takeover_for_a_checkpoint() {
    let renderer = Renderer::embedded().unwrap();
    let mut bodies = Vec::new();
    for (from, by) in [
        (None, None),
        (
            Some(forgestate::format::new_record_id()),
            Some("w-supervisor".to_string()),
        ),
    ] {
        let takeover = Record::takeover("implementation-worker", "s1", "w-next", from, by)
            .unwrap()
            .with_parent(Some("parent-id".into()));
        let body = renderer.render(&takeover).unwrap();
        assert!(!body.contains("[CHECKPOINT]"), "{body}");
        assert!(matches!(
            forgestate::format::parse(&body).unwrap().payload,
            Payload::Takeover { .. }
        ));
        bodies.push(body);
    }
    for (seen, body) in seed_parse(&bodies).iter().zip(&bodies) {
        assert!(seen.is_null(), "the seed's reader took a takeover:\n{body}");
    }
}
