//! One cap on every name and glob a request gives (`agent`, `session`, `phase`, `new_session`,
//! `writer`: 200 characters, what a record's name may hold), checked before anything is read
//! on every face: a 16 MB `agent` glob cost seconds and gigabytes and answered "cannot reach the
//! forge" (75) once the wait budget was spent; it is a usage error (64) at once.

use forgestate::verbs;
use serde_json::json;

use super::deep_arguments::{lines, mcp, mcp_error, one, tool_call};
use crate::common::cli::{args, stderr};

#[test]
fn a_name_or_glob_over_the_cap_is_a_usage_error_on_every_face() {
    let dir = tempfile::tempdir().unwrap();
    let bin = super::one_checkpoint(dir.path());
    let at_cap = "w".repeat(200);
    let over = "w".repeat(201);
    let huge = "*".repeat(4 << 20);

    // The CLI's flags.
    for (verb, flag) in [
        ("list", "--agent"),
        ("list", "--phase"),
        ("status", "--session"),
        ("resume", "--agent"),
        ("history", "--agent"),
    ] {
        let mut line = args(&["--store", "st", verb, flag, &over]);
        if verb == "resume" || verb == "history" {
            line.extend(args(&["--session", "s1"]));
        }
        let out = bin.run(&line);
        assert_eq!(
            out.status.code(),
            Some(64),
            "{verb} {flag}: {}",
            stderr(&out)
        );
        assert!(
            stderr(&out).contains(&format!("{flag} is 201 characters long; the limit is 200")),
            "{}",
            stderr(&out)
        );
    }
    let fine = bin.run(&args(&["--store", "st", "list", "--agent", &at_cap]));
    assert_eq!(fine.status.code(), Some(0), "{}", stderr(&fine));

    // `call`, `call --lines` and MCP: every name field of every verb the library runs.
    let mut asked = 0;
    for spec in verbs::table() {
        if verbs::runs(spec.name) != Some(verbs::Runs::Library) {
            continue;
        }
        let request = (spec.request)();
        let fields = request.get("properties").and_then(|p| p.as_object());
        let named = verbs::input::NAME_FIELDS
            .iter()
            .filter(|f| fields.is_some_and(|p| p.contains_key(**f)));
        for (n, field) in named.enumerate() {
            let long = if n % 2 == 0 { &over } else { &huge };
            let request = json!({*field: long});
            let verb = spec.name;
            let (code, doc) = one(&bin, verb, &request.to_string());
            assert_eq!(code, Some(64), "call {verb} {field}: {doc}");
            let line = json!({"id": 1, "verb": verb, "args": request}).to_string();
            let answer = &lines(&bin, &[line])[0];
            assert_eq!(answer["error"]["code"], 64, "call --lines {verb} {field}");
            let message = answer["error"]["message"].as_str().unwrap_or_default();
            assert!(message.starts_with(&format!("{field} is ")), "{message}");
            assert!(
                message.contains("characters long; the limit is 200"),
                "{message}"
            );
            if spec.on(verbs::Face::Mcp) {
                let answer = &mcp(&bin, &[tool_call(1, verb, &request.to_string())])[0];
                assert_eq!(
                    mcp_error(answer)["code"],
                    64,
                    "MCP {verb} {field}: {answer}"
                );
            }
            asked += 1;
        }
    }
    assert!(asked >= 15, "too few name fields found: {asked}");
    let (code, doc) = one(&bin, "list", &json!({"agent": at_cap}).to_string());
    assert_eq!((code, &doc["records"]), (Some(0), &json!([])), "{doc}");
}
