//! The wait budget is a setting: `--wait`, `FORGESTATE_WAIT` and `[forge] wait` are each
//! checked where they are given, and the library's `ForgeBuilder::wait` sets it for a program.
//! Which one is in force is configuration's precedence (`config::precedence`); how long a
//! command is held is a figure for the outage benchmark (`examples/outage_bench.rs`), never an
//! assertion here.

use std::time::Duration;

use super::timed;
use crate::common::cli::stderr;
use crate::fake_forge::outage::Mode;
use crate::fake_forge::{BOT_TOKEN, FakeForge, session};

const SAVE: &str = "checkpoint --agent w --session s --phase p --json";

/// A checkpoint against a forge that never answers spools, whichever place sets the budget.
#[tokio::test(flavor = "multi_thread")]
async fn a_silent_forge_spools_the_record_under_every_source_of_the_budget() {
    let fake = FakeForge::start().await;
    session(&fake);
    let front = fake.front().await;
    front.set(Mode::Silent);
    let uri = front.uri();
    for (config, env, flags) in [
        (None, &[][..], "--wait 200ms"),
        (None, &[("FORGESTATE_WAIT", "200ms")][..], ""),
        (Some("[forge]\nwait = \"200ms\"\n"), &[][..], ""),
    ] {
        let dir = tempfile::tempdir().unwrap();
        if let Some(config) = config {
            std::fs::write(dir.path().join("forgestate.toml"), config).unwrap();
        }
        let (out, _) = timed(&uri, dir.path(), env, &format!("{SAVE} {flags}"));
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(
            answer["spooled"].is_string(),
            "{config:?} {env:?} {flags}: {answer}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wait_that_is_not_a_duration_is_refused_where_it_was_given() {
    let fake = FakeForge::start().await;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (out, _) = timed(&fake.uri(), d, &[], &format!("{SAVE} --wait soon"));
    assert_eq!(out.status.code(), Some(64), "{}", stderr(&out));
    assert!(stderr(&out).contains("--wait"), "{}", stderr(&out));
    let (out, _) = timed(&fake.uri(), d, &[("FORGESTATE_WAIT", "0s")], SAVE);
    assert_eq!(out.status.code(), Some(78), "{}", stderr(&out));
    assert!(stderr(&out).contains("FORGESTATE_WAIT"), "{}", stderr(&out));
    std::fs::write(d.join("forgestate.toml"), "[forge]\nwait = \"forever\"\n").unwrap();
    let (out, _) = timed(&fake.uri(), d, &[], SAVE);
    assert_eq!(out.status.code(), Some(78), "{}", stderr(&out));
    assert!(stderr(&out).contains("[forge] wait"), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_program_sets_the_wait_on_the_builder_and_each_command_gets_its_own() {
    let fake = FakeForge::start().await;
    session(&fake);
    let front = fake.front().await;
    front.set(Mode::Silent);
    let dir = tempfile::tempdir().unwrap();
    let c = forgestate::Client::forge(
        front.uri(),
        crate::fake_forge::OWNER,
        crate::fake_forge::REPO,
    )
    .token(secrecy::SecretString::from(BOT_TOKEN))
    .cache_dir(dir.path().join("cache"))
    .outbox(dir.path().join("outbox"))
    .wait(Duration::from_millis(700))
    .build()
    .unwrap();
    let record =
        || forgestate::format::Record::checkpoint("w", "s", "p", serde_json::json!({})).unwrap();
    let saved = c.save(record()).await;
    assert!(
        matches!(saved, forgestate::Outcome::Spooled { .. }),
        "{saved:?}"
    );

    // The forge is back: a new command (a verb call) starts a fresh budget.
    front.set(Mode::Up);
    c.begin_command();
    let flushed = c.flush().await;
    assert_eq!(flushed.left, 0, "{flushed:?}");
    assert_eq!(fake.comments_on(1).len(), 1);
}
