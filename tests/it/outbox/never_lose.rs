//! Never lose a checkpoint: the outbox while the forge is down, ordered flushes, ambiguous
//! failures, permanent errors, offline reads, and the exit codes that go with them.

use crate::{common, fake_forge};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use common::cli::{Bin, parse_ok, stderr, words};
use common::files_under;
use fake_forge::{BOT_TOKEN, FakeForge, OWNER, READER_TOKEN, REPO, session};
use forgestate::format::parse;

/// Runs the binary in `dir` against the fake; `dir/forgestate.toml` holds any extra settings.
pub fn run(fake_uri: &str, dir: &Path, token: &str, args: &[String]) -> Output {
    Bin::new(dir).forge(fake_uri, OWNER, REPO, token).run(args)
}

/// The records waiting in the outboxes under `dir` (one directory per forge/owner/repo).
fn outbox_files(dir: &Path) -> Vec<PathBuf> {
    let root = dir.join("state/forgestate/outbox");
    files_under(&root)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rec"))
        .filter(|p| p.parent().and_then(Path::parent) == Some(root.as_path()))
        .collect()
}

const CONFIG: &str =
    "[forge]\nretry_budget_secs = 1\nquick_timeout_ms = 300\nrequest_timeout_secs = 2\n";

#[tokio::test(flavor = "multi_thread")]
async fn twenty_checkpoints_while_down_then_resume_then_flush_in_order() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("forgestate.toml"), CONFIG).unwrap();
    fake.state().down = true;
    let mut requests = Vec::new();
    for i in 1..=20 {
        let before = fake.requests().await.len();
        let args = words(&format!(
            "checkpoint --agent w --session s --phase step_{i} --set i={i} --json"
        ));
        let out = run(&fake.uri(), d, BOT_TOKEN, &args);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let doc = parse_ok(&args, &out);
        assert!(doc["spooled"].as_str().is_some(), "{doc}");
        assert_eq!(
            stderr(&out)
                .lines()
                .filter(|l| l.contains("spooled to"))
                .count(),
            1,
            "{}",
            stderr(&out)
        );
        assert!(
            stderr(&out).contains(&format!(
                "{i} record(s) wait in the outbox: run `forgestate flush`"
            )) && !stderr(&out).contains("  "),
            "{}",
            stderr(&out)
        );
        requests.push(fake.requests().await.len() - before);
    }
    assert!(
        requests[0] > 1,
        "the first checkpoint spends the retry budget: {requests:?}"
    );
    // One quick attempt: one try of finding the session issue, whose three requests (the
    // page size, the token's login, the issue search) go at once at an empty cache.
    assert!(
        requests[1..].iter().all(|&r| r <= 3),
        "later ones make one quick attempt: {requests:?}"
    );
    assert_eq!(outbox_files(d).len(), 20);

    let args = words("resume --agent w --session s --json");
    let before = fake.requests().await.len();
    let out = run(&fake.uri(), d, BOT_TOKEN, &args);
    let made = fake.requests().await.len() - before;
    // The flush's try and the read's, each the three requests of finding the session issue.
    assert!(
        made <= 2 * 3,
        "a failed quick flush makes the read quick too: {made} requests"
    );
    let resume = parse_ok(&args, &out);
    assert_eq!(resume["phase"], "step_20");
    assert_eq!(resume["data"]["i"], 20);
    assert_eq!(resume["offline"], true);
    assert_eq!(resume["checkpoint"]["comment"]["pending"], true);
    assert!(stderr(&out).contains("cannot be read"), "{}", stderr(&out));

    fake.state().down = false;
    let args = words("flush --json");
    let report = parse_ok(&args, &run(&fake.uri(), d, BOT_TOKEN, &args));
    assert_eq!(report["posted"].as_array().unwrap().len(), 20, "{report}");
    assert_eq!(report["left"], 0);
    let phases: Vec<String> = fake
        .comments_on(n)
        .iter()
        .map(|c| parse(&c.body).unwrap().phase().unwrap().to_string())
        .collect();
    assert_eq!(
        phases,
        (1..=20).map(|i| format!("step_{i}")).collect::<Vec<_>>(),
        "in order"
    );
    assert!(outbox_files(d).is_empty());
    let args = words("resume --agent w --session s --json");
    let resume = parse_ok(&args, &run(&fake.uri(), d, BOT_TOKEN, &args));
    assert_eq!(resume["checkpoint"]["comment"]["pending"], false);
    assert_eq!(resume["offline"], false);
}

/// How the answer to a committed comment post gets lost.
enum Lost {
    /// The fake answers only after the client's timeout.
    Late,
    /// A proxy hangs up once the fake has answered.
    Dropped,
}

