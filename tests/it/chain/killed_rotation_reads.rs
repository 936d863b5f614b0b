//! A rotation killed after its successor got a record, on a thread older than the cold read's
//! margin: a fresh machine's `status` and `list` still see every pair, with no write in
//! between. The old issue is open (no closing note, not closed), so the rotation is not proven
//! finished and its records are read whole, not only its posts since shortly before the new
//! issue was created.

use crate::fake_forge::{FakeForge, Fault, bot, session};
use forgestate::config::DEFAULT_TITLE as TITLE;
use forgestate::format::Record;
use forgestate::report::status::StatusPolicy;
use forgestate::scan::Filter;
use serde_json::json;

const AGENTS: usize = 6;

fn cp(agent: usize, phase: &str) -> Record {
    Record::checkpoint(
        &format!("bulk-{agent}"),
        "bulk",
        phase,
        json!({"phase": phase}),
    )
    .unwrap()
}

/// A thread of two records per agent, aged past the margin, whose rotation stopped after
/// carrying one record: (old issue, new issue).
async fn killed_rotation(fake: &FakeForge) -> (u64, u64) {
    let old = session(fake);
    let writer = tempfile::tempdir().unwrap();
    let w = bot(fake, writer.path());
    for step in 0..2 {
        for agent in 0..AGENTS {
            w.save(cp(agent, &format!("step_{step}")))
                .await
                .posted()
                .unwrap();
        }
    }
    // More than ten minutes pass: the thread is older than the cold read's margin.
    fake.age(610);
    let new = fake.state().last_number + 1;
    let path = format!("/issues/{new}/comments");
    fake.inject(&path, Fault::Pass);
    fake.inject(&path, Fault::Status(403));
    let rotator = tempfile::tempdir().unwrap();
    assert!(bot(fake, rotator.path()).rotate().await.is_err());
    assert!(fake.state().faults.is_empty());
    assert_eq!(fake.open_issues_titled(TITLE), vec![old, new]);
    assert_eq!(fake.comments_on(new).len(), 1, "one record carried");
    fake.age(20);
    (old, new)
}

#[tokio::test(flavor = "multi_thread")]
async fn status_after_a_killed_rotation_shows_every_pair() {
    let fake = FakeForge::start().await;
    let (old, new) = killed_rotation(&fake).await;
    let before = (fake.comments_on(old).len(), fake.comments_on(new).len());
    let fresh = tempfile::tempdir().unwrap();
    let status = bot(&fake, fresh.path())
        .status(&Filter::default(), &StatusPolicy::default())
        .await
        .unwrap();
    let mut agents: Vec<&str> = status.rows.iter().map(|r| r.agent.as_str()).collect();
    agents.sort_unstable();
    let expected: Vec<String> = (0..AGENTS).map(|a| format!("bulk-{a}")).collect();
    assert_eq!(agents, expected, "{:?}", status.warnings);
    assert!(
        status
            .rows
            .iter()
            .all(|r| r.phase.as_deref() == Some("step_1")),
        "{:?}",
        status.rows
    );
    assert_eq!(
        (fake.comments_on(old).len(), fake.comments_on(new).len()),
        before,
        "a read writes nothing"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn list_after_a_killed_rotation_returns_every_record_once() {
    let fake = FakeForge::start().await;
    killed_rotation(&fake).await;
    let fresh = tempfile::tempdir().unwrap();
    let listed = bot(&fake, fresh.path())
        .list(&Filter::default(), None)
        .await
        .unwrap();
    let mut seen: Vec<(String, String)> = (listed.entries.iter())
        .map(|e| {
            (
                e.record.agent.clone(),
                e.record.phase().unwrap_or_default().to_string(),
            )
        })
        .collect();
    seen.sort_unstable();
    let mut expected: Vec<(String, String)> = (0..AGENTS)
        .flat_map(|a| (0..2).map(move |s| (format!("bulk-{a}"), format!("step_{s}"))))
        .collect();
    expected.sort_unstable();
    assert_eq!(seen, expected, "{:?}", listed.warnings);
    assert!(listed.complete());
}
