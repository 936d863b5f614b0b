//! Human output for operators: glob filters, "nothing found" on stderr, the resume fallback said
//! out loud, colour only when allowed, and one message prefix style.

use crate::common;
use common::cli::{Bin, store_args};
use common::cli::{ok_json, run_in, run_with, stderr, stdout, words};
use common::seed_line;
use serde_json::Value;

fn seed(d: &std::path::Path) {
    for (agent, session, phase) in [
        ("implementation-worker", "sess-1", "one"),
        ("implementation-orchestrator", "sess-1", "two"),
        ("pr-self-reviewer", "sess-2", "three"),
        ("implementation-worker", "other", "four"),
    ] {
        ok_json(
            d,
            &format!("checkpoint --agent {agent} --session {session} --phase {phase} --json"),
        );
    }
}

fn phases(doc: &Value) -> Vec<&str> {
    doc["records"]
        .as_array()
        .map(|r| r.iter().filter_map(|e| e["phase"].as_str()).collect())
        .unwrap_or_default()
}

#[test]
fn list_and_latest_filters_take_globs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    seed(d);
    let list = |filters: &str| ok_json(d, &format!("list --json {filters}"));
    assert_eq!(
        phases(&list("--agent implementation-*")),
        ["one", "two", "four"]
    );
    assert_eq!(phases(&list("--session sess-?")), ["one", "two", "three"]);
    assert_eq!(
        phases(&list("--agent implementation-* --session sess-*")),
        ["one", "two"]
    );
    assert_eq!(
        phases(&list("--agent pr-self-reviewer")),
        ["three"],
        "a plain name is still exact"
    );
    assert_eq!(
        ok_json(d, "latest --json --agent *-orchestrator")["record"]["phase"],
        "two"
    );
    assert_eq!(
        ok_json(d, "latest --json --agent implementation")["record"]["phase"],
        Value::Null
    );
    let bad = run_in(d, &words("list --agent [oops"), None);
    assert_eq!(bad.status.code(), Some(64), "{}", stderr(&bad));
    assert!(
        stderr(&bad).contains("not a valid glob"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn nothing_found_goes_to_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for line in ["list --agent nobody", "latest --agent nobody", "list"] {
        let out = run_in(d, &words(line), None);
        assert!(out.status.success(), "{line}: {}", stderr(&out));
        assert_eq!(stdout(&out), "", "{line}: `| wc -l` counts 0");
        assert!(stderr(&out).contains("no matching record"), "{line}");
    }
    seed(d);
    let out = run_in(d, &words("list --agent implementation-*"), None);
    assert_eq!(
        stdout(&out).lines().count(),
        3,
        "one line per record when piped"
    );
    assert!(
        !stdout(&out).contains("ago") && !stdout(&out).contains("AGENT"),
        "no header and no relative ages off a terminal: {}",
        stdout(&out)
    );
}

#[test]
fn resume_says_when_a_phase_fell_back_to_the_default() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let agent = "--agent implementation-worker --session s";
    ok_json(d, &format!("checkpoint {agent} --phase dreaming --json"));
    let human = stdout(&run_in(d, &words(&format!("resume {agent}")), None));
    assert!(
        human.contains("resume point: start (the default: phase dreaming is not in the resume map"),
        "{human}"
    );
    let doc = ok_json(d, &format!("resume {agent} --json"));
    assert_eq!(doc["unmapped"], true, "{doc}");

    ok_json(
        d,
        &format!("checkpoint {agent} --phase subtask_2_complete --json"),
    );
    let human = stdout(&run_in(d, &words(&format!("resume {agent}")), None));
    assert!(
        human.contains("resume point: phase_2_continue\n"),
        "{human}"
    );
    let doc = ok_json(d, &format!("resume {agent} --json"));
    assert_eq!(doc["unmapped"], false, "mapped: {doc}");
}

#[test]
fn colour_only_when_asked_or_at_a_terminal_without_no_color() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fail = "list --since whenever";
    let esc = |args: &str, env: &[(&str, &str)]| {
        let out = run_with(d, &words(args), env, None);
        assert_eq!(out.status.code(), Some(64), "{args}");
        stderr(&out).contains('\u{1b}')
    };
    assert!(!esc(fail, &[]), "piped: no colour");
    assert!(esc(&format!("{fail} --color always"), &[]));
    assert!(
        esc(&format!("{fail} --color=always"), &[("NO_COLOR", "1")]),
        "the flag beats NO_COLOR"
    );
    assert!(!esc(&format!("{fail} --color never"), &[]));
    assert!(!esc(&format!("{fail} --color auto"), &[("NO_COLOR", "1")]));
    let plain = run_in(d, &words(fail), None);
    assert!(
        stderr(&plain).starts_with("forgestate: error: "),
        "{}",
        stderr(&plain)
    );
    let usage = run_in(d, &words("list --color sometimes"), None);
    assert_eq!(usage.status.code(), Some(64));
}

/// A record's text reaches `list` and `status` tables as the record holds it: a seed agent's
/// phase, or a bot comment an issue writer edited (security.md: they can edit any comment). An
/// escape sequence in it went to the reader's terminal (or the script reading the pipe) raw.
#[test]
fn control_bidi_and_invisible_characters_in_a_record_never_reach_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let st = d.join("st");
    std::fs::create_dir_all(&st).unwrap();
    let body = "[CHECKPOINT] w\nVersion: 1.0\nPhase: a\u{1b}]0;pwned\u{7}b\u{1b}[31mRED\u{9b}2J\n\
                Session: s1\nTime: 2026-12-01T19:00:00.000000Z\n\nState Data:\n```json\n{}\n```\n";
    // A later record from the same other client: bidi, zero-width and C1 characters in its
    // handoff lines and in a data key and value, which `history --diff` prints.
    let later = "[CHECKPOINT] w\nVersion: 2.0\nPhase: b\nSession: s1\n\
                 Time: 2026-12-01T19:01:00.000000Z\nId: 01a22be7-ab92-73b1-a40e-bab54f807bcd\nNext: nx\u{202e}t\u{1b}[31mRED\n\
                 Blocker: bl\u{200b}k\u{9b}31m\n\nState Data:\n```json\n\
                 {\"b\u{200b}key\": \"\u{9b}2J\u{202e}\"}\n```\n";
    std::fs::write(
        st.join("thread.jsonl"),
        seed_line(1, body) + "\n" + &seed_line(2, later) + "\n",
    )
    .unwrap();
    let resume = ["resume", "--agent", "w", "--session", "s1"];
    let history = ["history", "--session", "s1"];
    let diff = ["history", "--session", "s1", "--diff"];
    for verb in [
        &["list"][..],
        &["status"][..],
        &resume[..],
        &history[..],
        &diff[..],
        &["latest"][..],
    ] {
        let out = Bin::new(d).run(&store_args(d, verb));
        let text = stdout(&out);
        assert!(
            text.contains("RED") || text.contains("bl k 31m") || text.contains(" 2J "),
            "{verb:?}: the record is shown: {text:?} {}",
            stderr(&out)
        );
        assert!(
            !text
                .chars()
                .any(|c| c.is_control() && c != '\t' && c != '\n'),
            "{verb:?} prints a control character: {text:?}"
        );
        assert!(
            !text.chars().any(forgestate::format::is_invisible),
            "{verb:?} prints a bidi or invisible character: {text:?}"
        );
    }
    let out = Bin::new(d).run(&store_args(d, &diff));
    let text = stdout(&out);
    assert!(
        text.contains("next: nx t [31mRED") && text.contains("blocker: bl k 31m"),
        "the handoff lines are shown, cleaned: {text}"
    );
}
