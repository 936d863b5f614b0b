//! A key given twice in one JSON object (issue #29, hole 13) is refused wherever JSON text comes
//! in on the command line: `--data`, `--data-file`, `--data -` (bad data, exit 65), and
//! `forgestate call` (one shot and `--lines`, the Python package's way in), whose request is a
//! usage error (64) as an unknown key is, and as MCP answers both (-32602); the key is named and
//! nothing is saved. (MCP's side is in `mcp::every_line_answered`.)

use crate::common;

use common::cli::{Bin, args, stderr, stdout};
use serde_json::Value;

const TWICE: &str = r#"{"n": 1, "x": {"k": [{"a": 1}]}, "n": 2}"#;

fn checkpoint(bin: &Bin, data_flags: &[&str]) -> std::process::Output {
    let mut argv = args(&[
        "--store",
        "st",
        "checkpoint",
        "--agent",
        "w",
        "--session",
        "s",
        "--phase",
        "p",
    ]);
    argv.extend(args(data_flags));
    bin.run(&argv)
}

fn saved(bin: &Bin) -> usize {
    let out = bin.run(&args(&["--store", "st", "list", "--json"]));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["records"].as_array().map_or(0, Vec::len)
}

#[test]
fn data_with_a_key_twice_is_refused_by_every_cli_input() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("d.json"), TWICE).unwrap();
    let bin = Bin::new(dir.path());
    let runs = [
        checkpoint(&bin, &["--data", TWICE]),
        checkpoint(&bin, &["--data-file", "d.json"]),
        checkpoint(&bin.clone().stdin(TWICE), &["--data", "-"]),
    ];
    for out in runs {
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(65), "{err}");
        assert!(
            err.contains("--data has the key \"n\" twice") && err.contains("give each key once"),
            "{err}"
        );
    }
    let nested = checkpoint(&bin, &["--data", r#"{"x": {"k": [{"a": 1, "a": 2}]}}"#]);
    assert!(
        stderr(&nested).contains("--data has the key \"a\" twice (in x.k[0])"),
        "{}",
        stderr(&nested)
    );
    assert_eq!(saved(&bin), 0, "nothing saved");
    let fine = checkpoint(&bin, &["--data", r#"{"a": {"n": 1}, "b": {"n": 1}}"#]);
    assert_eq!(fine.status.code(), Some(0), "{}", stderr(&fine));
}

#[test]
fn call_refuses_a_key_twice_in_its_request() {
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path());
    let request = r#"{"agent": "w", "session": "s", "phase": "p", "data": {"n": 1, "n": 2}}"#;
    let out = bin
        .clone()
        .stdin(request)
        .run(&args(&["--store", "st", "call", "checkpoint"]));
    assert_eq!(out.status.code(), Some(64), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["error"]["code"], 64, "{doc}");
    assert_eq!(doc["error"]["category"], "usage", "{doc}");
    let message = doc["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("the request has the key \"n\" twice (in data);"),
        "{message}"
    );

    let lines = concat!(
        r#"{"id": 1, "verb": "checkpoint", "args": {"agent": "w", "session": "s", "phase": "p", "agent": "v"}}"#,
        "\n",
        r#"{"id": 2, "verb": "list", "args": {}}"#,
        "\n"
    );
    let out = bin
        .clone()
        .stdin(lines)
        .run(&args(&["--store", "st", "call", "--lines"]));
    let answers: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), 2, "{answers:?}");
    assert_eq!(answers[0]["id"], 1);
    assert_eq!(answers[0]["error"]["code"], 64, "{}", answers[0]);
    let message = answers[0]["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("the request line has the key \"agent\" twice (in args);"),
        "{message}"
    );
    assert_eq!(
        answers[1]["answer"]["records"].as_array().map(Vec::len),
        Some(0)
    );
}
