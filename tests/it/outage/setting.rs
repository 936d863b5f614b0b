//! The wait budget is a setting: `--wait` beats `FORGESTATE_WAIT`, which beats `[forge] wait`,
//! which beats the 3 s default; the library's `ForgeBuilder::wait` sets it for a program. A
//! forge that never answers holds each command for exactly its budget, which is what these
//! bounds measure (each run in a fresh directory, so no outage marker shortens it).

use std::time::{Duration, Instant};

use super::{GENEROUS, timed};
use crate::common::cli::stderr;
use crate::fake_forge::outage::Mode;
use crate::fake_forge::{BOT_TOKEN, FakeForge, session};

const CONFIG: &str = "[forge]\nwait = \"4s\"\n";
const SAVE: &str = "checkpoint --agent w --session s --phase p --json";

/// How long a checkpoint against the silent forge took, with `config`, `env` and `flags`.
fn held(uri: &str, config: Option<&str>, env: &[(&str, &str)], flags: &str) -> Duration {
    let dir = tempfile::tempdir().unwrap();
    if let Some(config) = config {
        std::fs::write(dir.path().join("forgestate.toml"), config).unwrap();
    }
    let (out, took) = timed(uri, dir.path(), env, &format!("{SAVE} {flags}"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("spooled"));
    took
}

#[tokio::test(flavor = "multi_thread")]
async fn the_flag_beats_the_environment_which_beats_the_file() {
    let fake = FakeForge::start().await;
    session(&fake);
    let front = fake.front().await;
    front.set(Mode::Silent);
    let uri = front.uri();
    let env = [("FORGESTATE_WAIT", "2s")];

    let flag = held(&uri, Some(CONFIG), &env, "--wait 500ms");
    assert!(flag < Duration::from_millis(1800), "--wait 500ms: {flag:?}");
    let from_env = held(&uri, Some(CONFIG), &env, "");
    assert!(
        from_env >= Duration::from_millis(1900) && from_env < Duration::from_millis(3800),
        "FORGESTATE_WAIT=2s: {from_env:?}"
    );
    let from_file = held(&uri, Some(CONFIG), &[], "");
    assert!(
        from_file >= Duration::from_millis(3900) && from_file < Duration::from_secs(8),
        "[forge] wait = \"4s\": {from_file:?}"
    );
    let default = held(&uri, None, &[], "");
    assert!(
        default >= Duration::from_millis(2900) && default < GENEROUS,
        "the default 3 s: {default:?}"
    );
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
    let started = Instant::now();
    let saved = c.save(record()).await;
    assert!(
        matches!(saved, forgestate::Outcome::Spooled { .. }),
        "{saved:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );

    // The forge is back: a new command (a verb call) starts a fresh budget.
    front.set(Mode::Up);
    c.begin_command();
    let flushed = c.flush().await;
    assert_eq!(flushed.left, 0, "{flushed:?}");
    assert_eq!(fake.comments_on(1).len(), 1);
}
