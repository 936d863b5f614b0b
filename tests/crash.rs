//! Crash safety: `forgestate checkpoint` killed with SIGKILL at random moments while the forge is
//! down, and many writers and flushers at once against a forge that fails 30% of requests.

#![cfg(unix)]

mod common;
mod fake_forge;

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::cli::{stderr, words};
use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO};
use forgestate::config::DEFAULT_TITLE as TITLE;
use forgestate::format::parse;
use serde_json::Value;

fn command(uri: &str, dir: &Path, line: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_forgestate"));
    cmd.args(words(line))
        .current_dir(dir)
        .env_clear()
        .env("HOME", dir)
        .env("FORGESTATE_URL", uri)
        .env("FORGESTATE_OWNER", OWNER)
        .env("FORGESTATE_REPO", REPO)
        .env("FORGESTATE_TOKEN", BOT_TOKEN)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env("XDG_STATE_HOME", dir.join("state"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

fn outbox_entries(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.join("state/forgestate/outbox")];
    while let Some(p) = stack.pop() {
        if p.is_dir() {
            stack.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
        } else if p.extension().is_some_and(|e| e == "rec") {
            out.push(p);
        }
    }
    out
}

/// Record id -> how many comments in the issue carry it.
fn ids_in_thread(fake: &FakeForge, issue: u64) -> BTreeMap<String, usize> {
    let mut ids = BTreeMap::new();
    for c in fake.comments_on(issue) {
        let record = parse(&c.body).expect("only records are posted");
        *ids.entry(record.id.unwrap()).or_insert(0) += 1;
    }
    ids
}

fn setup(fake: &FakeForge, dir: &Path, config: &str) -> u64 {
    std::fs::write(dir.join("forgestate.toml"), config).unwrap();
    let label = fake.add_label("Type/Automation");
    fake.add_issue(TITLE, &[label], false)
}

#[tokio::test(flavor = "multi_thread")]
async fn sigkilled_checkpoints_lose_nothing_that_exited_zero_and_flush_posts_each_once() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let issue = setup(
        &fake,
        d,
        "[forge]\nretry_budget_secs = 1\nquick_timeout_ms = 300\n",
    );
    fake.state().down = true;

    let mut survived = Vec::new();
    let (mut kills, mut rng) = (0, 0x9e37_79b9_7f4a_7c15_u64);
    for i in 0..400 {
        if kills >= 60 {
            break;
        }
        let line = format!("checkpoint --agent w --session s --phase k{i} --set i={i} --json");
        let mut child = command(&fake.uri(), d, &line).spawn().unwrap();
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        std::thread::sleep(Duration::from_micros(rng % 15_000));
        let _ = child.kill(); // SIGKILL; fails harmlessly when the process already exited
        let out = child.wait_with_output().unwrap();
        if out.status.signal() == Some(9) {
            kills += 1;
        } else {
            assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
            let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
            survived.push(doc["id"].as_str().unwrap().to_string());
        }
    }
    assert!(kills >= 50, "only {kills} kills landed");

    let entries = outbox_entries(d);
    for path in &entries {
        let body = std::fs::read_to_string(path).unwrap();
        parse(&body).unwrap_or_else(|e| panic!("{} is not a complete record: {e}", path.display()));
    }
    assert!(entries.len() >= survived.len());

    fake.state().down = false;
    let out = command(&fake.uri(), d, "flush").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(outbox_entries(d).is_empty());
    let ids = ids_in_thread(&fake, issue);
    assert_eq!(ids.len(), entries.len(), "every spooled record was posted");
    assert!(
        ids.values().all(|&n| n == 1),
        "posted exactly once: {ids:?}"
    );
    for id in &survived {
        assert_eq!(
            ids.get(id),
            Some(&1),
            "record {id} exited 0, so it must be in the thread"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn sixteen_writers_and_two_flushers_against_a_flaky_forge_post_each_record_once() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let issue = setup(
        &fake,
        d,
        "[forge]\nretry_budget_secs = 3\nquick_timeout_ms = 500\nrequest_timeout_secs = 2\n",
    );
    // Warm the cache (the issue number) so the run is about posting, not discovery.
    let out = command(&fake.uri(), d, "init").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    fake.state().fail_rate = 0.3;

    let uri = fake.uri();
    let results: Vec<(bool, std::process::Output)> = std::thread::scope(|s| {
        let mut handles = Vec::new();
        for i in 0..16 {
            let uri = uri.clone();
            handles.push(s.spawn(move || {
                let line =
                    format!("checkpoint --agent w{i} --session s --phase p --set i={i} --json");
                (true, command(&uri, d, &line).output().unwrap())
            }));
        }
        for _ in 0..2 {
            let uri = uri.clone();
            handles.push(s.spawn(move || (false, command(&uri, d, "flush").output().unwrap())));
        }
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut ids = Vec::new();
    for (is_checkpoint, out) in &results {
        if *is_checkpoint {
            assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
            assert!(
                !stderr(out).contains("forgestate: error:"),
                "transient trouble is not an error to fix: {}",
                stderr(out)
            );
            let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
            ids.push(doc["id"].as_str().unwrap().to_string());
        }
    }
    let (failed, ambiguous) = {
        let s = fake.state();
        (s.failed, s.committed_then_failed)
    };
    assert!(
        failed >= 5 && ambiguous >= 1,
        "the forge really was flaky: {failed} failures, {ambiguous} ambiguous"
    );
    fake.state().fail_rate = 0.0;
    let out = command(&fake.uri(), d, "flush").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(outbox_entries(d).is_empty());

    let in_thread = ids_in_thread(&fake, issue);
    assert_eq!(in_thread.len(), 16, "{in_thread:?}");
    for id in &ids {
        assert_eq!(in_thread.get(id), Some(&1), "record {id}: exactly once");
    }
}
