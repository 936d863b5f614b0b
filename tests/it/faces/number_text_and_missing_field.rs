//! Two disagreements between the faces (issue #40's one rule on every path): a number sent as
//! text with spaces around it (`"limit": " 1"`) was taken by `call` and MCP though the CLI's
//! `--limit " 1"` refuses it (64); and a request missing a field was said to be missing it
//! "in" another argument (`` `agent`: missing field `session` ``).

use serde_json::json;

use super::deep_arguments::{lines, mcp, mcp_error, one, tool_call};
use crate::common::cli::{Bin, args, stderr};

#[test]
fn a_number_as_text_with_spaces_around_it_is_refused_on_every_face() {
    let dir = tempfile::tempdir().unwrap();
    let bin = super::one_checkpoint(dir.path());
    for limit in [" 1", "2 ", "\t3"] {
        let cli = bin.run(&args(&["--store", "st", "list", "--limit", limit]));
        assert_eq!(cli.status.code(), Some(64), "CLI {limit:?}");
        let request = json!({"limit": limit});
        let (code, doc) = one(&bin, "list", &request.to_string());
        assert_eq!(code, Some(64), "call {limit:?}: {doc}");
        let line = json!({"id": 1, "verb": "list", "args": request}).to_string();
        assert_eq!(
            lines(&bin, &[line])[0]["error"]["code"],
            64,
            "call --lines {limit:?}"
        );
        let answer = &mcp(&bin, &[tool_call(1, "list", &request.to_string())])[0];
        assert_eq!(mcp_error(answer)["code"], 64, "MCP {limit:?}: {answer}");
    }
    for (request, status) in [
        (json!({"stalled_after_secs": " 10m"}), 64),
        (json!({"stalled_after_secs": "10m"}), 0),
    ] {
        let (code, doc) = one(&bin, "status", &request.to_string());
        assert_eq!(code, Some(status), "call {request}: {doc}");
    }
    let cli = bin.run(&args(&[
        "--store",
        "st",
        "status",
        "--stalled-after",
        " 600",
    ]));
    assert_eq!(cli.status.code(), Some(64), "{}", stderr(&cli));
    let (code, doc) = one(&bin, "list", &json!({"limit": "1"}).to_string());
    assert_eq!(
        (code, doc["records"].as_array().map(Vec::len)),
        (Some(0), Some(1))
    );
}

#[test]
fn a_missing_field_is_named_alone_on_every_face() {
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path());
    let request = json!({"agent": "w"});
    let said = "the arguments of resume do not fit its schema: missing field `session`";
    let (code, doc) = one(&bin, "resume", &request.to_string());
    assert_eq!(code, Some(64), "{doc}");
    assert_eq!(doc["error"]["message"], said, "call");
    let line = json!({"id": 1, "verb": "resume", "args": request}).to_string();
    assert_eq!(
        lines(&bin, &[line])[0]["error"]["message"],
        said,
        "call --lines"
    );
    let answer = &mcp(&bin, &[tool_call(1, "resume", &request.to_string())])[0];
    assert_eq!(mcp_error(answer)["message"], said, "MCP: {answer}");
    // A field of the wrong type is still named.
    let (_, doc) = one(
        &bin,
        "resume",
        &json!({"agent": "w", "session": 5}).to_string(),
    );
    let message = doc["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("`session`: invalid type"), "{message}");
}
