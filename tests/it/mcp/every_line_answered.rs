//! `forgestate mcp` answers every line (issue #18, class 6): -32700 for a line it cannot parse
//! (not JSON, truncated, a lone surrogate, not UTF-8), -32600 for an invalid request and for a
//! line over 16 MiB, `isError` for tool arguments past the CLI's nesting limit (the same limit:
//! 127 levels of `data` are taken by both), and the server answers the next call afterwards.

use crate::common;
use std::io::Write;
use std::process::Stdio;

use common::cli::Bin;
use serde_json::Value;

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
const READY: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// Runs the server over these lines (after the handshake) and returns every answer it wrote.
fn session(lines: &[Vec<u8>]) -> Vec<Value> {
    session_text(lines)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|_| too_deep(l)))
        .collect()
}

/// What the server wrote over these lines (after the handshake), as written.
fn session_text(lines: &[Vec<u8>]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("st").display().to_string();
    let mut child = Bin::new(dir.path())
        .command(&["--store".into(), store, "mcp".into()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = {
        let lines: Vec<Vec<u8>> = [INIT.as_bytes().to_vec(), READY.as_bytes().to_vec()]
            .into_iter()
            .chain(lines.iter().cloned())
            .collect();
        std::thread::spawn(move || {
            for line in lines {
                stdin.write_all(&line).unwrap();
                stdin.write_all(b"\n").unwrap();
            }
        })
    };
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// An answer that echoes data nested past what serde_json parses: its id and verdict only.
fn too_deep(line: &str) -> Value {
    let id: u64 = line
        .strip_prefix(r#"{"jsonrpc":"2.0","id":"#)
        .and_then(|rest| rest.split(',').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("not an answer: {line}"));
    let is_error = line.ends_with(r#""isError":true}}"#);
    assert!(is_error || line.ends_with(r#""isError":false}}"#), "{line}");
    serde_json::json!({"id": id, "result": {"isError": is_error}})
}

fn call(id: u64, name: &str, arguments: &str) -> Vec<u8> {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{arguments}}}}}"#
    )
    .into_bytes()
}

fn by_id(answers: &[Value], id: Value) -> &Value {
    answers
        .iter()
        .find(|a| a["id"] == id)
        .unwrap_or_else(|| panic!("no answer for id {id}: {answers:#?}"))
}

fn nested(levels: usize) -> String {
    format!("{}1{}", "{\"a\":".repeat(levels), "}".repeat(levels))
}

#[test]
fn every_bad_line_gets_an_answer_and_the_server_goes_on() {
    let lines = vec![
        b"this is not json".to_vec(),
        br#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"list","argu"#.to_vec(),
        br#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"list","arguments":{"agent":"\ud800"}}}"#.to_vec(),
        b"{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"ping\",\"x\":\"\xff\"}".to_vec(),
        br#"{"jsonrpc":"2.0","id":14}"#.to_vec(),
        br#"[{"jsonrpc":"2.0","id":15,"method":"ping"}]"#.to_vec(),
        br#"{"jsonrpc":"1.0","id":16,"method":"ping"}"#.to_vec(),
        call(17, "list", "{}"),
    ];
    let answers = session(&lines);
    let parse_errors: Vec<&Value> = answers
        .iter()
        .filter(|a| a["error"]["code"] == -32700)
        .collect();
    assert_eq!(parse_errors.len(), 4, "{answers:#?}");
    assert!(parse_errors.iter().any(|a| a["id"] == Value::Null));
    for id in [11, 12, 13] {
        assert_eq!(
            by_id(&answers, id.into())["error"]["code"],
            -32700,
            "id {id}"
        );
    }
    assert_eq!(by_id(&answers, 14.into())["error"]["code"], -32600);
    assert_eq!(by_id(&answers, 16.into())["error"]["code"], -32600);
    assert!(
        answers
            .iter()
            .any(|a| a["id"] == Value::Null && a["error"]["code"] == -32600),
        "the batch is answered: {answers:#?}"
    );
    assert_eq!(by_id(&answers, 17.into())["result"]["isError"], false);
}

#[test]
fn tool_arguments_nest_as_deep_as_the_cli_takes_and_no_deeper() {
    let checkpoint = |id: u64, levels: usize| {
        call(
            id,
            "checkpoint",
            &format!(
                r#"{{"agent":"w","session":"s","phase":"p","data":{}}}"#,
                nested(levels)
            ),
        )
    };
    let answers = session(&[
        checkpoint(21, 124),
        checkpoint(22, 127),
        checkpoint(23, 128),
        checkpoint(24, 300),
        call(25, "list", "{}"),
    ]);
    for id in [21, 22] {
        let a = by_id(&answers, id.into());
        assert_eq!(a["result"]["isError"], false, "{a}");
    }
    for id in [23, 24] {
        let a = by_id(&answers, id.into());
        assert_eq!(a["result"]["isError"], true, "{a}");
        assert!(a.to_string().contains("recursion limit"), "{a}");
    }
    let listed = by_id(&answers, 25.into());
    assert_eq!(listed["result"]["isError"], false, "{listed}");
}

#[test]
fn the_cli_draws_the_nesting_line_at_the_same_place() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("st").display().to_string();
    let run = |levels: usize| {
        Bin::new(dir.path()).run(&[
            "--store".into(),
            store.clone(),
            "checkpoint".into(),
            "--agent".into(),
            "w".into(),
            "--session".into(),
            "s".into(),
            "--phase".into(),
            "p".into(),
            "--data".into(),
            nested(levels),
        ])
    };
    assert!(run(127).status.success());
    assert_eq!(run(128).status.code(), Some(65));
}

#[test]
fn a_line_over_16_mib_is_answered_and_the_server_stays_up() {
    let mut huge = br#"{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"list","arguments":{"agent":""#.to_vec();
    huge.extend(std::iter::repeat_n(b'a', 17 * 1024 * 1024));
    huge.extend_from_slice(br#""}}}"#);
    let answers = session(&[huge, call(32, "list", "{}")]);
    let a = by_id(&answers, 31.into());
    assert_eq!(a["error"]["code"], -32600, "{a}");
    assert!(
        a["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("16 MiB"),
        "{a}"
    );
    assert_eq!(by_id(&answers, 32.into())["result"]["isError"], false);
}

/// A buggy client's requests: `params` that is not an object (or an `id` the server must echo)
/// and a `tools/call` whose `arguments` is not one each get an error answer naming their id,
/// never silence, and the server goes on answering. Arguments that are not an object are
/// invalid params (-32602), answered by the line gate: rmcp's own decoding would answer
/// -32601, "method not found", for a method that exists.
#[test]
fn requests_whose_params_or_arguments_are_not_objects_are_answered_with_their_id() {
    let lines: Vec<Vec<u8>> = [
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":[]}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/list","params":"x"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list","arguments":[1,2]}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list","arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#,
    ]
    .iter()
    .map(|l| l.as_bytes().to_vec())
    .collect();
    let answers = session(&lines);
    for id in [5, 6] {
        let answer = answers.iter().find(|a| a["id"] == id);
        assert!(
            answer.is_some_and(|a| a["error"]["code"].is_i64()),
            "request {id} got no error answer naming it: {answers:?}"
        );
    }
    let bad = by_id(&answers, 2.into());
    assert_eq!(
        bad["error"]["code"], -32602,
        "arguments [1,2] to list: {bad}"
    );
    let message = bad["error"]["message"].as_str().unwrap_or("");
    assert!(
        message.contains("`arguments` must be an object"),
        "{message}"
    );
    assert_eq!(
        by_id(&answers, 3.into())["result"]["isError"],
        Value::Bool(false)
    );
    assert!(answers.iter().any(|a| a["id"] == 7), "{answers:?}");
    for a in &answers {
        assert!(a.get("id").is_some(), "an answer with no id: {a}");
    }
}

/// A key given twice in a tool's `data` (or anywhere in its arguments) is invalid params: the
/// message names the key and where it is, nothing is saved, and the next call is answered.
#[test]
fn a_key_given_twice_in_data_is_invalid_params_and_nothing_is_saved() {
    let answers = session(&[
        call(
            40,
            "checkpoint",
            r#"{"agent":"w","session":"s","phase":"p","data":{"n":1,"n":2}}"#,
        ),
        call(
            41,
            "checkpoint",
            r#"{"agent":"w","session":"s","phase":"p","phase":"q"}"#,
        ),
        call(42, "list", "{}"),
    ]);
    let a = by_id(&answers, 40.into());
    assert_eq!(a["error"]["code"], -32602, "{a}");
    let message = a["error"]["message"].as_str().unwrap_or("");
    assert!(
        message.contains("the key \"n\" twice (in data)"),
        "{message}"
    );
    let a = by_id(&answers, 41.into());
    assert_eq!(a["error"]["code"], -32602, "{a}");
    let message = a["error"]["message"].as_str().unwrap_or("");
    assert!(
        message.contains("arguments has the key \"phase\" twice;"),
        "{message}"
    );
    let list = by_id(&answers, 42.into());
    assert_eq!(list["result"]["isError"], false, "{list}");
    let records = &list["result"]["structuredContent"]["records"];
    assert_eq!(
        records.as_array().map(Vec::len),
        Some(0),
        "nothing saved: {list}"
    );
}

/// A client that writes its calls and closes stdin at once (`cat calls.jsonl | forgestate mcp`)
/// still gets every answer: the calls queued behind one session's turn are run and answered
/// before the server stops (rmcp alone drops what is in flight when its input ends).
#[test]
fn calls_still_queued_when_stdin_closes_are_answered() {
    let mut lines: Vec<Vec<u8>> = (1..=8)
        .map(|id| {
            call(
                id,
                "checkpoint",
                &format!(r#"{{"agent":"w","session":"q","phase":"p{id}"}}"#),
            )
        })
        .collect();
    lines.push(call(
        9,
        "checkpoint",
        r#"{"agent":"w","session":"other","phase":"a"}"#,
    ));
    lines.push(call(10, "list", r#"{"agent":"w","session":"q"}"#));
    lines.push(call(11, "resume", r#"{"agent":"w","session":"q"}"#));
    let answers = session(&lines);
    for id in 1..=11u64 {
        assert_eq!(
            by_id(&answers, id.into())["result"]["isError"],
            false,
            "id {id}"
        );
    }
    assert_eq!(
        by_id(&answers, 11.into())["result"]["structuredContent"]["phase"],
        "p8"
    );
}

/// The line gate's finer points: the top-level `id` of a truncated line (not one nested in its
/// params), an `id` that is no id, blank lines, `arguments` of every wrong type for both methods
/// that take them, and `null` arguments (none).
#[test]
fn the_gate_reads_ids_skips_blank_lines_and_checks_arguments_of_both_methods() {
    let mut lines: Vec<Vec<u8>> = vec![
        br#"{"jsonrpc":"2.0","params":{"id":9},"id":50,"method":"ping","x":"#.to_vec(),
        br#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#.to_vec(),
        b"  \r".to_vec(),
        Vec::new(),
    ];
    let mut id = 51;
    for args in ["[1,2]", "\"x\"", "3", "true"] {
        for method in ["tools/call", "prompts/get"] {
            lines.push(
                format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{"name":"list","arguments":{args}}}}}"#
                )
                .into_bytes(),
            );
            id += 1;
        }
    }
    lines.push(
        br#"{"jsonrpc":"2.0","id":70,"method":"tools/call","params":{"name":"list","arguments":null}}"#
            .to_vec(),
    );
    let answers = session(&lines);
    assert_eq!(by_id(&answers, 50.into())["error"]["code"], -32700);
    let bad_id: Vec<&Value> = answers
        .iter()
        .filter(|a| a["id"] == Value::Null && a["error"]["code"] == -32600)
        .collect();
    assert_eq!(bad_id.len(), 1, "{answers:#?}");
    for id in 51..59u64 {
        let a = by_id(&answers, id.into());
        assert_eq!(a["error"]["code"], -32602, "{a}");
        let message = a["error"]["message"].as_str().unwrap_or("");
        assert!(
            message.contains("`arguments` must be an object"),
            "{message}"
        );
    }
    assert_eq!(by_id(&answers, 70.into())["result"]["isError"], false);
    // The handshake, the two bad lines, eight bad arguments and the list: nothing for the blanks.
    assert_eq!(answers.len(), 12, "{answers:#?}");
}

/// A key given twice is found wherever it is in the arguments (in an array's object, in
/// `metrics`, in arguments nested too deep for rmcp and handed on as text), and the same key in
/// sibling objects is no repeat.
#[test]
fn a_key_given_twice_is_found_anywhere_in_the_arguments() {
    let deep = format!("[{}1{}]", "[".repeat(125), "]".repeat(125));
    let answers = session(&[
        call(60, "checkpoint", r#"{"data":{"x":[{"k":1,"k":1}]}}"#),
        call(61, "health", r#"{"metrics":{"m":1,"m":2}}"#),
        call(
            62,
            "checkpoint",
            &format!(r#"{{"data":{{"n":1,"n":2,"d":{deep}}}}}"#),
        ),
        call(
            63,
            "checkpoint",
            r#"{"agent":"w","session":"s","phase":"p","data":{"a":{"n":1},"b":{"n":2}}}"#,
        ),
    ]);
    for (id, place) in [
        (60, "(in data.x[0])"),
        (61, "(in metrics)"),
        (62, "(in data)"),
    ] {
        let a = by_id(&answers, id.into());
        assert_eq!(a["error"]["code"], -32602, "{a}");
        let message = a["error"]["message"].as_str().unwrap_or("");
        assert!(message.contains(place), "{message}");
        assert!(
            message.starts_with("Invalid params: arguments has the key"),
            "{message}"
        );
    }
    assert_eq!(by_id(&answers, 63.into())["result"]["isError"], false);
}

/// Brackets inside a string are text, not nesting: beside an argument too deep for rmcp, a
/// `next` full of brackets is still taken as the string it is.
#[test]
fn brackets_in_a_string_are_no_nesting() {
    let next = "[[[{".repeat(50);
    let text = session_text(&[call(
        80,
        "checkpoint",
        &format!(
            r#"{{"agent":"w","session":"s","phase":"p","next":"{next}","data":{}}}"#,
            nested(126)
        ),
    )]);
    let saved = text
        .lines()
        .find(|l| l.contains(r#""id":80"#))
        .unwrap_or_default();
    assert!(saved.ends_with(r#""isError":false}}"#), "{saved}");
    // Taken as text, it would have come back quoted (`"next":"\"[[[{...`).
    assert!(saved.contains(&format!(r#""next":"{next}""#)), "{saved}");
}
