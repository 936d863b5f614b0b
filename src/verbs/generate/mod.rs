//! The generated files: `python/forgestate/_verbs.py` and the reference blocks of docs/cli.md,
//! docs/mcp.md and docs/python.md, each made from `forgestate schema`'s document alone.
//! `UPDATE_SNAPSHOTS=1 cargo test --locked` rewrites them (with the schema snapshot); without it
//! a test fails, naming that command, when one is stale.

mod docs;
mod model;
mod python;

use std::path::{Path, PathBuf};

use serde_json::Value;

use docs::BLOCKS;
use model::Model;

/// The command that rewrites every generated file.
const REGENERATE: &str = "UPDATE_SNAPSHOTS=1 cargo test --locked";

/// `forgestate schema`'s document: the table's answer as the binary prints it (the verbs only
/// tests have left out, unless `with_test_verbs`).
fn schema(with_test_verbs: bool) -> Value {
    let mut doc = serde_json::to_value(super::SchemaAnswer::new()).expect("serializes");
    if !with_test_verbs && let Some(Value::Array(verbs)) = doc.get_mut("verbs") {
        verbs.retain(|v| v["name"] != "example");
    }
    doc
}

/// Each generated file's path (from the repository's root) and its text, for `schema`, given
/// what each doc holds now (`read`).
fn generate(schema: &Value, read: impl Fn(&str) -> String) -> Vec<(String, String)> {
    let mut model = Model::new(schema);
    let mut files = Vec::new();
    let verbs = python::render(&mut model);
    files.push(("python/forgestate/_verbs.py".to_string(), verbs));
    for block in &BLOCKS {
        let doc = read(block.path);
        let content = block.content(schema, &model);
        files.push((block.path.to_string(), block.splice(&doc, &content)));
    }
    files
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

#[test]
fn the_generated_files_are_fresh() {
    let files = generate(&schema(false), |p| read(&root().join(p)));
    let update = std::env::var_os("UPDATE_SNAPSHOTS").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    for (path, text) in files {
        let at = root().join(&path);
        if read(&at) == text {
            continue;
        }
        match update {
            true => std::fs::write(&at, text).expect("writes the generated file"),
            false => stale.push(path),
        }
    }
    assert!(
        stale.is_empty(),
        "generated from `forgestate schema`, these files are stale: {}. Run `{REGENERATE}` to \
         rewrite them (and the schema snapshot), review the change and commit it",
        stale.join(", ")
    );
}

#[test]
fn a_verb_added_to_the_table_reaches_python_and_the_docs() {
    let files = generate(&schema(true), |p| read(&root().join(p)));
    let text = |name: &str| {
        files
            .iter()
            .find(|(p, _)| p == name)
            .map(|(_, t)| t.clone())
            .expect("generated")
    };
    let verbs = text("python/forgestate/_verbs.py");
    let (sync, asynchronous) = verbs.split_once("class AsyncVerbs").expect("both clients");
    let method = "def example(\n        self,\n        words: str,\n        *,\n        times: Optional[int] = None,\n    ) -> ExampleAnswer:";
    assert!(sync.contains(&format!("    {method}")), "{sync}");
    assert!(
        asynchronous.contains(&format!("    async {method}")),
        "{asynchronous}"
    );
    assert!(verbs.contains("class ExampleAnswer:"), "{verbs}");
    assert!(verbs.contains("    said: str = \"\""), "{verbs}");
    assert!(
        verbs.contains("- ``words``: The words to say back."),
        "{verbs}"
    );
    let cli = text("docs/cli.md");
    assert!(cli.contains("#### `forgestate example`"), "cli.md");
    assert!(cli.contains("| `--words` (required) | text |  | The words to say back. |"));
    assert!(text("docs/mcp.md").contains(
        "| `example` | `times`, `words`* | `said` | read-only, idempotent | Say it back |"
    ));
    assert!(text("docs/python.md").contains("- `example(words, *, times=None)` → `ExampleAnswer`"));
    // Without the test verb, none of it.
    let plain = generate(&schema(false), |p| read(&root().join(p)));
    assert!(plain.iter().all(|(_, t)| !t.contains("xample(")));
}
