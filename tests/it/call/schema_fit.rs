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
