//! `parse` answers a record like every read does (issue #42's attack, leftovers): a body whose
//! data holds values under secret keys (`"password"`, `"token"`) that its writer did not redact
//! comes back with those values `[REDACTED]` (docs/redaction.md, "By key"), numbers kept, on the
//! CLI (human and `--json`), through `call` one shot and `call --lines` (the Python package's
//! way in).

use serde_json::{Value, json};

use crate::common::cli::{Bin, stderr, stdout, words};

const BODY: &str = "[CHECKPOINT] w\nVersion: 2.0\nPhase: clone_complete\nSession: s1\n\
Time: 2026-01-02T03:04:05.000000Z\nId: 0192f000-0000-7000-8000-000000000001\n\nState Data:\n\
```json\n{\"password\": \"hunter2-plain\", \"nested\": {\"api_token\": \"plain-tok-1\"}, \
\"max_tokens\": 4096}\n```\n";

fn assert_scrubbed(face: &str, record: &Value) {
    let text = record.to_string();
    assert!(!text.contains("hunter2-plain"), "{face}: {text}");
    assert!(!text.contains("plain-tok-1"), "{face}: {text}");
    assert_eq!(record["data"]["password"], "[REDACTED]", "{face}: {text}");
    assert_eq!(
        record["data"]["nested"]["api_token"], "[REDACTED]",
        "{face}"
    );
    assert_eq!(
        record["data"]["max_tokens"], 4096,
        "{face}: numbers are kept"
    );
    assert_eq!(record["redacted"], 2, "{face}: counted");
}

#[test]
fn parse_redacts_values_under_secret_keys_on_every_face() {
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path());
    for line in ["parse -", "parse - --json"] {
        let out = bin.clone().stdin(BODY).run(&words(line));
        assert_eq!(out.status.code(), Some(0), "{line}: {}", stderr(&out));
        let record: Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_scrubbed(line, &record);
    }
    let request = json!({"body": BODY}).to_string();
    let out = bin
        .clone()
        .stdin(request.clone())
        .run(&words("--store st call parse"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_scrubbed("call parse", &serde_json::from_str(&stdout(&out)).unwrap());
    let line = json!({"verb": "parse", "id": 1, "args": {"body": BODY}}).to_string();
    let out = bin
        .clone()
        .stdin(format!("{line}\n"))
        .run(&words("--store st call --lines"));
    let answer: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_scrubbed("call --lines parse", &answer["answer"]);
}
