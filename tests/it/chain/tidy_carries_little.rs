//! The tidy carries late records, not history: a machine that posted to a rotated-away issue
//! carries, at its next re-check, the newest original of each agent, session and kind there that
//! the head lacks. Older records and copies stay where they are (readers merge them; `list
//! --all` lists them), so copies of copies never pile up on every head (the soak of issue #27
//! saw 7,572 comments for 300 records).

use std::time::Duration;

use crate::fake_forge::{self, BOT_TOKEN, FakeForge, bot, client};
use forgestate::format::{Record, parse};
use serde_json::json;

fn cp(agent: &str, session: &str, phase: &str) -> Record {
    Record::checkpoint(agent, session, phase, json!({"phase": phase})).unwrap()
}

fn phases_on(fake: &FakeForge, n: u64) -> Vec<String> {
    fake.comments_on(n)
        .iter()
        .filter_map(|c| parse(&c.body).ok())
        .filter_map(|r| r.phase().map(str::to_string))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tidy_carries_only_the_newest_late_originals() {
    let fake = FakeForge::start().await;
    let old = fake_forge::session(&fake);
    let w = tempfile::tempdir().unwrap();
    let writer = bot(&fake, w.path());
    for r in [
        cp("a", "s1", "p1"),
        cp("a", "s1", "p2"),
        cp("b", "s2", "q1"),
    ] {
        writer.save(r).await.posted().unwrap();
    }
    let rotation = bot(&fake, tempfile::tempdir().unwrap().path())
        .rotate()
        .await
        .unwrap();
    let new = rotation.to.unwrap();
    assert_eq!(phases_on(&fake, new), ["p2", "q1"], "{rotation:?}");

    // Its cached number still fresh, the writer posts a late record to the old issue.
    writer.save(cp("a", "s1", "p3")).await.posted().unwrap();
    assert!(phases_on(&fake, old).contains(&"p3".to_string()));

    // Its next re-check moves it to the head, and the save tidies the chain.
    let moved = client(&fake, BOT_TOKEN, w.path())
        .recheck_after(Duration::ZERO)
        .build()
        .unwrap();
    moved.save(cp("b", "s2", "q2")).await.posted().unwrap();
    assert_eq!(
        phases_on(&fake, new),
        ["p2", "q1", "q2", "p3"],
        "only the late p3 is carried, not p1 (history) again"
    );
    assert_eq!(moved.tidy_chain().await.unwrap().carried, 0);
    let fresh = bot(&fake, tempfile::tempdir().unwrap().path());
    assert_eq!(fresh.resume("a", "s1").await.unwrap().resume.phase, "p3");
    let all = fresh
        .query(&forgestate::ListQuery::default().whole_history())
        .await
        .unwrap();
    let listed: Vec<&str> = all
        .entries
        .iter()
        .filter_map(|e| e.record.phase())
        .collect();
    assert_eq!(listed, ["p1", "p2", "q1", "p3", "q2"]);
}
