//! End-to-end: the real `forgestate` binary on the local store.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

/// Runs the binary in `cwd` with a clean environment, optionally feeding stdin.
fn run_in(cwd: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_forgestate"))
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .env("HOME", cwd)
        .env("USER", "tester")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).unwrap();
    }
    drop(input);
    child.wait_with_output().unwrap()
}

fn ok_json(cwd: &Path, args: &[&str]) -> Value {
    let out = run_in(cwd, args, None);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: stdout is not one JSON document ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn checkpoint_then_resume_round_trips_with_globs_on_the_default_local_store() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "checkpoint",
            "--agent",
            "implementation-worker",
            "--session",
            "s1",
            "--phase",
            "subtask_3_complete",
            "--data",
            r#"{"branch_name": "feat/x", "completed_subtasks": [1, 2, 3]}"#,
            "--set",
            "issue_number=42",
            "--set",
            "working_dir=/tmp/w",
        ],
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(
        err.lines()
            .filter(|l| l.contains("using the local store in ./.forgestate"))
            .count(),
        1,
        "one stderr line says the default store was chosen: {err}"
    );
    assert!(dir.path().join(".forgestate/thread.jsonl").is_file());
    assert!(String::from_utf8_lossy(&out.stdout).contains("saved as comment 1"));

    let resume = ok_json(
        dir.path(),
        &[
            "resume",
            "--agent",
            "implementation-worker",
            "--session",
            "s1",
            "--json",
        ],
    );
    assert_eq!(
        resume["resume_point"], "phase_2_continue",
        "the glob maps subtask 3"
    );
    assert_eq!(resume["phase"], "subtask_3_complete");
    assert_eq!(
        resume["data"],
        json!({"branch_name": "feat/x", "completed_subtasks": [1, 2, 3], "issue_number": 42, "working_dir": "/tmp/w"})
    );
    assert_eq!(resume["checkpoint"]["comment"]["id"], 1);
    assert_eq!(resume["checkpoint"]["comment"]["author"], "tester");
}

#[test]
fn fresh_start_and_unknown_phase() {
    let dir = tempfile::tempdir().unwrap();
    let fresh = ok_json(
        dir.path(),
        &[
            "resume",
            "--agent",
            "implementation-worker",
            "--session",
            "none",
            "--json",
        ],
    );
    assert_eq!(
        fresh,
        json!({"resume_point": "start", "phase": "fresh_start", "data": {}, "checkpoint": null})
    );
    ok_json(
        dir.path(),
        &[
            "checkpoint",
            "--agent",
            "implementation-worker",
            "--session",
            "s",
            "--phase",
            "dreaming",
            "--json",
        ],
    );
    let r = ok_json(
        dir.path(),
        &[
            "resume",
            "--agent",
            "implementation-worker",
            "--session",
            "s",
            "--json",
        ],
    );
    assert_eq!(r["resume_point"], "start");
    assert_eq!(r["phase"], "dreaming");
    ok_json(
        dir.path(),
        &[
            "checkpoint",
            "--agent",
            "implementation-worker",
            "--session",
            "s",
            "--phase",
            "pr_created",
            "--json",
        ],
    );
    let r = ok_json(
        dir.path(),
        &[
            "resume",
            "--agent",
            "implementation-worker",
            "--session",
            "s",
            "--json",
        ],
    );
    assert_eq!(r["resume_point"], "phase_4_monitoring");
}

