//! The generated files: the schema snapshot, `python/forgestate/_verbs.py` and the reference
//! blocks of docs/cli.md, docs/mcp.md and docs/python.md, each made from `forgestate schema`'s
//! document alone. `UPDATE_SNAPSHOTS=1 cargo test --locked` rewrites them; without it
//! `the_generated_files_are_fresh` fails, naming that command, when any one is stale.

mod docs;
mod model;
mod python;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use forgestate::verbs::{ALL, SchemaAnswer, VerbDoc, answer_schema, request_schema};

use docs::BLOCKS;
use model::Model;

/// The command that rewrites every generated file.
const REGENERATE: &str = "UPDATE_SNAPSHOTS=1 cargo test --locked";

/// The table's answer as `forgestate schema` prints it, with a verb added at its end when
/// `with_test_verb` (`example`, as a contributor would add it: one request field required, one
/// optional).
fn table(with_test_verb: bool) -> SchemaAnswer {
    let mut table = SchemaAnswer::new();
    if with_test_verb {
        table.verbs.push(example());
    }
    table
}

/// `example`: what to say back.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)] // read by its schema only
struct ExampleRequest {
    /// The words to say back.
    words: String,
    /// How many times.
    #[serde(default)]
    times: Option<u32>,
}

/// What `example` answers.
#[derive(Serialize, JsonSchema)]
struct ExampleAnswer {
    /// The words, `times` times.
    said: String,
}

/// The `example` verb as `forgestate schema` would list it.
fn example() -> VerbDoc {
    let request = request_schema::<ExampleRequest>();
    let flags = ["times", "words"].map(|f| (f.to_string(), format!("--{f}")));
    VerbDoc {
        name: "example",
        title: "Say it back",
        description: "Says the words back, for the table's own tests.",
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
        faces: ALL,
        runs: "library",
        flags: BTreeMap::from(flags),
        positional: vec!["words".to_string()],
        request,
        answer: answer_schema::<ExampleAnswer>(),
    }
}

/// Each generated file's path (from the repository's root) and its text, for `table`, given
/// what each doc holds now (`read`).
fn generate(table: &SchemaAnswer, read: impl Fn(&str) -> String) -> Vec<(String, String)> {
    let schema = serde_json::to_value(table).expect("serializes");
    let schema = &schema;
    let mut model = Model::new(schema);
    // The snapshot is `forgestate schema`'s output as the binary prints it (`schema::snapshot`
    // in tests/it compares the binary itself with it).
    let snapshot = serde_json::to_string_pretty(table).expect("serializes") + "\n";
    let mut files = vec![("tests/it/snapshots/schema.json".to_string(), snapshot)];
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
    let files = generate(&table(false), |p| read(&root().join(p)));
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
         rewrite them, review the change and commit it",
        stale.join(", ")
    );
}

#[test]
fn a_verb_added_to_the_table_reaches_python_and_the_docs() {
    let files = generate(&table(true), |p| read(&root().join(p)));
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
    let plain = generate(&table(false), |p| read(&root().join(p)));
    assert!(plain.iter().all(|(_, t)| !t.contains("xample(")));
    // And Python itself finds it: the package with this `_verbs.py`, imported by python3.
    let out = run_in_package(&verbs, EXAMPLE_FROM_PYTHON);
    assert_eq!(
        out.trim(),
        "example: Client, AsyncClient, ExampleAnswer",
        "{out}"
    );
}

/// Run by python3 against the package holding the `_verbs.py` generated with the test verb:
/// `Client.example` and `AsyncClient.example` send its request and answer its dataclass.
const EXAMPLE_FROM_PYTHON: &str = r#"
import asyncio, dataclasses, inspect, typing
from forgestate import AsyncClient, Client, ExampleAnswer

assert [f.name for f in dataclasses.fields(ExampleAnswer) if f.name != "raw"] == ["said"]
sent = []

class Stub(Client):
    def _call(self, verb, args):
        sent.append((verb, args))
        return {"said": "hi hi"}

class AsyncStub(AsyncClient):
    async def _call(self, verb, args):
        sent.append((verb, args))
        return {"said": "hi hi"}

for cls in (Client, AsyncClient):
    method = cls.example
    assert inspect.iscoroutinefunction(method) == (cls is AsyncClient), cls
    assert list(inspect.signature(method).parameters) == ["self", "words", "times"], cls
    assert typing.get_type_hints(method)["return"] is ExampleAnswer, cls
assert Stub().example("hi", times=2) == ExampleAnswer(said="hi hi")
assert asyncio.run(AsyncStub().example("hi", times=2)) == ExampleAnswer(said="hi hi")
assert sent == [("example", {"words": "hi", "times": 2})] * 2, sent
print("example: Client, AsyncClient, ExampleAnswer")
"#;

/// What python3 prints running `script` with the package `python/forgestate/`, its `_verbs.py`
/// replaced by `verbs`, first on its path (the LangGraph saver, which needs LangGraph, left out).
fn run_in_package(verbs: &str, script: &str) -> String {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let package = dir.path().join("forgestate");
    std::fs::create_dir(&package).expect("creates the package directory");
    let source = root().join("python/forgestate");
    for entry in std::fs::read_dir(&source).expect("python/forgestate is there") {
        let path = entry.expect("lists python/forgestate").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if name.ends_with(".py") && name != "_verbs.py" && name != "langgraph.py" {
            std::fs::copy(&path, package.join(name)).expect("copies a module");
        }
    }
    std::fs::write(package.join("_verbs.py"), verbs).expect("writes _verbs.py");
    let out = std::process::Command::new("python3")
        .args(["-c", script])
        .env("PYTHONPATH", dir.path())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("python3 is on every machine (the seed parser's tests run it too)");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "python3 failed: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}
