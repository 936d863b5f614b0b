//! What a buggy MCP client sends to `forgestate mcp`: a `tools/call` whose `arguments` is not an
//! object gets an error answer, never silence, and the server goes on answering. (The code is
//! rmcp's: its request decoding fails before our handler runs and it answers "method not found",
//! -32601, where "invalid params", -32602, would be exact; that is upstream's to change.)

use crate::common;
use std::io::Write;
use std::process::Stdio;

use common::cli::Bin;
use serde_json::Value;

#[test]
fn tools_call_with_arguments_that_are_not_an_object_gets_an_error_and_the_server_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("st").display().to_string();
    let mut child = Bin::new(dir.path())
        .command(&["--store".into(), store, "mcp".into()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list","arguments":[1,2]}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list","arguments":{}}}"#,
    ];
    let mut stdin = child.stdin.take().unwrap();
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let answers: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let answer = answers
        .iter()
        .find(|a| a["id"] == 2)
        .unwrap_or_else(|| panic!("no answer to the call: {answers:?}"));
    let code = answer["error"]["code"].as_i64();
    assert!(
        matches!(code, Some(-32602 | -32601)),
        "arguments [1,2] to list: {answer}"
    );
    let next = answers
        .iter()
        .find(|a| a["id"] == 3)
        .unwrap_or_else(|| panic!("no answer after the bad call: {answers:?}"));
    assert_eq!(next["result"]["isError"], Value::Bool(false), "{next}");
}
