//! Late posts and people's retitling on a chain of session issues, as a flaky forge and a
//! careless operator make them: each test states the claim it checks, "every record reported saved
//! stays readable by `resume` and `list` from any machine, once, in thread order", and fails
//! while the hole is open. Fixed: a late post to the first issue was lost by a second rotation
//! (rotation carried from the old issue alone). Open: membership is "session title and label",
//! so a person retitling or unlabelling an issue takes its records out of the thread (a
//! retitled rotated-away issue, a retitled or unlabelled head that was never rotated, whose
//! readers are then told to `init`, which would start a thread without them).

use crate::fake_forge;

use crate::fake_forge::bot;
use fake_forge::{FakeForge, session};
use forgestate::Client;
use forgestate::backend::AnyThread;
use forgestate::format::Record;
use forgestate::scan::Filter;
use serde_json::json;

fn cp(agent: &str, session: &str, phase: &str) -> Record {
    Record::checkpoint(agent, session, phase, json!({"phase": phase})).unwrap()
}

async fn saved(c: &Client<AnyThread>, r: Record) -> String {
    c.save(r).await.posted().unwrap().id.unwrap()
}

/// The phases a machine that never saw this thread lists for agent `a`, in thread order.
/// A session issue made as forgestate makes one (`init`: our title, label and body).
async fn initialized(fake: &FakeForge) -> u64 {
    let (init, _) = bot(fake, tempfile::tempdir().unwrap().path())
        .init()
        .await
        .unwrap();
    forgestate::store::issue_in_url(&init.location).unwrap()
}

async fn fresh_phases(fake: &FakeForge) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let filter = Filter {
        agent: Some("a".into()),
        ..Filter::default()
    };
    let listed = bot(fake, dir.path()).list(&filter, None).await.unwrap();
    listed
        .entries
        .iter()
        .map(|e| e.record.phase().unwrap_or_default().to_string())
        .collect()
}

/// The phase a machine that never saw this thread resumes agent `a`'s session `s1` at, or the
/// error it got.
async fn fresh_resume(fake: &FakeForge) -> String {
    let dir = tempfile::tempdir().unwrap();
    match bot(fake, dir.path()).resume("a", "s1").await {
        Ok(resumed) => resumed.resume.phase,
        Err(e) => format!("error: {e}"),
    }
}

/// A machine with a stale cached number posts to the rotated-away issue #1 an hour after the
/// first rotation (the claim the chain tests make), and then dies: it never re-checks, so it
/// never carries its late record. Another machine rotates again (#2 to #3) an hour later. The
/// late record was read by every reader while #2 was the head; after the second rotation it
/// must still be.
#[tokio::test(flavor = "multi_thread")]
async fn a_late_post_to_the_first_issue_survives_a_second_rotation() {
    let fake = FakeForge::start().await;
    let first = session(&fake);
    let w = tempfile::tempdir().unwrap();
    let writer = bot(&fake, w.path());
    saved(&writer, cp("a", "s1", "clone_complete")).await;

    let r1 = bot(&fake, tempfile::tempdir().unwrap().path())
        .rotate()
        .await
        .unwrap();
    let second = r1.to.unwrap();
    fake.age(3600);
    let late = saved(&writer, cp("a", "s1", "subtask_1_complete")).await;
    assert!(
        fake.comments_on(first)
            .iter()
            .any(|c| c.body.contains(&late)),
        "the stale writer posted to #{first}"
    );
    assert_eq!(
        fresh_resume(&fake).await,
        "subtask_1_complete",
        "read with #{second} the head"
    );
    drop(writer);

    fake.age(3600);
    // Another agent works on the head, so the second rotation has something to retire.
    saved(
        &bot(&fake, tempfile::tempdir().unwrap().path()),
        cp("b", "s2", "clone_complete"),
    )
    .await;
    let r2 = bot(&fake, tempfile::tempdir().unwrap().path())
        .rotate()
        .await
        .unwrap();
    assert!(r2.to.is_some(), "second rotation: {r2:?}");
    assert_eq!(
        fresh_resume(&fake).await,
        "subtask_1_complete",
        "a record reported saved, read before the second rotation, is lost after it"
    );
    // Rotation carries the newest record of each pair: the late one, once.
    assert_eq!(fresh_phases(&fake).await, ["subtask_1_complete"]);
}

/// After a rotation, a person retitles the closed old issue ("[archived] ..."), as people tidy
/// closed issues. A machine whose cached number is still fresh posts there (the README: "a
/// machine whose cached issue number is still fresh may keep posting to the closed issue"). The
/// post is reported saved, so readers must see it.
#[tokio::test(flavor = "multi_thread")]
async fn a_post_to_a_retitled_rotated_away_issue_is_read() {
    let fake = FakeForge::start().await;
    let first = initialized(&fake).await;
    let w = tempfile::tempdir().unwrap();
    let writer = bot(&fake, w.path());
    saved(&writer, cp("a", "s1", "clone_complete")).await;
    bot(&fake, tempfile::tempdir().unwrap().path())
        .rotate()
        .await
        .unwrap();
    fake.retitle(first, "[archived] CleverAgents Build Session");
    let late = saved(&writer, cp("a", "s1", "subtask_1_complete")).await;
    assert!(
        fake.comments_on(first)
            .iter()
            .any(|c| c.body.contains(&late)),
        "the stale writer posted to #{first}"
    );
    assert_eq!(
        fresh_resume(&fake).await,
        "subtask_1_complete",
        "a record reported saved on a retitled member is never read"
    );
}

/// A person retitles the session issue before it was ever rotated (so no closing note leads
/// to it). The README: "a retitled head stays the head". A machine that never saw the thread
/// must still resume from its records, and a new record must not start a thread without them.
#[tokio::test(flavor = "multi_thread")]
async fn a_retitled_head_that_was_never_rotated_stays_the_head() {
    let fake = FakeForge::start().await;
    let first = initialized(&fake).await;
    saved(
        &bot(&fake, tempfile::tempdir().unwrap().path()),
        cp("a", "s1", "clone_complete"),
    )
    .await;
    fake.retitle(first, "Agent state (please do not edit)");
    assert_eq!(
        fresh_resume(&fake).await,
        "clone_complete",
        "the records of a retitled, never rotated head are not found"
    );
}

/// A person takes the session label off the head (relabelling issues in the web UI). The
/// thread's records must stay readable from a machine that never saw it.
#[tokio::test(flavor = "multi_thread")]
async fn a_head_whose_label_was_removed_keeps_its_records_readable() {
    let fake = FakeForge::start().await;
    let first = initialized(&fake).await;
    saved(
        &bot(&fake, tempfile::tempdir().unwrap().path()),
        cp("a", "s1", "clone_complete"),
    )
    .await;
    fake.state().issue_mut(first).unwrap().labels.clear();
    assert_eq!(
        fresh_resume(&fake).await,
        "clone_complete",
        "the records of an unlabelled head are not found"
    );
}
