//! The read cache's summary (`src/mirror/summary.rs`, `warm.rs`): a warm `resume` or `latest`
//! answers from it without reading the base's index (the part that grows with the thread), and
//! still answers as an uncached read does when another machine writes, when a record `Id` comes
//! back (a carried copy), when an older comment is edited, and on the local store.

use super::{cached as forge, uncached};
use crate::{common, fake_forge};
use std::path::{Path, PathBuf};

use fake_forge::FakeForge;
use forgestate::Client;
use forgestate::format::{Kind, Record, Renderer};
use forgestate::scan::Filter;
use serde_json::{Value, json};

const W: &str = "implementation-worker";

fn cp(phase: &str, data: Value) -> Record {
    Record::checkpoint(W, "s1", phase, data).unwrap()
}

fn body(record: &Record) -> String {
    Renderer::embedded().unwrap().render(record).unwrap()
}

fn base_file(dir: &Path) -> PathBuf {
    let found: Vec<PathBuf> = common::files_under(dir)
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".mirror"))
        .collect();
    assert_eq!(found.len(), 1, "one mirror base: {found:?}");
    found.into_iter().next().unwrap()
}

/// Overwrites the base's index (everything between the header line and the data area) with
/// spaces: a read that loads the index finds it corrupt; one through the summary never notices.
fn garble_index(base: &Path) {
    let mut bytes = std::fs::read(base).unwrap();
    let nl = bytes.iter().position(|&b| b == b'\n').unwrap();
    let header: Value = serde_json::from_slice(&bytes[..nl]).unwrap();
    let len = header["index_len"].as_u64().unwrap() as usize;
    for b in &mut bytes[nl + 1..nl + 1 + len] {
        *b = b' ';
    }
    std::fs::write(base, bytes).unwrap();
}

#[tokio::test]
async fn a_warm_resume_reads_the_summary_not_the_index_and_sees_another_machines_post() {
    let fake = FakeForge::start().await;
    let issue = fake_forge::session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let client = forge(&fake, dir.path());
    for (phase, n) in [("clone_complete", 1), ("subtask_1_complete", 2)] {
        client
            .save(cp(phase, json!({"n": n})))
            .await
            .posted()
            .unwrap();
    }
    let health = Record::health(W, "s1", "Active", json!({"cycle": 1}), None).unwrap();
    client.save(health).await.posted().unwrap();
    assert_eq!(
        client.resume(W, "s1").await.unwrap().resume.phase,
        "subtask_1_complete"
    );

    garble_index(&base_file(dir.path()));
    // Another machine posts; this one resumes in a new process (a new client).
    fake.add_comment(
        issue,
        "ca-bot",
        &body(&cp("subtask_2_complete", json!({"n": 3}))),
    );
    let warm = forge(&fake, dir.path());
    let resumed = warm.resume(W, "s1").await.unwrap();
    assert_eq!(resumed.resume.phase, "subtask_2_complete");
    assert_eq!(resumed.resume.data["n"], 3);
    assert!(resumed.warnings.is_empty(), "{:?}", resumed.warnings);
    let health = Filter {
        kind: Some(Kind::Health),
        ..Filter::default()
    };
    let latest = warm.latest(&health).await.unwrap();
    assert_eq!(latest.record.unwrap().record.data()["cycle"], 1);
    assert!(latest.warnings.is_empty(), "{:?}", latest.warnings);

    // A `list` needs every comment: it loads the index, finds it garbled, and rebuilds.
    let listed = forge(&fake, dir.path())
        .list(&Filter::default(), None)
        .await
        .unwrap();
    assert_eq!(listed.entries.len(), 4);
    assert!(
        listed.warnings.iter().any(|w| w.contains("unreadable")),
        "the list read the index: {:?}",
        listed.warnings
    );
}

