//! Every verb's `--json` document has exactly the properties of its answer schema, as
//! `forgestate schema` publishes it: the CLI prints the verb's typed answer, nothing more (no
//! `error` beside a prune's plan) and nothing less (no `invalid` left out of a list).

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use crate::common::cli::{Bin, parse_ok, words};
use crate::fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO};

/// Each verb the CLI runs once, with `--json`, on the fake forge. `watch` is left out: it streams
/// events of several shapes (`watching`, `record`, `outage`), each named by its `event` key,
/// and its tests check them.
const RUNS: &[&str] = &[
    "init",
    "checkpoint --agent w --session s --phase clone_complete --set n=1",
    "health --agent w --session s",
    "resume --agent w --session s",
    "latest --session s",
    "list",
    "list --invalid",
    "fork --session s --new-session s2",
    "status",
    "history --session s",
    "publish",
    "flush",
    "outbox",
    "prune",
    "rotate",
    "export --to archive",
    "import --from archive",
    "doctor",
    "render",
    "parse comment.md",
    "resume-map",
    "schema",
    "end --agent w --session s --reason completed",
];

fn keys(doc: &Value) -> BTreeSet<String> {
    doc.as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

fn bin(fake: &FakeForge, dir: &Path) -> Bin {
    Bin::new(dir).forge(&fake.uri(), OWNER, REPO, BOT_TOKEN)
}

#[tokio::test(flavor = "multi_thread")]
async fn every_verbs_json_is_exactly_its_answer_schema() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let schema = parse_ok(&words("schema"), &bin(&fake, d).line("schema"));
    let verbs = schema["verbs"].as_array().expect("schema lists verbs");
    let record = r#"{"agent": "w", "session": "s", "phase": "clone_complete"}"#;
    let mut ran = BTreeSet::new();
    let mut wrong = Vec::new();
    for line in RUNS {
        let name = line.split(' ').next().unwrap();
        let args = words(&format!("{line} --json"));
        let out = match name {
            "render" => bin(&fake, d).stdin(record).run(&args),
            "parse" => {
                let body = parse_ok(
                    &words("render"),
                    &bin(&fake, d).stdin(record).line("render --json"),
                );
                std::fs::write(d.join("comment.md"), body["body"].as_str().unwrap()).unwrap();
                bin(&fake, d).run(&args)
            }
            _ => bin(&fake, d).run(&args),
        };
        let doc = parse_ok(&args, &out);
        let verb = verbs
            .iter()
            .find(|v| v["name"] == name)
            .unwrap_or_else(|| panic!("{name} is not in `forgestate schema`"));
        // Declared: the root's properties and those of its `oneOf`/`anyOf`/`allOf` branches (a
        // record's payload is a tagged union). Every required key is printed; nothing printed
        // is undeclared.
        let answer = &verb["answer"];
        let mut properties = keys(&answer["properties"]);
        for union in ["oneOf", "anyOf", "allOf"] {
            for branch in answer[union].as_array().into_iter().flatten() {
                properties.extend(keys(&branch["properties"]));
            }
        }
        let required: BTreeSet<String> = answer["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r.as_str().map(String::from))
            .collect();
        let printed = keys(&doc);
        if !printed.is_subset(&properties) || !required.is_subset(&printed) {
            wrong.push(format!(
                "`{line} --json` printed keys {:?}, its answer schema has {properties:?}",
                keys(&doc)
            ));
        }
        ran.insert(name.to_string());
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let table: BTreeSet<String> = verbs
        .iter()
        .filter_map(|v| v["name"].as_str())
        .filter(|n| *n != "watch")
        .map(String::from)
        .collect();
    assert_eq!(ran, table, "every verb of the table but watch ran");
}
