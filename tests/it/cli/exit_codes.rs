//! End-to-end: exit codes and error messages of the real binary.

use crate::common;
use common::cli::{run_in, stderr, words};
use serde_json::Value;

#[test]
fn exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let code = |args: Vec<String>| run_in(d, &args, None).status.code().unwrap();
    let cp = |extra: &str| {
        words(&format!(
            "checkpoint --agent a --session s --phase p {extra}"
        ))
    };
    assert_eq!(code(words("checkpoint --agent a")), 64, "missing flags");
    assert_eq!(code(words("frobnicate")), 64);
    assert_eq!(code(cp("--set oops")), 64);
    assert_eq!(
        code(cp("--data {} --data-file x")),
        64,
        "--data and --data-file conflict"
    );
    assert_eq!(code(words("list --since whenever")), 64);
    let mut inject = words("checkpoint --agent a --phase p --session");
    inject.push("x\nPhase: evil".into());
    assert_eq!(code(inject), 65);
    assert_eq!(code(cp("--data [1]")), 65);
    assert_eq!(code(cp("--data {")), 65);
    assert_eq!(code(cp("--data-file missing.json")), 74);
    assert_eq!(code(words("list --config nope.toml")), 78);
    std::fs::write(d.join("bad.toml"), "[format]\nmax_body_bytes = 99999999\n").unwrap();
    assert_eq!(code(cp("--config bad.toml")), 78);
    assert_eq!(code(words("--help")), 0);
    assert_eq!(code(words("--version")), 0);
    assert!(
        !d.join(".local/state/forgestate/local/thread.jsonl")
            .exists(),
        "nothing was written by failures"
    );
}

#[test]
fn config_typos_are_named() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("typo.toml"), "[locall]\ndir = \"x\"\n").unwrap();
    let out = run_in(dir.path(), &words("list --config typo.toml"), None);
    assert_eq!(out.status.code(), Some(78));
    assert!(stderr(&out).contains("locall"), "{}", stderr(&out));
}

#[test]
fn invalid_header_values_say_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = words("checkpoint --agent a --phase p --session");
    args.push("x\nPhase: evil".into());
    let out = run_in(dir.path(), &args, None);
    assert!(
        stderr(&out).contains("session contains a line break"),
        "{}",
        stderr(&out)
    );
    assert!(
        !stderr(&out).contains("local store"),
        "validation happens before the store opens"
    );
}

/// A name no record can carry is refused by `resume` as `checkpoint` refuses it (exit 65, the
/// same sentence), on the CLI and through `call`: it never reads as "no checkpoint yet, fresh
/// start", which an agent would act on.
#[test]
fn resume_refuses_an_agent_or_session_no_record_can_carry_as_checkpoint_does() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases = [
        ("", "s", "agent is empty; give a non-empty agent"),
        ("a", "", "session is empty; give a non-empty session"),
        ("a", "x\nPhase: evil", "session contains a line break"),
    ];
    for (agent, session, said) in cases {
        let names = ["--agent", agent, "--session", session].map(String::from);
        for verb in ["checkpoint --phase p", "resume"] {
            let args = [words(verb), names.to_vec()].concat();
            let out = run_in(d, &args, None);
            assert_eq!(out.status.code(), Some(65), "{args:?}: {}", stderr(&out));
            assert!(stderr(&out).contains(said), "{args:?}: {}", stderr(&out));
        }
        let request = serde_json::json!({"agent": agent, "session": session}).to_string();
        let out = run_in(d, &words("call resume"), Some(&request));
        assert_eq!(
            out.status.code(),
            Some(65),
            "call {request}: {}",
            stderr(&out)
        );
        assert!(
            stderr(&out).contains(said),
            "call {request}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn oversized_checkpoint_is_refused_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let big = format!("{{\"blob\": \"{}\"}}", "x".repeat(300 * 1024));
    let args = words("checkpoint --agent a --session s --phase p --data -");
    let out = run_in(dir.path(), &args, Some(&big));
    assert_eq!(out.status.code(), Some(65));
    assert!(
        stderr(&out).contains("262144-byte limit"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn parse_verb_prints_the_record_or_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/seed-health-unclosed.md"
    );
    let out = run_in(d, &words(&format!("parse {fixture}")), None);
    assert!(out.status.success());
    let record: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(record["kind"], "health");
    assert_eq!(record["next_check"], "in 10 iterations");

    let out = run_in(d, &words("parse -"), Some("just a comment"));
    assert_eq!(out.status.code(), Some(65));
    assert!(
        stderr(&out).contains("[CHECKPOINT], [HEALTH], [END] or [TAKEOVER]"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        stderr(&out).matches("not a record").count(),
        1,
        "said once: {}",
        stderr(&out)
    );
    assert!(
        stderr(&out).starts_with("forgestate: error: "),
        "{}",
        stderr(&out)
    );
    let out = run_in(
        d,
        &words("parse --json"),
        Some("[CHECKPOINT] a\n\n```json\n{}\n```"),
    );
    assert_eq!(out.status.code(), Some(65));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["error"]["code"], 65);
    assert_eq!(doc["error"]["reason"], "missing_field");
}
