//! Issue #42 (the 64-writer soak's second open issue): "a rotation killed at any point leaves a
//! thread that the next record completes". A rotation cut by its command's wait budget, or
//! killed, shows no progress (no carried record) from then on; other machines leave a live run
//! alone, and finish a stopped one with their next record once it has shown none for
//! `STALLED` (seconds), not the minute of `UNDER_WAY`.

use std::collections::HashMap;
use std::time::Duration;

use crate::fake_forge::{BOT_TOKEN, FakeForge, Fault, bot, client, session};
use forgestate::config::DEFAULT_TITLE as TITLE;
use forgestate::format::{Record, parse};
use serde_json::json;

fn cp(session: &str, phase: &str) -> Record {
    Record::checkpoint("a", session, phase, json!({"phase": phase})).unwrap()
}

fn ids_on(fake: &FakeForge, n: u64) -> HashMap<String, usize> {
    let mut ids = HashMap::new();
    for c in fake.comments_on(n) {
        if let Some(id) = parse(&c.body).ok().and_then(|r| r.id) {
            *ids.entry(id).or_insert(0) += 1;
        }
    }
    ids
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rotation_stopped_mid_carry_is_finished_by_the_next_record_seconds_later() {
    let fake = FakeForge::start().await;
    let old = session(&fake);
    let writer = tempfile::tempdir().unwrap();
    let mut ids = Vec::new();
    for s in 0..3 {
        let saved = bot(&fake, writer.path())
            .save(cp(&format!("s{s}"), "p1"))
            .await;
        ids.push(saved.posted().unwrap().id.unwrap());
    }
    let new = fake.state().last_number + 1;
    // The creator stops after carrying one record (its command's wait budget, or a kill).
    let path = format!("/issues/{new}/comments");
    fake.inject(&path, Fault::Pass);
    fake.inject(&path, Fault::Status(403));
    let creator = tempfile::tempdir().unwrap();
    assert!(bot(&fake, creator.path()).rotate().await.is_err());
    assert!(fake.state().faults.is_empty());
    assert_eq!(fake.open_issues_titled(TITLE), vec![old, new]);

    // Another machine that writes at once leaves the run alone: it may still be carrying.
    let other = tempfile::tempdir().unwrap();
    let other = client(&fake, BOT_TOKEN, other.path())
        .recheck_after(Duration::ZERO)
        .build()
        .unwrap();
    let early = other.save(cp("s9", "p1")).await.posted().unwrap();
    assert_eq!(
        fake.comments_on(new).len(),
        2,
        "the carried one and s9's own"
    );
    assert_eq!(fake.open_issues_titled(TITLE), vec![old, new]);

    // Some seconds without progress (far less than a minute): the next record finishes it.
    let stalled = forgestate::forge::STALLED.num_seconds();
    assert!(stalled < 60, "{stalled}");
    fake.age(stalled + 1);
    other.save(cp("s9", "p2")).await.posted().unwrap();
    assert_eq!(
        fake.open_issues_titled(TITLE),
        vec![new],
        "the stopped rotation was finished"
    );
    let on_new = ids_on(&fake, new);
    for id in ids.iter().chain([&early.id.unwrap()]) {
        assert_eq!(on_new.get(id), Some(&1), "{id} once on #{new}: {on_new:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_creators_next_record_finishes_its_own_stopped_rotation_at_once() {
    let fake = FakeForge::start().await;
    let old = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let mut ids = Vec::new();
    for s in 0..3 {
        let saved = bot(&fake, dir.path())
            .save(cp(&format!("s{s}"), "p1"))
            .await;
        ids.push(saved.posted().unwrap().id.unwrap());
    }
    let new = fake.state().last_number + 1;
    let path = format!("/issues/{new}/comments");
    fake.inject(&path, Fault::Pass);
    fake.inject(&path, Fault::Status(403));
    assert!(bot(&fake, dir.path()).rotate().await.is_err());
    assert_eq!(fake.open_issues_titled(TITLE), vec![old, new]);
    // The same machine's next record (a new process: the cache remembers), no time later.
    let next = bot(&fake, dir.path())
        .save(cp("s0", "p2"))
        .await
        .posted()
        .unwrap();
    assert_eq!(
        fake.open_issues_titled(TITLE),
        vec![new],
        "finished by its creator"
    );
    let on_new = ids_on(&fake, new);
    for id in ids.iter().chain([&next.id.unwrap()]) {
        assert_eq!(on_new.get(id), Some(&1), "{id} once on #{new}: {on_new:?}");
    }
}
