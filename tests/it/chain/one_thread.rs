//! The session thread as one chain of issues, on the fake forge: every record reported saved is
//! read once, in thread order, by a fresh machine, however it got where it is (a stale cached
//! number an hour after a rotation, a post in the second the successor was created, an outbox
//! flushed after another machine rotated); status ages survive a rotation; watch follows it.
//! The races, reopened and retitled issues are in `chain_races.rs`.

use crate::fake_forge;
use std::collections::HashSet;
use std::time::Duration;

use crate::fake_forge::bot;
use fake_forge::{BOT_TOKEN, FakeForge, client, session};
use forgestate::backend::AnyThread;
use forgestate::client::watch::{Event, WatchOptions, Watcher};
use forgestate::format::{Record, parse};
use forgestate::report::status::{StatusPolicy, Verdict};
use forgestate::scan::Filter;
use forgestate::{Client, Outcome};
use serde_json::json;

fn cp(agent: &str, session: &str, phase: &str) -> Record {
    Record::checkpoint(agent, session, phase, json!({"phase": phase})).unwrap()
}

async fn saved(c: &Client<AnyThread>, r: Record) -> String {
    c.save(r).await.posted().unwrap().id.unwrap()
}

/// What a machine that never saw this thread lists: (record id, phase, issue) in thread order.
async fn fresh_list(fake: &FakeForge, agent: &str) -> Vec<(String, String, Option<u64>)> {
    let dir = tempfile::tempdir().unwrap();
    let filter = Filter {
        agent: Some(agent.into()),
        ..Filter::default()
    };
    let listed = bot(fake, dir.path()).list(&filter, None).await.unwrap();
    listed
        .entries
        .iter()
        .map(|e| {
            (
                e.record.id.clone().unwrap(),
                e.record.phase().unwrap_or_default().to_string(),
                e.comment.issue,
            )
        })
        .collect()
}

fn phases(list: &[(String, String, Option<u64>)]) -> Vec<&str> {
    list.iter().map(|(_, p, _)| p.as_str()).collect()
}