#[tokio::test]
async fn a_record_id_posted_again_does_not_become_the_answer() {
    let fake = FakeForge::start().await;
    let issue = fake_forge::session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let client = forge(&fake, dir.path());
    client
        .save(cp("clone_complete", json!({"n": 1})))
        .await
        .posted()
        .unwrap();
    let first = fake.comments_on(issue)[0].body.clone();
    assert!(first.contains("Id:"), "saved records carry an Id: {first}");
    client
        .save(cp("subtask_1_complete", json!({"n": 2})))
        .await
        .posted()
        .unwrap();
    assert_eq!(
        client.resume(W, "s1").await.unwrap().resume.phase,
        "subtask_1_complete"
    );
    // The first record's body again, newer than the second: a copy, and the first copy wins.
    fake.add_comment(issue, "ca-bot", &first);
    let warm = forge(&fake, dir.path()).resume(W, "s1").await.unwrap();
    let plain = uncached(&fake, dir.path()).resume(W, "s1").await.unwrap();
    assert_eq!(plain.resume.phase, "subtask_1_complete");
    assert_eq!(warm.resume.phase, plain.resume.phase);
    assert_eq!(warm.resume.data, plain.resume.data);
    // And the next warm read, through the summary the whole read rebuilt, agrees.
    let again = forge(&fake, dir.path()).resume(W, "s1").await.unwrap();
    assert_eq!(again.resume.phase, "subtask_1_complete");
}

#[tokio::test]
async fn an_edit_of_the_newest_checkpoint_is_the_answer() {
    let fake = FakeForge::start().await;
    let issue = fake_forge::session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let client = forge(&fake, dir.path());
    for (phase, n) in [("clone_complete", 1), ("subtask_1_complete", 2)] {
        client
            .save(cp(phase, json!({"n": n})))
            .await
            .posted()
            .unwrap();
    }
    client.resume(W, "s1").await.unwrap();
    let newest = fake.comments_on(issue).last().unwrap().id;
    {
        let mut s = fake.state();
        let now = s.now();
        let c = s.comments.iter_mut().find(|c| c.id == newest).unwrap();
        c.body = body(&cp("subtask_1_complete", json!({"n": 20})));
        c.created = now - 60;
        c.updated = now;
    }
    let warm = forge(&fake, dir.path()).resume(W, "s1").await.unwrap();
    assert_eq!(warm.resume.data["n"], 20);
    // Unchanged since: the boundary's copy is not an edit, and the answer stands.
    let again = forge(&fake, dir.path()).resume(W, "s1").await.unwrap();
    assert_eq!(again.resume.data["n"], 20);
}

#[tokio::test]
async fn a_local_warm_resume_reads_the_summary_and_sees_appends() {
    let dir = tempfile::tempdir().unwrap();
    let open = || Client::local_as(dir.path(), "me").unwrap();
    let a = open();
    a.save(cp("clone_complete", json!({"n": 1})))
        .await
        .posted()
        .unwrap();
    assert_eq!(
        a.resume(W, "s1").await.unwrap().resume.phase,
        "clone_complete"
    );
    garble_index(&base_file(dir.path()));
    open()
        .save(cp("subtask_1_complete", json!({"n": 2})))
        .await
        .posted()
        .unwrap();
    let resumed = open().resume(W, "s1").await.unwrap();
    assert_eq!(resumed.resume.phase, "subtask_1_complete");
    assert!(resumed.warnings.is_empty(), "{:?}", resumed.warnings);
}