#[test]
fn latest_follows_thread_order_and_filters() {
    let dir = tempfile::tempdir().unwrap();
    let store = ["--store", "st"];
    let post = |agent: &str, session: &str, phase: &str| {
        let args = [
            &[
                "checkpoint",
                "--agent",
                agent,
                "--session",
                session,
                "--phase",
                phase,
                "--json",
            ][..],
            &store,
        ]
        .concat();
        ok_json(dir.path(), &args)
    };
    post("a", "s1", "one");
    post("b", "s1", "two");
    post("a", "s2", "three");
    let health = [
        &[
            "health",
            "--agent",
            "a",
            "--session",
            "s1",
            "--json",
            "--metrics",
            "{\"q\": 1}",
        ][..],
        &store,
    ]
    .concat();
    ok_json(dir.path(), &health);

    let latest = |extra: &[&str]| {
        ok_json(
            dir.path(),
            &[&["latest", "--json"][..], &store, extra].concat(),
        )
    };
    assert_eq!(latest(&[])["kind"], "health");
    assert_eq!(latest(&["--kind", "checkpoint"])["phase"], "three");
    assert_eq!(
        latest(&["--session", "s1", "--kind", "checkpoint"])["phase"],
        "two"
    );
    assert_eq!(
        latest(&["--agent", "a", "--session", "s1", "--kind", "checkpoint"])["phase"],
        "one"
    );
    assert_eq!(
        latest(&["--agent", "nobody"]),
        Value::Null,
        "none found is JSON null, exit 0"
    );

    let list = ok_json(dir.path(), &[&["list", "--json"][..], &store].concat());
    let phases: Vec<&str> = list["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["phase"].as_str())
        .collect();
    assert_eq!(phases, ["one", "two", "three"], "oldest first");
    let limited = ok_json(
        dir.path(),
        &[
            &["list", "--json", "--kind", "checkpoint", "--limit", "2"][..],
            &store,
        ]
        .concat(),
    );
    let phases: Vec<&str> = limited["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["phase"].as_str())
        .collect();
    assert_eq!(phases, ["two", "three"], "the newest N, still oldest first");
    let future = ok_json(
        dir.path(),
        &[
            &["list", "--json", "--since", "2999-01-01T00:00:00Z"][..],
            &store,
        ]
        .concat(),
    );
    assert_eq!(future["records"], json!([]));
    let recent = ok_json(
        dir.path(),
        &[&["list", "--json", "--since", "1h"][..], &store].concat(),
    );
    assert_eq!(recent["records"].as_array().unwrap().len(), 4);
    assert!(
        !dir.path().join(".forgestate").exists(),
        "--store kept everything in st/"
    );
}

#[test]
fn list_invalid_explains_rejections() {
    let dir = tempfile::tempdir().unwrap();
    ok_json(
        dir.path(),
        &[
            "checkpoint",
            "--agent",
            "a",
            "--session",
            "s",
            "--phase",
            "p",
            "--json",
        ],
    );
    let file = dir.path().join(".forgestate/thread.jsonl");
    let mut text = std::fs::read_to_string(&file).unwrap();
    let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let mut dup = first.clone();
    dup["id"] = json!(2);
    let mut human = first.clone();
    human["id"] = json!(3);
    human["body"] = json!("Looks good to me! [CHECKPOINT] noted.");
    let mut broken = first.clone();
    broken["id"] = json!(4);
    broken["body"] = json!(
        first["body"]
            .as_str()
            .unwrap()
            .replace("Time: ", "Time: never ")
    );
    for v in [dup, human, broken] {
        text.push_str(&format!("{v}\n"));
    }
    std::fs::write(&file, text).unwrap();

    let list = ok_json(dir.path(), &["list", "--json", "--invalid"]);
    assert_eq!(list["records"].as_array().unwrap().len(), 1);
    let codes: Vec<&str> = list["invalid"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["duplicate", "no_marker", "bad_time"]);
    assert!(
        list["invalid"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("first posted as comment 1")
    );
    let plain = ok_json(dir.path(), &["list", "--json"]);
    assert!(plain.get("invalid").is_none());
    let human = run_in(dir.path(), &["list", "--invalid"], None);
    assert!(String::from_utf8_lossy(&human.stdout).contains("bad_time"));
}

#[test]
fn data_from_stdin_and_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "checkpoint",
            "--agent",
            "a",
            "--session",
            "s",
            "--phase",
            "p",
            "--data",
            "-",
            "--json",
        ],
        Some(r#"{"from": "stdin"}"#),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    std::fs::write(dir.path().join("d.json"), r#"{"from": "file", "n": 1}"#).unwrap();
    ok_json(
        dir.path(),
        &[
            "checkpoint",
            "--agent",
            "a",
            "--session",
            "s",
            "--phase",
            "q",
            "--data-file",
            "d.json",
            "--set",
            "n=2",
            "--json",
        ],
    );
    let list = ok_json(dir.path(), &["list", "--json"]);
    assert_eq!(list["records"][0]["data"], json!({"from": "stdin"}));
    assert_eq!(
        list["records"][1]["data"],
        json!({"from": "file", "n": 2}),
        "--set wins over the file"
    );
}

#[test]
fn exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let code =
        |args: &[&str], stdin: Option<&str>| run_in(dir.path(), args, stdin).status.code().unwrap();
    assert_eq!(
        code(&["checkpoint", "--agent", "a"], None),
        64,
        "missing flags"
    );
    assert_eq!(code(&["frobnicate"], None), 64);
    assert_eq!(
        code(
            &[
                "checkpoint",
                "--agent",
                "a",
                "--session",
                "s",
                "--phase",
                "p",
                "--set",
                "oops"
            ],
            None
        ),
        64
    );
    assert_eq!(code(&["list", "--since", "whenever"], None), 64);
    assert_eq!(
        code(
            &[
                "checkpoint",
                "--agent",
                "a",
                "--session",
                "x\nPhase: evil",
                "--phase",
                "p"
            ],
            None
        ),
        65
    );
    assert_eq!(
        code(
            &[
                "checkpoint",
                "--agent",
                "a",
                "--session",
                "s",
                "--phase",
                "p",
                "--data",
                "[1]"
            ],
            None
        ),
        65
    );
    assert_eq!(
        code(
            &[
                "checkpoint",
                "--agent",
                "a",
                "--session",
                "s",
                "--phase",
                "p",
                "--data",
                "{"
            ],
            None
        ),
        65
    );
    assert_eq!(
        code(
            &[
                "checkpoint",
                "--agent",
                "a",
                "--session",
                "s",
                "--phase",
                "p",
                "--data-file",
                "missing.json"
            ],
            None
        ),
        74
    );
    assert_eq!(code(&["list", "--config", "nope.toml"], None), 78);
    std::fs::write(
        dir.path().join("bad.toml"),
        "[format]\nmax_body_bytes = 99999999\n",
    )
    .unwrap();
    assert_eq!(
        code(
            &[
                "checkpoint",
                "--agent",
                "a",
                "--session",
                "s",
                "--phase",
                "p",
                "--config",
                "bad.toml"
            ],
            None
        ),
        78
    );
    std::fs::write(dir.path().join("typo.toml"), "[locall]\ndir = \"x\"\n").unwrap();
    let out = run_in(dir.path(), &["list", "--config", "typo.toml"], None);
    assert_eq!(out.status.code(), Some(78));
    assert!(stderr(&out).contains("locall"), "{}", stderr(&out));
    assert_eq!(code(&["--help"], None), 0);
    assert_eq!(code(&["--version"], None), 0);
    assert!(
        !dir.path().join(".forgestate/thread.jsonl").exists(),
        "nothing was written by failures"
    );
}

#[test]
fn oversized_checkpoint_is_refused_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let big = format!("{{\"blob\": \"{}\"}}", "x".repeat(300 * 1024));
    let out = run_in(
        dir.path(),
        &[
            "checkpoint",
            "--agent",
            "a",
            "--session",
            "s",
            "--phase",
            "p",
            "--data",
            "-",
        ],
        Some(&big),
    );
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
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/seed-health-unclosed.md"
    );
    let out = run_in(dir.path(), &["parse", fixture], None);
    assert!(out.status.success());
    let record: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(record["kind"], "health");
    assert_eq!(record["next_check"], "in 10 iterations");

    let out = run_in(dir.path(), &["parse", "-"], Some("just a comment"));
    assert_eq!(out.status.code(), Some(65));
    assert!(
        stderr(&out).contains("[CHECKPOINT] or [HEALTH]"),
        "{}",
        stderr(&out)
    );
    let out = run_in(
        dir.path(),
        &["parse", "--json"],
        Some("[CHECKPOINT] a\n\n```json\n{}\n```"),
    );
    assert_eq!(out.status.code(), Some(65));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["error"]["code"], "missing_field");
}

#[test]
fn json_mode_keeps_stdout_to_one_document() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "checkpoint",
            "--agent",
            "a",
            "--session",
            "s",
            "--phase",
            "p",
            "--json",
            "-v",
        ],
        None,
    );
    assert!(out.status.success());
    let doc: Value = serde_json::from_slice(&out.stdout).expect("only JSON on stdout");
    assert_eq!(doc["comment_id"], 1);
    assert!(doc["id"].as_str().unwrap().len() >= 32);
    assert!(
        stderr(&out).contains("local store"),
        "human text went to stderr"
    );
}