/// Posts one checkpoint to a fake whose clock is `clock_offset` seconds off ours, losing the
/// answer to the first (committed) post as `how` says; asserts the thread then holds that
/// record exactly once, as the comment the client reports.
async fn lost_answer_is_posted_once(how: Lost, clock_offset: i64) {
    let fake = FakeForge::start().await;
    fake.state().clock_offset = clock_offset;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let proxy = fake_forge::dropper::Dropper::start(fake.addr(), 1, "POST ").await;
    let c = match how {
        Lost::Late => {
            fake.inject(
                "/comments",
                fake_forge::Fault::CommitThenDelay(std::time::Duration::from_secs(3)),
            );
            fake_forge::client(&fake, BOT_TOKEN, dir.path())
        }
        Lost::Dropped => fake_forge::client_at(&proxy.uri(), BOT_TOKEN, dir.path()),
    }
    .timeouts(Duration::from_secs(1), Duration::from_secs(1))
    .retry_budget(Duration::from_secs(6))
    .build()
    .unwrap();
    let record =
        forgestate::format::Record::checkpoint("w", "s", "p", serde_json::json!({})).unwrap();
    let id = record.id.clone().unwrap();
    let posted = c
        .save(record)
        .await
        .posted()
        .expect("the earlier attempt is found, not repeated");
    if let Lost::Dropped = how {
        let left = proxy.drops.load(std::sync::atomic::Ordering::SeqCst);
        assert_eq!(left, 0, "the proxy hung up on the post");
    }
    let with_id = fake
        .comments_on(n)
        .iter()
        .filter(|c| c.body.contains(&id))
        .count();
    assert_eq!(with_id, 1);
    assert_eq!(posted.comment_id, fake.comments_on(n)[0].id);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_commit_whose_answer_never_comes_is_posted_once() {
    lost_answer_is_posted_once(Lost::Late, 0).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_commit_whose_connection_drops_is_posted_once() {
    lost_answer_is_posted_once(Lost::Dropped, 0).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lost_answer_from_a_server_whose_clock_lags_is_still_posted_once() {
    // 20 minutes behind, more than the 10-minute skew margin: the duplicate check must look in
    // the window on the server's clock, which its `Date` header gives.
    lost_answer_is_posted_once(Lost::Late, -20 * 60).await;
    lost_answer_is_posted_once(Lost::Dropped, -20 * 60).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn permanent_errors_spool_with_an_error_line_and_strict_exits_75() {
    let fake = FakeForge::start().await;
    session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("forgestate.toml"), CONFIG).unwrap();
    let out = run(
        &fake.uri(),
        d,
        READER_TOKEN,
        &words("checkpoint --agent w --session s --phase p"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("forgestate: error:")
            && err.contains("write:issue")
            && err.contains("spooled to"),
        "{err}"
    );
    let out = run(
        &fake.uri(),
        d,
        READER_TOKEN,
        &words("checkpoint --agent w --session s --phase q --strict"),
    );
    assert_eq!(out.status.code(), Some(75));
    assert_eq!(outbox_files(d).len(), 2, "the data is kept");
}

#[tokio::test(flavor = "multi_thread")]
async fn offline_with_nothing_known_is_exit_75_never_a_fresh_start() {
    let fake = FakeForge::start().await;
    session(&fake);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("forgestate.toml"), CONFIG).unwrap();
    fake.state().down = true;
    let out = run(
        &fake.uri(),
        dir.path(),
        BOT_TOKEN,
        &words("resume --agent w --session s --json"),
    );
    assert_eq!(out.status.code(), Some(75), "{}", stderr(&out));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("fresh_start"));
    let out = run(&fake.uri(), dir.path(), BOT_TOKEN, &words("flush"));
    assert_eq!(
        out.status.code(),
        Some(0),
        "an empty outbox flushes fine: {}",
        stderr(&out)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn secrets_are_redacted_before_they_reach_the_forge() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let mut args =
        words("checkpoint --agent w --session s --phase p --set password=hunter2 --data");
    args.push(r#"{"deploy": {"API_KEY": "k-123", "host": "h"}}"#.into());
    let out = run(&fake.uri(), dir.path(), BOT_TOKEN, &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let body = fake.comments_on(n)[0].body.clone();
    assert!(
        !body.contains("hunter2") && !body.contains("k-123"),
        "{body}"
    );
    assert!(body.contains("\nRedacted: 2\n"), "{body}");
    let record = parse(&body).unwrap();
    assert_eq!(record.data()["deploy"]["API_KEY"], "[REDACTED]");
    assert_eq!(record.data()["deploy"]["host"], "h");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_oversized_answer_fails_clearly() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    // The cap counts the bodies a read keeps: two trusted ones, each within the body cap.
    fake.add_comment(n, "ca-bot", &"x".repeat(600_000));
    fake.add_comment(n, "ca-bot", &"y".repeat(600_000));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("forgestate.toml"),
        "[forge]\nmax_response_mib = 1\n",
    )
    .unwrap();
    let out = run(&fake.uri(), dir.path(), BOT_TOKEN, &words("list"));
    assert_eq!(
        out.status.code(),
        Some(78),
        "a setting to change, not a retry: {}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("over 1048576 bytes"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn plain_http_is_refused_off_loopback() {
    use forgestate::Client;
    let build = |url: &str, allow: bool| {
        Client::forge(url, OWNER, REPO)
            .token(BOT_TOKEN.to_string().into())
            .allow_insecure_http(allow)
            .build()
    };
    for url in ["http://forge.example.com", "http://10.0.0.8:3000/"] {
        let err = build(url, false).err().map(|e| e.to_string());
        assert!(
            err.as_deref()
                .is_some_and(|e| e.contains("--allow-insecure-http")),
            "{err:?}"
        );
        assert!(build(url, true).is_ok(), "{url}");
    }
    for url in [
        "http://127.0.0.1:3000",
        "http://localhost/",
        "http://[::1]:8080",
        "https://forge.example.com",
    ] {
        assert!(build(url, false).is_ok(), "{url}");
    }
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn a_shared_token_file_draws_a_warning_and_the_token_stays_out_of_everything() {
    use std::os::unix::fs::PermissionsExt;
    let fake = FakeForge::start().await;
    session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("forgestate.toml"), CONFIG).unwrap();
    let token_file = d.join("token");
    std::fs::write(&token_file, format!("{BOT_TOKEN}\n")).unwrap();
    std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let mut outputs = Vec::new();
    let with_file = |line: &str| {
        let mut a = words(line);
        a.extend(["--token-file".to_string(), token_file.display().to_string()]);
        run(&fake.uri(), d, "", &a)
    };
    let out = with_file("checkpoint --agent w --session s --phase p -vvv");
    assert!(stderr(&out).contains("chmod 600"), "{}", stderr(&out));
    outputs.push(out);
    fake.state().down = true;
    outputs.push(with_file(
        "checkpoint --agent w --session s --phase q -vvv --json",
    ));
    outputs.push(with_file("resume --agent w --session s -vvv --json"));
    fake.state().down = false;
    outputs.push(with_file("flush -vvv"));
    for out in &outputs {
        for stream in [&out.stdout, &out.stderr] {
            assert!(!String::from_utf8_lossy(stream).contains(BOT_TOKEN));
        }
    }
    assert_eq!(
        token_free_files(d, &token_file),
        9,
        "config, cache, flush lock, outbox origin, drain state, the CLI's lineage and its \
         writer, the two posted records kept for offline answers (landed/), all checked"
    );
}

/// Checks every file under `dir` (but the token file itself) for the token; returns how many.
fn token_free_files(dir: &Path, token_file: &Path) -> usize {
    let files: Vec<PathBuf> = files_under(dir)
        .into_iter()
        .filter(|p| p != token_file)
        .collect();
    for p in &files {
        let bytes = std::fs::read(p).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(BOT_TOKEN),
            "{} holds the token",
            p.display()
        );
    }
    files.len()
}

#[tokio::test(flavor = "multi_thread")]
async fn retries_are_visible_with_v() {
    let fake = FakeForge::start().await;
    session(&fake);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("forgestate.toml"),
        "[forge]\nretry_budget_secs = 5\n",
    )
    .unwrap();
    fake.inject("/comments", fake_forge::Fault::Status(503));
    let out = run(
        &fake.uri(),
        dir.path(),
        BOT_TOKEN,
        &words("checkpoint --agent w --session s --phase p -v"),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("503") && err.contains("attempt 2"), "{err}");
    let quiet = run(
        &fake.uri(),
        dir.path(),
        BOT_TOKEN,
        &words("checkpoint --agent w --session s --phase q"),
    );
    assert!(
        !stderr(&quiet).contains("attempt"),
        "no retry noise without -v"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn exits_non_zero_only_when_the_record_is_stored_nowhere() {
    let fake = FakeForge::start().await;
    session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("blocker"),
        "a file where the outbox directory should go",
    )
    .unwrap();
    // Named with --config: a file found in the working directory may not move the outbox.
    std::fs::write(
        d.join("ops.toml"),
        format!("{CONFIG}outbox_dir = \"blocker\"\n"),
    )
    .unwrap();
    fake.state().down = true;
    let out = run(
        &fake.uri(),
        d,
        BOT_TOKEN,
        &words("--config ops.toml checkpoint --agent w --session s --phase p"),
    );
    assert_eq!(out.status.code(), Some(74), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not stored anywhere"),
        "{}",
        stderr(&out)
    );
    fake.state().down = false;
    let out = run(
        &fake.uri(),
        d,
        BOT_TOKEN,
        &words("--config ops.toml checkpoint --agent w --session s --phase p"),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "a reachable forge needs no outbox: {}",
        stderr(&out)
    );
}
