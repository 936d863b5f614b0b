//! The chain of session issues against races and people, on the fake forge: a 16-way first run
//! while one process writes to a duplicate that gets closed, a duplicate left open, a reopened
//! old issue and a retitled head. The thread never splits, and every saved record is read once.

use crate::fake_forge;
use std::collections::HashSet;
use std::time::Duration;

use crate::fake_forge::bot;
use fake_forge::{BOT_TOKEN, FakeForge, client, session};
use forgestate::backend::AnyThread;
use forgestate::config::DEFAULT_TITLE as TITLE;
use forgestate::defaults::LABEL;
use forgestate::format::{Record, parse};
use forgestate::scan::Filter;
use forgestate::{Client, Outcome};
use serde_json::json;

fn cp(agent: &str, session: &str, phase: &str) -> Record {
    Record::checkpoint(agent, session, phase, json!({"phase": phase})).unwrap()
}

async fn saved(c: &Client<AnyThread>, r: Record) -> String {
    match c.save(r).await {
        Outcome::Posted(p) => p.id.unwrap(),
        other => panic!("expected a post, got {other:?}"),
    }
}

/// Every record a machine that never saw this thread lists: (record id, issue), thread order.
async fn fresh_ids(fake: &FakeForge) -> Vec<(String, Option<u64>)> {
    let dir = tempfile::tempdir().unwrap();
    let listed = bot(fake, dir.path())
        .list(&Filter::default(), None)
        .await
        .unwrap();
    let ids: Vec<(String, Option<u64>)> = listed
        .entries
        .iter()
        .map(|e| (e.record.id.clone().unwrap(), e.comment.issue))
        .collect();
    let unique: HashSet<&String> = ids.iter().map(|(id, _)| id).collect();
    assert_eq!(unique.len(), ids.len(), "each record once: {ids:?}");
    let order: Vec<u64> = listed.entries.iter().filter_map(|e| e.comment.id).collect();
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "thread order: {order:?}"
    );
    ids
}

fn ids_on(fake: &FakeForge, issue: u64) -> Vec<String> {
    fake.comments_on(issue)
        .iter()
        .filter_map(|c| parse(&c.body).ok()?.id)
        .collect()
}

