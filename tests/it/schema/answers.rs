//! The answers the binary writes are valid under the answer schemas `forgestate schema` prints,
//! every nested object included: a field serialized through a custom serializer, flattened or
//! renamed is described as it is written, and every key written is declared. The MCP verbs are
//! called over `forgestate mcp` (the verb table's own path), the others through the CLI's
//! `--json`.

use std::path::Path;

use serde_json::{Value, json};

use super::walk::violations;
use crate::common::cli::{Bin, parse_ok, words};
use crate::mcp_client::{self, call, ok};

/// Checks `doc` against `verb`'s answer schema in `table`, adding what is wrong to `out`.
fn against(table: &Value, verb: &str, doc: &Value, out: &mut Vec<String>) {
    let answer = &super::verb(table, verb)["answer"];
    out.extend(violations(answer, doc, answer, verb));
}

/// A comment that is not a record, appended to the local store's thread (for `list --invalid`).
fn append_stray(store: &Path) {
    let file = store.join("thread.jsonl");
    let text = std::fs::read_to_string(&file).unwrap();
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    let mut stray = last.clone();
    stray["id"] = json!(last["id"].as_u64().unwrap() + 1);
    stray["body"] = json!("just a comment, no record");
    std::fs::write(&file, format!("{text}{stray}\n")).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn every_answer_written_over_mcp_is_valid_under_its_schema() {
    let table = super::table();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("st");
    let context = dir.path().join("STATUS.md");
    std::fs::write(&context, "plan\n").unwrap();
    let bin = Bin::new(dir.path());
    let (client, _err) = mcp_client::connect(&bin, &format!("--store {}", store.display())).await;
    let mut wrong = Vec::new();
    let mut answers: Vec<(&str, Value)> = Vec::new();
    let mut run = async |verb: &'static str, args: Value| -> Value {
        let doc = ok(&call(&client, verb, args).await).clone();
        answers.push((verb, doc.clone()));
        doc
    };

    let first = run(
        "checkpoint",
        json!({"agent": "w", "session": "s", "phase": "clone_complete", "data": {"n": 1},
               "next": "build", "blockers": ["ci"], "context_file": context,
               "intent": "create_pr", "intent_data": {"branch": "b"}}),
    )
    .await;
    let parent = first["id"].as_str().unwrap().to_string();
    run(
        "health",
        json!({"agent": "w", "session": "s", "metrics": {"load": 1}, "next_check": "soon"}),
    )
    .await;
    for phase in ["p1", "p2"] {
        run(
            "checkpoint",
            json!({"agent": "w", "session": "s", "phase": phase, "data": {"n": 2, "token": "ghp_0123456789abcdefghij0123456789abcdef"},
                   "parent": parent}),
        )
        .await;
    }
    run(
        "end",
        json!({"agent": "w", "session": "done", "reason": "completed", "note": "ok"}),
    )
    .await;
    run(
        "checkpoint",
        json!({"agent": "w", "session": "done", "phase": "again"}),
    )
    .await;
    run(
        "end",
        json!({"agent": "w", "session": "stopped", "reason": "error", "note": "boom"}),
    )
    .await;
    run("fork", json!({"session": "s", "new_session": "s2"})).await;
    append_stray(&store);
    for (verb, args) in [
        (
            "resume",
            json!({"agent": "w", "session": "s", "context_file": context}),
        ),
        ("resume", json!({"agent": "w", "session": "done"})),
        ("resume", json!({"agent": "w", "session": "stopped"})),
        ("resume", json!({"agent": "w", "session": "none"})),
        ("latest", json!({"agent": "w"})),
        ("latest", json!({"agent": "nobody"})),
        ("list", json!({"invalid": true})),
        ("status", json!({})),
        ("history", json!({"session": "s", "diff": true})),
        ("history", json!({"session": "s2", "diff": true})),
    ] {
        run(verb, args).await;
    }
    client.cancel().await.unwrap();

    for (verb, doc) in &answers {
        against(&table, verb, doc, &mut wrong);
    }
    assert!(
        wrong.is_empty(),
        "answers the schema does not describe:\n{}",
        wrong.join("\n")
    );
    // The answers reached the nested shapes they should have checked.
    let doc = |verb: &str, key: &str| {
        answers
            .iter()
            .find(|(v, d)| *v == verb && !d[key].is_null() && d[key] != json!([]))
            .map(|(_, d)| d[key].clone())
            .unwrap_or_else(|| panic!("no {verb} answer with {key}"))
    };
    assert!(doc("resume", "conflicts")[0]["records"][0]["kind"].is_string());
    assert!(doc("resume", "ended")["reason"].is_string());
    assert!(doc("resume", "reopened")["reason"].is_string());
    assert!(doc("resume", "checkpoint")["comment"]["author"].is_string());
    assert!(doc("list", "invalid")[0]["code"].is_string());
    assert!(doc("status", "rows")[0]["last_seen"].is_string());
    assert!(doc("history", "forked_from")["record_id"].is_string());
    assert!(doc("history", "conflicts")[0]["agent"].is_string());
    assert!(doc("checkpoint", "record")["intent"]["name"].is_string());
}

#[test]
fn every_answer_the_cli_writes_for_the_other_verbs_is_valid_under_its_schema() {
    let table = super::table();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bin = Bin::new(d);
    let json = |line: &str, stdin: Option<&str>| -> Value {
        let args = words(&format!("--store st {line} --json"));
        let out = match stdin {
            Some(text) => bin.clone().stdin(text).run(&args),
            None => bin.run(&args),
        };
        parse_ok(&args, &out)
    };
    let mut wrong = Vec::new();
    let rendered = json(
        "render -",
        Some(r#"{"agent": "w", "session": "s", "phase": "p", "data": {"password": "x"}}"#),
    );
    let body = rendered["body"].as_str().unwrap().to_string();
    let docs = [
        ("init", json("init", None)),
        ("render", rendered),
        ("parse", json("parse -", Some(&body))),
        ("resume-map", json("resume-map", None)),
    ];
    for phase in ["p1", "p2", "p3"] {
        json(
            &format!("checkpoint --agent tester --session s --phase {phase}"),
            None,
        );
    }
    let more = [
        ("export", json("export --to archive", None)),
        ("prune", json("prune --keep 1", None)),
        ("outbox", json("outbox", None)),
        ("flush", json("flush", None)),
        ("doctor", json("doctor", None)),
        ("import", json("import --from archive", None)),
    ];
    for (verb, doc) in docs.iter().chain(more.iter()) {
        against(&table, verb, doc, &mut wrong);
    }
    assert_eq!(
        more[1].1["delete"].as_array().map(Vec::len),
        Some(2),
        "{}",
        more[1].1
    );
    assert!(
        wrong.is_empty(),
        "answers the schema does not describe:\n{}",
        wrong.join("\n")
    );
}
