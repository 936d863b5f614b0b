//! The newest comment of a session thread is unreadable (a field of an unexpected type, its id
//! among them): a cold or warm `resume` or `latest` answers the record before it and says the
//! answer may be stale, through the real binary's `--json`; `list` and `status` say it too. An
//! unreadable comment posted before the answer, or a human comment that is no record, is no
//! warning.

use crate::{common, fake_forge};
use std::path::Path;
use std::process::Output;

use common::cli::{Bin, stderr, stdout};
use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO, session};
use forgestate::format::Record;
use serde_json::{Value, json};

/// A checkpoint body of `w` in `s`, as the bot would post it.
fn body(phase: &str) -> String {
    let record = Record::checkpoint("w", "s", phase, json!({"phase": phase})).unwrap();
    forgestate::format::Renderer::embedded()
        .unwrap()
        .render(&record)
        .unwrap()
}

fn run(fake: &FakeForge, dir: &Path, line: &str) -> Value {
    let out: Output = Bin::new(dir)
        .forge(&fake.uri(), OWNER, REPO, BOT_TOKEN)
        .line(line);
    assert!(out.status.success(), "{line}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", stdout(&out), stderr(&out)))
}

/// The warnings of an answer that say a comment could not be read.
fn unread(doc: &Value) -> Vec<String> {
    doc["warnings"]
        .as_array()
        .unwrap_or_else(|| panic!("no warnings array: {doc}"))
        .iter()
        .filter_map(Value::as_str)
        .filter(|w| w.contains("could not be read"))
        .map(str::to_string)
        .collect()
}

/// p1..p4, then p5 with `overlay` laid over its comment.
async fn thread_with_odd_newest(overlay: Value) -> (FakeForge, u64) {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    for phase in ["p1", "p2", "p3", "p4"] {
        fake.add_comment(n, "ca-bot", &body(phase));
    }
    fake.add_odd_comment(n, "ca-bot", &body("p5"), overlay);
    (fake, n)
}

/// Every read verb that answers one record, cold then warm, answers p4 and warns.
fn answers_p4_and_warns(fake: &FakeForge, what: &str) {
    let resume = "resume --agent w --session s --json";
    let latest = "latest --agent w --session s --json";
    let any = "latest --json";
    for first in [resume, latest, any] {
        let dir = tempfile::tempdir().unwrap();
        // Cold (nothing cached), then warm (through the read cache), then the other verbs warm.
        for (i, line) in [first, first, resume, latest, any].into_iter().enumerate() {
            let doc = run(fake, dir.path(), line);
            let phase = if line == resume {
                &doc["phase"]
            } else {
                &doc["record"]["phase"]
            };
            assert_eq!(phase, "p4", "{what}: {line}: {doc}");
            let warned = unread(&doc);
            assert_eq!(warned.len(), 1, "{what}: {first} then #{i} {line}: {doc}");
            assert!(warned[0].contains("list --invalid"), "{warned:?}");
        }
        // The verbs that answer many records say it too, the records listed as they are.
        for line in ["list --json", "status --json"] {
            let doc = run(fake, dir.path(), line);
            assert_eq!(unread(&doc).len(), 1, "{what}: {line}: {doc}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unreadable_newest_comment_is_warned_of_cold_and_warm() {
    for (what, overlay) in [
        ("id of the wrong type", json!({"id": "seven"})),
        (
            "id and time unreadable",
            json!({"id": "seven", "created_at": 5}),
        ),
        ("body of the wrong type", json!({"body": 7})),
        ("user of the wrong type", json!({"user": {"id": "7"}})),
    ] {
        let (fake, _) = thread_with_odd_newest(overlay).await;
        let dir = tempfile::tempdir().unwrap();
        let listed = run(&fake, dir.path(), "list --invalid --json");
        let invalid = listed["invalid"].as_array().unwrap();
        assert_eq!(invalid.len(), 1, "{what}: {listed}");
        assert_eq!(invalid[0]["code"], "unreadable", "{listed}");
        answers_p4_and_warns(&fake, what);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unreadable_comment_older_than_the_answer_or_a_human_comment_is_no_warning() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    fake.add_comment(n, "ca-bot", &body("p1"));
    // Its id does not read, its time does: posted long before the answer.
    fake.add_odd_comment(
        n,
        "ca-bot",
        &body("old"),
        json!({"id": "three", "created_at": "2020-01-01T00:00:00Z"}),
    );
    fake.add_comment(n, "ca-bot", &body("p2"));
    // A human's note, newest of all: no record, so no answer it could have been.
    fake.add_comment(n, "ca-bot", "Looks good to me.");
    let dir = tempfile::tempdir().unwrap();
    for line in [
        "resume --agent w --session s --json",
        "latest --agent w --session s --json",
        "resume --agent w --session s --json",
        "list --json",
        "status --json",
    ] {
        let doc = run(&fake, dir.path(), line);
        assert_eq!(unread(&doc), Vec::<String>::new(), "{line}: {doc}");
        if line.starts_with("list") || line.starts_with("status") {
            continue;
        }
        let phase = doc["phase"].as_str().or(doc["record"]["phase"].as_str());
        assert_eq!(phase, Some("p2"), "{line}: {doc}");
    }
    let listed = run(&fake, dir.path(), "list --invalid --json");
    let codes: Vec<&Value> = (listed["invalid"].as_array().unwrap().iter())
        .map(|r| &r["code"])
        .collect();
    assert!(codes.contains(&&json!("unreadable")), "{listed}");
}
