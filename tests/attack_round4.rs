//! Holes found attacking the release binary (round 4: hardening, sessions, dashboard, CLI):
//!
//! - `--parent` (and a `Parent:` line in an imported record) was the one header never checked
//!   for secrets: `checkpoint --parent "$FORGESTATE_TOKEN"` posted the token in a comment;
//! - `import` gave every record without a `Parent:` the previous imported record of its pair as
//!   parent, inventing lineage: a thread with no conflict came out `conflicted` on the forge;
//! - `forgestate mcp` answered a request whose `params` is not an object (or whose `id` is
//!   `null`) with an error carrying no `id`: the client never learns which request failed;
//! - shapes of secrets the redactor missed in free text: `--password hunter2` (a flag with its
//!   value after a space), a JSON or YAML document kept as a string (`"password": "x"`,
//!   `AWS_SECRET_ACCESS_KEY: x`), `Authorization: Basic …`;
//! - control characters (ESC, OSC, C1) in a record's text reached `list`/`status` tables raw;
//! - `checkpoint --merge` onto an edited record, and `import` of one, carried the edited data
//!   into a fresh, unedited comment without a word: the edit flag was laundered.

mod common;
mod fake_forge;

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use common::cli::{Bin, stderr, stdout};
use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO};
use serde_json::{Value, json};

const GHP: &str = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn local(dir: &Path) -> Bin {
    Bin::new(dir)
}

fn store_args(dir: &Path, rest: &[&str]) -> Vec<String> {
    let mut a = vec!["--store".to_string(), dir.join("st").display().to_string()];
    a.extend(rest.iter().map(|s| s.to_string()));
    a
}

/// Every body in a local store's thread file.
fn local_bodies(store: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(store.join("thread.jsonl")).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v["body"].as_str().map(str::to_string))
        .collect()
}

fn seed_line(id: u64, body: &str) -> String {
    json!({"id": id, "author": "local", "created_at": "2026-12-01T19:00:00Z",
           "updated_at": "2026-12-01T19:00:00Z", "body": body})
    .to_string()
}

fn checkpoint_body(session: &str, phase: &str, id: &str, parent: Option<&str>) -> String {
    let parent = parent.map(|p| format!("Parent: {p}\n")).unwrap_or_default();
    format!(
        "[CHECKPOINT] w\nVersion: 2.0\nPhase: {phase}\nSession: {session}\n\
         Time: 2026-12-01T19:00:00.000000Z\nId: {id}\n{parent}\nState Data:\n```json\n{{}}\n```\n\n\
         ---\n\nAutomated by CleverAgents Bot Agent: w"
    )
}

