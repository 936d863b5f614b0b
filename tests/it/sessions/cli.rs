//! Sessions through the real binary, on both backends (the local store and the fake forge):
//! `end` with each reason and what `status`/`resume` make of it, write-ahead intents across a
//! process that dies between the intent and its confirmation, compare-and-set refused and
//! accepted (exit 73, nothing posted), two writers continuing from one parent, `--merge`, and the
//! `Parent:` chain successive processes write.

use crate::common;
use std::process::Output;

use crate::common::world::World;
use common::cli::stderr;
use serde_json::{Value, json};

async fn both() -> [World; 2] {
    let worlds = World::both().await;
    for w in &worlds {
        w.ok("init");
    }
    worlds
}

fn code(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

fn row<'a>(status: &'a Value, session: &str) -> &'a Value {
    status["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["session"] == session)
        .unwrap_or_else(|| panic!("no row for {session}: {status}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn each_end_reason_gives_its_verdict_and_resume_says_ended() {
    for w in both().await {
        for reason in ["completed", "interrupted", "error", "user_stop"] {
            let s = format!("s-{reason}");
            w.ok(&format!(
                "checkpoint --agent w --session {s} --phase clone_complete --set n=1"
            ));
            let end = w.ok_args(&[
                "end",
                "--agent",
                "w",
                "--session",
                &s,
                "--reason",
                reason,
                "--note",
                "said [CHECKPOINT] once",
            ]);
            assert_eq!(end["posted"], true);
            assert_eq!(end["record"]["kind"], "end");
            assert_eq!(end["record"]["reason"], reason);
            let resumed = w.ok(&format!("resume --agent w --session {s}"));
            assert_eq!(resumed["ended"]["reason"], reason);
            assert_eq!(resumed["ended"]["note"], "said [CHECKPOINT] once");
            assert!(resumed["ended"]["at"].is_string());
            assert_eq!(
                resumed["data"],
                json!({"n": 1}),
                "the last checkpoint's data"
            );
            assert_eq!(resumed["phase"], "clone_complete");
        }
        w.age_all(3 * 3600);
        let status = w.ok("status");
        for reason in ["completed", "interrupted", "error", "user_stop"] {
            let r = row(&status, &format!("s-{reason}"));
            let verdict = if reason == "completed" {
                "completed"
            } else {
                "ended"
            };
            assert_eq!(r["verdict"], verdict, "never stalled: {r}");
            assert_eq!(r["ended"]["reason"], reason);
        }
        // A checkpoint after the end reopens the session, and status says so.
        w.ok("checkpoint --agent w --session s-error --phase clone_complete --set n=2");
        let status = w.ok("status");
        let r = row(&status, "s-error");
        assert_eq!(r["verdict"], "alive");
        assert_eq!(r["reopened"], true);
        assert!(r["reason"].as_str().unwrap().contains("reopened"), "{r}");
        let resumed = w.ok("resume --agent w --session s-error");
        assert_eq!(resumed["ended"], Value::Null);
        assert_eq!(resumed["reopened"]["reason"], "error");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bad_reason_is_a_usage_error_naming_the_reasons() {
    for w in both().await {
        let before = w.records();
        let out = w.run("end --agent w --session s --reason done");
        assert_eq!(code(&out), 64, "{}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains("completed, interrupted, error, user_stop"),
            "{err}"
        );
        assert_eq!(w.records(), before, "nothing posted");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_intent_survives_a_kill_until_a_later_checkpoint_confirms_it() {
    for w in both().await {
        w.ok(
            "checkpoint --agent w --session s --phase implementation_complete --set branch=fix-42",
        );
        // The process records the intent, then dies before it can confirm it.
        let intent = w.ok_args(&[
            "checkpoint",
            "--agent",
            "w",
            "--session",
            "s",
            "--phase",
            "implementation_complete",
            "--merge",
            "--intent",
            "create_pr",
            "--intent-data",
            r#"{"branch": "fix-42"}"#,
        ]);
        // A new process resumes: the intent is pending, with its data, id and time.
        let resumed = w.ok("resume --agent w --session s");
        let pending = &resumed["pending_intent"];
        assert_eq!(pending["name"], "create_pr");
        assert_eq!(pending["data"], json!({"branch": "fix-42"}));
        assert_eq!(pending["id"], intent["id"]);
        assert_eq!(pending["at"], intent["record"]["time"]);
        assert_eq!(
            resumed["data"],
            json!({"branch": "fix-42"}),
            "merge kept the key"
        );
        // A health signal does not confirm it; a checkpoint does.
        w.ok("health --agent w --session s");
        assert_eq!(
            w.ok("resume --agent w --session s")["pending_intent"]["name"],
            "create_pr"
        );
        w.ok("checkpoint --agent w --session s --phase pr_created --merge --set pr_number=7");
        let resumed = w.ok("resume --agent w --session s");
        assert_eq!(resumed["pending_intent"], Value::Null);
        assert_eq!(resumed["data"], json!({"branch": "fix-42", "pr_number": 7}));
        // `--done` confirms an intent in the same checkpoint that names it.
        w.ok("checkpoint --agent w --session s2 --phase p --intent push --done push");
        assert_eq!(
            w.ok("resume --agent w --session s2")["pending_intent"],
            Value::Null
        );
        // Intent data without an intent is refused by clap (exit 2), posting nothing.
        let out = w.run("checkpoint --agent w --session s --phase p --intent-data {}");
        assert_ne!(code(&out), 0);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn compare_and_set_is_refused_with_exit_73_and_accepted_when_latest() {
    for w in both().await {
        let first = w.ok("checkpoint --agent w --session s --phase a");
        let first_id = first["id"].as_str().unwrap().to_string();
        let second = w.ok(&format!(
            "checkpoint --agent w --session s --phase b --if-latest {first_id}"
        ));
        assert_eq!(
            second["posted"], true,
            "accepted: {first_id} was the newest"
        );
        assert_eq!(second["record"]["parent"], first_id.as_str());
        let second_id = second["id"].as_str().unwrap();
        let before = w.records();
        let out = w.run(&format!(
            "checkpoint --agent w --session s --phase c --if-latest {first_id} --json"
        ));
        assert_eq!(code(&out), 73, "{}", stderr(&out));
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let message = doc["error"]["message"].as_str().unwrap();
        assert_eq!(doc["error"]["category"], "conflict");
        assert!(
            message.contains(second_id),
            "names the newer record: {message}"
        );
        assert!(
            message.contains(second["record"]["time"].as_str().unwrap()),
            "and its time: {message}"
        );
        assert_eq!(w.records(), before, "nothing posted");
        // An empty id is a usage error, not a conflict.
        for flag in ["--if-latest=", "--parent="] {
            let out = w.run(&format!(
                "checkpoint --agent w --session s --phase c {flag}"
            ));
            assert_eq!(code(&out), 64, "{flag}: {}", stderr(&out));
        }
        assert_eq!(w.records(), before, "nothing posted");
        // The id resume reports as latest is what --if-latest takes.
        let latest = w.ok("resume --agent w --session s")["latest_id"].clone();
        assert_eq!(latest, second_id);
        w.ok(&format!(
            "checkpoint --agent w --session s --phase c --if-latest {second_id}"
        ));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn two_writers_from_one_parent_are_named_by_resume_history_and_status() {
    for w in both().await {
        let root = w.ok("checkpoint --agent w --session s --phase a");
        let root_id = root["id"].as_str().unwrap().to_string();
        // A process names the record it continues from; one that names none writes no parent.
        let next = w.ok(&format!(
            "checkpoint --agent w --session s --phase b --parent {root_id}"
        ));
        assert_eq!(next["record"]["parent"], root_id.as_str());
        let orphan = w.ok("health --agent w --session other");
        assert_eq!(orphan["record"]["parent"], Value::Null);
        let next_id = next["id"].as_str().unwrap().to_string();
        // Two writers both resumed at `next` and both write from it.
        let one = w.ok(&format!(
            "checkpoint --agent w --session s --phase c1 --parent {next_id}"
        ));
        let two = w.ok(&format!(
            "checkpoint --agent w --session s --phase c2 --parent {next_id}"
        ));
        let (one, two) = (one["id"].as_str().unwrap(), two["id"].as_str().unwrap());
        let resumed = w.ok("resume --agent w --session s");
        let warning = resumed["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .find(|m| m.contains("two writers"))
            .unwrap_or_else(|| panic!("resume warns: {resumed}"))
            .to_string();
        assert!(warning.contains(one) && warning.contains(two), "{warning}");
        assert_eq!(resumed["conflicts"][0]["parent"], next_id.as_str());
        let history = w.run("history --session s --json");
        assert!(history.status.success());
        assert!(stderr(&history).contains(one) && stderr(&history).contains(two));
        let history: Value = serde_json::from_slice(&history.stdout).unwrap();
        assert_eq!(history["conflicts"][0]["agent"], "w");
        assert_eq!(row(&w.ok("status"), "s")["verdict"], "conflicted");
    }
}

/// Issue #42 low 12: `--if-latest` that is no record id is a usage error (64), as `--parent` and
/// `--id` are, not a conflict (73, "someone continued the session first").
#[tokio::test(flavor = "multi_thread")]
async fn an_if_latest_that_is_not_a_record_id_is_refused_with_exit_64() {
    for w in both().await {
        let name = w.name();
        w.ok("checkpoint --agent w --session s --phase a");
        let before = w.records();
        for bad in ["not-a-uuid", "HEAD", "01b2c3d4"] {
            let out = w.run(&format!(
                "checkpoint --agent w --session s --phase b --if-latest {bad}"
            ));
            assert_eq!(code(&out), 64, "{name}: {bad}: {}", stderr(&out));
            let said = stderr(&out);
            assert!(said.contains("--if-latest is not a record id"), "{said}");
            assert!(!said.contains(bad), "the text is not echoed: {said}");
        }
        assert_eq!(w.records(), before, "{name}: nothing posted");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_parent_that_is_not_a_record_id_is_refused_with_exit_64() {
    for w in both().await {
        let name = w.name();
        let root = w.ok("checkpoint --agent w --session s --phase a");
        let before = w.records();
        for bad in [
            "HEAD",
            "latest",
            "01a232d2",
            "01a232d26f5a743eb1a3fe4349829487",
        ] {
            let out = w.run(&format!(
                "checkpoint --agent w --session s --phase b --parent {bad}"
            ));
            assert_eq!(code(&out), 64, "{name}: {bad}: {}", stderr(&out));
            assert!(stderr(&out).contains("not a record id"), "{}", stderr(&out));
        }
        assert_eq!(w.records(), before, "{name}: nothing posted");
        let id = root["id"].as_str().unwrap();
        let next = w.ok(&format!(
            "checkpoint --agent w --session s --phase b --parent {id}"
        ));
        assert_eq!(next["record"]["parent"], id, "{name}");
    }
}
