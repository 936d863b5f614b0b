//! Secrets never reach the terminal: a token typed into the wrong flag, a URL with a password,
//! a git remote with credentials are all echoed as `[REDACTED]` in messages, log lines and
//! `--json` error documents. And an answer that cannot be written to stdout is an error.

use crate::common;
use std::process::{Command, Stdio};

use crate::fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO};
use common::cli::store_args;
use common::cli::{Bin, stderr, stdout};
use serde_json::{Value, json};
use std::path::Path;

const TOKEN: &str = "0123456789abcdef0123456789abcdef01234567";

fn everything(out: &std::process::Output) -> String {
    format!("{}{}", stdout(out), stderr(out))
}

#[test]
fn a_token_typed_into_a_flag_is_not_echoed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bin = Bin::new(d).env("FORGESTATE_TOKEN", TOKEN);
    // The key was forgotten: `--set VALUE` is a usage error that quotes the value.
    for args in [
        vec![
            "--store",
            "st",
            "checkpoint",
            "--agent",
            "a",
            "--session",
            "s",
            "--phase",
            "p",
            "--set",
            TOKEN,
            "--json",
        ],
        vec!["--store", "st", "list", "--since", TOKEN, "--json"],
    ] {
        let args: Vec<String> = args.into_iter().map(str::to_string).collect();
        let out = bin.run(&args);
        assert!(!out.status.success());
        let all = everything(&out);
        assert!(!all.contains(TOKEN), "{args:?}: {all}");
        assert!(all.contains("[REDACTED]"), "{args:?}: {all}");
    }
}

#[test]
fn a_password_in_a_url_is_not_echoed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = Bin::new(d)
        .env("FORGESTATE_TOKEN", TOKEN)
        .env("FORGESTATE_OWNER", "o")
        .env("FORGESTATE_REPO", "r")
        .line("--url bob:hunter2pw@forge.example.com resume --agent a --session s --json");
    assert_eq!(out.status.code(), Some(78), "{}", stderr(&out));
    assert!(
        !everything(&out).contains("hunter2pw"),
        "{}",
        everything(&out)
    );
}

#[test]
fn a_git_remote_with_credentials_is_not_logged() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for args in [
        vec!["init", "-q"],
        vec![
            "remote",
            "add",
            "origin",
            "https://oauth2:s3cr3tPassw0rd@127.0.0.1:9/acme/app.git",
        ],
    ] {
        let ok = Command::new("git")
            .arg("-C")
            .arg(d)
            .args(&args)
            .output()
            .unwrap();
        assert!(ok.status.success(), "{ok:?}");
    }
    // Nothing answers there: fail fast.
    std::fs::write(
        d.join("forgestate.toml"),
        "[forge]\nretry_budget_secs = 0\n",
    )
    .unwrap();
    let out = Bin::new(d)
        .dirs()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("FORGESTATE_TOKEN", TOKEN)
        .line("resume --agent a --session s -v --json");
    let all = everything(&out);
    assert!(all.contains("origin"), "the inference is logged: {all}");
    assert!(!all.contains("s3cr3tPassw0rd"), "{all}");
}

#[cfg(target_os = "linux")]
#[test]
fn an_answer_that_cannot_be_written_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let full = std::fs::File::options()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = Bin::new(d)
        .command(&[
            "--store".into(),
            "st".into(),
            "resume".into(),
            "--agent".into(),
            "a".into(),
            "--session".into(),
            "s".into(),
            "--json".into(),
        ])
        .stdout(Stdio::from(full))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(74), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot write the answer"),
        "{}",
        stderr(&out)
    );
}

#[cfg(target_os = "linux")]
#[test]
fn endless_input_is_refused_not_read_until_memory_runs_out() {
    let dir = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let out = Bin::new(dir.path())
        .line("--store st checkpoint --agent a --session s --phase p --data-file /dev/zero --json");
    assert_eq!(out.status.code(), Some(65), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("/dev/zero is over"),
        "{}",
        stderr(&out)
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_in_the_forge_urls_query_is_refused_and_never_echoed() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let url = format!("{}/?access_token={BOT_TOKEN}", fake.uri());
    let bin = Bin::new(dir.path())
        .coords(&url, OWNER, REPO, BOT_TOKEN)
        .dirs();
    for line in [
        "doctor --json",
        "checkpoint --agent w --session s --phase p --json",
        "status --json",
    ] {
        let out = bin.line(line);
        let all = format!("{}{}", stdout(&out), stderr(&out));
        assert!(!all.contains(BOT_TOKEN), "{line} shows the token: {all}");
        assert!(all.contains("query"), "{line} says what to fix: {all}");
        assert_ne!(out.status.code(), Some(0), "{line}: {all}");
    }
    let files = common::files_under(dir.path());
    for f in files {
        let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
        assert!(!text.contains(BOT_TOKEN), "{} holds the token", f.display());
        assert!(
            !f.display().to_string().contains(BOT_TOKEN),
            "{}",
            f.display()
        );
    }
}

/// Posts `text` as the `note` of a checkpoint on a local store and returns the stored note.
fn stored_note(dir: &Path, text: &str) -> String {
    let data = json!({ "note": text }).to_string();
    let out = Bin::new(dir).run(&store_args(
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
    let out = Bin::new(dir).run(&store_args(
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