#[test]
fn a_parent_that_holds_a_secret_is_refused_like_every_other_header() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = local(d).run(&store_args(
        d,
        &[
            "checkpoint",
            "--agent",
            "w",
            "--session",
            "s",
            "--phase",
            "p",
            "--parent",
            GHP,
        ],
    ));
    assert_eq!(out.status.code(), Some(65), "{}", stderr(&out));
    for body in local_bodies(&d.join("st")) {
        assert!(!body.contains(GHP), "the token was written: {body}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn checkpoint_parent_never_posts_the_forge_token() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let bin = Bin::new(dir.path()).forge(&fake.uri(), OWNER, REPO, BOT_TOKEN);
    let out = bin.run(&args(&[
        "checkpoint",
        "--agent",
        "w",
        "--session",
        "s",
        "--phase",
        "p",
        "--parent",
        BOT_TOKEN,
    ]));
    assert_eq!(
        out.status.code(),
        Some(65),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let bodies: Vec<String> = fake
        .state()
        .comments
        .iter()
        .map(|c| c.body.clone())
        .collect();
    for body in bodies {
        assert!(
            !body.contains(BOT_TOKEN),
            "the forge token is in a comment: {body}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn import_refuses_a_record_whose_parent_holds_a_secret() {
    let fake = FakeForge::start().await;
    fake_forge::session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let from = dir.path().join("from");
    std::fs::create_dir_all(&from).unwrap();
    let body = checkpoint_body("s", "a", "01a23317-a9be-7021-b156-1fc2813d2281", Some(GHP));
    std::fs::write(from.join("thread.jsonl"), seed_line(1, &body) + "\n").unwrap();
    let bin = Bin::new(dir.path()).forge(&fake.uri(), OWNER, REPO, BOT_TOKEN);
    let out = bin.run(&args(&[
        "import",
        "--from",
        from.to_str().unwrap(),
        "--json",
    ]));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(report["refused"].as_array().map(Vec::len), Some(1), "{all}");
    let bodies: Vec<String> = fake
        .state()
        .comments
        .iter()
        .map(|c| c.body.clone())
        .collect();
    for body in bodies {
        assert!(
            !body.contains(GHP),
            "import posted the token: {body}\n{all}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn import_keeps_lineage_as_written_and_invents_no_conflict() {
    let fake = FakeForge::start().await;
    fake_forge::session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let from = d.join("from");
    let a = "01a23317-eb3f-7183-9065-02f58edf1a93";
    let lines = [
        seed_line(1, &checkpoint_body("fc", "a", a, None)),
        // Written by the bare CLI: no `Parent:`.
        seed_line(
            2,
            &checkpoint_body("fc", "b", "01a23317-ec0a-775a-926b-b5daeeb9fcfb", None),
        ),
        seed_line(
            3,
            &checkpoint_body("fc", "c", "01a23317-ec15-707e-b0c3-de5dd6ea10a1", Some(a)),
        ),
    ];
    std::fs::create_dir_all(&from).unwrap();
    std::fs::write(from.join("thread.jsonl"), lines.join("\n") + "\n").unwrap();
    let here = Bin::new(d).run(&args(&[
        "--store",
        from.to_str().unwrap(),
        "resume",
        "--agent",
        "w",
        "--session",
        "fc",
        "--json",
    ]));
    let here: Value = serde_json::from_slice(&here.stdout).unwrap();
    assert_eq!(
        here["conflicts"],
        json!([]),
        "no conflict in the source: {here}"
    );

    let bin = Bin::new(d).forge(&fake.uri(), OWNER, REPO, BOT_TOKEN);
    let out = bin.run(&args(&[
        "import",
        "--from",
        from.to_str().unwrap(),
        "--json",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let there = bin.run(&args(&[
        "resume",
        "--agent",
        "w",
        "--session",
        "fc",
        "--json",
    ]));
    let there: Value = serde_json::from_slice(&there.stdout).unwrap();
    assert_eq!(
        there["conflicts"],
        json!([]),
        "the import invented a second writer: {there}"
    );
    let bodies: Vec<String> = fake
        .state()
        .comments
        .iter()
        .map(|c| c.body.clone())
        .collect();
    let b = bodies.iter().find(|b| b.contains("Phase: b")).unwrap();
    assert!(
        !b.contains("Parent:"),
        "a parent the record never named: {b}"
    );
}

#[test]
fn mcp_requests_with_params_that_are_not_an_object_are_answered_with_their_id() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("st").display().to_string();
    let mut child = Bin::new(dir.path())
        .command(&["--store".into(), store, "mcp".into()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":[]}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/list","params":"x"}"#,
        r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#,
    ];
    let mut stdin = child.stdin.take().unwrap();
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let answers: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    for id in [5, 6] {
        let answer = answers.iter().find(|a| a["id"] == id);
        assert!(
            answer.is_some_and(|a| a["error"]["code"].is_i64()),
            "request {id} got no error answer naming it: {answers:?}"
        );
    }
    assert!(answers.iter().any(|a| a["id"] == 7), "{answers:?}");
    for a in &answers {
        assert!(a.get("id").is_some(), "an answer with no id: {a}");
    }
}

/// Posts `text` as the `note` of a checkpoint on a local store and returns the stored note.
fn stored_note(dir: &Path, text: &str) -> String {
    let data = json!({ "note": text }).to_string();
    let out = local(dir).run(&store_args(
        dir,
        &[
            "checkpoint",
            "--agent",
            "w",
            "--session",
            "r",
            "--phase",
            "p",
            "--data",
            &data,
        ],
    ));
    assert!(out.status.success(), "{}", stderr(&out));
    let out = local(dir).run(&store_args(
        dir,
        &["latest", "--agent", "w", "--session", "r", "--json"],
    ));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["record"]["data"]["note"].as_str().unwrap().to_string()
}

#[test]
fn secrets_after_a_colon_a_spaced_flag_or_basic_auth_are_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut missed = Vec::new();
    for (text, secret) in [
        ("mysql --password hunter2x -h db", "hunter2x"),
        (r#"{"db_password": "hunter2x"}"#, "hunter2x"),
        (
            "AWS_SECRET_ACCESS_KEY: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "wJalrXUtnFEMI",
        ),
        ("Authorization: Basic dXNlcjpodW50ZXIy", "dXNlcjpodW50ZXIy"),
    ] {
        let note = stored_note(d, text);
        if note.contains(secret) {
            missed.push(note);
        }
    }
    assert!(missed.is_empty(), "kept in the comment: {missed:#?}");
}

/// A record's text reaches `list` and `status` tables as the record holds it: a seed agent's
/// phase, or a bot comment an issue writer edited (security.md: they can edit any comment). An
/// escape sequence in it went to the reader's terminal (or the script reading the pipe) raw.
#[test]
fn control_characters_in_a_record_never_reach_a_table() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let st = d.join("st");
    std::fs::create_dir_all(&st).unwrap();
    let body = "[CHECKPOINT] w\nVersion: 1.0\nPhase: a\u{1b}]0;pwned\u{7}b\u{1b}[31mRED\u{9b}2J\n\
                Session: s1\nTime: 2026-12-01T19:00:00.000000Z\n\nState Data:\n```json\n{}\n```\n";
    std::fs::write(st.join("thread.jsonl"), seed_line(1, body) + "\n").unwrap();
    let resume = ["resume", "--agent", "w", "--session", "s1"];
    let history = ["history", "--session", "s1"];
    for verb in [
        &["list"][..],
        &["status"][..],
        &resume[..],
        &history[..],
        &["latest"][..],
    ] {
        let out = local(d).run(&store_args(d, verb));
        let text = stdout(&out);
        assert!(
            text.contains("RED"),
            "{verb:?}: the row is shown: {text:?} {}",
            stderr(&out)
        );
        assert!(
            !text
                .chars()
                .any(|c| c.is_control() && c != '\t' && c != '\n'),
            "{verb:?} prints a control character: {text:?}"
        );
    }
}

/// `checkpoint --merge` onto a record an issue writer edited: the new record carries the edited
/// data and is itself unedited, so no later `resume` warns. The merge must say so when it happens.
#[test]
fn merge_onto_an_edited_record_warns() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let st = d.join("st");
    std::fs::create_dir_all(&st).unwrap();
    let body = "[CHECKPOINT] w\nVersion: 2.0\nPhase: a\nSession: m\n\
                Time: 2026-12-01T19:00:00.000000Z\nId: 01a23317-a9be-7021-b156-1fc2813d3333\n\n\
                State Data:\n```json\n{\"x\": 666}\n```\n";
    let line = json!({"id": 1, "author": "local", "created_at": "2026-12-01T19:00:00Z",
                      "updated_at": "2026-12-01T19:05:00Z", "body": body});
    std::fs::write(st.join("thread.jsonl"), line.to_string() + "\n").unwrap();
    let out = local(d).run(&store_args(
        d,
        &[
            "checkpoint",
            "--agent",
            "w",
            "--session",
            "m",
            "--phase",
            "b",
            "--merge",
            "--json",
        ],
    ));
    assert!(out.status.success(), "{}", stderr(&out));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        all.contains("edited after posting"),
        "merged an edited record's data silently: {all}"
    );
}

/// `import` of a record that was edited after posting (its `updated_at` later than its
/// `created_at`, as `export` keeps them): the forge's copy is a fresh, unedited comment, so the
/// edit flag was lost without a word.
#[tokio::test(flavor = "multi_thread")]
async fn import_of_an_edited_record_warns() {
    let fake = FakeForge::start().await;
    fake_forge::session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let from = dir.path().join("from");
    std::fs::create_dir_all(&from).unwrap();
    let body = checkpoint_body("s", "a", "01a23317-a9be-7021-b156-1fc2813d4444", None);
    let line = json!({"id": 1, "author": "local", "created_at": "2026-12-01T19:00:00Z",
                      "updated_at": "2026-12-01T19:05:00Z", "body": body});
    std::fs::write(from.join("thread.jsonl"), line.to_string() + "\n").unwrap();
    let bin = Bin::new(dir.path()).forge(&fake.uri(), OWNER, REPO, BOT_TOKEN);
    let out = bin.run(&args(&[
        "import",
        "--from",
        from.to_str().unwrap(),
        "--json",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["posted"], 1, "{report}");
    assert!(
        report["warnings"]
            .to_string()
            .contains("edited after posting"),
        "the edit flag was dropped silently: {report}"
    );
}

/// docs/dashboard.md: "a directory holding another thread is refused". A local store's own
/// records have small ids (1, 2, …), below every forge comment id, so exporting a forge thread
/// into it mixed the two threads into one file.
#[tokio::test(flavor = "multi_thread")]
async fn export_into_a_local_store_holding_another_thread_is_refused() {
    let fake = FakeForge::start().await;
    fake_forge::session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let posted = local(d).run(&store_args(
        d,
        &[
            "checkpoint",
            "--agent",
            "mine",
            "--session",
            "here",
            "--phase",
            "p",
        ],
    ));
    assert!(posted.status.success(), "{}", stderr(&posted));
    let before = std::fs::read(d.join("st/thread.jsonl")).unwrap();
    let bin = Bin::new(d).forge(&fake.uri(), OWNER, REPO, BOT_TOKEN);
    let cp = bin.run(&args(&[
        "checkpoint",
        "--agent",
        "w",
        "--session",
        "s",
        "--phase",
        "a",
    ]));
    assert!(cp.status.success(), "{}", stderr(&cp));
    let st = d.join("st").display().to_string();
    let out = bin.run(&args(&["export", "--to", &st, "--json"]));
    assert_ne!(
        out.status.code(),
        Some(0),
        "exported into another thread: {}",
        stdout(&out)
    );
    assert_eq!(
        std::fs::read(d.join("st/thread.jsonl")).unwrap(),
        before,
        "the store changed"
    );
}
