//! `forgestate call VERB` reads its one request on stdin as the other faces read theirs: bytes
//! that are not UTF-8 and values nested too deep are bad data (65, the CLI's own message), and
//! stdin is read only up to the `--lines` limit, so an endless pipe cannot exhaust memory.

use serde_json::Value;

use super::{json_of, one};
use crate::common::cli::{Bin, stdout, words};

const W: &str = "implementation-worker";

/// docs/cli.md: "Input read from a file or stdin must be UTF-8 (otherwise exit 65, naming the
/// file or stdin)"; `checkpoint --data -` says so, and `call checkpoint` says the same.
#[test]
fn bytes_that_are_not_utf8_are_bad_data_as_for_data_from_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path());
    let cli = bin
        .clone()
        .stdin(b"{\"k\": \"\xff\"}".to_vec())
        .run(&words(&format!(
            "--store st --json checkpoint --agent {W} --session s1 --phase p --data -"
        )));
    let cli = json_of(&stdout(&cli));
    assert_eq!(cli["error"]["code"], 65, "{cli}");

    let request =
        format!(r#"{{"agent": "{W}", "session": "s1", "phase": "p", "data": {{"k": "@"}}}}"#);
    let bytes: Vec<u8> = request
        .bytes()
        .map(|b| if b == b'@' { 0xff } else { b })
        .collect();
    let out = bin
        .clone()
        .stdin(bytes)
        .run(&words("--store st call checkpoint"));
    let doc = json_of(&stdout(&out));
    assert_eq!(out.status.code(), Some(65), "{doc}");
    assert_eq!(doc["error"]["category"], "data", "{doc}");
    let message = doc["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("stdin is not valid UTF-8 (invalid byte at offset "),
        "{doc}"
    );
    let (code, listed) = one(&bin, "list", "{}");
    assert_eq!(code, Some(0));
    assert_eq!(
        listed["records"],
        Value::Array(vec![]),
        "nothing was written"
    );
}

/// Data nested past what forgestate reads is refused as data (65) by `--data`, by `call --lines`
/// and by the MCP server; the one-shot `call` says the same, not "not JSON" (64).
#[test]
fn data_nested_too_deep_is_bad_data_on_every_face() {
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path());
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let args = format!(
        "{{\"agent\": \"{W}\", \"session\": \"s1\", \"phase\": \"p\", \"data\": {{\"x\": {deep}}}}}"
    );
    let (code, doc) = one(&bin, "checkpoint", &args);
    assert_eq!(code, Some(65), "{doc}");
    let message = doc["error"]["message"].as_str().unwrap_or_default();
    assert!(message.starts_with("data nests too deeply"), "{doc}");

    let line = format!("{{\"verb\": \"checkpoint\", \"args\": {args}}}\n");
    let out = bin
        .clone()
        .stdin(line)
        .run(&words("--store st call --lines"));
    let answer = json_of(stdout(&out).trim());
    assert_eq!(answer["error"]["message"], message, "{answer}");
    assert_eq!(answer["error"]["code"], 65);
}

/// A request past the `--lines` limit (16 MiB, MCP's too) is refused unread rather than taken whole into
/// memory (`call list < /dev/zero` grew until the allocator gave up, exit 74).
#[test]
fn stdin_is_read_only_up_to_the_line_limit() {
    let dir = tempfile::tempdir().unwrap();
    let out = Bin::new(dir.path())
        .stdin(vec![b' '; (16 << 20) + 1])
        .run(&words("--store st call list"));
    let doc = json_of(&stdout(&out));
    assert_eq!(out.status.code(), Some(65), "{doc}");
    assert_eq!(
        doc["error"]["message"],
        "the request on stdin is over 16 MiB; nothing in it was run"
    );
}

/// `call --lines` answers a line past its limit (16 MiB, as MCP) with bad data, skips the rest of it
/// unread, and goes on with the next line.
#[test]
fn a_request_line_past_the_limit_is_answered_and_the_next_one_runs() {
    let dir = tempfile::tempdir().unwrap();
    let mut input = vec![b' '; (16 << 20) + 1];
    input.extend_from_slice(b"\n{\"verb\": \"list\", \"id\": 2}\n");
    let out = Bin::new(dir.path())
        .stdin(input)
        .run(&words("--store st call --lines"));
    let answers: Vec<Value> = stdout(&out).lines().map(json_of).collect();
    assert_eq!(out.status.code(), Some(0), "{answers:?}");
    assert_eq!(answers.len(), 2, "{answers:?}");
    assert_eq!(answers[0]["error"]["code"], 65, "{answers:?}");
    assert_eq!(
        answers[0]["error"]["message"],
        "the request line is over 16 MiB; nothing in it was run"
    );
    assert_eq!(answers[1]["id"], 2, "{answers:?}");
    assert!(answers[1]["answer"]["records"].is_array(), "{answers:?}");
}
