//! Holes found by attacking the supervision and operations verbs as a hostile user would, each
//! pinned by a test that failed before its fix: a `--context-file` that is a FIFO with no writer
//! (which hung `checkpoint` and `resume` forever); `history` calling a session "forked from" another
//! when only a later record was forked into it; `prune` deleting a record but not its later copy
//! (a re-post with the same `Id:`), so the stale copy became the newest record and `resume` went
//! back in time; a forge url carrying the token in its query (`?access_token=`), echoed by
//! `doctor` and every message naming the forge; `status --fail-on-stalled` exiting 0 during a
//! forge outage when this machine had a pending record (the rows held only that record).

mod common;
mod fake_forge;

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use common::cli::{Bin, stderr, stdout, words};
use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO};
use forgestate::store::Thread;
use serde_json::json;

/// Runs `line` in `dir` on the local store `dir/st`, killing it if it is still running after a
/// minute (a hang is the bug under test; a correct run takes well under a second).
fn run_guarded(dir: &Path, line: &str) -> Output {
    let mut args = vec!["--store".to_string(), dir.join("st").display().to_string()];
    args.extend(words(line));
    let mut child = Bin::new(dir)
        .command(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!("{line}: still running after a minute: {}", stderr(&out));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
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

fn ok_json(dir: &Path, line: &str) -> serde_json::Value {
    let out = run_guarded(dir, &format!("{line} --json"));
    assert!(out.status.success(), "{line}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn history_says_forked_only_for_a_session_that_began_as_a_fork() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok_json(d, "checkpoint --agent w --session s --phase p1 --set n=1");
    ok_json(d, "fork --session s --new-session s2");
    ok_json(d, "checkpoint --agent w --session s2 --phase p2 --set n=2");
    let s2 = ok_json(d, "history --session s2");
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
    let s = ok_json(d, "history --session s");
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

#[test]
fn prune_deletes_a_record_with_its_later_copies_so_resume_never_goes_back() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok_json(d, "checkpoint --agent w --session s --phase p1");
    ok_json(d, "checkpoint --agent w --session s --phase p2");
    // The first checkpoint is posted again (a retried post that had in fact landed): same
    // record, same author, a later comment. Readers skip it as a duplicate.
    let thread = d.join("st").join(forgestate::store::THREAD_FILE);
    let text = std::fs::read_to_string(&thread).unwrap();
    let mut copy: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    copy["id"] = 3.into();
    std::fs::write(&thread, format!("{text}{copy}\n")).unwrap();
    ok_json(d, "checkpoint --agent w --session other --phase q");
    assert_eq!(ok_json(d, "resume --agent w --session s")["phase"], "p2");

    let plan = ok_json(d, "prune --keep 1");
    let doomed: Vec<u64> = plan["delete"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["comment_id"].as_u64().unwrap())
        .collect();
    assert_eq!(doomed, vec![1, 3], "the record and its copy: {plan}");
    ok_json(d, "prune --keep 1 --yes");
    let resume = ok_json(d, "resume --agent w --session s");
    assert_eq!(
        resume["phase"], "p2",
        "the newest checkpoint still wins: {resume}"
    );
    let list = ok_json(d, "list --invalid");
    assert_eq!(
        list["invalid"],
        serde_json::json!([]),
        "no copy left: {list}"
    );
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
    assert_eq!(
        rows["rows"][0]["session"], "t",
        "the pending record is still shown: {rows}"
    );
    fake.state().down = false;
    let out = bin.line("status --fail-on-stalled --json");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