fn is_closed(fake: &FakeForge, n: u64) -> bool {
    fake.state()
        .issues
        .iter()
        .any(|i| i.number == n && i.closed)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_writer_that_cached_a_duplicate_is_read_after_a_sixteen_way_first_run() {
    let fake = FakeForge::start().await;
    fake.state().latency = Duration::from_millis(2);
    let label = fake.add_label(LABEL);
    // A racing first run's issue, still without its label (a moment before it is added), and a
    // duplicate, labelled: the straggler's discovery sees only the duplicate and caches it.
    let head = fake.add_issue(TITLE, &[], false);
    let dup = fake.add_issue(TITLE, &[label], false);
    let s = tempfile::tempdir().unwrap();
    let straggler = bot(&fake, s.path());
    let mut expected = vec![saved(&straggler, cp("straggler", "s", "clone_complete")).await];
    assert_eq!(ids_on(&fake, dup), expected, "it cached the duplicate");
    if let Some(row) = fake.state().issue_mut(head) {
        row.labels.push(label);
    }

    // Sixteen agents start at once; meanwhile the duplicate's creator closes it and the
    // straggler, its cache still fresh, keeps writing there.
    let dirs: Vec<tempfile::TempDir> = (0..16).map(|_| tempfile::tempdir().unwrap()).collect();
    let clients: Vec<Client<AnyThread>> = dirs.iter().map(|d| bot(&fake, d.path())).collect();
    let start = std::sync::Arc::new(tokio::sync::Barrier::new(clients.len()));
    let mut tasks = Vec::new();
    for (i, c) in clients.into_iter().enumerate() {
        let start = start.clone();
        tasks.push(tokio::spawn(async move {
            start.wait().await;
            saved(&c, cp(&format!("worker-{i}"), "s", "clone_complete")).await
        }));
    }
    fake.set_closed(dup, true);
    for step in ["subtask_1_complete", "subtask_2_complete"] {
        expected.push(saved(&straggler, cp("straggler", "s", step)).await);
    }
    for t in tasks {
        expected.push(t.await.unwrap());
    }
    assert_eq!(fake.open_issues_titled(TITLE), vec![head]);
    assert_eq!(
        ids_on(&fake, dup).len(),
        3,
        "all three on the closed duplicate"
    );

    let listed = fresh_ids(&fake).await;
    let listed_ids: HashSet<&String> = listed.iter().map(|(id, _)| id).collect();
    for id in &expected {
        assert!(listed_ids.contains(id), "{id} is read");
    }
    assert_eq!(listed.len(), expected.len());
    let fresh = bot(&fake, tempfile::tempdir().unwrap().path());
    assert_eq!(
        fresh.resume("straggler", "s").await.unwrap().resume.phase,
        "subtask_2_complete"
    );

    // At its recheck the straggler moves to the head and carries its newest record there (the
    // older two stay on the closed duplicate, a member that readers merge).
    let moved = client(&fake, BOT_TOKEN, s.path())
        .recheck_after(Duration::ZERO)
        .build()
        .unwrap();
    // The save tidies the chain after posting (`Client::save` runs `rotate_if_due`).
    saved(&moved, cp("straggler", "s", "subtask_3_complete")).await;
    assert_eq!(
        moved.tidy_chain().await.unwrap().carried,
        0,
        "the save carried them"
    );
    let on_head = ids_on(&fake, head);
    assert!(
        on_head.contains(&expected[2]),
        "the newest carried with its Id"
    );
    for id in &expected[..2] {
        assert!(!on_head.contains(id), "{id}: history is not carried again");
    }
    assert_eq!(fresh_ids(&fake).await.len(), expected.len() + 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_duplicate_left_open_is_carried_to_the_head_and_closed() {
    let fake = FakeForge::start().await;
    let head = session(&fake);
    saved(
        &bot(&fake, tempfile::tempdir().unwrap().path()),
        cp("a", "s", "clone_complete"),
    )
    .await;
    // A duplicate whose creator died before closing it, holding a record posted there.
    let label = fake.state().labels[0].id;
    let dup = fake.add_issue(TITLE, &[label], false);
    let body = forgestate::format::Renderer::embedded()
        .unwrap()
        .render(&cp("b", "s", "subtask_1_complete"))
        .unwrap();
    fake.add_comment(dup, "ca-bot", &body);
    let stranded = ids_on(&fake, dup);

    let next = bot(&fake, tempfile::tempdir().unwrap().path());
    saved(&next, cp("a", "s", "subtask_1_complete")).await;
    assert!(
        next.rotate_if_due().await.unwrap().is_none(),
        "no rotation due"
    );
    assert!(
        is_closed(&fake, dup),
        "the next process closed the duplicate"
    );
    assert!(
        ids_on(&fake, head).contains(&stranded[0]),
        "carried with its Id"
    );
    assert_eq!(fake.open_issues_titled(TITLE), vec![head]);
    let listed = fresh_ids(&fake).await;
    assert_eq!(listed.len(), 3, "{listed:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reopened_old_issue_never_splits_the_thread() {
    let fake = FakeForge::start().await;
    let old = session(&fake);
    saved(
        &bot(&fake, tempfile::tempdir().unwrap().path()),
        cp("a", "s", "clone_complete"),
    )
    .await;
    let new = bot(&fake, tempfile::tempdir().unwrap().path())
        .rotate()
        .await
        .unwrap()
        .to
        .unwrap();
    fake.age(3600);
    fake.set_closed(old, false); // a person reopens it
    assert_eq!(fake.open_issues_titled(TITLE), vec![old, new]);

    let fresh = bot(&fake, tempfile::tempdir().unwrap().path());
    assert_eq!(
        fresh.resume("a", "s").await.unwrap().resume.phase,
        "clone_complete",
        "not a fresh start"
    );
    let id = saved(&fresh, cp("a", "s", "subtask_1_complete")).await;
    assert!(ids_on(&fake, new).contains(&id), "writes go to the head");
    fresh.rotate_if_due().await.unwrap();
    assert!(is_closed(&fake, old), "closed again");
    assert_eq!(fake.open_issues_titled(TITLE), vec![new]);
    let resumed = bot(&fake, tempfile::tempdir().unwrap().path())
        .resume("a", "s")
        .await
        .unwrap();
    assert_eq!(resumed.resume.phase, "subtask_1_complete");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_retitled_head_stays_the_head() {
    let fake = FakeForge::start().await;
    let old = session(&fake);
    saved(
        &bot(&fake, tempfile::tempdir().unwrap().path()),
        cp("a", "s", "clone_complete"),
    )
    .await;
    let new = bot(&fake, tempfile::tempdir().unwrap().path())
        .rotate()
        .await
        .unwrap()
        .to
        .unwrap();
    fake.retitle(new, "Agent state (please do not edit)");
    let issues = fake.state().issues.len();

    let fresh = bot(&fake, tempfile::tempdir().unwrap().path());
    assert_eq!(
        fresh.resume("a", "s").await.unwrap().resume.phase,
        "clone_complete"
    );
    let id = saved(&fresh, cp("a", "s", "subtask_1_complete")).await;
    assert!(
        ids_on(&fake, new).contains(&id),
        "written to the retitled head"
    );
    assert_eq!(fake.state().issues.len(), issues, "no new session issue");
    assert!(is_closed(&fake, old));
    let listed = fresh_ids(&fake).await;
    assert_eq!(listed.len(), 2, "{listed:?}");
    assert_eq!(listed[1], (id, Some(new)));
}