#[tokio::test]
async fn a_mirror_without_its_id_index_gets_one_and_the_summary_answers_again() {
    let fake = FakeForge::start().await;
    let issue = fake_forge::session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let client = forge(&fake, dir.path());
    client
        .save(cp("clone_complete", json!({"n": 1})))
        .await
        .posted()
        .unwrap();
    client.resume(W, "s1").await.unwrap();
    let base = base_file(dir.path());
    let ids = PathBuf::from(format!("{}-ids", base.display()));
    std::fs::remove_file(&ids).expect("the base has an id index");
    // Without it the summary cannot answer: the whole read does, and writes the index again.
    let whole = forge(&fake, dir.path()).resume(W, "s1").await.unwrap();
    assert_eq!(whole.resume.phase, "clone_complete");
    assert!(ids.exists(), "the id index was written again");
    // Now the summary answers: a garbled base index goes unnoticed.
    garble_index(&base);
    fake.add_comment(
        issue,
        "ca-bot",
        &body(&cp("subtask_1_complete", json!({"n": 2}))),
    );
    let warm = forge(&fake, dir.path()).resume(W, "s1").await.unwrap();
    assert_eq!(warm.resume.phase, "subtask_1_complete");
    assert!(warm.warnings.is_empty(), "{:?}", warm.warnings);
}

#[tokio::test]
async fn a_warm_resume_reads_the_summary_for_an_ended_session_with_an_intent() {
    let fake = FakeForge::start().await;
    let issue = fake_forge::session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let client = forge(&fake, dir.path());
    client
        .save(cp("clone_complete", json!({"n": 1})))
        .await
        .posted()
        .unwrap();
    let intent = cp("tests_pass", json!({"n": 2}))
        .with_intent("create_pr", json!({"branch": "fix-42"}))
        .unwrap();
    client.save(intent).await.posted().unwrap();
    client
        .end(W, "s1", "interrupted", Some("container torn down"))
        .await
        .posted()
        .unwrap();
    // Another agent's record in the same session is another line.
    fake.add_comment(
        issue,
        "ca-bot",
        &body(&Record::checkpoint("reviewer", "s1", "review_started", json!({})).unwrap()),
    );
    client.resume(W, "s1").await.unwrap();

    garble_index(&base_file(dir.path()));
    let warm = forge(&fake, dir.path()).resume(W, "s1").await.unwrap();
    assert!(
        warm.warnings.is_empty(),
        "read the index: {:?}",
        warm.warnings
    );
    let cold = uncached(&fake, dir.path()).resume(W, "s1").await.unwrap();
    assert_eq!(warm.session, cold.session);
    assert_eq!(warm.session.ended.as_ref().unwrap().reason, "interrupted");
    assert_eq!(
        warm.session.pending_intent.as_ref().unwrap().name,
        "create_pr"
    );
    assert_eq!(warm.resume.phase, "tests_pass");
    assert_eq!(warm.resume.data["n"], 2);
}

#[tokio::test]
async fn a_warm_resume_sees_two_writers_from_one_parent_as_an_uncached_read_does() {
    let fake = FakeForge::start().await;
    fake_forge::session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let client = forge(&fake, dir.path());
    client
        .save(cp("clone_complete", json!({"n": 1})))
        .await
        .posted()
        .unwrap();
    let root = client
        .resume(W, "s1")
        .await
        .unwrap()
        .session
        .latest_id
        .unwrap();
    // Two machines resume the same state, then both continue from it.
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (one, two) = (forge(&fake, d1.path()), forge(&fake, d2.path()));
    one.resume(W, "s1").await.unwrap();
    two.resume(W, "s1").await.unwrap();
    one.save(cp("subtask_1_complete", json!({})))
        .await
        .posted()
        .unwrap();
    two.save(cp("subtask_1_again", json!({})))
        .await
        .posted()
        .unwrap();

    // The first machine's cache saw only `root`: its warm read must notice the fork.
    let warm = forge(&fake, dir.path()).resume(W, "s1").await.unwrap();
    let cold = uncached(&fake, dir.path()).resume(W, "s1").await.unwrap();
    assert_eq!(warm.session.conflicts.len(), 1, "{:?}", warm.session);
    assert_eq!(warm.session.conflicts[0].parent, root);
    assert_eq!(warm.session, cold.session);
    assert_eq!(warm.resume.phase, "subtask_1_again");
    // And again, now that the cache holds the fork.
    let again = forge(&fake, dir.path()).resume(W, "s1").await.unwrap();
    assert_eq!(again.session, cold.session);
}
