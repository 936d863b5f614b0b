//! `forgestate init` through the binary says whether it created the session thread or found it,
//! on both backends, in text and in `--json`.

use crate::{common, fake_forge};
use std::path::Path;
use std::process::Output;

use common::cli::{parse_ok, run_in, run_with, stderr, stdout, words};
use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO};
use forgestate::defaults::{LABEL, TITLE};
use serde_json::Value;

fn local(dir: &Path, line: &str) -> Output {
    run_in(dir, &words(line), None)
}

fn forge(fake: &FakeForge, dir: &Path, line: &str) -> Output {
    let uri = fake.uri();
    let cache = dir.join("cache").display().to_string();
    let env = [
        ("FORGESTATE_URL", uri.as_str()),
        ("FORGESTATE_OWNER", OWNER),
        ("FORGESTATE_REPO", REPO),
        ("FORGESTATE_TOKEN", BOT_TOKEN),
        ("XDG_CACHE_HOME", cache.as_str()),
    ];
    run_with(dir, &words(line), &env, None)
}

/// The one stdout line of a successful text-mode `init`.
fn said(out: &Output) -> String {
    assert!(out.status.success(), "{}", stderr(out));
    stdout(out).trim_end().to_string()
}

fn json(line: &str, out: &Output) -> Value {
    parse_ok(&words(line), out)
}

#[test]
fn local_init_says_created_then_found() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = d.canonicalize().unwrap().join("st").join("thread.jsonl");
    let first = said(&local(d, "init --store st"));
    assert!(
        first.starts_with(&format!("session thread created: {}", file.display())),
        "{first}"
    );
    assert!(first.contains("(records are posted as tester)"), "{first}");
    let again = said(&local(d, "init --store st"));
    assert!(
        again.starts_with(&format!("session thread found: {}", file.display())),
        "{again}"
    );
}

#[test]
fn local_init_json_has_created() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let line = "init --json --store st";
    let first = json(line, &local(d, line));
    assert_eq!(first["created"], true, "{first}");
    let file = d.canonicalize().unwrap().join("st").join("thread.jsonl");
    assert_eq!(first["thread"], file.display().to_string());
    assert_eq!(first["author"], "tester");
    let again = json(line, &local(d, line));
    assert_eq!(again["created"], false, "{again}");
    assert_eq!(again["thread"], first["thread"]);
}

#[test]
fn local_init_finds_a_thread_a_checkpoint_started() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cp = local(
        d,
        "checkpoint --store st --agent implementation-worker --session s1 --phase clone_complete",
    );
    assert!(cp.status.success(), "{}", stderr(&cp));
    let line = "init --json --store st";
    assert_eq!(json(line, &local(d, line))["created"], false);
}

#[tokio::test(flavor = "multi_thread")]
async fn forge_init_says_created_then_found() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let first = said(&forge(&fake, d, "init"));
    let issues = fake.open_issues_titled(TITLE);
    assert_eq!(issues.len(), 1, "init created the session issue");
    let url = format!("/{OWNER}/{REPO}/issues/{}", issues[0]);
    assert!(first.starts_with("session thread created: "), "{first}");
    assert!(first.contains(&url), "{first}");
    // A fresh cache directory: found by discovery, not by the cache.
    let other = tempfile::tempdir().unwrap();
    let again = said(&forge(&fake, other.path(), "init"));
    assert!(again.starts_with("session thread found: "), "{again}");
    assert!(again.contains(&url), "{again}");
    assert_eq!(fake.open_issues_titled(TITLE), issues, "no second issue");
}

#[tokio::test(flavor = "multi_thread")]
async fn forge_init_json_says_found_for_an_existing_issue() {
    let fake = FakeForge::start().await;
    let label = fake.add_label(LABEL);
    let existing = fake.add_issue(TITLE, &[label], false);
    let dir = tempfile::tempdir().unwrap();
    let line = "init --json";
    let found = json(line, &forge(&fake, dir.path(), line));
    assert_eq!(found["created"], false, "{found}");
    let thread = found["thread"].as_str().unwrap_or_default();
    assert!(
        thread.ends_with(&format!("/{OWNER}/{REPO}/issues/{existing}")),
        "{thread}"
    );
    assert_eq!(found["author"], "ca-bot");
    assert_eq!(
        fake.open_issues_titled(TITLE),
        [existing],
        "nothing created"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn forge_init_json_says_created_for_a_new_issue() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let line = "init --json";
    let made = json(line, &forge(&fake, dir.path(), line));
    assert_eq!(made["created"], true, "{made}");
    let issues = fake.open_issues_titled(TITLE);
    assert_eq!(issues.len(), 1);
    let thread = made["thread"].as_str().unwrap_or_default();
    assert!(
        thread.ends_with(&format!("/issues/{}", issues[0])),
        "{thread}"
    );
}
