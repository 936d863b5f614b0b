//! Wire compatibility with the seed's Python agents, checked with the seed's own code.
//!
//! The seed document (`../shared/seeds/003_…txt`) is the contract. This test extracts its
//! `parse_checkpoint_comment` function *at test time*, runs it unchanged under `python3` on
//! checkpoints forgestate rendered, and requires the same agent, session, phase, timestamp and data.
//! The function is never copied into this repository.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use forgestate::format::{Payload, Record, Renderer, format_time, parse_time};
use serde_json::{Value, json};

const SEED: &str = "../shared/seeds/003_6e1e09118f29b57e.txt";

/// The text of `def parse_checkpoint_comment` up to the next top-level line.
fn seed_parser_source() -> String {
    let path = format!("{}/{SEED}", env!("CARGO_MANIFEST_DIR"));
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

/// Runs the seed's parser over many bodies in one python3 process.
fn seed_parse(bodies: &[String]) -> Vec<Value> {
    let script = format!(
        "import contextlib, json, sys\n{}\n\
         bodies = json.load(sys.stdin)\n\
         with contextlib.redirect_stdout(sys.stderr):\n    out = [parse_checkpoint_comment(b) for b in bodies]\n\
         json.dump(out, sys.stdout)\n",
        seed_parser_source()
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
    let renderer = Renderer::embedded().unwrap();
    let bodies: Vec<String> = records
        .iter()
        .map(|r| renderer.render(r).unwrap())
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
        assert_eq!(&seen["data"], data, "{body}");
        assert_eq!(seen["version"], "2.0");
    }
}

#[test]
fn seed_parser_reads_our_checkpoints() {
    let mut fixed = Record::checkpoint(
        "implementation-worker",
        "sess: 42 [retry]",
        "subtask_3_complete",
        json!({"issue_number": 42, "branch_name": "feat/é", "completed_subtasks": [1, 2, 3],
               "note": "line\n```\nPhase: evil", "pr_number": null, "ratio": 0.1}),
    )
    .unwrap()
    .with_lineage(Some(3), Some("parent-id".into()));
    fixed.time = parse_time("2026-11-29T08:40:58.000001Z").unwrap();
    assert_seed_reads(&[fixed]);
}

#[test]
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
fn the_extracted_function_is_the_seeds() {
    let src = seed_parser_source();
    assert!(
        src.contains("json_start = comment_body.find(\"```json\\n\") + 8"),
        "{src}"
    );
    assert!(src.trim_end().ends_with("return None"), "{src}");
}
