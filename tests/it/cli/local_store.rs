//! End-to-end: the real `forgestate` binary on the local store.

use crate::common;
use common::cli::{Bin, ok_json, parse_ok, run_in, run_with, stderr, stdout, words};
use common::stored_bodies;
use serde_json::{Value, json};

/// The default local store under `$HOME` (the helpers set `HOME` to the test's directory).
const DEFAULT_STORE: &str = ".local/state/forgestate/local";

#[test]
fn checkpoint_then_resume_round_trips_with_globs_on_the_default_local_store() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = words(
        "checkpoint --agent implementation-worker --session s1 --phase subtask_3_complete \
         --set issue_number=42 --set working_dir=/tmp/w --data",
    );
    args.push(r#"{"branch_name": "feat/x", "completed_subtasks": [1, 2, 3]}"#.into());
    let out = run_in(dir.path(), &args, None);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    let store = dir.path().join(DEFAULT_STORE);
    let notes = err
        .lines()
        .filter(|l| l.contains(&format!("using the local store in {}", store.display())));
    assert_eq!(
        notes.count(),
        1,
        "one stderr line says the default store was chosen: {err}"
    );
    assert!(store.join("thread.jsonl").is_file());
    assert!(stdout(&out).contains("saved as comment 1"));

    let resume = ok_json(
        dir.path(),
        "resume --agent implementation-worker --session s1 --json",
    );
    assert_eq!(
        resume["resume_point"], "phase_2_continue",
        "the glob maps subtask 3"
    );
    assert_eq!(resume["phase"], "subtask_3_complete");
    assert_eq!(
        resume["data"],
        json!({"branch_name": "feat/x", "completed_subtasks": [1, 2, 3], "issue_number": 42,
               "working_dir": "/tmp/w"})
    );
    assert_eq!(resume["checkpoint"]["comment"]["id"], 1);
    assert_eq!(resume["checkpoint"]["comment"]["author"], "tester");
    let human = run_in(
        dir.path(),
        &words("resume --agent implementation-worker --session s1"),
        None,
    );
    assert!(
        stdout(&human).contains("resume point: phase_2_continue"),
        "{}",
        stdout(&human)
    );
}

#[test]
fn fresh_start_and_unknown_phase() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let resume = "resume --agent implementation-worker --session s --json";
    let fresh = ok_json(d, resume);
    assert_eq!(
        fresh,
        json!({"resume_point": "start", "phase": "fresh_start", "data": {}, "checkpoint": null,
               "record_id": null, "comment_id": null, "time": null, "fresh_start": true,
               "pending": false, "offline": false, "unmapped": false, "next": null,
               "blockers": [], "context_hash": null, "context_drift": null, "latest_id": null,
               "ended": null, "reopened": null, "pending_intent": null, "conflicts": [],
               "complete": true, "warnings": []})
    );
    ok_json(
        d,
        "checkpoint --agent implementation-worker --session s --phase dreaming --json",
    );
    let r = ok_json(d, resume);
    assert_eq!(
        (r["resume_point"].as_str(), r["phase"].as_str()),
        (Some("start"), Some("dreaming"))
    );
    ok_json(
        d,
        "checkpoint --agent implementation-worker --session s --phase pr_created --json",
    );
    assert_eq!(ok_json(d, resume)["resume_point"], "phase_4_monitoring");
}

