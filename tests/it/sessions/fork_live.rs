//! `fork` over a live session (issue #18, class 5): refused, naming `--force`; with `--force`
//! the session's agent resumes from the forked state and the new record says what it replaced.

use crate::common;
use common::cli::{Bin, stderr, words};
use serde_json::Value;

use crate::fake_forge::{BOT_TOKEN, OWNER, REPO};

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

/// Issue #42 low 11: a forced fork into a session that an earlier fork started from the same
/// record is deliberate, not a second writer: no conflict in `resume`, `status` or `history`,
/// then or after the session's agent writes on, on both stores and over MCP.
#[tokio::test(flavor = "multi_thread")]
async fn a_forced_fork_is_no_second_writer() {
    for w in common::world::World::both().await {
        let name = w.name();
        w.ok("init");
        w.ok("checkpoint --agent w --session S --phase clone_complete");
        w.ok("fork --session S --new-session F");
        w.ok("checkpoint --agent w --session F --phase subtask_1_complete");
        w.ok("fork --session S --new-session F --force");
        for step in ["after the fork", "after the next checkpoint"] {
            let resumed = w.ok("resume --agent w --session F");
            assert_eq!(
                resumed["conflicts"],
                serde_json::json!([]),
                "{name} {step}: {resumed}"
            );
            assert_eq!(
                resumed["warnings"],
                serde_json::json!([]),
                "{name} {step}: {resumed}"
            );
            let status = w.ok("status");
            let row = status["rows"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["session"] == "F")
                .unwrap()
                .clone();
            assert_ne!(row["verdict"], "conflicted", "{name} {step}: {row}");
            let history = w.ok("history --session F");
            assert_eq!(
                history["conflicts"],
                serde_json::json!([]),
                "{name} {step}: {history}"
            );
            w.ok("checkpoint --agent w --session F --phase subtask_2_complete");
        }
        let (bin, args) = match &w.fake {
            Some(fake) => (
                Bin::new(w.d()).forge(&fake.uri(), OWNER, REPO, BOT_TOKEN),
                String::new(),
            ),
            None => (Bin::new(w.d()), format!("--store {}", w.store().display())),
        };
        let (mcp, _err) = crate::mcp_client::connect(&bin, &args).await;
        let got = crate::mcp_client::call(
            &mcp,
            "resume",
            serde_json::json!({"agent": "w", "session": "F"}),
        )
        .await;
        let answer = crate::mcp_client::ok(&got);
        assert_eq!(
            answer["conflicts"],
            serde_json::json!([]),
            "{name}: {answer}"
        );
        mcp.cancel().await.unwrap();
    }
}
