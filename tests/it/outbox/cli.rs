//! The outbox from the command line: `forgestate outbox` lists every outbox on the machine,
//! `flush --all` and `flush --from` reach records spooled under other settings, and a forge
//! command with nowhere to spool says so instead of silently running without an outbox.

use crate::{common, fake_forge};
use std::path::Path;
use std::process::Output;

use common::cli::{Bin, parse_ok, stderr, words};
use fake_forge::{BOT_TOKEN, FakeForge, OWNER, REPO, session};

/// The binary against the fake, with `repo` as the repository and short budgets.
fn run(fake: &FakeForge, dir: &Path, repo: &str, line: &str) -> Output {
    std::fs::write(
        dir.join("forgestate.toml"),
        "[forge]\nretry_budget_secs = 0\nrequest_timeout_secs = 3\n",
    )
    .unwrap();
    Bin::new(dir)
        .forge(&fake.uri(), OWNER, repo, BOT_TOKEN)
        .line(line)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_record_spooled_under_a_mistyped_repo_is_listed_and_reached_with_flush_from() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The repository name is mistyped: the forge answers 404, the record waits in that outbox.
    let out = run(
        &fake,
        d,
        "cleveragents-typo",
        "checkpoint --agent w --session s --phase p",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let listed = parse_ok(
        &words("outbox --json"),
        &run(&fake, d, REPO, "outbox --json"),
    );
    let all = listed["outboxes"].as_array().unwrap();
    assert_eq!(all.len(), 1, "{listed}");
    assert_eq!(all[0]["waiting"], 1);
    assert_eq!(all[0]["origin"]["repo"], "cleveragents-typo");
    assert!(all[0]["oldest"].is_string());
    assert!(
        all[0]["state"]["last_error"]
            .as_str()
            .unwrap_or_default()
            .contains("404"),
        "the last failure is shown: {listed}"
    );
    let text = run(&fake, d, REPO, "outbox");
    assert!(String::from_utf8_lossy(&text.stdout).contains("cleveragents-typo"));

    // A flush with the right settings never looks there...
    let plain = run(&fake, d, REPO, "flush --json");
    assert!(plain.status.success(), "{}", stderr(&plain));
    assert!(fake.comments_on(n).is_empty());
    // ...but --from posts those records to the forge configured now.
    let from = all[0]["dir"].as_str().unwrap().to_string();
    let line = format!("flush --from {from} --json");
    let report = parse_ok(&words(&line), &run(&fake, d, REPO, &line));
    assert_eq!(report["posted"].as_array().unwrap().len(), 1, "{report}");
    assert_eq!(fake.comments_on(n).len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn flush_all_posts_each_outbox_to_the_forge_it_was_spooled_for() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fake.state().down = true;
    for phase in ["a", "b"] {
        let line = format!("checkpoint --agent w --session s --phase {phase}");
        assert!(run(&fake, d, REPO, &line).status.success());
    }
    fake.state().down = false;
    // Run from settings that point elsewhere: --all uses each outbox's own coordinates.
    let out = run(&fake, d, "some-other-repo", "flush --all --json");
    let report = parse_ok(&words("flush --all --json"), &out);
    let reports = report["outboxes"].as_array().unwrap();
    assert_eq!(reports.len(), 1, "{report}");
    assert_eq!(reports[0]["posted"].as_array().unwrap().len(), 2);
    assert_eq!(fake.comments_on(n).len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn with_no_place_for_an_outbox_a_failed_post_says_the_record_was_stored_nowhere() {
    let fake = FakeForge::start().await;
    session(&fake);
    fake.state().down = true;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("forgestate.toml"),
        "[forge]\nretry_budget_secs = 0\n",
    )
    .unwrap();
    // cron or systemd: no HOME, no XDG_STATE_HOME.
    let out = Bin::bare(dir.path())
        .coords(&fake.uri(), OWNER, REPO, BOT_TOKEN)
        .line("checkpoint --agent w --session s --phase p");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(74), "{err}");
    assert!(err.contains("no outbox"), "said up front: {err}");
    assert!(err.contains("not stored anywhere"), "{err}");
    assert!(err.contains("XDG_STATE_HOME"), "says what to set: {err}");
    assert!(out.stdout.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn flush_all_never_sends_the_token_in_use_to_another_forge() {
    let a = FakeForge::start().await;
    let n = session(&a);
    let b = FakeForge::start().await;
    session(&b);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    a.state().down = true;
    assert!(
        run(&a, d, REPO, "checkpoint --agent w --session s --phase p")
            .status
            .success()
    );
    a.state().down = false;
    let before = a.requests().await.len();
    // Configured for forge B now: its token must not travel to forge A.
    let out = run(&b, d, REPO, "flush --all --json");
    assert_eq!(
        out.status.code(),
        Some(78),
        "records left waiting are not a success: {}",
        stderr(&out)
    );
    let doc = parse_json(&out);
    assert_eq!(doc["outboxes"][0]["left"], 1, "{doc}");
    assert_eq!(doc["outboxes"][0]["error"]["code"], 78, "{doc}");
    assert_eq!(
        a.requests().await.len(),
        before,
        "forge A was not contacted"
    );
    assert!(
        stderr(&out).contains("skipped the outbox"),
        "{}",
        stderr(&out)
    );
    assert!(a.comments_on(n).is_empty());
    // Configured for forge A, the same command posts them.
    let out = run(&a, d, REPO, "flush --all --json");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(a.comments_on(n).len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn flush_from_refuses_a_directory_that_is_not_an_outbox() {
    let fake = FakeForge::start().await;
    session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let stray = d.join("notes");
    std::fs::create_dir_all(&stray).unwrap();
    std::fs::write(stray.join("todo.rec"), "my own notes, not a record").unwrap();
    let line = format!("flush --from {} --json", stray.display());
    let out = run(&fake, d, REPO, &line);
    assert_eq!(out.status.code(), Some(78), "{}", stderr(&out));
    assert!(stray.join("todo.rec").is_file(), "nothing was moved");
    assert!(!stray.join("dead").exists());
}

fn parse_json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON document ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn one_unusable_outbox_does_not_stop_flush_all_from_flushing_the_others() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fake.state().down = true;
    assert!(
        run(&fake, d, REPO, "checkpoint --agent w --session s --phase p")
            .status
            .success()
    );
    fake.state().down = false;
    // A second outbox whose origin names a repository that is not a name.
    let root = d.join("state/forgestate/outbox");
    let good = std::fs::read_dir(&root)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let bad = root.join("aaa");
    std::fs::create_dir_all(&bad).unwrap();
    for entry in std::fs::read_dir(&good).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|e| e == "rec") {
            std::fs::copy(&p, bad.join(p.file_name().unwrap())).unwrap();
        }
    }
    let origin = format!(
        "{{\"url\":\"{}\",\"owner\":\"o\",\"repo\":\"r r\"}}",
        fake.uri()
    );
    std::fs::write(bad.join(".origin.json"), origin).unwrap();
    let out = run(&fake, d, REPO, "flush --all --json");
    assert_eq!(out.status.code(), Some(78), "{}", stderr(&out));
    let doc = parse_json(&out);
    assert_eq!(doc["outboxes"].as_array().unwrap().len(), 2, "{doc}");
    assert_eq!(fake.comments_on(n).len(), 1, "the good outbox was flushed");
}