fn phases(list: &Value) -> Vec<String> {
    let records = list["records"].as_array().expect("records");
    records
        .iter()
        .filter_map(|r| r["phase"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn latest_follows_thread_order_and_filters() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (agent, session, phase) in [("a", "s1", "one"), ("b", "s1", "two"), ("a", "s2", "three")] {
        ok_json(
            d,
            &format!(
                "checkpoint --agent {agent} --session {session} --phase {phase} --json --store st"
            ),
        );
    }
    ok_json(
        d,
        "health --agent a --session s1 --json --metrics {\"q\":1} --store st",
    );

    let latest = |filters: &str| {
        ok_json(d, &format!("latest --json --store st {filters}"))["record"].clone()
    };
    assert_eq!(latest("")["kind"], "health");
    assert_eq!(latest("--kind checkpoint")["phase"], "three");
    assert_eq!(latest("--session s1 --kind checkpoint")["phase"], "two");
    assert_eq!(
        latest("--agent a --session s1 --kind checkpoint")["phase"],
        "one"
    );
    assert_eq!(
        latest("--agent nobody"),
        Value::Null,
        "none found is a null record, exit 0"
    );

    assert_eq!(
        phases(&ok_json(d, "list --json --store st")),
        ["one", "two", "three"],
        "oldest first"
    );
    let limited = ok_json(d, "list --json --store st --kind checkpoint --limit 2");
    assert_eq!(
        phases(&limited),
        ["two", "three"],
        "the newest N, still oldest first"
    );
    let future = ok_json(d, "list --json --store st --since 2999-01-01T00:00:00Z");
    assert_eq!(future["records"], json!([]));
    let recent = ok_json(d, "list --json --store st --since 1h");
    assert_eq!(recent["records"].as_array().unwrap().len(), 4);
    // --phase, as MCP and Python take `phase`: only checkpoints whose phase matches the glob.
    assert_eq!(
        phases(&ok_json(d, "list --json --store st --phase t*")),
        ["two", "three"]
    );
    assert_eq!(latest("--phase o*")["phase"], "one");
    assert_eq!(latest("--phase nothing-*"), Value::Null);
    assert!(
        !d.join(DEFAULT_STORE).exists(),
        "--store kept everything in st/"
    );
}

#[test]
fn list_invalid_explains_rejections() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok_json(d, "checkpoint --agent a --session s --phase p --json");
    let file = d.join(DEFAULT_STORE).join("thread.jsonl");
    let mut text = std::fs::read_to_string(&file).unwrap();
    let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let body = first["body"].as_str().unwrap();
    let extra = [
        body.to_string(),
        "Looks good to me! [CHECKPOINT] noted.".to_string(),
        body.replace("Time: ", "Time: never "),
    ];
    for (i, body) in extra.into_iter().enumerate() {
        let mut line = first.clone();
        line["id"] = json!(i + 2);
        line["body"] = json!(body);
        text.push_str(&format!("{line}\n"));
    }
    std::fs::write(&file, text).unwrap();

    let list = ok_json(d, "list --json --invalid");
    assert_eq!(list["records"].as_array().unwrap().len(), 1);
    let invalid = list["invalid"].as_array().unwrap();
    let codes: Vec<&str> = invalid
        .iter()
        .map(|r| r["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["duplicate", "no_marker", "bad_time"]);
    assert!(
        invalid[0]["reason"]
            .as_str()
            .unwrap()
            .contains("first posted as comment 1")
    );
    // Every key of the answer's schema, always: without --invalid the list is null.
    assert_eq!(
        ok_json(d, "list --json")["invalid"],
        serde_json::Value::Null
    );
    assert!(stdout(&run_in(d, &words("list --invalid"), None)).contains("bad_time"));
}

#[test]
fn data_from_stdin_and_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let args = words("checkpoint --agent a --session s --phase p --data - --json");
    parse_ok(&args, &run_in(d, &args, Some(r#"{"from": "stdin"}"#)));
    std::fs::write(d.join("d.json"), r#"{"from": "file", "n": 1}"#).unwrap();
    ok_json(
        d,
        "checkpoint --agent a --session s --phase q --data-file d.json --set n=2 --json",
    );
    let list = ok_json(d, "list --json");
    assert_eq!(list["records"][0]["data"], json!({"from": "stdin"}));
    assert_eq!(
        list["records"][1]["data"],
        json!({"from": "file", "n": 2}),
        "--set wins over the file"
    );
}

#[test]
fn json_mode_keeps_stdout_to_one_document() {
    let dir = tempfile::tempdir().unwrap();
    let args = words("checkpoint --agent a --session s --phase p --json -v");
    let out = run_in(dir.path(), &args, None);
    let doc = parse_ok(&args, &out);
    assert_eq!(doc["comment_id"], 1);
    assert!(doc["id"].as_str().unwrap().len() >= 32);
    assert!(
        stderr(&out).contains("local store"),
        "human text went to stderr"
    );
}

#[test]
fn the_default_store_follows_the_user_not_the_working_directory() {
    let home = tempfile::tempdir().unwrap();
    let (a, b) = (home.path().join("a"), home.path().join("b/clone"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let home_s = home.path().display().to_string();
    let env = [("HOME", home_s.as_str())];
    let save = words("checkpoint --agent implementation-worker --session s --phase pr_created");
    let out = run_with(&a, &save, &env, None);
    assert!(out.status.success(), "{}", stderr(&out));
    let store = home.path().join(DEFAULT_STORE);
    assert!(
        stderr(&out).contains(&format!(
            "no forge configured; using the local store in {}",
            store.display()
        )),
        "the note names the absolute path: {}",
        stderr(&out)
    );
    let resume = words("resume --agent implementation-worker --session s --json");
    let answer = parse_ok(&resume, &run_with(&b, &resume, &env, None));
    assert_eq!(
        answer["resume_point"], "phase_4_monitoring",
        "a resume after `cd` finds the checkpoint"
    );
    assert!(!a.join(".forgestate").exists() && !b.join(".forgestate").exists());

    let state = home.path().join("xdg-state");
    let state_s = state.display().to_string();
    let env = [
        ("HOME", home_s.as_str()),
        ("XDG_STATE_HOME", state_s.as_str()),
    ];
    let out = run_with(&b, &save, &env, None);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        state.join("forgestate/local/thread.jsonl").is_file(),
        "$XDG_STATE_HOME beats $HOME"
    );
}

#[test]
fn without_home_or_state_dir_the_default_store_is_refused_not_put_in_the_cwd() {
    let dir = tempfile::tempdir().unwrap();
    let out = Bin::bare(dir.path())
        .env("USER", "tester")
        .line("checkpoint --agent a --session s --phase p");
    assert_eq!(out.status.code(), Some(78), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("--store DIR") && err.contains("local.dir"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing was written to the working directory"
    );
}

#[test]
fn a_relative_store_flag_is_shown_as_an_absolute_path() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = run_in(
        d,
        &words("checkpoint --agent a --session s --phase p --store st"),
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let abs = d.canonicalize().unwrap().join("st");
    assert!(
        stdout(&out).contains(&format!("in local store {}", abs.display())),
        "{}",
        stdout(&out)
    );
    let init = ok_json(d, "init --json --store st");
    assert_eq!(
        init["thread"],
        abs.join("thread.jsonl").display().to_string()
    );
}

#[test]
fn secrets_are_redacted_by_key_pattern_and_by_shape_before_they_are_stored() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ghp = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let mut args = words("--store st checkpoint --agent a --session s --phase p");
    for set in [
        format!("github_token={ghp}"),
        "remote=https://u:pw@h/x".to_string(),
        "AWS_SECRET_ACCESS_KEY=abc".to_string(),
        format!("log=pushed with {ghp} ok"),
        "branch=feat/x".to_string(),
        "max_tokens_seen=false".to_string(),
    ] {
        args.extend(["--set".to_string(), set]);
    }
    let out = run_in(d, &args, None);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("(4 secret value(s) redacted)"),
        "{}",
        stdout(&out)
    );
    let bodies = stored_bodies(&d.join("st"));
    let body = &bodies[0];
    assert!(body.contains("\nRedacted: 4\n"), "{body}");
    assert!(
        !body.contains("ghp_") && !body.contains("pw@") && !body.contains("abc"),
        "{body}"
    );
    let data = forgestate::format::parse(body).unwrap().data().clone();
    assert_eq!(
        data,
        json!({"github_token": "[REDACTED]", "remote": "https://u:[REDACTED]@h/x",
               "AWS_SECRET_ACCESS_KEY": "[REDACTED]", "log": "pushed with [REDACTED] ok",
               "branch": "feat/x", "max_tokens_seen": false})
    );
}

#[test]
fn a_new_checkpoint_wins_over_a_merged_file_whose_largest_id_is_not_last() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok_json(
        d,
        "checkpoint --agent implementation-worker --session s --phase clone_complete --json --store st",
    );
    ok_json(
        d,
        "checkpoint --agent implementation-worker --session s --phase commit_complete --json --store st",
    );
    // A merge left the line with the largest id first, not last.
    let file = d.join("st/thread.jsonl");
    let text = std::fs::read_to_string(&file).unwrap();
    let mut lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    lines[0]["id"] = json!(40);
    let merged: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, merged).unwrap();

    let saved = ok_json(
        d,
        "checkpoint --agent implementation-worker --session s --phase pr_created --json --store st",
    );
    assert_eq!(saved["comment_id"], 41);
    let resume = ok_json(
        d,
        "resume --agent implementation-worker --session s --json --store st",
    );
    assert_eq!(
        resume["phase"], "pr_created",
        "the new record is the latest"
    );
}

#[test]
fn an_exhausted_id_space_exits_74_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("st")).unwrap();
    let line = json!({"id": u64::MAX, "author": "me", "created_at": "2026-11-29T08:00:00Z",
                      "updated_at": "2026-11-29T08:00:00Z", "body": "x"});
    std::fs::write(d.join("st/thread.jsonl"), format!("{line}\n")).unwrap();
    // Issue #42 low 13: with $HOME and $XDG_STATE_HOME both set, the error says what is true:
    // the local store has no outbox, not that the variables are unset. On the CLI and `call`.
    let bin = Bin::new(d).env("XDG_STATE_HOME", d.join("state").display().to_string());
    let out = bin.run(&words(
        "checkpoint --agent a --session s --phase p --store st",
    ));
    let call = bin
        .clone()
        .stdin(r#"{"agent": "a", "session": "s", "phase": "p"}"#)
        .run(&words("--store st call checkpoint"));
    for out in [out, call] {
        assert_eq!(out.status.code(), Some(74), "{}", stderr(&out));
        let err = format!("{}{}", stderr(&out), stdout(&out));
        assert!(
            err.contains("thread.jsonl") && err.contains("renumber"),
            "{err}"
        );
        assert!(err.contains("the local store has no outbox"), "{err}");
        assert!(
            !err.contains("XDG_STATE_HOME") && !err.contains("$HOME"),
            "{err}"
        );
    }
}

#[cfg(unix)]
#[test]
fn a_fifo_store_file_is_refused_promptly() {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("st")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(d.join("st/thread.jsonl"))
        .status()
        .unwrap();
    assert!(made.success());
    for line in [
        "latest --store st",
        "checkpoint --agent a --session s --phase p --store st",
    ] {
        let mut child = Bin::new(d)
            .without("USER")
            .command(&words(line))
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                child.kill().unwrap();
                panic!("{line}: still blocked on the FIFO after 10 s");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(74), "{line}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("not a regular file"),
            "{}",
            stderr(&out)
        );
    }
}

#[test]
fn big_integers_and_out_of_range_numbers_are_stored_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut args = words(
        "--store st checkpoint --agent a --session s --phase p \
         --set big=18446744073709551616 --set n=1e400 --data",
    );
    args.push(r#"{"neg": -123456789012345678901234567890, "m": 1e400}"#.into());
    let out = run_in(d, &args, None);
    assert!(out.status.success(), "{}", stderr(&out));
    let body = &stored_bodies(&d.join("st"))[0];
    assert!(body.contains("\"big\": 18446744073709551616,"), "{body}");
    assert!(
        body.contains("\"neg\": -123456789012345678901234567890"),
        "{body}"
    );
    assert!(
        body.contains("\"n\": 1e+400") && body.contains("\"m\": 1e+400"),
        "{body}"
    );
    let resume = run_in(
        d,
        &words("--store st resume --agent a --session s --json"),
        None,
    );
    let text = stdout(&resume);
    assert!(
        text.contains("\"big\": 18446744073709551616")
            || text.contains("\"big\":18446744073709551616"),
        "{text}"
    );
}

#[test]
fn invalid_utf8_input_is_bad_data_naming_its_source() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("bad.json"), b"{\"k\": \"\xff\xfe\"}").unwrap();
    let out = run_in(
        d,
        &words("checkpoint --agent a --session s --phase p --data-file bad.json"),
        None,
    );
    assert_eq!(out.status.code(), Some(65), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("bad.json is not valid UTF-8"),
        "{}",
        stderr(&out)
    );

    let out = Bin::new(d)
        .without("USER")
        .stdin(&b"{\"k\": \"\xc3\"}"[..])
        .line("checkpoint --agent a --session s --phase p --data -");
    assert_eq!(out.status.code(), Some(65), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("stdin is not valid UTF-8"),
        "{}",
        stderr(&out)
    );
    assert!(
        !d.join(".forgestate/thread.jsonl").exists(),
        "nothing was written"
    );
}

#[test]
fn display_spoofing_names_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let args: Vec<String> = [
        "checkpoint",
        "--agent",
        "impl\u{202E}rekrow",
        "--session",
        "s",
        "--phase",
        "p",
    ]
    .map(String::from)
    .to_vec();
    let out = run_in(dir.path(), &args, None);
    assert_eq!(out.status.code(), Some(65), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("agent contains U+202E"),
        "{}",
        stderr(&out)
    );
    let args: Vec<String> = [
        "checkpoint",
        "--agent",
        "a",
        "--session",
        "s\u{200B}1",
        "--phase",
        "p",
    ]
    .map(String::from)
    .to_vec();
    let out = run_in(dir.path(), &args, None);
    assert_eq!(out.status.code(), Some(65), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("session contains U+200B"),
        "{}",
        stderr(&out)
    );
}
