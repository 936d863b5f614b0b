//! Helpers shared by the integration tests: proptest strategies for records, walking a
//! directory, finding the reference material in `../shared`, and `cli` for running the binary.

pub mod cli;
pub mod examples;
pub mod world;

use std::path::{Path, PathBuf};

use chrono::DateTime;
use forgestate::format::{Payload, Record, check_field, check_name, new_record_id};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// A header value that passes write validation: printable text plus the ASCII punctuation that
/// matters to the layout (colons, brackets, spaces).
pub fn field() -> impl Strategy<Value = String> {
    prop_oneof!["[a-zA-Z0-9_:\\[\\]#>*. /-]{1,40}", "\\PC{1,30}",]
        .prop_map(|s| s.trim().replace("```", "``"))
        .prop_filter("valid header value", |s| check_field("x", s).is_ok())
}

/// An agent or session name that passes write validation: [`field`] without glob metacharacters.
pub fn name() -> impl Strategy<Value = String> {
    field()
        .prop_map(|s| s.replace(forgestate::format::GLOB_CHARS, "_"))
        .prop_filter("valid name", |s| check_name("x", s).is_ok())
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        ".{0,20}".prop_map(Value::String),
        "\\PC{0,10}\n```\n\\PC{0,5}".prop_map(Value::String),
    ]
}

pub fn json_value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(".{0,12}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

pub fn json_object() -> impl Strategy<Value = Value> {
    prop::collection::btree_map(".{0,12}", json_value(), 0..8)
        .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>()))
}

/// Any valid version-2.0 record, checkpoint, health or takeover, with or without a writer.
pub fn record() -> impl Strategy<Value = Record> {
    let time = (0i64..253_402_300_799_999_999)
        .prop_map(|us| DateTime::from_timestamp_micros(us).unwrap_or_default());
    let lineage = (
        proptest::option::of(any::<u64>()),
        proptest::option::of(field()),
        proptest::option::of(1u64..1000),
        (
            proptest::option::of(field()),
            proptest::collection::vec(field(), 0..3),
            proptest::option::of(field()),
            proptest::option::of(field()),
        ),
    );
    let payload = prop_oneof![
        (field(), json_object()).prop_map(|(phase, data)| Payload::Checkpoint { phase, data }),
        (field(), json_object(), proptest::option::of(field())).prop_map(
            |(status, metrics, next_check)| Payload::Health {
                status,
                metrics,
                next_check
            }
        ),
        (proptest::option::of(field()), proptest::option::of(field()))
            .prop_map(|(from, by)| Payload::Takeover { from, by }),
    ];
    (name(), name(), time, lineage, payload).prop_map(
        |(agent, session, time, (seq, parent, redacted, handoff), payload)| Record {
            version: "2.0".into(),
            id: Some(new_record_id()),
            seq,
            parent,
            // A takeover always names its writer (the new owner).
            writer: match (&payload, handoff.3) {
                (Payload::Takeover { .. }, None) => Some("w-owner".into()),
                (_, writer) => writer,
            },
            redacted,
            // Handoff lines belong to checkpoints and health signals.
            next: handoff
                .0
                .filter(|_| !matches!(payload, Payload::Takeover { .. })),
            blockers: match payload {
                Payload::Takeover { .. } => Vec::new(),
                _ => handoff.1,
            },
            context_hash: handoff
                .2
                .filter(|_| !matches!(payload, Payload::Takeover { .. })),
            carried_from: None,
            intent: None,
            done: None,
            posted_at: None,
            edited_at: None,
            agent,
            session,
            time,
            payload,
        },
    )
}

/// Deterministic samples from a strategy, for tests that batch work outside `proptest!`.
pub fn samples<S: Strategy>(strategy: S, n: usize) -> Vec<S::Value> {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    (0..n)
        .map(|_| {
            strategy
                .new_tree(&mut runner)
                .expect("strategy generates")
                .current()
        })
        .collect()
}

/// JSON equality as Python's `json` sees it: integers compare by their exact digits, other
/// numbers by their double value (Python writes `1e-07` where Rust writes `1e-7`), everything
/// else structurally.
pub fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let integer = |n: &serde_json::Number| !n.to_string().contains(['.', 'e', 'E']);
            match (integer(x), integer(y)) {
                (true, true) => x.to_string() == y.to_string(),
                _ => x.as_f64().is_some() && x.as_f64() == y.as_f64(),
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_json(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

/// Every path under `dir` (files and directories, not `dir` itself), sorted; nothing when `dir`
/// does not exist.
pub fn paths_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries {
            let path = entry
                .unwrap_or_else(|e| panic!("read {}: {e}", d.display()))
                .path();
            if path.is_dir() {
                stack.push(path.clone());
            }
            out.push(path);
        }
    }
    out.sort();
    out
}

/// Every file under `dir`, at any depth, sorted; nothing when `dir` does not exist.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    paths_under(dir)
        .into_iter()
        .filter(|p| !p.is_dir())
        .collect()
}

/// Where `rel` inside the reference material should be: `shared/` beside the checkout or beside
/// one of its ancestors (a worktree sits deeper than the main checkout). `Err` is the one-line
/// message for a missing path: what it is, and every place that was tried.
pub fn find_shared(rel: &str, what: &str) -> Result<PathBuf, String> {
    find_shared_from(Path::new(env!("CARGO_MANIFEST_DIR")), rel, what)
}

/// [`find_shared`] from a checkout at `manifest`.
pub fn find_shared_from(manifest: &Path, rel: &str, what: &str) -> Result<PathBuf, String> {
    let tried: Vec<PathBuf> = manifest
        .ancestors()
        .skip(1)
        .map(|dir| dir.join("shared").join(rel))
        .collect();
    if let Some(found) = tried.iter().find(|p| p.exists()) {
        return Ok(found.clone());
    }
    let tried: Vec<String> = tried.iter().map(|p| p.display().to_string()).collect();
    Err(format!(
        "../shared/{rel} is missing ({what}): the reference material must sit beside the \
         checkout; see ../shared/README.md (tried {})",
        tried.join(", ")
    ))
}

/// A file the project owns under `tests/fixtures/`.
pub fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

/// The text of a file, or a test failure naming the path and the reason.
pub fn read_text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// The comment bodies in a local store directory, in thread order (none when it has no thread
/// file yet).
pub fn stored_bodies(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join(forgestate::store::THREAD_FILE))
        .unwrap_or_default()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["body"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

/// A GitHub-shaped token the redactor must catch wherever it appears.
pub const GHP: &str = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";

/// One line of a local store's `thread.jsonl`, as `author` `local` wrote it.
pub fn seed_line(id: u64, body: &str) -> String {
    json!({"id": id, "author": "local", "created_at": "2026-12-01T19:00:00Z",
           "updated_at": "2026-12-01T19:00:00Z", "body": body})
    .to_string()
}

/// A checkpoint body by agent `w`, with `Id:` and an optional `Parent:`, as another client
/// writes it.
pub fn checkpoint_body(session: &str, phase: &str, id: &str, parent: Option<&str>) -> String {
    let parent = parent.map(|p| format!("Parent: {p}\n")).unwrap_or_default();
    format!(
        "[CHECKPOINT] w\nVersion: 2.0\nPhase: {phase}\nSession: {session}\n\
         Time: 2026-12-01T19:00:00.000000Z\nId: {id}\n{parent}\nState Data:\n```json\n{{}}\n```\n\n\
         ---\n\nAutomated by CleverAgents Bot Agent: w"
    )
}

/// A named pipe at `path` (with no writer, opening it for reading blocks).
#[cfg(unix)]
pub fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}
