//! `fork` over a live session (issue #18, class 5): refused, naming `--force`; with `--force`
//! the session's agent resumes from the forked state and the new record says what it replaced.

use crate::common;
use common::cli::{Bin, stderr, words};
use serde_json::Value;

fn run(dir: &std::path::Path, line: &str) -> std::process::Output {
    let mut args = vec!["--store".to_string(), dir.join("st").display().to_string()];
    args.extend(words(line));
    Bin::new(dir).run(&args)
}

fn ok(dir: &std::path::Path, line: &str) -> Value {
    let out = run(dir, &format!("{line} --json"));
    assert!(out.status.success(), "{line}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_fork_into_a_live_session_is_refused_and_forced_it_says_what_it_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(d, "checkpoint --agent w --session S --phase clone_complete");
    let live = ok(
        d,
        "checkpoint --agent w --session LIVE --phase subtask_4_complete",
    );
    let live_id = live["id"].as_str().unwrap().to_string();

    let refused = run(d, "fork --session S --new-session LIVE");
    assert_eq!(refused.status.code(), Some(65), "{}", stderr(&refused));
    let said = stderr(&refused);
    assert!(
        said.contains("already has 1 record(s)") && said.contains("--force"),
        "{said}"
    );
    assert_eq!(
        ok(d, "resume --agent w --session LIVE")["phase"],
        "subtask_4_complete"
    );

    let forced = ok(d, "fork --session S --new-session LIVE --force");
    let next = forced["record"]["next"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        next.contains(&live_id) && next.contains("subtask_4_complete"),
        "the forced record names what it replaced: {forced}"
    );
    assert_eq!(
        ok(d, "resume --agent w --session LIVE")["phase"],
        "clone_complete"
    );
}
