//! End-to-end: the real `forgestate` binary against the fake Forgejo on 127.0.0.1.

use crate::{common, fake_forge};
use std::path::Path;
use std::process::Output;

use common::cli::{Bin, parse_ok, stderr, words};
use common::files_under;
use fake_forge::{BOT_TOKEN, FakeForge, MALLORY_TOKEN, OWNER, REPO, crowded_with_unlabelled_decoy};
use forgestate::config::DEFAULT_TITLE as TITLE;
use serde_json::{Value, json};

fn forgestate(fake: &FakeForge, dir: &Path, token: &str, line: &str) -> Output {
    forgestate_in(fake, dir, token, REPO, line)
}

/// [`forgestate`] for another repository of the fake's owner.
fn forgestate_in(fake: &FakeForge, dir: &Path, token: &str, repo: &str, line: &str) -> Output {
    Bin::new(dir)
        .coords(&fake.uri(), OWNER, repo, token)
        .env("XDG_CACHE_HOME", dir.join("cache").display().to_string())
        .line(line)
}

fn ok_json(fake: &FakeForge, dir: &Path, line: &str) -> Value {
    parse_ok(&words(line), &forgestate(fake, dir, BOT_TOKEN, line))
}

#[tokio::test(flavor = "multi_thread")]
async fn init_post_and_read_back_through_the_binary() {
    let fake = FakeForge::start().await;
    crowded_with_unlabelled_decoy(&fake);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let init = ok_json(&fake, d, "init --json");
    assert_eq!(
        fake.open_issues_titled(TITLE).len(),
        2,
        "one new session issue beside the decoy"
    );
    let thread = init["thread"].as_str().unwrap().to_string();
    assert_eq!(init["author"], "ca-bot", "init says whose records count");
    assert_eq!(
        ok_json(&fake, d, "init --json")["thread"],
        thread.as_str(),
        "init twice: one issue"
    );
    assert_eq!(fake.open_issues_titled(TITLE).len(), 2);

    let posted = ok_json(
        &fake,
        d,
        "checkpoint --agent implementation-worker --session s1 --phase subtask_4_complete --set issue_number=42 --json",
    );
    assert!(
        posted["url"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{thread}#issuecomment-")),
        "{posted}"
    );
    ok_json(
        &fake,
        d,
        "health --agent orchestrator --session s1 --metrics {\"active_workers\":2} --json",
    );

    let resume = ok_json(
        &fake,
        d,
        "resume --agent implementation-worker --session s1 --json",
    );
    assert_eq!(resume["resume_point"], "phase_2_continue");
    assert_eq!(resume["data"], json!({"issue_number": 42}));
    assert_eq!(resume["checkpoint"]["comment"]["author"], "ca-bot");
    assert_eq!(
        ok_json(&fake, d, "latest --json")["record"]["kind"],
        "health"
    );
    let list = ok_json(&fake, d, "list --json");
    assert_eq!(list["records"].as_array().unwrap().len(), 2);
    let human = forgestate(&fake, d, BOT_TOKEN, "list");
    assert!(String::from_utf8_lossy(&human.stdout).contains("subtask_4_complete"));
    assert!(
        !stderr(&human).contains("local store"),
        "no local-store note with a forge"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn steady_state_checkpoint_is_exactly_one_request() {
    let fake = FakeForge::start().await;
    crowded_with_unlabelled_decoy(&fake);
    let dir = tempfile::tempdir().unwrap();
    ok_json(&fake, dir.path(), "init --json");
    ok_json(
        &fake,
        dir.path(),
        "checkpoint --agent a --session s --phase one --json",
    );
    let before = fake.requests().await.len();
    ok_json(
        &fake,
        dir.path(),
        "checkpoint --agent a --session s --phase two --json",
    );
    let after = fake.requests().await;
    let made: Vec<String> = after[before..]
        .iter()
        .map(|r| format!("{} {}", r.method, r.url.path()))
        .collect();
    assert_eq!(
        made,
        [format!(
            "POST /api/v1/repos/{OWNER}/{REPO}/issues/14/comments"
        )]
    );
    let ua = after
        .last()
        .unwrap()
        .headers
        .get("user-agent")
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    assert_eq!(ua, format!("forgestate/{}", env!("CARGO_PKG_VERSION")));
}

#[tokio::test(flavor = "multi_thread")]
async fn verbose_output_says_whether_the_forge_is_forgejo_or_gitea() {
    for (version, said) in [
        (
            "15.0.3+gitea-1.22.0",
            "runs Forgejo 15.0.3 (Gitea 1.22.0 compatible)",
        ),
        ("1.23.0", "runs Gitea 1.23.0"),
    ] {
        let fake = FakeForge::start().await;
        fake.state().version = version.into();
        let dir = tempfile::tempdir().unwrap();
        ok_json(&fake, dir.path(), "init --json");
        // A steady-state checkpoint (issue number cached) still says it under -v...
        let line = "-v checkpoint --agent a --session s --phase one";
        let out = forgestate(&fake, dir.path(), BOT_TOKEN, line);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stderr(&out).contains(said), "{version}: {}", stderr(&out));
        // ...and only under -v, where the extra request is wanted.
        let line = "checkpoint --agent a --session s --phase two";
        let out = forgestate(&fake, dir.path(), BOT_TOKEN, line);
        assert!(!stderr(&out).contains(said), "{}", stderr(&out));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_forged_checkpoint_is_listed_as_untrusted_and_ignored() {
    let fake = FakeForge::start().await;
    crowded_with_unlabelled_decoy(&fake);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok_json(
        &fake,
        d,
        "checkpoint --agent implementation-worker --session s1 --phase clone_complete --set branch_name=real --json",
    );
    let mallory_dir = tempfile::tempdir().unwrap();
    // Mallory's forgestate trusts the bot, or it would not take the bot's issue for the thread.
    let config = mallory_dir.path().join("mallory.toml");
    std::fs::write(&config, "trusted_authors = [\"ca-bot\"]\n").unwrap();
    let forged = Bin::new(mallory_dir.path())
        .coords(&fake.uri(), OWNER, REPO, MALLORY_TOKEN)
        .env(
            "XDG_CACHE_HOME",
            mallory_dir.path().join("cache").display().to_string(),
        )
        .env("FORGESTATE_CONFIG", config.display().to_string())
        .line(
            "checkpoint --agent implementation-worker --session s1 --phase pr_created --set branch_name=evil --json",
        );
    assert!(forged.status.success(), "{}", stderr(&forged));
    let resume = ok_json(
        &fake,
        d,
        "resume --agent implementation-worker --session s1 --json",
    );
    assert_eq!(resume["phase"], "clone_complete");
    assert_eq!(resume["data"]["branch_name"], "real");
    let list = ok_json(&fake, d, "list --invalid --json");
    assert_eq!(list["invalid"][0]["code"], "untrusted");
    assert_eq!(list["invalid"][0]["comment"]["author"], "mallory");
}

#[tokio::test(flavor = "multi_thread")]
async fn two_concurrent_init_processes_leave_one_open_issue() {
    for _ in 0..3 {
        let fake = FakeForge::start().await;
        fake.add_label(forgestate::defaults::LABEL);
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (fa, fb) = (&fake, &fake);
        let (ra, rb) = std::thread::scope(|s| {
            let ta = s.spawn(|| forgestate(fa, a.path(), BOT_TOKEN, "init --json"));
            let tb = s.spawn(|| forgestate(fb, b.path(), BOT_TOKEN, "init --json"));
            (ta.join().unwrap(), tb.join().unwrap())
        });
        let (ja, jb) = (parse_ok(&words("init"), &ra), parse_ok(&words("init"), &rb));
        assert_eq!(ja["thread"], jb["thread"]);
        assert_eq!(fake.open_issues_titled(TITLE).len(), 1);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_token_never_reaches_output_even_when_tracing() {
    let fake = FakeForge::start().await;
    crowded_with_unlabelled_decoy(&fake);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for line in [
        "init -vvv",
        "checkpoint --agent a --session s --phase p -vvv",
        "list --invalid -vvv --json",
        "resume --agent a --session s -vvv",
    ] {
        let out = forgestate(&fake, d, BOT_TOKEN, line);
        assert!(out.status.success(), "{line}: {}", stderr(&out));
        for stream in [&out.stdout, &out.stderr] {
            assert!(
                !String::from_utf8_lossy(stream).contains(BOT_TOKEN),
                "{line} printed the token"
            );
        }
    }
    let bad = forgestate(
        &fake,
        d,
        "0000000000000000000000000000000000000000",
        "list -vvv",
    );
    assert_eq!(bad.status.code(), Some(78));
    for entry in files_under(d) {
        let bytes = std::fs::read(&entry).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(BOT_TOKEN),
            "{} holds the token",
            entry.display()
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_token_missing_scope_and_missing_repo_are_one_line_exit_78_for_every_read_and_init() {
    const BAD: &str = "ffffffffffffffffffffffffffffffffffffffff";
    let fake = FakeForge::start().await;
    crowded_with_unlabelled_decoy(&fake);
    let dir = tempfile::tempdir().unwrap();
    ok_json(&fake, dir.path(), "init --json");
    // (case, token, repo, what the one line must name)
    let cases = [
        ("bad token", BAD, REPO, "FORGESTATE_TOKEN"),
        ("missing scope", fake_forge::READER_TOKEN, REPO, "scope"),
        ("missing repo", BOT_TOKEN, "no-such-repo", "owner and repo"),
    ];
    for (case, token, repo, fix) in cases {
        for verb in ["init", "latest", "resume --agent a --session s", "list"] {
            let out = forgestate_in(&fake, dir.path(), token, repo, verb);
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(78), "{case}, {verb}: {err}");
            assert_eq!(
                err.lines().count(),
                1,
                "{case}, {verb}: one line, got {err:?}"
            );
            assert!(
                err.contains(fix),
                "{case}, {verb}: should name {fix:?}: {err}"
            );
            assert!(out.stdout.is_empty(), "{case}, {verb}: nothing on stdout");
            assert!(
                !err.contains(token),
                "{case}, {verb}: the token leaked: {err}"
            );
        }
    }
}
