//! Each kind of outage, through the CLI at the default wait budget: a checkpoint spools and
//! exits 0 within the bound, `resume`, `latest`, `list` and `status` answer offline from the
//! read cache and the outbox, and the command after the first one makes one attempt (quick
//! unless the forge accepts the connection).

use std::time::Duration;

use super::{GENEROUS, json_ok, spooled};
use crate::fake_forge::outage::{Mode, OUTAGES};
use crate::fake_forge::{FakeForge, session};

/// Under the outage marker a command makes one attempt that must connect quickly
/// (`quick_timeout_ms`, 800 ms by default), without retrying, where it would otherwise spend the
/// 3 s budget: this bound tells the two apart for a forge that refuses or answers 503.
const QUICK: Duration = Duration::from_millis(2500);

/// The bound on a command after the outage: a forge that accepts the connection (and may be
/// back but slow) gets the command's budget, so only the general bound holds for it.
fn after_outage(mode: Mode) -> Duration {
    match mode {
        Mode::Silent => GENEROUS,
        _ => QUICK,
    }
}

async fn outage_of(mode: Mode, what: &str) {
    let fake = FakeForge::start().await;
    session(&fake);
    let front = fake.front().await;
    let uri = front.uri();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    json_ok(
        &uri,
        d,
        "checkpoint --agent w --session s --phase planned --json",
    );
    let (list, _) = json_ok(&uri, d, "list --agent w --json");
    assert_eq!(list["records"].as_array().map(Vec::len), Some(1), "{list}");

    front.set(mode);
    let (saved, took) = json_ok(
        &uri,
        d,
        "checkpoint --agent w --session s --phase built --json",
    );
    assert!(took < GENEROUS, "{what}: the checkpoint took {took:?}");
    assert!(saved["spooled"].is_string(), "{what}: {saved}");
    assert_eq!(spooled(d).len(), 1, "{what}");

    let quick = after_outage(mode);
    let before = fake.requests().await.len();
    let (resume, took) = json_ok(&uri, d, "resume --agent w --session s --json");
    assert!(
        took < quick,
        "{what}: the command after an outage took {took:?}"
    );
    if mode == Mode::Unavailable {
        assert!(
            fake.requests().await.len() - before <= 1,
            "{what}: one attempt after an outage"
        );
    }
    assert_eq!(resume["offline"], true, "{what}: {resume}");
    assert_eq!(
        resume["phase"], "built",
        "{what}: the outbox's newer record"
    );
    assert_eq!(resume["pending"], true, "{what}: {resume}");
    let warned = resume["warnings"].as_array().unwrap().iter();
    assert!(
        warned
            .clone()
            .any(|w| w.as_str().unwrap().contains("read cache")),
        "{what}: says where the answer comes from: {resume}"
    );

    let (list, took) = json_ok(&uri, d, "list --agent w --json");
    assert!(took < quick, "{what}: {took:?}");
    assert_eq!(list["offline"], true, "{what}: {list}");
    let phases: Vec<_> = list["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["phase"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        phases,
        ["planned", "built"],
        "{what}: the read cache's record, then the outbox's"
    );

    let (latest, took) = json_ok(&uri, d, "latest --agent w --session s --json");
    assert!(took < quick, "{what}: {took:?}");
    assert_eq!(latest["offline"], true, "{what}: {latest}");
    assert_eq!(latest["record"]["phase"], "built", "{what}: {latest}");

    let (status, took) = json_ok(&uri, d, "status --json");
    assert!(took < quick, "{what}: {took:?}");
    assert_eq!(status["offline"], true, "{what}: {status}");
    assert_eq!(status["rows"][0]["agent"], "w", "{what}: {status}");

    // A second save is quick too, and queues behind the first.
    let (saved, took) = json_ok(
        &uri,
        d,
        "checkpoint --agent w --session s --phase tested --json",
    );
    assert!(took < quick, "{what}: {took:?}");
    assert!(saved["spooled"].is_string(), "{what}: {saved}");
    assert_eq!(spooled(d).len(), 2, "{what}");
}

#[tokio::test(flavor = "multi_thread")]
async fn refused_connections_never_block_a_verb() {
    let (mode, what) = OUTAGES[0];
    outage_of(mode, what).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_forge_answering_503_never_blocks_a_verb() {
    let (mode, what) = OUTAGES[1];
    outage_of(mode, what).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_forge_that_never_answers_never_blocks_a_verb() {
    let (mode, what) = OUTAGES[2];
    outage_of(mode, what).await;
}
