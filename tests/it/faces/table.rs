//! The table drives the faces' test: every verb's example request (its spec's `example`) runs,
//! in table order on one fake forge, on the CLI (`--json`), through `call` when the library runs
//! the verb, and over MCP when it is a tool. Every answer is valid under the verb's answer
//! schema, and the faces answer with the same fields. No list of verbs is kept here: a new verb
//! is tested by being in the table.

use std::collections::BTreeSet;

use forgestate::verbs::{self, Face, Runs};
use serde_json::Value;

use crate::common::cli::{Bin, parse_ok, stderr};
use crate::common::examples::{cli_args, example};
use crate::fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO};
use crate::mcp_client::{call as mcp_call, connect, ok};
use crate::schema::walk::violations;

fn keys(doc: &Value) -> BTreeSet<String> {
    doc.as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

/// `doc` without what the clock moves between two calls: `status`'s `now`, and each row's age
/// and the reason that words it.
fn stable(doc: &Value) -> Value {
    match doc {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !["now", "age_secs", "reason"].contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), stable(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(stable).collect()),
        other => other.clone(),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_verbs_example_answers_alike_on_every_face_and_fits_its_schema() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path()).forge(&fake.uri(), OWNER, REPO, BOT_TOKEN);
    let (client, _stderr) = connect(&bin, "").await;
    let mut wrong = Vec::new();
    let (mut ran, mut called, mut tools) = (0, 0, 0);
    let mut pruned = Vec::new();
    for spec in verbs::table() {
        let runs = verbs::runs(spec.name);
        // A stream of events until stopped: its own tests run it.
        if runs == Some(Runs::Streams) {
            continue;
        }
        let name = spec.name;
        let schema = Value::Object((spec.answer)());
        let mut answers: Vec<(&str, Value)> = Vec::new();

        let (mut args, stdin) = cli_args(spec);
        args.push("--json".into());
        let out = match &stdin {
            Some(text) => bin.clone().stdin(text.clone()).run(&args),
            None => bin.run(&args),
        };
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        answers.push(("the CLI", parse_ok(&args, &out)));
        if name == "prune" {
            pruned = answers[0].1["delete"]
                .as_array()
                .cloned()
                .unwrap_or_default();
        }

        if runs == Some(Runs::Library) {
            let args = vec!["call".to_string(), name.to_string()];
            let out = bin.clone().stdin(spec.example).run(&args);
            answers.push(("call", parse_ok(&args, &out)));
            called += 1;
        }
        if spec.on(Face::Mcp) {
            let result = mcp_call(&client, name, Value::Object(example(spec))).await;
            answers.push(("MCP", ok(&result).clone()));
            tools += 1;
        }
        for (face, doc) in &answers {
            for v in violations(&schema, doc, &schema, name) {
                wrong.push(format!("{name} on {face}: {v}"));
            }
            // A read changes nothing, so every face reads the same answer (but for the clock).
            if spec.read_only && stable(doc) != stable(&answers[0].1) {
                wrong.push(format!(
                    "{name}: {face} answers {doc}, the CLI {}",
                    answers[0].1
                ));
            }
            if keys(doc) != keys(&answers[0].1) {
                wrong.push(format!(
                    "{name}: {face} answers {:?}, the CLI {:?}",
                    keys(doc),
                    keys(&answers[0].1)
                ));
            }
        }
        ran += 1;
    }
    client.cancel().await.ok();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let table = verbs::table();
    let count = |f: &dyn Fn(&verbs::Spec) -> bool| table.iter().filter(|s| f(s)).count();
    assert_eq!(ran, count(&|s| verbs::runs(s.name) != Some(Runs::Streams)));
    assert_eq!(
        called,
        count(&|s| verbs::runs(s.name) == Some(Runs::Library))
    );
    assert_eq!(tools, count(&|s| s.on(Face::Mcp)));
    // The examples reach nested answers: a dry run of `prune` that would delete something.
    assert!(!pruned.is_empty(), "prune's example plans no deletion");
}
