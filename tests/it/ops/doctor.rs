//! `doctor` end to end: each broken setup fails its own check (a bad token, a missing
//! repository, a missing session issue, an unreachable forge), a good one passes, and the
//! local store skips the forge checks.

use crate::{common, fake_forge};
use std::path::Path;
use std::process::Output;

use common::cli::{Bin, stderr, stdout, words};
use fake_forge::{BOT_TOKEN, FakeForge, OPS_TOKEN, OWNER, REPO, session};
use serde_json::Value;

fn doctor(url: &str, repo: &str, token: &str, dir: &Path) -> (Output, Vec<Value>) {
    let out = Bin::new(dir)
        .forge(url, OWNER, repo, token)
        .run(&words("doctor --json"));
    let checks: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {} {}", stdout(&out), stderr(&out)));
    assert_eq!(
        checks["failed"],
        checks["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["ok"] == false)
    );
    (out, checks["checks"].as_array().unwrap().clone())
}

/// The status of the check named `name`.
fn status<'a>(checks: &'a [Value], name: &str) -> &'a str {
    let check = checks
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no check {name:?} in {checks:#?}"));
    check["status"].as_str().unwrap()
}

fn detail<'a>(checks: &'a [Value], name: &str) -> &'a str {
    let check = checks.iter().find(|c| c["name"] == name).unwrap();
    check["detail"].as_str().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_good_setup_passes_every_check() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    fake.add_comment(n, "ca-bot", "hello");
    let dir = tempfile::tempdir().unwrap();
    let (out, checks) = doctor(&fake.uri(), REPO, BOT_TOKEN, dir.path());
    assert_eq!(out.status.code(), Some(0), "{checks:#?}");
    assert!(detail(&checks, "forge").starts_with("Forgejo 15.0.3"));
    assert!(detail(&checks, "token").contains("ca-bot"));
    let issue = detail(&checks, "session issue");
    assert!(
        issue.starts_with(&format!("#{n} ")) && issue.ends_with("(1 comments)"),
        "{issue}"
    );
    assert_eq!(status(&checks, "label"), "ok");
    assert_eq!(status(&checks, "clock"), "ok");
    assert_eq!(status(&checks, "outbox"), "ok");
    assert_eq!(
        status(&checks, "write access"),
        "warn",
        "without read:repository the permissions are unknown"
    );
    assert!(checks.iter().all(|c| c["ok"] == true), "{checks:#?}");

    let (_, ops) = doctor(&fake.uri(), REPO, OPS_TOKEN, dir.path());
    assert_eq!(status(&ops, "write access"), "ok", "{ops:#?}");
    let writes = fake
        .requests()
        .await
        .iter()
        .filter(|r| r.method.as_str() != "GET")
        .count();
    assert_eq!(writes, 0, "doctor never writes");

    let human = Bin::new(dir.path())
        .forge(&fake.uri(), OWNER, REPO, BOT_TOKEN)
        .line("doctor");
    let text = stdout(&human);
    assert!(text.contains(&format!("✓ session issue: #{n} ")), "{text}");
    assert!(text.contains("! write access: unknown"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bad_token_a_missing_repository_and_a_missing_issue_are_told_apart() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let unknown = "0000000000000000000000000000000000000000";

    let (out, bad_token) = doctor(&fake.uri(), REPO, unknown, d);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(status(&bad_token, "forge"), "ok", "the forge answered");
    assert_eq!(status(&bad_token, "token"), "fail");
    assert_eq!(status(&bad_token, "repository"), "skip");
    assert!(
        !stdout(&out).contains(unknown) && !stderr(&out).contains(unknown),
        "the token is never printed"
    );

    let (out, no_repo) = doctor(&fake.uri(), "nope", BOT_TOKEN, d);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(status(&no_repo, "token"), "ok");
    assert_eq!(status(&no_repo, "repository"), "fail", "{no_repo:#?}");
    assert_eq!(status(&no_repo, "session issue"), "skip");

    let (out, no_issue) = doctor(&fake.uri(), REPO, BOT_TOKEN, d);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(status(&no_issue, "repository"), "ok");
    assert_eq!(status(&no_issue, "label"), "fail");
    assert_eq!(status(&no_issue, "session issue"), "fail");
    let fix = no_issue
        .iter()
        .find(|c| c["name"] == "session issue")
        .unwrap()["fix"]
        .clone();
    assert!(fix.as_str().unwrap().contains("forgestate init"), "{fix}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unreachable_forge_and_a_skewed_clock() {
    let fake = FakeForge::start().await;
    // The forge's whole clock is behind (its Date and the times it stamps, the session issue's
    // included); a Date behind its own stamps is the proxy case (tests/harden_clock.rs).
    fake.state().clock_offset = -300;
    session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let (out, skewed) = doctor(&fake.uri(), REPO, BOT_TOKEN, dir.path());
    assert_eq!(out.status.code(), Some(0), "a skewed clock warns");
    assert_eq!(status(&skewed, "clock"), "warn");
    assert!(detail(&skewed, "clock").contains("ahead of the forge"));

    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let (out, down) = doctor(&url, REPO, BOT_TOKEN, dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(status(&down, "forge"), "fail");
    assert_eq!(status(&down, "token"), "skip");
}

#[test]
fn the_local_store_skips_the_forge_checks() {
    let dir = tempfile::tempdir().unwrap();
    let out = Bin::new(dir.path()).line("--store st doctor --json");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["failed"], false);
    let checks: Vec<Value> = doc["checks"].as_array().unwrap().clone();
    assert_eq!(status(&checks, "forge"), "skip");
    assert_eq!(status(&checks, "store"), "warn", "no thread yet");
    assert_eq!(status(&checks, "config"), "ok");
    for c in &checks {
        let keys: Vec<&str> = c.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            ["detail", "fix", "name", "ok", "status"],
            "stable shape"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn doctor_names_the_head_and_the_members_of_the_session_thread() {
    let fake = FakeForge::start().await;
    let old = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let label = fake.state().labels[0].id;
    let new = fake.add_issue(forgestate::defaults::TITLE, &[label], false);
    fake.state().issue_mut(new).unwrap().body = format!("Previous session issue: #{old}\n");
    fake.set_closed(old, true);
    let (_, checks) = doctor(&fake.uri(), REPO, BOT_TOKEN, dir.path());
    assert_eq!(status(&checks, "session thread"), "ok", "{checks:#?}");
    assert_eq!(
        detail(&checks, "session thread"),
        format!("head #{new}; members #{old} (closed), #{new} (open)")
    );
    // Reopened, the old issue is a member that is not the head: a warning, not a new head.
    fake.set_closed(old, false);
    let (_, checks) = doctor(&fake.uri(), REPO, BOT_TOKEN, dir.path());
    assert_eq!(status(&checks, "session thread"), "warn", "{checks:#?}");
    assert!(detail(&checks, "session thread").starts_with(&format!("head #{new};")));
    assert!(detail(&checks, "session issue").starts_with(&format!("#{new} ")));
}
