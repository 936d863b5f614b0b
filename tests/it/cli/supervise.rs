//! End-to-end, through the real binary, on both backends (the local store and the fake forge):
//! `status` verdicts and `--fail-on-stalled`, `history` with diffs and a fork's lineage, `fork`,
//! and the handoff (`Next:`, `Blocker:`) and context-drift (`Context-Hash:`) round trips.
//!
//! Nothing sleeps: records are made old in the store itself. On the forge the server's clock is
//! moved ahead (`clock_offset`), which also shows that ages are measured on the server's clock:
//! on this machine's clock the records are seconds old.

use crate::{common, fake_forge};
use std::process::Output;

use crate::common::world::World;
use common::cli::{Bin, stderr, stdout, words};
use common::cli::{guarded_json, run_guarded};
use common::mkfifo;
use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO};
use forgestate::store::Thread;
use serde_json::{Value, json};

async fn both() -> [World; 2] {
    World::both().await
}

fn code(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

fn row<'a>(rows: &'a Value, agent: &str) -> &'a Value {
    rows.as_array()
        .unwrap()
        .iter()
        .find(|r| r["agent"] == agent)
        .unwrap_or_else(|| panic!("no row for {agent}: {rows:#}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn status_finds_the_stalled_and_the_paused_and_fails_on_stalled() {
    for w in both().await {
        let name = w.name();
        w.ok("checkpoint --agent worker-a --session s1 --phase clone_complete --blocker needs-creds --json");
        w.ok("checkpoint --agent worker-d --session s1 --phase all_done --json");
        w.age_all(3600);
        w.ok("checkpoint --agent worker-b --session s1 --phase clone_complete --json");
        w.ok("health --agent orchestrator --session s1 --status Paused --metrics {\"queue\":3} --json");

        let rows = w.ok("status --json")["rows"].clone();
        assert_eq!(rows.as_array().unwrap().len(), 4, "{name}: {rows:#}");
        assert_eq!(
            rows[0]["agent"], "worker-a",
            "{name}: stalled first: {rows:#}"
        );
        let a = row(&rows, "worker-a");
        assert_eq!(a["verdict"], "stalled", "{name}: {a:#}");
        assert!(a["age_secs"].as_i64().unwrap() >= 3600, "{name}: {a:#}");
        assert_eq!(a["blockers"], json!(["needs-creds"]), "{name}");
        assert_eq!(
            a["resume_point"], "start",
            "{name}: worker-a has no resume map"
        );
        assert_eq!(a["stalled_after_secs"], 1800, "{name}");
        assert_eq!(row(&rows, "worker-b")["verdict"], "alive", "{name}");
        let o = row(&rows, "orchestrator");
        assert_eq!(o["verdict"], "paused", "{name}: {o:#}");
        assert_eq!(o["health"], "Paused", "{name}");
        assert_eq!(o["metrics"], json!({"queue": 3}), "{name}");
        assert_eq!(
            row(&rows, "worker-d")["verdict"],
            "stalled",
            "{name}: no final map yet"
        );

        // Exit codes: 0 without the flag, 1 with it, 0 when the stalled agent is filtered out.
        let plain = w.run("status");
        assert_eq!(code(&plain), 0, "{name}: {}", stderr(&plain));
        let text = stdout(&plain);
        let lines: Vec<&str> = text.lines().collect();
        // Piped, as gh: tab-separated rows, no header.
        assert!(
            lines[0].starts_with("stalled\tworker-a\t"),
            "{name}: {text}"
        );
        assert!(!text.contains("VERDICT"), "{name}: {text}");
        assert!(
            !text.contains('\x1b'),
            "{name}: no colour when not a terminal: {text:?}"
        );
        assert_eq!(code(&w.run("status --fail-on-stalled")), 1, "{name}");
        assert_eq!(
            code(&w.run("status --fail-on-stalled --agent worker-[bo]*")),
            0,
            "{name}"
        );
        let coloured = stdout(&w.run("status --color always"));
        assert!(
            coloured.contains("\x1b[1;31mstalled\x1b[0m"),
            "{name}: {coloured:?}"
        );

        // Thresholds per agent glob, and a final resume point, from the configuration; the
        // command line's threshold beats them.
        let config = w.d().join("supervisor.toml");
        std::fs::write(
            &config,
            "[status.agents.\"worker-a\"]\nstalled_after_secs = 7200\n\n\
             [resume.agents.\"worker-d\"]\nall_done = \"done\"\n",
        )
        .unwrap();
        let cfg = config.display().to_string();
        let rows = w.ok_args(&["status", "--json", "--config", &cfg])["rows"].clone();
        let a = row(&rows, "worker-a");
        assert_eq!(
            a["verdict"], "warning",
            "{name}: a slower pace for worker-a: {a:#}"
        );
        assert_eq!(a["stalled_after_secs"], 7200, "{name}");
        let d = row(&rows, "worker-d");
        assert_eq!(d["verdict"], "completed", "{name}: {d:#}");
        assert_eq!(d["resume_point"], "done", "{name}");
        let rows = w.ok_args(&[
            "status",
            "--json",
            "--config",
            &cfg,
            "--stalled-after",
            "50m",
        ])["rows"]
            .clone();
        assert_eq!(row(&rows, "worker-a")["verdict"], "stalled", "{name}");
        let bad = w.run("status --stalled-after soon");
        assert_eq!(code(&bad), 64, "{name}: {}", stderr(&bad));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_paused_agent_that_checkpoints_again_is_judged_by_age_again() {
    for w in both().await {
        let name = w.name();
        w.ok("health --agent orchestrator --session s1 --status paused --json");
        assert_eq!(
            w.ok("status --json")["rows"][0]["verdict"],
            "paused",
            "{name}: any letter case"
        );
        w.ok("checkpoint --agent orchestrator --session s1 --phase resumed --json");
        assert_eq!(
            w.ok("status --json")["rows"][0]["verdict"],
            "alive",
            "{name}"
        );
        w.ok("health --agent orchestrator --session s1 --status Completed --json");
        assert_eq!(
            w.ok("status --json")["rows"][0]["verdict"],
            "completed",
            "{name}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn history_shows_steps_diffs_and_a_forks_lineage() {
    for w in both().await {
        let name = w.name();
        let w1 = "--agent implementation-worker";
        w.ok(&format!(
            "checkpoint {w1} --session s1 --phase clone_complete --set issue_number=42 --json"
        ));
        let second = w.ok(&format!(
            "checkpoint {w1} --session s1 --phase subtask_1_complete --set issue_number=42 --set completed_subtasks=[1] --json"
        ));
        let second_id = second["id"].as_str().unwrap().to_string();
        w.ok("health --agent orchestrator --session s1 --status Active --json");

        let h = w.ok("history --session s1 --json");
        let steps = h["records"].as_array().unwrap();
        assert_eq!(steps.len(), 3, "{name}: {h:#}");
        assert_eq!(h["forked_from"], Value::Null, "{name}");
        assert_eq!(steps[0]["n"], 1);
        assert_eq!(steps[0]["since_previous_secs"], Value::Null, "{name}");
        assert!(
            steps[1]["since_previous_secs"].as_i64().unwrap() >= 0,
            "{name}"
        );
        assert_eq!(steps[0]["resume_point"], "phase_2_subtasks", "{name}");
        assert_eq!(steps[1]["resume_point"], "phase_2_continue", "{name}");
        assert_eq!(steps[2]["kind"], "health", "{name}");
        assert_eq!(steps[2]["status"], "Active", "{name}");
        assert!(
            steps[1].get("changes").is_none(),
            "{name}: changes only with --diff"
        );

        let h = w.ok("history --session s1 --agent implementation-worker --diff --json");
        let steps = h["records"].as_array().unwrap();
        assert_eq!(steps.len(), 2, "{name}: the agent filter: {h:#}");
        assert_eq!(
            steps[1]["changes"],
            json!([{"op": "added", "path": "/completed_subtasks", "new": [1]}]),
            "{name}"
        );

        // Fork the newest checkpoint, move on in the fork, and see where it came from.
        let forked =
            w.ok("fork --session s1 --agent implementation-worker --new-session s2 --json");
        assert_eq!(
            forked["record"]["parent"],
            second_id.as_str(),
            "{name}: {forked:#}"
        );
        assert_eq!(forked["record"]["session"], "s2", "{name}");
        assert_eq!(
            forked["record"]["data"],
            json!({"issue_number": 42, "completed_subtasks": [1]})
        );
        w.ok(&format!(
            "checkpoint {w1} --session s2 --phase subtask_2_complete --set issue_number=43 --set completed_subtasks=[1,2] --json"
        ));
        let h = w.ok("history --session s2 --diff --json");
        assert_eq!(h["forked_from"]["session"], "s1", "{name}: {h:#}");
        assert_eq!(h["forked_from"]["record_id"], second_id.as_str(), "{name}");
        assert_eq!(h["forked_from"]["phase"], "subtask_1_complete", "{name}");
        let steps = h["records"].as_array().unwrap();
        assert_eq!(steps[0]["forked_from"]["session"], "s1", "{name}");
        assert_eq!(
            steps[0]["changes"],
            json!([]),
            "{name}: the fork carries the state as is"
        );
        assert_eq!(
            steps[1]["changes"],
            json!([
                {"op": "added", "path": "/completed_subtasks/1", "new": 2},
                {"op": "changed", "path": "/issue_number", "old": 42, "new": 43},
            ]),
            "{name}"
        );
        let text = stdout(&w.run("history --session s2 --diff"));
        assert!(
            text.starts_with("session s2, forked from session s1 at record "),
            "{name}: {text}"
        );
        assert!(text.contains("~ /issue_number: 42 -> 43"), "{name}: {text}");
        let resume = w.ok("resume --agent implementation-worker --session s2 --json");
        assert_eq!(resume["phase"], "subtask_2_complete", "{name}");

        // Fork at an older record, and the refusals.
        let first_id = w.ok("history --session s1 --json")["records"][0]["record_id"]
            .as_str()
            .unwrap()
            .to_string();
        let at = w.ok_args(&[
            "fork",
            "--session",
            "s1",
            "--at",
            &first_id,
            "--new-session",
            "s3",
            "--json",
        ]);
        assert_eq!(at["record"]["phase"], "clone_complete", "{name}");
        assert_eq!(at["record"]["parent"], first_id.as_str(), "{name}");
        w.ok("checkpoint --agent reviewer --session s1 --phase reviewed --json");
        let several = w.run("fork --session s1 --new-session s4");
        assert_eq!(
            code(&several),
            65,
            "{name}: two agents in s1: {}",
            stderr(&several)
        );
        assert!(
            stderr(&several).contains("by naming the agent"),
            "{name}: {}",
            stderr(&several)
        );
        let missing = w.run("fork --session nope --new-session s5");
        assert_eq!(code(&missing), 65, "{name}");
        let health_id = w.ok("history --session s1 --json")["records"][2]["record_id"]
            .as_str()
            .unwrap()
            .to_string();
        let health = w.run_args(&words(&format!(
            "fork --session s1 --at {health_id} --new-session s6"
        )));
        assert_eq!(code(&health), 65, "{name}: {}", stderr(&health));
        assert!(
            stderr(&health).contains("[HEALTH]"),
            "{name}: {}",
            stderr(&health)
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn handoff_and_context_drift_round_trip() {
    for w in both().await {
        let name = w.name();
        let ctx = w.d().join("STATUS.md");
        std::fs::write(&ctx, "# Status\nphase 2 of 4\n").unwrap();
        let ctx_path = ctx.display().to_string();
        let posted = w.ok_args(&[
            "checkpoint",
            "--agent",
            "w",
            "--session",
            "s1",
            "--phase",
            "clone_complete",
            "--next",
            "run the integration tests",
            "--blocker",
            "waiting on review from @alice",
            "--blocker",
            "CI is red on main",
            "--context-file",
            &ctx_path,
            "--json",
        ]);
        let resume_ctx = format!("resume --agent w --session s1 --context-file {ctx_path} --json");
        let hash = posted["record"]["context_hash"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            hash.starts_with("sha256:") && hash.len() == 7 + 16,
            "{name}: {hash}"
        );
        let body = w.bodies().pop().unwrap();
        assert!(
            body.contains(
                "\nNext: run the integration tests\nBlocker: waiting on review from @alice\n\
                 Blocker: CI is red on main\nContext-Hash: sha256:"
            ),
            "{name}: what a human reads in the thread:\n{body}"
        );

        let resume = w.ok(&resume_ctx);
        assert_eq!(resume["next"], "run the integration tests", "{name}");
        assert_eq!(
            resume["blockers"],
            json!(["waiting on review from @alice", "CI is red on main"]),
            "{name}"
        );
        assert_eq!(resume["context_drift"], false, "{name}");
        std::fs::write(&ctx, "# Status\nphase 3 of 4\n").unwrap();
        let resume = w.ok(&resume_ctx);
        assert_eq!(resume["context_drift"], true, "{name}");
        let human = stdout(&w.run_args(&words(&format!(
            "resume --agent w --session s1 --context-file {ctx_path}"
        ))));
        assert!(
            human.contains("next:         run the integration tests"),
            "{name}: {human}"
        );
        assert!(human.contains("DRIFTED"), "{name}: {human}");
        let plain = w.ok("resume --agent w --session s1 --json");
        assert_eq!(
            plain["context_drift"],
            Value::Null,
            "{name}: only asked for with a file"
        );

        let rows = w.ok("status --json")["rows"].clone();
        assert_eq!(
            rows[0]["blockers"].as_array().unwrap().len(),
            2,
            "{name}: {rows:#}"
        );
        assert_eq!(rows[0]["next"], "run the integration tests", "{name}");
        let table = stdout(&w.run("status"));
        assert!(
            table.contains("waiting on review from @alice; CI is red on main"),
            "{name}: {table}"
        );

        // A later checkpoint without the lines clears them; a checkpoint with no hash drifts.
        w.ok("checkpoint --agent w --session s1 --phase subtask_1_complete --json");
        let resume = w.ok(&resume_ctx);
        assert_eq!(resume["blockers"], json!([]), "{name}: {resume:#}");
        assert_eq!(resume["next"], Value::Null, "{name}: {resume:#}");
        assert_eq!(
            resume["context_drift"], true,
            "{name}: no recorded hash, no promise"
        );

        // A blocker cannot forge a header line.
        let args: Vec<String> = [
            "checkpoint",
            "--agent",
            "w",
            "--session",
            "s1",
            "--phase",
            "p",
            "--blocker",
            "x\nPhase: evil",
        ]
        .map(String::from)
        .to_vec();
        let forged = w.run_args(&args);
        assert_eq!(code(&forged), 65, "{name}: {}", stderr(&forged));
        assert!(
            stderr(&forged).contains("blocker"),
            "{name}: {}",
            stderr(&forged)
        );
    }
}

#[cfg(unix)]
#[test]
fn a_context_file_that_is_a_fifo_or_a_device_is_refused_not_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fifo = d.join("STATUS.fifo");
    mkfifo(&fifo);
    let posted = run_guarded(d, "checkpoint --agent w --session s --phase p");
    assert!(posted.status.success(), "{}", stderr(&posted));
    for (verb, path) in [
        (
            "checkpoint --agent w --session s --phase q",
            fifo.display().to_string(),
        ),
        ("resume --agent w --session s", fifo.display().to_string()),
        (
            "checkpoint --agent w --session s --phase q",
            "/dev/zero".to_string(),
        ),
    ] {
        let out = run_guarded(d, &format!("{verb} --context-file {path}"));
        assert_eq!(
            out.status.code(),
            Some(74),
            "{verb} {path}: {}",
            stderr(&out)
        );
        assert!(
            stderr(&out).contains("is not a regular file"),
            "{verb} {path}: {}",
            stderr(&out)
        );
    }
    let resume = run_guarded(d, "resume --agent w --session s --json");
    let answer: serde_json::Value = serde_json::from_slice(&resume.stdout).unwrap();
    assert_eq!(answer["phase"], "p", "a refused checkpoint wrote nothing");
}

#[test]
fn history_says_forked_only_for_a_session_that_began_as_a_fork() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    guarded_json(d, "checkpoint --agent w --session s --phase p1 --set n=1");
    guarded_json(d, "fork --session s --new-session s2");
    guarded_json(d, "checkpoint --agent w --session s2 --phase p2 --set n=2");
    let s2 = guarded_json(d, "history --session s2");
    assert_eq!(
        s2["forked_from"]["session"], "s",
        "s2 began as a fork of s: {s2}"
    );
    // A fork back into s, which had checkpoints of its own long before, is refused now (it
    // would send s's agent back to s2's state)...
    let refused = run_guarded(d, "fork --session s2 --new-session s --json");
    assert_eq!(refused.status.code(), Some(65), "{}", stderr(&refused));
    // ...but an older forgestate wrote such records: a checkpoint of s naming s2's in `Parent:`.
    let origin = s2["records"][0]["record_id"].as_str().unwrap().to_string();
    let mut late = forgestate::format::Record::checkpoint("w", "s", "p2", json!({"n": 2})).unwrap();
    late.parent = Some(origin);
    let body = forgestate::format::Renderer::embedded()
        .unwrap()
        .render(&late)
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        let local = forgestate::Client::local(d.join("st")).unwrap();
        local.thread_raw().append(&body).await.unwrap();
    });
    let s = guarded_json(d, "history --session s");
    assert_eq!(
        s["forked_from"],
        serde_json::Value::Null,
        "s was never forked: {s}"
    );
    let records = s["records"].as_array().unwrap();
    assert_eq!(records.len(), 2, "{s}");
    assert_eq!(
        records[1]["forked_from"]["session"], "s2",
        "the record says: {s}"
    );
    let human = run_guarded(d, "history --session s");
    let first = String::from_utf8_lossy(&human.stdout)
        .lines()
        .next()
        .unwrap_or("")
        .to_string();
    assert_eq!(
        first,
        "session s",
        "{}",
        String::from_utf8_lossy(&human.stdout)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn status_fail_on_stalled_does_not_read_an_outage_as_all_clear() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("quick.toml");
    std::fs::write(
        &config,
        "[forge]\nretry_budget_secs = 1\nquick_timeout_ms = 300\nrequest_timeout_secs = 2\n",
    )
    .unwrap();
    let bin = Bin::new(dir.path())
        .coords(&fake.uri(), OWNER, REPO, BOT_TOKEN)
        .dirs()
        .env("FORGESTATE_CONFIG", config.display().to_string());
    let posted = bin.line("checkpoint --agent w --session s --phase p --json");
    assert!(posted.status.success(), "{}", stderr(&posted));
    fake.state().down = true;
    let spooled = bin.line("checkpoint --agent w --session t --phase p --json");
    assert!(spooled.status.success(), "spooled: {}", stderr(&spooled));
    let out = bin.line("status --fail-on-stalled --json");
    assert_eq!(out.status.code(), Some(75), "{}", stderr(&out));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let sessions: Vec<&str> = (rows["rows"].as_array().unwrap().iter())
        .filter_map(|r| r["session"].as_str())
        .collect();
    assert!(
        sessions.contains(&"t") && sessions.contains(&"s"),
        "the pending record, and this machine's own posted one, are still shown: {rows}"
    );
    fake.state().down = false;
    let out = bin.line("status --fail-on-stalled --json");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