fn assert_once(list: &[(String, String, Option<u64>)]) {
    let ids: HashSet<&String> = list.iter().map(|(id, _, _)| id).collect();
    assert_eq!(ids.len(), list.len(), "each record once: {list:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_post_to_the_old_issue_an_hour_after_a_rotation_is_read_once_everywhere() {
    let fake = FakeForge::start().await;
    let old = session(&fake);
    let (w, r) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let writer = bot(&fake, w.path());
    saved(&writer, cp("a", "s1", "clone_complete")).await;
    let reader = bot(&fake, r.path());
    assert_eq!(
        reader.resume("a", "s1").await.unwrap().resume.phase,
        "clone_complete"
    );

    let rotation = bot(&fake, tempfile::tempdir().unwrap().path())
        .rotate()
        .await
        .unwrap();
    let new = rotation.to.unwrap();
    assert!(rotation.closed);
    // In the same second the successor was created, the writer's fresh cache still says `old`.
    let same_second = saved(&writer, cp("a", "s1", "subtask_1_complete")).await;
    assert!(
        fake.comments_on(old)
            .iter()
            .any(|c| c.body.contains(&same_second))
    );

    // An hour later (server time), the writer's cache is still fresh on its own clock.
    fake.age(3600);
    let late = saved(&writer, cp("a", "s1", "subtask_2_complete")).await;
    assert!(
        fake.comments_on(old).iter().any(|c| c.body.contains(&late)),
        "posted to the rotated-away issue"
    );

    let listed = fresh_list(&fake, "a").await;
    assert_once(&listed);
    assert_eq!(
        phases(&listed),
        ["clone_complete", "subtask_1_complete", "subtask_2_complete"]
    );
    // The original was posted minutes before the successor was created, so it is merged and
    // comes first in thread order; its carried copy on the head (same `Id`) is not counted.
    assert_eq!(listed[0].2, Some(old));
    assert_eq!(listed[2].2, Some(old), "the late post, where it is");
    assert!(
        fake.comments_on(new)
            .iter()
            .any(|c| c.body.contains(&listed[0].0))
    );
    let fresh = bot(&fake, tempfile::tempdir().unwrap().path());
    let resumed = fresh.resume("a", "s1").await.unwrap();
    assert_eq!(resumed.resume.phase, "subtask_2_complete");

    // A warm reader (its read cache from before the rotation) sees it too, in few requests.
    let before = fake.requests().await.len();
    let warm = bot(&fake, r.path());
    assert_eq!(
        warm.resume("a", "s1").await.unwrap().resume.phase,
        "subtask_2_complete"
    );
    // (Counted only with the read cache on: the suite also runs with it off.)
    let cached = std::env::var("FORGESTATE_TEST_READ_CACHE").as_deref() != Ok("off");
    let asked = fake.requests().await.len() - before;
    assert!(
        !cached || asked <= 3,
        "a warm read after a rotation: {asked} requests"
    );
    let before = fake.requests().await.len();
    bot(&fake, r.path()).resume("a", "s1").await.unwrap();
    let asked = fake.requests().await.len() - before;
    // The `since` list and the session issue (its comment count shows a deletion), at once.
    assert!(!cached || asked == 2, "then two requests, not {asked}");

    // The writer's next recheck moves it to the head, and its late posts are carried there.
    let moved = client(&fake, BOT_TOKEN, w.path())
        .recheck_after(Duration::ZERO)
        .build()
        .unwrap();
    // `Client::save` tidies the chain after the post (through `rotate_if_due`), so the save
    // alone carries the late posts.
    let next = saved(&moved, cp("a", "s1", "subtask_3_complete")).await;
    assert!(fake.comments_on(new).iter().any(|c| c.body.contains(&next)));
    let copies: Vec<Record> = fake
        .comments_on(new)
        .iter()
        .filter_map(|c| parse(&c.body).ok())
        .filter(|r| r.id.as_deref() == Some(late.as_str()))
        .collect();
    assert_eq!(copies.len(), 1, "carried once, with its Id");
    assert_eq!(copies[0].carried_from, Some(old));
    let first = fake
        .comments_on(old)
        .iter()
        .find(|c| c.body.contains(&late))
        .map(|c| c.created)
        .unwrap();
    assert_eq!(copies[0].posted_at.map(|t| t.timestamp()), Some(first));
    // A second tidy finds nothing to do, and readers still count each record once.
    assert_eq!(moved.tidy_chain().await.unwrap().carried, 0);
    let listed = fresh_list(&fake, "a").await;
    assert_once(&listed);
    assert_eq!(listed.len(), 4);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_outbox_flushed_after_another_machine_rotated_is_read() {
    let fake = FakeForge::start().await;
    let old = session(&fake);
    let w = tempfile::tempdir().unwrap();
    let writer = client(&fake, BOT_TOKEN, w.path())
        .outbox(w.path().join("outbox"))
        .build()
        .unwrap();
    saved(&writer, cp("a", "s1", "clone_complete")).await;
    fake.state().down = true;
    let mut spooled = Vec::new();
    for phase in ["subtask_1_complete", "subtask_2_complete"] {
        match writer.save(cp("a", "s1", phase)).await {
            Outcome::Spooled { .. } => spooled.push(phase),
            other => panic!("expected a spool, got {other:?}"),
        }
    }
    fake.state().down = false;
    let rotation = bot(&fake, tempfile::tempdir().unwrap().path())
        .rotate()
        .await
        .unwrap();
    fake.age(3600);
    let report = writer.flush().await;
    assert_eq!(report.posted.len(), 2, "{report:?}");
    assert_eq!(
        fake.comments_on(old).len(),
        4,
        "flushed to the cached, rotated issue"
    );
    let listed = fresh_list(&fake, "a").await;
    assert_once(&listed);
    assert_eq!(
        phases(&listed),
        ["clone_complete", "subtask_1_complete", "subtask_2_complete"]
    );
    assert_eq!(
        listed[2].2,
        Some(old),
        "the flushed records, where they went"
    );
    assert!(rotation.to.is_some_and(|new| new != old));
}

#[tokio::test(flavor = "multi_thread")]
async fn status_across_a_rotation_measures_from_the_first_post() {
    let fake = FakeForge::start().await;
    session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let agent = bot(&fake, dir.path());
    saved(&agent, cp("silent", "s1", "subtask_1_complete")).await;
    fake.age(2 * 3600);
    saved(&agent, cp("busy", "s2", "subtask_1_complete")).await;
    let rotation = bot(&fake, tempfile::tempdir().unwrap().path())
        .rotate()
        .await
        .unwrap();
    assert_eq!(rotation.carried, 2);
    fake.age(5);

    let fresh = bot(&fake, tempfile::tempdir().unwrap().path());
    let status = fresh
        .status(&Filter::default(), &StatusPolicy::default())
        .await
        .unwrap();
    let row = |agent: &str| {
        status
            .rows
            .iter()
            .find(|r| r.agent == agent)
            .unwrap_or_else(|| panic!("{agent} in {:?}", status.rows))
    };
    let silent = row("silent");
    assert_eq!(silent.verdict, Verdict::Stalled, "{silent:?}");
    assert!(silent.age_secs >= 2 * 3600, "{silent:?}");
    assert_eq!(row("busy").verdict, Verdict::Alive);
    let history = fresh
        .history(&forgestate::HistoryQuery::new("s1"))
        .await
        .unwrap();
    let step = &history.records[0];
    assert_eq!(
        step.issue, rotation.to,
        "the carried copy is on the new issue"
    );
    assert!(
        (status.now - step.posted_at).num_seconds() >= 2 * 3600,
        "history keeps the first post time: {step:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn watch_follows_the_head_across_a_rotation_within_one_poll() {
    let fake = FakeForge::start().await;
    session(&fake);
    let dir = tempfile::tempdir().unwrap();
    saved(&bot(&fake, dir.path()), cp("a", "s1", "clone_complete")).await;
    let watching = bot(&fake, tempfile::tempdir().unwrap().path());
    let options = WatchOptions {
        interval: Duration::from_millis(10),
        max_interval: Duration::from_millis(20),
        ..WatchOptions::default()
    };
    let mut watcher = Watcher::new(&watching, &options);
    watcher.start().await.unwrap();
    let rotation = bot(&fake, tempfile::tempdir().unwrap().path())
        .rotate()
        .await
        .unwrap();
    let after = saved(
        &bot(&fake, tempfile::tempdir().unwrap().path()),
        cp("a", "s1", "subtask_1_complete"),
    )
    .await;
    fake.state().clock_offset += 2; // forge times are whole seconds
    let events = watcher.poll().await.unwrap();
    let records: Vec<(Option<String>, Option<u64>)> = events
        .iter()
        .filter_map(|e| match e {
            Event::Record(entry) => Some((entry.record.id.clone(), entry.comment.issue)),
            _ => None,
        })
        .collect();
    assert!(
        records.contains(&(Some(after), rotation.to)),
        "the record on the new head, in the first poll: {events:?}"
    );
    assert_eq!(
        records.len(),
        1,
        "a carried copy is not a new record: {events:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reader_with_a_stale_number_never_carries_the_head_backwards() {
    let fake = FakeForge::start().await;
    let old = session(&fake);
    let w = tempfile::tempdir().unwrap();
    let stale = bot(&fake, w.path());
    saved(&stale, cp("a", "s1", "clone_complete")).await;
    let new = bot(&fake, tempfile::tempdir().unwrap().path())
        .rotate()
        .await
        .unwrap()
        .to
        .unwrap();
    let after = saved(
        &bot(&fake, tempfile::tempdir().unwrap().path()),
        cp("b", "s2", "clone_complete"),
    )
    .await;
    // Its cached number (still fresh) is the old issue; it reads the new one's records too.
    let resumed = stale.resume("b", "s2").await.unwrap();
    assert_eq!(resumed.resume.phase, "clone_complete");
    let (on_old, on_new) = (fake.comments_on(old).len(), fake.comments_on(new).len());
    let tidied = stale.tidy_chain().await.unwrap();
    assert_eq!(tidied.head, Some(new), "{tidied:?}");
    assert_eq!(tidied.carried, 0);
    assert_eq!(
        fake.comments_on(old).len(),
        on_old,
        "nothing carried backwards"
    );
    assert_eq!(fake.comments_on(new).len(), on_new);
    // And it writes to the head from now on.
    let next = saved(&stale, cp("a", "s1", "subtask_1_complete")).await;
    assert!(fake.comments_on(new).iter().any(|c| c.body.contains(&next)));
    assert!(
        !fake
            .comments_on(old)
            .iter()
            .any(|c| c.body.contains(&after))
    );
}
