//! Arguments that do not fit a verb's request schema (docs/mcp.md), through `forgestate call`:
//! a usage error naming the field, and an unknown one refused even beside a flattened filter.

use super::one;
use crate::common::cli::Bin;

/// docs/mcp.md: arguments that do not fit the schema are a usage error naming the field, on
/// every face (`call` and MCP decode alike); serde names only a missing or unknown one.
#[test]
fn an_argument_of_the_wrong_type_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path());
    for (verb, request, field) in [
        ("resume", r#"{"agent": 1, "session": "s"}"#, "`agent`"),
        ("list", r#"{"agent": "a", "limit": "many"}"#, "`limit`"),
        ("list", r#"{"limit": -1}"#, "`limit`"),
        // Two wrong: the one the message is about.
        (
            "list",
            r#"{"agent": 3, "limit": "x"}"#,
            "`limit`: invalid type: string",
        ),
        (
            "history",
            r#"{"session": "s", "diff": "yes please"}"#,
            "`diff`",
        ),
    ] {
        let (code, doc) = one(&bin, verb, request);
        assert_eq!(code, Some(64), "{verb} {request}: {doc}");
        let message = doc["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("do not fit its schema") && message.contains(field),
            "{verb} {request}: names not {field}: {message}"
        );
    }
}

/// `latest` and `list` take a flattened filter, which serde would let an unknown argument
/// through: a typo (`agnet`) must be refused, not answer for every agent.
#[test]
fn a_mistyped_filter_argument_is_refused_not_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path());
    for verb in ["latest", "list"] {
        let (code, doc) = one(&bin, verb, r#"{"agnet": "w"}"#);
        assert_eq!(code, Some(64), "{verb}: {doc}");
        let message = doc["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("unknown field `agnet`") && message.contains("`agent`"),
            "{verb}: {message}"
        );
    }
}

/// `render` takes a record as `parse` and `latest` print it, whose other keys (`version`,
/// `comment`, `redacted`) its schema leaves open: `call render` ignores them as `render -` does,
/// and renders the same body.
#[test]
fn render_over_call_ignores_the_keys_parse_prints_as_the_cli_does() {
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path());
    let record = serde_json::json!({
        "agent": "w", "session": "s1", "phase": "p", "seq": 1,
        "id": "0190b6f0-0000-7000-8000-000000000001", "time": "2026-12-05T08:00:00Z",
        "version": 2, "comment": 7, "redacted": false,
    })
    .to_string();
    let (code, doc) = one(&bin, "render", &record);
    assert_eq!(code, Some(0), "{doc}");
    let out = bin
        .clone()
        .stdin(record.as_str())
        .run(&crate::common::cli::words("--store st render -"));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::common::cli::stderr(&out)
    );
    let body = doc["body"].as_str().expect("a body");
    assert_eq!(body.trim_end(), crate::common::cli::stdout(&out).trim_end());
}
