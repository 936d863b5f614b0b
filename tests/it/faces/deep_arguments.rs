//! An argument nested past what a face's parser reads whole (serde_json's 128 levels, counted
//! from the document's top) is refused as the same argument shallow is: a 128-deep `session`
//! was taken as its JSON text (a session named `[[[...`, "no records", exit 0) by `call`,
//! `call --lines` and MCP. Only a field taking an object's JSON text (`data`) gets the text.

use std::io::Write;
use std::process::Stdio;

use serde_json::{Value, json};

use crate::common::cli::{Bin, stdout, words};

fn deep(levels: usize) -> String {
    format!("{}{}", "[".repeat(levels), "]".repeat(levels))
}

/// `forgestate --store st call VERB` with `request` on stdin: exit code and document.
pub(super) fn one(bin: &Bin, verb: &str, request: &str) -> (Option<i32>, Value) {
    let out = bin
        .clone()
        .stdin(request)
        .run(&words(&format!("--store st call {verb}")));
    let doc = serde_json::from_str(&stdout(&out)).unwrap_or(Value::Null);
    (out.status.code(), doc)
}

/// The answer lines of `forgestate --store st call --lines` over `lines`.
pub(super) fn lines(bin: &Bin, lines: &[String]) -> Vec<Value> {
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let out = bin
        .clone()
        .stdin(input)
        .run(&words("--store st call --lines"));
    stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or(Value::Null))
        .collect()
}

/// The answers of `forgestate --store st mcp` to these `tools/call` lines, by id.
pub(super) fn mcp(bin: &Bin, calls: &[String]) -> Vec<Value> {
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let ready = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let mut child = bin
        .command(&words("--store st mcp"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn forgestate mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut input = format!("{init}\n{ready}\n");
    calls.iter().for_each(|c| input.push_str(&format!("{c}\n")));
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("wait");
    writer.join().expect("writer").expect("write the calls");
    let answers: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or(Value::Null))
        .collect();
    (1..=calls.len())
        .map(|id| {
            answers
                .iter()
                .find(|a| a["id"] == id)
                .cloned()
                .unwrap_or(Value::Null)
        })
        .collect()
}

pub(super) fn tool_call(id: usize, name: &str, arguments: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{arguments}}}}}"#
    )
}

/// The error object of an MCP tool's failed answer (its second text, the error document).
pub(super) fn mcp_error(answer: &Value) -> Value {
    let text = answer["result"]["content"][1]["text"].as_str();
    match answer["result"]["isError"] == true {
        true => {
            serde_json::from_str::<Value>(text.unwrap_or("null")).unwrap_or(Value::Null)["error"]
                .clone()
        }
        false => Value::Null,
    }
}

#[test]
fn a_deep_name_is_refused_as_a_shallow_one_on_every_face() {
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path());
    let saved = bin.run(&words(
        "--store st checkpoint --agent w --session s1 --phase p",
    ));
    assert_eq!(saved.status.code(), Some(0));

    let (code, shallow) = one(&bin, "list", r#"{"session": [[]]}"#);
    assert_eq!(code, Some(64), "{shallow}");
    let said = shallow["error"]["message"].clone();
    assert!(
        said.as_str().unwrap_or_default().contains("`session`"),
        "{said}"
    );
    for levels in [127, 128, 400] {
        let request = format!(r#"{{"session": {}}}"#, deep(levels));
        let (code, doc) = one(&bin, "list", &request);
        assert_eq!(code, Some(64), "call, {levels} deep: {doc}");
        assert_eq!(doc["error"]["message"], said, "call, {levels} deep");
        assert!(doc.get("records").is_none(), "{doc}");
    }

    let requests: Vec<String> = [1, 126, 128, 400]
        .iter()
        .map(|&levels| {
            format!(
                r#"{{"id": {levels}, "verb": "list", "args": {{"session": {}}}}}"#,
                deep(levels)
            )
        })
        .collect();
    for answer in lines(&bin, &requests) {
        assert_eq!(answer["error"]["code"], 64, "call --lines: {answer}");
        assert_eq!(answer["error"]["message"], said, "call --lines: {answer}");
    }

    let calls: Vec<String> = [1, 124, 125, 127, 400]
        .iter()
        .enumerate()
        .map(|(i, &levels)| {
            tool_call(
                i + 1,
                "list",
                &format!(r#"{{"session": {}}}"#, deep(levels)),
            )
        })
        .collect();
    for (answer, levels) in mcp(&bin, &calls).iter().zip([1, 124, 125, 127, 400]) {
        let error = mcp_error(answer);
        assert_eq!(error["code"], 64, "MCP, {levels} deep: {answer}");
        assert_eq!(error["message"], said, "MCP, {levels} deep");
    }
}

#[test]
fn a_deep_value_for_a_field_taking_any_json_is_a_usage_error_on_every_face() {
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path());
    let args = format!(
        r#"{{"agent": "w", "session": "s1", "phase": "p", "intent": "i", "intent_data": {}}}"#,
        deep(300)
    );
    let (code, doc) = one(&bin, "checkpoint", &args);
    assert_eq!(code, Some(64), "call: {doc}");
    let message = doc["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("`intent_data` nests too deeply"), "{doc}");

    let line = format!(r#"{{"id": 1, "verb": "checkpoint", "args": {args}}}"#);
    let answer = &lines(&bin, &[line])[0];
    assert_eq!(answer["error"]["code"], 64, "call --lines: {answer}");

    let answer = &mcp(&bin, &[tool_call(1, "checkpoint", &args)])[0];
    assert_eq!(answer["error"]["code"], -32602, "MCP: {answer}");
    let (code, listed) = one(&bin, "list", "{}");
    assert_eq!(code, Some(0));
    assert_eq!(listed["records"], json!([]), "nothing was saved");
}
