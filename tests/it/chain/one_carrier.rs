//! Issue #42, medium 7 (the 64-writer soak's copies): one carrier at a time. A rotation whose
//! successor another run created and is still carrying (created, or given a carried record,
//! less than `STALLED`, 15 s, ago by the forge's clock) is left to that run by every other one: an
//! explicit `rotate` too, and one that finds the successor only after reading the old issue.
//! The machine that created it finishes its own interrupted run at once; any machine finishes it
//! once it has shown no progress for `STALLED` (the tests below wait a minute). So the records a rotation carries land once each,
//! however many machines find the old issue due.

use std::collections::HashMap;
use std::time::Duration;

use crate::fake_forge::{FakeForge, Fault, bot, session};
use forgestate::config::DEFAULT_TITLE as TITLE;
use forgestate::format::{Record, parse};
use serde_json::json;

fn cp(session: &str, phase: &str) -> Record {
    Record::checkpoint("a", session, phase, json!({"phase": phase})).unwrap()
}

/// The record ids on issue `n`, with how often each appears.
fn ids_on(fake: &FakeForge, n: u64) -> HashMap<String, usize> {
    let mut ids = HashMap::new();
    for c in fake.comments_on(n) {
        if let Some(id) = parse(&c.body).ok().and_then(|r| r.id) {
            *ids.entry(id).or_insert(0) += 1;
        }
    }
    ids
}

fn is_closed(fake: &FakeForge, n: u64) -> bool {
    fake.state()
        .issues
        .iter()
        .any(|i| i.number == n && i.closed)
}

/// The session issue with one checkpoint of each of `sessions` sessions: their ids.
async fn thread(fake: &FakeForge, sessions: usize) -> (u64, Vec<String>) {
    let old = session(fake);
    let dir = tempfile::tempdir().unwrap();
    let writer = bot(fake, dir.path());
    let mut ids = Vec::new();
    for s in 0..sessions {
        let saved = writer.save(cp(&format!("s{s}"), "p1")).await.posted();
        ids.push(saved.unwrap().id.unwrap());
    }
    (old, ids)
}

fn assert_each_once(fake: &FakeForge, new: u64, ids: &[String]) {
    let on_new = ids_on(fake, new);
    for id in ids {
        assert_eq!(on_new.get(id), Some(&1), "{id} once on #{new}: {on_new:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rotate_started_while_another_run_carries_leaves_the_carrying_to_it() {
    let fake = FakeForge::start().await;
    let (old, ids) = thread(&fake, 24).await;
    let new = fake.state().last_number + 1;
    // Every request takes a while, so the creator is still carrying when the second run has
    // read the old issue and found the successor.
    fake.state().latency = Duration::from_millis(30);
    let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (creator, other) = (bot(&fake, one.path()), bot(&fake, two.path()));
    let second = async {
        while fake.comments_on(new).is_empty() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        other.rotate().await
    };
    let (first, second) = tokio::join!(creator.rotate(), second);
    let (first, second) = (first.unwrap(), second.unwrap());
    assert!(first.created && first.closed, "{first:?}");
    assert_eq!(first.carried, ids.len(), "{first:?}");
    assert_eq!(second.to, Some(new), "{second:?}");
    assert_eq!(second.carried, 0, "left to the run carrying: {second:?}");
    assert!(!second.closed, "{second:?}");
    assert!(
        second
            .note
            .as_deref()
            .is_some_and(|n| n.contains("under way")),
        "{second:?}"
    );
    assert_each_once(&fake, new, &ids);
    assert_eq!(fake.open_issues_titled(TITLE), vec![new]);
    assert!(is_closed(&fake, old));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rotation_carried_within_the_last_minute_is_left_to_its_carrier_however_old() {
    let fake = FakeForge::start().await;
    let (old, ids) = thread(&fake, 4).await;
    let new = fake.state().last_number + 1;
    // The creator is killed after carrying one record.
    let path = format!("/issues/{new}/comments");
    fake.inject(&path, Fault::Pass);
    fake.inject(&path, Fault::Status(403));
    let creator = tempfile::tempdir().unwrap();
    assert!(bot(&fake, creator.path()).rotate().await.is_err());
    assert!(fake.state().faults.is_empty());
    // A minute later another machine takes over, and carries one more record before the forge
    // stops it too.
    fake.age(61);
    fake.inject(&path, Fault::Pass);
    fake.inject(&path, Fault::Status(403));
    let taker = tempfile::tempdir().unwrap();
    assert!(bot(&fake, taker.path()).rotate().await.is_err());
    assert!(fake.state().faults.is_empty());
    assert_eq!(fake.comments_on(new).len(), 2);

    // The successor is over a minute old, but it got a carried record seconds ago: a third
    // machine leaves it to that run.
    let third = tempfile::tempdir().unwrap();
    let left = bot(&fake, third.path()).rotate().await.unwrap();
    assert_eq!((left.to, left.carried, left.closed), (Some(new), 0, false));
    assert_eq!(fake.comments_on(new).len(), 2, "nothing carried: {left:?}");
    assert_eq!(fake.open_issues_titled(TITLE), vec![old, new]);

    // A minute after that last record, the run is taken for dead and any machine finishes it.
    fake.age(61);
    let done = bot(&fake, third.path()).rotate().await.unwrap();
    assert!(done.closed, "{done:?}");
    assert_each_once(&fake, new, &ids);
    assert_eq!(fake.open_issues_titled(TITLE), vec![new]);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_machine_that_created_the_successor_finishes_its_own_run_at_once() {
    let fake = FakeForge::start().await;
    let (old, ids) = thread(&fake, 3).await;
    let new = fake.state().last_number + 1;
    let path = format!("/issues/{new}/comments");
    fake.inject(&path, Fault::Pass);
    fake.inject(&path, Fault::Status(403));
    let creator = tempfile::tempdir().unwrap();
    assert!(bot(&fake, creator.path()).rotate().await.is_err());
    // Another machine leaves it (it cannot tell a killed run from a live one for a minute)...
    let other = tempfile::tempdir().unwrap();
    let left = bot(&fake, other.path()).rotate().await.unwrap();
    assert!(!left.closed && left.carried == 0, "{left:?}");
    // ...its own machine knows it was interrupted, and finishes it.
    let rerun = bot(&fake, creator.path()).rotate().await.unwrap();
    assert!(rerun.closed, "{rerun:?}");
    assert_eq!((rerun.carried, rerun.already_carried), (2, 1), "{rerun:?}");
    assert_each_once(&fake, new, &ids);
    assert_eq!(fake.open_issues_titled(TITLE), vec![new]);
    assert!(is_closed(&fake, old));
}
